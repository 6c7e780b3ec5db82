//! `loopguard hook cursor`: Cursor's hook protocol (the IDE and `cursor-agent`), from Cursor's
//! documentation (docs/hosts/cursor.md says what was and was not observed: there is no offline
//! Cursor client to test against). Parsing and rendering only: the engine decides.
//!
//! Cursor's answers are flat JSON: `{"permission": "allow"|"deny", "user_message",
//! "agent_message"}`; `updated_input` on preToolUse replaces a tool's input;
//! `updated_mcp_tool_output` on postToolUse replaces an MCP tool's result (no other tool's).
//! Entries installed with `failClosed: true` block when the hook crashes, times out or prints
//! nothing, so every permission event gets an explicit answer, allow included.
//! - preToolUse (every tool but MCP and Read, see below): allow, deny (asks arrive here as
//!   denies: Cursor does not enforce `ask` on preToolUse), or a confined shell call with
//!   `updated_input.command` rewritten.
//! - beforeMCPExecution: MCP calls, with the server's name (preToolUse only names the tool).
//! - beforeReadFile: the read, checked with the file's content in hand: Cursor cannot hand the
//!   model a redacted copy, so a file holding a secret is not read (`secret-in-content`).
//! - postToolUse: an MCP result with secrets is replaced; other results cannot be, so shell
//!   calls run confined (`loopguard exec` redacts their output).
//! - Failures: an explicit deny (exit 0: Cursor shows raw stdout as the reason on exit 2).

use super::{Exit, HookOutcome, Host, Rejected, input};
use crate::engine::{Answer, Capabilities, EventKind, HookError, HostEvent, ToolResult, ToolUse};
use loopguard_core::{Action, Change, Edit, ExecutionMode, ToolKind, Verdict};
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// The Cursor adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cursor;

impl Host for Cursor {
    const NAME: &'static str = "cursor";

    fn capabilities(&self) -> Capabilities {
        // Only MCP results can be replaced: shell calls are confined instead.
        Capabilities { ask: false, rewrite_input: true, replace_output: false }
    }

    fn parse(&self, bytes: &[u8]) -> Result<HostEvent, Rejected> {
        parse(bytes)
    }

    fn render(&self, ev: &HostEvent, answer: Answer) -> HookOutcome {
        let permission = is_permission_event(&ev.name);
        match answer {
            Answer::Proceed => quiet(ev),
            Answer::Decide { decision, preview: _, notices, .. } => match decision.verdict() {
                Verdict::Allow => {
                    let mut v = json!({ "permission": "allow" });
                    if let Some(text) = input::notices_text(&notices) {
                        v["user_message"] = Value::String(text);
                    }
                    out(&v)
                }
                Verdict::Ask | Verdict::Deny => deny(&decision.explain()),
            },
            Answer::Confine { command, notices } => {
                let mut updated = ev.tool.as_ref().map_or_else(|| json!({}), |t| t.input.clone());
                updated["command"] = Value::String(command);
                let mut v = json!({ "permission": "allow", "updated_input": updated });
                if let Some(text) = input::notices_text(&notices) {
                    v["user_message"] = Value::String(text);
                }
                out(&v)
            }
            Answer::ReplaceOutput { output, redacted } if !permission => {
                let mcp = ev.tool.as_ref().is_some_and(|t| t.action.kind() == Some(ToolKind::Mcp));
                if mcp {
                    let s = if redacted == 1 { "" } else { "s" };
                    let note = json!({ "type": "text", "text": format!("[loopguard redacted {redacted} secret{s} from this output]") });
                    // The result keeps its own shape (only its strings were redacted).
                    let replaced = match output {
                        Value::Object(mut m) if m.get("content").is_some_and(Value::is_array) => {
                            if let Some(Value::Array(parts)) = m.get_mut("content") {
                                parts.push(note);
                            }
                            Value::Object(m)
                        }
                        other => json!({ "content": [{ "type": "text", "text": input::as_text(&other) }, note] }),
                    };
                    out(&json!({ "updated_mcp_tool_output": replaced }))
                } else {
                    // Cursor cannot replace this result (shell output was redacted by `loopguard
                    // exec`, reads of files with secrets were refused before they ran).
                    quiet(ev)
                }
            }
            Answer::ReplaceOutput { .. } => quiet(ev),
        }
    }

