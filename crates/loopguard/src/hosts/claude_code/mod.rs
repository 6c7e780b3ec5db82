//! `loopguard hook claude-code`: Claude Code's hook protocol (docs/hosts/claude-code.md; the
//! captured samples are in tests/fixtures/hooks). Parsing and rendering only: the engine decides.
//!
//! - PreToolUse: allow prints nothing and exits 0, so the host's own permission flow still
//!   applies; ask and deny print the JSON decision with a reason the model can act on; a call
//!   that must run confined is allowed with its command rewritten (`updatedInput`).
//! - PostToolUse: a result with secrets in it is replaced (`updatedToolOutput`, same shape).
//! - PostToolUseFailure, SessionStart, SessionEnd, UserPromptSubmit, Stop: audited.
//! - Anything wrong (bad input, unknown event, internal error, deadline): a JSON deny on stdout,
//!   the reason on stderr, exit 2. Stop is the exception: exit 2 there would make the agent keep
//!   going, so a failing Stop exits 0 with the reason on stderr.

pub mod tools;

use super::{Exit, HookOutcome, Host, Rejected, input};
use crate::engine::{Answer, Capabilities, EventKind, HookError, HostEvent, ToolResult, ToolUse};
use loopguard_core::{Decision, ExecutionMode, Verdict};
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// The Claude Code adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeCode;

impl Host for ClaudeCode {
    const NAME: &'static str = "claude-code";

    fn capabilities(&self) -> Capabilities {
        Capabilities { ask: true, rewrite_input: true, replace_output: true }
    }

    fn parse(&self, bytes: &[u8]) -> Result<HostEvent, Rejected> {
        parse(bytes)
    }

    fn render(&self, ev: &HostEvent, answer: Answer) -> HookOutcome {
        match answer {
            Answer::Proceed => HookOutcome::proceed(),
            Answer::Decide { decision, preview, notices, end_session } => {
                let stdout = match decision.verdict() {
                    Verdict::Allow => String::new(),
                    Verdict::Ask | Verdict::Deny => decision_json(&decision, preview.as_deref()),
                };
                // With the deny, `continue: false` ends the session: the tool does not run and
                // the model makes no further turn.
                let stdout = match end_session.filter(|_| decision.verdict() == Verdict::Deny) {
                    Some(why) => ending(&stdout, &why),
                    None => stdout,
                };
                with_notices(HookOutcome { stdout, stderr: String::new(), exit: Exit::Proceed }, &notices)
            }
            Answer::Confine { command, notices } => {
                let mut updated = ev.tool.as_ref().map_or(Value::Null, |t| t.input.clone());
                updated["command"] = Value::String(command);
                let v = json!({ "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "permissionDecisionReason": "loopguard: runs in its kernel sandbox (loopguard exec)",
                    "updatedInput": updated,
                }});
                with_notices(
                    HookOutcome { stdout: format!("{v}\n"), stderr: String::new(), exit: Exit::Proceed },
                    &notices,
                )
            }
            Answer::ReplaceOutput { output, .. } => {
                let v =
                    json!({ "hookSpecificOutput": { "hookEventName": "PostToolUse", "updatedToolOutput": output } });
                HookOutcome { stdout: format!("{v}\n"), stderr: String::new(), exit: Exit::Proceed }
            }
        }
    }

    fn render_failure(&self, ev: Option<&HostEvent>, err: &HookError) -> HookOutcome {
        if ev.is_some_and(|e| e.kind == EventKind::Stop) {
            // Exit 2 on Stop would force the agent to continue: report and let it stop.
            return HookOutcome { stdout: String::new(), stderr: format!("loopguard: {err}\n"), exit: Exit::Proceed };
        }
        fail(&err.decision())
    }
}

/// The deny every failure answers with: JSON deny on stdout (honoured if this was a
/// PreToolUse), reason on stderr, exit 2 (blocks whatever the event was).
pub fn fail(d: &Decision) -> HookOutcome {
    let why = loopguard_secrets::Scanner::builtin().redact(&d.explain());
    HookOutcome { stdout: decision_json(d, None), stderr: format!("{why}\n"), exit: Exit::Block }
}

/// Handles one hook input (already read).
pub fn handle(bytes: &[u8], env: &crate::state::Env) -> HookOutcome {
    super::serve(ClaudeCode, bytes, env)
}

fn decision_json(d: &Decision, preview: Option<&str>) -> String {
    let mut reason = d.explain();
    if let Some(p) = preview {
        reason.push_str(&format!("\nPreview: {p}"));
    }
    let v = json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": d.verdict().as_str(),
            // Reasons quote commands and paths: never let one carry a secret out.
            "permissionDecisionReason": loopguard_secrets::Scanner::builtin().redact(&reason),
        }
    });
    format!("{v}\n")
}

/// Adds `continue: false` and a `stopReason` to a JSON answer.
fn ending(stdout: &str, why: &str) -> String {
    let mut v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| Value::Object(Map::new()));
    v["continue"] = Value::Bool(false);
    v["stopReason"] = Value::String(format!("loopguard: {}", loopguard_secrets::Scanner::builtin().redact(why)));
    format!("{v}\n")
}

