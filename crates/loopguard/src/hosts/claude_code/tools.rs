//! Claude Code's tools and modes, mapped onto loopguard's host-neutral vocabulary: each tool name
//! and input field becomes an [`Action`]; `permission_mode` becomes an [`ExecutionMode`].

use loopguard_core::{Action, Change, Edit, ExecutionMode, ToolKind};
use serde_json::Value;

/// What a Claude Code tool call does. Anything not listed (and not `mcp__*`) is unknown and gets
/// the policy's `unknown_tool` decision.
pub fn action(tool: &str, input: &Value) -> Action {
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    match tool {
        "Bash" => match s("command") {
            Some(command) => Action::Shell { command },
            None => invalid(ToolKind::Shell, "`command` is missing or not a string"),
        },
        // Each tool's own path field first: the tool acts on that one, so the gate checks it.
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => match path_of(tool, input) {
            Some(path) => Action::WriteFile { path, change: change(tool, input) },
            None => invalid(ToolKind::FileWrite, "`file_path` is missing or not a string"),
        },
        "Read" => Action::ReadFile { path: path_of(tool, input) },
        // Glob lists names; Grep prints the content of the files its `glob` selects.
        "Glob" | "LS" => Action::Search { path: path_of(tool, input), content_glob: None },
        "Grep" => Action::Search { path: path_of(tool, input), content_glob: s("glob") },
        "WebFetch" => Action::Fetch { url: s("url") },
        "WebSearch" => Action::WebSearch,
        "Task" | "Agent" => Action::Agent,
        "TodoWrite" | "ExitPlanMode" | "BashOutput" | "KillShell" => Action::Meta,
        _ => match tool.strip_prefix("mcp__").and_then(|rest| rest.split_once("__")) {
            Some((server, name)) => Action::Mcp { server: server.to_string(), tool: name.to_string() },
            None if tool.starts_with("mcp__") => Action::Mcp { server: tool[5..].to_string(), tool: String::new() },
            None => Action::Unknown,
        },
    }
}

/// The file or directory a tool acts on: its own field (`notebook_path` for NotebookEdit, `path`
/// for the searches, `file_path` for the rest); another path field only when that one is absent.
fn path_of(tool: &str, input: &Value) -> Option<String> {
    let own = match tool {
        "NotebookEdit" => "notebook_path",
        "Glob" | "Grep" | "LS" => "path",
        _ => "file_path",
    };
    std::iter::once(own)
        .chain(["file_path", "notebook_path", "path"])
        .find_map(|k| input.get(k).and_then(Value::as_str))
        .map(str::to_string)
}

fn invalid(kind: ToolKind, problem: &str) -> Action {
    Action::Invalid { kind, problem: problem.to_string() }
}

/// How a file tool changes its file.
fn change(tool: &str, input: &Value) -> Change {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let edit = |v: &Value| {
        let all = v.get("replace_all").and_then(Value::as_bool) == Some(true);
        Some(Edit { old: s(v, "old_string")?, new: s(v, "new_string")?, all })
    };
    match tool {
        "Write" => Change::Whole(s(input, "content").unwrap_or_default()),
        "Edit" => Change::Edits(edit(input).into_iter().collect()),
        // Every edit must read: one that does not leaves the call with no edits at all, so no
        // text of it is taken as merely replaced (and skipped by the secret scan).
        "MultiEdit" => Change::Edits(
            input
                .get("edits")
                .and_then(Value::as_array)
                .and_then(|e| e.iter().map(edit).collect::<Option<Vec<_>>>())
                .unwrap_or_default(),
        ),
        _ => Change::Cell(s(input, "new_source")),
    }
}

/// Claude Code's `permission_mode`. Unknown values map to `Normal`: the gate's own rules do not
/// depend on the host asking, so guessing the least trusting host mode is safe. The host's
/// `bypassPermissions` is *not* yolo: it removes the confirmation layer (the host will not
/// prompt), but loopguard's asks and denies stand; only a human can switch loopguard's yolo on,
/// and only for a while.
pub fn mode(permission_mode: &str) -> ExecutionMode {
    match permission_mode {
        "acceptEdits" => ExecutionMode::AutoEdit,
        "plan" => ExecutionMode::Plan,
        "bypassPermissions" | "dontAsk" => ExecutionMode::Unattended,
        _ => ExecutionMode::Normal,
    }
}

