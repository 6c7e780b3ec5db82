//! Runs every row of tests/fixtures/calls/*.tsv through the gate: calls of every kind of tool
//! (host-neutral actions), in every execution mode, under the built-in policy or a policy file of
//! that directory. The shell tables (gate_cases.rs) go deep on commands; this one goes wide.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use loopguard_core::{Action, Change, Edit, ExecutionMode, Verdict};
use loopguard_test_support::{Failures, tsv};
use std::path::Path;

fn mode(s: &str) -> Option<ExecutionMode> {
    Some(match s {
        "normal" => ExecutionMode::Normal,
        "auto-edit" => ExecutionMode::AutoEdit,
        "plan" => ExecutionMode::Plan,
        "unattended" => ExecutionMode::Unattended,
        "yolo" => ExecutionMode::Yolo,
        _ => return None,
    })
}

/// `kind|arg|…` → the action, or `None` when the row is malformed.
fn action(text: &str) -> Option<Action> {
    let mut parts = text.splitn(2, '|');
    let (kind, rest) = (parts.next()?, parts.next().unwrap_or(""));
    let args: Vec<&str> = rest.split('|').collect();
    let arg = |i: usize| args.get(i).map(|s| s.to_string());
    Some(match kind {
        "shell" => Action::Shell { command: rest.to_string() },
        "write" => Action::WriteFile { path: arg(0)?, change: Change::Whole(arg(1)?) },
        "edit" => Action::WriteFile {
            path: arg(0)?,
            change: Change::Edits(vec![Edit { old: arg(1)?, new: arg(2)?, all: false }]),
        },
        "read" => Action::ReadFile { path: arg(0) },
        "search" => Action::Search { path: arg(0), content_glob: arg(1) },
        "fetch" => Action::Fetch { url: arg(0) },
        "websearch" => Action::WebSearch,
        "mcp" => Action::Mcp { server: arg(0)?, tool: arg(1)? },
        "agent" => Action::Agent,
        "meta" => Action::Meta,
        "unknown" => Action::Unknown,
        _ => return None,
    })
}

/// The input a host would have sent for the action (scanned for secrets like the real one).
fn input(action: &Action) -> serde_json::Value {
    match action {
        Action::Shell { command } => serde_json::json!({ "command": command }),
        Action::WriteFile { path, change: Change::Whole(c) } => serde_json::json!({ "path": path, "content": c }),
        Action::WriteFile { path, change: Change::Edits(e) } => {
            serde_json::json!({ "path": path, "old": e[0].old, "new": e[0].new })
        }
        Action::ReadFile { path } | Action::Search { path, .. } => serde_json::json!({ "path": path }),
        Action::Fetch { url } => serde_json::json!({ "url": url }),
        _ => serde_json::json!({}),
    }
}

#[test]
fn every_kind_of_call_in_every_mode() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = root.path().join("home").join("dev");
    let ws = home.join("work").join("project");
    let out = root.path().join("elsewhere");
    for d in [&ws.join("src"), &home.join(".ssh"), &out] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(ws.join("README.md"), "# project\n").unwrap();
    std::fs::write(ws.join(".env"), "TOKEN=x\n").unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "key\n").unwrap();
    let git = std::process::Command::new("git").args(["init", "-q", "-b", "feature/work"]).current_dir(&ws).status();
    assert!(git.unwrap().success());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/calls");
    let state = root.path().join("state");
    let decider = common::Decider::new();
    let mut failures = Failures::new();
    let mut n = 0;
    for file in tsv::files(&dir).unwrap() {
        for row in tsv::read(&file, 6).unwrap() {
            n += 1;
            let fill = |s: &str| {
                s.replace("{ws}", ws.to_str().unwrap())
                    .replace("{home}", home.to_str().unwrap())
                    .replace("{out}", out.to_str().unwrap())
            };
            let (Some(m), Some(act)) = (mode(row.get(2)), action(&fill(row.get(5)))) else {
                failures.at(&row, "malformed mode or action");
                continue;
            };
            let policy = match row.get(3) {
                "-" => None,
                f => {
                    let path = dir.join(f);
                    let text = std::fs::read_to_string(&path).unwrap();
                    Some((path, text))
                }
            };
            let params = common::Params {
                home: Some(home.clone()),
                mode: m,
                state: Some(state.clone()),
                policy,
                ..common::Params::new(&ws)
            };
            let d = decider.decide(&params, row.get(4), act.clone(), input(&act));
            let (verdict, code) = (row.get(0), row.get(1));
            let verdict_ok = match verdict {
                "block" => d.verdict != Verdict::Allow,
                v => Verdict::parse(v).is_some_and(|v| v == d.verdict),
            };
            let got = d.first_code();
            if !verdict_ok || (code != "*" && got != code) {
                failures.at(
                    &row,
                    format_args!(
                        "{} {}: want {verdict} {code}, got {} {got} ({})",
                        row.get(2),
                        row.get(5),
                        d.verdict.as_str(),
                        d.explain.replace('\n', " ")
                    ),
                );
            }
        }
    }
    assert!(n >= 30, "only {n} rows");
    failures.check(n);
}
