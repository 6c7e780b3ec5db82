//! Grants end to end: a human's grant pre-authorises what the gate would ask about, is re-checked
//! on every call (expiring between calls, with the injected clock), is revoked by a breaker trip,
//! never overrides a deny, and can only be made by an operator.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::{Sandbox, decision};
use serde_json::json;

const PASS: &str = "correct horse battery staple";

fn verdict(out: &std::process::Output) -> String {
    decision(out).map_or("allow".to_string(), |d| d.0)
}

fn at(sb: &mut Sandbox, t: i64) {
    sb.extra_env = vec![("LOOPGUARD_TEST_NOW".into(), t.to_string())];
}

fn mcp(sb: &Sandbox) -> String {
    verdict(&sb.pre("s", "mcp__github__create_issue", json!({"title": "x"})))
}

#[test]
fn a_grant_pre_authorises_until_it_expires_or_a_trip_revokes_it() {
    let mut sb = Sandbox::new();
    at(&mut sb, 1_900_000_000);
    let (code, _, err) = sb.run(&["operator", "init", "--name", "ann", "--passphrase-stdin"], &format!("{PASS}\n"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(mcp(&sb), "ask", "the built-in policy asks for MCP tools");
    let (code, out, err) = sb.run(
        &[
            "grant",
            "add",
            "--operator",
            "ann",
            "--tool",
            "mcp__github__*",
            "--for",
            "10m",
            "--reason",
            "triage",
            "--passphrase-stdin",
        ],
        &format!("{PASS}\n"),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("grant #1: mcp__github__*"), "{out}");
    assert_eq!(mcp(&sb), "allow");
    assert_eq!(verdict(&sb.pre("s", "mcp__jira__create", json!({}))), "ask", "another server is not granted");
    // Re-checked on every call: eleven minutes later it has expired.
    at(&mut sb, 1_900_000_000 + 11 * 60);
    assert_eq!(mcp(&sb), "ask");
    // A new grant, then a breaker trip: temporary grants are revoked.
    sb.run(
        &[
            "grant",
            "add",
            "--operator",
            "ann",
            "--tool",
            "mcp__github__*",
            "--for",
            "1h",
            "--reason",
            "again",
            "--passphrase-stdin",
        ],
        &format!("{PASS}\n"),
    );
    assert_eq!(mcp(&sb), "allow");
    at(&mut sb, 1_900_000_000 + 12 * 60);
    let (code, _, _) = sb.run(&["breaker", "trip", "--to", "pr_only", "--reason", "check"], "");
    assert_eq!(code, 0);
    assert_eq!(mcp(&sb), "ask");
    let (_, list, _) = sb.run(&["grant", "list"], "");
    assert!(!list.contains("#1 "), "expired grants are dropped when the next is made: {list}");
    assert!(list.contains("#2 ") && list.contains("revoked by a breaker trip"), "{list}");
    let kinds = sb.audit_kinds();
    assert!(kinds.contains(&"grant-added".to_string()), "{kinds:?}");
}

#[test]
fn grants_never_override_a_deny_need_an_operator_and_warn_when_broad() {
    let sb = Sandbox::new();
    sb.run(&["operator", "init", "--name", "ann", "--passphrase-stdin"], &format!("{PASS}\n"));
    let (code, _, err) = sb.run(
        &[
            "grant",
            "add",
            "--operator",
            "ann",
            "--tool",
            "Bash",
            "--resource",
            "rm -rf *",
            "--reason",
            "x",
            "--passphrase-stdin",
        ],
        "not the passphrase\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("passphrase is wrong"), "{err}");
    let (code, _, _) = sb.run(
        &[
            "grant",
            "add",
            "--operator",
            "ann",
            "--tool",
            "Bash",
            "--resource",
            "rm -rf *",
            "--reason",
            "x",
            "--passphrase-stdin",
        ],
        &format!("{PASS}\n"),
    );
    assert_eq!(code, 0);
    assert_eq!(verdict(&sb.pre("s", "Bash", json!({"command": "rm -rf /"}))), "deny");
    let (code, _, err) = sb.run(
        &["grant", "add", "--operator", "ann", "--tool", "*", "--reason", "x", "--passphrase-stdin"],
        &format!("{PASS}\n"),
    );
    assert_eq!(code, 2);
    assert!(err.contains("--allow-broad"), "{err}");
    let (code, _, _) = sb.run(
        &["grant", "add", "--operator", "ann", "--tool", "*", "--reason", "x", "--allow-broad", "--passphrase-stdin"],
        &format!("{PASS}\n"),
    );
    assert_eq!(code, 0);
    let (_, list, _) = sb.run(&["grant", "list"], "");
    assert!(list.contains("warning: grant #2"), "{list}");
    // The agent cannot grant itself anything.
    let (v, reason) =
        decision(&sb.pre("s", "Bash", json!({"command": "loopguard grant add --tool '*' --reason x --operator ann"})))
            .unwrap();
    assert_eq!(v, "deny");
    assert!(reason.contains("[self-protection]"), "{reason}");
}

#[test]
fn policy_grants_apply_in_every_workspace() {
    let sb = Sandbox::new();
    sb.user_policy("[[grants]]\ntool = \"mcp__docs__*\"\nreason = \"read-only docs server\"\n");
    assert_eq!(verdict(&sb.pre("s", "mcp__docs__search", json!({"q": "x"}))), "allow");
    assert_eq!(verdict(&sb.pre("s", "mcp__other__search", json!({"q": "x"}))), "ask");
    let bad = Sandbox::new();
    bad.write(".loopguard/policy.toml", "[[grants]]\ntool = \"*\"\nreason = \"self-serve\"\n");
    let (v, reason) = decision(&bad.pre("s", "Read", json!({"file_path": bad.ws.join("a")}))).unwrap();
    assert_eq!(v, "deny");
    assert!(reason.contains("[[grants]] may only be set in the user policy"), "{reason}");
}

#[test]
fn yolo_is_human_only_time_boxed_counted_and_summarised() {
    let mut sb = Sandbox::new();
    at(&mut sb, 1_900_000_000);
    sb.run(&["operator", "init", "--name", "ann", "--passphrase-stdin"], &format!("{PASS}\n"));
    // The host's bypassPermissions is not yolo.
    assert_eq!(mcp(&sb), "ask");
    let (code, _, err) = sb.run(
        &["yolo", "on", "--operator", "ann", "--for", "5h", "--reason", "r", "--passphrase-stdin"],
        &format!("{PASS}\n"),
    );
    assert!(code != 0 && err.contains("at most 14400"), "{err}");
    let (code, out, err) = sb.run(
        &["yolo", "on", "--operator", "ann", "--for", "10m", "--reason", "demo day", "--passphrase-stdin"],
        &format!("{PASS}\n"),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("yolo on"), "{out}");
    assert_eq!(mcp(&sb), "allow");
    assert_eq!(verdict(&sb.pre("s", "Bash", json!({"command": "rm -rf \"$DIR\""}))), "allow");
    // Backstops hold.
    assert_eq!(verdict(&sb.pre("s", "Bash", json!({"command": "rm -rf /"}))), "deny");
    assert_eq!(verdict(&sb.pre("s", "Write", json!({"file_path": "/etc/passwd", "content": "x"}))), "deny");
    // It expires on its own, and the period is summarised in the audit log.
    at(&mut sb, 1_900_000_000 + 11 * 60);
    assert_eq!(mcp(&sb), "ask");
    let (_, tail, _) = sb.run(&["audit", "tail", "--json", "-n", "100"], "");
    let summary = tail
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["kind"] == "yolo-summary")
        .expect("a yolo summary");
    assert_eq!(summary["details"]["approved"], 2);
    assert_eq!(summary["details"]["how"], "expired");
    assert_eq!(summary["details"]["codes"]["tool-policy"], 1);
    let (_, out, _) = sb.run(&["yolo", "off"], "");
    assert_eq!(out.trim(), "yolo was not on");
    // The agent cannot switch it on.
    let (v, reason) =
        decision(&sb.pre("s", "Bash", json!({"command": "loopguard yolo on --for 1h --operator ann --reason x"})))
            .unwrap();
    assert_eq!(v, "deny");
    assert!(reason.contains("[self-protection]"), "{reason}");
}

#[test]
fn policy_check_warns_about_an_over_broad_policy_grant() {
    let sb = Sandbox::new();
    sb.user_policy("[[grants]]\ntool = \"*\"\nreason = \"lazy\"\n");
    let (code, out, err) = sb.run(&["policy", "check"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("warning: grant #-1 (`*` on any resource, by policy)"), "{out}");
}
