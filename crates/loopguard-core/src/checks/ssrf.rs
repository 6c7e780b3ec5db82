//! Requests to internal addresses (SSRF). URLs are parsed with WHATWG rules (the `url` crate), so
//! the odd encodings a browser or curl accepts — decimal, octal and hex IPv4, short forms like
//! `127.1`, trailing dots, `user@host` confusion, IDN and full-width characters — are normalised
//! before the host is judged. An address is refused when it is in any IANA special-purpose block
//! (IPv4 and IPv6), including the IPv4 inside mapped, compatible, NAT64, 6to4 and Teredo IPv6
//! addresses; a name is refused when it can only be internal (`localhost`, `*.internal`, cloud
//! metadata names…). Names are *not* resolved here (a hook must not wait on DNS): `loopguard
//! fetch`'s pinned resolver checks the addresses a public name resolves to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a target is internal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Internal {
    /// The host as judged (normalised).
    pub host: String,
    /// The block or rule it falls in.
    pub why: String,
}

fn v4_in(ip: Ipv4Addr, net: [u8; 4], len: u32) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn v6_in(ip: Ipv6Addr, net: Ipv6Addr, len: u32) -> bool {
    let mask = if len == 0 { 0 } else { u128::MAX << (128 - len) };
    (u128::from(ip) & mask) == (u128::from(net) & mask)
}

/// The IANA IPv4 special-purpose blocks (and multicast, reserved, broadcast).
const V4: &[([u8; 4], u32, &str)] = &[
    ([0, 0, 0, 0], 8, "\"this network\" 0.0.0.0/8"),
    ([10, 0, 0, 0], 8, "private 10.0.0.0/8"),
    ([100, 64, 0, 0], 10, "shared address space (CGNAT) 100.64.0.0/10"),
    ([127, 0, 0, 0], 8, "loopback 127.0.0.0/8"),
    ([169, 254, 169, 254], 32, "cloud metadata 169.254.169.254"),
    ([169, 254, 0, 0], 16, "link-local 169.254.0.0/16"),
    ([172, 16, 0, 0], 12, "private 172.16.0.0/12"),
    ([192, 0, 0, 0], 24, "IETF protocol assignments 192.0.0.0/24"),
    ([192, 0, 2, 0], 24, "documentation 192.0.2.0/24"),
    ([192, 31, 196, 0], 24, "AS112-v4 192.31.196.0/24"),
    ([192, 52, 193, 0], 24, "AMT 192.52.193.0/24"),
    ([192, 88, 99, 0], 24, "6to4 relay anycast 192.88.99.0/24"),
    ([192, 168, 0, 0], 16, "private 192.168.0.0/16"),
    ([192, 175, 48, 0], 24, "direct delegation AS112 192.175.48.0/24"),
    ([198, 18, 0, 0], 15, "benchmarking 198.18.0.0/15"),
    ([198, 51, 100, 0], 24, "documentation 198.51.100.0/24"),
    ([203, 0, 113, 0], 24, "documentation 203.0.113.0/24"),
    ([224, 0, 0, 0], 4, "multicast 224.0.0.0/4"),
    ([255, 255, 255, 255], 32, "broadcast 255.255.255.255"),
    ([240, 0, 0, 0], 4, "reserved 240.0.0.0/4"),
];

/// Why an IPv4 address is special, if it is.
pub fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    V4.iter().find(|(net, len, _)| v4_in(ip, *net, *len)).map(|(_, _, why)| *why)
}

fn v6(s: &str) -> Ipv6Addr {
    s.parse().unwrap_or(Ipv6Addr::UNSPECIFIED)
}

