use crate::{AutonomyLevel, RiskLevel};

/// What kind of thing a tool does; decides which checks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Runs shell commands (`command` field).
    Shell,
    /// Reads files.
    FileRead,
    /// Writes or edits one file (`file_path` or `notebook_path`).
    FileWrite,
    /// Searches files (Glob, Grep, LS).
    Search,
    /// Reaches the network (WebFetch, WebSearch).
    Network,
    /// Starts a sub-agent; its own tool calls come through the gate too.
    Agent,
    /// Bookkeeping with no effect outside the host (TodoWrite, ExitPlanMode).
    Meta,
    /// A tool served by an MCP server: anything at all.
    Mcp,
}

/// What loopguard knows about a tool before looking at its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolMetadata {
    /// The host's tool name.
    pub name: &'static str,
    /// What it does.
    pub kind: ToolKind,
    /// Its base risk.
    pub risk: RiskLevel,
    /// The autonomy level it needs before its input is looked at.
    pub required: AutonomyLevel,
}

const fn meta(name: &'static str, kind: ToolKind, risk: RiskLevel, required: AutonomyLevel) -> ToolMetadata {
    ToolMetadata { name, kind, risk, required }
}

use AutonomyLevel as A;
use RiskLevel as R;
use ToolKind as K;

/// Claude Code's tools. Anything not here (and not `mcp__*`) is unknown and gets the policy's
/// `unknown_tool` decision.
const TABLE: &[ToolMetadata] = &[
    // Bash's level comes from the analysis of its command (reads need only observe).
    meta("Bash", K::Shell, R::High, A::Observe),
    meta("Read", K::FileRead, R::Low, A::Observe),
    meta("Write", K::FileWrite, R::Medium, A::Implement),
    meta("Edit", K::FileWrite, R::Medium, A::Implement),
    meta("MultiEdit", K::FileWrite, R::Medium, A::Implement),
    meta("NotebookEdit", K::FileWrite, R::Medium, A::Implement),
    meta("Glob", K::Search, R::Low, A::Observe),
    meta("Grep", K::Search, R::Low, A::Observe),
    meta("LS", K::Search, R::Low, A::Observe),
    meta("WebFetch", K::Network, R::Medium, A::Observe),
    meta("WebSearch", K::Network, R::Low, A::Observe),
    meta("Task", K::Agent, R::Low, A::Observe),
    meta("Agent", K::Agent, R::Low, A::Observe),
    meta("TodoWrite", K::Meta, R::Low, A::Observe),
    meta("ExitPlanMode", K::Meta, R::Low, A::Observe),
    meta("BashOutput", K::Meta, R::Low, A::Observe),
    meta("KillShell", K::Meta, R::Low, A::Observe),
];

const MCP: ToolMetadata = meta("mcp__*", K::Mcp, R::High, A::Implement);

impl ToolMetadata {
    /// Looks a tool up in the default table. `mcp__<server>__<tool>` names share one entry.
    pub fn lookup(tool: &str) -> Option<ToolMetadata> {
        if tool.starts_with("mcp__") {
            return Some(MCP);
        }
        TABLE.iter().find(|m| m.name == tool).copied()
    }

    /// Every tool in the default table.
    pub fn table() -> &'static [ToolMetadata] {
        TABLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_claude_code_tools() {
        for name in [
            "Bash",
            "Read",
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "Glob",
            "Grep",
            "WebFetch",
            "WebSearch",
            "Task",
            "Agent",
            "TodoWrite",
        ] {
            assert!(ToolMetadata::lookup(name).is_some(), "{name} missing");
        }
        assert_eq!(ToolMetadata::lookup("mcp__github__create_issue").map(|m| m.kind), Some(K::Mcp));
        assert_eq!(ToolMetadata::lookup("bash"), None, "names are case-sensitive");
        assert_eq!(ToolMetadata::lookup("Frobnicate"), None);
    }
}
