//! Dry-run preview of a simple command (issue 11 goal: ≤ 100 ms): `loopguard preview --json
//! --command 'echo hi > out.txt'` end to end — process start, the sandbox (user, mount and
//! network namespaces, overlayfs over the workspace, Landlock), bash, reading the upper layer,
//! the diff — in a workspace of 200 files. Interleaved with plain `bash -c` of the same command
//! as a floor measured in the same run. `cargo bench -p loopguard --bench preview`
//! (PREVIEW_BENCH_ITERS to change the count; LOOPGUARD_BENCH_BIN for another build).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn time(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let out = cmd.stdin(Stdio::null()).stderr(Stdio::null()).output().unwrap();
    assert!(out.status.success());
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let iters: usize = std::env::var("PREVIEW_BENCH_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let exe = std::env::var("LOOPGUARD_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_loopguard").to_string());
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    for i in 0..200 {
        let d = ws.join(format!("src/m{}", i % 20));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("f{i}.rs")), format!("pub fn f{i}() {{}}\n")).unwrap();
    }
    let cmd = "echo hi > out.txt";
    let (mut plain, mut preview) = (Vec::new(), Vec::new());
    // Check once that it really simulates (not the prediction fallback).
    let out = Command::new(&exe)
        .args(["preview", "--json", "--command", cmd])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("LOOPGUARD_HOME", dir.path().join("state"))
        .current_dir(&ws)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["method"], "simulated", "{v}");
    assert_eq!(v["changes"][0]["path"], "out.txt", "{v}");
    for _ in 0..iters {
        plain.push(time(Command::new("bash").args(["-c", &format!("cd {} && {cmd} && rm out.txt", ws.display())])));
        preview.push(time(
            Command::new(&exe)
                .args(["preview", "--json", "--command", cmd])
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", dir.path())
                .env("LOOPGUARD_HOME", dir.path().join("state"))
                .current_dir(&ws),
        ));
    }
    let (p, s) = (median(plain), median(preview));
    println!("plain bash -c:      median {:>8.2} ms ({iters} runs, interleaved)", p.as_secs_f64() * 1e3);
    println!("loopguard preview:  median {:>8.2} ms", s.as_secs_f64() * 1e3);
    println!(
        "preview of a simple command: {:.2} ms (goal ≤ 100 ms): {}",
        s.as_secs_f64() * 1e3,
        if s <= Duration::from_millis(100) { "met" } else { "NOT met" }
    );
}
