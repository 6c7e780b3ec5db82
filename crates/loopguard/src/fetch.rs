//! `loopguard fetch URL`: a fetch that cannot be turned against internal addresses. Each host is
//! resolved once (`PinnedResolver`); every address it resolves to must be public (an internal one
//! among them refuses the fetch); the connection goes to exactly that address while the request
//! keeps the original Host header and TLS name. Redirects are followed by hand, each hop judged
//! like the first (its URL, then its resolution). Size and time are capped.
//!
//! DNS rebinding — a name that answers a public address to the check and an internal one to the
//! connect — cannot work: there is only one lookup, and the connect uses its answer.

use loopguard_core::checks::ssrf;
use std::collections::HashMap;
use std::fmt::Debug;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};

/// Name lookup, replaceable in tests.
pub trait Lookup: Debug + Send + Sync + 'static {
    /// The addresses of `host`.
    fn lookup(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>>;
}

/// The system resolver.
#[derive(Debug, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok((host, port).to_socket_addrs()?.collect())
    }
}

/// Limits of one fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Largest body read.
    pub max_bytes: u64,
    /// The whole fetch, redirects included.
    pub timeout: Duration,
    /// Redirects followed.
    pub max_redirects: u32,
    /// Addresses treated as public even though they are special-purpose (tests on loopback).
    pub allow: Vec<IpAddr>,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions { max_bytes: 10 << 20, timeout: Duration::from_secs(30), max_redirects: 5, allow: Vec::new() }
    }
}

/// What a fetch got.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL the body came from (after redirects).
    pub url: String,
    /// Its HTTP status.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
    /// Every URL requested, in order.
    pub hops: Vec<String>,
    /// Every (host, addresses) pinned.
    pub pinned: Vec<(String, Vec<SocketAddr>)>,
}

#[derive(Debug)]
struct PinnedResolver {
    lookup: Arc<dyn Lookup>,
    pins: Arc<Mutex<HashMap<String, Vec<SocketAddr>>>>,
    allow: Vec<IpAddr>,
}

fn refused(msg: String) -> ureq::Error {
    ureq::Error::Io(std::io::Error::new(std::io::ErrorKind::PermissionDenied, msg))
}

impl PinnedResolver {
    fn judge(&self, host: &str, addrs: &[SocketAddr]) -> Result<(), ureq::Error> {
        for a in addrs {
            if self.allow.contains(&a.ip()) {
                continue;
            }
            if let Some(why) = ssrf::special_ip(a.ip()) {
                return Err(refused(format!("`{host}` resolves to {} ({why}): refused", a.ip())));
            }
        }
        Ok(())
    }
}

impl Resolver for PinnedResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        _config: &ureq::config::Config,
        _timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().ok_or_else(|| refused("the URL has no host".into()))?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
        let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
        let addrs = if let Ok(ip) = host.parse::<IpAddr>() {
            vec![SocketAddr::new(ip, port)]
        } else {
            let mut pins = self.pins.lock().map_err(|_| refused("resolver state poisoned".into()))?;
            match pins.get(&host) {
                Some(a) => a.iter().map(|a| SocketAddr::new(a.ip(), port)).collect(),
                None => {
                    let found = self.lookup.lookup(&host, port).map_err(ureq::Error::Io)?;
                    if found.is_empty() {
                        return Err(ureq::Error::HostNotFound);
                    }
                    self.judge(&host, &found)?;
                    pins.insert(host.clone(), found.clone());
                    found
                }
            }
        };
        self.judge(&host, &addrs)?;
        let mut out = self.empty();
        for a in addrs.into_iter().take(16) {
            out.push(a);
        }
        Ok(out)
    }
}

/// Fetches `url` (GET) under the pinned-DNS rules.
pub fn fetch(url: &str, opts: &FetchOptions, lookup: Arc<dyn Lookup>) -> Result<Fetched, String> {
    let pins = Arc::new(Mutex::new(HashMap::new()));
    let resolver = PinnedResolver { lookup, pins: pins.clone(), allow: opts.allow.clone() };
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(opts.timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .build();
    let agent = ureq::Agent::with_parts(config, ureq::unversioned::transport::DefaultConnector::new(), resolver);
    let mut current = url::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    let mut hops = Vec::new();
    for _ in 0..=opts.max_redirects {
        if !matches!(current.scheme(), "http" | "https") {
            return Err(format!("`{current}`: only http and https are fetched"));
        }
        let literal_ok = current
            .host()
            .map(|h| match h {
                url::Host::Ipv4(ip) => opts.allow.contains(&IpAddr::V4(ip)),
                url::Host::Ipv6(ip) => opts.allow.contains(&IpAddr::V6(ip)),
                url::Host::Domain(_) => false,
            })
            .unwrap_or(false);
        if !literal_ok && let Some(i) = ssrf::check_url(current.as_str())? {
            return Err(format!("`{current}` is an internal address ({}: {}): refused", i.host, i.why));
        }
        hops.push(current.to_string());
        let mut resp = agent.get(current.as_str()).call().map_err(|e| format!("`{current}`: {e}"))?;
        let status = resp.status().as_u16();
        if (300..400).contains(&status)
            && let Some(loc) = resp.headers().get("location").and_then(|v| v.to_str().ok())
        {
            current = current.join(loc).map_err(|e| format!("bad redirect `{loc}`: {e}"))?;
            continue;
        }
        let body = resp
            .body_mut()
            .with_config()
            .limit(opts.max_bytes)
            .read_to_vec()
            .map_err(|e| format!("`{current}`: {e} (limit {} bytes)", opts.max_bytes))?;
        let pinned = pins.lock().map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).unwrap_or_default();
        return Ok(Fetched { url: current.to_string(), status, body, hops, pinned });
    }
    Err(format!("more than {} redirects", opts.max_redirects))
}
