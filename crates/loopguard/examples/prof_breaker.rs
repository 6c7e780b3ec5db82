//! Where the breaker's per-call time goes, phase by phase (open, transaction, close), as a hook
//! process pays it: `cargo run --release -p loopguard --example prof_breaker`. The divan bench
//! `breaker` gives the total; this splits it (used to choose the journal mode, see store.rs).

#![allow(clippy::unwrap_used, missing_docs)]

use loopguard::store::Store;
use std::time::{Duration, Instant};

fn main() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    let ws = d.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let policy = loopguard_core::Policy::builtin();
    let cfg = policy.breaker();
    let call = loopguard_core::ToolCall::new("Read", serde_json::json!({"file_path": ws.join("a")}), &ws);
    let decision = loopguard_core::Gate::new(&policy).evaluate(&call, &loopguard_core::Context::new(&ws));
    let (warmup, n) = (20, 500);
    let mut t = [Duration::ZERO; 3];
    for i in 0..warmup + n {
        let a = Instant::now();
        let mut store = Store::open(&state, Duration::from_secs(2)).unwrap();
        let b = Instant::now();
        store
            .write(|tx| {
                let mut before = loopguard::breaker::before(tx, cfg, "key", &ws, "session", None, 1_800_000_000)?;
                loopguard::breaker::after(tx, cfg, &mut before, &decision, 1_800_000_000, &ws)?;
                Ok(())
            })
            .unwrap();
        let c = Instant::now();
        drop(store);
        let e = Instant::now();
        if i >= warmup {
            t[0] += b - a;
            t[1] += c - b;
            t[2] += e - c;
        }
    }
    for (name, v) in ["open", "transaction", "close"].iter().zip(t) {
        println!("{name:>12}: {:>7.1} us", v.as_secs_f64() * 1e6 / f64::from(n));
    }
}
