//! End to end with the real Claude Code CLI — every scenario runs against the oldest supported
//! and the newest version, both pinned in tests/e2e/host-versions.env — driven by a scripted
//! mock of the Messages API, inside a loopback-only network namespace (`unshare -rn`), with
//! loopguard installed by `loopguard install claude-code` as the only gate (`bypassPermissions`).
//!
//! Needs the CLIs installed by `scripts/test.sh`. Missing prerequisites fail the test; set
//! LOOPGUARD_SKIP_E2E=1 to skip it knowingly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::{Sandbox, pinned, repo_root};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One pinned Claude Code CLI.
struct Claude {
    bin: PathBuf,
    version: (u64, u64, u64),
}

impl Claude {
    /// Whether `"continue": false` with a PreToolUse deny ends the session (no further model
    /// call): observed with 2.1.332, not with 2.1.197 (which takes the deny and goes on).
    fn honours_continue_false(&self) -> bool {
        self.version >= (2, 1, 332)
    }

    /// Whether this version honours `"onFailure": "block"` on command hooks.
    fn honours_on_failure(&self) -> bool {
        self.version >= (2, 1, 295)
    }
}

fn claude_bin(key: &str) -> Option<Claude> {
    if std::env::var_os("LOOPGUARD_SKIP_E2E").is_some() {
        return None;
    }
    let version = pinned(key);
    let bin = repo_root().join(format!("target/e2e-tools/claude-code-{version}/node_modules/.bin/claude"));
    assert!(
        bin.exists(),
        "Claude Code {version} is not at {} — run `bash scripts/test.sh` (it installs it), or set LOOPGUARD_SKIP_E2E=1",
        bin.display()
    );
    let v = Command::new(&bin).arg("--version").output().unwrap();
    let v = String::from_utf8_lossy(&v.stdout);
    assert!(v.starts_with(&version), "expected Claude Code {version}, found {v}");
    let mut n = version.split('.').map(|x| x.parse::<u64>().unwrap());
    Some(Claude { bin, version: (n.next().unwrap(), n.next().unwrap(), n.next().unwrap()) })
}

