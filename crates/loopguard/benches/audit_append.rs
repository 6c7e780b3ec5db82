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

fn event() -> NewEvent {
    let mut e = NewEvent::new("bench-session", EventKind::PreToolUse);
    e.tool = Some("Bash".into());
    e.decision = Some("allow".into());
    e.details = Some(serde_json::json!({"input_sha256": "0".repeat(64), "risk": "high"}));
    e
}

/// A session end's checkpoint on a log of 100,000 events (~35 MB) with 200 new events since the
/// last one: incremental, so it reads only those (the full `audit verify` is a human's command).
#[divan::bench(sample_count = 20)]
fn checkpoint_after_200_events_on_a_100k_log(b: Bencher) {
    let d = tempfile::tempdir().unwrap();
    let log = AuditLog::new(d.path().join("big.jsonl"));
    for _ in 0..100_000 {
        log.append(event()).unwrap();
    }
    let key = loopguard_audit::SigningKey::from_bytes(&[7; 32]);
    log.checkpoint(&key, "s").unwrap();
    b.with_inputs(|| {
        for _ in 0..200 {
            log.append(event()).unwrap();
        }
    })
    .bench_local_values(|()| log.checkpoint(&key, "s").unwrap());
}
