//! `loopguard hook codex`: Codex CLI's hook protocol (docs/hosts/codex.md; captured samples in
//! tests/fixtures/hosts/codex). Parsing and rendering only: the engine decides.
//!
//! What Codex does with answers, and so what this adapter never sends: `ask`, a bare `allow`,
//! a deny with a blank reason, exit 1 and bad JSON all let the call run (fail open). So:
//! - PreToolUse: allow prints nothing; deny prints the JSON deny with a reason (never blank);
//!   an ask cannot be put to a human through Codex and arrives here already turned into a deny
//!   (`host-cannot-ask`); a confined call is allowed with `updatedInput.command` rewritten.
//! - PostToolUse: a result with secrets is blocked with the redacted text as the reason (Codex
//!   hands the model only the reason: the command has already run).
//! - Failures: exit 2 with the reason on stderr (Codex blocks and shows it). A failing Stop
//!   exits 0: a blocking Stop makes Codex go on, endlessly.

pub mod patch;

use super::{Exit, HookOutcome, Host, Rejected, input};
use crate::engine::{Answer, Capabilities, EventKind, HookError, HostEvent, ToolResult, ToolUse};
use loopguard_core::{Action, ExecutionMode, ToolKind, Verdict};
use serde_json::{Value, json};

/// The Codex CLI adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Codex;

impl Host for Codex {
    const NAME: &'static str = "codex";

    fn capabilities(&self) -> Capabilities {
        // `ask` runs the call in Codex (observed: "unsupported", the tool runs).
        Capabilities { ask: false, rewrite_input: true, replace_output: true }
    }

    fn parse(&self, bytes: &[u8]) -> Result<HostEvent, Rejected> {
        parse(bytes)
    }

    fn render(&self, ev: &HostEvent, answer: Answer) -> HookOutcome {
        match answer {
            Answer::Proceed => HookOutcome::proceed(),
            Answer::Decide { decision, preview: _, notices, .. } => {
                let stdout = match decision.verdict() {
                    Verdict::Allow => String::new(),
                    // The engine has turned every ask into a deny (Codex cannot ask).
                    Verdict::Ask | Verdict::Deny => deny_json(&decision.explain()),
                };
                HookOutcome { stdout, stderr: notices_stderr(&notices), exit: Exit::Proceed }
            }
            Answer::Confine { command, notices } => {
                let v = json!({ "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "permissionDecisionReason": "loopguard: runs in its kernel sandbox (loopguard exec)",
                    "updatedInput": { "command": command },
                }});
                HookOutcome { stdout: format!("{v}\n"), stderr: notices_stderr(&notices), exit: Exit::Proceed }
            }
            Answer::ReplaceOutput { output, redacted } => {
                let text = output_text(ev, &output);
                let v = json!({ "decision": "block", "reason": input::redacted_text(&text, redacted) });
                HookOutcome { stdout: format!("{v}\n"), stderr: String::new(), exit: Exit::Proceed }
            }
        }
    }

    fn render_failure(&self, ev: Option<&HostEvent>, err: &HookError) -> HookOutcome {
        let why = input::reason(&err.decision().explain());
        if ev.is_some_and(|e| e.kind == EventKind::Stop) {
            return HookOutcome { stdout: String::new(), stderr: format!("loopguard: {why}\n"), exit: Exit::Proceed };
        }
        // Exit 2 blocks whatever the event and shows stderr (stdout is ignored then).
        HookOutcome { stdout: String::new(), stderr: format!("{why}\n"), exit: Exit::Block }
    }
}

/// The JSON deny of a PreToolUse.
fn deny_json(reason: &str) -> String {
    let v = json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": input::reason(reason),
    }});
    format!("{v}\n")
}

/// Notices go to stderr: Codex's answer to a bare allow must stay empty.
fn notices_stderr(notices: &[String]) -> String {
    input::notices_text(notices).map(|t| t + "\n").unwrap_or_default()
}

/// What the model would have read: a shell's output is text; an MCP result's text parts.
fn output_text(ev: &HostEvent, output: &Value) -> String {
    let mcp = ev.tool.as_ref().is_some_and(|t| t.action.kind() == Some(ToolKind::Mcp));
    match output.get("content").and_then(Value::as_array) {
        Some(parts) if mcp => parts
            .iter()
            .map(|p| p.get("text").and_then(Value::as_str).map_or_else(|| p.to_string(), String::from))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => input::as_text(output),
    }
}

