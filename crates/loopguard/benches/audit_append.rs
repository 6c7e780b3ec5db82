//! In-process cost of one audit append (lock, read tail, write, update head):
//! `cargo bench -p loopguard --bench audit_append`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use divan::Bencher;
use loopguard_audit::{AuditLog, EventKind, NewEvent};

fn main() {
    divan::main();
}

#[divan::bench]
fn append(b: Bencher) {
    let d = tempfile::tempdir().unwrap();
    let log = AuditLog::new(d.path().join("bench.jsonl"));
    b.bench_local(|| {
        let mut e = NewEvent::new("bench-session", EventKind::PreToolUse);
        e.tool = Some("Bash".into());
        e.decision = Some("allow".into());
        e.details = Some(serde_json::json!({"input_sha256": "0".repeat(64), "risk": "high"}));
        log.append(e).unwrap()
    });
}
