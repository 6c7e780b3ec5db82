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
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home/dev");
        let ws = home.join("project");
        let state = root.path().join("state");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        Sandbox { root, home, state, ws }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_loopguard"));
        c.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("LOOPGUARD_HOME", &self.state)
            .current_dir(&self.ws);
        c
    }

    /// Runs `loopguard hook claude-code` with `input` on stdin.
    pub fn hook(&self, input: &[u8]) -> Output {
        self.hook_with(&[], input)
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
        s.replace(self.ws.to_str().unwrap(), "[WS]")
            .replace(self.home.to_str().unwrap(), "[HOME]")
            .replace(self.state.to_str().unwrap(), "[STATE]")
            .replace(self.root.path().to_str().unwrap(), "[ROOT]")
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
    Some((
        h["permissionDecision"].as_str().unwrap().to_string(),
        h["permissionDecisionReason"].as_str().unwrap().to_string(),
    ))
}
