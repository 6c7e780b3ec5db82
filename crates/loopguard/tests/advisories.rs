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

#[test]
fn the_gate_asks_or_denies_for_vulnerable_dependency_changes() {
    let sb = Sandbox::new();
    let verdict = |tool: &str, input: serde_json::Value| {
        common::decision(&sb.pre("s", tool, input)).map_or(("allow".to_string(), String::new()), |d| d)
    };
    // Without data the gate claims nothing either way.
    assert_eq!(verdict("Bash", serde_json::json!({"command": "cargo add smallvec@1.6.0"})).0, "allow");
    sb.run(&["advisories", "import", fixture("advisories").to_str().unwrap()], "");
    // CVSS 9.8: denied, naming the fixed version.
    let (v, reason) = verdict("Bash", serde_json::json!({"command": "cargo add smallvec@1.6.0"}));
    assert_eq!(v, "deny");
    assert!(
        reason.contains("[vulnerable-dependency]")
            && reason.contains("RUSTSEC-2021-0003")
            && reason.contains("1.6.1 or later"),
        "{reason}"
    );
    assert_eq!(verdict("Bash", serde_json::json!({"command": "cargo add smallvec@1.6.1"})).0, "allow");
    // A Cargo.lock edit that moves openssl back to 0.8.3: CVSS 8.1 → ask.
    sb.write("Cargo.lock", &LOCK.replace("0.8.3", "0.10.70"));
    let lock = sb.ws.join("Cargo.lock");
    let (v, reason) = verdict(
        "Edit",
        serde_json::json!({"file_path": lock, "old_string": "version = \"0.10.70\"", "new_string": "version = \"0.8.3\""}),
    );
    assert_eq!(v, "ask", "{reason}");
    assert!(reason.contains("RUSTSEC-2016-0001") && reason.contains("0.9.0"), "{reason}");
    // Unchanged packages are not re-reported: an edit elsewhere in the lockfile passes.
    let (v, _) = verdict(
        "Edit",
        serde_json::json!({"file_path": lock, "old_string": "name = \"app\"", "new_string": "name = \"app2\""}),
    );
    assert_eq!(v, "allow");
}

#[test]
fn broken_advisory_data_asks_rather_than_allows() {
    let sb = Sandbox::new();
    sb.run(&["advisories", "import", fixture("advisories").to_str().unwrap()], "");
    std::fs::write(sb.state.join("advisories/crates.io/smallvec.jsonl"), "{not json\n").unwrap();
    let (v, reason) =
        common::decision(&sb.pre("s", "Bash", serde_json::json!({"command": "cargo add smallvec@1.6.1"}))).unwrap();
    assert_eq!(v, "ask");
    assert!(reason.contains("advisory data cannot be checked"), "{reason}");
}
