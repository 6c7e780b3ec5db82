//! Shared by core's integration tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

/// The working tree as plain `git status` reports it (the product's own, hardened reader lives in
/// the loopguard crate; here the repositories are the tests' own).
#[derive(Debug)]
pub struct GitStatus;

impl loopguard_core::Worktree for GitStatus {
    fn changed_files(&self, dir: &Path) -> Option<Vec<String>> {
        let out = std::process::Command::new("git")
            .args(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "."])
            .current_dir(dir)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let top =
            std::process::Command::new("git").args(["rev-parse", "--show-toplevel"]).current_dir(dir).output().ok()?;
        let top = std::path::PathBuf::from(String::from_utf8(top.stdout).ok()?.trim());
        let mut files = Vec::new();
        for entry in out.stdout.split(|b| *b == 0).filter(|e| e.len() > 3) {
            files.push(top.join(std::str::from_utf8(&entry[3..]).ok()?).to_string_lossy().into_owned());
        }
        Some(files)
    }
}

/// A context's worktree reader for the tests.
pub fn worktree() -> std::sync::Arc<dyn loopguard_core::Worktree> {
    std::sync::Arc::new(GitStatus)
}

use loopguard_core::policy::LayerKind;
use loopguard_core::{Action, Context, ExecutionMode, Gate, Policy, ToolCall, Verdict};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Where a corpus is decided: everything a row's decision depends on but the call.
#[derive(Debug, Clone)]
pub struct Params {
    pub workspace: PathBuf,
    pub home: Option<PathBuf>,
    pub state: Option<PathBuf>,
    pub user_policy: Option<PathBuf>,
    pub mode: ExecutionMode,
    pub confinement: bool,
    /// A user-layer policy file's name and text (`None`: the built-in policy).
    pub policy: Option<(PathBuf, String)>,
}

impl Params {
    pub fn new(workspace: &Path) -> Params {
        Params {
            workspace: workspace.to_path_buf(),
            home: None,
            state: None,
            user_policy: None,
            mode: ExecutionMode::Unattended,
            confinement: false,
            policy: None,
        }
    }
}

/// A decision as the corpora read it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub verdict: Verdict,
    pub confine: bool,
    pub codes: Vec<String>,
    pub explain: String,
}

impl Outcome {
    pub fn first_code(&self) -> &str {
        self.codes.first().map_or("-", String::as_str)
    }
}

/// Decides the corpora's calls: in this test build, or — when `LOOPGUARD_DECIDE_BIN` names a
/// loopguard binary — through that binary's `loopguard decide`, so CI can run every corpus
/// through the binaries users install (built without the dev-dependencies' features) and hold
/// them to the same expectations.
pub struct Decider {
    policies: RefCell<HashMap<Option<(PathBuf, String)>, Policy>>,
    binary: Option<RefCell<Binary>>,
}

struct Binary {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Decider {
    pub fn new() -> Decider {
        let binary = std::env::var_os("LOOPGUARD_DECIDE_BIN").filter(|b| !b.is_empty()).map(|bin| {
            let mut child = std::process::Command::new(&bin)
                .arg("decide")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("LOOPGUARD_DECIDE_BIN={bin:?}: {e}"));
            let stdin = child.stdin.take().unwrap();
            let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
            eprintln!("deciding through {bin:?} (loopguard decide)");
            RefCell::new(Binary { child, stdin, stdout })
        });
        Decider { policies: RefCell::new(HashMap::new()), binary }
    }

    /// Whether the decisions come from another binary.
    pub fn external(&self) -> bool {
        self.binary.is_some()
    }

    pub fn decide(&self, p: &Params, tool: &str, action: Action, input: serde_json::Value) -> Outcome {
        match &self.binary {
            Some(b) => Self::through(&mut b.borrow_mut(), p, tool, action, input),
            None => self.in_process(p, tool, action, input),
        }
    }

    fn in_process(&self, p: &Params, tool: &str, action: Action, input: serde_json::Value) -> Outcome {
        let mut policies = self.policies.borrow_mut();
        let policy = policies.entry(p.policy.clone()).or_insert_with(|| match &p.policy {
            None => Policy::builtin(),
            Some((name, text)) => Policy::from_layers(&[(LayerKind::User, name.clone(), text.clone())]).unwrap(),
        });
        let ctx = Context::new(&p.workspace)
            .with_home(p.home.as_deref())
            .with_mode(p.mode)
            .with_protected(p.state.as_deref(), p.user_policy.as_deref())
            .with_worktree(worktree())
            .with_confinement(p.confinement);
        let call = ToolCall::new(tool, action, input, &p.workspace);
        let d = Gate::new(policy).evaluate(&call, &ctx);
        Outcome {
            verdict: d.verdict(),
            confine: d.must_confine(),
            codes: d.reasons().iter().map(|r| r.code.clone()).collect(),
            explain: d.explain(),
        }
    }

    fn through(b: &mut Binary, p: &Params, tool: &str, action: Action, input: serde_json::Value) -> Outcome {
        let req = serde_json::json!({
            "tool": tool, "action": action, "input": input, "workspace": p.workspace, "home": p.home,
            "state": p.state, "user_policy": p.user_policy, "mode": p.mode, "confinement": p.confinement,
            "policy": p.policy.as_ref().map(|(name, text)| serde_json::json!({ "name": name, "text": text })),
        });
        writeln!(b.stdin, "{req}").unwrap();
        b.stdin.flush().unwrap();
        let mut line = String::new();
        b.stdout.read_line(&mut line).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert!(v["error"].is_null(), "the binary refused the request: {v}");
        Outcome {
            verdict: Verdict::parse(v["verdict"].as_str().unwrap()).unwrap(),
            confine: v["confine"].as_bool().unwrap(),
            codes: v["codes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect(),
            explain: v["explain"].as_str().unwrap().to_string(),
        }
    }
}