/// Why an IPv6 address is special, if it is; embedded IPv4 addresses are judged too.
pub fn special_v6(ip: Ipv6Addr) -> Option<String> {
    let seg = ip.segments();
    let embedded = |bits: u128| Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if ip.is_unspecified() {
        return Some("unspecified ::".into());
    }
    if ip.is_loopback() {
        return Some("loopback ::1".into());
    }
    // IPv4-mapped (`::ffff:a.b.c.d`): the IPv4 address decides; a mapped public address is public.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return special_v4(v4).map(|w| format!("IPv4-mapped {v4} ({w})"));
    }
    let bits = u128::from(ip);
    // IPv4-translated (`::ffff:0:a.b.c.d`, RFC 2765): refused outright, an old form few
    // legitimate URLs use and some stacks still route to the embedded address.
    if v6_in(ip, v6("::ffff:0:0:0"), 96) {
        let v4 = embedded(bits);
        return Some(format!("IPv4-translated {v4}{}", special_v4(v4).map(|w| format!(" ({w})")).unwrap_or_default()));
    }
    if v6_in(ip, Ipv6Addr::UNSPECIFIED, 96) {
        return Some(format!("IPv4-compatible {}", embedded(bits)));
    }
    if v6_in(ip, v6("64:ff9b::"), 96) {
        let v4 = embedded(bits);
        return Some(format!("NAT64 {v4}{}", special_v4(v4).map(|w| format!(" ({w})")).unwrap_or_default()));
    }
    if seg[0] == 0x2002 {
        let v4 = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        return Some(format!("6to4 {v4}{}", special_v4(v4).map(|w| format!(" ({w})")).unwrap_or_default()));
    }
    if seg[0] == 0x2001 && seg[1] == 0 {
        // Teredo: the client's IPv4 is the last 32 bits, inverted.
        let v4 = Ipv4Addr::from(!(bits as u32));
        return Some(format!("Teredo {v4}{}", special_v4(v4).map(|w| format!(" ({w})")).unwrap_or_default()));
    }
    const V6: &[(&str, u32, &str)] = &[
        ("64:ff9b:1::", 48, "local-use NAT64 64:ff9b:1::/48"),
        ("100::", 64, "discard-only 100::/64"),
        ("2001::", 23, "IETF protocol assignments 2001::/23"),
        ("2001:db8::", 32, "documentation 2001:db8::/32"),
        ("3fff::", 20, "documentation 3fff::/20"),
        ("5f00::", 16, "SRv6 SIDs 5f00::/16"),
        ("fd00:ec2::254", 128, "cloud metadata fd00:ec2::254"),
        ("fc00::", 7, "unique-local fc00::/7"),
        ("fe80::", 10, "link-local fe80::/10"),
        ("fec0::", 10, "site-local fec0::/10"),
        ("ff00::", 8, "multicast ff00::/8"),
    ];
    V6.iter().find(|(net, len, _)| v6_in(ip, v6(net), *len)).map(|(_, _, why)| why.to_string())
}

/// Why an address is special, if it is.
pub fn special_ip(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4).map(str::to_string),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

/// Names that can only be internal.
fn internal_name(host: &str) -> Option<&'static str> {
    const EXACT: &[(&str, &str)] = &[
        ("localhost", "localhost"),
        ("metadata", "cloud metadata name"),
        ("metadata.google.internal", "cloud metadata name"),
        ("metadata.goog", "cloud metadata name"),
        ("instance-data", "cloud metadata name"),
        ("instance-data.ec2.internal", "cloud metadata name"),
        ("metadata.azure.com", "cloud metadata name"),
        ("kubernetes.default", "cluster-internal name"),
        ("localtest.me", "a public name for 127.0.0.1"),
        ("lvh.me", "a public name for 127.0.0.1"),
        ("vcap.me", "a public name for 127.0.0.1"),
        ("lacolhost.com", "a public name for 127.0.0.1"),
    ];
    const SUFFIX: &[(&str, &str)] = &[
        (".localhost", "localhost"),
        (".local", "mDNS .local"),
        (".internal", ".internal name"),
        (".localdomain", ".localdomain name"),
        (".home.arpa", "home network .home.arpa"),
        (".intranet", ".intranet name"),
        (".corp", ".corp name"),
        (".lan", ".lan name"),
        (".svc.cluster.local", "cluster-internal name"),
        (".in-addr.arpa", "reverse-DNS name"),
        (".localtest.me", "a public name for 127.0.0.1"),
        (".lvh.me", "a public name for 127.0.0.1"),
        (".vcap.me", "a public name for 127.0.0.1"),
        (".lacolhost.com", "a public name for 127.0.0.1"),
    ];
    EXACT
        .iter()
        .find(|(n, _)| host == *n)
        .or_else(|| SUFFIX.iter().find(|(s, _)| host.ends_with(s)))
        .map(|(_, why)| *why)
}

/// Wildcard-DNS and rebinding services that answer with an address spelled in hex in the name
/// (`7f000001.nip.io`, `7f000001.c0a80001.rbndr.us`).
const HEX_NAME_SERVICES: &[&str] = &["nip.io", "sslip.io", "xip.io", "rbndr.us", "traefik.me", "1u.ms"];

