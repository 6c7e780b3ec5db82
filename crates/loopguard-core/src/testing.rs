//! Test fixtures: tool calls written the way Claude Code sends them, turned into actions the way
//! its adapter does (`crates/loopguard/src/hosts/claude_code/tools.rs`, which has its own tests).
//! Only the tools these tests use; the gate itself never sees a tool name's meaning.

use crate::{Action, Change, Edit, ToolCall, ToolKind};
use serde_json::Value;
use std::path::PathBuf;

/// A call of a Claude Code tool with its input.
pub(crate) fn call(tool: &str, input: Value, cwd: impl Into<PathBuf>) -> ToolCall {
    ToolCall::new(tool, action(tool, &input), input, cwd)
}

fn action(tool: &str, input: &Value) -> Action {
    let s = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    let path = || ["file_path", "notebook_path", "path"].iter().find_map(|k| s(k));
    match tool {
        "Bash" => s("command").map_or_else(
            || Action::Invalid { kind: ToolKind::Shell, problem: "`command` is missing or not a string".into() },
            |command| Action::Shell { command },
        ),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => match s("file_path").or_else(|| s("notebook_path")) {
            Some(path) if tool == "Write" => {
                Action::WriteFile { path, change: Change::Whole(s("content").unwrap_or_default()) }
            }
            Some(path) if tool == "NotebookEdit" => Action::WriteFile { path, change: Change::Cell(s("new_source")) },
            Some(path) => {
                let edit = s("old_string").zip(s("new_string")).map(|(old, new)| Edit { old, new, all: false });
                Action::WriteFile { path, change: Change::Edits(edit.into_iter().collect()) }
            }
            None => {
                Action::Invalid { kind: ToolKind::FileWrite, problem: "`file_path` is missing or not a string".into() }
            }
        },
        "Read" => Action::ReadFile { path: path() },
        "Glob" => Action::Search { path: path(), content_glob: None },
        "Grep" => Action::Search { path: path(), content_glob: s("glob") },
        "WebFetch" => Action::Fetch { url: s("url") },
        "WebSearch" => Action::WebSearch,
        "Task" => Action::Agent,
        "TodoWrite" => Action::Meta,
        t if t.starts_with("mcp__") => {
            let mut parts = t[5..].splitn(2, "__");
            Action::Mcp { server: parts.next().unwrap_or("").into(), tool: parts.next().unwrap_or("").into() }
        }
        _ => Action::Unknown,
    }
}
