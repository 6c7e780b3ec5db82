use crate::{Action, BreakerPosition, ExecutionMode};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One tool call an agent wants to make: what it does ([`Action`], host-neutral) and, for the
/// policy's `[tools]` table, messages and the audit log, the host's tool name and raw input.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The host's tool name (`Bash`, `run_shell_command`, `mcp__github__create_issue`, …).
    pub tool: String,
    /// What the call does, as the host adapter read it from the input.
    pub action: Action,
    /// The tool's input object as the host sent it (scanned for secrets and canaries).
    pub input: Value,
    /// The directory the call runs in.
    pub cwd: PathBuf,
    /// The host session, when known.
    pub session: Option<String>,
}

impl ToolCall {
    /// A call with no session.
    pub fn new(tool: impl Into<String>, action: Action, input: Value, cwd: impl Into<PathBuf>) -> Self {
        ToolCall { tool: tool.into(), action, input, cwd: cwd.into(), session: None }
    }
}

/// Facts about a repository's working tree that only running git can tell. Core runs no
/// process: the host side supplies this (`loopguard::git::GitWorktree`), tests their own.
pub trait Worktree: std::fmt::Debug + Send + Sync {
    /// The files `git status` reports as changed or untracked under `dir` (absolute paths), or
    /// `None` when that cannot be told (not a repository, git missing, bad output).
    fn changed_files(&self, dir: &Path) -> Option<Vec<String>>;
}

/// A shared [`Worktree`], compared by identity.
#[derive(Debug, Clone, Default)]
pub struct WorktreeRef(pub Option<std::sync::Arc<dyn Worktree>>);

impl PartialEq for WorktreeRef {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

/// What the gate knows about the run around a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// The workspace root: writes are confined to it (and the policy's extra roots).
    pub workspace: PathBuf,
    /// The user's home directory, for `~` and `$HOME`.
    pub home: Option<PathBuf>,
    /// The breaker's position for this run.
    pub breaker: BreakerPosition,
    /// How the host runs the agent.
    pub mode: ExecutionMode,
    /// loopguard's state home: protected from agent writes.
    pub state_home: Option<PathBuf>,
    /// The user policy file: protected from agent writes.
    pub user_policy: Option<PathBuf>,
    /// Why the breaker is tripped (the active trips, in words), when it is.
    pub paused: Option<String>,
    /// A tripped breaker's require-approval flag: every allow becomes ask.
    pub require_approval: bool,
    /// Break-glass waivers in force.
    pub waivers: Vec<Waiver>,
    /// Grants that may pre-authorise calls the gate would ask about.
    pub permissions: crate::permissions::PermissionStore,
    /// Now (Unix seconds), for grant expiry.
    pub now: i64,
    /// Canary credential values `loopguard exec` planted.
    pub canaries: Vec<String>,
    /// Canary files `loopguard exec` wrote.
    pub canary_files: Vec<PathBuf>,
    /// The host runs allowed shell calls inside loopguard's kernel sandbox (`loopguard exec`):
    /// unattended, code the analysis cannot see into may then run, confined.
    pub confinement: bool,
    /// How the host names of fetch tools' URLs are resolved to check their addresses.
    pub dns: Dns,
    /// What the analysis may ask about the repository around a call; `None`: nothing can be
    /// asked, and what needs it is asked of a human.
    pub worktree: WorktreeRef,
    /// TCP ports where loopguard's own human controls listen (a running dashboard): no tool call
    /// may reach them, whatever the host name.
    pub guarded_ports: Vec<u16>,
    /// The host keeps a step journal (pre-images, `loopguard undo`) for every allowed call that
    /// writes: a file edit inside the workspace can be walked back, so normal mode needs no
    /// confirmation for it (see `docs/undo.md`).
    pub journal: bool,
}

/// How the gate resolves the host name of a URL a fetch tool is asked to read, so a public-looking
/// name that points inside is caught.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Dns {
    /// Not resolved (names are judged by their spelling only).
    #[default]
    Off,
    /// The system resolver, waiting at most this many milliseconds (no answer in time: asked).
    System {
        /// The longest wait.
        wait_ms: u64,
    },
    /// A fixed table of names and their addresses (tests, and hosts that pin their resolution).
    Table(Vec<(String, Vec<std::net::IpAddr>)>),
}