/// Every scenario, once per pinned CLI: `oldest::name` and `newest::name`.
macro_rules! on_every_client {
    ($($name:ident),* $(,)?) => {
        mod oldest {
            $( #[test] fn $name() { if let Some(c) = super::claude_bin("CLAUDE_CODE_OLDEST") { super::$name(&c) } } )*
        }
        mod newest {
            $( #[test] fn $name() { if let Some(c) = super::claude_bin("CLAUDE_CODE_NEWEST") { super::$name(&c) } } )*
        }
    };
}

on_every_client!(
    denied_call_does_not_run_and_allowed_call_runs,
    project_policy_with_a_syntax_error_denies,
    sees_tool_output_with_secrets_redacted,
    sees_mcp_results_with_secrets_redacted,
    contextual_secrets_are_redacted_and_a_staged_token_is_not_committed,
    bash_runs_in_the_kernel_sandbox_with_wrap_bash,
    vulnerable_dependency_is_denied_and_a_stale_data_note_passes,
    approval_drift_denies_the_write,
    high_risk_ask_shows_its_preview,
    a_normal_session_never_trips_a_breaker,
    an_unpriced_model_is_estimated_and_the_run_goes_on,
    a_crashing_hook_blocks_where_the_host_honours_on_failure,
    a_hanging_hook_blocks_where_the_host_honours_on_failure,
    a_spent_fleet_budget_ends_the_session,
);

struct Run {
    requests: Vec<Value>,
    stream: Vec<Value>,
    stderr: String,
}

/// Installs loopguard into a settings file, then runs Claude Code with `script` in the sandbox.
fn run_claude(sb: &Sandbox, claude: &Claude, script: Value) -> Run {
    run_claude_with(sb, claude, script, &[])
}

fn run_claude_with(sb: &Sandbox, claude: &Claude, script: Value, extra: &[&str]) -> Run {
    run_claude_edited(sb, claude, script, extra, |_| {})
}

/// Like [`run_claude_with`], with a chance to change the installed settings before the run.
fn run_claude_edited(
    sb: &Sandbox,
    claude: &Claude,
    script: Value,
    extra: &[&str],
    edit: impl FnOnce(&mut Value),
) -> Run {
    let out = sb.root.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let settings = sb.root.path().join("settings.json");
    let inst = sb.command(&["install", "claude-code", "--settings", settings.to_str().unwrap()]).output().unwrap();
    assert!(inst.status.success(), "{}", String::from_utf8_lossy(&inst.stderr));
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&settings, v.to_string()).unwrap();
    let script_path = sb.root.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let status = Command::new("unshare")
        .args(["-rn", "bash"])
        .arg(repo_root().join("tests/e2e/run-claude.sh"))
        .args([
            claude.bin.as_os_str(),
            script_path.as_os_str(),
            sb.ws.as_os_str(),
            settings.as_os_str(),
            out.as_os_str(),
        ])
        .args(extra)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("LOOPGUARD_HOME", &sb.state)
        .envs(sb.extra_env.iter().map(|(k, v)| (k, v)))
        .status()
        .unwrap();
    assert!(status.success(), "run-claude.sh failed: {status}");
    let lines = |name: &str| -> Vec<Value> {
        std::fs::read_to_string(out.join(name))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    };
    Run {
        requests: lines("requests.jsonl"),
        stream: lines("claude.out"),
        stderr: std::fs::read_to_string(out.join("claude.err")).unwrap_or_default(),
    }
}

/// The tool_result the model received for a tool_use id.
fn tool_result(run: &Run, id: &str) -> Option<(String, bool)> {
    run.requests.iter().flat_map(|r| r["body"]["messages"].as_array().into_iter().flatten()).find_map(|m| {
        m["content"].as_array()?.iter().find_map(|b| {
            (b["type"] == "tool_result" && b["tool_use_id"] == id).then(|| {
                let text = match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (text, b["is_error"].as_bool().unwrap_or(false))
            })
        })
    })
}

fn denied_call_does_not_run_and_allowed_call_runs(claude: &Claude) {
    let sb = Sandbox::new();
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
match = ["rm -rf build"]
"#,
    );
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": "rm -rf build", "description": "clean"}},
            {"tool": "Bash", "input": {"command": "echo hi > out.txt", "description": "write"}},
            {"text": "finished"}
        ]),
    );
    assert!(sb.ws.join("build/artifact.bin").exists(), "the denied rm ran; stderr: {}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(sb.ws.join("out.txt")).unwrap_or_default(),
        "hi\n",
        "the allowed echo did not run; stderr: {}",
        run.stderr
    );
    let (reason, is_error) = tool_result(&run, "toolu_e2e_0").expect("the model got a result for the denied call");
    assert!(is_error);
    assert!(reason.contains("[no-rm-build]") && reason.contains("release artifacts"), "{reason}");
    let (ok, is_error) = tool_result(&run, "toolu_e2e_1").expect("the model got a result for the allowed call");
    assert!(!is_error, "{ok}");
    let result = run.stream.iter().find(|v| v["type"] == "result").expect("a final result");
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "toolu_e2e_0");

    let verify = sb.command(&["audit", "verify", "--all"]).output().unwrap();
    let text = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success() && text.contains("chain intact"), "{text}");
    let tail = sb.command(&["audit", "tail", "--all", "--json"]).output().unwrap();
    let events: Vec<Value> =
        String::from_utf8_lossy(&tail.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<(&str, Option<&str>)> =
        events.iter().map(|e| (e["kind"].as_str().unwrap(), e["decision"].as_str())).collect();
    assert!(kinds.contains(&("session-start", None)), "{kinds:?}");
    assert!(kinds.contains(&("pre-tool-use", Some("deny"))), "{kinds:?}");
    assert!(kinds.contains(&("pre-tool-use", Some("allow"))), "{kinds:?}");
    assert!(kinds.contains(&("post-tool-use", None)), "{kinds:?}");
    assert!(kinds.contains(&("session-end", None)), "{kinds:?}");
}

fn project_policy_with_a_syntax_error_denies(claude: &Claude) {
    let sb = Sandbox::new();
    sb.write(".loopguard/policy.toml", "[gate\nautonomy = \"pr\"\n");
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": "echo hi > out.txt", "description": "write"}},
            {"text": "finished"}
        ]),
    );
    assert!(!sb.ws.join("out.txt").exists(), "the call ran despite a broken policy");
    let (reason, is_error) = tool_result(&run, "toolu_e2e_0").expect("a result for the call");
    assert!(is_error);
    assert!(reason.contains("[policy-invalid]") && reason.contains("policy.toml:1:"), "{reason}");
}

