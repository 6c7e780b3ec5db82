//! The hook-protocol scenarios, once per host adapter (`claude_code::…`, `codex::…`, `gemini::…`,
//! `copilot::…`, `cursor::…`): each host gets the same coverage in its own dialect — a
//! destructive call is denied with a reason the host shows, an understood one runs (or runs
//! confined), a secret in a result never reaches the model by the route the host allows, an
//! ask becomes a deny where the host cannot ask, bad input and a missed deadline block the call
//! the way that host honours, every decision is audited under the host's name. The captured
//! samples of each host are pinned by insta snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::Sandbox;
use serde_json::{Value, json};
use std::process::Output;

/// What the host will do with the hook's answer, read the way that host reads it
/// (../shared/hosts/<host>/PROTOCOL.md, docs/hosts/<host>.md).
#[derive(Debug, PartialEq)]
enum Seen {
    /// The call runs as asked.
    Runs,
    /// The call runs inside `loopguard exec`.
    Confined(String),
    /// The host asks its human.
    Asks(String),
    /// The call (or event) is blocked; the reason the host shows.
    Blocked(String),
}

/// One host's dialect.
struct Dialect {
    host: &'static str,
    /// The hook's arguments after the host's name, for an input (Copilot's camelCase hooks name
    /// their event on the command line).
    args: fn(&[u8]) -> Vec<String>,
    /// The same for a captured sample, by its file name.
    sample_args: fn(&str) -> Vec<String>,
    /// Where its captured samples are (under tests/fixtures), when this file pins them.
    samples: Option<&'static str>,
    can_ask: bool,
    /// The host can hand the model a replaced shell result (else shell calls run confined).
    replaces_shell_output: bool,
    /// A shell tool call.
    shell: fn(&Sandbox, &str) -> Value,
    /// A shell result with `output`.
    shell_result: fn(&Sandbox, &str, &str) -> Value,
    /// A call of MCP server `docs`'s tool `search`.
    mcp: fn(&Sandbox) -> Value,
    /// What the host makes of an answer to a tool call.
    seen: fn(&Output) -> Seen,
    /// What the model receives in place of a result, when the answer replaces it.
    replaced: fn(&Output) -> Option<String>,
}

fn stdout_json(out: &Output) -> Value {
    let s = String::from_utf8_lossy(&out.stdout);
    if s.trim().is_empty() { Value::Null } else { serde_json::from_str(s.trim()).unwrap() }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

fn str_at(v: &Value, p: &str) -> String {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string()
}

const CLAUDE: Dialect = Dialect {
    host: "claude-code",
    args: |_| Vec::new(),
    sample_args: |_| Vec::new(),
    samples: None, // pinned by hook_protocol.rs
    can_ask: true,
    replaces_shell_output: true,
    shell: |sb, cmd| {
        json!({"session_id": "s1", "transcript_path": "", "cwd": sb.ws, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "t1"})
    },
    shell_result: |sb, cmd, output| {
        json!({"session_id": "s1", "transcript_path": "", "cwd": sb.ws, "permission_mode": "default",
            "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": cmd},
            "tool_response": {"stdout": output, "stderr": "", "interrupted": false}, "tool_use_id": "t1"})
    },
    mcp: |sb| {
        json!({"session_id": "s1", "transcript_path": "", "cwd": sb.ws, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "mcp__docs__search", "tool_input": {"q": "x"}, "tool_use_id": "t2"})
    },
    seen: |out| {
        let v = stdout_json(out);
        let d = str_at(&v, "/hookSpecificOutput/permissionDecision");
        let r = str_at(&v, "/hookSpecificOutput/permissionDecisionReason");
        match (out.status.code(), d.as_str()) {
            (Some(2), _) => Seen::Blocked(stderr(out)),
            (Some(0), "deny") => Seen::Blocked(r),
            (Some(0), "ask") => Seen::Asks(r),
            (Some(0), "allow") => Seen::Confined(str_at(&v, "/hookSpecificOutput/updatedInput/command")),
            (Some(0), "") => Seen::Runs,
            other => panic!("claude-code would fail open on {other:?}"),
        }
    },
    replaced: |out| {
        let v = stdout_json(out);
        v.pointer("/hookSpecificOutput/updatedToolOutput").map(Value::to_string)
    },
};

