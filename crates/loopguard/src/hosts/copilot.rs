//! `loopguard hook copilot`: GitHub Copilot CLI's hook protocol, with loopguard's hooks
//! registered under the PascalCase event names (docs/hosts/copilot.md; captured samples in
//! tests/fixtures/hosts/copilot). Spelled that way, Copilot sends the event's name, the session
//! and Claude-style `tool_name`/`tool_input` (Claude's tool names, Copilot's argument names), and
//! honours `hookSpecificOutput`. Parsing and rendering only: the engine decides.
//!
//! What Copilot does with answers: a deny blocks with its reason; `ask` blocks too ("unable to
//! ask") — the engine turns asks into denies with their own reason first; exit 1 and crashes
//! block; bad JSON and timeouts let the call run (never sent). So:
//! - PreToolUse: allow prints nothing (Copilot's own permissions still apply); deny prints
//!   `permissionDecision: deny` with its reason; a confined call is allowed with the whole input
//!   back and `command` rewritten (`updatedInput`: Copilot replaces the input wholesale).
//! - PostToolUse: a result with secrets is replaced (`modifiedResult.textResultForLlm`).
//! - Failures: the JSON deny with exit 0 (Copilot shows its reason; on exit 2 it would not). A
//!   failing PostToolUse withholds the output (`modifiedResult`: exit 2 does not stop a result
//!   there); a failure before the event is known answers both; a failing Stop exits 0.

use super::{Exit, HookOutcome, Host, Rejected, input};
use crate::engine::{Answer, Capabilities, EventKind, HookError, HostEvent, ToolResult, ToolUse};
use loopguard_core::{Action, Change, Edit, ExecutionMode, ToolKind, Verdict};
use serde_json::{Value, json};

/// The Copilot CLI adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Copilot;

impl Host for Copilot {
    const NAME: &'static str = "copilot";

    fn capabilities(&self) -> Capabilities {
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
                    Verdict::Ask | Verdict::Deny => {
                        let v = json!({
                            "permissionDecision": "deny",
                            "permissionDecisionReason": input::reason(&decision.explain()),
                        });
                        format!("{v}\n")
                    }
                };
                HookOutcome { stdout, stderr: notices_stderr(&notices), exit: Exit::Proceed }
            }
            Answer::Confine { command, notices } => {
                let mut updated = ev.tool.as_ref().map_or_else(|| json!({}), |t| t.input.clone());
                updated["command"] = Value::String(command);
                let v = json!({ "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "permissionDecisionReason": "loopguard: runs in its kernel sandbox (loopguard exec)",
                    "updatedInput": updated,
                }});
                HookOutcome { stdout: format!("{v}\n"), stderr: notices_stderr(&notices), exit: Exit::Proceed }
            }
            Answer::ReplaceOutput { output, redacted } => {
                let text = output.get("text_result_for_llm").map_or_else(|| input::as_text(&output), input::as_text);
                let result_type = output.get("result_type").and_then(Value::as_str).unwrap_or("success");
                replaced(&input::redacted_text(&text, redacted), result_type)
            }
        }
    }

    fn render_failure(&self, ev: Option<&HostEvent>, err: &HookError) -> HookOutcome {
        let why = input::reason(&err.decision().explain());
        let withheld = format!("loopguard withheld this output: it could not be checked. {why}");
        let deny = json!({ "permissionDecision": "deny", "permissionDecisionReason": why });
        let v = match ev.map(|e| e.kind) {
            Some(EventKind::Stop) => {
                return HookOutcome {
                    stdout: String::new(),
                    stderr: format!("loopguard: {why}\n"),
                    exit: Exit::Proceed,
                };
            }
            // Exit 2 does not withhold a result: replace it with the reason.
            Some(EventKind::ToolResult { .. }) => {
                json!({ "modifiedResult": { "textResultForLlm": withheld, "resultType": "failure" } })
            }
            Some(EventKind::ToolCall) => deny,
            // The event is not known (the input did not read, the deadline passed): an answer
            // that blocks a call and withholds a result, whichever this was. Exit 0, so that
            // Copilot reads it (it ignores exit 2 after a tool ran, and hides the reason of a
            // pre-tool exit 2).
            _ => {
                let mut v = deny;
                v["modifiedResult"] = json!({ "textResultForLlm": withheld, "resultType": "failure" });
                v
            }
        };
        HookOutcome { stdout: format!("{v}\n"), stderr: format!("{why}\n"), exit: Exit::Proceed }
    }
}

fn replaced(text: &str, result_type: &str) -> HookOutcome {
    let v = json!({ "modifiedResult": { "textResultForLlm": text, "resultType": result_type } });
    HookOutcome { stdout: format!("{v}\n"), stderr: String::new(), exit: Exit::Proceed }
}