fn sees_tool_output_with_secrets_redacted(claude: &Claude) {
    let sb = Sandbox::new();
    // Built at run time so the source holds no literal key.
    let aws = format!("AKIA{}", "Q7RZ2M5K3W6X4N2P");
    let gh = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    sb.write("notes.txt", &format!("deploy notes\ntoken: {gh}\n"));
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": format!("printf 'key=%s\\n' {aws}"), "description": "print"}},
            {"tool": "Read", "input": {"file_path": sb.ws.join("notes.txt")}},
            {"tool": "Bash", "input": {"command": "cat notes.txt", "description": "show"}},
            {"text": "finished"}
        ]),
    );
    // The Bash call itself carries a critical secret in its arguments: it is denied before it runs.
    let (first, is_error) = tool_result(&run, "toolu_e2e_0").expect("a result for the Bash call");
    assert!(is_error && first.contains("[secret-in-arguments]"), "{first}");
    assert!(!first.contains(&aws), "the deny reason must not echo the key: {first}");
    // The Read of a file holding a token runs, but the model sees it redacted.
    let (read, _) = tool_result(&run, "toolu_e2e_1").expect("a result for the Read");
    assert!(read.contains("deploy notes"), "{read}");
    assert!(read.contains("ghp_…[REDACTED:github-pat]"), "{read}");
    assert!(!read.contains(&gh), "the token reached the model: {read}");
    // So does a Bash command whose output holds it (Bash's own stdout/stderr shape).
    let (bash, is_error) = tool_result(&run, "toolu_e2e_2").expect("a result for the cat");
    assert!(!is_error, "{bash}");
    assert!(bash.contains("ghp_…[REDACTED:github-pat]") && !bash.contains(&gh), "{bash}");
    // (Claude Code 2.1.197 offers no Grep or Glob tool in this mode: "No such tool available".)
    let tools: Vec<String> = run
        .requests
        .iter()
        .filter_map(|r| r["body"]["tools"].as_array())
        .flatten()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    assert!(tools.iter().any(|t| t == "Read") && tools.iter().any(|t| t == "Bash"), "{tools:?}");
    for r in &run.requests {
        assert!(!r.to_string().contains(&gh), "the token reached the API");
    }
}

/// Secrets only secret by context (a bearer token, an AWS secret key after its name) in a Bash
/// result reach the model redacted; a commit of a staged token is refused before it runs.
fn contextual_secrets_are_redacted_and_a_staged_token_is_not_committed(claude: &Claude) {
    let mut sb = Sandbox::new();
    commit_identity(&mut sb);
    std::fs::remove_dir_all(sb.ws.join(".git")).unwrap();
    // Built at run time so the source holds no literal secret.
    let bearer: String = "Kp7Vx2Qm9Lr4Tn8Zc3Wd6Hs1Jf5Gb0Ya".chars().rev().collect();
    let aws_secret: String = "nyVmihA+2O76UMFxFkM+R5Kjp1vRt/1fjORS+6il".chars().rev().collect();
    let gh = format!("ghp_{}", "R8mZq2VtLx7KcN4pWb9Hs3Jd6Fg1Ay5Eu0To");
    sb.write(
        "app.log",
        &format!("GET /v1/jobs 200\n> Authorization: Bearer {bearer}\nAWS_SECRET_ACCESS_KEY={aws_secret}\ndone\n"),
    );
    sb.write("settings.py", &format!("DEBUG = True\nGITHUB_TOKEN = \"{gh}\"\n"));
    for args in
        [&["init", "-q", "-b", "main"][..], &["add", "app.log"], &["commit", "-qm", "log"], &["add", "settings.py"]]
    {
        let st = std::process::Command::new("git")
            .args(args)
            .current_dir(&sb.ws)
            .envs(sb.extra_env.clone())
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    }
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": "cat app.log", "description": "show the log"}},
            {"tool": "Bash", "input": {"command": "git commit -m 'settings'", "description": "commit"}},
            {"text": "finished"}
        ]),
    );
    let (log, is_error) = tool_result(&run, "toolu_e2e_0").expect("a result for the cat");
    assert!(!is_error && log.contains("GET /v1/jobs 200") && log.contains("done"), "{log}");
    assert!(
        log.contains("[REDACTED:authorization-header]") && log.contains("[REDACTED:aws-secret-access-key]"),
        "{log}"
    );
    let (commit, is_error) = tool_result(&run, "toolu_e2e_1").expect("a result for the commit");
    assert!(is_error && commit.contains("[secret-in-outgoing]") && commit.contains("settings.py:2"), "{commit}");
    for r in &run.requests {
        let t = r.to_string();
        assert!(!t.contains(&bearer) && !t.contains(&aws_secret) && !t.contains(&gh), "a secret reached the API");
    }
    // The commit did not happen.
    let head = std::process::Command::new("git").args(["log", "--oneline"]).current_dir(&sb.ws).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&head.stdout).lines().count(), 1, "the refused commit ran");
}

