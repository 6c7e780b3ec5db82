//! The dashboard, measured in a real headless Chromium (Debian's chromium + chromium-driver):
//! 1. feed latency — audit events appended as the hook appends them, 10 per second for a minute
//!    (DASH_BENCH_SECS to change), each timed from the end of its write to the moment its row is
//!    in the page (a MutationObserver in the page; one clock: the same machine); against the
//!    floor of a bare request from the page to the dashboard, and the 1 s goal;
//! 2. page memory — the JS heap after the minute against the heap right after the page loaded;
//! 3. dashboard CPU — idle with the page open (events stopped) and with no page, over 10 s;
//! 4. the hook's latency with no dashboard (before and after), with one running (no page: what
//!    the hook itself does differently) and with its page open and following the logs (which
//!    adds a browser competing for the same cores).
//!
//! `cargo bench -p loopguard --bench dashboard_feed` (LOOPGUARD_BENCH_BIN for another build).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../tests/webdriver/mod.rs"]
mod webdriver;

use loopguard_audit::{AuditLog, EventKind, NewEvent};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() * 1e3
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line (11 and 12 after the name).
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn cpu_percent(pid: u32, secs: u64) -> f64 {
    let hz = 100.0; // USER_HZ on Linux
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(secs));
    (cpu_ticks(pid) - before) as f64 / hz / secs as f64 * 100.0
}

