//! Dry-run previews (issue 11) through the binary: a command simulated in the copy-on-write
//! sandbox leaves the workspace intact, writes outside it are reported blocked, edits are diffs,
//! a batch sees earlier edits, the fallback is labelled a prediction, and a high-risk ask
//! carries the preview to the human.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::Sandbox;
use serde_json::{Value, json};

fn project(sb: &Sandbox) {
    sb.write("src/main.rs", "fn main() {}\n");
    sb.write("src/util/mod.rs", "pub fn util() {}\n");
    sb.write("README.md", "hello\n");
}

fn preview_json(sb: &Sandbox, args: &[&str], stdin: &str) -> Value {
    let mut a = vec!["preview", "--json"];
    a.extend_from_slice(args);
    let (code, out, err) = sb.run(&a, stdin);
    assert_eq!(code, 0, "{out}{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn previewing_rm_rf_src_lists_the_deleted_files_and_leaves_the_workspace_intact() {
    let sb = Sandbox::new();
    project(&sb);
    let v = preview_json(&sb, &["--command", "rm -rf src && echo bye >> README.md && touch NEW"], "");
    assert_eq!(v["method"], "simulated", "{v}");
    assert_eq!(v["exit_code"], 0);
    let changes: Vec<(String, String)> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["path"].as_str().unwrap().to_string(), c["change"].as_str().unwrap().to_string()))
        .collect();
    let s = |p: &str, c: &str| (p.to_string(), c.to_string());
    assert_eq!(
        changes,
        [s("NEW", "created"), s("README.md", "modified"), s("src/main.rs", "deleted"), s("src/util/mod.rs", "deleted")]
    );
    let readme = v["changes"].as_array().unwrap().iter().find(|c| c["path"] == "README.md").unwrap();
    assert!(readme["diff"].as_str().unwrap().contains("+bye"), "{readme}");
    // Nothing happened for real.
    assert!(sb.ws.join("src/main.rs").exists() && sb.ws.join("src/util/mod.rs").exists());
    assert_eq!(std::fs::read_to_string(sb.ws.join("README.md")).unwrap(), "hello\n");
    assert!(!sb.ws.join("NEW").exists());
}

#[test]
fn writes_outside_the_workspace_are_reported_blocked_and_do_not_happen() {
    let sb = Sandbox::new();
    project(&sb);
    let outside = sb.home.join("outside.txt");
    let v = preview_json(&sb, &["--command", &format!("echo x > {} ; echo done", outside.display())], "");
    assert_eq!(v["blocked"], json!([outside.display().to_string()]), "{v}");
    assert!(v["output"].as_str().unwrap().contains("Permission denied"), "the kernel refused it: {v}");
    assert!(!outside.exists());
    // A Write tool call outside the workspace too.
    let call = json!({"tool_name": "Write", "tool_input": {"file_path": outside, "content": "x"}}).to_string();
    let v = preview_json(&sb, &["--call", &call], "");
    assert_eq!(v["blocked"], json!([outside.display().to_string()]));
    assert_eq!(v["changes"], json!([]));
    // The network is reported from the analysis; the simulation has none.
    let v = preview_json(&sb, &["--command", "curl -s https://example.com -o page.html"], "");
    assert_eq!(v["network"], true);
    assert_ne!(v["exit_code"], 0, "no network in the simulation: {v}");
}

#[test]
fn a_batch_of_edits_is_previewed_together() {
    let sb = Sandbox::new();
    project(&sb);
    let main = sb.ws.join("src/main.rs");
    let calls = [
        json!({"tool_name": "Edit", "tool_input": {"file_path": main, "old_string": "fn main() {}", "new_string": "fn main() {\n    run();\n}"}}),
        json!({"tool_name": "Edit", "tool_input": {"file_path": main, "old_string": "    run();", "new_string": "    run(1);"}}),
        json!({"tool_name": "Write", "tool_input": {"file_path": sb.ws.join("src/new.rs"), "content": "pub fn run(_: u8) {}\n"}}),
    ];
    let stdin = calls.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("\n");
    let v = preview_json(&sb, &["--call", "-"], &stdin);
    let v = v.as_array().unwrap();
    assert_eq!(v.len(), 3);
    // The second edit applies to the first one's result.
    assert!(v[1]["changes"][0]["diff"].as_str().unwrap().contains("+    run(1);"), "{}", v[1]);
    assert_eq!(v[2]["changes"][0]["change"], "created");
    assert_eq!(std::fs::read_to_string(&main).unwrap(), "fn main() {}\n", "untouched");
    // The terminal form: numbered, with a total.
    let (code, out, _) = sb.run(&["preview", "--call", "-"], &stdin);
    assert_eq!(code, 0);
    assert!(out.starts_with("[1] Edit: src/main.rs") && out.contains("3 calls, 2 files changed in all"), "{out}");
    // An edit that does not apply is an error, not an empty diff.
    let bad = json!({"tool_name": "Edit", "tool_input": {"file_path": main, "old_string": "nope", "new_string": "x"}});
    let (code, _, err) = sb.run(&["preview", "--call", &bad.to_string()], "");
    assert_eq!(code, 2);
    assert!(err.contains("does not apply"), "{err}");
}