fn sees_mcp_results_with_secrets_redacted(claude: &Claude) {
    let sb = Sandbox::new();
    let gh = format!("ghp_{}", "Zq8vN2kP4mX7rT1wZq8vN2kP4mX7rT1wAbCd");
    // MCP tools ask by default; this user allows the test server's tool.
    std::fs::create_dir_all(sb.home.join(".config/loopguard")).unwrap();
    std::fs::write(sb.home.join(".config/loopguard/policy.toml"), "[tools]\n\"mcp__vault__*\" = \"allow\"\n").unwrap();
    let server = repo_root().join("tests/e2e/mcp_secret_server.py");
    let mcp = sb.root.path().join("mcp.json");
    std::fs::write(
        &mcp,
        serde_json::json!({"mcpServers": {"vault": {"command": "python3", "args": [server, gh]}}}).to_string(),
    )
    .unwrap();
    let run = run_claude_with(
        &sb,
        claude,
        serde_json::json!([{"tool": "mcp__vault__read_config", "input": {}}, {"text": "finished"}]),
        &["--mcp-config", mcp.to_str().unwrap(), "--strict-mcp-config"],
    );
    let (result, is_error) =
        tool_result(&run, "toolu_e2e_0").unwrap_or_else(|| panic!("no MCP result; stderr: {}", run.stderr));
    assert!(!is_error, "{result}");
    assert!(result.contains("deploy config"), "{result}");
    assert!(result.contains("ghp_…[REDACTED:github-pat]") && !result.contains(&gh), "{result}");
    for r in &run.requests {
        assert!(!r.to_string().contains(&gh), "the token reached the API");
    }
}

fn bash_runs_in_the_kernel_sandbox_with_wrap_bash(claude: &Claude) {
    let sb = Sandbox::new();
    sb.user_policy("[exec]\nwrap_bash = true\n");
    // Outside the workspace and outside /tmp (which the sandbox lets commands write).
    let outside_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = outside_dir.path().join("escaped.txt");
    // A copy through a library the analysis does not follow (a literal `open(…, 'w')` it would
    // see and deny): allowed only confined, and the kernel refuses the write.
    let sneaky = format!("python3 -c \"import shutil; shutil.copyfile('/etc/hostname', '{}')\"", outside.display());
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": sneaky, "description": "python write"}},
            {"tool": "Bash", "input": {"command": "echo hi > inside.txt", "description": "write"}},
            {"text": "finished"}
        ]),
    );
    assert!(!outside.exists(), "the kernel let the write out; stderr: {}", run.stderr);
    assert_eq!(std::fs::read_to_string(sb.ws.join("inside.txt")).unwrap_or_default(), "hi\n", "stderr: {}", run.stderr);
    let (result, _) = tool_result(&run, "toolu_e2e_0").expect("a result for the python call");
    assert!(result.contains("Read-only file system"), "{result}");
}

