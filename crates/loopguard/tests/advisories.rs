//! `loopguard advisories` with real RustSec OSV records: import, check a lockfile, the fixed
//! version to use, missing data reported as missing (never as "no advisories").

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::{Sandbox, fixture};

const LOCK: &str = r#"version = 3
[[package]]
name = "openssl"
version = "0.8.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "smallvec"
version = "1.6.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "app"
version = "0.1.0"
"#;

#[test]
fn import_then_check_a_lockfile() {
    let sb = Sandbox::new();
    sb.write("Cargo.lock", LOCK);
    let (code, _, err) = sb.run(&["advisories", "check"], "");
    assert_eq!(code, 2);
    assert!(err.contains("no advisory data"), "{err}");
    let (code, out, err) = sb.run(&["advisories", "import", fixture("advisories").to_str().unwrap()], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "imported 3 advisories for 2 packages");
    let (code, out, _) = sb.run(&["advisories", "check", "--json"], "");
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["advisory"].as_str().unwrap()).collect();
    // openssl 0.8.3 is affected by both openssl records; smallvec 1.6.1 is the fixed release of
    // RUSTSEC-2021-0003 and does not inherit it.
    assert_eq!(ids, ["RUSTSEC-2016-0001", "RUSTSEC-2023-0022"]);
    assert_eq!(v["findings"][0]["fixed"], "0.9.0");
    assert_eq!(v["findings"][0]["cvss"], 8.1);
    assert_eq!(v["packages"], 2, "the path package is not looked up");
    sb.write("Cargo.lock", &LOCK.replace("1.6.1", "1.6.0").replace("0.8.3", "0.10.70"));
    let (code, out, _) = sb.run(&["advisories", "check"], "");
    assert_eq!(code, 1);
    assert!(
        out.contains("smallvec 1.6.0 — RUSTSEC-2021-0003 (CVSS 9.8)") && out.contains("use 1.6.1 or later"),
        "{out}"
    );
    assert!(!out.contains("openssl"), "{out}");
}
