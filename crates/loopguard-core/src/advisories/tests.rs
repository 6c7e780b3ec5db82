use super::*;

fn store_from_shared(ids: &[&str]) -> AdvisoryStore {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/advisories");
    let mut s = AdvisoryStore::default();
    for id in ids {
        s.add_json(&std::fs::read_to_string(dir.join(format!("{id}.json"))).unwrap()).unwrap();
    }
    s
}

#[test]
fn a_real_rustsec_record_affects_versions_before_the_fix_only() {
    // RUSTSEC-2016-0001: openssl < 0.9.0.
    let s = store_from_shared(&["RUSTSEC-2016-0001"]);
    let hits = s.check_crate("openssl", "0.8.3").unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].fixed.as_deref(), Some("0.9.0"));
    assert_eq!(hits[0].cvss, Some(8.1));
    assert!(s.check_crate("openssl", "0.9.0").unwrap().is_empty(), "the fixed release does not inherit it");
    assert!(s.check_crate("openssl", "0.10.55").unwrap().is_empty());
    assert!(s.check_crate("other", "0.1.0").unwrap().is_empty());
    assert!(s.check_crate("openssl", "not-a-version").is_err());
}

fn range(events: &[(&str, &str)]) -> OsvRange {
    OsvRange {
        kind: "SEMVER".into(),
        events: events
            .iter()
            .map(|(k, v)| {
                let v = Some(v.to_string());
                match *k {
                    "introduced" => OsvEvent { introduced: v, ..Default::default() },
                    "fixed" => OsvEvent { fixed: v, ..Default::default() },
                    "last_affected" => OsvEvent { last_affected: v, ..Default::default() },
                    _ => OsvEvent { limit: v, ..Default::default() },
                }
            })
            .collect(),
    }
}

#[test]
fn range_edge_cases() {
    let v = |s: &str| semver::Version::parse(s).unwrap();
    // Two affected windows: [1.0, 1.2.3) and [2.0, 2.0.5).
    let r = range(&[("introduced", "1.0.0"), ("fixed", "1.2.3"), ("introduced", "2.0.0"), ("fixed", "2.0.5")]);
    for (ver, want) in [
        ("0.9.9", false),
        ("1.0.0", true),
        ("1.2.2", true),
        ("1.2.3", false),
        ("1.9.0", false),
        ("2.0.4", true),
        ("2.0.5", false),
    ] {
        assert_eq!(r.contains(&v(ver)), Some(want), "{ver}");
    }
    // last_affected is inclusive.
    let r = range(&[("introduced", "0"), ("last_affected", "0.3.1")]);
    assert_eq!(r.contains(&v("0.3.1")), Some(true));
    assert_eq!(r.contains(&v("0.3.2")), Some(false));
    // limit cuts the range.
    let r = range(&[("introduced", "0"), ("limit", "0.5.0")]);
    assert_eq!(r.contains(&v("0.4.9")), Some(true));
    assert_eq!(r.contains(&v("0.5.0")), Some(false));
    // Pre-releases sort before their release.
    let r = range(&[("introduced", "0.0.0-0"), ("fixed", "1.0.0")]);
    assert_eq!(r.contains(&v("1.0.0-rc.1")), Some(true));
    assert_eq!(r.contains(&v("1.0.0")), Some(false));
    // A range that cannot be read is "cannot tell", not "not affected".
    let r = range(&[("introduced", "banana")]);
    assert_eq!(r.contains(&v("1.0.0")), None);
}

#[test]
fn cvss_base_scores() {
    assert_eq!(cvss3_base("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"), Some(9.8));
    assert_eq!(cvss3_base("CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H"), Some(8.1));
    assert_eq!(cvss3_base("CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N"), Some(6.1));
    assert_eq!(cvss3_base("garbage"), None);
}

#[test]
fn cargo_lock_registry_packages() {
    let text = "version = 3\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n[[package]]\nname = \"local\"\nversion = \"0.1.0\"\n";
    let l = lockfile::cargo_lock(text).unwrap();
    assert_eq!(l, [lockfile::Locked { name: "a".into(), version: "1.0.0".into() }]);
    assert!(lockfile::cargo_lock("not toml [").is_err());
}
