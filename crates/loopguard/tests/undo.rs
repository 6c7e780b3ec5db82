//! The step journal through the real binary: the hook keeps pre-images of what allowed calls
//! write, `loopguard undo` walks them back, and a pre-image that cannot be kept never lets the
//! call run unprotected.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

/// A PreToolUse (or PostToolUse, with `response`) in `mode` with the call id `id`.
fn event(sb: &Sandbox, mode: &str, tool: &str, input: serde_json::Value, id: &str, post: bool) -> std::process::Output {
    let mut ev = json!({
        "session_id": "s1", "transcript_path": sb.root.path().join("s1.jsonl"), "cwd": sb.ws,
        "permission_mode": mode, "hook_event_name": if post { "PostToolUse" } else { "PreToolUse" },
        "tool_name": tool, "tool_input": input, "tool_use_id": id
    });
    if post {
        ev["tool_response"] = json!({"stdout": "", "stderr": ""});
    }
    sb.hook(ev.to_string().as_bytes())
}

/// Asks the hook, then (when allowed) does what the call does the way the host would, then
/// reports the result.
fn step(
    sb: &Sandbox,
    mode: &str,
    tool: &str,
    input: serde_json::Value,
    id: &str,
    act: impl FnOnce(),
) -> Option<(String, String)> {
    let d = decision(&event(sb, mode, tool, input.clone(), id, false));
    if d.as_ref().is_none_or(|(v, _)| v == "allow") {
        act();
        assert!(event(sb, mode, tool, input, id, true).status.success());
    }
    d
}

#[test]
fn a_write_and_a_recursive_delete_are_undone_byte_for_byte_and_audited() {
    let sb = Sandbox::new();
    write(&sb.ws.join("src/main.rs"), "fn main() { println!(\"mine\"); }\n");
    write(&sb.ws.join("tools/gen.sh"), "#!/bin/sh\necho gen\n");
    std::fs::set_permissions(sb.ws.join("tools/gen.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("gen.sh", sb.ws.join("tools/latest")).unwrap();
    let main = sb.ws.join("src/main.rs");
    let w = step(&sb, "default", "Write", json!({"file_path": main, "content": "broken\n"}), "t1", || {
        std::fs::write(&main, "broken\n").unwrap();
    });
    // Normal mode: a workspace edit the journal can undo needs no confirmation.
    assert_eq!(w, None);
    let tools = sb.ws.join("tools");
    let r = step(&sb, "bypassPermissions", "Bash", json!({"command": "rm -rf tools"}), "t2", || {
        std::fs::remove_dir_all(&tools).unwrap();
    });
    assert!(r.as_ref().is_some_and(|(v, _)| v == "allow"), "{r:?}");

    let (code, list, err) = sb.run(&["undo", "--list"], "");
    assert_eq!(code, 0, "{err}");
    assert!(list.contains("Write") && list.contains("rm -rf tools"), "{list}");
    let (code, out, err) = sb.run(&["undo", "--to", "1"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("undone step(s) 2, 1"), "{out}");
    assert_eq!(std::fs::read_to_string(&main).unwrap(), "fn main() { println!(\"mine\"); }\n");
    let gen_sh = sb.ws.join("tools/gen.sh");
    assert_eq!(std::fs::read_to_string(&gen_sh).unwrap(), "#!/bin/sh\necho gen\n");
    assert_eq!(std::fs::metadata(&gen_sh).unwrap().permissions().mode() & 0o777, 0o755);
    assert_eq!(std::fs::read_link(sb.ws.join("tools/latest")).unwrap(), std::path::Path::new("gen.sh"));
    assert!(sb.audit_kinds().iter().any(|k| k == "undo"), "{:?}", sb.audit_kinds());
    // Nothing is left to undo.
    let (code, _, err) = sb.run(&["undo"], "");
    assert_ne!(code, 0);
    assert!(err.contains("no step to undo"), "{err}");
}

#[test]
fn undo_refuses_over_a_humans_later_change_unless_forced() {
    let sb = Sandbox::new();
    let f = sb.ws.join("notes.md");
    write(&f, "v1\n");
    step(&sb, "bypassPermissions", "Write", json!({"file_path": f, "content": "v2\n"}), "t1", || {
        std::fs::write(&f, "v2\n").unwrap();
    });
    std::fs::write(&f, "the human's v3\n").unwrap();
    let (code, _, err) = sb.run(&["undo"], "");
    assert_ne!(code, 0);
    assert!(err.contains("changed since the step") && err.contains("notes.md"), "{err}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "the human's v3\n");
    let (code, _, err) = sb.run(&["undo", "--force"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "v1\n");
}

#[test]
fn a_file_the_step_created_is_removed_with_the_folders_it_made() {
    let sb = Sandbox::new();
    let f = sb.ws.join("gen/out/new.txt");
    step(&sb, "bypassPermissions", "Write", json!({"file_path": f, "content": "x"}), "t1", || {
        write(&f, "x");
    });
    let (code, _, err) = sb.run(&["undo"], "");
    assert_eq!(code, 0, "{err}");
    assert!(!sb.ws.join("gen").exists());
}

#[test]
fn without_a_journal_a_write_is_asked_in_normal_mode_and_denied_unattended() {
    let sb = Sandbox::new();
    // The journal's folder cannot be made: a file stands where it would go.
    std::fs::create_dir_all(&sb.state).unwrap();
    std::fs::write(sb.state.join("journal"), "not a folder").unwrap();
    let f = sb.ws.join("a.txt");
    let d = decision(&event(&sb, "default", "Write", json!({"file_path": f, "content": "x"}), "t1", false));
    assert!(d.as_ref().is_some_and(|(v, r)| v == "ask" && r.contains("journal-unavailable")), "{d:?}");
    let d = decision(&event(&sb, "bypassPermissions", "Write", json!({"file_path": f, "content": "x"}), "t2", false));
    assert!(d.as_ref().is_some_and(|(v, r)| v == "deny" && r.contains("journal-unavailable")), "{d:?}");
    // A call that writes nothing needs no journal.
    let d = decision(&event(&sb, "bypassPermissions", "Bash", json!({"command": "git status"}), "t3", false));
    assert!(d.as_ref().is_none_or(|(v, _)| v == "allow"), "{d:?}");
}

#[test]
fn with_the_journal_off_a_workspace_edit_is_confirmed_in_normal_mode_again() {
    let sb = Sandbox::new();
    sb.user_policy("version = 1\n[exec]\njournal = false\n");
    let f = sb.ws.join("a.txt");
    let d = decision(&event(&sb, "default", "Write", json!({"file_path": f, "content": "x"}), "t1", false));
    assert!(d.as_ref().is_some_and(|(v, r)| v == "ask" && r.contains("confirmation-required")), "{d:?}");
    assert!(!sb.state.join("journal").exists());
}
