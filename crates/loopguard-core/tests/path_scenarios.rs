//! Real symlink farms and hard links built in temp dirs, checked through the gate's Write tool
//! and through shell commands.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use loopguard_core::{Context, Gate, Policy, ToolCall, Verdict};
use serde_json::json;
use std::os::unix::fs::symlink;
use std::path::Path;

struct Farm {
    _root: tempfile::TempDir,
    ws: std::path::PathBuf,
    out: std::path::PathBuf,
}

fn farm() -> Farm {
    // Not under /tmp: deleting below the system temp directory is allowed unattended, and these
    // scenarios need a place that is simply outside the workspace.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = root.path().join("ws");
    let out = root.path().join("outside");
    std::fs::create_dir_all(ws.join("src/a/b/c")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("secret.txt"), "s").unwrap();
    // inside → outside, a chain ending outside, a chain staying inside, a loop, a dangling link.
    symlink(&out, ws.join("to_out")).unwrap();
    symlink(ws.join("hop2"), ws.join("hop1")).unwrap();
    symlink(&out, ws.join("hop2")).unwrap();
    symlink(ws.join("src/a"), ws.join("in1")).unwrap();
    symlink(ws.join("in1/b"), ws.join("in2")).unwrap();
    symlink(ws.join("loop_b"), ws.join("loop_a")).unwrap();
    symlink(ws.join("loop_a"), ws.join("loop_b")).unwrap();
    symlink(out.join("not-yet"), ws.join("dangling")).unwrap();
    symlink("../outside/secret.txt", ws.join("rel_out")).unwrap();
    std::fs::hard_link(out.join("secret.txt"), ws.join("hard.txt")).unwrap();
    Farm { _root: root, ws, out }
}

fn write(f: &Farm, path: &Path) -> (Verdict, Vec<String>) {
    let policy = Policy::builtin();
    let ctx = Context::new(&f.ws).with_worktree(common::worktree()).with_home(None);
    let d = Gate::new(&policy).evaluate(
        &ToolCall::new(
            "Write",
            write_action(&path.display().to_string()),
            json!({ "file_path": path, "content": "x" }),
            &f.ws,
        ),
        &ctx,
    );
    (d.verdict(), d.codes())
}

fn bash(f: &Farm, cmd: &str) -> (Verdict, Vec<String>) {
    let policy = Policy::builtin();
    let ctx = Context::new(&f.ws).with_worktree(common::worktree()).with_home(None);
    let d = Gate::new(&policy).evaluate(
        &ToolCall::new(
            "Bash",
            loopguard_core::Action::Shell { command: cmd.to_string() },
            json!({ "command": cmd }),
            &f.ws,
        ),
        &ctx,
    );
    (d.verdict(), d.codes())
}

#[test]
fn links_that_lead_outside_are_outside() {
    let f = farm();
    for p in ["to_out/x.txt", "hop1/x.txt", "dangling", "rel_out", "src/../to_out/y"] {
        let (v, codes) = write(&f, &f.ws.join(p));
        assert_eq!(v, Verdict::Deny, "{p}");
        assert_eq!(codes, ["path-outside-workspace"], "{p}");
    }
}

#[test]
fn links_that_stay_inside_are_inside() {
    let f = farm();
    for p in ["in1/new.txt", "in2/c/new.txt", "src/a/b/c/d/e/new.txt", "brand/new/dir/file"] {
        assert_eq!(write(&f, &f.ws.join(p)).0, Verdict::Allow, "{p}");
    }
}

#[test]
fn loops_are_refused() {
    let f = farm();
    let (v, codes) = write(&f, &f.ws.join("loop_a/x"));
    assert_eq!(v, Verdict::Deny);
    assert_eq!(codes, ["path-outside-workspace"]);
}

#[test]
fn hard_links_ask() {
    let f = farm();
    let (v, codes) = write(&f, &f.ws.join("hard.txt"));
    assert_eq!(v, Verdict::Ask);
    assert_eq!(codes, ["path-hardlink"]);
    // Deleting a hard link only removes that name.
    assert_eq!(bash(&f, "rm hard.txt").0, Verdict::Allow);
}

#[test]
fn the_shell_sees_the_same_links() {
    let f = farm();
    assert_eq!(bash(&f, "echo x > to_out/y").1, ["path-outside-workspace"]);
    assert_eq!(bash(&f, "cp src/a/b/c hop1/").1, ["path-outside-workspace"]);
    assert_eq!(bash(&f, "echo x > in2/c/ok.txt").0, Verdict::Allow);
    let (v, _) = bash(&f, &format!("rm -rf {}", f.out.display()));
    assert_eq!(v, Verdict::Deny);
}

#[test]
fn paths_with_newlines_are_handled_and_nul_is_refused() {
    let f = farm();
    assert_eq!(write(&f, &f.ws.join("odd\nname.txt")).0, Verdict::Allow);
    let policy = Policy::builtin();
    let ctx = Context::new(&f.ws).with_worktree(common::worktree()).with_home(None);
    let d = Gate::new(&policy).evaluate(
        &ToolCall::new(
            "Write",
            write_action(&format!("{}/a\u{0}b", f.ws.display())),
            json!({ "file_path": format!("{}/a\u{0}b", f.ws.display()) }),
            &f.ws,
        ),
        &ctx,
    );
    assert_eq!(d.verdict(), Verdict::Deny);
}

fn write_action(path: &str) -> loopguard_core::Action {
    loopguard_core::Action::WriteFile { path: path.to_string(), change: loopguard_core::Change::Whole("x".into()) }
}