    fn render_failure(&self, ev: Option<&HostEvent>, err: &HookError) -> HookOutcome {
        let why = err.decision().explain();
        match ev {
            Some(e) if e.kind == EventKind::Stop || e.kind == EventKind::SessionEnd => {
                HookOutcome { stdout: "{}\n".into(), stderr: format!("loopguard: {why}\n"), exit: Exit::Proceed }
            }
            Some(e) if e.kind == EventKind::Prompt || e.kind == EventKind::SessionStart => {
                let reason = input::reason(&why);
                let mut o = out(&json!({ "continue": false, "user_message": reason }));
                o.stderr = format!("{reason}\n");
                o
            }
            // A tool's result: an MCP result is withheld (no other can be replaced).
            Some(e) if matches!(e.kind, EventKind::ToolResult { .. }) => {
                let text = format!("loopguard withheld this output: it could not be checked. {}", input::reason(&why));
                out(&json!({ "updated_mcp_tool_output": { "content": [{ "type": "text", "text": text }] } }))
            }
            // Unknown or unread events included: a deny is the answer every permission event
            // honours, and an MCP result is withheld whichever this was.
            _ => {
                let reason = input::reason(&why);
                let text = format!("loopguard withheld this output: it could not be checked. {reason}");
                let mut o = out(&json!({
                    "permission": "deny", "user_message": reason, "agent_message": reason,
                    "updated_mcp_tool_output": { "content": [{ "type": "text", "text": text }] },
                }));
                o.stderr = format!("{reason}\n");
                o
            }
        }
    }
}

fn out(v: &Value) -> HookOutcome {
    HookOutcome { stdout: format!("{v}\n"), stderr: String::new(), exit: Exit::Proceed }
}

/// The reason goes in both messages: reports differ on which one reaches the model.
fn deny(reason: &str) -> HookOutcome {
    let r = input::reason(reason);
    out(&json!({ "permission": "deny", "user_message": r, "agent_message": r }))
}

/// Nothing to say, said explicitly (a fail-closed entry that prints nothing blocks).
fn quiet(ev: &HostEvent) -> HookOutcome {
    match ev.name.as_str() {
        n if is_permission_event(n) => out(&json!({ "permission": "allow" })),
        "beforeSubmitPrompt" => out(&json!({ "continue": true })),
        _ => out(&json!({})),
    }
}

fn is_permission_event(name: &str) -> bool {
    matches!(name, "preToolUse" | "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile")
}

fn kind_of(name: &str) -> Option<EventKind> {
    Some(match name {
        "preToolUse" | "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" => EventKind::ToolCall,
        "postToolUse" => EventKind::ToolResult { failed: false },
        "postToolUseFailure" => EventKind::ToolResult { failed: true },
        "sessionStart" => EventKind::SessionStart,
        "sessionEnd" => EventKind::SessionEnd,
        "beforeSubmitPrompt" => EventKind::Prompt,
        "stop" => EventKind::Stop,
        _ => return None,
    })
}

/// Cursor's inputs have no common working directory: a tool's own `cwd` when it is absolute,
/// else the first workspace root, else Cursor's project directory.
fn directory(obj: &Map<String, Value>) -> Option<PathBuf> {
    let abs = |s: &str| Some(PathBuf::from(s)).filter(|p| p.is_absolute());
    obj.get("cwd")
        .and_then(Value::as_str)
        .and_then(abs)
        .or_else(|| obj.get("workspace_roots")?.as_array()?.first()?.as_str().and_then(abs))
        .or_else(|| std::env::var("CURSOR_PROJECT_DIR").ok().as_deref().and_then(abs))
}

