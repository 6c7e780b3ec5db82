//! End to end with the real Codex CLI, Gemini CLI and Copilot CLI — each at the versions pinned in
//! tests/e2e/host-versions.env — driven by a scripted mock of its model API
//! (tests/e2e/mock_models.py), inside a loopback-only network namespace (`unshare -rn`), with
//! loopguard's hooks installed by `loopguard install <host>` into a temporary HOME and nothing
//! else: no trust-bypass flag, so each test also proves that the installer makes the host run
//! the hooks.
//!
//! Needs the CLIs installed by `scripts/test.sh`. Missing prerequisites fail the test; set
//! LOOPGUARD_SKIP_E2E=1 to skip it knowingly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::{Sandbox, pinned, repo_root};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One pinned host CLI, with how its model names the shell tool.
struct Cli {
    host: &'static str,
    bin: PathBuf,
    /// A shell tool call as this host's model makes it.
    shell: fn(&str) -> Value,
    /// The host blocks the call when its hook crashes (exit 1).
    crash_blocks: bool,
    /// What `loopguard install <host>` is given besides (Copilot's `--form camel`).
    install: &'static [&'static str],
}

fn cli(host: &'static str, key: &str) -> Option<Cli> {
    if std::env::var_os("LOOPGUARD_SKIP_E2E").is_some() {
        return None;
    }
    let version = pinned(key);
    let (dir, bin): (&str, &str) = match host {
        "codex" => ("codex", "codex"),
        "gemini" => ("gemini-cli", "gemini"),
        _ => ("copilot", "copilot"),
    };
    let bin = repo_root().join(format!("target/e2e-tools/{dir}-{version}/node_modules/.bin/{bin}"));
    assert!(
        bin.exists(),
        "{host} {version} is not at {} — run `bash scripts/test.sh` (it installs it), or set LOOPGUARD_SKIP_E2E=1",
        bin.display()
    );
    let shell: fn(&str) -> Value = match host {
        "codex" => |c| json!({"tool": "exec_command", "input": {"cmd": c}}),
        "gemini" => |c| json!({"tool": "run_shell_command", "input": {"command": c}}),
        _ => |c| json!({"tool": "bash", "input": {"command": c, "description": "step"}}),
    };
    // As observed (docs/hosts/<host>.md): only Copilot blocks a call whose hook exits 1.
    Some(Cli { host, bin, shell, crash_blocks: host == "copilot", install: &[] })
}

/// Copilot with its hooks registered camelCase (`install copilot --form camel`).
fn camel(key: &str) -> Option<Cli> {
    cli("copilot", key).map(|c| Cli { install: &["--form", "camel"], ..c })
}

