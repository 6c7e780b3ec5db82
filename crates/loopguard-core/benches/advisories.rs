//! Checking a 500-dependency lockfile against a loaded advisory store (goal ≤ 20 ms):
//! `cargo bench -p loopguard-core --bench advisories`. The store holds 1,200 synthetic records
//! over 400 crates (the size of the RustSec database), the lockfile 500 packages, 300 of them
//! with advisories.

#![allow(clippy::unwrap_used, missing_docs)]

use loopguard_core::advisories::AdvisoryStore;

fn main() {
    divan::main();
}

fn store() -> AdvisoryStore {
    let mut s = AdvisoryStore::default();
    for i in 0..1200 {
        let rec = serde_json::json!({
            "id": format!("RUSTSEC-2099-{i:04}"),
            "summary": "synthetic",
            "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}],
            "affected": [{
                "package": {"ecosystem": "crates.io", "name": format!("crate{}", i % 400)},
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
