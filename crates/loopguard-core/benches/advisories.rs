//! Checking a 500-dependency lockfile against a loaded advisory store (goal ≤ 20 ms):
//! `cargo bench -p loopguard-core --bench advisories`. The store holds 1,200 synthetic records
//! over 400 packages per ecosystem (the size of the RustSec database), the lockfile 500
//! packages, 300 of them with advisories. `parse_and_check_*` reads the lockfile text too
//! (Cargo.lock, package-lock.json), as `loopguard advisories check` does.

#![allow(clippy::unwrap_used, missing_docs)]

use loopguard_core::advisories::{AdvisoryStore, Ecosystem, manifest};

fn main() {
    divan::main();
}

fn store() -> AdvisoryStore {
    let mut s = AdvisoryStore::default();
    for (eco, i) in ["crates.io", "npm"].into_iter().flat_map(|e| (0..1200).map(move |i| (e, i))) {
        let rec = serde_json::json!({
            "id": format!("{eco}-2099-{i:04}"),
            "summary": "synthetic",
            "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}],
            "affected": [{
                "package": {"ecosystem": eco, "name": format!("crate{}", i % 400)},
                "ranges": [{"type": "SEMVER", "events": [{"introduced": "0.0.0-0"}, {"fixed": format!("1.{}.0", i % 7)}, {"introduced": "2.0.0"}, {"fixed": "2.3.1"}]}],
            }],
        });
        s.add_json(&rec.to_string()).unwrap();
    }
    s
}

#[divan::bench]
fn check_500_locked_packages(b: divan::Bencher) {
    let s = store();
    let lock: Vec<(String, String)> =
        (0..500).map(|i| (format!("crate{}", i % 600), format!("{}.{}.{}", i % 3, i % 5, i % 4))).collect();
    b.bench_local(|| {
        let mut n = 0;
        for (name, v) in &lock {
            n += s.check_crate(name, v).unwrap().len();
        }
        n
    });
}

fn lock(i: usize) -> (String, String) {
    (format!("crate{}", i % 600), format!("{}.{}.{}", i % 3, i % 5, i % 4))
}

#[divan::bench]
fn parse_and_check_cargo_lock_500(b: divan::Bencher) {
    let s = store();
    let mut text = String::from("version = 3\n");
    for (name, v) in (0..500).map(lock) {
        text.push_str(&format!(
            "\n[[package]]\nname = \"{name}\"\nversion = \"{v}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{}\"\n",
            "0".repeat(64)
        ));
    }
    b.bench_local(|| {
        let deps = manifest::cargo_lock(&text).unwrap();
        let mut n = 0;
        for d in &deps {
            let v = d.eco.parse(d.req.as_deref().unwrap()).unwrap();
            n += s.check(d.eco, &d.name, &v).unwrap().len();
        }
        assert_eq!(deps.len(), 500);
        n
    });
}

#[divan::bench]
fn parse_and_check_package_lock_500(b: divan::Bencher) {
    let s = store();
    let pkgs: serde_json::Map<String, serde_json::Value> = (0..500)
        .map(lock)
        .map(|(n, v)| (format!("node_modules/{n}"), serde_json::json!({"version": v, "resolved": format!("https://registry.npmjs.org/{n}/-/{n}-{v}.tgz"), "integrity": "sha512-xyz"})))
        .collect();
    let text = serde_json::json!({"lockfileVersion": 3, "packages": pkgs}).to_string();
    b.bench_local(|| {
        let deps = manifest::package_lock(&text).unwrap();
        let mut n = 0;
        for d in &deps {
            let v = Ecosystem::Npm.parse(d.req.as_deref().unwrap()).unwrap();
            n += s.check(d.eco, &d.name, &v).unwrap().len();
        }
        n
    });
}
