//! Helpers shared by the integration tests: a sandboxed home, state home and workspace, and a
//! way to run the real `loopguard` binary inside it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Temporary HOME, LOOPGUARD_HOME and workspace; the real ones are never touched.
pub struct Sandbox {
    pub root: tempfile::TempDir,
    pub home: PathBuf,
    pub state: PathBuf,
    pub ws: PathBuf,
    /// Trip effects run in a detached background flush (as for a user) instead of waiting for
    /// an explicit `flush()`.
    pub background_effects: bool,
    /// Extra environment for every command.
    pub extra_env: Vec<(String, String)>,
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home/dev");
        let ws = home.join("project");
        let state = root.path().join("state");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        Sandbox { root, home, state, ws, background_effects: false, extra_env: Vec::new() }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_loopguard"));
        c.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("LOOPGUARD_HOME", &self.state)
            .current_dir(&self.ws);
        if !self.background_effects {
            c.env("LOOPGUARD_EFFECTS", "manual");
        }
        for (k, v) in &self.extra_env {
            c.env(k, v);
        }
        c
    }

    /// Writes the user policy.
    pub fn user_policy(&self, text: &str) {
        let p = self.home.join(".config/loopguard/policy.toml");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A PreToolUse for `tool` with `input` in `session`.
    pub fn pre(&self, session: &str, tool: &str, input: serde_json::Value) -> Output {
        let ev = serde_json::json!({
            "session_id": session, "transcript_path": self.root.path().join(format!("{session}.jsonl")),
            "cwd": self.ws, "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1"
        });
        self.hook(ev.to_string().as_bytes())
    }

    /// A PostToolUse for `tool` with `input` and `response` in `session`.
    pub fn post(&self, session: &str, tool: &str, input: serde_json::Value, response: serde_json::Value) -> Output {
        let ev = serde_json::json!({
            "session_id": session, "transcript_path": self.root.path().join(format!("{session}.jsonl")),
            "cwd": self.ws, "permission_mode": "bypassPermissions", "hook_event_name": "PostToolUse",
            "tool_name": tool, "tool_input": input, "tool_response": response, "tool_use_id": "toolu_1"
        });
        self.hook(ev.to_string().as_bytes())
    }

    /// A SessionStart in `session`.
    pub fn start(&self, session: &str) -> Output {
        let ev = serde_json::json!({
            "session_id": session, "transcript_path": self.root.path().join(format!("{session}.jsonl")),
            "cwd": self.ws, "hook_event_name": "SessionStart", "source": "startup"
        });
        self.hook(ev.to_string().as_bytes())
    }

    /// Runs a loopguard subcommand to completion; (exit code, stdout, stderr).
    pub fn run(&self, args: &[&str], stdin: &str) -> (i32, String, String) {
        let out = self.feed(self.command(args), stdin.as_bytes());
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Carries out queued trip effects now.
    pub fn flush(&self) -> String {
        let (code, out, err) = self.run(&["breaker", "flush"], "");
        assert!(code == 0 || code == 1, "flush failed: {err}");
        out
    }

    /// The audit events' kinds, in order.
    pub fn audit_kinds(&self) -> Vec<String> {
        let (_, out, _) = self.run(&["audit", "tail", "--json", "-n", "100000"], "");
        out.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].as_str().unwrap().to_string())
            .collect()
    }

    /// Runs `loopguard hook claude-code` with `input` on stdin.
    pub fn hook(&self, input: &[u8]) -> Output {
        self.hook_with(&[], input)
    }

    /// Runs `loopguard hook <host> [extra…]` with `input` on stdin.
    pub fn run_hook(&self, host: &str, extra: &[&str], input: &[u8]) -> Output {
        let mut args = vec!["hook", host];
        args.extend_from_slice(extra);
        self.feed(self.command(&args), input)
    }

    pub fn hook_with(&self, extra: &[&str], input: &[u8]) -> Output {
        let mut args = vec!["hook", "claude-code"];
        args.extend_from_slice(extra);
        self.feed(self.command(&args), input)
    }

    /// Runs the hook as the child of a short-lived `timeout` process, so its host process is
    /// gone once the call is over (as when a host session dies).
    pub fn hook_from_dying_host(&self, input: &[u8]) -> Output {
        let mut c = Command::new("timeout");
        c.args(["60", env!("CARGO_BIN_EXE_loopguard"), "hook", "claude-code"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("LOOPGUARD_HOME", &self.state)
            .current_dir(&self.ws);
        self.feed(c, input)
    }

    fn feed(&self, mut command: Command, input: &[u8]) -> Output {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // The hook may stop reading early (oversized input): a broken pipe is expected then.
        let _ = stdin.write_all(input);
        drop(stdin);
        child.wait_with_output().unwrap()
    }

    /// A real sample with its recorded paths moved into this sandbox.
    pub fn sample(&self, name: &str) -> String {
        let text = std::fs::read_to_string(fixture(&format!("claude-code/{name}"))).unwrap();
        self.localize(&text)
    }

    pub fn localize(&self, text: &str) -> String {
        // Through placeholders, so a replacement is never replaced again.
        text.replace("/home/dev/project", "\u{1}P")
            .replace("/home/dev", "\u{1}H")
            .replace("\u{1}P", self.ws.to_str().unwrap())
            .replace("\u{1}H", self.home.to_str().unwrap())
    }

    /// Replaces sandbox paths in output with stable names for snapshots.
    pub fn scrub(&self, s: &str) -> String {
        let s = s
            .replace(env!("CARGO_BIN_EXE_loopguard"), "[EXE]")
            .replace(self.ws.to_str().unwrap(), "[WS]")
            .replace(self.home.to_str().unwrap(), "[HOME]")
            .replace(self.state.to_str().unwrap(), "[STATE]")
            .replace(self.root.path().to_str().unwrap(), "[ROOT]");
        // What the machine's sandbox can do is the machine's (tested where it is probed).
        s.lines()
            .map(|l| match l.split_once(" sandbox: ") {
                Some((status, _)) if matches!(status.trim(), "ok" | "FAIL") => format!("{status} sandbox: [PROBED]"),
                _ => l.to_string(),
            })
            .map(|l| l + "\n")
            .collect::<String>()
    }

    pub fn render(&self, out: &Output) -> String {
        format!(
            "exit: {:?}\n--- stdout\n{}--- stderr\n{}",
            out.status.code(),
            self.scrub(&String::from_utf8_lossy(&out.stdout)),
            self.scrub(&String::from_utf8_lossy(&out.stderr))
        )
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// A version pinned in tests/e2e/host-versions.env (the one place that names them).
pub fn pinned(key: &str) -> String {
    let text = include_str!("../../../../tests/e2e/host-versions.env");
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('=').map(|v| v.trim().to_string()))
        .unwrap_or_else(|| panic!("{key} is not in tests/e2e/host-versions.env"))
}

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Writes `text` to `p`, creating its directories.
pub fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel)
}

/// The `hookSpecificOutput` of a PreToolUse answer, or `None` for an empty (allow) answer.
pub fn decision(out: &Output) -> Option<(String, String)> {
    let s = String::from_utf8_lossy(&out.stdout);
    if s.trim().is_empty() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(s.trim()).unwrap();
    let h = &v["hookSpecificOutput"];
    // Only a `systemMessage` (a note for the human): no decision, the call goes on.
    if h.is_null() && v.get("systemMessage").is_some() {
        return None;
    }
    Some((
        h["permissionDecision"].as_str().unwrap().to_string(),
        h["permissionDecisionReason"].as_str().unwrap().to_string(),
    ))
}

/// Runs git in `dir` with a fixed identity and no signing; panics on failure; trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
