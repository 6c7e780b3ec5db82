//! What `loopguard exec` adds to running a command: `true` spawned directly versus through
//! `loopguard exec -- true` (scrubbed env, the inner process, user/mount/network namespaces with
//! the default profile's mounts over a home holding credential locations, Landlock, output
//! pumps), interleaved.
//! Goal (issue 8): overhead ≤ 3 ms. `cargo bench -p loopguard --bench exec_overhead`
//! (EXEC_BENCH_ITERS to change the count; LOOPGUARD_BENCH_BIN for another build).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn time(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let status = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status().unwrap();
    assert!(status.success());
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let iters: usize = std::env::var("EXEC_BENCH_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    let exe = std::env::var("LOOPGUARD_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_loopguard").to_string());
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    // What the default profile covers and protects on a developer's machine: the mount
    // namespace's work is part of the overhead.
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    for d in [".ssh", ".aws", ".config/gh", ".kube", ".docker", ".cache", ".cargo/registry", ".npm"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    std::fs::write(dir.path().join(".netrc"), "machine x\n").unwrap();
    let truth = which_true();
    let (mut plain, mut sandboxed) = (Vec::new(), Vec::new());
    for _ in 0..iters {
        plain.push(time(Command::new(&truth).current_dir(&ws)));
        sandboxed.push(time(
            Command::new(&exe)
                .args(["exec", "--"])
                .arg(&truth)
                .env_clear()
                .env("HOME", dir.path())
                .env("LOOPGUARD_HOME", dir.path().join("state"))
                .current_dir(&ws),
        ));
    }
    let (p, s) = (median(plain), median(sandboxed));
    let over = s.saturating_sub(p);
    println!("exec_overhead: {iters} interleaved runs each, `true`, binary {exe}");
    println!("  plain spawn           median {:8.1} µs", p.as_secs_f64() * 1e6);
    println!("  loopguard exec        median {:8.1} µs", s.as_secs_f64() * 1e6);
    println!(
        "    overhead = {:.2} ms  (goal ≤ 3 ms); ratio = {:.2}",
        over.as_secs_f64() * 1e3,
        s.as_secs_f64() / p.as_secs_f64()
    );
}

fn which_true() -> String {
    for p in ["/usr/bin/true", "/bin/true"] {
        if std::path::Path::new(p).exists() {
            return p.to_string();
        }
    }
    "true".to_string()
}
