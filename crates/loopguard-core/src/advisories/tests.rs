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
    let v = |s: &str| Ecosystem::Crates.parse(s).unwrap();
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
        assert_eq!(r.contains(Ecosystem::Crates, &v(ver)), Some(want), "{ver}");
    }
    // last_affected is inclusive.
    let r = range(&[("introduced", "0"), ("last_affected", "0.3.1")]);
    assert_eq!(r.contains(Ecosystem::Crates, &v("0.3.1")), Some(true));
    assert_eq!(r.contains(Ecosystem::Crates, &v("0.3.2")), Some(false));
    // limit cuts the range.
    let r = range(&[("introduced", "0"), ("limit", "0.5.0")]);
    assert_eq!(r.contains(Ecosystem::Crates, &v("0.4.9")), Some(true));
    assert_eq!(r.contains(Ecosystem::Crates, &v("0.5.0")), Some(false));
    // Pre-releases sort before their release.
    let r = range(&[("introduced", "0.0.0-0"), ("fixed", "1.0.0")]);
    assert_eq!(r.contains(Ecosystem::Crates, &v("1.0.0-rc.1")), Some(true));
    assert_eq!(r.contains(Ecosystem::Crates, &v("1.0.0")), Some(false));
    // A range that cannot be read is "cannot tell", not "not affected".
    let r = range(&[("introduced", "banana")]);
    assert_eq!(r.contains(Ecosystem::Crates, &v("1.0.0")), None);
}

#[test]
fn cvss_base_scores() {
    assert_eq!(cvss3_base("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"), Some(9.8));
    assert_eq!(cvss3_base("CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H"), Some(8.1));
    assert_eq!(cvss3_base("CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N"), Some(6.1));
    assert_eq!(cvss3_base("garbage"), None);
}

fn record(eco: &str, name: &str, kind: &str, events: serde_json::Value, cvss: Option<&str>) -> String {
    serde_json::json!({
        "id": format!("TEST-{eco}-{name}"),
        "summary": "test record",
        "severity": cvss.map(|c| vec![serde_json::json!({"type": "CVSS_V3", "score": c})]).unwrap_or_default(),
        "affected": [{"package": {"ecosystem": eco, "name": name}, "ranges": [{"type": kind, "events": events}]}],
    })
    .to_string()
}

#[test]
fn npm_ranges_use_semver_precedence_and_two_windows() {
    // Shaped like minimist's prototype pollution advisory: < 0.2.4 and 1.0.0 … < 1.2.6.
    let mut s = AdvisoryStore::default();
    let ev = serde_json::json!([{"introduced": "0"}, {"fixed": "0.2.4"}, {"introduced": "1.0.0"}, {"fixed": "1.2.6"}]);
    s.add_json(&record("npm", "minimist", "SEMVER", ev, Some("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"))).unwrap();
    let check = |v: &str| s.check(Ecosystem::Npm, "minimist", &Ecosystem::Npm.parse(v).unwrap()).unwrap();
    assert_eq!(check("0.0.8")[0].fixed.as_deref(), Some("0.2.4"));
    assert!(check("0.2.4").is_empty());
    assert_eq!(check("1.2.5")[0].fixed.as_deref(), Some("1.2.6"), "the fix of its own window");
    assert_eq!(check("1.2.6-beta.1").len(), 1, "a pre-release of the fix is still affected");
    assert!(check("1.2.6").is_empty());
    assert_eq!(check("1.2.5")[0].cvss, Some(9.8));
    // The floor of a range is what gets checked.
    assert_eq!(check(&Ecosystem::Npm.floor("^1.2.0").unwrap().to_string()).len(), 1);
}

#[test]
fn pypi_uses_pep440_and_normalised_names() {
    let mut s = AdvisoryStore::default();
    let ev = serde_json::json!([{"introduced": "2.3.0"}, {"fixed": "2.31.0"}]);
    s.add_json(&record("PyPI", "Requests", "ECOSYSTEM", ev, None)).unwrap();
    let check = |name: &str, v: &str| s.check(Ecosystem::PyPI, name, &Ecosystem::PyPI.parse(v).unwrap()).unwrap();
    assert_eq!(check("requests", "2.25.0").len(), 1, "names compare PEP 503-normalised");
    assert_eq!(check("REQUESTS", "2.31.0rc1").len(), 1, "a release candidate comes before the release");
    assert!(check("requests", "2.31.0").is_empty());
    assert!(check("requests", "2.31.0.post1").is_empty(), "a post-release follows the fix");
    assert!(check("requests", "2.2.1").is_empty());
    assert_eq!(check("requests", "2.30").len(), 1, "2.30 is 2.30.0");
}

#[test]
fn go_versions_take_the_v_prefix() {
    let mut s = AdvisoryStore::default();
    let ev = serde_json::json!([{"introduced": "0"}, {"fixed": "0.3.7"}]);
    s.add_json(&record("Go", "golang.org/x/text", "SEMVER", ev, None)).unwrap();
    let check = |v: &str| s.check(Ecosystem::Go, "golang.org/x/text", &Ecosystem::Go.parse(v).unwrap()).unwrap();
    assert_eq!(check("v0.3.6").len(), 1);
    assert_eq!(check("v0.0.0-20210226172049-e18ecbb05110").len(), 1, "a pseudo-version is a pre-release");
    assert!(check("v0.3.7").is_empty());
}

#[test]
fn unversioned_additions_are_flagged_only_for_unfixed_advisories() {
    let mut s = AdvisoryStore::default();
    s.add_json(&record("npm", "abandoned", "SEMVER", serde_json::json!([{"introduced": "0"}]), None)).unwrap();
    s.add_json(&record(
        "npm",
        "fixed-one",
        "SEMVER",
        serde_json::json!([{"introduced": "0"}, {"fixed": "2.0.0"}]),
        None,
    ))
    .unwrap();
    let later = serde_json::json!([{"introduced": "0"}, {"fixed": "1.0.0"}, {"introduced": "3.0.0"}]);
    s.add_json(&record("npm", "regressed", "SEMVER", later, None)).unwrap();
    assert_eq!(s.unfixed(Ecosystem::Npm, "abandoned").len(), 1);
    assert!(s.unfixed(Ecosystem::Npm, "fixed-one").is_empty());
    assert_eq!(s.unfixed(Ecosystem::Npm, "regressed").len(), 1, "reintroduced and not fixed again");
    // Records of unknown ecosystems are kept out, not mixed in.
    s.add_json(&record("Debian:11", "abandoned", "ECOSYSTEM", serde_json::json!([{"introduced": "0"}]), None)).unwrap();
    assert_eq!(s.unfixed(Ecosystem::Npm, "abandoned").len(), 1);
}