fn vulnerable_dependency_is_denied_and_a_stale_data_note_passes(claude: &Claude) {
    let mut sb = Sandbox::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/advisories-multi");
    let (code, _, err) = sb.run(&["advisories", "import", fixtures.to_str().unwrap()], "");
    assert_eq!(code, 0, "{err}");
    // Forty days later (debug builds take an injected clock): the data is out of date.
    let later = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 40 * 86400;
    sb.extra_env.push(("LOOPGUARD_TEST_NOW".into(), later.to_string()));
    let pj = sb.ws.join("package.json");
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Write", "input": {"file_path": pj, "content": "{\"dependencies\":{\"minimist\":\"1.2.5\"}}\n"}},
            {"tool": "Write", "input": {"file_path": pj, "content": "{\"dependencies\":{\"lodash\":\"^4.17.21\"}}\n"}},
            {"text": "finished"}
        ]),
    );
    let (reason, is_error) = tool_result(&run, "toolu_e2e_0").expect("a result for the vulnerable write");
    assert!(is_error, "{reason}");
    assert!(
        reason.contains("[vulnerable-dependency]")
            && reason.contains("GHSA-xvch-5gv4-984h")
            && reason.contains("1.2.6"),
        "{reason}"
    );
    assert!(reason.contains("imported 40 days ago"), "stale data warns on every result: {reason}");
    // The allowed write ran although the hook's answer carried only a systemMessage.
    let (ok, is_error) = tool_result(&run, "toolu_e2e_1").expect("a result for the clean write");
    assert!(!is_error, "{ok}; stderr: {}", run.stderr);
    assert!(std::fs::read_to_string(&pj).unwrap_or_default().contains("lodash"), "stderr: {}", run.stderr);
}

fn approval_drift_denies_the_write(claude: &Claude) {
    let sb = Sandbox::new();
    let pass = "correct horse battery staple";
    let (code, _, err) = sb.run(&["operator", "init", "--name", "ann", "--passphrase-stdin"], &format!("{pass}\n"));
    assert_eq!(code, 0, "{err}");
    sb.write(".mcp.json", r#"{"mcpServers":{}}"#);
    let (code, _, err) =
        sb.run(&["approve", "--operator", "ann", "--reason", "reviewed", "--passphrase-stdin"], &format!("{pass}\n"));
    assert_eq!(code, 0, "{err}");
    // Someone adds an MCP server after the approval.
    sb.write(".mcp.json", r#"{"mcpServers":{"new":{"command":"nc"}}}"#);
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Write", "input": {"file_path": sb.ws.join("a.txt"), "content": "x"}},
            {"text": "finished"}
        ]),
    );
    assert!(!sb.ws.join("a.txt").exists(), "stderr: {}", run.stderr);
    let (reason, is_error) = tool_result(&run, "toolu_e2e_0").expect("a result for the write");
    assert!(is_error);
    assert!(reason.contains("[approval-drift]") && reason.contains("ws:.mcp.json changed"), "{reason}");
}

fn high_risk_ask_shows_its_preview(claude: &Claude) {
    let sb = Sandbox::new();
    std::fs::remove_dir_all(sb.ws.join(".git")).unwrap();
    let git = |args: &[&str]| common::git(&sb.ws, args);
    sb.write("src/main.rs", "fn main() {}\n");
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    sb.write("src/main.rs", "fn main() { /* unsaved work */ }\n");
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": "git checkout -- src/main.rs", "description": "discard"}},
            {"text": "finished"}
        ]),
    );
    // Headless, the ask cannot be shown to a human: the call does not run and the reason, with
    // the preview of what it would have undone, comes back.
    let (reason, is_error) = tool_result(&run, "toolu_e2e_0").expect("a result for the ask");
    assert!(is_error, "{reason}");
    assert!(reason.contains("[destructive-git-discard]"), "{reason}");
    assert!(
        reason.contains("\nPreview: 1 modified (src/main.rs)") && reason.contains("(simulated, exit 0)"),
        "{reason}"
    );
    assert!(
        std::fs::read_to_string(sb.ws.join("src/main.rs")).unwrap().contains("unsaved work"),
        "stderr: {}",
        run.stderr
    );
}

