//! What a host adapter hands the engine ([`HostEvent`]) and what the engine answers
//! ([`Answer`]). Nothing here names a host: each adapter maps its own event names, fields and
//! tool names onto these types, and renders the answer in its own protocol.

use loopguard_core::{Action, Decision, ExecutionMode};
use serde_json::Value;
use std::path::PathBuf;

/// What happened in the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The agent wants to call a tool: the gate decides.
    ToolCall,
    /// A tool call finished (`failed`: it ended in an error); its result may be redacted.
    ToolResult {
        /// The call failed (the host reports an error, not a result).
        failed: bool,
    },
    /// A session started (or resumed).
    SessionStart,
    /// A session ended.
    SessionEnd,
    /// The human submitted a prompt.
    Prompt,
    /// The agent (or a sub-agent) stopped.
    Stop,
    /// An event another of loopguard's adapters decides in the same host (Cursor runs Claude
    /// Code's hooks besides its own): nothing to do, nothing recorded.
    Deferred,
}

/// The tool a [`EventKind::ToolCall`] or [`EventKind::ToolResult`] is about.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The host's tool name, as the audit log records it.
    pub name: String,
    /// The tool's input as the host sent it (hashed for the audit log).
    pub input: Value,
    /// The host's id for this call.
    pub use_id: Option<String>,
    /// What it does (the adapter maps its tool and fields onto this).
    pub action: Action,
    /// The directory the tool runs in, when the host lets the agent choose one other than the
    /// session's (relative to the session's directory).
    pub cwd: Option<PathBuf>,
}

impl ToolUse {
    /// A tool use that runs in the session's directory.
    pub fn new(name: &str, input: Value, use_id: Option<String>, action: Action) -> Self {
        ToolUse { name: name.to_string(), input, use_id, action, cwd: None }
    }
}

/// A finished call's result, for [`EventKind::ToolResult`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolResult {
    /// What the tool returned (absent when it failed).
    pub response: Option<Value>,
    /// Size of the response as JSON text.
    pub response_bytes: Option<usize>,
    /// Size of the error as JSON text.
    pub error_bytes: Option<usize>,
    /// The human interrupted the call.
    pub is_interrupt: Option<bool>,
    /// How long the call ran.
    pub duration_ms: Option<u64>,
    /// What the tool printed that a test run would show (a shell's stdout and stderr, a file
    /// read's content), for the breaker's test counts.
    pub text: Option<String>,
    /// The file as it was before a whole-file write, when the host reports it (ping-pong).
    pub original: Option<String>,
}

/// One host event in host-neutral form.
#[derive(Debug, Clone, PartialEq)]
pub struct HostEvent {
    /// What happened.
    pub kind: EventKind,
    /// The host's own name for the event (kept in the audit log's details).
    pub name: String,
    /// The host session.
    pub session: String,
    /// The directory the agent works in (absolute).
    pub cwd: PathBuf,
    /// How the host runs the agent.
    pub mode: ExecutionMode,
    /// The tool, for tool calls and results.
    pub tool: Option<ToolUse>,
    /// The result, for tool results.
    pub result: Option<ToolResult>,
    /// The session's transcript, for spend accounting (Claude Code's format).
    pub transcript: Option<PathBuf>,
    /// Whether the host reports what the session spends (a transcript loopguard reads). Where it
    /// does not, the breaker's spend budgets cannot be measured for the run: they are not
    /// enforced there (the run shows `spend_unreported`), while its step and time limits are.
    pub spend_reported: bool,
    /// Why a session started (`startup`, `resume`, …) or ended.
    pub why: Option<String>,
    /// Size of a submitted prompt (the prompt itself is never logged).
    pub prompt_bytes: Option<usize>,
}

impl HostEvent {
    /// A bare event of `kind` (tests and adapters fill in the rest).
    pub fn new(kind: EventKind, name: &str, session: &str, cwd: PathBuf) -> Self {
        HostEvent {
            kind,
            name: name.to_string(),
            session: session.to_string(),
            cwd,
            mode: ExecutionMode::Normal,
            tool: None,
            result: None,
            transcript: None,
            spend_reported: true,
            why: None,
            prompt_bytes: None,
        }
    }

    /// The shell command of a shell tool call.
    pub fn shell_command(&self) -> Option<&str> {
        self.tool.as_ref().and_then(|t| t.action.shell_command())
    }
}

/// What a host can do with an answer. The engine degrades by these: an ask becomes a deny
/// where the host cannot ask, a confined run becomes a deny where it cannot rewrite the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// The host asks its human when told to (and blocks while it waits).
    pub ask: bool,
    /// The host runs a rewritten tool input (the route to `loopguard exec`).
    pub rewrite_input: bool,
    /// The host hands the model a replaced tool result (the route for redaction).
    pub replace_output: bool,
}

/// The engine's answer to one event.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Nothing to say: the host goes on with its own flow.
    Proceed,
    /// The gate's decision on a tool call: allow, ask or deny, with its reasons.
    Decide {
        /// The decision.
        decision: Decision,
        /// A dry run of what an asked call would do, for the human.
        preview: Option<String>,
        /// Things the human should know whatever the verdict.
        notices: Vec<String>,
        /// A deny no waiting can lift (the fleet's budget is spent): the host should end the
        /// session, where it can, instead of letting the model react (which costs a turn).
        end_session: Option<String>,
    },
    /// Allowed, to run only inside loopguard's kernel sandbox: the host runs `command` in place
    /// of the shell command it asked for.
    Confine {
        /// The wrapped command line.
        command: String,
        /// Things the human should know.
        notices: Vec<String>,
    },
    /// The model gets this (redacted) result in place of the tool's own.
    ReplaceOutput {
        /// The replacement, in the tool's own shape.
        output: Value,
        /// How many secrets were redacted.
        redacted: usize,
    },
}