/// Every scenario, once per host and pinned version (a version pinned as both oldest and newest
/// runs once).
macro_rules! on_every_host {
    ($($name:ident),* $(,)?) => {
        mod codex {
            $( #[test] fn $name() { if let Some(c) = super::cli("codex", "CODEX_NEWEST") { super::$name(&c) } } )*
        }
        mod gemini {
            $( #[test] fn $name() { if let Some(c) = super::cli("gemini", "GEMINI_CLI_NEWEST") { super::$name(&c) } } )*
        }
        mod copilot {
            $( #[test] fn $name() { if let Some(c) = super::cli("copilot", "COPILOT_NEWEST") { super::$name(&c) } } )*
        }
        mod copilot_camel {
            $( #[test] fn $name() { if let Some(c) = super::camel("COPILOT_NEWEST") { super::$name(&c) } } )*
        }
        mod oldest {
            $( #[test] fn $name() {
                for (host, old, new) in [
                    ("codex", "CODEX_OLDEST", "CODEX_NEWEST"),
                    ("gemini", "GEMINI_CLI_OLDEST", "GEMINI_CLI_NEWEST"),
                    ("copilot", "COPILOT_OLDEST", "COPILOT_NEWEST"),
                ] {
                    if super::pinned(old) != super::pinned(new) {
                        if let Some(c) = super::cli(host, old) { super::$name(&c) }
                    }
                }
                if super::pinned("COPILOT_OLDEST") != super::pinned("COPILOT_NEWEST") {
                    if let Some(c) = super::camel("COPILOT_OLDEST") { super::$name(&c) }
                }
            } )*
        }
    };
}

on_every_host!(
    denied_call_does_not_run_and_allowed_call_runs,
    a_secret_in_command_output_does_not_reach_the_model,
    a_crashing_hook_is_handled_as_the_host_allows,
    a_stuck_loopguard_answers_deny_at_its_deadline,
);

/// Copilot only, in both registration forms, each pinned version (a version pinned as both
/// oldest and newest runs once): an allowed shell call runs with the rewritten arguments, and a
/// secret in a file read with `view` (not a shell call: no `loopguard exec` to redact it) is
/// replaced in the result (`modifiedResult`).
mod copilot_forms {
    fn each(key: &str, scenario: fn(&super::Cli)) {
        for c in [super::cli("copilot", key), super::camel(key)].into_iter().flatten() {
            scenario(&c)
        }
    }
    #[test]
    fn a_confined_call_runs_inside_loopguard_exec() {
        each("COPILOT_NEWEST", super::a_confined_call_runs_inside_loopguard_exec)
    }
    #[test]
    fn a_secret_in_a_viewed_file_does_not_reach_the_model() {
        each("COPILOT_NEWEST", super::a_secret_in_a_viewed_file_does_not_reach_the_model)
    }
    #[test]
    fn oldest() {
        if super::pinned("COPILOT_OLDEST") != super::pinned("COPILOT_NEWEST") {
            each("COPILOT_OLDEST", super::a_confined_call_runs_inside_loopguard_exec);
            each("COPILOT_OLDEST", super::a_secret_in_a_viewed_file_does_not_reach_the_model);
        }
    }
}

struct Run {
    /// Every request the model API received.
    requests: Vec<Value>,
    stderr: String,
}

impl Run {
    /// Every request body, as text.
    fn seen_by_model(&self) -> String {
        self.requests.iter().map(|r| r["body"].to_string()).collect::<Vec<_>>().join("\n")
    }
}

/// The sandbox's environment for the host: its homes under the sandbox HOME.
fn host_env(sb: &Sandbox) -> Vec<(String, String)> {
    let home = sb.home.to_string_lossy().into_owned();
    vec![
        ("CODEX_HOME".into(), format!("{home}/.codex")),
        ("COPILOT_HOME".into(), format!("{home}/.copilot")),
        // Copilot unpacks itself (235 MB) into its cache on first run: share it between tests.
        ("XDG_CACHE_HOME".into(), repo_root().join("target/e2e-tools/xdg-cache").to_string_lossy().into_owned()),
    ]
}

/// Installs loopguard (the binary `exe`) for the host into the sandbox HOME, lets `edit` run,
/// and runs the host with `script`.
fn run_host(sb: &Sandbox, cli: &Cli, script: Value, exe: &Path, edit: impl FnOnce()) -> Run {
    let env = host_env(sb);
    if cli.host == "gemini" {
        // What the Gemini API key mode and an offline run need; `install` keeps it.
        common::write(
            &sb.home.join(".gemini/settings.json"),
            &json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false}
            })
            .to_string(),
        );
    }
    std::fs::create_dir_all(sb.home.join(".codex")).unwrap();
    let mut inst = Command::new(exe);
    inst.args(["install", cli.host])
        .args(cli.install)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("LOOPGUARD_HOME", &sb.state)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&sb.ws);
    let inst = inst.output().unwrap();
    assert!(inst.status.success(), "{}", String::from_utf8_lossy(&inst.stderr));
    if cli.install.contains(&"camel") {
        // Registered camelCase, so Copilot sends the payload with no event name in it.
        let hooks = std::fs::read_to_string(sb.home.join(".copilot/hooks/loopguard.json")).unwrap();
        assert!(hooks.contains("\"preToolUse\"") && !hooks.contains("\"PreToolUse\""), "{hooks}");
    }
    edit();
    let out = sb.root.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let script_path = sb.root.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let status = Command::new("unshare")
        .args(["-rn", "bash"])
        .arg(repo_root().join("tests/e2e/run-host.sh"))
        .arg(cli.host)
        .args([cli.bin.as_os_str(), script_path.as_os_str(), sb.ws.as_os_str(), out.as_os_str()])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("LOOPGUARD_HOME", &sb.state)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .status()
        .unwrap();
    assert!(status.success(), "run-host.sh failed: {status}");
    let requests = std::fs::read_to_string(out.join("requests.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let stderr = std::fs::read_to_string(out.join("host.err")).unwrap_or_default()
        + &std::fs::read_to_string(out.join("host.out")).unwrap_or_default();
    Run { requests, stderr }
}

fn deny_rm_build(sb: &Sandbox) {
    sb.write("build/artifact.bin", "release bits");
    sb.write(
        ".loopguard/policy.toml",
        r#"[[commands]]
code = "no-rm-build"
program = "rm"
flags = ["r"]
args = ["build"]
decision = "deny"
message = "build/ holds the release artifacts; do not delete it."
match = ["rm -r build"]
"#,
    );
}

fn denied_call_does_not_run_and_allowed_call_runs(cli: &Cli) {
    let sb = Sandbox::new();
    deny_rm_build(&sb);
    // `rm -r`, not `rm -rf`: Codex refuses `rm -f`-style commands itself, after the hook.
    let run = run_host(
        &sb,
        cli,
        json!([(cli.shell)("rm -r build"), (cli.shell)("echo hi > out.txt"), {"text": "finished"}]),
        Path::new(env!("CARGO_BIN_EXE_loopguard")),
        || {},
    );
    assert!(sb.ws.join("build/artifact.bin").exists(), "{}: the denied rm ran; {}", cli.host, run.stderr);
    assert_eq!(
        std::fs::read_to_string(sb.ws.join("out.txt")).unwrap_or_default(),
        "hi\n",
        "{}: the allowed echo did not run; {}",
        cli.host,
        run.stderr
    );
    // The model was told why, in the host's words around loopguard's reason.
    let seen = run.seen_by_model();
    assert!(seen.contains("[no-rm-build]") && seen.contains("release artifacts"), "{}: {seen}", cli.host);

    let (code, text, err) = sb.run(&["audit", "verify", "--all"], "");
    assert!(code == 0 && text.contains("chain intact"), "{text}{err}");
    let (_, tail, _) = sb.run(&["audit", "tail", "--all", "--json"], "");
    let events: Vec<Value> = tail.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let calls: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["kind"] == "pre-tool-use")
        .map(|e| (e["decision"].as_str().unwrap(), e["details"]["host"].as_str().unwrap_or("")))
        .collect();
    assert!(calls.contains(&("deny", cli.host)), "{calls:?}");
    assert!(calls.contains(&("allow", cli.host)), "{calls:?}");
    assert!(events.iter().any(|e| e["kind"] == "post-tool-use"), "{tail}");
}