fn breaker_status(sb: &Sandbox) -> Value {
    let (code, out, err) = sb.run(&["breaker", "status", "--json"], "");
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn commit_identity(sb: &mut Sandbox) {
    for (k, v) in [
        ("GIT_AUTHOR_NAME", "e2e"),
        ("GIT_AUTHOR_EMAIL", "e2e@example.invalid"),
        ("GIT_COMMITTER_NAME", "e2e"),
        ("GIT_COMMITTER_EMAIL", "e2e@example.invalid"),
    ] {
        sb.extra_env.push((k.into(), v.into()));
    }
}

/// Reads, an edit, a new file, a test run and a commit, on the model the CLI asks for by default
/// (the mock answers with the model it was asked for): no breaker trips, nothing is denied.
fn a_normal_session_never_trips_a_breaker(claude: &Claude) {
    let mut sb = Sandbox::new();
    commit_identity(&mut sb);
    std::fs::remove_dir_all(sb.ws.join(".git")).unwrap();
    sb.write("calc.py", "def add(a, b):\n    return a + b\n");
    sb.write(
        "test_calc.py",
        "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    );
    let git = |args: &[&str]| common::git(&sb.ws, args);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Read", "input": {"file_path": sb.ws.join("calc.py")}},
            {"tool": "Edit", "input": {"file_path": sb.ws.join("calc.py"), "old_string": "return a + b", "new_string": "return b + a"}},
            {"tool": "Write", "input": {"file_path": sb.ws.join("NOTES.md"), "content": "operands swapped\n"}},
            {"tool": "Bash", "input": {"command": "python3 -m unittest -q test_calc 2>&1 | tail -n 3", "description": "test"}},
            {"tool": "Bash", "input": {"command": "git add -A && git commit -qm 'swap operands'", "description": "commit"}},
            {"tool": "Bash", "input": {"command": "git log --oneline | head -n 5", "description": "log"}},
            {"text": "finished"}
        ]),
    );
    for i in 0..6 {
        let (r, is_error) =
            tool_result(&run, &format!("toolu_e2e_{i}")).unwrap_or_else(|| panic!("no result {i}: {}", run.stderr));
        assert!(!is_error, "call {i} failed: {r}; stderr: {}", run.stderr);
    }
    assert!(git(&["log", "--oneline"]).contains("swap operands"));
    let model = run.requests.iter().find_map(|r| r["body"]["model"].as_str().map(String::from)).unwrap();
    let st = breaker_status(&sb);
    assert_eq!(st["trips"], serde_json::json!([]), "{st:#}");
    assert_eq!(st["position"], "full-auto", "{st:#}");
    assert!(st["run"]["usd"].as_f64().is_some_and(|u| u > 0.0), "the default model {model} is priced: {st:#}");
    assert!(st["run"]["usd_estimated"].is_null(), "the default model {model} is in the price table: {st:#}");
}

/// A model the price table does not know (a new one appears every few weeks): spend is charged
/// at the table's ceiling and marked estimated; the run is not turned read-only.
fn an_unpriced_model_is_estimated_and_the_run_goes_on(claude: &Claude) {
    let sb = Sandbox::new();
    let run = run_claude_with(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Write", "input": {"file_path": sb.ws.join("a.txt"), "content": "a\n"}},
            {"tool": "Bash", "input": {"command": "echo hi > out.txt", "description": "write"}},
            {"tool": "Edit", "input": {"file_path": sb.ws.join("a.txt"), "old_string": "a", "new_string": "b"}},
            {"text": "finished"}
        ]),
        &["--model", "claude-unlisted-9-9"],
    );
    assert!(run.requests.iter().any(|r| r["body"]["model"] == "claude-unlisted-9-9"), "stderr: {}", run.stderr);
    for i in 0..3 {
        let (r, is_error) = tool_result(&run, &format!("toolu_e2e_{i}")).expect("a result");
        assert!(!is_error, "call {i} failed: {r}; stderr: {}", run.stderr);
    }
    assert_eq!(std::fs::read_to_string(sb.ws.join("out.txt")).unwrap_or_default(), "hi\n");
    assert_eq!(std::fs::read_to_string(sb.ws.join("a.txt")).unwrap_or_default(), "b\n");
    let st = breaker_status(&sb);
    assert_eq!(st["trips"], serde_json::json!([]), "{st:#}");
    assert_eq!(st["run"]["usd_estimated"], "estimated (unknown model claude-unlisted-9-9)", "{st:#}");
}

/// Points the installed hooks of `events` at `script`, saved as an executable named `loopguard`
/// (so it is still recognised as loopguard's entry), with the host timeout `timeout` seconds.
fn break_hooks(sb: &Sandbox, settings: &mut Value, events: &[&str], script: &str, timeout: u64) {
    use std::os::unix::fs::PermissionsExt;
    let dir = sb.root.path().join("broken");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("loopguard");
    std::fs::write(&exe, script).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    for event in events {
        for group in settings["hooks"][event].as_array_mut().unwrap() {
            for h in group["hooks"].as_array_mut().unwrap() {
                h["command"] = Value::String(format!("{} hook claude-code", exe.display()));
                h["timeout"] = serde_json::json!(timeout);
            }
        }
    }
}

