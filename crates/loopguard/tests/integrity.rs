//! Integrity (issue 9) through the binary: signed audit checkpoints and every kind of tamper,
//! `audit summary` / `export`, control-plane approval and drift, and certification on real git
//! repositories.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::{Sandbox, git};
use serde_json::json;

fn the_log(sb: &Sandbox) -> std::path::PathBuf {
    let dir = sb.state.join("audit");
    let mut logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs.remove(0)
}

fn busy_session(sb: &Sandbox, id: &str) {
    sb.start(id);
    sb.pre(id, "Bash", json!({"command": "ls"}));
    sb.pre(id, "Bash", json!({"command": "rm -rf /"}));
    let end = json!({"session_id": id, "transcript_path": "/t", "cwd": sb.ws, "hook_event_name": "SessionEnd", "reason": "other"});
    let out = sb.hook(end.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn audit_verify_catches_every_kind_of_tamper_the_chain_alone_would_miss() {
    let sb = Sandbox::new();
    busy_session(&sb, "s1");
    let (code, out, _) = sb.run(&["audit", "verify"], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 signed checkpoints valid, key "), "{out}");
    let log = the_log(&sb);
    let original = std::fs::read_to_string(&log).unwrap();
    let head = std::fs::read_to_string(format!("{}.head", log.display())).unwrap();
    let cps = std::fs::read_to_string(format!("{}.checkpoints", log.display())).unwrap();
    let restore = || {
        std::fs::write(&log, &original).unwrap();
        std::fs::write(format!("{}.head", log.display()), &head).unwrap();
        std::fs::write(format!("{}.checkpoints", log.display()), &cps).unwrap();
    };
    let lines: Vec<&str> = original.lines().collect();
    let tampered = |what: &str| {
        let (code, out, _) = sb.run(&["audit", "verify"], "");
        assert_eq!(code, 1, "{what} not detected: {out}");
        assert!(out.starts_with("TAMPERED"), "{out}");
        restore();
        out
    };
    // Edit.
    std::fs::write(&log, original.replacen("\"deny\"", "\"allow\"", 1)).unwrap();
    tampered("edit");
    // Delete a line.
    std::fs::write(&log, format!("{}\n{}\n", lines[0], lines[2..].join("\n"))).unwrap();
    tampered("delete");
    // Reorder two lines.
    let mut re: Vec<&str> = lines.clone();
    re.swap(1, 2);
    std::fs::write(&log, re.join("\n") + "\n").unwrap();
    tampered("reorder");
    // Truncate.
    std::fs::write(&log, lines[..2].join("\n") + "\n").unwrap();
    tampered("truncate");
    // Whole-log replacement by a fresh valid chain (another workspace's log and head anchor).
    let other = Sandbox::new();
    busy_session(&other, "x");
    busy_session(&other, "y");
    let other_log = the_log(&other);
    std::fs::copy(&other_log, &log).unwrap();
    std::fs::copy(format!("{}.head", other_log.display()), format!("{}.head", log.display())).unwrap();
    let out = tampered("replacement");
    assert!(out.contains("replaced") || out.contains("announces"), "{out}");
    // Checkpoint rollback: the checkpoint file deleted.
    std::fs::remove_file(format!("{}.checkpoints", log.display())).unwrap();
    assert!(tampered("checkpoint rollback").contains("rolled back"));
    // A forged checkpoint.
    std::fs::write(format!("{}.checkpoints", log.display()), cps.replacen("\"size\":", "\"size\":1", 1)).unwrap();
    assert!(tampered("forged checkpoint").contains("signature"));
    let (code, _, _) = sb.run(&["audit", "verify"], "");
    assert_eq!(code, 0, "restored");
}

#[test]
fn audit_summary_and_export() {
    let sb = Sandbox::new();
    busy_session(&sb, "s1");
    let (code, out, err) = sb.run(&["audit", "summary"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("decisions: allow 1, deny 1"), "{out}");
    assert!(out.contains("signed checkpoints: 1") && out.contains("integrity: ok"), "{out}");
    let (_, out, _) = sb.run(&["audit", "summary", "--json"], "");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["intact"], true);
    assert_eq!(v["sessions"], 1);
    assert!(v["reasons"].as_object().unwrap().keys().any(|k| k.starts_with("destructive")), "{v}");
    let (code, out, _) = sb.run(&["audit", "export", "--json"], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["events"].as_array().unwrap().len() as u64, v["checkpoints"][0]["size"].as_u64().unwrap() + 1);
    assert_eq!(v["public_key"].as_str().unwrap().len(), 64);
    assert_eq!(v["checkpoints"][0]["key"], v["public_key"]);
}

#[test]
fn the_agent_can_neither_read_the_signing_key_nor_run_the_human_only_integrity_commands() {
    let sb = Sandbox::new();
    busy_session(&sb, "s1");
    let key = sb.state.join("keys/audit.key");
    assert!(key.exists());
    for (tool, input) in [
        ("Read", json!({"file_path": key})),
        ("Bash", json!({"command": format!("cat {}", key.display())})),
        ("Bash", json!({"command": "loopguard audit checkpoint"})),
    ] {
        let (v, r) = common::decision(&sb.pre("s2", tool, input.clone())).unwrap_or_default();
        assert_eq!(v, "deny", "{tool} {input}: {r}");
    }
}

#[test]
fn the_agent_cannot_replace_the_advisory_data_or_certify_its_own_work() {
    let sb = Sandbox::new();
    for cmd in [
        "loopguard advisories import /tmp/x",
        "loopguard certify --reviewed-head HEAD --verify true",
        "loopguard approve",
    ] {
        let (v, r) = common::decision(&sb.pre("s", "Bash", json!({ "command": cmd }))).unwrap_or_default();
        assert_eq!(v, "deny", "{cmd}: {r}");
        assert!(r.contains("[self-protection]"), "{r}");
    }
    let (v, r) = common::decision(&sb.pre("s", "Bash", json!({"command": "loopguard advisories check"})))
        .unwrap_or_else(|| ("allow".into(), String::new()));
    assert_eq!(v, "allow", "{r}");
}

const PASS: &str = "correct horse battery staple";

fn operator(sb: &Sandbox) {
    let (code, _, err) = sb.run(&["operator", "init", "--name", "ann", "--passphrase-stdin"], &format!("{PASS}\n"));
    assert_eq!(code, 0, "{err}");
}

fn approve(sb: &Sandbox) {
    let (code, out, err) =
        sb.run(&["approve", "--operator", "ann", "--reason", "reviewed", "--passphrase-stdin"], &format!("{PASS}\n"));
    assert_eq!(code, 0, "{out}{err}");
}

fn verdict(sb: &Sandbox, session: &str, tool: &str, input: serde_json::Value) -> (String, String) {
    common::decision(&sb.pre(session, tool, input)).unwrap_or_else(|| ("allow".into(), String::new()))
}

#[test]
fn approval_drift_denies_writes_trips_the_breaker_and_needs_a_human() {
    let sb = Sandbox::new();
    operator(&sb);
    sb.write(".mcp.json", r#"{"mcpServers":{}}"#);
    sb.write(".claude/settings.json", "{}");
    sb.write(".gemini/settings.json", "{}");
    // Not approved: not checked.
    let (code, out, _) = sb.run(&["approve", "--status"], "");
    assert_eq!((code, out.trim()), (0, "not approved: the control plane of this worktree is not checked"));
    approve(&sb);
    let (code, out, _) = sb.run(&["approve", "--status"], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("unchanged"), "{out}");
    let write = |s: &str| verdict(&sb, s, "Write", json!({"file_path": sb.ws.join("src/a.rs"), "content": "x"}));
    assert_eq!(write("s1"), ("allow".to_string(), String::new()));
    // Touched but identical: still approved (the cheap check falls back to hashing).
    sb.write(".mcp.json", r#"{"mcpServers":{}}"#);
    assert_eq!(write("s1").0, "allow");
    // A new MCP server appears: drift.
    sb.write(".mcp.json", r#"{"mcpServers":{"evil":{"command":"nc"}}}"#);
    let (v, r) = write("s1");
    assert_eq!(v, "deny", "{r}");
    assert!(r.contains("[approval-drift]") && r.contains("ws:.mcp.json changed"), "{r}");
    // Reads go on, so the agent can report.
    let (v, r) = verdict(&sb, "s1", "Read", json!({"file_path": sb.ws.join("src/a.rs")}));
    assert_ne!(v, "deny", "{r}");
    let (code, out, _) = sb.run(&["approve", "--status"], "");
    assert_eq!(code, 1);
    assert!(out.starts_with("DRIFT") && out.contains("ws:.mcp.json changed"), "{out}");
    // The breaker tripped (read-only, manual): re-approving alone does not lift it.
    let (_, out, _) = sb.run(&["breaker", "status"], "");
    assert!(out.contains("approval_drift"), "{out}");
    approve(&sb);
    let (v, r) = write("s1");
    assert_eq!(v, "deny", "{r}");
    assert!(!r.contains("[approval-drift]") && r.contains("breaker"), "{r}");
    let (code, _, err) = sb.run(
        &["breaker", "reset", "--operator", "ann", "--reason", "mcp server reviewed", "--passphrase-stdin"],
        &format!("{PASS}\n"),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(write("s1").0, "allow");
    // Adding, renaming and removing files under a watched folder is drift too.
    sb.write(".gemini/extra.json", "{}");
    assert!(write("s2").1.contains("ws:.gemini/extra.json added"));
    approve(&sb);
    std::fs::rename(sb.ws.join(".gemini/extra.json"), sb.ws.join(".gemini/renamed.json")).unwrap();
    let r = write("s3").1;
    assert!(r.contains("ws:.gemini/renamed.json added") && r.contains("ws:.gemini/extra.json removed"), "{r}");
    // A session start records the drift in the audit log.
    sb.start("s4");
    assert!(sb.audit_kinds().contains(&"approval-drift".to_string()));
    // A damaged approval record: cannot be checked → drift (fail closed).
    let approvals = sb.state.join("approvals");
    let rec = std::fs::read_dir(std::fs::read_dir(&approvals).unwrap().next().unwrap().unwrap().path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&rec, "{broken").unwrap();
    let (v, r) = write("s5");
    assert_eq!(v, "deny");
    assert!(r.contains("cannot be checked"), "{r}");
}

#[test]
fn a_project_policy_may_loosen_only_while_its_hash_is_approved() {
    let sb = Sandbox::new();
    operator(&sb);
    sb.user_policy("[advisories]\nmissing = \"ask\"\n");
    sb.write(".loopguard/policy.toml", "[advisories]\nmissing = \"allow\"\n");
    let npm = |s: &str| verdict(&sb, s, "Bash", json!({"command": "npm install left-pad@1.3.0"}));
    let (v, r) = npm("s1");
    assert_eq!(v, "ask", "unapproved, the project cannot loosen the user's ask: {r}");
    let shown = |sb: &Sandbox| sb.run(&["policy", "show", "--effective"], "").1;
    assert!(shown(&sb).contains("missing = \"ask\""));
    approve(&sb);
    assert_eq!(npm("s2").0, "allow", "approved, it can");
    assert!(shown(&sb).contains("missing = \"allow\""), "policy show agrees with the hook");
    // Any edit of the approved file: drift, and the loosening is gone with it.
    sb.write(".loopguard/policy.toml", "[advisories]\nmissing = \"allow\" # still\n");
    let (v, r) = npm("s3");
    assert_eq!(v, "deny", "{r}");
    assert!(r.contains("ws:.loopguard/policy.toml changed") && r.contains("[advisory-data-missing]"), "{r}");
}

fn repo(sb: &Sandbox) -> String {
    std::fs::remove_dir_all(sb.ws.join(".git")).unwrap();
    git(&sb.ws, &["init", "-q", "-b", "main"]);
    sb.write("src/lib.rs", "pub fn one() -> u32 { 1 }\n");
    sb.write("notes/.keep", "");
    git(&sb.ws, &["add", "-A"]);
    git(&sb.ws, &["commit", "-qm", "reviewed work"]);
    git(&sb.ws, &["rev-parse", "HEAD"])
}

fn certify(sb: &Sandbox, head: &str, verify: &str) -> (i32, String, String) {
    sb.run(
        &[
            "certify",
            "--reviewed-head",
            head,
            "--verify",
            "grep -q 'fn one' src/lib.rs",
            "--verify",
            verify,
            "--allow-dir",
            "notes",
            "--operator",
            "ann",
            "--passphrase-stdin",
        ],
        &format!("{PASS}\n"),
    )
}

#[test]
fn certify_reruns_the_checks_and_any_later_change_blocks() {
    let sb = Sandbox::new();
    operator(&sb);
    let head = repo(&sb);
    let (code, out, err) = certify(&sb, &head, "test -f src/lib.rs");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("CERTIFIED"), "{out}");
    let cert_dir = std::fs::read_dir(sb.state.join("certifications")).unwrap().next().unwrap().unwrap().path();
    let cert_path = cert_dir.join("certification.json");
    let log = std::fs::read(cert_dir.join("verify.log")).unwrap();
    let cert: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&cert_path).unwrap()).unwrap();
    assert_eq!(cert["reviewed_head"], head.as_str());
    assert_eq!(cert["verify"].as_array().unwrap().len(), 2);
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(&log).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(cert["verify_log_sha256"], digest.as_str(), "the log's hash is bound");
    for k in ["policy", "contract", "harness", "control_plane"] {
        assert_eq!(cert["hashes"][k].as_str().unwrap().len(), 64, "{k}");
    }
    assert_eq!(sb.run(&["certify", "--check"], "").0, 0);
    // An allowed folder may change; anything else blocks.
    sb.write("notes/review.md", "looked fine\n");
    assert_eq!(sb.run(&["certify", "--check"], "").0, 0);
    sb.write("src/lib.rs", "pub fn one() -> u32 { 2 }\n");
    let (code, out, _) = sb.run(&["certify", "--check"], "");
    assert_eq!(code, 1);
    assert!(out.contains("changed since the reviewed commit: src/lib.rs"), "{out}");
    git(&sb.ws, &["checkout", "-q", "src/lib.rs"]);
    sb.write("untracked.txt", "x");
    assert!(sb.run(&["certify", "--check"], "").1.contains("untracked.txt"));
    std::fs::remove_file(sb.ws.join("untracked.txt")).unwrap();
    // A policy change after certification.
    sb.user_policy("[advisories]\nmissing = \"ask\"\n");
    assert!(sb.run(&["certify", "--check"], "").1.contains("the policy hash changed"));
    std::fs::remove_file(sb.home.join(".config/loopguard/policy.toml")).unwrap();
    assert_eq!(sb.run(&["certify", "--check"], "").0, 0);
    // An edited certification: the signature no longer holds.
    let text = std::fs::read_to_string(&cert_path).unwrap();
    let edited = text.replace("\"operator\": \"ann\"", "\"operator\": \"bob\"");
    assert_ne!(edited, text);
    std::fs::write(&cert_path, edited).unwrap();
    assert!(sb.run(&["certify", "--check"], "").1.contains("signature is not valid"));
    std::fs::write(&cert_path, &text).unwrap();
    // A new commit moves HEAD.
    sb.write("src/more.rs", "\n");
    git(&sb.ws, &["add", "-A"]);
    git(&sb.ws, &["commit", "-qm", "more"]);
    let (code, out, _) = sb.run(&["certify", "--check"], "");
    assert_eq!(code, 1);
    assert!(out.contains("HEAD moved") && out.contains("src/more.rs"), "{out}");
}

#[test]
fn certify_blocks_failing_checks_unreviewed_changes_and_checks_that_write() {
    let sb = Sandbox::new();
    operator(&sb);
    let head = repo(&sb);
    let (code, out, _) = certify(&sb, &head, "exit 3");
    assert_eq!(code, 1);
    assert!(out.starts_with("BLOCKED") && out.contains("`exit 3` failed (exit 3)"), "{out}");
    assert_eq!(sb.run(&["certify", "--check"], "").0, 1, "a blocked run stays blocked");
    let (code, out, _) = certify(&sb, &head, "echo sneaky >> src/lib.rs");
    assert_eq!(code, 1);
    assert!(out.contains("the verify commands changed files: src/lib.rs"), "{out}");
    git(&sb.ws, &["checkout", "-q", "src/lib.rs"]);
    sb.write("src/unreviewed.rs", "\n");
    let (code, out, _) = certify(&sb, &head, "true");
    assert_eq!(code, 1);
    assert!(out.contains("changed since the reviewed commit: src/unreviewed.rs"), "{out}");
    let (code, _, err) = certify(&sb, "no-such-commit", "true");
    assert_eq!(code, 2);
    assert!(err.contains("is not a commit here"), "{err}");
    // A wrong passphrase certifies nothing.
    let (code, _, _) = sb.run(
        &["certify", "--reviewed-head", &head, "--verify", "true", "--operator", "ann", "--passphrase-stdin"],
        "wrong\n",
    );
    assert_eq!(code, 2);
    assert_eq!(sb.audit_kinds().iter().filter(|k| *k == "certification").count(), 3);
}