/// Adds `systemMessage` (shown to the human, not the model) to an answer that exits 0.
fn with_notices(mut out: HookOutcome, notices: &[String]) -> HookOutcome {
    if notices.is_empty() || out.exit != Exit::Proceed {
        return out;
    }
    let text = notices.iter().map(|n| format!("loopguard: {n}")).collect::<Vec<_>>().join("\n");
    let text = loopguard_secrets::Scanner::builtin().redact(&text);
    let mut v = if out.stdout.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        match serde_json::from_str::<Value>(&out.stdout) {
            Ok(v @ Value::Object(_)) => v,
            // Not ours to change: keep the answer exactly.
            _ => return out,
        }
    };
    v["systemMessage"] = Value::String(text);
    out.stdout = format!("{v}\n");
    out
}

fn kind_of(name: &str) -> Option<EventKind> {
    Some(match name {
        "PreToolUse" => EventKind::ToolCall,
        "PostToolUse" => EventKind::ToolResult { failed: false },
        "PostToolUseFailure" => EventKind::ToolResult { failed: true },
        "SessionStart" => EventKind::SessionStart,
        "SessionEnd" => EventKind::SessionEnd,
        "UserPromptSubmit" => EventKind::Prompt,
        "Stop" | "SubagentStop" => EventKind::Stop,
        _ => return None,
    })
}

fn parse(bytes: &[u8]) -> Result<HostEvent, Rejected> {
    let (mut obj, mut ev) = input::head(bytes, input::CLAUDE_KEYS, None, kind_of)?;
    if obj.contains_key("cursor_version") {
        return under_cursor(ev);
    }
    let kind = ev.kind;
    let text = |k: &str| input::text(&obj, k);
    ev.mode = obj.get("permission_mode").and_then(Value::as_str).map_or(ExecutionMode::Normal, tools::mode);
    ev.transcript = text("transcript_path").map(PathBuf::from);
    ev.why = text(if kind == EventKind::SessionStart { "source" } else { "reason" });
    ev.prompt_bytes = obj.get("prompt").and_then(Value::as_str).map(str::len);
    match kind {
        EventKind::ToolCall => {
            let (name, input) = input::tool_fields(&obj, &ev, "tool_name", "tool_input")?;
            ev.tool = Some(tool_use(&name, input, text("tool_use_id")));
        }
        EventKind::ToolResult { .. } => {
            let tool = text("tool_name");
            let use_id = text("tool_use_id");
            let size = |k: &str| obj.get(k).map(|v| v.to_string().len());
            let (response_bytes, error_bytes) = (size("tool_response"), size("error"));
            let is_interrupt = obj.get("is_interrupt").and_then(Value::as_bool);
            let duration_ms = obj.get("duration_ms").and_then(Value::as_u64);
            // Moved out, not copied: a result can be as large as the input allows.
            let response = obj.remove("tool_response");
            let input = obj.remove("tool_input").unwrap_or(Value::Null);
            ev.result = Some(ToolResult {
                text: response.as_ref().and_then(|r| tools::result_text(tool.as_deref().unwrap_or(""), r)),
                original: response
                    .as_ref()
                    .and_then(|r| r.get("originalFile"))
                    .and_then(Value::as_str)
                    .map(String::from),
                response,
                response_bytes,
                error_bytes,
                is_interrupt,
                duration_ms,
            });
            ev.tool = tool.map(|name| tool_use(&name, input, use_id));
        }
        _ => {}
    }
    Ok(ev)
}

/// Cursor runs Claude Code's hooks too — with Cursor's tool names, and where `ask` is not
/// enforced. Its payload says so (`cursor_version`: Cursor writes the hook's input, the agent
/// cannot). When loopguard's own Cursor hooks are installed they decide and this one steps
/// aside; when they are not, every event is refused with what to do: a Claude Code answer read
/// by Cursor is not a gate loopguard can stand behind.
fn under_cursor(mut ev: HostEvent) -> Result<HostEvent, Rejected> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let project = std::env::var_os("CURSOR_PROJECT_DIR").map(PathBuf::from).unwrap_or_else(|| ev.cwd.clone());
    if crate::install::cursor_hooks_installed(home.as_deref(), Some(&project)) {
        ev.kind = EventKind::Deferred;
        return Ok(ev);
    }
    Err(input::reject(
        &ev,
        HookError::Usage(
            "Cursor is running loopguard's Claude Code hooks, which cannot gate Cursor's tools; run `loopguard install cursor` (every call is denied until then).".into(),
        ),
    ))
}

/// Claude Code's tool, with what it does.
fn tool_use(name: &str, input: Value, use_id: Option<String>) -> ToolUse {
    let action = tools::action(name, &input);
    ToolUse::new(name, input, use_id, action)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EventKind, HostEvent};

    #[test]
    fn a_deny_that_ends_the_session_carries_continue_false_and_no_other_does() {
        let ev = HostEvent::new(EventKind::ToolCall, "PreToolUse", "s", std::path::PathBuf::from("/w"));
        let deny = loopguard_core::Decision::fail_closed(loopguard_core::reasons::BREAKER_STOPPED, "spent");
        let out = ClaudeCode.render(
            &ev,
            Answer::Decide {
                decision: deny,
                preview: None,
                notices: vec![],
                end_session: Some("the budget is spent".into()),
            },
        );
        let v: Value = serde_json::from_str(out.stdout.trim()).unwrap();
        assert_eq!(v["continue"], false);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "the tool does not run either");
        assert!(v["stopReason"].as_str().unwrap().contains("budget is spent"));
        let deny = loopguard_core::Decision::fail_closed(loopguard_core::reasons::BREAKER_STOPPED, "wait");
        let out = ClaudeCode
            .render(&ev, Answer::Decide { decision: deny, preview: None, notices: vec![], end_session: None });
        assert!(!out.stdout.contains("continue"), "{}", out.stdout);
    }
}
