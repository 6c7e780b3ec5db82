use super::*;

/// Every row of tests/fixtures/ssrf.tsv: `internal` targets are refused with a reason, `public`
/// ones pass, `invalid` URLs are errors (the caller refuses those too).
#[test]
fn the_ssrf_table() {
    let text = include_str!("../../../tests/fixtures/ssrf.tsv");
    let mut n = 0;
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut cols = line.split('\t');
        let (target, expect) = (cols.next().unwrap(), cols.next().unwrap());
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
