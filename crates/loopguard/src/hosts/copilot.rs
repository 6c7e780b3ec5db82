//! `loopguard hook copilot`: GitHub Copilot CLI's hook protocol, in both of the ways Copilot
//! reads a hooks file (docs/hosts/copilot.md; captured samples in tests/fixtures/hosts/copilot
//! and tests/fixtures/hosts/copilot-camel). Parsing and rendering only: the engine decides.
//!
//! How Copilot talks to a hook depends on how the event is *spelled* in its configuration:
//! - PascalCase (`PreToolUse`, [`Form::Pascal`], the default install): Copilot sends the event's
//!   name, the session and Claude-style `tool_name`/`tool_input` (Claude's tool names, Copilot's
//!   argument names), and honours `hookSpecificOutput`.
//! - camelCase (`preToolUse`, [`Form::Camel`], the form GitHub documents): the input names no
//!   event (`{sessionId, timestamp, cwd, toolName, toolArgs}`, Copilot's own tool names, the args
//!   possibly a JSON string), so the installed command names it (`--event preToolUse`); an input
//!   that names another event is refused. Copilot **ignores `hookSpecificOutput`** there.
//!
//! What Copilot does with answers: a top-level `permissionDecision: deny` blocks with its reason
//! in both forms; `ask` blocks too ("unable to ask") — the engine turns asks into denies with
//! their own reason first; exit 1 and crashes block; bad JSON and timeouts let the call run
//! (never sent). So:
//! - PreToolUse: allow prints nothing (Copilot's own permissions still apply); deny prints
//!   `permissionDecision: deny` with its reason; a confined call gets its whole input back with
//!   `command` rewritten (Copilot replaces the input wholesale): `hookSpecificOutput.updatedInput`
//!   (PascalCase) or top-level `modifiedArgs` (camelCase). A call whose input cannot carry the
//!   rewrite is denied, never let through unconfined.
//! - PostToolUse: a result with secrets is replaced (`modifiedResult.textResultForLlm`, read in
//!   both forms).
//! - Failures (the same in both forms: nothing in them is `hookSpecificOutput`): the JSON deny
//!   with exit 0 (Copilot shows its reason; on exit 2 it would not). A failing PostToolUse
//!   withholds the output (`modifiedResult`: exit 2 does not stop a result there); a failure
//!   before the event is known answers both; a failing Stop exits 0.

use super::{Exit, HookOutcome, Host, Rejected, input};
use crate::engine::{Answer, Capabilities, EventKind, HookError, HostEvent, ToolResult, ToolUse};
use loopguard_core::{Action, Change, Edit, ExecutionMode, ToolKind, Verdict};
use serde_json::{Map, Value, json};

/// How loopguard's hooks are registered in Copilot's configuration, and so what Copilot sends
/// and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// PascalCase event names: the input names its event.
    #[default]
    Pascal,
    /// camelCase event names: the input does not name its event; this one (from `--event`) does.
    Camel(&'static str),
}

/// The Copilot CLI adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Copilot {
    /// The registration this hook call comes from.
    pub form: Form,
}

/// The camelCase events loopguard handles, and what each is.
pub const CAMEL_EVENTS: &[(&str, EventKind)] = &[
    ("preToolUse", EventKind::ToolCall),
    ("postToolUse", EventKind::ToolResult { failed: false }),
    ("postToolUseFailure", EventKind::ToolResult { failed: true }),
    ("sessionStart", EventKind::SessionStart),
    ("sessionEnd", EventKind::SessionEnd),
    ("userPromptSubmitted", EventKind::Prompt),
    ("agentStop", EventKind::Stop),
    ("subagentStop", EventKind::Stop),
];

/// Where camelCase inputs keep the session and directory (`event` is never read: `--event`
/// names it).
const CAMEL_KEYS: input::Keys = input::Keys { event: "hook_event_name", session: "sessionId", cwd: "cwd" };

impl Copilot {
    /// The adapter for PascalCase registrations.
    pub const fn pascal() -> Self {
        Copilot { form: Form::Pascal }
    }

    /// The adapter for a camelCase registration of `event`.
    pub const fn camel(event: &'static str) -> Self {
        Copilot { form: Form::Camel(event) }
    }
}

impl Host for Copilot {
    const NAME: &'static str = "copilot";

    fn capabilities(&self) -> Capabilities {
        Capabilities { ask: false, rewrite_input: true, replace_output: true }
    }