fn pct(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn start_dashboard(exe: &str, home: &Path, state: &Path, ws: &Path) -> (Child, String) {
    let mut child = Command::new(exe)
        .arg("dashboard")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LOOPGUARD_HOME", state)
        .current_dir(ws)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines.next().unwrap().unwrap().split_whitespace().last().unwrap().to_string();
    std::thread::spawn(move || for _ in lines {});
    (child, url)
}

fn hook_median(exe: &str, home: &Path, state: &Path, ws: &Path, n: usize) -> f64 {
    pct(hook_times(exe, home, state, ws, n), 0.5)
}

fn hook_times(exe: &str, home: &Path, state: &Path, ws: &Path, n: usize) -> Vec<f64> {
    let input = json!({
        "session_id": "bench", "transcript_path": home.join("t.jsonl"), "cwd": ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Read", "tool_input": { "file_path": ws.join("README.md") }, "tool_use_id": "t"
    })
    .to_string();
    let mut times = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let mut c = Command::new(exe)
            .args(["hook", "claude-code"])
            .env_clear()
            .env("HOME", home)
            .env("LOOPGUARD_HOME", state)
            .env("LOOPGUARD_EFFECTS", "manual")
            .current_dir(ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        assert!(c.wait().unwrap().success());
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    times
}

fn main() {
    if !webdriver::available() {
        println!("dashboard_feed: skipped — install Debian's chromium and chromium-driver");
        return;
    }
    let secs: u64 = std::env::var("DASH_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let exe = std::env::var("LOOPGUARD_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_loopguard").to_string());
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (home, state, ws) = (dir.path().join("home"), dir.path().join("state"), dir.path().join("home/ws"));
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join("README.md"), "hi\n").unwrap();
    let log = AuditLog::new(state.join("audit").join(format!("{}.jsonl", loopguard::state::workspace_key(&ws))));
    let mut start = NewEvent::new("bench", EventKind::SessionStart);
    start.details = Some(json!({ "workspace": ws.display().to_string() }));
    log.append(start).unwrap();

    let (mut dash, url) = start_dashboard(&exe, &home, &state, &ws);
    let b = webdriver::Browser::start();
    b.goto(&url);
    b.wait_until("live", "return document.getElementById('conn').textContent === 'live'", 30);
    std::thread::sleep(Duration::from_secs(1));
    let heap0 = b.js("return performance.memory.usedJSHeapSize", vec![]).as_f64().unwrap();
    // The floor: a bare request from the page to the dashboard and back.
    let floor = b.js(
        "const t = []; for (let i = 0; i < 30; i++) { const s = performance.now(); \
         const r = new XMLHttpRequest(); r.open('GET', '/api/events?limit=1', false); r.send(); t.push(performance.now() - s); } \
         t.sort((a, b) => a - b); return t[15];",
        vec![],
    )
    .as_f64()
    .unwrap();
    b.js(
        "window.__seen = {}; new MutationObserver(() => { const n = Date.now(); \
         for (const li of document.querySelectorAll('#feed li')) { const k = li.dataset.key; if (!(k in window.__seen)) window.__seen[k] = n; } \
         }).observe(document.getElementById('feed'), { childList: true });",
        vec![],
    );

    // 1: ten events a second.
    let key = loopguard::state::workspace_key(&ws);
    let mut written: Vec<(u64, f64)> = Vec::new();
    let t0 = Instant::now();
    for i in 0..secs * 10 {
        let due = t0 + Duration::from_millis(i * 100);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let mut e = NewEvent::new("bench", EventKind::PreToolUse);
        e.tool = Some("Bash".into());
        e.decision = Some(if i % 7 == 0 { "deny" } else { "allow" }.into());
        e.reasons = if i % 7 == 0 { vec!["destructive-rm-home".into()] } else { vec![] };
        let sealed = log.append(e).unwrap();
        written.push((sealed.seq, now_ms()));
    }
    std::thread::sleep(Duration::from_secs(3));
    let seen = b.js("return window.__seen", vec![]);
    let mut lat = Vec::new();
    let mut missing = 0;
    for (seq, at) in &written {
        match seen.get(format!("{key}:{seq}")).and_then(Value::as_f64) {
            Some(t) => lat.push((t - at).max(0.0)),
            None => missing += 1,
        }
    }
    // 2: memory.
    let heap1 = b.js("return performance.memory.usedJSHeapSize", vec![]).as_f64().unwrap();
    let rows = b.js("return document.querySelectorAll('#feed li').length", vec![]);
    // 3: CPU, idle with the page open, then with none.
    let idle_open = cpu_percent(dash.id(), 10);
    // 4: the hook while the dashboard's page is open and following the logs.
    let hook_on = hook_median(&exe, &home, &state, &ws, 100);
    drop(b);
    std::thread::sleep(Duration::from_secs(1));
    let idle_closed = cpu_percent(dash.id(), 10);
    let _ = dash.kill();
    let _ = dash.wait();
    // The hook's own share, alternating blocks: no dashboard, then one running (its file read by
    // every hook call), no page.
    let (mut off, mut running) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        off.extend(hook_times(&exe, &home, &state, &ws, 100));
        let (mut d, _) = start_dashboard(&exe, &home, &state, &ws);
        running.extend(hook_times(&exe, &home, &state, &ws, 100));
        let _ = d.kill();
        let _ = d.wait();
    }
    let (hook_off, hook_running) = (pct(off, 0.5), pct(running, 0.5));

    println!("dashboard_feed: {} events at 10/s, binary {exe}", written.len());
    println!("  floor: page → dashboard request   median {floor:7.1} ms");
    println!(
        "  feed latency (write → row)        median {:7.1} ms   p99 {:7.1} ms   max {:7.1} ms   missing {missing}",
        pct(lat.clone(), 0.5),
        pct(lat.clone(), 0.99),
        pct(lat.clone(), 1.0)
    );
    println!(
        "    median / floor = {:.1}; p99 / goal (1000 ms) = {:.2}",
        pct(lat.clone(), 0.5) / floor.max(0.001),
        pct(lat, 0.99) / 1000.0
    );
    println!(
        "  page JS heap: {:.1} MB after load, {:.1} MB after the run ({} rows shown); ratio {:.2}",
        heap0 / 1e6,
        heap1 / 1e6,
        rows,
        heap1 / heap0
    );
    println!("  dashboard CPU, idle: {idle_open:.2} % with the page open, {idle_closed:.2} % with none");
    println!(
        "  hook (Read): {hook_off:.0} µs without a dashboard; {hook_running:.0} µs with one running (ratio {:.3}); \
         {hook_on:.0} µs with its page open in Chromium on the same 2 cores (ratio {:.3})",
        hook_running / hook_off,
        hook_on / hook_off
    );
}