#[test]
fn when_the_simulation_is_impossible_the_prediction_is_labelled() {
    let sb = Sandbox::new();
    // Overlay options cannot name a path with a comma: this workspace cannot be simulated.
    let ws = sb.home.join("odd,name");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join("a.txt"), "a").unwrap();
    let out =
        sb.command(&["preview", "--json", "--command", "rm a.txt; echo b > b.txt"]).current_dir(&ws).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["method"], "predicted", "{v}");
    assert!(v["why"].as_str().unwrap().contains("overlay"), "{v}");
    let paths: Vec<&str> = v["changes"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["a.txt", "b.txt"], "{v}");
    let text = sb.command(&["preview", "--command", "rm a.txt"]).current_dir(&ws).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("prediction only"));
    assert!(ws.join("a.txt").exists());
}

/// The project committed in a real repository, with an uncommitted edit of `src/main.rs`.
fn work_in_progress(sb: &Sandbox) {
    project(sb);
    std::fs::remove_dir_all(sb.ws.join(".git")).unwrap();
    let git = |args: &[&str]| common::git(&sb.ws, args);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    sb.write("src/main.rs", "fn main() { println!(\"unsaved work\"); }\n");
}

#[test]
fn a_high_risk_ask_carries_a_preview_for_the_human() {
    let sb = Sandbox::new();
    work_in_progress(&sb);
    // Discarding uncommitted work asks (high risk); the human sees what it would undo.
    let out = sb.pre("s", "Bash", json!({"command": "git checkout -- src/main.rs"}));
    let (v, r) = common::decision(&out).unwrap();
    assert_eq!(v, "ask", "{r}");
    assert!(r.contains("\nPreview: 1 modified (src/main.rs)") && r.contains("simulated, exit 0"), "{r}");
    assert!(std::fs::read_to_string(sb.ws.join("src/main.rs")).unwrap().contains("unsaved work"));
}

#[test]
fn a_preview_cannot_reach_daemons_through_their_sockets() {
    let mut sb = Sandbox::new();
    project(&sb);
    sb.extra_env.push(("SSH_AUTH_SOCK".into(), "/tmp/ssh-agent.sock".into()));
    sb.extra_env.push(("DOCKER_HOST".into(), "unix:///var/run/docker.sock".into()));
    let v = preview_json(
        &sb,
        &["--command", "ls -A /run | wc -l > run.txt; echo \"${SSH_AUTH_SOCK:-none} ${DOCKER_HOST:-none}\" > env.txt"],
        "",
    );
    let diff = |p: &str| {
        v["changes"].as_array().unwrap().iter().find(|c| c["path"] == p).unwrap()["diff"].as_str().unwrap().to_string()
    };
    assert!(diff("run.txt").contains("\n+0\n"), "/run is an empty tmpfs in the preview: {v}");
    assert!(diff("env.txt").contains("\n+none none\n"), "{v}");
}

