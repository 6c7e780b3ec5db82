//! The policy's model types that the checks consume: the `[[commands]]` rule, the merged
//! `[paths]` lists, a layer's kind, and a value with its span. A leaf: the checks import it,
//! and it imports nothing of theirs, so configuration never depends on a check's implementation.

use crate::Verdict;
use std::ops::Range;
use std::path::PathBuf;

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At<T> {
    /// The value.
    pub value: T,
    /// Where it was written (byte range in its file).
    pub span: Range<usize>,
}

/// Which layer a setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LayerKind {
    /// Compiled in.
    Builtin,
    /// `~/.config/loopguard/policy.toml`: the human's own.
    User,
    /// `.loopguard/policy.toml` in the repository: agent-writable, so tighten only.
    Project,
    /// The project policy whose exact content a human approved (`loopguard approve`): it may
    /// loosen rules like the user's own, for as long as its hash stays the approved one.
    ApprovedProject,
}

impl LayerKind {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Builtin => "built-in",
            LayerKind::User => "user",
            LayerKind::Project => "project",
            LayerKind::ApprovedProject => "project (approved)",
        }
    }
}

/// A policy rule over shell commands: a program with flags and arguments → ask or deny.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRule {
    pub(crate) code: At<String>,
    /// The program name (basename) the rule applies to.
    pub program: String,
    /// Flags that must all be present: a letter (`r` matches `-r`, `-rf`) or a long flag (`--force`).
    pub flags: Vec<String>,
    /// Arguments that must all be present as words after the program.
    pub args: Vec<String>,
    /// Ask or deny.
    pub verdict: Verdict,
    /// Told to the agent.
    pub message: String,
    pub(crate) examples_match: Vec<At<String>>,
    pub(crate) examples_not_match: Vec<At<String>>,
    /// The layer it came from.
    pub origin: LayerKind,
    pub(crate) file: PathBuf,
}

impl CommandRule {
    /// The rule's own reason code.
    pub fn code(&self) -> &str {
        &self.code.value
    }
}

/// The `[paths]` lists after merging.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathLists {
    /// Modifying or staging these halts the run.
    pub denylist: Vec<String>,
    /// Reading these is a credential read.
    pub secret_read: Vec<String>,
    /// Exceptions to `secret_read`.
    pub secret_read_except: Vec<String>,
    /// A human-supervised migration session: `**/migrations/**` is not denylisted.
    pub migration_session: bool,
}

/// `[fleet]`: the fleet a host belongs to (user policy only; docs/fleet.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetSettings {
    /// The PostgreSQL the fleet agent connects to (`postgres://…` or key=value form).
    pub database_url: String,
    /// The fleet's name (default `default`).
    pub name: String,
    /// This host's name in the fleet (default: the machine's host name).
    pub host: Option<String>,
    /// The group this host belongs to, if any.
    pub group: Option<String>,
    /// Seconds between the agent's heartbeats (default 1).
    pub heartbeat: u64,
    /// Ed25519 public keys (hex) of the operators whose signature may lift a fleet position.
    pub operator_keys: Vec<String>,
    /// Micro-dollars the agent reserves from a fleet budget at a time (`reservation_usd`,
    /// default 1.00).
    pub reservation_micro_usd: i64,
    /// Tokens the agent reserves from a fleet token budget at a time (default 200,000).
    pub reservation_tokens: u64,
    /// A PEM file of CA certificates the database's TLS certificate may chain to (besides
    /// Mozilla's roots).
    pub ca_file: Option<String>,
    /// Seconds a reservation is held without the agent renewing it (default 300): after that
    /// the host spends nothing more from it, and the fleet takes its unused part back.
    pub lease: u64,
}

impl Default for FleetSettings {
    fn default() -> Self {
        FleetSettings {
            database_url: String::new(),
            name: "default".into(),
            host: None,
            group: None,
            heartbeat: 1,
            operator_keys: Vec::new(),
            reservation_micro_usd: 1_000_000,
            reservation_tokens: 200_000,
            ca_file: None,
            lease: 300,
        }
    }
}

impl FleetSettings {
    /// The database URL with any password replaced by `***` (for display).
    pub fn redacted_url(&self) -> String {
        let u = &self.database_url;
        match (u.find("://"), u.rfind('@')) {
            (Some(s), Some(at)) if at > s => {
                let creds = &u[s + 3..at];
                match creds.find(':') {
                    Some(c) => format!("{}{}:***{}", &u[..s + 3], &creds[..c], &u[at..]),
                    None => u.clone(),
                }
            }
            _ if u.contains("password=") => u
                .split_whitespace()
                .map(|kv| if kv.starts_with("password=") { "password=***" } else { kv })
                .collect::<Vec<_>>()
                .join(" "),
            _ => u.clone(),
        }
    }
}
