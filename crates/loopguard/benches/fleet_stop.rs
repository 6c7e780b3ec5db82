//! How fast a fleet position reaches every host: three simulated hosts (their own state homes
//! and `loopguard fleet agent` processes, release build) on one PostgreSQL; an operator
//! alternates stop and a signed release (FLEET_BENCH_TRIALS, default 30); each change is timed
//! from its commit to each host's mirror file holding it (what the hook reads on its next call),
//! and each host's next hook call is checked to obey. Against the floor of a bare NOTIFY round
//! trip on the same server, and the 1 s goal. Then the hook's cost in a fleet with a budget
//! against the same call on a host in no fleet (FLEET_BENCH_CALLS, default 200).
//!
//! Needs LOOPGUARD_TEST_PG (a libpq-style base, e.g. `host=/path/to/socket user=postgres`);
//! scripts/test.sh shows how to start a private cluster.
//! `cargo bench -p loopguard --bench fleet_stop`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use postgres::fallible_iterator::FallibleIterator;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn pct(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

struct Home {
    root: PathBuf,
}

impl Home {
    fn cmd(&self, exe: &str, args: &[&str]) -> Command {
        let mut c = Command::new(exe);
        c.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("LOOPGUARD_HOME", self.root.join("state"))
            .env("LOOPGUARD_EFFECTS", "manual")
            .current_dir(self.root.join("home/ws"));
        c
    }

    fn new(dir: &Path, name: &str, policy: &str) -> Home {
        let root = dir.join(name);
        std::fs::create_dir_all(root.join("home/ws/.git")).unwrap();
        std::fs::create_dir_all(root.join("home/.config/loopguard")).unwrap();
        std::fs::write(root.join("home/.config/loopguard/policy.toml"), policy).unwrap();
        Home { root }
    }

    fn hook(&self, exe: &str) -> String {
        let input = serde_json::json!({
            "session_id": "b", "transcript_path": self.root.join("t.jsonl"), "cwd": self.root.join("home/ws"),
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Read", "tool_input": { "file_path": self.root.join("home/ws/README.md") }, "tool_use_id": "t"
        })
        .to_string();
        let mut c =
            self.cmd(exe, &["hook", "claude-code"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if text.contains("\"deny\"") { "deny".into() } else { "allow".into() }
    }

    fn reserved(&self) -> i64 {
        std::fs::read(self.root.join("state/fleet/control.json"))
            .ok()
            .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
            .and_then(|v| v["budgets"][0]["granted"]["usd"].as_i64())
            .unwrap_or(0)
    }

    fn mirror_version(&self) -> i64 {
        std::fs::read(self.root.join("state/fleet/control.json"))
            .ok()
            .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
            .and_then(|v| v["scopes"]["*"]["version"].as_i64())
            .unwrap_or(0)
    }
}

fn main() {
    let Ok(base) = std::env::var("LOOPGUARD_TEST_PG") else {
        println!("fleet_stop: skipped — set LOOPGUARD_TEST_PG to a PostgreSQL (see scripts/test.sh)");
        return;
    };
    let trials: usize = std::env::var("FLEET_BENCH_TRIALS").ok().and_then(|s| s.parse().ok()).unwrap_or(30);
    let exe = std::env::var("LOOPGUARD_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_loopguard").to_string());
    let name = format!("lg_bench_{}", std::process::id());
    let mut admin = postgres::Client::connect(&format!("{base} dbname=postgres"), postgres::NoTls).unwrap();
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name}")).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let url = format!("{base} dbname={name}");
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();