    fn parse(&self, bytes: &[u8]) -> Result<HostEvent, Rejected> {
        match self.form {
            Form::Pascal => parse(bytes),
            Form::Camel(event) => parse_camel(bytes, event),
        }
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
            Answer::Confine { command, notices } => self.confine(ev, command, &notices),
            Answer::ReplaceOutput { output, redacted } => {
                let field = |pascal: &str, camel: &str| output.get(pascal).or_else(|| output.get(camel));
                let text = field("text_result_for_llm", "textResultForLlm")
                    .map_or_else(|| input::as_text(&output), input::as_text);
                let result_type = field("result_type", "resultType").and_then(Value::as_str).unwrap_or("success");
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

impl Copilot {
    /// A confined call: its whole input back with `command` rewritten, in the field this form
    /// reads (Copilot replaces the input wholesale, with no merge). An input that is not an
    /// object cannot carry the rewrite: the call is denied, never let through as it was.
    fn confine(&self, ev: &HostEvent, command: String, notices: &[String]) -> HookOutcome {
        let Some(args) = confined_args(ev, command) else {
            let err = HookError::Internal(
                "loopguard could not hand Copilot the confined command (the call's arguments are not an object); denied."
                    .into(),
            );
            return self.render_failure(Some(ev), &err);
        };
        let v = match self.form {
            Form::Pascal => json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": CONFINED,
                "updatedInput": args,
            }}),
            // camelCase ignores `hookSpecificOutput` (it would run the call as asked). The allow
            // is needed as in PascalCase: Copilot checks the rewritten command's paths again (the
            // loopguard binary is outside the folder), and with nobody to ask it denies the call.
            Form::Camel(_) => json!({
                "permissionDecision": "allow",
                "permissionDecisionReason": CONFINED,
                "modifiedArgs": args,
            }),
        };
        HookOutcome { stdout: format!("{v}\n"), stderr: notices_stderr(notices), exit: Exit::Proceed }
    }
}

/// Why a confined call is allowed.
const CONFINED: &str = "loopguard: runs in its kernel sandbox (loopguard exec)";

