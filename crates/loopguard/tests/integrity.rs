//! Integrity (issue 9) through the binary: signed audit checkpoints and every kind of tamper,
//! `audit summary` / `export`, control-plane approval and drift, and certification on real git
//! repositories.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::Sandbox;
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
    assert!(common::decision(&sb.pre("s", "Bash", json!({"command": "loopguard advisories check"}))).is_none());
}