#[test]
fn a_simulated_kill_cannot_reach_a_real_process() {
    let sb = Sandbox::new();
    project(&sb);
    let mut victim = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let v = preview_json(&sb, &["--command", &format!("kill -9 {}; echo $? > code.txt", victim.id())], "");
    assert_eq!(v["method"], "simulated", "{v}");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(victim.try_wait().unwrap().is_none(), "the real process was killed by a preview: {v}");
    let code = v["changes"].as_array().unwrap().iter().find(|c| c["path"] == "code.txt").unwrap();
    assert!(code["diff"].as_str().unwrap().contains("\n+1\n"), "kill failed inside: {code}");
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn a_preview_writes_no_device_but_the_harmless_ones() {
    let sb = Sandbox::new();
    project(&sb);
    let v = preview_json(
        &sb,
        &[
            "--command",
            "echo x > /dev/null && echo ok > a.txt; echo y > /dev/shm/loopguard-preview-test; echo $? > b.txt",
        ],
        "",
    );
    let diff = |p: &str| {
        v["changes"].as_array().unwrap().iter().find(|c| c["path"] == p).unwrap()["diff"].as_str().unwrap().to_string()
    };
    assert!(diff("a.txt").contains("\n+ok\n"), "{v}");
    assert!(diff("b.txt").contains("\n+1\n"), "{v}");
    assert!(!std::path::Path::new("/dev/shm/loopguard-preview-test").exists());
}

#[test]
fn a_write_through_a_symlink_that_leads_out_is_reported_blocked() {
    let sb = Sandbox::new();
    project(&sb);
    let outside = sb.home.join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, sb.ws.join("link")).unwrap();
    let call = json!({"tool_name": "Write", "tool_input": {"file_path": sb.ws.join("link/x.txt"), "content": "x"}});
    let v = preview_json(&sb, &["--call", &call.to_string()], "");
    assert_eq!(v["blocked"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["changes"], json!([]));
}

#[test]
fn the_user_can_turn_the_hook_preview_off_but_a_project_policy_cannot() {
    let sb = Sandbox::new();
    project(&sb);
    let ask = |s: &str| {
        let out = sb.pre(s, "Bash", json!({"command": "git branch -D feature"}));
        let (v, r) = common::decision(&out).unwrap();
        assert_eq!(v, "ask", "{r}");
        r
    };
    assert!(ask("s1").contains("\nPreview: "));
    sb.write(".loopguard/policy.toml", "[preview]\nin_hook = false\n");
    let (v, r) = common::decision(&sb.pre("s2", "Bash", json!({"command": "ls"}))).unwrap();
    assert_eq!(v, "deny", "a project policy that tries is invalid: {r}");
    assert!(r.contains("preview.in_hook = false may only be set in the user policy"), "{r}");
    std::fs::remove_file(sb.ws.join(".loopguard/policy.toml")).unwrap();
    sb.user_policy("[preview]\nin_hook = false\n");
    assert!(!ask("s3").contains("Preview:"));
}

/// A preview is advice: one that outlives its budget — here a command under `timeout`, which
/// puts itself in a process group of its own — is cut off, the call is decided without it, and
/// nothing it started is left running.
#[test]
fn a_preview_that_overruns_is_cut_off_with_everything_it_started() {
    use std::os::unix::fs::PermissionsExt;
    let mut sb = Sandbox::new();
    work_in_progress(&sb);
    // A `git` whose checkout hangs (everything else is the real git, which the hook also asks).
    let real =
        String::from_utf8(std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap().stdout)
            .unwrap();
    let marker = format!("{}", 40_000 + std::process::id() % 20_000);
    let bin = sb.root.path().join("slowbin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("git"),
        format!("#!/bin/sh\nif [ \"$1\" = checkout ]; then exec sleep {marker}; fi\nexec {} \"$@\"\n", real.trim()),
    )
    .unwrap();
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.extra_env.push(("PATH".into(), format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())));
    let ev = json!({
        "session_id": "s", "transcript_path": sb.root.path().join("s.jsonl"), "cwd": sb.ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": { "command": "timeout 120 git checkout -- src/main.rs" }, "tool_use_id": "toolu_1"
    });
    // A deadline far beyond the preview's budget: the answer must come from the gate, not the
    // watchdog, however loaded the machine is.
    let out = sb.hook_with(&["--deadline-ms", "20000"], ev.to_string().as_bytes());
    let (v, r) = common::decision(&out).unwrap();
    assert_eq!(v, "ask", "{r}");
    assert!(!r.contains("hook-deadline-exceeded"), "{r}");
    // Nothing the preview started outlives it (every process of its session is killed).
    let alive = || {
        std::fs::read_dir("/proc").unwrap().filter_map(Result::ok).any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim() == format!("sleep {marker}"))
        })
    };
    let t = std::time::Instant::now();
    while alive() && t.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(), "a process the preview started is still running");
    assert!(std::fs::read_to_string(sb.ws.join("src/main.rs")).unwrap().contains("unsaved work"));
}