fn parse(bytes: &[u8]) -> Result<HostEvent, Rejected> {
    let obj = input::object(bytes).map_err(Rejected::bare)?;
    let name =
        input::field_str(&obj, "hook_event_name").map_err(|e| Rejected::bare(HookError::InputInvalid(e)))?.to_string();
    let session = input::text(&obj, "conversation_id").or_else(|| input::text(&obj, "session_id"));
    let (Some(session), Some(cwd)) = (session, directory(&obj)) else {
        return Err(Rejected::bare(HookError::InputInvalid(format!(
            "the {name} input is invalid: it needs `conversation_id` (or `session_id`) and an absolute `cwd` or `workspace_roots`"
        ))));
    };
    // The directory and session in the shared reader's places.
    let mut obj = obj;
    obj.insert("cwd".into(), Value::String(cwd.to_string_lossy().into_owned()));
    obj.insert("session_id".into(), Value::String(session));
    let (mut obj, mut ev) = input::head_of(obj, input::CLAUDE_KEYS, None, kind_of)?;
    // No transcript in a format the spend accounting reads: spend budgets are not measured.
    ev.spend_reported = false;
    ev.mode = ExecutionMode::Unattended;
    ev.why = input::text(&obj, "reason").or_else(|| input::text(&obj, "status"));
    ev.prompt_bytes = obj.get("prompt").and_then(Value::as_str).map(str::len);
    let use_id = input::text(&obj, "tool_use_id");
    match name.as_str() {
        "preToolUse" | "postToolUse" | "postToolUseFailure" => {
            let (tool, input) = input::tool_fields(&obj, &ev, "tool_name", "tool_input")?;
            let input = if let Value::String(s) = &input { serde_json::from_str(s).unwrap_or(input) } else { input };
            if let EventKind::ToolResult { .. } = ev.kind {
                let response = obj.remove("tool_output").map(|o| match o {
                    // Cursor sends the output as JSON text.
                    Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
                    other => other,
                });
                let response_bytes = response.as_ref().map(|r| r.to_string().len());
                let error_bytes = obj.get("error_message").map(|e| e.to_string().len());
                ev.result = Some(ToolResult { response, response_bytes, error_bytes, ..ToolResult::default() });
            }
            ev.tool = Some(tool_use(&tool, input, use_id));
        }
        "beforeShellExecution" => {
            let command = input::field_str(&obj, "command").map_err(|e| {
                input::reject(&ev, HookError::InputInvalid(format!("the {name} input is invalid: {e}")))
            })?;
            let input = json!({ "command": command });
            ev.tool = Some(ToolUse::new("Shell", input, use_id, Action::Shell { command: command.to_string() }));
        }
        "beforeMCPExecution" => {
            let tool = input::field_str(&obj, "tool_name")
                .map_err(|e| input::reject(&ev, HookError::InputInvalid(format!("the {name} input is invalid: {e}"))))?
                .to_string();
            let server = ["mcp_server_name", "server", "url", "command"]
                .iter()
                .find_map(|k| input::text(&obj, k))
                .unwrap_or_default();
            let server = server_name(&server);
            let input = obj.get("tool_input").map_or(Value::Null, |v| match v {
                Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
                other => other.clone(),
            });
            let action = Action::Mcp { server: server.clone(), tool: tool.clone() };
            ev.tool = Some(ToolUse::new(&format!("mcp__{server}__{tool}"), input, use_id, action));
        }
        "beforeReadFile" => {
            let path = input::field_str(&obj, "file_path")
                .map_err(|e| input::reject(&ev, HookError::InputInvalid(format!("the {name} input is invalid: {e}"))))?
                .to_string();
            let input = json!({ "file_path": path });
            ev.tool = Some(ToolUse::new("Read", input, use_id, Action::ReadFile { path: Some(path) }));
            // The content the read would hand the model, for the content gate.
            ev.result = obj.remove("content").map(|c| ToolResult { response: Some(c), ..ToolResult::default() });
        }
        _ => {}
    }
    Ok(ev)
}

