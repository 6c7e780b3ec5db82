//! The breaker's cost per hook call, in process: lock and read the workspace's hot state (as
//! every hook process does), `before` (run, transcript check, day totals, recovery, trip
//! evaluation) and `after` (counters, trip evaluation), write back. Target ≤ 200 µs.
//! `cargo bench -p loopguard --bench breaker`. (`store_open_only`: what opening the SQLite store
//! costs, which the hook no longer does.)

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use divan::Bencher;
use loopguard::store::Store;
use loopguard_core::{Context, Gate, Policy};
use std::time::Duration;

fn main() {
    divan::main();
}

struct Setup {
    _d: tempfile::TempDir,
    state: std::path::PathBuf,
    ws: std::path::PathBuf,
    transcript: std::path::PathBuf,
    policy: Policy,
}

fn setup(profile: &str) -> Setup {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let ws = d.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // A transcript with some history, already read up to its end by earlier calls.
    let transcript = d.path().join("t.jsonl");
    let line = r#"{"type":"assistant","message":{"id":"m","model":"claude-sonnet-4-5","usage":{"input_tokens":10,"output_tokens":20}}}"#;
    std::fs::write(&transcript, format!("{line}\n").repeat(50)).unwrap();
    let policy = Policy::from_layers(&[(
        loopguard_core::policy::LayerKind::User,
        "u.toml".into(),
        format!("[breaker]\nprofile = \"{profile}\"\n[[breakers]]\ntrigger = \"steps\"\nthreshold = 1e12\naction = \"stop\"\n"),
    )])
    .unwrap();
    Setup { _d: d, state, ws, transcript, policy }
}

fn one_call(s: &Setup, decision: &loopguard_core::Decision) {
    let cfg = s.policy.breaker();
    loopguard::hot::write(&s.state, "ws-key", |tx| {
        let now = 1_800_000_000;
        let mut b = loopguard::breaker::before(
            tx,
            cfg,
            "ws-key",
            &s.ws,
            "session",
            loopguard::breaker::Usage::Transcript(Some(&s.transcript)),
            now,
            None,
        )?;
        loopguard::breaker::after(tx, cfg, &mut b, decision, now, &s.ws)?;
        Ok(())
    })
    .unwrap();
}

#[divan::bench(args = ["interactive", "loop"])]
fn breaker_per_hook_call(b: Bencher, profile: &str) {
    let s = setup(profile);
    let call =
        loopguard::hosts::claude_code::tools::call("Read", serde_json::json!({"file_path": s.ws.join("a")}), &s.ws);
    let decision = Gate::new(&s.policy).evaluate(&call, &Context::new(&s.ws));
    one_call(&s, &decision); // schema created, transcript read once
    b.bench_local(|| one_call(&s, &decision));
}

#[divan::bench]
fn store_open_only(b: Bencher) {
    let s = setup("interactive");
    drop(Store::open(&s.state, Duration::from_secs(2)).unwrap());
    b.bench_local(|| Store::open(&s.state, Duration::from_secs(2)).unwrap());
}
