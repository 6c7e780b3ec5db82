//! `loopguard merge-check` on real git repositories built here: eligible kinds pass, everything
//! else (behaviour, dependencies, lockfiles, denylisted paths) is refused with its reason.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::Sandbox;

fn git(sb: &Sandbox, args: &[&str]) {
    common::git(&sb.ws, args);
}

fn repo() -> Sandbox {
    let sb = Sandbox::new();
    std::fs::remove_dir_all(sb.ws.join(".git")).unwrap();
    git(&sb, &["init", "-q", "-b", "main"]);
    sb.write("README.md", "# Project\n\nTeh gate checks every call.\n");
    sb.write("src/lib.rs", "use std::io;\nuse std::fmt;\n\npub fn f(x: i32) -> i32 { x + 1 }\n");
    sb.write("tests/it.rs", "#[test]\nfn t(){ assert_eq!(1,1); }\n");
    sb.write("Cargo.lock", "[[package]]\nname = \"a\"\nversion = \"1.0.0\"\n");
    sb.write("docs/site.yml", "title: loopguard\n");
    sb.write(".env.example", "A=1\n");
    git(&sb, &["add", "-A"]);
    git(&sb, &["commit", "-q", "-m", "base"]);
    sb
}

/// Makes a branch off main with `edits` committed; returns (exit code, JSON report).
fn check(sb: &Sandbox, branch: &str, edits: &[(&str, &str)]) -> (i32, serde_json::Value) {
    git(sb, &["checkout", "-q", "-b", branch, "main"]);
    for (path, text) in edits {
        sb.write(path, text);
    }
    git(sb, &["add", "-A"]);
    git(sb, &["commit", "-q", "-m", branch]);
    git(sb, &["checkout", "-q", "main"]);
    let (code, out, err) = sb.run(&["merge-check", &format!("main..{branch}"), "--json"], "");
    (code, serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}")))
}

#[test]
fn eligible_changes_pass() {
    let sb = repo();
    let (code, r) = check(&sb, "typo", &[("README.md", "# Project\n\nThe gate checks every call.\n")]);
    assert_eq!((code, &r["files"][0]["category"]), (0, &serde_json::json!("doc-typo")), "{r:#}");
    let (code, r) =
        check(&sb, "imports", &[("src/lib.rs", "use std::fmt;\nuse std::io;\n\npub fn f(x: i32) -> i32 { x + 1 }\n")]);
    assert_eq!((code, &r["files"][0]["category"]), (0, &serde_json::json!("import-order")), "{r:#}");
    let (code, r) = check(&sb, "fmt", &[("tests/it.rs", "#[test]\nfn t() {\n    assert_eq!(1, 1);\n}\n")]);
    assert_eq!((code, &r["files"][0]["category"]), (0, &serde_json::json!("test-formatting")), "{r:#}");
    let (code, r) = check(&sb, "docsconf", &[("docs/site.yml", "title: loopguard docs\n")]);
    assert_eq!((code, &r["files"][0]["category"]), (0, &serde_json::json!("docs-config")), "{r:#}");
    // The human output says why.
    let (code, out, _) = sb.run(&["merge-check", "main..typo"], "");
    assert_eq!(code, 0);
    assert!(out.contains("ok  README.md: documentation") && out.contains("eligible"), "{out}");
}

#[test]
fn everything_else_is_refused_with_a_reason() {
    let sb = repo();
    for (branch, edits, why) in [
        (
            "behaviour",
            vec![("src/lib.rs", "use std::io;\nuse std::fmt;\n\npub fn f(x: i32) -> i32 { x - 1 }\n")],
            "changes behaviour",
        ),
        ("lock", vec![("Cargo.lock", "[[package]]\nname = \"a\"\nversion = \"1.0.1\"\n")], "lockfile"),
        ("deps", vec![("Cargo.toml", "[dependencies]\nserde = \"1\"\n")], "declares dependencies"),
        (
            "denylisted",
            vec![(".env.example", "A=2\n"), ("README.md", "# Project\n\nThe gate checks every call.\n")],
            "on the denylist",
        ),
        (
            "bigdoc",
            vec![("README.md", "# Project\n\nA whole new paragraph about something else entirely.\n")],
            "larger than a typo",
        ),
    ] {
        let (code, r) = check(&sb, branch, &edits);
        assert_eq!(code, 1, "{branch}: {r:#}");
        assert_eq!(r["eligible"], false);
        let reasons: Vec<&str> = r["files"].as_array().unwrap().iter().map(|f| f["reason"].as_str().unwrap()).collect();
        assert!(reasons.iter().any(|x| x.contains(why)), "{branch}: {reasons:?}");
    }
    let (code, _, err) = sb.run(&["merge-check", "nonsense"], "");
    assert_eq!(code, 2);
    assert!(err.contains("expected a range"), "{err}");
}

#[test]
fn a_denylisted_path_is_never_eligible() {
    let sb = repo();
    sb.write("auth/notes.md", "Teh login flow.\n");
    git(&sb, &["add", "-A"]);
    git(&sb, &["commit", "-q", "-m", "auth notes"]);
    let (code, r) = check(&sb, "authtypo", &[("auth/notes.md", "The login flow.\n")]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["files"][0]["reason"], "the path is on the denylist");
}

fn pre_bash(sb: &Sandbox, command: &str) -> (String, String) {
    let ev = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": sb.ws, "permission_mode": "bypassPermissions",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t"
    });
    common::decision(&sb.hook(ev.to_string().as_bytes())).unwrap_or(("allow".into(), String::new()))
}

#[test]
fn the_gate_lets_a_merge_through_only_for_an_eligible_change() {
    let sb = repo();
    let branch = |name: &str, path: &str, text: &str| {
        git(&sb, &["checkout", "-q", "-b", name, "main"]);
        sb.write(path, text);
        git(&sb, &["commit", "-q", "-am", name]);
        git(&sb, &["checkout", "-q", "main"]);
    };
    branch("typo", "README.md", "# Project\n\nThe gate checks every call.\n");
    branch("code", "src/lib.rs", "use std::io;\nuse std::fmt;\n\npub fn f(x: i32) -> i32 { x - 1 }\n");
    // The default policy (autonomy pr) does not merge at all.
    let (v, reason) = pre_bash(&sb, "git merge typo");
    assert_eq!(v, "deny");
    assert!(reason.contains("[autonomy-exceeded]"), "{reason}");
    // With merge granted by the policy: only the eligible change goes through.
    sb.user_policy("[gate]\nautonomy = \"merge\"\n");
    assert_eq!(pre_bash(&sb, "git merge typo").0, "allow");
    let (v, reason) = pre_bash(&sb, "git merge code");
    assert_eq!(v, "deny");
    assert!(reason.contains("[merge-not-eligible]") && reason.contains("src/lib.rs"), "{reason}");
    let (v, reason) = pre_bash(&sb, "gh pr merge 12 --squash");
    assert_eq!(v, "deny");
    assert!(reason.contains("cannot tell which change"), "{reason}");
}