/// A server's name for `mcp__<server>__<tool>`: the name as given, or for a URL or command
/// the host (or program) it runs, in the characters a tool name allows.
fn server_name(s: &str) -> String {
    let s = s.split("://").nth(1).map_or(s, |rest| rest.split(['/', ':']).next().unwrap_or(rest));
    let s = s.split_whitespace().next().unwrap_or("").rsplit('/').next().unwrap_or("");
    let name: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    if name.is_empty() { "unknown".into() } else { name }
}

fn tool_use(tool: &str, input: Value, use_id: Option<String>) -> ToolUse {
    if let Some(mcp_tool) = tool.strip_prefix("MCP:") {
        // preToolUse does not say which server: the name says so.
        let action = Action::Mcp { server: "unknown".into(), tool: mcp_tool.to_string() };
        return ToolUse::new(&format!("mcp__unknown__{mcp_tool}"), input, use_id, action);
    }
    let action = action(tool, &input);
    let mut t = ToolUse::new(tool, input, use_id, action);
    if t.action.kind() == Some(ToolKind::Shell) {
        t.cwd = ["working_directory", "cwd"]
            .iter()
            .find_map(|k| t.input.get(*k).and_then(Value::as_str))
            .filter(|d| !d.is_empty())
            .map(PathBuf::from);
    }
    t
}

/// What a Cursor tool call does (preToolUse's tool types).
pub fn action(tool: &str, input: &Value) -> Action {
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    let path = || s("file_path").or_else(|| s("path"));
    match tool {
        "Shell" => match s("command") {
            Some(command) => Action::Shell { command },
            None => Action::Invalid { kind: ToolKind::Shell, problem: "`command` is missing or not a string".into() },
        },
        "Write" => match path() {
            Some(path) => {
                let change = match (s("content"), s("old_string"), s("new_string")) {
                    (Some(c), _, _) => Change::Whole(c),
                    (None, Some(old), Some(new)) => Change::Edits(vec![Edit { old, new, all: false }]),
                    _ => Change::Edits(Vec::new()),
                };
                Action::WriteFile { path, change }
            }
            None => {
                Action::Invalid { kind: ToolKind::FileWrite, problem: "`file_path` is missing or not a string".into() }
            }
        },
        "Delete" => match path() {
            Some(path) => Action::WriteFile { path, change: Change::Delete },
            None => {
                Action::Invalid { kind: ToolKind::FileWrite, problem: "`file_path` is missing or not a string".into() }
            }
        },
        "Read" => Action::ReadFile { path: path() },
        // Grep prints file content, and Cursor cannot hand the model a redacted copy of it.
        "Grep" => Action::Invalid {
            kind: ToolKind::Search,
            problem: "Cursor cannot hand the model a redacted copy of what Grep prints; search with the shell's grep (its output is redacted)".into(),
        },
        "Task" => Action::Agent,
        _ => Action::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_cursor_tools_and_servers() {
        assert_eq!(action("Shell", &json!({"command": "ls"})), Action::Shell { command: "ls".into() });
        assert_eq!(
            action("Delete", &json!({"file_path": "/w/a"})),
            Action::WriteFile { path: "/w/a".into(), change: Change::Delete }
        );
        assert_eq!(server_name("https://mcp.example.com/sse"), "mcp_example_com");
        assert_eq!(server_name("npx -y @acme/server"), "npx");
        assert_eq!(server_name("docs"), "docs");
        assert_eq!(server_name(""), "unknown");
    }

    #[test]
    fn every_permission_event_gets_an_explicit_answer() {
        let ev = HostEvent::new(EventKind::ToolCall, "preToolUse", "s", "/w".into());
        assert_eq!(Cursor.render(&ev, Answer::Proceed).stdout, "{\"permission\":\"allow\"}\n");
        let o = Cursor.render_failure(None, &HookError::Internal("x".into()));
        assert!(o.stdout.contains("\"permission\":\"deny\""), "{}", o.stdout);
    }
}