    // The operator's key, pinned by every host.
    let op_state = dir.path().join("operator");
    let key = loopguard::keys::signing(&op_state).unwrap();
    let pinned = loopguard_audit::hex(key.verifying_key().as_bytes());
    let mut client = loopguard::fleet::connect(&loopguard_core::policy::FleetSettings {
        database_url: url.clone(),
        ..Default::default()
    })
    .unwrap();
    loopguard::fleet::schema::migrate(&mut client).unwrap();
    let hosts: Vec<Home> = (1..=3)
        .map(|i| {
            Home::new(
                dir.path(),
                &format!("h{i}"),
                &format!(
                    "version = 1\n[fleet]\ndatabase_url = \"{url}\"\nname = \"f\"\nhost = \"h{i}\"\nheartbeat = \"1s\"\noperator_keys = [\"{pinned}\"]\n"
                ),
            )
        })
        .collect();
    let mut agents: Vec<Child> = hosts
        .iter()
        .map(|h| h.cmd(&exe, &["fleet", "agent"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap())
        .collect();
    std::thread::sleep(Duration::from_secs(2));

    // The floor: NOTIFY on one connection, received on another.
    let mut listener = loopguard::fleet::connect(&loopguard_core::policy::FleetSettings {
        database_url: url.clone(),
        ..Default::default()
    })
    .unwrap();
    listener.batch_execute("LISTEN bench").unwrap();
    let mut floor = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        client.batch_execute("NOTIFY bench").unwrap();
        listener.notifications().blocking_iter().next().unwrap();
        floor.push(t.elapsed().as_secs_f64() * 1e3);
    }

    let mut delays = Vec::new();
    let mut wrong = 0;
    for i in 0..trials {
        let (position, want) = if i % 2 == 0 { ("stopped", "deny") } else { ("full-auto", "allow") };
        let version = loopguard::fleet::set_position(&mut client, "f", "*", position, "bench", &key).unwrap();
        let t = Instant::now();
        let mut pending: Vec<usize> = (0..hosts.len()).collect();
        while !pending.is_empty() {
            pending.retain(|&h| {
                if hosts[h].mirror_version() >= version {
                    delays.push(t.elapsed().as_secs_f64() * 1e3);
                    false
                } else {
                    true
                }
            });
            assert!(t.elapsed() < Duration::from_secs(30), "a host never got version {version}");
            std::thread::sleep(Duration::from_micros(500));
        }
        for h in &hosts {
            if h.hook(&exe) != want {
                wrong += 1;
            }
        }
    }
    // The hook's own cost in a fleet with a budget (mirror, day ledger, repository key, the
    // budget rule) against the same call on a host in no fleet, alternating blocks of 10.
    loopguard::fleet::reserve::define(&mut client, "f", "*", (Some(1_000_000_000), None), &key).unwrap();
    let t = Instant::now();
    while hosts[0].reserved() == 0 {
        assert!(t.elapsed() < Duration::from_secs(30), "no reservation");
        std::thread::sleep(Duration::from_millis(50));
    }
    let plain = Home::new(dir.path(), "plain", "version = 1\n");
    let calls: usize = std::env::var("FLEET_BENCH_CALLS").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    let (mut in_fleet, mut alone) = (Vec::new(), Vec::new());
    let _ = (hosts[0].hook(&exe), plain.hook(&exe));
    for block in 0..calls / 10 {
        for _ in 0..10 {
            let (h, v) = if block % 2 == 0 { (&hosts[0], &mut in_fleet) } else { (&plain, &mut alone) };
            let t = Instant::now();
            assert_eq!(h.hook(&exe), "allow");
            v.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    for a in &mut agents {
        let _ = a.kill();
        let _ = a.wait();
    }
    drop(client);
    drop(listener);
    let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));

    println!("fleet_stop: {trials} changes (stop, signed release, alternating) × 3 hosts, binary {exe}");
    println!("  floor: NOTIFY round trip        median {:7.2} ms", pct(floor.clone(), 0.5));
    println!(
        "  commit → every host's mirror   median {:7.2} ms   p99 {:7.2} ms   max {:7.2} ms",
        pct(delays.clone(), 0.5),
        pct(delays.clone(), 0.99),
        pct(delays.clone(), 1.0)
    );
    println!(
        "    median / floor = {:.1}; p99 / goal (1000 ms) = {:.3}; hook calls that did not obey: {wrong}",
        pct(delays.clone(), 0.5) / pct(floor, 0.5).max(0.001),
        pct(delays, 0.99) / 1000.0
    );
    println!(
        "  hook (Read), {calls} calls in blocks of 10: in a fleet with a budget median {:.2} ms, in no fleet {:.2} ms — ratio {:.2}",
        pct(in_fleet.clone(), 0.5),
        pct(alone.clone(), 0.5),
        pct(in_fleet, 0.5) / pct(alone, 0.5).max(0.001)
    );
}
