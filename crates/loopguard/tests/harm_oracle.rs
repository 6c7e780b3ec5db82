//! The harm oracle (issue 16): every shell fixture row the gate allows is run for real, exactly as
//! the hook answered it (wrapped in `loopguard exec`), in a throwaway copy of the fixture
//! workspace and a throwaway home holding canary credentials and protected files. The test fails
//! if a protected file changed or a canary's content turns up in any output or any other file.
//!
//! Safety: the runner (tests/e2e/harm-oracle.sh) runs under `unshare -Urmn` and makes every
//! mount but its own scratch directory read-only before the first row, and refuses to run if the
//! real file system still takes a write — so a row that escaped the sandbox under test still
//! cannot change anything real, even as root. The network is loopback only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{repo_root, write};

fn unescape(s: &str) -> String {
    s.replace("\\\\", "\u{1}").replace("\\n", "\n").replace('\u{1}', "\\")
}

#[test]
fn allowed_fixture_rows_run_for_real_change_no_protected_file_and_leak_no_canary() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().canonicalize().unwrap();
    let (home, ws, out) = (root.join("home"), root.join("ws"), root.join("outside"));
    let pristine = root.join("pristine");
    // Rows are decided against the same paths they later run in.
    let canary = |name: &str| format!("lgcanary-{name}-{}", std::process::id());
    let canaries = [canary("ssh"), canary("aws"), canary("netrc"), canary("env"), canary("envvar")];
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let files: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("crates/loopguard-core/tests/fixtures/shell/workspace.json"))
            .unwrap(),
    )
    .unwrap();
    for (f, text) in files["files"].as_object().unwrap() {
        write(&ws.join(f), text.as_str().unwrap());
    }
    write(&ws.join(".env"), &format!("API_SECRET={}\n", canaries[3]));
    write(&ws.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
    let git = Command::new("git").args(["init", "-q", "-b", "feature/work"]).current_dir(&ws).status().unwrap();
    assert!(git.success());
    write(&home.join(".ssh/id_rsa"), &format!("{}\n", canaries[0]));
    write(&home.join(".ssh/authorized_keys"), "ssh-ed25519 AAAAlegit user\n");
    write(&home.join(".aws/credentials"), &format!("[default]\naws_secret_access_key = {}\n", canaries[1]));
    write(&home.join(".netrc"), &format!("machine example.com password {}\n", canaries[2]));
    write(&home.join(".bashrc"), "# the user's shell setup\n");
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    write(&root.join("canaries"), &(canaries.join("\n") + "\n"));
    write(&root.join("env-canary"), &canaries[4]);

    // Ask the real hook about every row; keep the ones it allows, as it would run them.
    let rows_dir = root.join("rows");
    std::fs::create_dir_all(&rows_dir).unwrap();
    let fixtures = repo_root().join("crates/loopguard-core/tests/fixtures/shell");
    let mut tables: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
        .collect();
    tables.sort();
    let mut labels = Vec::new();
    for table in &tables {
        for (n, line) in std::fs::read_to_string(table).unwrap().lines().enumerate() {
            let mut cols = line.splitn(3, '\t');
            let (Some(verdict), Some(_), Some(cmd)) = (cols.next(), cols.next(), cols.next()) else { continue };
            if line.starts_with('#') || !matches!(verdict, "allow" | "confine") {
                continue;
            }
            let cmd = unescape(cmd)
                .replace("{ws}", ws.to_str().unwrap())
                .replace("{home}", home.to_str().unwrap())
                .replace("{out}", out.to_str().unwrap())
                .replace("{state}", root.join("state").to_str().unwrap());
            let ev = serde_json::json!({
                "session_id": format!("oracle-{}", labels.len()), "transcript_path": root.join("t.jsonl"),
                "cwd": ws, "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "t"
            });
            let answer = hook(&root, &home, &ev.to_string());
            let v: serde_json::Value = serde_json::from_str(answer.trim()).unwrap_or(serde_json::Value::Null);
            let h = &v["hookSpecificOutput"];
            if !(h.is_null() || h["permissionDecision"] == "allow") {
                continue; // the fixture says allow, gate_cases checks that; here only what runs matters
            }
            let run = h["updatedInput"]["command"].as_str().map(str::to_string);
            let run = run.unwrap_or_else(|| panic!("an allowed call was not wrapped in the sandbox: {cmd}"));
            let label = format!("{}:{}: {cmd}", table.file_name().unwrap().to_string_lossy(), n + 1);
            std::fs::write(rows_dir.join(format!("{:05}", labels.len())), run).unwrap();
            labels.push(label);
        }
    }
    assert!(labels.len() >= 300, "only {} allowed rows to run", labels.len());
    // Controls, run unconfined: the oracle must see their harm (else it could not fail).
    let controls = [
        ("control: unconfined write to ~/.bashrc", "echo pwned >> \"$HOME/.bashrc\""),
        ("control: unconfined read of ~/.ssh/id_rsa", "cat \"$HOME/.ssh/id_rsa\""),
        ("control: the environment's token copied", "echo \"$GITHUB_TOKEN\" > leaked.txt"),
    ];
    for (label, cmd) in controls {
        std::fs::write(rows_dir.join(format!("{:05}", labels.len())), cmd).unwrap();
        labels.push(label.to_string());
    }

    // The template each row starts from.
    std::fs::create_dir_all(&pristine).unwrap();
    for d in ["home", "ws"] {
        assert!(Command::new("cp").arg("-a").arg(root.join(d)).arg(pristine.join(d)).status().unwrap().success());
    }
    let results = tempfile::tempdir().unwrap();
    let status = Command::new("unshare")
        .args(["-Urmn", "bash"])
        .arg(repo_root().join("tests/e2e/harm-oracle.sh"))
        .arg(&root)
        .arg(&rows_dir)
        .arg(results.path())
        .status()
        .unwrap();
    assert!(status.success(), "the harm oracle's runner failed: {status}");

    let expected: Vec<String> = {
        // What the protected files hash to untouched (from the template).
        let list = [
            "home/.bashrc",
            "home/.ssh/authorized_keys",
            "home/.ssh/id_rsa",
            "home/.aws/credentials",
            "ws/.git/config",
            "ws/.git/hooks/pre-commit",
            "ws/.claude/settings.json",
            "ws/.loopguard/policy.toml",
            "ws/.env",
        ];
        list.iter()
            .map(|f| {
                let out = Command::new("sha256sum").arg(pristine.join(f)).output().unwrap();
                String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap_or("missing").to_string()
            })
            .collect()
    };
    let mut harms = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        let sums = std::fs::read_to_string(results.path().join(format!("{i:05}.sums"))).unwrap_or_default();
        let lines: Vec<&str> = sums.lines().collect();
        for (k, want) in expected.iter().enumerate() {
            if lines.get(k) != Some(&want.as_str()) {
                harms.push(format!("{label}: protected file #{k} changed ({:?})", lines.get(k)));
            }
        }
        for leak in lines.iter().filter(|l| l.starts_with("leak ")) {
            harms.push(format!("{label}: a canary was copied to {leak}"));
        }
        for stream in ["out", "err"] {
            let text = std::fs::read_to_string(results.path().join(format!("{i:05}.{stream}"))).unwrap_or_default();
            if let Some(c) = canaries.iter().find(|c| text.contains(c.as_str())) {
                harms.push(format!("{label}: the canary {c} appeared in its std{stream}"));
            }
        }
    }
    let (control, real): (Vec<String>, Vec<String>) = harms.into_iter().partition(|h| h.starts_with("control: "));
    for (label, _) in controls {
        assert!(
            control.iter().any(|h| h.starts_with(label)),
            "the oracle missed its own control `{label}`: {control:?}"
        );
    }
    assert!(
        real.is_empty(),
        "{} of {} allowed rows did harm:\n{}",
        real.len(),
        labels.len() - controls.len(),
        real.join("\n")
    );
}

/// The hook's answer for one event, with the sandbox's HOME and state home.
fn hook(root: &Path, home: &Path, event: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .args(["hook", "claude-code", "--deadline-ms", "60000"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LOOPGUARD_HOME", root.join("state"))
        .env("LOOPGUARD_EFFECTS", "manual")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(event.as_bytes()).unwrap();
    String::from_utf8_lossy(&child.wait_with_output().unwrap().stdout).into_owned()
}
