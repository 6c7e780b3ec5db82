//! Runs every row of every tests/fixtures/shell/*.tsv through the gate and reports all failures.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use loopguard_core::Verdict;
use loopguard_test_support::{Failures, tsv};
use std::path::Path;

#[test]
fn shell_fixture_cases() {
    // Not under /tmp: the rows' `{out}` is "outside the workspace", and deleting below the system
    // temp directory is allowed unattended.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = root.path().join("home").join("dev");
    let ws = home.join("work").join("project");
    let out = root.path().join("elsewhere");
    for d in [&ws, &home, &out] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let git =
        std::process::Command::new("git").args(["init", "-q", "-b", "feature/work"]).current_dir(&ws).status().unwrap();
    assert!(git.success());
    // The fixture workspace's files (shared with the harm oracle in crates/loopguard).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shell");
    let files: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("workspace.json")).unwrap()).unwrap();
    for (f, text) in files["files"].as_object().unwrap() {
        std::fs::create_dir_all(ws.join(f).parent().unwrap()).unwrap();
        std::fs::write(ws.join(f), text.as_str().unwrap()).unwrap();
    }
    let state = root.path().join("state");
    let user_policy = home.join(".config/loopguard/policy.toml");
    // Unattended, with the kernel sandbox in use (the default where the kernel can confine).
    let decider = common::Decider::new();
    let params = common::Params {
        home: Some(home.clone()),
        state: Some(state.clone()),
        user_policy: Some(user_policy),
        confinement: true,
        ..common::Params::new(&ws)
    };
    let mut failures = Failures::new();
    let mut rows = 0;
    for file in tsv::files(&dir).unwrap() {
        for row in tsv::read(&file, 3).unwrap() {
            let (verdict, code, cmd) = (row.get(0), row.get(1), row.get(2));
            rows += 1;
            let cmd = cmd
                .replace("{ws}", ws.to_str().unwrap())
                .replace("{home}", home.to_str().unwrap())
                .replace("{out}", out.to_str().unwrap())
                .replace("{state}", state.to_str().unwrap());
            let d = decider.decide(
                &params,
                "Bash",
                loopguard_core::Action::Shell { command: cmd.to_string() },
                serde_json::json!({ "command": cmd }),
            );
            // `block`: ask or deny; `confine`: allowed only inside the sandbox; `allow`: allowed
            // and understood (no confinement needed); `*`: any first reason code.
            let verdict_ok = match verdict {
                "block" => d.verdict != Verdict::Allow,
                "confine" => d.verdict == Verdict::Allow && d.confine,
                "allow" => d.verdict == Verdict::Allow && !d.confine,
                "pass" => d.verdict == Verdict::Allow,
                v => d.verdict == Verdict::parse(v).unwrap(),
            };
            let got_code = d.first_code();
            if !verdict_ok || (code != "*" && got_code != code) {
                failures.at(
                    &row,
                    format_args!(
                        "`{}`: want {verdict} {code}, got {}{} {got_code} ({})",
                        cmd.escape_debug(),
                        d.verdict.as_str(),
                        if d.confine { " (confined)" } else { "" },
                        d.explain.replace('\n', " ")
                    ),
                );
            }
        }
    }
    assert!(rows >= 400, "only {rows} rows read");
    failures.check(rows);
}