/// A break-glass waiver as the gate sees it: the rules and paths a human waived for a while.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Waiver {
    /// Its id, for the reason text.
    pub id: i64,
    /// Rule codes waived.
    pub rules: Vec<String>,
    /// Path globs (workspace-relative or absolute) whose findings are waived.
    pub paths: Vec<String>,
}

impl Context {
    /// A context for a workspace, with `HOME` from the environment, no breaker cap and the
    /// unattended mode (no confirmation layer: findings alone decide; the hook sets the host's mode).
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Context {
            workspace: workspace.into(),
            home: std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_absolute()),
            breaker: BreakerPosition::FullAuto,
            mode: ExecutionMode::Unattended,
            state_home: None,
            user_policy: None,
            paused: None,
            require_approval: false,
            waivers: Vec::new(),
            permissions: crate::permissions::PermissionStore::default(),
            now: 0,
            canaries: Vec::new(),
            canary_files: Vec::new(),
            confinement: false,
            dns: Dns::Off,
            worktree: WorktreeRef(None),
            guarded_ports: Vec::new(),
            journal: false,
        }
    }

    /// Says whether allowed writing calls get pre-images in the step journal.
    pub fn with_journal(mut self, journal: bool) -> Self {
        self.journal = journal;
        self
    }

    /// Sets the ports of loopguard's own human controls (a running dashboard).
    pub fn with_guarded_ports(mut self, ports: Vec<u16>) -> Self {
        self.guarded_ports = ports;
        self
    }

    /// Lets the analysis ask git about the working tree.
    pub fn with_worktree(mut self, worktree: std::sync::Arc<dyn Worktree>) -> Self {
        self.worktree = WorktreeRef(Some(worktree));
        self
    }

    /// Sets how fetch tools' host names are resolved.
    pub fn with_dns(mut self, dns: Dns) -> Self {
        self.dns = dns;
        self
    }

    /// Says whether allowed shell calls will run inside the kernel sandbox.
    pub fn with_confinement(mut self, confinement: bool) -> Self {
        self.confinement = confinement;
        self
    }

    /// Sets the state home and user policy file, which the agent may not write.
    pub fn with_protected(mut self, state_home: Option<&Path>, user_policy: Option<&Path>) -> Self {
        self.state_home = state_home.map(Path::to_path_buf);
        self.user_policy = user_policy.map(Path::to_path_buf);
        self
    }

    /// Sets the breaker: its position, why it is tripped, and whether approval is required.
    pub fn with_breaker_state(mut self, position: BreakerPosition, paused: Option<String>, approval: bool) -> Self {
        self.breaker = position;
        self.paused = paused;
        self.require_approval = approval;
        self
    }

    /// Sets the grants and the time they are checked at.
    pub fn with_permissions(mut self, permissions: crate::permissions::PermissionStore, now: i64) -> Self {
        self.permissions = permissions;
        self.now = now;
        self
    }

    /// Sets the canaries to watch for.
    pub fn with_canaries(mut self, values: Vec<String>, files: Vec<PathBuf>) -> Self {
        self.canaries = values;
        self.canary_files = files;
        self
    }

    /// Sets the break-glass waivers in force.
    pub fn with_waivers(mut self, waivers: Vec<Waiver>) -> Self {
        self.waivers = waivers;
        self
    }

    /// Absolute paths the agent may never write.
    pub fn protected_paths(&self) -> Vec<PathBuf> {
        self.state_home.iter().chain(self.user_policy.iter()).cloned().collect()
    }

    /// Sets the home directory.
    pub fn with_home(mut self, home: Option<&Path>) -> Self {
        self.home = home.map(Path::to_path_buf);
        self
    }

    /// Sets the breaker position.
    pub fn with_breaker(mut self, breaker: BreakerPosition) -> Self {
        self.breaker = breaker;
        self
    }

    /// Sets the execution mode.
    pub fn with_mode(mut self, mode: ExecutionMode) -> Self {
        self.mode = mode;
        self
    }
}