/// A loopguard that crashes (exits 1 on every event): the newest CLI blocks the call because
/// `install` wrote `onFailure: "block"`; the oldest ignores the switch and runs it (why doctor
/// warns about old hosts).
fn a_crashing_hook_blocks_where_the_host_honours_on_failure(claude: &Claude) {
    let sb = Sandbox::new();
    let all =
        ["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd", "Stop", "UserPromptSubmit"];
    let run = run_claude_edited(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": "echo hi > out.txt", "description": "write"}},
            {"text": "finished"}
        ]),
        &[],
        |v| {
            assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"], "block");
            break_hooks(&sb, v, &all, "#!/bin/sh\necho 'loopguard: broken on purpose' >&2\nexit 1\n", 10)
        },
    );
    let ran = sb.ws.join("out.txt").exists();
    if claude.honours_on_failure() {
        assert!(!ran, "a crashing hook let the call run; stderr: {}", run.stderr);
    } else {
        assert!(ran, "Claude Code {:?} was expected to fail open; stderr: {}", claude.version, run.stderr);
    }
}

/// A PreToolUse hook that hangs past the host's timeout: blocked where onFailure is honoured.
fn a_hanging_hook_blocks_where_the_host_honours_on_failure(claude: &Claude) {
    if !claude.honours_on_failure() {
        // Without the switch the host runs the call after its timeout; the crash scenario
        // already shows that, and waiting for the timeout here would prove nothing new.
        return;
    }
    let sb = Sandbox::new();
    let run = run_claude_edited(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": "echo hi > out.txt", "description": "write"}},
            {"text": "finished"}
        ]),
        &[],
        |v| break_hooks(&sb, v, &["PreToolUse"], "#!/bin/sh\nexec sleep 60\n", 2),
    );
    assert!(!sb.ws.join("out.txt").exists(), "a hanging hook let the call run; stderr: {}", run.stderr);
}

/// A fleet whose budget is spent (a $0 budget: nothing can be reserved): the first call is
/// denied with `continue: false`, so the tool does not run and the model gets no further
/// request (PostgreSQL from scripts/test.sh; the agent runs once, outside the namespace).
fn a_spent_fleet_budget_ends_the_session(claude: &Claude) {
    let base = std::env::var("LOOPGUARD_TEST_PG").expect("LOOPGUARD_TEST_PG (scripts/test.sh starts PostgreSQL)");
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes).unwrap();
    let name = format!("lg_e2e_{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>());
    let mut admin = postgres::Client::connect(&format!("{base} dbname=postgres"), postgres::NoTls).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let sb = Sandbox::new();
    sb.user_policy(&format!(
        "version = 1\n[fleet]\ndatabase_url = \"{base} dbname={name}\"\nname = \"f\"\nhost = \"e2e\"\nheartbeat = \"1s\"\n"
    ));
    for args in
        [&["fleet", "migrate"][..], &["fleet", "budget", "set", "*", "--usd", "0"], &["fleet", "agent", "--once"]]
    {
        let out = sb.command(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let run = run_claude(
        &sb,
        claude,
        serde_json::json!([
            {"tool": "Bash", "input": {"command": "echo hi > out.txt", "description": "write"}},
            {"tool": "Bash", "input": {"command": "echo two > two.txt", "description": "write"}},
            {"text": "finished"}
        ]),
    );
    let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    assert!(!sb.ws.join("out.txt").exists(), "the denied call ran; stderr: {}", run.stderr);
    assert!(!sb.ws.join("two.txt").exists(), "the session went on; stderr: {}", run.stderr);
    if claude.honours_continue_false() {
        assert_eq!(run.requests.len(), 1, "no model call after the refusal; stderr: {}", run.stderr);
    } else {
        // Older clients take the deny but not the end: the model goes on, and each of its
        // calls is refused the same way (no tool runs).
        let (why, is_error) = tool_result(&run, "toolu_e2e_0").expect("the model got the refusal");
        assert!(is_error && why.contains("budget is spent"), "{why}");
    }
    let tail = sb.command(&["audit", "tail", "--all", "--json"]).output().unwrap();
    let text = String::from_utf8_lossy(&tail.stdout);
    assert!(text.contains("\"deny\"") && text.contains("breaker-stopped"), "{text}");
}