fn notices_stderr(notices: &[String]) -> String {
    input::notices_text(notices).map(|t| t + "\n").unwrap_or_default()
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
    // No transcript in a format the spend accounting reads: spend budgets are not measured.
    ev.spend_reported = false;
    // Copilot cannot put loopguard's asks to its human: the run is unattended for the gate.
    ev.mode = ExecutionMode::Unattended;
    ev.why = input::text(&obj, if ev.kind == EventKind::SessionStart { "source" } else { "reason" });
    ev.prompt_bytes = obj.get("prompt").and_then(Value::as_str).map(str::len);
    match ev.kind {
        EventKind::ToolCall => {
            let (name, input) = input::tool_fields(&obj, &ev, "tool_name", "tool_input")?;
            let action = action(&name, &input);
            ev.tool = Some(ToolUse::new(&name, input, None, action));
        }
        EventKind::ToolResult { .. } => {
            let name = input::text(&obj, "tool_name");
            let response = obj.remove("tool_result");
            let response_bytes = response.as_ref().map(|r| r.to_string().len());
            let error_bytes = obj.get("error").map(|e| e.to_string().len());
            let text = match (name.as_deref(), response.as_ref().and_then(|r| r.get("text_result_for_llm"))) {
                (Some("Bash" | "Read"), Some(Value::String(s))) => Some(s.clone()),
                _ => None,
            };
            let input = obj.remove("tool_input").unwrap_or(Value::Null);
            ev.result = Some(ToolResult { response, response_bytes, error_bytes, text, ..ToolResult::default() });
            ev.tool = name.map(|n| {
                let action = action(&n, &input);
                ToolUse::new(&n, input, None, action)
            });
        }
        _ => {}
    }
    Ok(ev)
}

/// What a Copilot CLI tool call does (PascalCase payloads: Claude's names for the tools Claude
/// has, Copilot's own argument names; Copilot's own names for the rest).
pub fn action(tool: &str, input: &Value) -> Action {
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    match tool {
        "Bash" | "bash" => match s("command") {
            Some(command) => Action::Shell { command },
            None => invalid(ToolKind::Shell, "`command` is missing or not a string"),
        },
        "Write" | "create" => match s("path") {
            Some(path) => Action::WriteFile { path, change: Change::Whole(s("file_text").unwrap_or_default()) },
            None => invalid(ToolKind::FileWrite, "`path` is missing or not a string"),
        },
        "Edit" | "edit" => match s("path") {
            Some(path) => {
                let edit = s("old_str").zip(s("new_str")).map(|(old, new)| Edit { old, new, all: false });
                Action::WriteFile { path, change: Change::Edits(edit.into_iter().collect()) }
            }
            None => invalid(ToolKind::FileWrite, "`path` is missing or not a string"),
        },
        "Read" | "view" => Action::ReadFile { path: s("path") },
        "Glob" | "glob" => Action::Search { path: s("path"), content_glob: None },
        "Grep" | "grep" => Action::Search { path: s("path"), content_glob: s("glob") },
        "web_fetch" | "WebFetch" => Action::Fetch { url: s("url") },
        "task" | "Task" | "read_agent" | "list_agents" | "write_agent" => Action::Agent,
        // Job control of shells already started, Copilot's own notes and docs.
        "read_bash"
        | "list_bash"
        | "stop_bash"
        | "sql"
        | "session_store_sql"
        | "fetch_copilot_cli_documentation"
        | "report_intent"
        | "update_todo" => Action::Meta,
        // `write_bash` types into a running shell: text no hook sees as a command. Unknown, so
        // the policy's `unknown_tool` decides (a deny here, where nobody can be asked).
        _ => Action::Unknown,
    }
}

fn invalid(kind: ToolKind, problem: &str) -> Action {
    Action::Invalid { kind, problem: problem.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_copilot_tools() {
        assert_eq!(action("Bash", &json!({"command": "ls"})), Action::Shell { command: "ls".into() });
        assert_eq!(
            action("Edit", &json!({"path": "/w/a", "old_str": "x", "new_str": "y"})),
            Action::WriteFile {
                path: "/w/a".into(),
                change: Change::Edits(vec![Edit { old: "x".into(), new: "y".into(), all: false }])
            }
        );
        assert_eq!(
            action("Read", &json!({"path": "/etc/shadow"})),
            Action::ReadFile { path: Some("/etc/shadow".into()) }
        );
        assert_eq!(action("write_bash", &json!({"input": "rm -r build\n"})), Action::Unknown);
    }

    #[test]
    fn a_failing_result_is_withheld_not_passed() {
        let ev = HostEvent::new(EventKind::ToolResult { failed: false }, "PostToolUse", "s", "/w".into());
        let o = Copilot.render_failure(Some(&ev), &HookError::Internal("boom".into()));
        assert_eq!(o.exit, Exit::Proceed);
        assert!(o.stdout.contains("modifiedResult") && o.stdout.contains("withheld"), "{}", o.stdout);
        // Not knowing the event: it blocks a call and withholds a result alike.
        let o = Copilot.render_failure(None, &HookError::Deadline(2000));
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        assert_eq!(v["permissionDecision"], "deny");
        assert!(v["modifiedResult"]["textResultForLlm"].as_str().unwrap().contains("withheld"));
    }
}
