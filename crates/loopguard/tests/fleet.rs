//! The fleet against a real PostgreSQL (scripts/test.sh starts a private cluster on a Unix socket
//! and names it in LOOPGUARD_TEST_PG): the schema, three simulated hosts (separate state homes,
//! separate `loopguard fleet agent` processes), fleet positions and what may lift them, audit
//! shipping and `audit verify --fleet`, shared budgets — and, on a cluster of its own, the
//! database killed mid-run.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Sandbox, decision};
use serde_json::{Value, json};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const DEADLINE: &[&str] = &["--deadline-ms", "60000"];

/// A database of its own for one test, on the test cluster.
struct Db {
    name: String,
    base: String,
}

impl Db {
    fn new() -> Db {
        let base = std::env::var("LOOPGUARD_TEST_PG")
            .expect("LOOPGUARD_TEST_PG names the test PostgreSQL (scripts/test.sh starts one)");
        let mut bytes = [0u8; 6];
        getrandom::fill(&mut bytes).unwrap();
        let name = format!("lg_{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let mut admin = postgres::Client::connect(&format!("{base} dbname=postgres"), postgres::NoTls).unwrap();
        admin.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        Db { name, base }
    }

    fn url(&self) -> String {
        format!("{} dbname={}", self.base, self.name)
    }

    fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url(), postgres::NoTls).unwrap()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Ok(mut admin) = postgres::Client::connect(&format!("{} dbname=postgres", self.base), postgres::NoTls) {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
        }
    }
}

/// One simulated host: a sandbox whose user policy names the fleet, and its agent.
struct Host {
    sb: Sandbox,
    agent: Option<Child>,
}

impl Host {
    fn new(db: &Db, name: &str, group: &str, operator_key: &str) -> Host {
        let sb = Sandbox::new();
        sb.user_policy(&format!(
            "version = 1\n[fleet]\ndatabase_url = \"{}\"\nname = \"f\"\nhost = \"{name}\"\ngroup = \"{group}\"\nheartbeat = \"1s\"\noperator_keys = [\"{operator_key}\"]\n",
            db.url()
        ));
        sb.start("s");
        Host { sb, agent: None }
    }

    fn start_agent(&mut self) {
        // Its stderr is kept (appended across restarts) for a failing test to show.
        let log =
            std::fs::OpenOptions::new().create(true).append(true).open(self.sb.root.path().join("agent.log")).unwrap();
        let child = self.sb.command(&["fleet", "agent"]).stdout(Stdio::null()).stderr(log).spawn().unwrap();
        self.agent = Some(child);
    }

    fn agent_log(&self) -> String {
        std::fs::read_to_string(self.sb.root.path().join("agent.log")).unwrap_or_default()
    }

