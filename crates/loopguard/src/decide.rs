//! `loopguard decide`: the gate alone, as this binary was built — no host, no state home read or
//! written, no audit event. Reads one request per line (JSON) and writes one answer per line.
//! For policy authors (what would my policy decide?) and for CI, which runs the repository's
//! decision corpora through the installed binary and compares with the test build.
//!
//! A request: `{"tool": "Bash", "action": {"Shell": {"command": "ls"}}, "input": {…},
//! "workspace": DIR, "home": DIR?, "state": DIR?, "user_policy": FILE?, "mode": "unattended",
//! "confinement": true, "policy": {"name": "user.toml", "text": "…"}?}` (no `policy`: the
//! built-in one; `input` defaults to `{}`). An answer: `{"verdict": "allow", "confine": false,
//! "network": false, "codes": […], "explain": "…"}`, or `{"error": "…"}` for a request that cannot be read (the
//! next line is still read).

use loopguard_core::policy::LayerKind;
use loopguard_core::{Action, Context, ExecutionMode, Gate, Policy, ToolCall};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// The longest request line read (a longer one is an error answer, and the line is skipped).
pub const MAX_LINE: usize = 1 << 20;

/// One request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The host's tool name (for the policy's `[tools]` table).
    pub tool: String,
    /// What the call does.
    pub action: Action,
    /// The input as the host sent it (scanned for secrets).
    #[serde(default)]
    pub input: Value,
    /// The workspace (and the call's directory).
    pub workspace: PathBuf,
    /// The home directory (default: none).
    #[serde(default)]
    pub home: Option<PathBuf>,
    /// The state home the agent may not touch.
    #[serde(default)]
    pub state: Option<PathBuf>,
    /// The user policy file the agent may not touch.
    #[serde(default)]
    pub user_policy: Option<PathBuf>,
    /// The execution mode (default unattended).
    #[serde(default)]
    pub mode: Option<ExecutionMode>,
    /// Whether allowed shell calls run in the kernel sandbox.
    #[serde(default)]
    pub confinement: bool,
    /// A user-layer policy (default: the built-in policy alone).
    #[serde(default)]
    pub policy: Option<PolicyText>,
}

/// A policy file's name and text.
#[derive(Debug, Deserialize, Clone, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct PolicyText {
    /// The file's name, for diagnostics and relative pack paths.
    pub name: PathBuf,
    /// Its TOML.
    pub text: String,
}

/// Decides requests, keeping each policy it loaded.
#[derive(Default)]
pub struct Decider {
    policies: HashMap<PolicyText, Policy>,
    builtin: Option<Policy>,
}

impl Decider {
    /// The answer to one request line.
    pub fn answer(&mut self, line: &str) -> Value {
        let req: Request = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) => return json!({ "error": format!("bad request: {e}") }),
        };
        let policy = match self.policy(req.policy.clone()) {
            Ok(p) => p,
            Err(e) => return json!({ "error": e }),
        };
        let ctx = Context::new(&req.workspace)
            .with_home(req.home.as_deref())
            .with_mode(req.mode.unwrap_or(ExecutionMode::Unattended))
            .with_protected(req.state.as_deref(), req.user_policy.as_deref())
            .with_worktree(std::sync::Arc::new(crate::git::GitWorktree))
            .with_confinement(req.confinement);
        let input = if req.input.is_null() { json!({}) } else { req.input };
        let call = ToolCall::new(&req.tool, req.action, input, &req.workspace);
        let d = Gate::new(policy).evaluate(&call, &ctx);
        json!({
            "verdict": d.verdict().as_str(),
            "confine": d.must_confine(),
            "network": d.network(),
            "codes": d.reasons().iter().map(|r| r.code.as_str()).collect::<Vec<_>>(),
            "explain": d.explain(),
        })
    }

    fn policy(&mut self, text: Option<PolicyText>) -> Result<&Policy, String> {
        let Some(text) = text else {
            return Ok(self.builtin.get_or_insert_with(Policy::builtin));
        };
        if !self.policies.contains_key(&text) {
            let p = Policy::from_layers(&[(LayerKind::User, text.name.clone(), text.text.clone())])
                .map_err(|e| format!("policy {} does not load: {e}", text.name.display()))?;
            self.policies.insert(text.clone(), p);
        }
        self.policies.get(&text).ok_or_else(|| "policy cache lost an entry".to_string())
    }
}

/// Answers every line of `input` on `out`, flushing after each (a caller may keep one process
/// and talk to it line by line). Returns how many lines were answered.
pub fn serve(input: impl BufRead, out: &mut impl Write) -> std::io::Result<usize> {
    let mut decider = Decider::default();
    let mut n = 0;
    let mut lines = input.split(b'\n');
    while let Some(line) = lines.next().transpose()? {
        let answer = if line.len() > MAX_LINE {
            json!({ "error": format!("request longer than {MAX_LINE} bytes") })
        } else {
            match std::str::from_utf8(&line) {
                Ok(l) if l.trim().is_empty() => continue,
                Ok(l) => decider.answer(l),
                Err(_) => json!({ "error": "request is not UTF-8" }),
            }
        };
        writeln!(out, "{answer}")?;
        out.flush()?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn answers_each_line_and_reports_bad_ones() {
        let ws = tempfile::tempdir().unwrap();
        let w = ws.path().display();
        let input = format!(
            "{{\"tool\":\"Bash\",\"action\":{{\"Shell\":{{\"command\":\"rm -rf /\"}}}},\"workspace\":\"{w}\"}}\n\
             not json\n\n\
             {{\"tool\":\"Bash\",\"action\":{{\"Shell\":{{\"command\":\"ls\"}}}},\"workspace\":\"{w}\",\"policy\":{{\"name\":\"u.toml\",\"text\":\"[nonsense\"}}}}\n\
             {{\"tool\":\"Read\",\"action\":{{\"ReadFile\":{{\"path\":\"{w}/a.txt\"}}}},\"workspace\":\"{w}\"}}\n"
        );
        let mut out = Vec::new();
        assert_eq!(serve(input.as_bytes(), &mut out).unwrap(), 4);
        let lines: Vec<Value> =
            String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["verdict"], "deny");
        assert_eq!(lines[0]["codes"][0], "destructive-rm-root");
        assert!(lines[1]["error"].as_str().unwrap().starts_with("bad request"));
        assert!(lines[2]["error"].as_str().unwrap().contains("u.toml does not load"));
        assert_eq!(lines[3]["verdict"], "allow");
    }
}
