//! What a tool call does, in host-neutral terms. Each host adapter maps its own tools and input
//! fields onto an [`Action`]; the gate, grants, ping-pong detection and previews read the action,
//! never a host's tool name or field name. The host's tool name stays on the [`crate::ToolCall`]
//! for the policy's `[tools]` table, messages and the audit log.

/// What a tool call does.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Action {
    /// Runs a shell command line.
    Shell {
        /// The command line.
        command: String,
    },
    /// Creates, overwrites or edits one file.
    WriteFile {
        /// The file, as the agent wrote it (`~` not yet expanded).
        path: String,
        /// What changes.
        change: Change,
    },
    /// Changes several files at once (a patch): each is checked as a write of its own.
    Patch {
        /// The files, in the patch's order (a moved file appears twice: deleted, then written).
        files: Vec<FileChange>,
    },
    /// Reads one file (or a directory listing).
    ReadFile {
        /// The file, when the call names one.
        path: Option<String>,
    },
    /// Searches or lists files.
    Search {
        /// Where, when the call says.
        path: Option<String>,
        /// A glob selecting the files whose *content* the search prints (a content search limited
        /// to `.env*` reads those files).
        content_glob: Option<String>,
    },
    /// Reads a URL.
    Fetch {
        /// The URL, when the call names one.
        url: Option<String>,
    },
    /// Searches the web (the host's search service reads no URL of the agent's choosing).
    WebSearch,
    /// Calls a tool of an MCP server.
    Mcp {
        /// The server's name.
        server: String,
        /// The tool's name on that server.
        tool: String,
    },
    /// Starts a sub-agent (its own calls come through the gate too).
    Agent,
    /// Host bookkeeping with no effect outside the host (todo lists, plan mode, job control).
    Meta,
    /// A tool the adapter knows, whose input lacks what the gate needs to check it.
    Invalid {
        /// What kind of tool it is.
        kind: ToolKind,
        /// What is wrong (`` `command` is missing or not a string ``).
        problem: String,
    },
    /// A tool the adapter does not know: the policy's `unknown_tool` decides.
    Unknown,
}

/// How a [`Action::WriteFile`] changes its file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Change {
    /// The whole new content.
    Whole(String),
    /// Replacements of old text by new text, in order.
    Edits(Vec<Edit>),
    /// A notebook cell (the new source, when given).
    Cell(Option<String>),
    /// The file is deleted.
    Delete,
}

/// One file of an [`Action::Patch`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileChange {
    /// The file, as the agent wrote it.
    pub path: String,
    /// What changes.
    pub change: Change,
}

/// One replacement in a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Edit {
    /// The text replaced (already in the file).
    pub old: String,
    /// The text it becomes.
    pub new: String,
    /// Every occurrence (else the first).
    pub all: bool,
}

impl Change {
    /// The content the change leaves in a file that held `old`; `None` for a notebook cell
    /// (its file format is not applied here).
    pub fn apply(&self, old: &str) -> Option<String> {
        match self {
            Change::Whole(content) => Some(content.clone()),
            Change::Edits(edits) => Some(edits.iter().fold(old.to_string(), |t, e| {
                if e.all { t.replace(&e.old, &e.new) } else { t.replacen(&e.old, &e.new, 1) }
            })),
            Change::Cell(_) | Change::Delete => None,
        }
    }
}

impl Action {
    /// What kind of tool does this (`None`: an unknown tool).
    pub fn kind(&self) -> Option<ToolKind> {
        Some(match self {
            Action::Shell { .. } => ToolKind::Shell,
            Action::WriteFile { .. } | Action::Patch { .. } => ToolKind::FileWrite,
            Action::ReadFile { .. } => ToolKind::FileRead,
            Action::Search { .. } => ToolKind::Search,
            Action::Fetch { .. } | Action::WebSearch => ToolKind::Network,
            Action::Mcp { .. } => ToolKind::Mcp,
            Action::Agent => ToolKind::Agent,
            Action::Meta => ToolKind::Meta,
            Action::Invalid { kind, .. } => *kind,
            Action::Unknown => return None,
        })
    }

    /// The resource the call acts on, for grant matching: the file, the command or the URL.
    pub fn resource(&self) -> Option<&str> {
        match self {
            Action::Shell { command } => Some(command),
            Action::WriteFile { path, .. } => Some(path),
            // A grant for one file never covers a patch that also changes others.
            Action::Patch { files } => match files.as_slice() {
                [one] => Some(&one.path),
                _ => None,
            },
            Action::ReadFile { path } | Action::Search { path, .. } => path.as_deref(),
            Action::Fetch { url } => url.as_deref(),
            _ => None,
        }
    }

    /// The command line of a shell call.
    pub fn shell_command(&self) -> Option<&str> {
        match self {
            Action::Shell { command } => Some(command),
            _ => None,
        }
    }

    /// Whether `text` is only ever replaced by this call's edits: it is some edit's old text
    /// and no edit's new text, so it is already in the file and the call does not write it.
    /// (A text that one edit writes and another "replaces" by itself is written.)
    ///
    /// A patch is one text holding every hunk, so there the test is by containment: `text` is
    /// in some hunk's old text, in no hunk's new text and in no added or rewritten file.
    pub fn only_replaced(&self, text: &str) -> bool {
        match self {
            Action::WriteFile { change: Change::Edits(edits), .. } => {
                edits.iter().any(|e| e.old == text) && !edits.iter().any(|e| e.new == text)
            }
            Action::Patch { files } => {
                let mut replaced = false;
                for f in files {
                    match &f.change {
                        Change::Edits(edits) => {
                            if edits.iter().any(|e| e.new.contains(text)) {
                                return false;
                            }
                            replaced |= edits.iter().any(|e| e.old.contains(text));
                        }
                        Change::Whole(content) if content.contains(text) => return false,
                        Change::Cell(Some(src)) if src.contains(text) => return false,
                        _ => {}
                    }
                }
                replaced
            }
            _ => false,
        }
    }

    /// Every file the call writes, with its change: one for a write, each file of a patch.
    pub fn file_changes(&self) -> Vec<(&str, &Change)> {
        match self {
            Action::WriteFile { path, change } => vec![(path.as_str(), change)],
            Action::Patch { files } => files.iter().map(|f| (f.path.as_str(), &f.change)).collect(),
            _ => Vec::new(),
        }
    }
}

/// What kind of thing a tool does; decides which checks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ToolKind {
    /// Runs shell commands.
    Shell,
    /// Reads files.
    FileRead,
    /// Writes or edits one file.
    FileWrite,
    /// Searches or lists files.
    Search,
    /// Reaches the network (a URL fetch, a web search).
    Network,
    /// Starts a sub-agent; its own tool calls come through the gate too.
    Agent,
    /// Bookkeeping with no effect outside the host (todo lists, plan mode).
    Meta,
    /// A tool served by an MCP server: anything at all.
    Mcp,
}