fn kind_of(name: &str) -> Option<EventKind> {
    Some(match name {
        "PreToolUse" => EventKind::ToolCall,
        "PostToolUse" => EventKind::ToolResult { failed: false },
        "SessionStart" => EventKind::SessionStart,
        "SessionEnd" => EventKind::SessionEnd,
        "UserPromptSubmit" => EventKind::Prompt,
        "Stop" | "SubagentStop" => EventKind::Stop,
        _ => return None,
    })
}

fn parse(bytes: &[u8]) -> Result<HostEvent, Rejected> {
    let (mut obj, mut ev) = input::head(bytes, input::CLAUDE_KEYS, None, kind_of)?;
    // No transcript in a format the spend accounting reads: spend budgets are not measured.
    ev.spend_reported = false;
    ev.mode = mode(obj.get("permission_mode").and_then(Value::as_str));
    ev.why = input::text(&obj, if ev.kind == EventKind::SessionStart { "source" } else { "reason" });
    ev.prompt_bytes = obj.get("prompt").and_then(Value::as_str).map(str::len);
    // The transcript is Codex's rollout log, not a format the spend accounting reads.
    match ev.kind {
        EventKind::ToolCall => {
            let (name, input) = input::tool_fields(&obj, &ev, "tool_name", "tool_input")?;
            ev.tool = Some(tool_use(&name, input, input::text(&obj, "tool_use_id"), &ev.cwd));
        }
        EventKind::ToolResult { .. } => {
            let (name, use_id) = (input::text(&obj, "tool_name"), input::text(&obj, "tool_use_id"));
            let response = obj.remove("tool_response");
            let response_bytes = response.as_ref().map(|r| r.to_string().len());
            let input = obj.remove("tool_input").unwrap_or(Value::Null);
            let text = match (name.as_deref(), &response) {
                (Some("Bash"), Some(Value::String(s))) => Some(s.clone()),
                _ => None,
            };
            ev.result = Some(ToolResult { response, response_bytes, text, ..ToolResult::default() });
            ev.tool = name.map(|n| tool_use(&n, input, use_id, &ev.cwd));
        }
        _ => {}
    }
    pin_session_directory(&mut ev);
    Ok(ev)
}

/// Codex runs its hooks in the session's directory, while the input's `cwd` can be the directory
/// the model chose for this one command (`workdir`). The workspace (and so the sandbox's roots)
/// comes from the session's directory; the command is analysed where it runs.
fn pin_session_directory(ev: &mut HostEvent) {
    let Ok(session_dir) = std::env::current_dir() else { return };
    if session_dir == ev.cwd || !session_dir.is_absolute() {
        return;
    }
    if let Some(t) = ev.tool.as_mut() {
        t.cwd = Some(ev.cwd.clone());
    }
    ev.cwd = session_dir;
}

/// Codex cannot ask its human anything (see [`Codex::capabilities`]): whatever its approval
/// setting, loopguard's own asks cannot be answered, so the run is unattended for the gate
/// (code it cannot see into runs confined, not asked). Plan mode stays plan mode.
fn mode(permission_mode: Option<&str>) -> ExecutionMode {
    match permission_mode {
        Some("plan") => ExecutionMode::Plan,
        _ => ExecutionMode::Unattended,
    }
}

fn tool_use(name: &str, input: Value, use_id: Option<String>, cwd: &std::path::Path) -> ToolUse {
    let action = action_in(name, &input, cwd);
    // MCP calls already carry the host-neutral name `mcp__<server>__<tool>`.
    ToolUse::new(name, input, use_id, action)
}

/// [`action`], with the moves of a patch resolved against the files in `cwd`: a moved file's
/// destination gets the source's content with the hunks applied (what Codex writes there). A
/// source that cannot be read makes the patch unreadable too.
pub fn action_in(tool: &str, input: &Value, cwd: &std::path::Path) -> Action {
    let patch = match (tool, input.get("command").and_then(Value::as_str)) {
        ("apply_patch", Some(text)) => patch::parse_with_moves(text),
        _ => return action(tool, input),
    };
    let mut p = match patch {
        Ok(p) => p,
        Err(e) => {
            return Action::Invalid { kind: ToolKind::FileWrite, problem: format!("the patch does not read: {e}") };
        }
    };
    for (at, from) in std::mem::take(&mut p.moves) {
        let source = match std::fs::read_to_string(cwd.join(&from)) {
            Ok(t) => t,
            Err(e) => {
                let problem = format!("the patch moves `{from}`, which cannot be read ({e})");
                return Action::Invalid { kind: ToolKind::FileWrite, problem };
            }
        };
        if let Some(f) = p.files.get_mut(at) {
            let moved = f.change.apply(&source).unwrap_or(source);
            f.change = loopguard_core::Change::Whole(moved);
        }
    }
    Action::Patch { files: p.files }
}