/// The call's whole input with `command` replaced, when the input is an object.
fn confined_args(ev: &HostEvent, command: String) -> Option<Value> {
    let mut args = ev.tool.as_ref()?.input.clone();
    args.as_object_mut()?.insert("command".into(), Value::String(command));
    Some(args)
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

fn camel_kind_of(name: &str) -> Option<EventKind> {
    CAMEL_EVENTS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// What both forms share once the event is known.
fn common(obj: &Map<String, Value>, ev: &mut HostEvent) {
    // No transcript in a format the spend accounting reads: spend budgets are not measured.
    ev.spend_reported = false;
    // Copilot cannot put loopguard's asks to its human: the run is unattended for the gate.
    ev.mode = ExecutionMode::Unattended;
    ev.why = input::text(obj, if ev.kind == EventKind::SessionStart { "source" } else { "reason" });
    ev.prompt_bytes = obj.get("prompt").and_then(Value::as_str).map(str::len);
}

fn parse(bytes: &[u8]) -> Result<HostEvent, Rejected> {
    let (mut obj, mut ev) = input::head(bytes, input::CLAUDE_KEYS, None, kind_of)?;
    common(&obj, &mut ev);
    match ev.kind {
        EventKind::ToolCall => {
            let (name, input) = input::tool_fields(&obj, &ev, "tool_name", "tool_input")?;
            let action = action(&name, &input);
            ev.tool = Some(ToolUse::new(&name, input, None, action));
        }
        EventKind::ToolResult { .. } => {
            let name = input::text(&obj, "tool_name");
            let response = obj.remove("tool_result");
            let input = obj.remove("tool_input").unwrap_or(Value::Null);
            result(&mut ev, &obj, name, input, response, "text_result_for_llm");
        }
        _ => {}
    }
    Ok(ev)
}

/// A tool's result, read into `ev`: `name` and `input` are the tool's, `response` the result,
/// `text_key` where the text the model reads is in it.
fn result(
    ev: &mut HostEvent,
    obj: &Map<String, Value>,
    name: Option<String>,
    input: Value,
    response: Option<Value>,
    text_key: &str,
) {
    let response_bytes = response.as_ref().map(|r| r.to_string().len());
    let error_bytes = obj.get("error").map(|e| e.to_string().len());
    let text = match (name.as_deref(), response.as_ref().and_then(|r| r.get(text_key))) {
        (Some("Bash" | "Read"), Some(Value::String(s))) => Some(s.clone()),
        _ => None,
    };
    ev.result = Some(ToolResult { response, response_bytes, error_bytes, text, ..ToolResult::default() });
    ev.tool = name.map(|n| {
        let action = action(&n, &input);
        ToolUse::new(&n, input, None, action)
    });
}

/// A camelCase input, for the event `event` the installed command names. An input that names
/// an event itself must name the same one: a registration and a hook that disagree are refused.
fn parse_camel(bytes: &[u8], event: &str) -> Result<HostEvent, Rejected> {
    let obj = input::object(bytes).map_err(Rejected::bare)?;
    for key in ["hook_event_name", "hookName"] {
        if let Some(named) = obj.get(key).filter(|n| n.as_str() != Some(event)) {
            let error = HookError::InputInvalid(format!(
                "loopguard's hook was installed for the Copilot event `{event}` (--event), but the input names `{}` ({key}): the registration and the hook disagree; denied.",
                input::as_text(named)
            ));
            let cwd = input::text(&obj, "cwd").map(std::path::PathBuf::from).filter(|p| p.is_absolute());
            let session = input::text(&obj, "sessionId").unwrap_or_default();
            return Err(Rejected { error, session, cwd, event: Some(event.to_string()) });
        }
    }
    let (mut obj, mut ev) = input::head_of(obj, CAMEL_KEYS, Some(event), camel_kind_of)?;
    common(&obj, &mut ev);
    match ev.kind {
        EventKind::ToolCall => {
            let (name, args) = input::tool_fields(&obj, &ev, "toolName", "toolArgs")?;
            let args = args_object(args).map_err(|e| {
                input::reject(&ev, HookError::InputInvalid(format!("the {event} input is invalid: {e}")))
            })?;
            let name = pascal_name(&name);
            let action = action(&name, &args);
            ev.tool = Some(ToolUse::new(&name, args, None, action));
        }
        EventKind::ToolResult { .. } => {
            let name = input::text(&obj, "toolName").map(|n| pascal_name(&n));
            let response = obj.remove("toolResult");
            // The result is audited and redacted whatever its arguments look like.
            let args = obj.remove("toolArgs").map(|a| args_object(a.clone()).unwrap_or(a)).unwrap_or(Value::Null);
            result(&mut ev, &obj, name, args, response, "textResultForLlm");
        }
        _ => {}
    }
    Ok(ev)
}

/// camelCase `toolArgs`: an object, or a JSON string holding one (no arguments: an empty one).
fn args_object(args: Value) -> Result<Value, String> {
    match args {
        Value::Object(_) => Ok(args),
        Value::Null => Ok(Value::Object(Map::new())),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(other) => {
                Err(format!("`toolArgs` is a JSON string holding {}, not an object", input::type_name(&other)))
            }
            Err(e) => Err(format!("`toolArgs` is a string that is not JSON: {e}")),
        },
        other => {
            Err(format!("`toolArgs` must be an object or a JSON string of one, found {}", input::type_name(&other)))
        }
    }
}

/// The name the PascalCase form gives a tool (Claude's, for the tools Claude has), so that the
/// policy and the audit log see one name whichever form the hooks are registered in.
fn pascal_name(camel: &str) -> String {
    match camel {
        "bash" => "Bash",
        "view" => "Read",
        "create" => "Write",
        "edit" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        other => other,
    }
    .to_string()
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
        let o = Copilot::pascal().render_failure(Some(&ev), &HookError::Internal("boom".into()));
        assert_eq!(o.exit, Exit::Proceed);
        assert!(o.stdout.contains("modifiedResult") && o.stdout.contains("withheld"), "{}", o.stdout);
        // Not knowing the event: it blocks a call and withholds a result alike.
        let o = Copilot::pascal().render_failure(None, &HookError::Deadline(2000));
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        assert_eq!(v["permissionDecision"], "deny");
        assert!(v["modifiedResult"]["textResultForLlm"].as_str().unwrap().contains("withheld"));
    }

    fn camel_call(args: Value) -> Vec<u8> {
        json!({"sessionId": "s", "timestamp": 1796133495620u64, "cwd": "/w", "toolName": "bash", "toolArgs": args})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn camel_inputs_are_read_for_the_event_the_command_names() {
        let ev = Copilot::camel("preToolUse").parse(&camel_call(json!({"command": "ls", "description": "d"}))).unwrap();
        assert_eq!((ev.kind, ev.name.as_str(), ev.session.as_str()), (EventKind::ToolCall, "preToolUse", "s"));
        let tool = ev.tool.unwrap();
        // The PascalCase form's name, whichever form the hooks are registered in.
        assert_eq!(tool.name, "Bash");
        assert_eq!(tool.action, Action::Shell { command: "ls".into() });
        // `toolArgs` as a JSON string.
        let ev = Copilot::camel("preToolUse").parse(&camel_call(json!(r#"{"command":"rm -rf /"}"#))).unwrap();
        assert_eq!(ev.tool.unwrap().action, Action::Shell { command: "rm -rf /".into() });
        for bad in [json!("rm -rf /"), json!("[1]"), json!(7)] {
            let r = Copilot::camel("preToolUse").parse(&camel_call(bad.clone())).unwrap_err();
            assert_eq!(r.error.code(), "hook-input-invalid", "{bad}");
            assert_eq!((r.session.as_str(), r.event.as_deref()), ("s", Some("preToolUse")));
        }
        // A result, with its text.
        let post = json!({"sessionId": "s", "timestamp": 1, "cwd": "/w", "toolName": "view", "toolArgs": {"path": "/w/a"},
            "toolResult": {"resultType": "success", "textResultForLlm": "hello"}});
        let ev = Copilot::camel("postToolUse").parse(post.to_string().as_bytes()).unwrap();
        assert_eq!(ev.kind, EventKind::ToolResult { failed: false });
        assert_eq!(ev.result.unwrap().text.as_deref(), Some("hello"));
        assert_eq!(ev.tool.unwrap().action, Action::ReadFile { path: Some("/w/a".into()) });
    }

    #[test]
    fn a_camel_event_that_disagrees_or_is_unknown_is_refused() {
        let mut v: Value = serde_json::from_slice(&camel_call(json!({"command": "ls"}))).unwrap();
        v["hook_event_name"] = json!("PostToolUse");
        let r = Copilot::camel("preToolUse").parse(v.to_string().as_bytes()).unwrap_err();
        assert_eq!(r.error.code(), "hook-input-invalid");
        assert!(r.error.to_string().contains("disagree"), "{}", r.error);
        v["hook_event_name"] = json!("preToolUse");
        assert!(Copilot::camel("preToolUse").parse(v.to_string().as_bytes()).is_ok());
        let r = Copilot::camel("permissionRequest").parse(&camel_call(json!({"command": "ls"}))).unwrap_err();
        assert_eq!(r.error.code(), "hook-unknown-event");
        // A PascalCase input sent to a camelCase registration names no tool where camelCase
        // looks for one.
        let pascal = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "tool_name": "Bash",
            "tool_input": {"command": "ls"}});
        assert!(Copilot::camel("preToolUse").parse(pascal.to_string().as_bytes()).is_err());
        // Without `--event`, a camelCase input names no event: refused as today.
        assert!(Copilot::pascal().parse(&camel_call(json!({"command": "ls"}))).is_err());
    }

    #[test]
    fn a_confined_call_gets_its_whole_args_back_in_the_field_its_form_reads() {
        let camel = Copilot::camel("preToolUse");
        let ev = camel.parse(&camel_call(json!({"command": "ls", "description": "d"}))).unwrap();
        let answer = || Answer::Confine { command: "/x/loopguard exec -- bash -c ls".into(), notices: vec![] };
        let v: Value = serde_json::from_str(camel.render(&ev, answer()).stdout.trim()).unwrap();
        assert_eq!(v["modifiedArgs"], json!({"command": "/x/loopguard exec -- bash -c ls", "description": "d"}));
        assert_eq!(v["permissionDecision"], "allow");
        assert!(v.get("hookSpecificOutput").is_none(), "{v}");
        let v: Value = serde_json::from_str(Copilot::pascal().render(&ev, answer()).stdout.trim()).unwrap();
        assert_eq!(v["hookSpecificOutput"]["updatedInput"]["description"], "d");
        assert!(v.get("modifiedArgs").is_none());
        // Arguments that cannot carry the rewrite: denied, in either form.
        let mut odd = ev.clone();
        if let Some(t) = odd.tool.as_mut() {
            t.input = json!("ls");
        }
        for form in [camel, Copilot::pascal()] {
            let v: Value = serde_json::from_str(form.render(&odd, answer()).stdout.trim()).unwrap();
            assert_eq!(v["permissionDecision"], "deny", "{v}");
            assert!(v.get("modifiedArgs").is_none() && v.get("hookSpecificOutput").is_none(), "{v}");
        }
    }

    #[test]
    fn a_camel_result_with_secrets_is_replaced() {
        let camel = Copilot::camel("postToolUse");
        let ev = HostEvent::new(EventKind::ToolResult { failed: false }, "postToolUse", "s", "/w".into());
        let output = json!({"resultType": "success", "textResultForLlm": "key=[REDACTED:x]"});
        let o = camel.render(&ev, Answer::ReplaceOutput { output, redacted: 1 });
        let v: Value = serde_json::from_str(o.stdout.trim()).unwrap();
        assert_eq!(v["modifiedResult"]["resultType"], "success");
        assert!(v["modifiedResult"]["textResultForLlm"].as_str().unwrap().starts_with("key=[REDACTED:x]\n"));
    }
}