/// The text a tool result holds, for the breaker's test counts: Bash's stdout and stderr, Read's
/// file content.
pub fn result_text(tool: &str, response: &Value) -> Option<String> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    match tool {
        "Bash" => Some(format!(
            "{}\n{}",
            s(response, "stdout").unwrap_or_default(),
            s(response, "stderr").unwrap_or_default()
        )),
        "Read" => response.get("file").and_then(|f| s(f, "content")),
        _ => None,
    }
}

/// A Claude Code tool call as the gate sees it.
pub fn call(tool: &str, input: Value, cwd: impl Into<std::path::PathBuf>) -> loopguard_core::ToolCall {
    loopguard_core::ToolCall::new(tool, action(tool, &input), input, cwd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn covers_claude_code_tools() {
        for (name, kind) in [
            ("Bash", ToolKind::Shell),
            ("Read", ToolKind::FileRead),
            ("Write", ToolKind::FileWrite),
            ("Edit", ToolKind::FileWrite),
            ("MultiEdit", ToolKind::FileWrite),
            ("NotebookEdit", ToolKind::FileWrite),
            ("Glob", ToolKind::Search),
            ("Grep", ToolKind::Search),
            ("WebFetch", ToolKind::Network),
            ("WebSearch", ToolKind::Network),
            ("Task", ToolKind::Agent),
            ("Agent", ToolKind::Agent),
            ("TodoWrite", ToolKind::Meta),
        ] {
            assert_eq!(action(name, &json!({})).kind(), Some(kind), "{name}");
        }
        assert_eq!(
            action("mcp__github__create_issue", &json!({})),
            Action::Mcp { server: "github".into(), tool: "create_issue".into() }
        );
        assert_eq!(action("bash", &json!({})), Action::Unknown, "names are case-sensitive");
        assert_eq!(action("Frobnicate", &json!({})), Action::Unknown);
    }

    #[test]
    fn inputs_become_actions() {
        assert_eq!(action("Bash", &json!({"command": "ls"})), Action::Shell { command: "ls".into() });
        assert!(matches!(action("Bash", &json!({"command": 1})), Action::Invalid { kind: ToolKind::Shell, .. }));
        assert_eq!(
            action("MultiEdit", &json!({"file_path": "/w/a", "edits": [{"old_string": "a", "new_string": "b"}]})),
            Action::WriteFile {
                path: "/w/a".into(),
                change: Change::Edits(vec![Edit { old: "a".into(), new: "b".into(), all: false }])
            }
        );
        assert_eq!(
            action("Grep", &json!({"glob": ".env*"})),
            Action::Search { path: None, content_glob: Some(".env*".into()) }
        );
        assert_eq!(mode("bypassPermissions"), ExecutionMode::Unattended);
        assert_eq!(mode("something-new"), ExecutionMode::Normal);
    }

    #[test]
    fn each_tool_is_checked_on_the_field_it_acts_on() {
        // A second path field must not stand in for the one the tool uses.
        let grep = action("Grep", &json!({"path": "~/.ssh", "file_path": "/w/README.md"}));
        assert_eq!(grep, Action::Search { path: Some("~/.ssh".into()), content_glob: None });
        let nb = action("NotebookEdit", &json!({"notebook_path": "/elsewhere/x.ipynb", "file_path": "/w/ok.ipynb"}));
        assert!(matches!(nb, Action::WriteFile { ref path, .. } if path == "/elsewhere/x.ipynb"), "{nb:?}");
        let read = action("Read", &json!({"file_path": "/etc/shadow", "path": "/w/a"}));
        assert_eq!(read, Action::ReadFile { path: Some("/etc/shadow".into()) });
        // Only when the tool's own field is absent does another one count.
        assert_eq!(
            action("LS", &json!({"file_path": "/w"})),
            Action::Search { path: Some("/w".into()), content_glob: None }
        );
    }

    #[test]
    fn a_multiedit_with_an_edit_that_does_not_read_has_no_edits() {
        let key = "AKIAZ7QXW2ERT5YUNB3C";
        let a = action(
            "MultiEdit",
            &json!({"file_path": "/w/a", "edits": [{"old_string": key, "new_string": "x"}, {"new_string": key}]}),
        );
        assert_eq!(a, Action::WriteFile { path: "/w/a".into(), change: Change::Edits(Vec::new()) });
        assert!(!a.only_replaced(key), "nothing of a malformed MultiEdit may be skipped by the secret scan");
    }
}