/// What a Codex tool call does, as Codex's hooks see it: the shell tool arrives as `Bash`
/// `{command}` (its `workdir` is not shown to hooks), file edits as `apply_patch` `{command:
/// <patch>}`, MCP tools as `mcp__<server>__<tool>`.
pub fn action(tool: &str, input: &Value) -> Action {
    let command = input.get("command").and_then(Value::as_str);
    match tool {
        "Bash" => match command {
            Some(c) => Action::Shell { command: c.to_string() },
            None => Action::Invalid { kind: ToolKind::Shell, problem: "`command` is missing or not a string".into() },
        },
        "apply_patch" => match command.map(patch::parse) {
            Some(Ok(files)) => Action::Patch { files },
            Some(Err(e)) => {
                Action::Invalid { kind: ToolKind::FileWrite, problem: format!("the patch does not read: {e}") }
            }
            None => {
                Action::Invalid { kind: ToolKind::FileWrite, problem: "`command` is missing or not a string".into() }
            }
        },
        "view_image" => Action::ReadFile { path: input.get("path").and_then(Value::as_str).map(String::from) },
        "update_plan" | "get_goal" | "set_goal" => Action::Meta,
        "web_search" => Action::WebSearch,
        _ => match tool.strip_prefix("mcp__").and_then(|rest| rest.split_once("__")) {
            Some((server, name)) => Action::Mcp { server: server.to_string(), tool: name.to_string() },
            None => Action::Unknown,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_codex_tools() {
        assert_eq!(action("Bash", &json!({"command": "ls"})), Action::Shell { command: "ls".into() });
        assert!(matches!(
            action("apply_patch", &json!({"command": "*** Begin Patch\n*** Delete File: a\n*** End Patch"})),
            Action::Patch { ref files } if files.len() == 1
        ));
        assert!(matches!(action("apply_patch", &json!({"command": "nope"})), Action::Invalid { .. }));
        assert_eq!(action("mcp__mock__echo", &json!({})), Action::Mcp { server: "mock".into(), tool: "echo".into() });
        assert_eq!(action("write_stdin", &json!({})), Action::Unknown);
        assert_eq!(mode(Some("default")), ExecutionMode::Unattended);
    }

    #[test]
    fn the_workspace_comes_from_the_session_directory_not_the_commands() {
        // Codex runs the hook in the session's directory; the input's `cwd` may be the model's
        // `workdir` for this command.
        let session = std::env::current_dir().unwrap();
        let input = json!({"session_id": "s", "cwd": "/home/someone", "hook_event_name": "PreToolUse",
            "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": "echo x >> .bashrc"}});
        let ev = parse(input.to_string().as_bytes()).unwrap();
        assert_eq!(ev.cwd, session);
        assert_eq!(ev.tool.unwrap().cwd, Some(std::path::PathBuf::from("/home/someone")));
    }

    #[test]
    fn a_moved_file_is_written_with_its_source_content() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("staged.json"), "{\"dependencies\": {\"left-pad\": \"1.0.0\"}}\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: staged.json\n*** Move to: package.json\n@@\n-{\"dependencies\": {\"left-pad\": \"1.0.0\"}}\n+{\"dependencies\": {\"left-pad\": \"1.1.0\"}}\n*** End Patch\n";
        let a = action_in("apply_patch", &json!({ "command": patch }), d.path());
        let Action::Patch { files } = a else { panic!("{a:?}") };
        assert_eq!(files[0].change, loopguard_core::Change::Delete);
        assert_eq!(files[1].path, "package.json");
        assert_eq!(
            files[1].change,
            loopguard_core::Change::Whole("{\"dependencies\": {\"left-pad\": \"1.1.0\"}}\n".into())
        );
        let missing = patch.replace("staged.json", "nowhere.json");
        assert!(matches!(action_in("apply_patch", &json!({ "command": missing }), d.path()), Action::Invalid { .. }));
    }

    #[test]
    fn never_answers_with_a_blank_reason() {
        let o = Codex.render_failure(None, &HookError::Internal(String::new()));
        assert_eq!(o.exit, Exit::Block);
        assert!(!o.stderr.trim().is_empty());
        assert!(deny_json("   ").contains("loopguard denied this call."));
    }
}
