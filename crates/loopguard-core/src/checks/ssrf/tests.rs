use super::*;

/// Every row of tests/fixtures/ssrf.tsv: `internal` targets are refused with a reason, `public`
/// ones pass, `invalid` URLs are errors (the caller refuses those too).
#[test]
fn the_ssrf_table() {
    let text = include_str!("../../../tests/fixtures/ssrf.tsv");
    let mut n = 0;
    let rows = loopguard_test_support::tsv::parse_raw(std::path::Path::new("ssrf.tsv"), text, 2).unwrap();
    for row in &rows {
        let (target, expect) = (row.get(0), row.get(1).split('\t').next().unwrap_or(""));
        let line = format!("{}: {target}", row.at());
        let got = if target.contains("://") {
            match check_url(target) {
                Err(_) => "invalid",
                Ok(Some(_)) => "internal",
                Ok(None) => "public",
            }
        } else if check_target(target).is_some() {
            "internal"
        } else {
            "public"
        };
        assert_eq!(got, expect, "{line}");
        n += 1;
    }
    assert!(n >= 100, "only {n} rows");
}

#[test]
fn reasons_name_the_block() {
    let i = check_url("http://0x7f.1/").unwrap().unwrap();
    assert_eq!((i.host.as_str(), i.why.as_str()), ("127.0.0.1", "loopback 127.0.0.0/8"));
    let i = check_url("http://[::ffff:169.254.169.254]/").unwrap().unwrap();
    assert!(i.why.contains("cloud metadata"), "{i:?}");
}

#[test]
fn fetch_urls_are_read_one_way_only() {
    for (url, why) in [
        ("file:///etc/passwd", "scheme"),
        ("gopher://example.com/", "scheme"),
        ("ftp://example.com/x", "scheme"),
        ("https://user:pw@example.com/", "user name"),
        ("https://example.com@127.0.0.1/", "user name"),
        ("http://example.com#@169.254.169.254/", "`#` or `?` before `@`"),
        ("http://example.com?@10.0.0.1/", "`#` or `?` before `@`"),
        ("http://example.com\\@10.0.0.1/", "backslash"),
        ("http://exa mple.com/", "white space"),
        ("http://example.com/\n", "white space"),
        ("example.com/page", "absolute"),
    ] {
        let e = check_fetch_url(url).unwrap_err();
        assert!(e.contains(why), "{url}: {e}");
    }
    for url in ["https://example.com/", "https://medium.com/@someone/post", "http://example.com:8080/a?b=c#d@e"] {
        assert_eq!(check_fetch_url(url), Ok(None), "{url}");
    }
    for url in ["http://127.0.0.1.nip.io/", "http://10-0-0-1.sslip.io/", "http://[::ffff:0:7f00:1]/", "http://0x7f.1/"]
    {
        assert!(check_fetch_url(url).unwrap().is_some(), "{url}");
    }
}

#[test]
fn resolved_addresses_are_judged_every_one() {
    let public: IpAddr = "93.184.216.34".parse().unwrap();
    let inside: IpAddr = "10.1.2.3".parse().unwrap();
    assert!(internal_address("a.example", &[public]).is_none());
    let i = internal_address("a.example", &[public, inside]).unwrap();
    assert!(i.why.contains("10.1.2.3"), "{}", i.why);
    // The real resolver, on a name every machine's hosts file answers (no network needed).
    match resolve_bounded("localhost", std::time::Duration::from_secs(10)) {
        Resolved::Addrs(a) => assert!(internal_address("localhost", &a).is_some(), "{a:?}"),
        other => panic!("localhost did not resolve: {other:?}"),
    }
}

#[test]
fn a_guarded_port_is_found_as_a_number_of_its_own() {
    let ports = [8123];
    for hit in ["curl localhost:8123/x", "exec 3<>/dev/tcp/127.0.0.1/8123", "nc 127.0.0.1 8123", "http://[::1]:08123/"]
    {
        assert_eq!(guarded_port_in(hit, &ports), Some(8123), "{hit}");
    }
    for miss in ["curl localhost:81234/", "curl localhost:18123/", "sleep 812", "curl localhost:3000/8123x"] {
        let got = guarded_port_in(miss, &ports);
        // `/8123x` names the number too: stricter is fine; the others must not match.
        if miss.ends_with("8123x") {
            assert_eq!(got, Some(8123));
        } else {
            assert_eq!(got, None, "{miss}");
        }
    }
    assert_eq!(guarded_port_in("curl localhost:8123", &[]), None);
    assert_eq!(guarded_port_finding("x", 8123).code, crate::reasons::SELF_PROTECTION);
}
