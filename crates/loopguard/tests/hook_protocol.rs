//! The exact stdout, stderr and exit code of `loopguard hook claude-code` for every recorded
//! Claude Code sample and for bad input, pinned by insta snapshots; plus the behaviour behind
//! them (audit events, sessions, deadline).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::{Sandbox, decision};
use std::time::{Duration, Instant};

const SAMPLES: &[&str] = &[
    "Bash_PreToolUse.json",
    "Bash_PostToolUse.json",
    "Bash_PostToolUseFailure.json",
    "Edit_PreToolUse.json",
    "Edit_PostToolUse.json",
    "Read_PreToolUse.json",
    "Read_PostToolUse.json",
    "WebFetch_PreToolUse.json",
    "WebFetch_PostToolUse.json",
    "Write_PreToolUse.json",
    "Write_PostToolUse.json",
    "deny_Bash_PreToolUse.json",
];

#[test]
fn every_recorded_sample() {
    for name in SAMPLES {
        let sb = Sandbox::new();
        let out = sb.hook(sb.sample(name).as_bytes());
        insta::assert_snapshot!(format!("sample_{}", name.trim_end_matches(".json")), sb.render(&out));
    }
}

/// Every event the newest Claude Code CLI sent in a captured session (tests/e2e/host-versions.env
/// names it; docs/hosts/claude-code.md says how they were captured and what changed).
#[test]
fn every_event_captured_from_the_newest_cli() {
    let dir = common::fixture("claude-code/2.1.332");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 14, "{names:?}");
    for name in names {
        let sb = Sandbox::new();
        let out = sb.hook(sb.sample(&format!("2.1.332/{name}")).as_bytes());
        insta::assert_snapshot!(format!("newest_{}", name.trim_end_matches(".json")), sb.render(&out));
    }
}

fn bad(name: &str, input: &[u8]) {
    let sb = Sandbox::new();
    let out = sb.hook(input);
    assert_eq!(out.status.code(), Some(2), "{name}: bad input must exit 2");
    let (verdict, _) = decision(&out).expect("a deny on stdout");
    assert_eq!(verdict, "deny", "{name}");
    insta::assert_snapshot!(format!("bad_{name}"), sb.render(&out));
}

fn pre(extra: &str) -> String {
    format!(
        r#"{{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/home/dev/project","permission_mode":"default","hook_event_name":"PreToolUse"{extra}}}"#
    )
}