/// IPv4 addresses a name spells out, as wildcard-DNS services read them: four dotted numeric
/// labels (`169.254.169.254.nip.io`), four dash-separated numbers inside a label
/// (`app-169-254-169-254.sslip.io`, `ip-10-0-0-1.example.com`), and, under the services that
/// read it, eight hex digits (`a9fea9fe.nip.io`).
fn embedded_ips(name: &str) -> Vec<Ipv4Addr> {
    let labels: Vec<&str> = name.split('.').collect();
    let quad = |parts: &[&str]| -> Option<Ipv4Addr> {
        let mut o = [0u8; 4];
        for (slot, p) in o.iter_mut().zip(parts) {
            if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            *slot = p.parse().ok()?;
        }
        Some(Ipv4Addr::from(o))
    };
    let mut found: Vec<Ipv4Addr> = labels.windows(4).filter_map(quad).collect();
    for label in &labels {
        let parts: Vec<&str> = label.split('-').collect();
        found.extend(parts.windows(4).filter_map(quad));
    }
    if HEX_NAME_SERVICES.iter().any(|s| name == *s || name.ends_with(&format!(".{s}"))) {
        for label in &labels {
            for part in label.split('-') {
                if part.len() == 8
                    && part.bytes().all(|b| b.is_ascii_hexdigit())
                    && let Ok(v) = u32::from_str_radix(part, 16)
                {
                    found.push(Ipv4Addr::from(v));
                }
            }
        }
    }
    found
}

fn judge_host(host: &url::Host<&str>, single_label_internal: bool) -> Option<Internal> {
    match host {
        url::Host::Ipv4(ip) => special_v4(*ip).map(|w| Internal { host: ip.to_string(), why: w.to_string() }),
        url::Host::Ipv6(ip) => special_v6(*ip).map(|w| Internal { host: format!("[{ip}]"), why: w }),
        url::Host::Domain(d) => {
            let name = d.trim_end_matches('.').to_ascii_lowercase();
            if name.is_empty() {
                return Some(Internal { host: (*d).to_string(), why: "empty host".into() });
            }
            // A name made only of digits and dots that WHATWG did not take as an IPv4 address
            // (e.g. too many parts) is still something a resolver may read as one: refuse it.
            if name.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return Some(Internal { host: name, why: "numeric host that is not a valid address".into() });
            }
            if let Some(w) = internal_name(&name) {
                return Some(Internal { host: name, why: w.to_string() });
            }
            if let Some((ip, w)) = embedded_ips(&name).into_iter().find_map(|ip| special_v4(ip).map(|w| (ip, w))) {
                return Some(Internal {
                    host: name,
                    why: format!("the name embeds {ip} ({w}); wildcard DNS such as nip.io answers with that address"),
                });
            }
            // A single-label name is looked up through the local search domains: internal.
            (single_label_internal && !name.contains('.')).then(|| Internal {
                host: name,
                why: "single-label name (resolved in the local search domains)".into(),
            })
        }
    }
}

/// Judges a URL (any scheme with a host). `Err` for text that is not a URL with a host.
pub fn check_url(raw: &str) -> Result<Option<Internal>, String> {
    let u = url::Url::parse(raw.trim()).map_err(|e| format!("not a URL: {e}"))?;
    let host = u.host().ok_or_else(|| "the URL has no host".to_string())?;
    Ok(judge_host(&host, true))
}

/// Judges a URL an agent asks a fetch tool (WebFetch) to read, strictly: only `http` and
/// `https`; no user name or password; nothing a parser could read two ways (white space or
/// control characters, backslashes, `@` before the path, `#`/`?` before the path followed by `@`);
/// then the host as [`check_url`] does. `Err` says why the URL is refused.
pub fn check_fetch_url(raw: &str) -> Result<Option<Internal>, String> {
    if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("contains white space or control characters".into());
    }
    if raw.contains('\\') {
        return Err("contains a backslash, which parsers read differently".into());
    }
    let (scheme, rest) = raw.split_once("://").ok_or_else(|| "is not an absolute http(s) URL".to_string())?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return Err(format!("uses the scheme `{scheme}`; only http and https are fetched"));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if rest[..end].contains('@') {
        return Err("carries a user name or password (`user@host`), a classic way to disguise the host".into());
    }
    if rest[end..].starts_with(['?', '#']) && rest[end..].contains('@') {
        return Err("puts `#` or `?` before `@`, which parsers split into different hosts".into());
    }
    let u = url::Url::parse(raw).map_err(|e| format!("is not a URL: {e}"))?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err("carries a user name or password".into());
    }
    let host = u.host().ok_or_else(|| "has no host".to_string())?;
    Ok(judge_host(&host, true))
}

/// The outcome of resolving a name with a bounded wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The addresses the name resolves to.
    Addrs(Vec<IpAddr>),
    /// The name does not resolve (the request cannot reach anything by it).
    NotFound(String),
    /// No answer within the wait.
    TimedOut,
}