const CODEX: Dialect = Dialect {
    host: "codex",
    args: |_| Vec::new(),
    sample_args: |_| Vec::new(),
    samples: Some("hosts/codex"),
    can_ask: false,
    replaces_shell_output: true,
    shell: |sb, cmd| {
        json!({"session_id": "s1", "turn_id": "t", "transcript_path": "", "cwd": sb.ws, "hook_event_name": "PreToolUse",
            "model": "m", "permission_mode": "bypassPermissions", "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "c1"})
    },
    shell_result: |sb, cmd, output| {
        json!({"session_id": "s1", "turn_id": "t", "transcript_path": "", "cwd": sb.ws, "hook_event_name": "PostToolUse",
            "model": "m", "permission_mode": "bypassPermissions", "tool_name": "Bash", "tool_input": {"command": cmd},
            "tool_response": output, "tool_use_id": "c1"})
    },
    mcp: |sb| {
        json!({"session_id": "s1", "turn_id": "t", "transcript_path": "", "cwd": sb.ws, "hook_event_name": "PreToolUse",
            "model": "m", "permission_mode": "bypassPermissions", "tool_name": "mcp__docs__search", "tool_input": {"q": "x"}, "tool_use_id": "c2"})
    },
    // Codex: exit 2 + stderr blocks; exit 0 + a deny with a non-blank reason blocks; allow with
    // updatedInput runs the rewrite; nothing runs the call; anything else fails open.
    seen: |out| {
        let v = stdout_json(out);
        let d = str_at(&v, "/hookSpecificOutput/permissionDecision");
        let r = str_at(&v, "/hookSpecificOutput/permissionDecisionReason");
        match (out.status.code(), d.as_str()) {
            (Some(2), _) if !stderr(out).is_empty() => Seen::Blocked(stderr(out)),
            (Some(0), "deny") if !r.trim().is_empty() => Seen::Blocked(r),
            (Some(0), "allow") if v.pointer("/hookSpecificOutput/updatedInput/command").is_some() => {
                Seen::Confined(str_at(&v, "/hookSpecificOutput/updatedInput/command"))
            }
            (Some(0), "") if v.is_null() => Seen::Runs,
            other => panic!("codex would fail open on {other:?}: {v}"),
        }
    },
    replaced: |out| {
        let v = stdout_json(out);
        (v["decision"] == "block").then(|| str_at(&v, "/reason"))
    },
};

const GEMINI: Dialect = Dialect {
    host: "gemini",
    args: |_| Vec::new(),
    sample_args: |_| Vec::new(),
    samples: Some("hosts/gemini"),
    can_ask: false,
    replaces_shell_output: true,
    shell: |sb, cmd| {
        json!({"session_id": "s1", "transcript_path": "", "cwd": sb.ws, "hook_event_name": "BeforeTool",
            "timestamp": "2026-12-01T00:00:00Z", "tool_name": "run_shell_command", "tool_input": {"command": cmd}})
    },
    shell_result: |sb, cmd, output| {
        json!({"session_id": "s1", "transcript_path": "", "cwd": sb.ws, "hook_event_name": "AfterTool",
            "timestamp": "2026-12-01T00:00:00Z", "tool_name": "run_shell_command", "tool_input": {"command": cmd},
            "tool_response": {"llmContent": format!("<untrusted_context>\nOutput: {output}\n</untrusted_context>"), "returnDisplay": output}})
    },
    mcp: |sb| {
        json!({"session_id": "s1", "transcript_path": "", "cwd": sb.ws, "hook_event_name": "BeforeTool",
            "timestamp": "2026-12-01T00:00:00Z", "tool_name": "search", "tool_input": {"q": "x"},
            "mcp_context": {"server_name": "docs", "tool_name": "search"}})
    },
    // Gemini: JSON on stdout is the answer whatever the exit code; deny/block blocks;
    // hookSpecificOutput.tool_input replaces the input; no text at all runs the call.
    seen: |out| {
        let v = stdout_json(out);
        match v["decision"].as_str() {
            Some("deny" | "block") => Seen::Blocked(str_at(&v, "/reason")),
            Some("ask") => panic!("gemini hangs on ask"),
            _ if v.pointer("/hookSpecificOutput/tool_input").is_some() => {
                Seen::Confined(str_at(&v, "/hookSpecificOutput/tool_input/command"))
            }
            _ if out.status.code() == Some(0) => Seen::Runs,
            _ => panic!("gemini would fail open on {:?}: {v}", out.status.code()),
        }
    },
    replaced: |out| {
        let v = stdout_json(out);
        (v["decision"] == "deny").then(|| str_at(&v, "/reason"))
    },
};

const COPILOT: Dialect = Dialect {
    host: "copilot",
    args: |_| Vec::new(),
    sample_args: |_| Vec::new(),
    samples: Some("hosts/copilot"),
    can_ask: false,
    replaces_shell_output: true,
    shell: |sb, cmd| {
        json!({"hook_event_name": "PreToolUse", "session_id": "s1", "timestamp": "2026-12-01T00:00:00Z", "cwd": sb.ws,
            "tool_name": "Bash", "tool_input": {"command": cmd, "description": "d"}})
    },
    shell_result: |sb, cmd, output| {
        json!({"hook_event_name": "PostToolUse", "session_id": "s1", "timestamp": "2026-12-01T00:00:00Z", "cwd": sb.ws,
            "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_result": {"result_type": "success", "text_result_for_llm": output}})
    },
    mcp: |sb| {
        json!({"hook_event_name": "PreToolUse", "session_id": "s1", "timestamp": "2026-12-01T00:00:00Z", "cwd": sb.ws,
            "tool_name": "docs-search", "tool_input": {"q": "x"}})
    },
    // Copilot: exit 2 (and exit 1) block; permissionDecision deny blocks; allow + updatedInput
    // (PascalCase) rewrites; nothing runs the call; bad JSON fails open.
    seen: |out| {
        let v = stdout_json(out);
        match (out.status.code(), v["permissionDecision"].as_str()) {
            (Some(2), _) => Seen::Blocked(stderr(out)),
            (Some(0), Some("deny")) => Seen::Blocked(str_at(&v, "/permissionDecisionReason")),
            (Some(0), None) if v.pointer("/hookSpecificOutput/updatedInput/command").is_some() => {
                Seen::Confined(str_at(&v, "/hookSpecificOutput/updatedInput/command"))
            }
            (Some(0), None) if v.is_null() => Seen::Runs,
            other => panic!("copilot would fail open on {other:?}: {v}"),
        }
    },
    replaced: |out| {
        let v = stdout_json(out);
        v.pointer("/modifiedResult/textResultForLlm").and_then(Value::as_str).map(String::from)
    },
};

/// Copilot with its hooks registered camelCase (`install copilot --form camel`): the input names
/// no event (the command does), and `hookSpecificOutput` is ignored — an answer carrying only
/// that would let the call run as asked, so reading one here is a failure.
const COPILOT_CAMEL: Dialect = Dialect {
    host: "copilot",
    args: |input| {
        let v: Value = serde_json::from_slice(input).unwrap_or(Value::Null);
        let event = if v.get("toolResult").is_some() { "postToolUse" } else { "preToolUse" };
        vec!["--event".into(), event.into()]
    },
    sample_args: |name| vec!["--event".into(), name.split(['_', '.']).next().unwrap().into()],
    samples: Some("hosts/copilot-camel"),
    can_ask: false,
    replaces_shell_output: true,
    shell: |sb, cmd| {
        json!({"sessionId": "s1", "timestamp": 1796133495620u64, "cwd": sb.ws, "toolName": "bash",
            "toolArgs": {"command": cmd, "description": "d"}})
    },
    shell_result: |sb, cmd, output| {
        json!({"sessionId": "s1", "timestamp": 1796133495620u64, "cwd": sb.ws, "toolName": "bash",
            "toolArgs": {"command": cmd, "description": "d"}, "toolResult": {"resultType": "success", "textResultForLlm": output}})
    },
    mcp: |sb| json!({"sessionId": "s1", "timestamp": 1796133495620u64, "cwd": sb.ws, "toolName": "docs-search", "toolArgs": {"q": "x"}}),
    // camelCase: top-level permissionDecision deny blocks; allow + modifiedArgs runs the new args,
    // which replace the old wholesale (so the rewrite must carry every key); exit 2 blocks;
    // nothing runs the call; an allow without modifiedArgs would run it unconfined;
    // `hookSpecificOutput` is ignored (the call runs as asked).
    seen: |out| {
        let v = stdout_json(out);
        assert!(v.get("hookSpecificOutput").is_none(), "camelCase ignores hookSpecificOutput: {v}");
        match (out.status.code(), v["permissionDecision"].as_str()) {
            (Some(2), _) => Seen::Blocked(stderr(out)),
            (Some(0), Some("deny")) => Seen::Blocked(str_at(&v, "/permissionDecisionReason")),
            // The allow grants Copilot's own permission for the rewritten command (its path
            // check would otherwise deny it, nobody being there to ask).
            (Some(0), Some("allow")) if v.pointer("/modifiedArgs/command").is_some() => {
                assert_eq!(v["modifiedArgs"]["description"], "d", "modifiedArgs must carry the whole args: {v}");
                Seen::Confined(str_at(&v, "/modifiedArgs/command"))
            }
            (Some(0), None) if v.is_null() => Seen::Runs,
            other => panic!("copilot (camelCase) would fail open on {other:?}: {v}"),
        }
    },
    replaced: |out| {
        let v = stdout_json(out);
        v.pointer("/modifiedResult/textResultForLlm").and_then(Value::as_str).map(String::from)
    },
};

const CURSOR: Dialect = Dialect {
    host: "cursor",
    args: |_| Vec::new(),
    sample_args: |_| Vec::new(),
    samples: Some("hosts/cursor"),
    can_ask: false,
    replaces_shell_output: false,
    shell: |sb, cmd| {
        json!({"conversation_id": "s1", "generation_id": "g", "hook_event_name": "preToolUse", "cursor_version": "3.9.16",
            "workspace_roots": [sb.ws], "tool_name": "Shell", "tool_input": {"command": cmd}, "tool_use_id": "t1", "cwd": ""})
    },
    shell_result: |sb, cmd, output| {
        json!({"conversation_id": "s1", "generation_id": "g", "hook_event_name": "postToolUse", "cursor_version": "3.9.16",
            "workspace_roots": [sb.ws], "tool_name": "Shell", "tool_input": {"command": cmd},
            "tool_output": json!({"output": output, "exitCode": 0}).to_string(), "tool_use_id": "t1", "cwd": ""})
    },
    mcp: |sb| {
        json!({"conversation_id": "s1", "generation_id": "g", "hook_event_name": "beforeMCPExecution", "cursor_version": "3.9.16",
            "workspace_roots": [sb.ws], "tool_name": "search", "tool_input": "{\"q\":\"x\"}", "mcp_server_name": "docs"})
    },
    // Cursor: exit 0 + permission deny blocks; exit 2 blocks; failClosed entries block on a crash
    // or no output, so an allow must be explicit.
    seen: |out| {
        let v = stdout_json(out);
        match (out.status.code(), v["permission"].as_str()) {
            (Some(2), _) => Seen::Blocked(stderr(out)),
            (Some(0), Some("deny")) => Seen::Blocked(str_at(&v, "/agent_message")),
            (Some(0), Some("allow")) if v.get("updated_input").is_some() => {
                Seen::Confined(str_at(&v, "/updated_input/command"))
            }
            (Some(0), Some("allow")) => Seen::Runs,
            other => panic!("cursor would not read {other:?}: {v}"),
        }
    },
    replaced: |out| {
        let v = stdout_json(out);
        v.get("updated_mcp_tool_output").map(Value::to_string)
    },
};

fn hook(sb: &Sandbox, d: &Dialect, input: &[u8]) -> Output {
    let args = (d.args)(input);
    sb.run_hook(d.host, &args.iter().map(String::as_str).collect::<Vec<_>>(), input)
}

fn every_captured_sample(d: &Dialect) {
    let Some(dir) = d.samples else { return };
    let mut names: Vec<String> = std::fs::read_dir(common::fixture(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let sb = Sandbox::new();
        let text = sb.localize(&std::fs::read_to_string(common::fixture(&format!("{dir}/{name}"))).unwrap());
        let args = (d.sample_args)(&name);
        let out = sb.run_hook(d.host, &args.iter().map(String::as_str).collect::<Vec<_>>(), text.as_bytes());
        // Named after the samples' folder: `copilot` and `copilot-camel` are the one host.
        let prefix = dir.rsplit('/').next().unwrap();
        insta::assert_snapshot!(format!("{prefix}__{}", name.trim_end_matches(".json")), sb.render(&out));
    }
}

fn a_destructive_call_is_denied_with_a_reason(d: &Dialect) {
    let sb = Sandbox::new();
    let out = hook(&sb, d, (d.shell)(&sb, "rm -rf /").to_string().as_bytes());
    match (d.seen)(&out) {
        Seen::Blocked(r) => assert!(r.contains("[destructive-rm-root]"), "{r}"),
        other => panic!("{}: not blocked: {other:?}", d.host),
    }
}

fn an_understood_call_runs(d: &Dialect) {
    let sb = Sandbox::new();
    let out = hook(&sb, d, (d.shell)(&sb, "ls -la").to_string().as_bytes());
    match (d.seen)(&out) {
        Seen::Runs => {}
        Seen::Confined(c) => assert!(c.contains(" exec --profile ") && c.ends_with("'ls -la'"), "{c}"),
        other => panic!("{}: {other:?}", d.host),
    }
}

/// An interactive shell or interpreter reads its code from stdin, which some hosts feed without
/// a hook (Codex's `write_stdin`, Copilot's `write_bash`): it never runs unconfined.
fn an_interactive_interpreter_never_runs_unconfined(d: &Dialect) {
    for cmd in ["bash", "bash -i", "sh", "python3", "node", "bash -s"] {
        let sb = Sandbox::new();
        let out = hook(&sb, d, (d.shell)(&sb, cmd).to_string().as_bytes());
        match (d.seen)(&out) {
            Seen::Confined(c) => assert!(c.contains(" exec --profile "), "{}: {cmd}: {c}", d.host),
            Seen::Blocked(_) | Seen::Asks(_) => {}
            Seen::Runs => panic!("{}: `{cmd}` runs unconfined", d.host),
        }
    }
}

fn a_secret_in_a_result_never_reaches_the_model(d: &Dialect) {
    let sb = Sandbox::new();
    let key = format!("AKIA{}", "Q7RZ2M5K3W6X4N2P");
    let output = format!("AWS_ACCESS_KEY_ID={key}\n");
    if d.replaces_shell_output {
        let out = hook(&sb, d, (d.shell_result)(&sb, "cat deploy.env", &output).to_string().as_bytes());
        let got =
            (d.replaced)(&out).unwrap_or_else(|| panic!("{}: the result is not replaced: {}", d.host, sb.render(&out)));
        assert!(!got.contains(&key), "{}: the key reached the model: {got}", d.host);
        assert!(got.contains("[REDACTED"), "{got}");
    } else {
        // The host cannot replace a shell result: the command runs under `loopguard exec`,
        // whose output is redacted before the host sees it.
        let out = hook(&sb, d, (d.shell)(&sb, "cat deploy.env").to_string().as_bytes());
        assert!(matches!((d.seen)(&out), Seen::Confined(_)), "{}: {}", d.host, sb.render(&out));
    }
}

fn an_ask_becomes_a_deny_where_the_host_cannot_ask(d: &Dialect) {
    let sb = Sandbox::new();
    // The default policy asks for every MCP tool.
    let out = hook(&sb, d, (d.mcp)(&sb).to_string().as_bytes());
    match ((d.seen)(&out), d.can_ask) {
        (Seen::Asks(r), true) => assert!(r.contains("[tool-policy]"), "{r}"),
        // (Copilot does not tell MCP tools from others by name: an unknown tool is asked too.)
        (Seen::Blocked(r), false) => assert!(
            r.contains("[host-cannot-ask]") && (r.contains("[tool-policy]") || r.contains("[unknown-tool]")),
            "{}: {r}",
            d.host
        ),
        other => panic!("{}: {other:?}", d.host),
    }
}

fn bad_input_blocks(d: &Dialect) {
    for input in [&b""[..], b"rm -rf /", b"[1,2]", br#"{"hook_event_name":7}"#] {
        let sb = Sandbox::new();
        let out = hook(&sb, d, input);
        match (d.seen)(&out) {
            Seen::Blocked(r) => assert!(!r.trim().is_empty(), "{}: a blank reason", d.host),
            other => panic!("{}: {:?} was answered {other:?}", d.host, String::from_utf8_lossy(input)),
        }
    }
}

fn a_missed_deadline_blocks(d: &Dialect) {
    let sb = Sandbox::new();
    // stdin is never closed, so reading never finishes: the deadline must answer.
    let mut args = vec!["hook".to_string(), d.host.to_string(), "--deadline-ms".into(), "300".into()];
    args.extend((d.args)(b"{}"));
    let mut child = sb
        .command(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    match (d.seen)(&out) {
        Seen::Blocked(r) => assert!(r.contains("hook-deadline-exceeded") || !r.is_empty(), "{r}"),
        other => panic!("{}: {other:?}", d.host),
    }
}

fn decisions_are_audited_under_the_host_and_the_log_verifies(d: &Dialect) {
    let sb = Sandbox::new();
    hook(&sb, d, (d.shell)(&sb, "rm -rf /").to_string().as_bytes());
    hook(&sb, d, (d.shell)(&sb, "ls").to_string().as_bytes());
    let (code, out, err) = sb.run(&["audit", "verify"], "");
    assert_eq!(code, 0, "{out}{err}");
    let (_, tail, _) = sb.run(&["audit", "tail", "--json"], "");
    let events: Vec<Value> = tail.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let calls: Vec<&Value> = events.iter().filter(|e| e["kind"] == "pre-tool-use").collect();
    assert_eq!(calls.len(), 2, "{tail}");
    for e in calls {
        assert_eq!(e["details"]["host"], d.host, "{e}");
    }
}

macro_rules! for_each_host {
    ($($name:ident),* $(,)?) => {
        mod claude_code { $( #[test] fn $name() { super::$name(&super::CLAUDE) } )* }
        mod codex { $( #[test] fn $name() { super::$name(&super::CODEX) } )* }
        mod gemini { $( #[test] fn $name() { super::$name(&super::GEMINI) } )* }
        mod copilot { $( #[test] fn $name() { super::$name(&super::COPILOT) } )* }
        mod copilot_camel { $( #[test] fn $name() { super::$name(&super::COPILOT_CAMEL) } )* }
        mod cursor { $( #[test] fn $name() { super::$name(&super::CURSOR) } )* }
    };
}

for_each_host!(
    every_captured_sample,
    a_destructive_call_is_denied_with_a_reason,
    an_understood_call_runs,
    an_interactive_interpreter_never_runs_unconfined,
    a_secret_in_a_result_never_reaches_the_model,
    an_ask_becomes_a_deny_where_the_host_cannot_ask,
    bad_input_blocks,
    a_missed_deadline_blocks,
    decisions_are_audited_under_the_host_and_the_log_verifies,
);