#[test]
fn bad_inputs_are_denied_with_exit_2() {
    bad("empty", b"");
    bad("not_json", b"rm -rf /");
    bad("not_utf8", b"{\"hook_event_name\":\"PreToolUse\xff\"}");
    bad("array", b"[1,2,3]");
    bad("no_event_name", br#"{"session_id":"s","cwd":"/"}"#);
    bad("event_name_not_string", br#"{"session_id":"s","cwd":"/","hook_event_name":7}"#);
    bad("unknown_event", br#"{"session_id":"s","cwd":"/tmp","hook_event_name":"PreCompactify"}"#);
    bad("no_session", br#"{"cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}"#);
    bad(
        "relative_cwd",
        br#"{"session_id":"s","cwd":"project","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}"#,
    );
    bad("no_tool_name", pre(r#","tool_input":{"command":"ls"}"#).as_bytes());
    bad("tool_name_not_string", pre(r#","tool_name":["Bash"],"tool_input":{"command":"ls"}"#).as_bytes());
    bad("no_tool_input", pre(r#","tool_name":"Bash""#).as_bytes());
    bad("truncated_json", &pre(r#","tool_name":"Bash","tool_input":{"command":"ls"}"#).as_bytes()[..60]);
}

#[test]
fn wrongly_typed_tool_input_is_denied_by_the_gate() {
    let sb = Sandbox::new();
    let out = sb.hook(sb.localize(&pre(r#","tool_name":"Bash","tool_input":{"command":["rm","-rf","/"]}"#)).as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let (v, reason) = decision(&out).unwrap();
    assert_eq!(v, "deny");
    assert!(reason.contains("[tool-input-invalid]"), "{reason}");
}

#[test]
fn oversized_input_is_denied_unread() {
    let sb = Sandbox::new();
    let big = pre(&format!(r#","tool_name":"Bash","tool_input":{{"command":"echo {}"}}"#, "a".repeat(1024 * 1024)));
    let out = sb.hook(big.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("bad_oversized", sb.render(&out));
}

#[test]
fn invalid_hook_flags_still_deny() {
    let sb = Sandbox::new();
    let out = sb.hook_with(&["--deadline-ms", "5"], sb.sample("Bash_PreToolUse.json").as_bytes());
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("bad_flags", sb.render(&out));
}

#[test]
fn a_hook_that_cannot_finish_answers_deny_by_its_deadline() {
    let sb = Sandbox::new();
    // stdin is never closed, so reading never finishes: the deadline must answer.
    let mut child = sb
        .command(&["hook", "claude-code", "--deadline-ms", "300"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    // Generous bound: this asserts that it answers at all instead of hanging, not its speed.
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("deadline_exceeded", sb.render(&out));
}

#[test]
fn a_broken_project_policy_denies_every_call_with_the_diagnostic() {
    let sb = Sandbox::new();
    sb.write(".loopguard/policy.toml", "[gate]\nautonomy = \"pr\"\nunknown_tool = \"sometimes\"\n[rulez]\n");
    let out = sb.hook(sb.sample("Read_PreToolUse.json").as_bytes());
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("policy_invalid", sb.render(&out));
}

#[test]
fn an_unwritable_state_home_denies() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.state.parent().unwrap()).unwrap();
    std::fs::write(&sb.state, "a file, not a directory").unwrap();
    let out = sb.hook(sb.sample("Read_PreToolUse.json").as_bytes());
    let (v, reason) = decision(&out).unwrap();
    assert_eq!(v, "deny");
    assert!(reason.contains("[audit-write-failed]"), "{reason}");
}

#[test]
fn every_pre_tool_use_decision_is_audited_and_the_log_verifies() {
    let sb = Sandbox::new();
    for name in
        ["Bash_PreToolUse.json", "deny_Bash_PreToolUse.json", "Bash_PostToolUse.json", "Bash_PostToolUseFailure.json"]
    {
        sb.hook(sb.sample(name).as_bytes());
    }
    let out = sb.command(&["audit", "tail", "--json"]).output().unwrap();
    let events: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["pre-tool-use", "pre-tool-use", "post-tool-use", "post-tool-use-failure"]);
    assert_eq!(events[0]["decision"], "allow");
    assert_eq!(events[0]["tool"], "Bash");
    assert_eq!(events[0]["tool_use_id"], "toolu_mock_t0_0");
    // The raw input (which could hold secrets) is not in the log, only its hash.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("echo safe"));
    assert_eq!(events[0]["details"]["input_sha256"].as_str().unwrap().len(), 64);
    let v = sb.command(&["audit", "verify"]).output().unwrap();
    assert_eq!(v.status.code(), Some(0), "{}", String::from_utf8_lossy(&v.stdout));
    assert!(String::from_utf8_lossy(&v.stdout).contains("4 events, chain intact"));
}

fn session_event(name: &str, session: &str, extra: &str) -> String {
    format!(
        r#"{{"session_id":"{session}","transcript_path":"/t","cwd":"/home/dev/project","hook_event_name":"{name}"{extra}}}"#
    )
}

#[test]
fn sessions_are_recorded_and_a_dead_session_is_closed_by_the_next_start() {
    let sb = Sandbox::new();
    // Session A's host dies without a SessionEnd. Session C's host (this test) lives on.
    for (name, session, extra) in [
        ("SessionStart", "A", r#","source":"startup""#),
        ("UserPromptSubmit", "A", r#","prompt":"do the thing""#),
        ("Stop", "A", r#","stop_hook_active":false"#),
    ] {
        let out = sb.hook_from_dying_host(sb.localize(&session_event(name, session, extra)).as_bytes());
        assert_eq!((out.status.code(), out.stdout.is_empty()), (Some(0), true), "{name}");
    }
    sb.hook(sb.localize(&session_event("SessionStart", "C", r#","source":"startup""#)).as_bytes());
    let out = sb.hook(sb.localize(&session_event("SessionStart", "B", r#","source":"startup""#)).as_bytes());
    assert_eq!(out.status.code(), Some(0));
    sb.hook(sb.localize(&session_event("SessionEnd", "B", r#","reason":"other""#)).as_bytes());
    let tail = sb.command(&["audit", "tail", "--json"]).output().unwrap();
    let events: Vec<serde_json::Value> =
        String::from_utf8_lossy(&tail.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let seen: Vec<(String, String)> = events
        .iter()
        .map(|e| (e["kind"].as_str().unwrap().to_string(), e["session"].as_str().unwrap().to_string()))
        .collect();
    let s = |k: &str, id: &str| (k.to_string(), id.to_string());
    assert_eq!(
        seen,
        [
            s("session-start", "A"),
            s("user-prompt-submit", "A"),
            s("stop", "A"),
            s("session-end", "A"),
            s("session-start", "C"),
            s("session-start", "B"),
            s("session-end", "B"),
            // Every session end signs a checkpoint over the log.
            s("checkpoint", "B")
        ]
    );
    let (code, out, err) = sb.run(&["audit", "verify"], "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 signed checkpoints valid"), "{out}");
    // A (dead host) is closed by the next start, C's; C (live host) is not closed by B's.
    assert_eq!(events[3]["details"]["recovered"], true);
    assert_eq!(events[3]["details"]["closed_by"], "C");
    assert_eq!(events[1]["details"]["prompt_bytes"], "do the thing".len());
    assert!(!String::from_utf8_lossy(&tail.stdout).contains("do the thing"));
}

#[test]
fn concurrent_hook_processes_keep_one_chain() {
    let sb = std::sync::Arc::new(Sandbox::new());
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let sb = sb.clone();
            std::thread::spawn(move || {
                for j in 0..10 {
                    let cmd = if (i + j) % 3 == 0 { "rm -rf /" } else { "ls" };
                    let input = sb.localize(&pre(&format!(
                        r#","tool_name":"Bash","tool_input":{{"command":"{cmd}"}},"tool_use_id":"t{i}-{j}""#
                    )));
                    let out = sb.hook(input.as_bytes());
                    assert_eq!(out.status.code(), Some(0));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let v = sb.command(&["audit", "verify"]).output().unwrap();
    assert!(String::from_utf8_lossy(&v.stdout).contains("chain intact"), "{}", String::from_utf8_lossy(&v.stdout));
    // Every call is in the chain once. (Depending on how the threads interleave, five denies in a
    // row may also trip the breaker, which adds its own events.)
    let tail = sb.command(&["audit", "tail", "--json", "-n", "1000"]).output().unwrap();
    let decided =
        String::from_utf8_lossy(&tail.stdout).lines().filter(|l| l.contains("\"kind\":\"pre-tool-use\"")).count();
    assert_eq!(decided, 80);
}

/// Cursor runs Claude Code's hooks too (its payload carries `cursor_version`): with loopguard's
/// Cursor hooks installed this hook steps aside (nothing printed, nothing recorded); without
/// them every event is refused with what to do.
#[test]
fn under_cursor_the_claude_code_hook_defers_to_the_cursor_hooks_or_refuses() {
    let sb = Sandbox::new();
    let input = sb.localize(&pre(r#","tool_name":"Shell","tool_input":{"command":"ls"},"cursor_version":"3.9.16""#));
    let out = sb.hook(input.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    let (v, reason) = decision(&out).unwrap();
    assert_eq!(v, "deny");
    assert!(reason.contains("loopguard install cursor"), "{reason}");
    assert!(sb.command(&["install", "cursor"]).status().unwrap().success());
    let out = sb.hook(input.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", sb.render(&out));
    assert!(out.stdout.is_empty(), "{}", sb.render(&out));
    assert!(!sb.audit_kinds().contains(&"pre-tool-use".to_string()), "a deferred call is not decided here");
    // An agent cannot make a nested Claude Code step aside: without the payload field it decides.
    let plain = sb.localize(&pre(r#","tool_name":"Bash","tool_input":{"command":"rm -rf /"}"#));
    let out = sb.hook(plain.as_bytes());
    assert_eq!(decision(&out).unwrap().0, "deny");
}