/// Resolves a host name with the system resolver, waiting at most `wait` (the lookup itself runs
/// on a thread that is abandoned when the wait is over: a hook exits soon after).
pub fn resolve_bounded(host: &str, wait: std::time::Duration) -> Resolved {
    use std::net::ToSocketAddrs;
    let (tx, rx) = std::sync::mpsc::channel();
    let name = format!("{}:443", host.trim_end_matches('.'));
    let spawned = std::thread::Builder::new().name("dns".into()).spawn(move || {
        let r = name.to_socket_addrs().map(|it| it.map(|a| a.ip()).collect::<Vec<_>>());
        let _ = tx.send(r);
    });
    if spawned.is_err() {
        return Resolved::TimedOut;
    }
    match rx.recv_timeout(wait) {
        Ok(Ok(addrs)) if !addrs.is_empty() => Resolved::Addrs(addrs),
        Ok(Ok(_)) => Resolved::NotFound("no addresses".into()),
        Ok(Err(e)) => Resolved::NotFound(e.to_string()),
        Err(_) => Resolved::TimedOut,
    }
}

/// The first internal address among those a name resolved to.
pub fn internal_address(host: &str, addrs: &[IpAddr]) -> Option<Internal> {
    addrs.iter().find_map(|ip| {
        special_ip(*ip).map(|w| Internal { host: host.to_string(), why: format!("it resolves to {ip} ({w})") })
    })
}

/// Judges a network target as shell tools take them: a URL, `user@host[:port][/path]`,
/// `host:port`, a bracketed IPv6 address, or a bare host. A bare number up to 65535 is taken for
/// a port (`nc host 4444`); a bare single-label name for an ssh alias or the like (not judged —
/// only known internal names are).
pub fn check_target(raw: &str) -> Option<Internal> {
    let t = raw.trim();
    if t.contains("://") {
        return check_url(t).ok().flatten();
    }
    if t.parse::<u16>().is_ok() {
        return None;
    }
    // scp/rsync/ssh style `user@host:path` → the host part.
    let after_user = t.rsplit_once('@').map_or(t, |(_, h)| h);
    let host = if let Some(rest) = after_user.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest).to_string()
    } else if after_user.matches(':').count() >= 2 {
        // A bare IPv6 address.
        after_user.to_string()
    } else {
        after_user.split([':', '/']).next().unwrap_or(after_user).to_string()
    };
    if let Ok(ip) = host.parse::<Ipv6Addr>() {
        return special_v6(ip).map(|w| Internal { host: format!("[{ip}]"), why: w });
    }
    // Through the WHATWG host parser, which reads inet_aton forms like curl and nc do.
    match url::Url::parse(&format!("http://{host}/")) {
        Ok(u) => u.host().and_then(|h| judge_host(&h, false)),
        Err(_) => None,
    }
}

/// The finding for a request to an internal address.
pub fn finding(what: &str, target: &str, i: &Internal) -> crate::Finding {
    crate::Finding::new(
        crate::reasons::SSRF_INTERNAL,
        crate::Verdict::Deny,
        crate::RiskLevel::Critical,
        format!("{what} reaches `{target}`, an internal address ({}: {}).", i.host, i.why),
    )
    .with_target(target, i.why.clone())
    .with_remedy(
        "fetch public addresses only; internal services, loopback and cloud metadata are off limits to the agent.",
    )
}

#[cfg(test)]
mod tests;

/// The first of `ports` that `text` names as a number of its own (not part of a longer number):
/// `localhost:8123`, `/dev/tcp/127.0.0.1/8123`, `nc 127.0.0.1 8123`, `[::1]:8123`.
pub fn guarded_port_in(text: &str, ports: &[u16]) -> Option<u16> {
    if ports.is_empty() {
        return None;
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        // Leading zeros name the same port to most clients (`:08123`).
        let digits = text[start..i].trim_start_matches('0');
        if let Some(p) = digits.parse::<u16>().ok().filter(|p| ports.contains(p)) {
            return Some(p);
        }
    }
    None
}

/// The finding for a call that reaches loopguard's own human controls.
pub fn guarded_port_finding(what: &str, port: u16) -> crate::Finding {
    crate::Finding::new(
        crate::reasons::SELF_PROTECTION,
        crate::Verdict::Deny,
        crate::RiskLevel::Critical,
        format!("{what} reaches port {port}, where loopguard's dashboard (the human's controls) listens."),
    )
    .with_remedy("the dashboard is for the human; agents get nothing from it and may not drive it.")
}