fn a_secret_in_command_output_does_not_reach_the_model(cli: &Cli) {
    let sb = Sandbox::new();
    // Built at run time so the source holds no literal key.
    let key = format!("AKIA{}", "Q7RZ2M5K3W6X4N2P");
    sb.write("notes.txt", &format!("deploy notes\naws_access_key_id = {key}\n"));
    let exe = Path::new(env!("CARGO_BIN_EXE_loopguard"));
    let run = run_host(&sb, cli, json!([(cli.shell)("cat notes.txt"), {"text": "finished"}]), exe, || {});
    let seen = run.seen_by_model();
    assert!(run.requests.len() >= 2, "{}: the model got no result back; {}", cli.host, run.stderr);
    assert!(!seen.contains(&key), "{}: the key reached the model", cli.host);
    assert!(seen.contains("REDACTED:aws-access-key-id"), "{}: {seen}", cli.host);
}

/// loopguard's binary, installed as usual, then replaced by one that crashes (exit 1) — the
/// configuration (and Codex's trust in it) unchanged: Copilot blocks the call; Codex and Gemini
/// CLI run it (they fail open on a crashing hook, and loopguard cannot change that:
/// docs/hosts/<host>.md). Pinned so that a change in the host shows.
fn a_crashing_hook_is_handled_as_the_host_allows(cli: &Cli) {
    let sb = Sandbox::new();
    let exe = sb.root.path().join("bin/loopguard");
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_loopguard"), &exe).unwrap();
    let script = json!([(cli.shell)("echo hi > out.txt"), {"text": "finished"}]);
    let run = run_host(&sb, cli, script, &exe, || {
        std::fs::remove_file(&exe).unwrap();
        std::fs::write(&exe, "#!/bin/sh\necho 'loopguard: broken on purpose' >&2\nexit 1\n").unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    });
    let ran = sb.ws.join("out.txt").exists();
    assert_eq!(!ran, cli.crash_blocks, "{}: ran={ran}; {}", cli.host, run.stderr);
}

