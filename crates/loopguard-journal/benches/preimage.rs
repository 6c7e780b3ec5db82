//! What keeping a step's pre-image costs, against copying the same files with `std::fs::copy`
//! (the floor: a backup can hardly cost less), interleaved in the same run:
//! `cargo bench -p loopguard-journal --bench preimage` (JOURNAL_BENCH_ITERS to change the count).
//! Goal (issue "nothing lost"): a typical `rm`/`sed -i` step's pre-image ≤ 5 ms.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use loopguard_journal::{Journal, Limits, StepMeta};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Copies every file below `from` into `to` (the floor).
fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    }
}

fn case(name: &str, ws: &Path, targets: &[PathBuf], scratch: &Path, iters: usize) {
    let (mut floor, mut kept) = (Vec::new(), Vec::new());
    for i in 0..iters {
        let dest = scratch.join(format!("copy-{name}-{i}"));
        let t = Instant::now();
        for (k, target) in targets.iter().enumerate() {
            copy_tree(target, &dest.join(k.to_string()));
        }
        floor.push(t.elapsed());
        // A fresh journal each time: no object is already stored (the worst case).
        let journal = Journal::open(scratch.join(format!("journal-{name}-{i}"))).unwrap();
        let meta =
            StepMeta { at: 0, session: "s".into(), tool: "Bash".into(), call: i.to_string(), summary: name.into() };
        let t = Instant::now();
        journal.record(meta, targets, &[ws.to_path_buf()], &Limits::default()).unwrap();
        kept.push(t.elapsed());
    }
    let (f, k) = (median(floor), median(kept));
    println!(
        "  {name:<34} pre-image median {:8.1} µs   copy floor {:8.1} µs   ratio {:.2}   (goal ≤ 5 ms)",
        k.as_secs_f64() * 1e6,
        f.as_secs_f64() * 1e6,
        k.as_secs_f64() / f.as_secs_f64().max(1e-9)
    );
}

fn main() {
    let iters: usize = std::env::var("JOURNAL_BENCH_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(ws.join("src/gen")).unwrap();
    let line = "fn generated_function_with_a_long_name(x: u64) -> u64 { x.wrapping_mul(31) }\n";
    std::fs::write(ws.join("src/lib.rs"), line.repeat(250)).unwrap(); // ~20 KB
    for k in 0..200 {
        std::fs::write(ws.join(format!("src/gen/m{k}.rs")), line.repeat(50)).unwrap(); // ~4 KB each
    }
    println!("journal pre-images: {iters} interleaved runs each");
    case("sed -i src/lib.rs (1 file, 20 KB)", &ws, &[ws.join("src/lib.rs")], &scratch, iters);
    case("rm -rf src/gen (200 files, 800 KB)", &ws, &[ws.join("src/gen")], &scratch, iters);
}