    fn stop_agent(&mut self) {
        if let Some(mut c) = self.agent.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn ls(&self, id: &str) -> (String, String) {
        let ev = json!({
            "session_id": "s", "transcript_path": self.sb.root.path().join("s.jsonl"), "cwd": self.sb.ws,
            "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
            "tool_name": "Read", "tool_input": { "file_path": self.sb.ws.join("README.md") }, "tool_use_id": id
        });
        let out = self.sb.hook_with(DEADLINE, ev.to_string().as_bytes());
        decision(&out).unwrap_or(("allow".into(), String::new()))
    }

    fn bash(&self, id: &str, command: &str) -> (String, String) {
        let ev = json!({
            "session_id": "s", "transcript_path": self.sb.root.path().join("s.jsonl"), "cwd": self.sb.ws,
            "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": id
        });
        let out = self.sb.hook_with(DEADLINE, ev.to_string().as_bytes());
        decision(&out).unwrap_or(("allow".into(), String::new()))
    }

    fn write(&self, id: &str) -> (String, String) {
        let ev = json!({
            "session_id": "s", "transcript_path": self.sb.root.path().join("s.jsonl"), "cwd": self.sb.ws,
            "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
            "tool_name": "Write", "tool_input": { "file_path": self.sb.ws.join("notes.txt"), "content": "x" }, "tool_use_id": id
        });
        let out = self.sb.hook_with(DEADLINE, ev.to_string().as_bytes());
        decision(&out).unwrap_or(("allow".into(), String::new()))
    }

    fn wait_for(&self, what: &str, want: &str) -> String {
        let t = Instant::now();
        loop {
            let (verdict, reason) = self.ls("w");
            if verdict == want {
                return reason;
            }
            assert!(t.elapsed() < Duration::from_secs(20), "{what}: still {verdict} after 20 s: {reason}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop_agent();
    }
}

/// The operator: a state home of its own whose key the hosts pin, and the same fleet.
fn operator(db: &Db) -> (Sandbox, String) {
    let op = Sandbox::new();
    op.user_policy(&format!(
        "version = 1\n[fleet]\ndatabase_url = \"{}\"\nname = \"f\"\nhost = \"operator\"\n",
        db.url()
    ));
    let (code, out, err) = op.run(&["fleet", "status", "--json"], "");
    assert_eq!(code, 0, "{err}");
    // A fresh state home prints the key to pin at once (it is made on first use).
    let key = serde_json::from_str::<Value>(&out).unwrap()["operator_key"].as_str().unwrap().to_string();
    assert_eq!(key.len(), 64, "{out}");
    let (_, text, _) = op.run(&["fleet", "status"], "");
    assert!(
        text.contains(&format!("this state home's key (pin it in operator_keys to let it lift positions): {key}")),
        "{text}"
    );
    (op, key)
}

fn migrate(op: &Sandbox) {
    let (code, out, err) = op.run(&["fleet", "migrate"], "");
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn migrations_are_versioned_idempotent_and_safe_to_race() {
    let db = Db::new();
    let (op, _) = operator(&db);
    let runs: Vec<_> = (0..3).map(|_| op.command(&["fleet", "migrate"]).output().unwrap()).collect();
    // (Sequential here; the race below is real.)
    for r in &runs {
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let first = String::from_utf8_lossy(&runs[0].stdout).to_string();
    assert!(first.contains("applied migration(s) [1, 2, 3]"), "{first}");
    assert!(String::from_utf8_lossy(&runs[2].stdout).contains("up to date (version 3)"));
    let db2 = Db::new();
    let (op2, _) = operator(&db2);
    let racing: Vec<Child> =
        (0..4).map(|_| op2.command(&["fleet", "migrate"]).stdout(Stdio::null()).spawn().unwrap()).collect();
    for mut c in racing {
        assert!(c.wait().unwrap().success());
    }
    let n: i64 = db2.client().query_one("SELECT count(*) FROM loopguard_schema", &[]).unwrap().get(0);
    assert_eq!(n, 3);
}

#[test]
fn a_fleet_stop_reaches_every_host_and_only_a_pinned_signature_lifts_it() {
    let db = Db::new();
    let (op, key) = operator(&db);
    migrate(&op);
    let mut hosts: Vec<Host> =
        ["h1", "h2", "h3"].iter().map(|h| Host::new(&db, h, if *h == "h3" { "ci" } else { "dev" }, &key)).collect();
    for h in &mut hosts {
        h.start_agent();
        // Until its agent first reports, a host knows nothing of the fleet: stopped.
        h.wait_for("the agent's first report", "allow");
    }
    // A stop, by the operator: every host's next calls are denied, saying why.
    let (code, _, err) = op.run(&["fleet", "stop", "--reason", "incident 42"], "");
    assert_eq!(code, 0, "{err}");
    for h in &hosts {
        let why = h.wait_for("the fleet stop", "deny");
        assert!(why.contains("incident 42") && why.contains("fleet"), "{why}");
    }
    // A forged release straight into the database (no signature): refused by every agent.
    let mut c = db.client();
    c.batch_execute(
        "UPDATE loopguard_control SET position = 'full-auto', version = nextval('loopguard_control_version'), sig = '', key = '' WHERE scope = '*';
         NOTIFY loopguard_control, 'f'",
    )
    .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    for h in &hosts {
        assert_eq!(h.ls("b").0, "deny", "a forged release lifted the stop");
        let (_, status, _) = h.sb.run(&["fleet", "status", "--json"], "");
        assert!(status.contains("not signed by a pinned operator key"), "{status}");
    }
    // A signed release lifts it…
    let (code, _, err) = op.run(&["fleet", "set", "full-auto", "--reason", "resolved"], "");
    assert_eq!(code, 0, "{err}");
    let release: Vec<Value> = c
        .query("SELECT row_to_json(c)::text FROM loopguard_control c WHERE scope = '*'", &[])
        .unwrap()
        .iter()
        .map(|r| serde_json::from_str(r.get::<_, &str>(0)).unwrap())
        .collect();
    for h in &hosts {
        h.wait_for("the signed release", "allow");
    }
    // …a group stop reaches only that group…
    let (code, _, err) = op.run(&["fleet", "stop", "--group", "ci", "--reason", "ci only"], "");
    assert_eq!(code, 0, "{err}");
    hosts[2].wait_for("the group stop", "deny");
    assert_eq!(hosts[0].ls("c").0, "allow");
    // …and the old signed release, replayed over a newer stop, lifts nothing.
    let (code, _, err) = op.run(&["fleet", "stop", "--reason", "again"], "");
    assert_eq!(code, 0, "{err}");
    for h in &hosts {
        h.wait_for("the second stop", "deny");
    }
    let old = &release[0];
    c.execute(
        "UPDATE loopguard_control SET version = $1, position = $2, reason = $3, set_by = $4, set_at = $5, key = $6, sig = $7 WHERE scope = '*'",
        &[
            &old["version"].as_i64().unwrap(),
            &old["position"].as_str().unwrap(),
            &old["reason"].as_str().unwrap(),
            &old["set_by"].as_str().unwrap(),
            &old["set_at"].as_i64().unwrap(),
            &old["key"].as_str().unwrap(),
            &old["sig"].as_str().unwrap(),
        ],
    )
    .unwrap();
    c.batch_execute("NOTIFY loopguard_control, 'f'").unwrap();
    std::thread::sleep(Duration::from_secs(3));
    for h in &hosts {
        assert_eq!(h.ls("d").0, "deny", "a replayed release lifted the stop");
    }
    // The fleet never touches the local breaker: a local trip outlives a fleet release.
    let (code, _, err) = hosts[0].sb.run(&["breaker", "trip", "--to", "stop", "--reason", "local"], "");
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = op.run(&["fleet", "set", "full-auto", "--group", "ci", "--reason", "ok"], "");
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = op.run(&["fleet", "set", "full-auto", "--reason", "all clear"], "");
    assert_eq!(code, 0, "{err}");
    hosts[1].wait_for("the release", "allow");
    hosts[2].wait_for("the release", "allow");
    assert_eq!(hosts[0].ls("e").0, "deny", "the local stop holds");
    let (v, why) = hosts[1].write("w1");
    assert_eq!(v, "allow", "{why}\n{}", hosts[1].sb.run(&["breaker", "status"], "").1);
    // A host the fleet cannot reach (its agent gone, its mirror no longer refreshed) does not
    // go on writing: a stop sent meanwhile would never reach it.
    hosts[1].stop_agent();
    let mirror = hosts[1].sb.state.join("fleet/control.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&mirror).unwrap()).unwrap();
    m["checked_at"] = json!(m["checked_at"].as_i64().unwrap() - 600);
    std::fs::write(&mirror, m.to_string()).unwrap();
    let (verdict, why) = hosts[1].write("w2");
    assert_eq!(verdict, "deny", "{why}");
    assert!(why.contains("fleet agent last reported"), "{why}");
    assert_eq!(hosts[1].ls("r").0, "allow", "reading goes on");
}

#[test]
fn shipped_logs_verify_and_tampering_gaps_and_silence_are_caught() {
    let db = Db::new();
    let (op, key) = operator(&db);
    migrate(&op);
    let hosts: Vec<Host> = ["h1", "h2", "h3"].iter().map(|h| Host::new(&db, h, "dev", &key)).collect();
    for (i, h) in hosts.iter().enumerate() {
        let (code, _, err) = h.sb.run(&["fleet", "agent", "--once"], "");
        assert_eq!(code, 0, "{err}");
        for n in 0..=i {
            assert_eq!(h.ls(&format!("c{n}")).0, "allow");
        }
        // Twice: a retry ships nothing twice.
        for _ in 0..2 {
            let (code, _, err) = h.sb.run(&["fleet", "agent", "--once"], "");
            assert_eq!(code, 0, "{err}");
        }
    }
    let mut c = db.client();
    for (i, h) in hosts.iter().enumerate() {
        let local = std::fs::read_dir(h.sb.state.join("audit"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap().lines().count() as i64)
            .sum::<i64>();
        let shipped: i64 = c
            .query_one("SELECT count(*) FROM loopguard_audit WHERE host = $1", &[&format!("h{}", i + 1)])
            .unwrap()
            .get(0);
        assert_eq!(shipped, local, "host h{}: every line once", i + 1);
    }
    let (code, out, err) = op.run(&["audit", "verify", "--fleet"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("ok: ").count(), 3, "{out}");
    // An event changed in the database: caught, at its line.
    c.batch_execute(
        "UPDATE loopguard_audit SET line = replace(line, '\"allow\"', '\"deny\"') WHERE host = 'h2' AND seq = 3",
    )
    .unwrap();
    // A line removed from another host's chain: caught as missing.
    c.batch_execute("DELETE FROM loopguard_audit WHERE host = 'h3' AND seq = 2").unwrap();
    // A host fell silent, and the tail of its chain was cut in the database.
    c.batch_execute("UPDATE loopguard_hosts SET last_seen = last_seen - 3600 WHERE host = 'h1'").unwrap();
    c.batch_execute("DELETE FROM loopguard_audit WHERE host = 'h1' AND seq = (SELECT max(seq) FROM loopguard_audit WHERE host = 'h1')")
        .unwrap();
    // Lines that no agent shipped, under a host that never reported.
    c.batch_execute(
        "INSERT INTO loopguard_audit SELECT fleet, 'ghost', log, seq, hash, prev_hash, line, received_at FROM loopguard_audit WHERE host = 'h2'",
    )
    .unwrap();
    let (code, out, _) = op.run(&["audit", "verify", "--fleet"], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("TAMPERED: h2/") && out.contains("line 3 was changed"), "{out}");
    assert!(out.contains("TAMPERED: h3/") && out.contains("line 2 is missing"), "{out}");
    assert!(out.contains("SILENT: h1"), "{out}");
    assert!(out.contains("TAMPERED: h1/") && out.contains("but the host shipped up to line"), "{out}");
    assert!(out.contains("TAMPERED: ghost/"), "{out}");
    // The agent on a host may not read the user policy that holds the fleet's credential.
    let policy = hosts[1].sb.home.join(".config/loopguard/policy.toml");
    let (verdict, why) = hosts[1].bash("cat", &format!("cat {}", policy.display()));
    assert_eq!(verdict, "deny", "{why}");
    // A host whose local log was cut back (evidence removed after it was shipped) stops
    // shipping it and says so; the fleet keeps the lines it already had.
    let h = &hosts[0];
    let log = std::fs::read_dir(h.sb.state.join("audit"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.lines().next().unwrap().to_string() + "\n").unwrap();
    let (code, _, err) = h.sb.run(&["fleet", "agent", "--once"], "");
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = op.run(&["audit", "verify", "--fleet", "--json"], "");
    let v: Value = serde_json::from_str(&out).unwrap();
    let h1 = v["chains"].as_array().unwrap().iter().find(|c| c["host"] == "h1").unwrap();
    assert!(h1["problem"].as_str().unwrap_or("").contains("stopped shipping"), "{h1}");
    // A database writer erases the problem the host recorded, and makes a whole log vanish:
    // the hosts' signed manifests still say.
    c.batch_execute("UPDATE loopguard_ship SET problem = NULL WHERE host = 'h1'").unwrap();
    c.batch_execute("DELETE FROM loopguard_audit WHERE host = 'h3'; DELETE FROM loopguard_ship WHERE host = 'h3'")
        .unwrap();
    let (code, out, _) = op.run(&["audit", "verify", "--fleet"], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the host recorded: "), "{out}");
    assert!(out.contains("TAMPERED: h3/") && out.contains("the fleet holds none"), "{out}");
}

/// One model turn in a session's transcript: `claude-sonnet-4` at $3 / $15 per million tokens,
/// 10,000 tokens in and `out` out. Returns its cost in micro-dollars.
fn turn(transcript: &std::path::Path, id: &str, out: u64) -> i64 {
    use std::io::Write;
    let line = json!({"type": "assistant", "message": {"id": id, "model": "claude-sonnet-4", "role": "assistant",
        "content": [{"type": "text", "text": "…"}],
        "usage": {"input_tokens": 10_000, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}});
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(transcript).unwrap();
    writeln!(f, "{line}").unwrap();
    30_000 + out as i64 * 15
}

/// A call in one of a host's sessions.
fn read_in(h: &Host, session: &str, id: &str) -> (String, String) {
    let (verdict, why, _) = read_in_raw(h, session, id);
    (verdict, why)
}

/// The same, with the hook's whole answer.
fn read_in_raw(h: &Host, session: &str, id: &str) -> (String, String, String) {
    let ev = json!({
        "session_id": session, "transcript_path": h.sb.root.path().join(format!("{session}.jsonl")), "cwd": h.sb.ws,
        "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": "Read", "tool_input": { "file_path": h.sb.ws.join("README.md") }, "tool_use_id": id
    });
    let out = h.sb.hook_with(DEADLINE, ev.to_string().as_bytes());
    let (verdict, why) = decision(&out).unwrap_or(("allow".into(), String::new()));
    (verdict, why, String::from_utf8_lossy(&out.stdout).to_string())
}

/// The session's agent stopped (its last turns' usage is read then).
fn stop_in(h: &Host, session: &str) {
    let ev = json!({
        "session_id": session, "transcript_path": h.sb.root.path().join(format!("{session}.jsonl")), "cwd": h.sb.ws,
        "hook_event_name": "Stop", "stop_hook_active": false
    });
    let out = h.sb.hook_with(DEADLINE, ev.to_string().as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// What the fleet reserved for a host, as its mirror says (micro-dollars), for `*`.
fn reserved(h: &Host) -> i64 {
    let Ok(text) = std::fs::read(h.sb.state.join("fleet/control.json")) else { return 0 };
    let v: Value = serde_json::from_slice(&text).unwrap();
    v["budgets"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|b| b["scope"] == "*")
        .map_or(0, |b| b["granted"]["usd"].as_i64().unwrap())
}

/// How one simulated agent session spends: a turn (its cost), then a tool call; a refusal that
/// says the budget is spent ends it after the model's reaction turn; a refusal while the agent
/// reserves more is retried after that reaction turn (it costs a turn, as it would).
fn session(h: &Host, session: &str, seed: usize, pace: Duration) -> (i64, usize) {
    let transcript = h.sb.root.path().join(format!("{session}.jsonl"));
    let (mut spent, mut calls) = (0, 0);
    for n in 0..400 {
        spent += turn(&transcript, &format!("{session}-m{n}"), 2000 * ((seed + n) % 3) as u64);
        let (verdict, why, raw) = read_in_raw(h, session, &format!("{session}-c{n}"));
        calls += 1;
        if verdict == "allow" {
            std::thread::sleep(pace);
            continue;
        }
        assert!(why.contains("fleet budget") || why.contains("reservation"), "{session}: {verdict}: {why}");
        // Only a refusal no waiting can lift ends the session (Claude Code: `continue: false`).
        let ends = serde_json::from_str::<Value>(raw.trim()).is_ok_and(|v| v["continue"] == false);
        assert_eq!(ends, why.contains("budget is spent"), "{raw}");
        if why.contains("budget is spent") {
            spent += turn(&transcript, &format!("{session}-last"), 0);
            stop_in(h, session);
            return (spent, calls);
        }
        std::thread::sleep(pace);
    }
    panic!("{session} never ran out of budget");
}

fn budget_hosts(db: &Db, key: &str, extra: &str) -> Vec<Host> {
    ["h1", "h2", "h3"]
        .iter()
        .map(|name| {
            let h = Host::new(db, name, "dev", key);
            h.sb.user_policy(&format!(
                "version = 1\n[breaker]\nprofile = \"loop\"\n[fleet]\ndatabase_url = \"{}\"\nname = \"f\"\nhost = \"{name}\"\ngroup = \"dev\"\nheartbeat = \"1s\"\noperator_keys = [\"{key}\"]\n{extra}",
                db.url()
            ));
            h
        })
        .collect()
}

fn ledger(db: &Db) -> (i64, i64, i64, i64) {
    let r = db
        .client()
        .query_one(
            "SELECT b.usd_granted, b.usd_over, (SELECT coalesce(sum(usd_spent), 0)::bigint FROM loopguard_grant g WHERE g.scope = b.scope AND g.day = b.day),
                    (SELECT coalesce(sum(usd_granted), 0)::bigint FROM loopguard_grant g WHERE g.scope = b.scope AND g.day = b.day)
             FROM loopguard_budget b WHERE b.scope = '*'",
            &[],
        )
        .unwrap();
    (r.get(0), r.get(1), r.get(2), r.get(3))
}

fn wait_for_reservation(h: &Host) {
    let t = Instant::now();
    while reserved(h) == 0 {
        assert!(t.elapsed() < Duration::from_secs(30), "no reservation after 30 s; the agent said:\n{}", h.agent_log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_until(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(secs), "{what}: not after {secs} s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn twelve_sessions_on_three_hosts_never_overspend_a_shared_budget_and_the_ledger_reconciles() {
    let db = Db::new();
    let (op, key) = operator(&db);
    migrate(&op);
    let (code, out, err) = op.run(&["fleet", "budget", "set", "*", "--usd", "10"], "");
    assert_eq!(code, 0, "{out}{err}");
    let mut hosts = budget_hosts(&db, &key, "");
    for h in &mut hosts {
        h.start_agent();
    }
    for h in &hosts {
        wait_for_reservation(h);
    }
    // 3 hosts × 4 sessions at once, each until the budget is spent.
    let results: Vec<(i64, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = hosts
            .iter()
            .enumerate()
            .flat_map(|(i, h)| (0..4).map(move |j| (i, j, h)))
            .map(|(i, j, h)| s.spawn(move || session(h, &format!("s{j}"), i * 4 + j, Duration::from_millis(300))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let spent: i64 = results.iter().map(|r| r.0).sum();
    eprintln!("sessions (spent µ$, calls): {results:?}; total {spent}");
    assert!(spent <= 10_000_000, "12 sessions spent {spent} micro-dollars against $10");
    assert!(spent >= 8_000_000, "the sessions ran into the limit: {spent} spent of $10");
    // The agents settle what the hooks counted: to the micro-dollar, no overshoot.
    wait_until("the ledger settles", 30, || ledger(&db).2 == spent);
    let (granted, over, settled, grants) = ledger(&db);
    assert_eq!((settled, over), (spent, 0));
    assert!(granted <= 10_000_000 && granted == grants, "granted {granted}, sum of grants {grants}");
    let (code, out, err) = op.run(&["fleet", "budget", "status"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("reconciles") && out.contains("limit $10.00"), "{out}");
    // The database itself refuses an overspending reservation, whatever a writer tries.
    let e = db.client().execute("UPDATE loopguard_budget SET usd_granted = usd_limit + 1 WHERE scope = '*'", &[]);
    assert!(e.is_err(), "the CHECK constraint holds");
}

/// A PostgreSQL cluster of one test's own (so it can be killed), on a Unix socket in `dir`
/// (and whatever else `options` add).
struct Cluster {
    dir: tempfile::TempDir,
    bin: std::path::PathBuf,
    options: String,
    /// The port (it names the Unix socket too).
    port: u16,
}

impl Cluster {
    fn new() -> Cluster {
        let bin = std::path::PathBuf::from(
            std::env::var("LOOPGUARD_TEST_PGBIN")
                .expect("LOOPGUARD_TEST_PGBIN names PostgreSQL's binaries (scripts/test.sh)"),
        );
        let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
        let dir = tempfile::Builder::new().prefix("pg-").tempdir_in(base).unwrap();
        if Self::root() {
            // initdb refuses root: the cluster runs as Debian's `postgres` user.
            assert!(std::process::Command::new("chown").arg("postgres").arg(dir.path()).status().unwrap().success());
        }
        let c = Cluster { dir, bin, options: String::new(), port: 5432 };
        let data = c.dir.path().join("data");
        assert!(
            c.pg("initdb")
                .args(["-U", "postgres", "-A", "trust", "-D"])
                .arg(&data)
                .stdout(Stdio::null())
                .status()
                .unwrap()
                .success()
        );
        c
    }

    fn started() -> Cluster {
        let c = Cluster::new();
        c.start();
        c
    }

    fn root() -> bool {
        String::from_utf8_lossy(&std::process::Command::new("id").arg("-u").output().unwrap().stdout).trim() == "0"
    }

    fn pg(&self, tool: &str) -> std::process::Command {
        let exe = self.bin.join(tool);
        if Self::root() {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            std::process::Command::new(exe)
        }
    }

    fn start(&self) {
        let sock = self.dir.path().display().to_string();
        let ok = self
            .pg("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("-l")
            .arg(self.dir.path().join("log"))
            .args(["-w", "-o", &format!("-c listen_addresses='' -k {sock} -c fsync=off {}", self.options), "start"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// As a crash: no shutdown checkpoint, connections cut.
    fn kill(&self) {
        let ok = self
            .pg("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success());
    }

    fn db(&self) -> Db {
        let base = format!("host={} port={} user=postgres", self.dir.path().display(), self.port);
        let mut admin = postgres::Client::connect(&format!("{base} dbname=postgres"), postgres::NoTls).unwrap();
        admin.batch_execute("CREATE DATABASE lg").unwrap();
        Db { name: "lg".into(), base }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ =
            self.pg("pg_ctl").arg("-D").arg(self.dir.path().join("data")).args(["-m", "immediate", "stop"]).output();
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// When the host's agent last wrote its mirror.
fn mirror_checked(h: &Host) -> i64 {
    let Ok(text) = std::fs::read(h.sb.state.join("fleet/control.json")) else { return 0 };
    serde_json::from_slice::<Value>(&text).unwrap()["checked_at"].as_i64().unwrap_or(0)
}

fn local_lines(h: &Host) -> i64 {
    std::fs::read_dir(h.sb.state.join("audit"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap().lines().count() as i64)
        .sum()
}

#[test]
fn with_the_database_killed_hosts_spend_only_their_reservations_then_catch_up_losing_nothing() {
    let cluster = Cluster::started();
    let db = cluster.db();
    let (op, key) = operator(&db);
    migrate(&op);
    let (code, out, err) = op.run(&["fleet", "budget", "set", "*", "--usd", "10"], "");
    assert_eq!(code, 0, "{out}{err}");
    let mut hosts = budget_hosts(&db, &key, "reservation_usd = 0.5\n");
    for h in &mut hosts {
        h.start_agent();
    }
    for h in &hosts {
        wait_for_reservation(h);
    }
    let mut spent = 0;
    let mut n = 0;
    let step = |h: &Host, spent: &mut i64, n: &mut usize| -> (String, String) {
        *n += 1;
        *spent += turn(&h.sb.root.path().join("s.jsonl"), &format!("m{n}"), 2000);
        read_in(h, "s", &format!("c{n}"))
    };
    for h in &hosts {
        for _ in 0..2 {
            assert_eq!(step(h, &mut spent, &mut n).0, "allow");
        }
    }
    // Down, mid-run. Every host goes on within what it holds, then refuses spend.
    cluster.kill();
    for h in &hosts {
        let held = reserved(h);
        let before = spent;
        let mut allowed = 0;
        loop {
            let (verdict, why) = step(h, &mut spent, &mut n);
            if verdict != "allow" {
                assert!(why.contains("reservation") && why.contains("is used"), "{why}");
                break;
            }
            allowed += 1;
            assert!(allowed < 50, "a host without its database spends on and on");
        }
        assert!(allowed >= 1, "a host goes on within its reservation");
        // Its spend while the database was away, the reaction turn included, stays within it.
        let host_total = spent - before;
        assert!(host_total <= held, "spent {host_total} with {held} held");
        // And stays refused: the agent cannot reserve more while the database is away.
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(step(h, &mut spent, &mut n).0, "deny");
    }
    let lines_down: Vec<i64> = hosts.iter().map(local_lines).collect();
    // Back: the agents reconnect, settle, reserve again; the calls go on.
    let restarted = now_secs();
    cluster.start();
    for h in &hosts {
        // The agent reports again (each retry before that would cost a turn), then calls go on.
        wait_until(&format!("the agent reconnects: {}", h.agent_log()), 60, || mirror_checked(h) > restarted);
        let mut tries = 0;
        loop {
            let (verdict, why) = step(h, &mut spent, &mut n);
            if verdict == "allow" {
                break;
            }
            tries += 1;
            assert!(tries < 10, "still refused after the agent reported: {why}\n{}", h.agent_log());
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    for h in &hosts {
        stop_in(h, "s");
    }
    wait_until("the ledger settles", 30, || ledger(&db).2 == spent);
    let (granted, over, settled, grants) = ledger(&db);
    assert_eq!((settled, over), (spent, 0));
    assert_eq!(granted, grants);
    // Every audit event written while the database was away arrived, once.
    let mut c = db.client();
    for (i, h) in hosts.iter().enumerate() {
        assert!(local_lines(h) > lines_down[i]);
        let name = format!("h{}", i + 1);
        wait_until("shipping catches up", 30, || {
            let shipped: i64 =
                c.query_one("SELECT count(*) FROM loopguard_audit WHERE host = $1", &[&name]).unwrap().get(0);
            shipped == local_lines(h)
        });
    }
    let dups: i64 = c
        .query_one(
            "SELECT count(*) FROM (SELECT host, log, hash FROM loopguard_audit GROUP BY 1, 2, 3 HAVING count(*) > 1) d",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(dups, 0);
    let (code, out, err) = op.run(&["audit", "verify", "--fleet"], "");
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_chain_rolled_back_with_its_cursor_or_re_signed_under_a_new_key_is_caught() {
    let db = Db::new();
    let (op, key) = operator(&db);
    migrate(&op);
    let h = Host::new(&db, "h1", "dev", &key);
    let ship = |h: &Host| {
        let (code, _, err) = h.sb.run(&["fleet", "agent", "--once"], "");
        assert_eq!(code, 0, "{err}");
    };
    ship(&h);
    for n in 0..3 {
        assert_eq!(h.ls(&format!("a{n}")).0, "allow");
    }
    ship(&h);
    let mut c = db.client();
    let old = c.query_one("SELECT log, seq, hash, key, sig FROM loopguard_ship WHERE host = 'h1'", &[]).unwrap();
    let (log, old_seq): (String, i64) = (old.get(0), old.get(1));
    for n in 0..3 {
        h.ls(&format!("b{n}"));
    }
    let (code, _, err) = h.sb.run(&["audit", "checkpoint"], "");
    assert_eq!(code, 0, "{err}");
    ship(&h);
    let cps: i64 = c.query_one("SELECT count(*) FROM loopguard_checkpoint WHERE host = 'h1'", &[]).unwrap().get(0);
    assert!(cps >= 1, "the signed checkpoints are shipped");
    let (code, out, err) = op.run(&["audit", "verify", "--fleet"], "");
    assert_eq!(code, 0, "{out}{err}");
    // A database writer rolls the chain back to an earlier end and puts that end's (genuinely
    // signed) cursor back: the cursor verifies, the signed checkpoint covering more does not.
    c.execute("DELETE FROM loopguard_audit WHERE host = 'h1' AND seq > $1", &[&old_seq]).unwrap();
    c.execute(
        "UPDATE loopguard_ship SET seq = $1, hash = $2, key = $3, sig = $4 WHERE host = 'h1'",
        &[&old_seq, &old.get::<_, String>(2), &old.get::<_, String>(3), &old.get::<_, String>(4)],
    )
    .unwrap();
    let (code, out, _) = op.run(&["audit", "verify", "--fleet"], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("below signed checkpoint"), "{out}");
    // The checkpoints deleted too: the host's newest signed manifest still names the end.
    let saved: Vec<(i64, String)> = c
        .query("SELECT n, line FROM loopguard_checkpoint WHERE host = 'h1'", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    c.execute("DELETE FROM loopguard_checkpoint WHERE host = 'h1'", &[]).unwrap();
    let (code, out, _) = op.run(&["audit", "verify", "--fleet"], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("signed manifest says"), "{out}");
    for (n, line) in &saved {
        c.execute(
            "INSERT INTO loopguard_checkpoint SELECT fleet, host, log, $1, $2 FROM loopguard_ship WHERE host = 'h1'",
            &[n, line],
        )
        .unwrap();
    }
    // The same with a cursor of the writer's own making: not signed by the host's key.
    c.execute("UPDATE loopguard_ship SET sig = '' WHERE host = 'h1'", &[]).unwrap();
    let (_, out, _) = op.run(&["audit", "verify", "--fleet"], "");
    assert!(out.contains("not signed by the host's key"), "{out}");
    // A writer who also replaces the host's key, re-signs the cursor and drops the checkpoints
    // passes the database's own word — but not the keys the operators pinned.
    let forger = loopguard_audit::SigningKey::from_bytes(&[9u8; 32]);
    let forged_key = loopguard_audit::hex(forger.verifying_key().as_bytes());
    let hash: String = old.get(2);
    let sig =
        loopguard_audit::sign_bytes(&forger, &loopguard::fleet::ship::cursor_bytes("f", "h1", &log, old_seq, &hash));
    c.execute("UPDATE loopguard_ship SET key = $1, sig = $2 WHERE host = 'h1'", &[&forged_key, &sig]).unwrap();
    c.execute("UPDATE loopguard_hosts SET audit_key = $1 WHERE host = 'h1'", &[&forged_key]).unwrap();
    c.execute("DELETE FROM loopguard_checkpoint WHERE host = 'h1'", &[]).unwrap();
    let now: i64 = c.query_one("SELECT extract(epoch from now())::bigint", &[]).unwrap().get(0);
    let manifest = loopguard::fleet::ship::Manifest {
        v: loopguard::fleet::ship::MANIFEST_V1.into(),
        fleet: "f".into(),
        host: "h1".into(),
        at: now,
        logs: vec![loopguard::fleet::ship::ManifestLog {
            log: log.clone(),
            seq: old_seq,
            hash: hash.clone(),
            checkpoints: 0,
            problem: None,
        }],
    };
    let body = serde_json::to_string(&manifest).unwrap();
    let msig = loopguard_audit::sign_bytes(&forger, body.as_bytes());
    c.execute(
        "UPDATE loopguard_manifest SET body = $1, key = $2, sig = $3, at = $4 WHERE host = 'h1'",
        &[&body, &forged_key, &msig, &now],
    )
    .unwrap();
    let (code, out, _) = op.run(&["audit", "verify", "--fleet"], "");
    assert_eq!(code, 0, "without pinned keys the database's word is all there is: {out}");
    let real = std::fs::read_to_string(h.sb.state.join("keys/audit.pub")).unwrap();
    let pins = op.root.path().join("host-keys");
    std::fs::write(&pins, format!("# host key\nh1 {}\n", real.trim())).unwrap();
    let (code, out, _) = op.run(&["audit", "verify", "--fleet", "--host-keys", pins.to_str().unwrap()], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not signed by the host's key"), "{out}");
    std::fs::write(&pins, "h1 not-a-key\n").unwrap();
    let (code, _, err) = op.run(&["audit", "verify", "--fleet", "--host-keys", pins.to_str().unwrap()], "");
    assert!(code != 0 && err.contains("line 1"), "{err}");
}

#[test]
fn fleet_install_writes_a_user_unit_for_the_agent_once_and_keeps_an_edited_one() {
    let db = Db::new();
    let (op, key) = operator(&db);
    let h = Host::new(&db, "h1", "dev", &key);
    drop(op);
    let (code, out, err) = h.sb.run(&["fleet", "install"], "");
    assert_eq!(code, 0, "{out}{err}");
    let unit = h.sb.home.join(".config/systemd/user/loopguard-fleet-agent.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    assert!(text.contains(&format!("Environment=\"LOOPGUARD_HOME={}\"", h.sb.state.display())), "{text}");
    assert!(text.contains(" fleet agent\n") && text.contains("Restart=always"), "{text}");
    assert!(out.contains("systemctl --user"), "{out}");
    // systemd's own parser, where the machine has it (no user manager runs here: system mode).
    if let Ok(v) = std::process::Command::new("systemd-analyze").arg("verify").arg(&unit).output() {
        assert!(v.status.success() && v.stderr.is_empty(), "{}", String::from_utf8_lossy(&v.stderr));
    }
    let (code, out, _) = h.sb.run(&["fleet", "install"], "");
    assert!(code == 0 && out.contains("already up to date"), "{out}");
    std::fs::write(&unit, text.replace("RestartSec=2", "RestartSec=600")).unwrap();
    let (code, _, err) = h.sb.run(&["fleet", "install"], "");
    assert!(code != 0 && err.contains("--force"), "{err}");
    assert!(std::fs::read_to_string(&unit).unwrap().contains("RestartSec=600"), "an edited unit is kept");
    let (code, _, err) = h.sb.run(&["fleet", "install", "--force"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&unit).unwrap(), text);
    // An agent may not install or change it: `fleet` is for humans.
    let (verdict, why) = h.bash("i", "loopguard fleet install --force");
    assert_eq!(verdict, "deny", "{why}");
}

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("openssl").current_dir(dir).args(args).output().unwrap();
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn over_tcp_the_agent_talks_tls_verifies_the_server_and_never_downgrades() {
    let mut cluster = Cluster::new();
    let dir = cluster.dir.path().to_path_buf();
    // A private CA and a server certificate for `localhost`.
    openssl(
        &dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=loopguard test CA",
        ],
    );
    openssl(
        &dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost\n").unwrap();
    openssl(
        &dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    );
    if Cluster::root() {
        assert!(std::process::Command::new("chown").args(["-R", "postgres"]).arg(&dir).status().unwrap().success());
    }
    std::fs::set_permissions(dir.join("server.key"), std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    // Only TLS over TCP; the Unix socket stays open for the test's own administration.
    std::fs::write(dir.join("data/pg_hba.conf"), "local all all trust\nhostssl all all 127.0.0.1/32 trust\n").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    cluster.port = port;
    cluster.options = format!(
        "-c listen_addresses=127.0.0.1 -c port={port} -c ssl=on -c ssl_cert_file={0}/server.crt -c ssl_key_file={0}/server.key",
        dir.display()
    );
    cluster.start();
    let sock = cluster.db();
    let host = |url: &str, extra: &str| {
        let sb = Sandbox::new();
        sb.user_policy(&format!("version = 1\n[fleet]\ndatabase_url = \"{url}\"\nname = \"f\"\nhost = \"h\"\n{extra}"));
        sb
    };
    let tcp = format!("host=localhost port={port} user=postgres dbname={}", sock.name);
    let ca = format!("ca_file = \"{}\"\n", dir.join("ca.pem").display());
    // The private CA named: TLS, verified, works.
    let (code, out, err) = host(&tcp, &ca).run(&["fleet", "migrate"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("applied migration(s)"), "{out}");
    // Without it, the server's certificate is not trusted: no connection at all.
    let (code, _, err) = host(&tcp, "").run(&["fleet", "status", "--json"], "");
    assert_eq!(code, 0, "status reads only the mirror: {err}");
    let (code, _, err) = host(&tcp, "").run(&["fleet", "migrate"], "");
    assert!(code != 0 && err.to_lowercase().contains("certificate"), "{err}");
    // A certificate for another name is refused, whatever the CA.
    let by_ip = format!("host=127.0.0.1 port={port} user=postgres dbname={}", sock.name);
    let (code, _, err) = host(&by_ip, &ca).run(&["fleet", "migrate"], "");
    assert!(code != 0 && err.to_lowercase().contains("certificate"), "{err}");
    // Plain text only when the URL says so, and this server refuses it.
    let (code, _, err) = host(&format!("{tcp} sslmode=disable"), &ca).run(&["fleet", "migrate"], "");
    assert!(code != 0 && err.contains("no encryption"), "{err}");
}

#[test]
fn a_lost_local_ledger_a_changed_limit_a_taken_name_and_a_forgotten_host_keep_the_ledger_true() {
    let db = Db::new();
    let (op, key) = operator(&db);
    migrate(&op);
    // Tokens only at first; USD added later in the day.
    let (code, out, err) = op.run(&["fleet", "budget", "set", "*", "--tokens", "10000000"], "");
    assert_eq!(code, 0, "{out}{err}");
    let mut hosts = budget_hosts(&db, &key, "");
    let h = &mut hosts[0];
    let once = |h: &Host| {
        let (code, _, err) = h.sb.run(&["fleet", "agent", "--once"], "");
        assert_eq!(code, 0, "{err}");
    };
    once(h);
    let transcript = h.sb.root.path().join("s.jsonl");
    let mut spent = 0;
    for n in 0..3 {
        spent += turn(&transcript, &format!("m{n}"), 2000);
        assert_eq!(read_in(h, "s", &format!("c{n}")).0, "allow");
    }
    once(h);
    let (code, out, err) = op.run(&["fleet", "budget", "set", "*", "--tokens", "10000000", "--usd", "10"], "");
    assert_eq!(code, 0, "{out}{err}");
    once(h);
    once(h);
    let usd_spent = || -> i64 {
        db.client()
            .query_one("SELECT usd_spent FROM loopguard_grant WHERE host = 'h1' AND scope = '*'", &[])
            .unwrap()
            .get(0)
    };
    assert_eq!(usd_spent(), spent, "a limit added mid-day settles on");
    // The local day file is lost: its counts start again from zero in a new epoch, and the
    // fleet adds them to what it had.
    std::fs::remove_file(h.sb.state.join("breaker/days.state")).unwrap();
    for n in 3..6 {
        spent += turn(&transcript, &format!("m{n}"), 2000);
        let (verdict, why) = read_in(h, "s", &format!("c{n}"));
        // The first call after the loss has no reservation for the new epoch until the agent
        // settles; the test's agent runs once per step.
        if verdict != "allow" {
            assert!(why.contains("fleet budget"), "{why}");
        }
        once(h);
    }
    assert_eq!(usd_spent(), spent, "nothing counted twice, nothing lost");
    let (code, out, err) = op.run(&["fleet", "budget", "status"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("reconciles"), "{out}");
    // Another state home under the same name is refused: two machines would share a grant.
    let twin = Host::new(&db, "h1", "dev", &key);
    let (code, _, err) = twin.sb.run(&["fleet", "agent", "--once"], "");
    assert!(code != 0 && err.contains("already used"), "{err}");
    // The host is gone for good: an operator gives its unused reservation back.
    let before: i64 =
        db.client().query_one("SELECT usd_granted FROM loopguard_budget WHERE scope = '*'", &[]).unwrap().get(0);
    let (code, out, err) = op.run(&["fleet", "forget", "h1"], "");
    assert_eq!(code, 0, "{out}{err}");
    let after: i64 =
        db.client().query_one("SELECT usd_granted FROM loopguard_budget WHERE scope = '*'", &[]).unwrap().get(0);
    assert_eq!(after, spent, "only the spent part stays granted (was {before})");
    let (code, _, err) = twin.sb.run(&["fleet", "agent", "--once"], "");
    assert_eq!(code, 0, "the name is free again: {err}");
}

/// The `*` budget's limit in a host's mirror (micro-dollars), if it lists one.
fn mirror_limit(h: &Host) -> Option<i64> {
    let text = std::fs::read(h.sb.state.join("fleet/control.json")).ok()?;
    let v: Value = serde_json::from_slice(&text).unwrap();
    v["budgets"].as_array()?.iter().find(|b| b["scope"] == "*")?["usd_limit"].as_i64()
}

#[test]
fn a_budget_raised_or_removed_in_the_database_without_a_pinned_signature_changes_nothing() {
    let db = Db::new();
    let (op, key) = operator(&db);
    migrate(&op);
    let (code, out, err) = op.run(&["fleet", "budget", "set", "*", "--usd", "1"], "");
    assert_eq!(code, 0, "{out}{err}");
    let hosts = budget_hosts(&db, &key, "");
    let h = &hosts[0];
    let once = |h: &Host| {
        let (code, _, err) = h.sb.run(&["fleet", "agent", "--once"], "");
        assert_eq!(code, 0, "{err}");
    };
    once(h);
    assert_eq!(mirror_limit(h), Some(1_000_000));
    // A database writer raises the budget (definition and today's row) and then deletes it.
    let mut c = db.client();
    c.batch_execute(
        "UPDATE loopguard_budget_def SET usd_limit = 100000000, version = version + 1000;
         UPDATE loopguard_budget SET usd_limit = 100000000",
    )
    .unwrap();
    once(h);
    assert_eq!(mirror_limit(h), Some(1_000_000), "an unsigned raise is refused");
    let (_, out, _) = h.sb.run(&["fleet", "status"], "");
    assert!(out.contains("raises or removes a budget and is not signed"), "{out}");
    c.batch_execute("DELETE FROM loopguard_budget_def").unwrap();
    once(h);
    assert_eq!(mirror_limit(h), Some(1_000_000), "a deleted definition still binds");
    // However much the database grants, the host holds at most the budget it accepted.
    let honest: i64 = c.query_one("SELECT usd_granted FROM loopguard_grant", &[]).unwrap().get(0);
    c.batch_execute("UPDATE loopguard_grant SET usd_granted = 50000000").unwrap();
    once(h);
    let held = reserved(h);
    assert!(held <= 1_000_000, "held {held}");
    c.execute("UPDATE loopguard_grant SET usd_granted = $1", &[&honest]).unwrap();
    // The operator's signed raise is taken.
    let (code, out, err) = op.run(&["fleet", "budget", "set", "*", "--usd", "5"], "");
    assert_eq!(code, 0, "{out}{err}");
    once(h);
    assert_eq!(mirror_limit(h), Some(5_000_000));
    // And a signed removal lifts it.
    let (code, out, err) = op.run(&["fleet", "budget", "remove", "*"], "");
    assert_eq!(code, 0, "{out}{err}");
    once(h);
    assert_eq!(mirror_limit(h), None);
}

#[test]
fn the_dashboard_shows_the_fleets_hosts_positions_budgets_and_shipping() {
    use std::io::BufRead;
    let db = Db::new();
    let (op, key) = operator(&db);
    migrate(&op);
    let (code, out, err) = op.run(&["fleet", "budget", "set", "*", "--usd", "10"], "");
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = op.run(&["fleet", "stop", "--group", "ci", "--reason", "maintenance"], "");
    assert_eq!(code, 0, "{err}");
    // The operator's dashboard names an operator's words as such when it pins their key.
    op.user_policy(&format!(
        "version = 1\n[fleet]\ndatabase_url = \"{}\"\nname = \"f\"\nhost = \"operator\"\noperator_keys = [\"{key}\"]\n",
        db.url()
    ));
    let hosts = budget_hosts(&db, &key, "");
    for h in &hosts {
        let (code, _, err) = h.sb.run(&["fleet", "agent", "--once"], "");
        assert_eq!(code, 0, "{err}");
    }
    let h = &hosts[0];
    let spent = turn(&h.sb.root.path().join("s.jsonl"), "m1", 2000);
    assert_eq!(read_in(h, "s", "c1").0, "allow");
    let (code, _, err) = h.sb.run(&["fleet", "agent", "--once"], "");
    assert_eq!(code, 0, "{err}");
    let mut child = op.command(&["dashboard"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines.next().unwrap().unwrap().split_whitespace().last().unwrap().to_string();
    std::thread::spawn(move || for _ in lines {});
    let base = url.split("/#").next().unwrap().to_string();
    let token = url.split("#token=").nth(1).unwrap().to_string();
    let a: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut r = a
        .post(&format!("{base}/api/login"))
        .header("content-type", "application/json")
        .send(json!({ "token": token }).to_string())
        .unwrap();
    let session = serde_json::from_str::<Value>(&r.body_mut().read_to_string().unwrap()).unwrap()["session"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(a.get(&format!("{base}/api/fleet")).call().unwrap().status(), 401, "no session, no fleet");
    let mut r =
        a.get(&format!("{base}/api/fleet")).header("Authorization", &format!("Bearer {session}")).call().unwrap();
    let body = r.body_mut().read_to_string().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let names: Vec<&str> = v["hosts"].as_array().unwrap().iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(names, ["h1", "h2", "h3"], "{v}");
    let stop = v["positions"].as_array().unwrap().iter().find(|p| p["scope"] == "group:ci").unwrap();
    assert_eq!((stop["position"].as_str(), stop["signed"].as_bool()), (Some("stopped"), Some(true)), "{v}");
    let b = &v["budgets"][0];
    assert_eq!((b["scope"].as_str(), b["usd_limit"].as_i64()), (Some("*"), Some(10_000_000)), "{v}");
    assert_eq!(b["spent"]["usd"].as_i64(), Some(spent), "{v}");
    assert_eq!(b["reconciles"].as_bool(), Some(true), "{v}");
    assert_eq!(v["shipping"].as_array().unwrap().len(), 3, "{v}");
}