/// loopguard stuck for the whole run — its workspace state held locked by another process, so
/// every tool call waits on the lock — is answered by loopguard's own deadline (2 s, under the
/// host's 10 s timeout) with a deny in the host's protocol: the call does not run, in every host.
fn a_stuck_loopguard_answers_deny_at_its_deadline(cli: &Cli) {
    let sb = Sandbox::new();
    // One call first, so that the workspace's state file exists.
    let ls = json!({"session_id": "warm-up", "cwd": sb.ws, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let warm = sb.run_hook("codex", &[], ls.to_string().as_bytes());
    assert_eq!(warm.status.code(), Some(0), "{}", sb.render(&warm));
    let state = loopguard::hot::dir(&sb.state).join(format!("{}.state", loopguard::state::workspace_key(&sb.ws)));
    assert!(state.exists(), "{}", state.display());
    let mut holder = Command::new("flock").arg(&state).args(["sleep", "300"]).spawn().unwrap();
    // Held once a non-blocking attempt fails.
    let held = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(25));
        !Command::new("flock").args(["-n"]).arg(&state).arg("true").status().unwrap().success()
    });
    assert!(held, "the lock was never taken");
    let run = run_host(
        &sb,
        cli,
        json!([(cli.shell)("echo hi > out.txt"), {"text": "finished"}]),
        Path::new(env!("CARGO_BIN_EXE_loopguard")),
        || {},
    );
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(!sb.ws.join("out.txt").exists(), "{}: a stuck loopguard let the call run; {}", cli.host, run.stderr);
    // The model was told why, in the host's words around loopguard's reason.
    let seen = run.seen_by_model();
    assert!(seen.contains("[hook-deadline-exceeded]"), "{}: {seen}", cli.host);
}

/// An allowed shell call runs confined: Copilot runs the arguments loopguard rewrote
/// (`hookSpecificOutput.updatedInput` PascalCase, `modifiedArgs` camelCase), so the command runs
/// inside `loopguard exec`, whose kernel sandbox refuses a write outside the workspace that the
/// analysis cannot see (a copy through a Python library), while a write inside goes through.
fn a_confined_call_runs_inside_loopguard_exec(cli: &Cli) {
    let sb = Sandbox::new();
    // Outside the workspace and outside /tmp.
    let outside_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = outside_dir.path().join("escaped.txt");
    let sneaky = format!("python3 -c \"import shutil; shutil.copyfile('/etc/hostname', '{}')\"", outside.display());
    let run = run_host(
        &sb,
        cli,
        json!([(cli.shell)(&sneaky), (cli.shell)("echo hi > inside.txt"), {"text": "finished"}]),
        Path::new(env!("CARGO_BIN_EXE_loopguard")),
        || {},
    );
    assert_eq!(
        std::fs::read_to_string(sb.ws.join("inside.txt")).unwrap_or_default(),
        "hi\n",
        "{:?}: the confined echo did not run; {}",
        cli.install,
        run.stderr
    );
    assert!(!outside.exists(), "{}: the write escaped: the call ran unconfined; {}", cli.host, run.stderr);
    // The python call was allowed (confined), ran, and the kernel refused its write: Python's
    // own error (the file system outside the workspace is a read-only mount in the sandbox), not
    // Copilot's permission layer ("no interactive user response") nor a hook deny.
    let seen = run.seen_by_model();
    assert!(seen.contains("OSError") && seen.contains("Read-only file system"), "{}: {seen}", cli.host);
    assert!(!seen.contains("no interactive user response") && !seen.contains("Denied by preToolUse hook"), "{seen}");
    let (_, tail, _) = sb.run(&["audit", "tail", "--all", "--json"], "");
    let allowed = tail
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["kind"] == "pre-tool-use" && e["decision"] == "allow")
        .count();
    assert_eq!(allowed, 2, "{tail}");
}

/// A secret in a file Copilot's `view` tool reads never reaches the model: loopguard replaces
/// the result (`modifiedResult.textResultForLlm`, read in both registration forms).
fn a_secret_in_a_viewed_file_does_not_reach_the_model(cli: &Cli) {
    let sb = Sandbox::new();
    let key = format!("AKIA{}", "Q7RZ2M5K3W6X4N2P");
    sb.write("notes.txt", &format!("deploy notes\naws_access_key_id = {key}\n"));
    let view = json!({"tool": "view", "input": {"path": sb.ws.join("notes.txt")}});
    let run =
        run_host(&sb, cli, json!([view, {"text": "finished"}]), Path::new(env!("CARGO_BIN_EXE_loopguard")), || {});
    let seen = run.seen_by_model();
    assert!(run.requests.len() >= 2, "{:?}: the model got no result back; {}", cli.install, run.stderr);
    assert!(seen.contains("deploy notes"), "{:?}: the file was not read: {seen}", cli.install);
    assert!(!seen.contains(&key), "{:?}: the key reached the model", cli.install);
    assert!(seen.contains("REDACTED:aws-access-key-id"), "{:?}: {seen}", cli.install);
}
