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
            Answer::Decide { decision, preview: _, notices } => {
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
            ev.tool = Some(tool_use(&name, input, input::text(&obj, "tool_use_id")));
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
            ev.tool = name.map(|n| tool_use(&n, input, use_id));
        }
        _ => {}
    }
    Ok(ev)
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

fn tool_use(name: &str, input: Value, use_id: Option<String>) -> ToolUse {
    let action = action(name, &input);
    // MCP calls already carry the host-neutral name `mcp__<server>__<tool>`.
    ToolUse::new(name, input, use_id, action)
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
    fn never_answers_with_a_blank_reason() {
        let o = Codex.render_failure(None, &HookError::Internal(String::new()));
        assert_eq!(o.exit, Exit::Block);
        assert!(!o.stderr.trim().is_empty());
        assert!(deny_json("   ").contains("loopguard denied this call."));
    }
}
