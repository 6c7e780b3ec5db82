//! The pinned fetch against a local server (on 127.0.0.2, which the tests treat as public) with a
//! resolver stub whose answers change between lookups (DNS rebinding).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use loopguard::fetch::{FetchOptions, Lookup, fetch};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Answers `first` to the first lookup and `later` to every other one, counting lookups.
#[derive(Debug)]
struct Rebinding {
    first: Vec<IpAddr>,
    later: Vec<IpAddr>,
    calls: AtomicUsize,
}

impl Lookup for Rebinding {
    fn lookup(&self, _host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let ips = if n == 0 { &self.first } else { &self.later };
        Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect())
    }
}

/// A server on 127.0.0.2: `/big` sends 64 KiB, `/to-internal` redirects to 127.0.0.1,
/// `/hop` redirects to `/end` on the same host, anything else answers "hello". Records the Host
/// header of every request.
fn server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.2:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hosts = Arc::new(Mutex::new(Vec::new()));
    let seen = hosts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut r = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let path = line.split(' ').nth(1).unwrap_or("/").to_string();
            loop {
                let mut h = String::new();
                r.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.strip_prefix("host: ").or_else(|| h.strip_prefix("Host: ")) {
                    seen.lock().unwrap().push(v.trim().to_string());
                }
            }
            let (status, extra, body) = match path.as_str() {
                "/big" => ("200 OK", String::new(), "x".repeat(64 << 10)),
                "/to-internal" => ("302 Found", format!("location: http://127.0.0.1:{port}/\r\n"), String::new()),
                "/hop" => ("302 Found", "location: /end\r\n".to_string(), String::new()),
                _ => ("200 OK", String::new(), "hello".to_string()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, hosts)
}

fn opts() -> FetchOptions {
    FetchOptions { allow: vec!["127.0.0.2".parse().unwrap()], ..Default::default() }
}

fn rebinding() -> Arc<Rebinding> {
    Arc::new(Rebinding {
        first: vec!["127.0.0.2".parse().unwrap()],
        later: vec!["127.0.0.1".parse().unwrap()],
        calls: AtomicUsize::new(0),
    })
}

#[test]
fn a_rebinding_name_is_resolved_once_and_the_connection_pinned() {
    let (port, hosts) = server();
    let dns = rebinding();
    let got = fetch(&format!("http://rebind.test:{port}/hop"), &opts(), dns.clone()).unwrap();
    assert_eq!((got.status, got.body.as_slice()), (200, &b"hello"[..]));
    assert_eq!(got.hops.len(), 2, "{:?}", got.hops);
    assert!(got.url.ends_with("/end"));
    // One lookup for both hops, although the name would have answered 127.0.0.1 the second time.
    assert_eq!(dns.calls.load(Ordering::SeqCst), 1);
    assert_eq!(got.pinned, [("rebind.test".to_string(), vec![format!("127.0.0.2:{port}").parse().unwrap()])]);
    // The original Host went with every request.
    assert_eq!(*hosts.lock().unwrap(), [format!("rebind.test:{port}"), format!("rebind.test:{port}")]);
}

#[test]
fn a_redirect_to_an_internal_address_is_refused() {
    let (port, _) = server();
    let e = fetch(&format!("http://rebind.test:{port}/to-internal"), &opts(), rebinding()).unwrap_err();
    assert!(e.contains("127.0.0.1") && e.contains("refused"), "{e}");
}

#[test]
fn names_resolving_to_internal_addresses_are_refused_before_connecting() {
    for answers in [vec!["10.0.0.7"], vec!["127.0.0.2", "169.254.169.254"], vec!["::1"]] {
        let dns = Arc::new(Rebinding {
            first: answers.iter().map(|a| a.parse().unwrap()).collect(),
            later: vec![],
            calls: AtomicUsize::new(0),
        });
        let e = fetch("http://innocent.example:80/", &opts(), dns).unwrap_err();
        assert!(e.contains("resolves to") && e.contains("refused"), "{answers:?}: {e}");
    }
}

#[test]
fn literal_internal_urls_are_refused_without_a_lookup_and_bodies_are_capped() {
    let dns = rebinding();
    for url in [
        "http://127.0.0.1/",
        "http://0x7f.1/",
        "http://[::ffff:10.0.0.1]/",
        "http://metadata.google.internal/",
        "file:///etc/passwd",
    ] {
        assert!(fetch(url, &opts(), dns.clone()).is_err(), "{url}");
    }
    assert_eq!(dns.calls.load(Ordering::SeqCst), 0);
    let (port, _) = server();
    let small = FetchOptions { max_bytes: 1024, ..opts() };
    let e = fetch(&format!("http://rebind.test:{port}/big"), &small, rebinding()).unwrap_err();
    assert!(e.contains("limit 1024 bytes"), "{e}");
}
