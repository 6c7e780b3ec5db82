//! The absolute denylist end to end through the hook binary: deny, the denylist breaker stops
//! the run (HOLD = STOPPED waiting for a human), the escalation in STATE.md and loop-run-log.md,
//! every later call denied as paused, and only an operator's reset lets the run go on.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::{Sandbox, decision};
use serde_json::json;

const PASS: &str = "correct horse battery staple";

#[test]
fn touching_a_denylisted_path_stops_the_run_until_an_operator_resets_it() {
    let sb = Sandbox::new();
    sb.write("STATE.md", "# STATE\n\n## Plan\n- ship it\n");
    let write = |f: &str| sb.pre("sess-1", "Write", json!({"file_path": sb.ws.join(f), "content": "x"}));
    assert!(decision(&write("a.txt")).is_none());

    let (v, reason) =
        decision(&sb.pre("sess-1", "Write", json!({"file_path": sb.ws.join(".env"), "content": "KEY=1"}))).unwrap();
    assert_eq!(v, "deny");
    assert!(reason.contains("[path-denylisted]"), "{reason}");
    sb.flush();

    let state = std::fs::read_to_string(sb.ws.join("STATE.md")).unwrap();
    assert!(state.contains("## Plan\n- ship it"), "{state}");
    assert!(state.contains("## ⚠️ Blockers & Escalations"), "{state}");
    assert!(state.contains("circuit breaker stopped the run (denylist)"), "{state}");
    assert!(state.contains("- session: `sess-1`") && state.contains("pattern `.env`"), "{state}");
    assert!(state.contains("loopguard breaker reset"), "{state}");
    let log = std::fs::read_to_string(sb.ws.join("loop-run-log.md")).unwrap();
    assert!(
        log.contains("FAILURE circuit breaker stopped the run (denylist)") && log.contains("session=sess-1"),
        "{log}"
    );

    // HOLD is STOPPED: every later call, reads included, is paused.
    for input in [
        ("Edit", json!({"file_path": sb.ws.join("a.txt"), "old_string": "x", "new_string": "y"})),
        ("Read", json!({"file_path": sb.ws.join("a.txt")})),
        ("Bash", json!({"command": "git status"})),
    ] {
        let (v, reason) = decision(&sb.pre("sess-1", input.0, input.1)).unwrap();
        assert_eq!(v, "deny");
        assert!(reason.contains("[breaker-stopped] Paused, not failed"), "{reason}");
    }
    // A new session does not escape it.
    assert_eq!(decision(&write("b.txt")).unwrap().0, "deny");
    assert_eq!(decision(&sb.pre("sess-2", "Read", json!({"file_path": sb.ws.join("a.txt")}))).unwrap().0, "deny");

    // The agent cannot reset it, not even through a shell.
    let (v, reason) = decision(&sb.pre(
        "sess-1",
        "Bash",
        json!({"command": "echo 'pw' | loopguard breaker reset --operator a --reason ok --passphrase-stdin"}),
    ))
    .unwrap();
    assert_eq!(v, "deny");
    assert!(reason.contains("[breaker-stopped]"), "{reason}");

    let (code, out, _) = sb.run(&["breaker", "check"], "");
    assert_eq!((code, out.trim()), (1, "tripped"));
    // No operator yet: a reset is refused.
    let (code, _, err) =
        sb.run(&["breaker", "reset", "--operator", "ann", "--reason", "r", "--passphrase-stdin"], "x\n");
    assert_eq!(code, 2);
    assert!(err.contains("no operator exists yet"), "{err}");
    let (code, _, err) = sb.run(&["operator", "init", "--name", "ann", "--passphrase-stdin"], &format!("{PASS}\n"));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) =
        sb.run(&["breaker", "reset", "--operator", "ann", "--reason", "r", "--passphrase-stdin"], "wrong guess here\n");
    assert_eq!(code, 2);
    assert!(err.contains("passphrase is wrong"), "{err}");
    assert_eq!(decision(&write("c.txt")).unwrap().0, "deny");
    let (code, out, err) = sb.run(
        &["breaker", "reset", "--operator", "ann", "--reason", "reviewed: agent tried .env", "--passphrase-stdin"],
        &format!("{PASS}\n"),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("cleared 1 trip(s)") && out.contains("full-auto"), "{out}");
    assert!(decision(&write("c.txt")).is_none());
    let (code, _, _) = sb.run(&["breaker", "check"], "");
    assert_eq!(code, 0);

    let kinds = sb.audit_kinds();
    for k in ["breaker-tripped", "breaker-effects", "operator-added", "breaker-reset"] {
        assert!(kinds.iter().any(|x| x == k), "{k} missing from {kinds:?}");
    }
    let (code, _, _) = sb.run(&["audit", "verify"], "");
    assert_eq!(code, 0);
}

#[test]
fn sessions_touching_denylisted_paths_at_once_all_land_in_state_md() {
    let sb = std::sync::Arc::new(Sandbox::new());
    let threads: Vec<_> = ["auth/a.rs", "billing/b.rs", "payments/c.rs", ".env.prod"]
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let sb = sb.clone();
            std::thread::spawn(move || {
                sb.pre(&format!("s{i}"), "Write", json!({"file_path": sb.ws.join(f), "content": "x"}))
            })
        })
        .collect();
    for t in threads {
        let out = t.join().unwrap();
        assert_eq!(decision(&out).unwrap().0, "deny");
    }
    sb.flush();
    // The breaker serialises them: one trip (the denylist trigger trips once), one escalation,
    // one run-log line, and the breaker stopped.
    let state = std::fs::read_to_string(sb.ws.join("STATE.md")).unwrap();
    assert_eq!(state.matches("## ⚠️ Blockers & Escalations").count(), 1, "{state}");
    let tripped = sb.audit_kinds().iter().filter(|k| *k == "breaker-tripped").count();
    assert_eq!(tripped, 1);
    assert_eq!(state.matches("\n### ").count(), 1, "{state}");
    let log = std::fs::read_to_string(sb.ws.join("loop-run-log.md")).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");
    let (code, _, _) = sb.run(&["breaker", "check"], "");
    assert_eq!(code, 1);
}
