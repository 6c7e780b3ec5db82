//! The command line: clap's types for every subcommand.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "loopguard", version, about = "Fail-closed safety gate for autonomous coding agents")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Answer a host's hook call (reads the event on stdin).
    Hook(HookArgs),
    /// Check or show the policy.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Verify or read the audit log.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Add loopguard's hooks to a host's settings (idempotent; keeps everything else).
    Install(InstallArgs),
    /// Scan files, stdin or a git diff for secrets (exit 1 when something new is found).
    Scan(ScanArgs),
    /// Check that loopguard is installed and working here.
    Doctor(DoctorArgs),
    /// Dry-run preview: what a tool call would do — a Write/Edit/MultiEdit's diff, or a command
    /// run in a copy-on-write sandbox of the workspace (created, modified, deleted files with
    /// diffs; writes outside the workspace blocked; no network). The workspace is untouched.
    Preview(PreviewArgs),
    /// Approve the control plane's hashes (operator only): policy files, the loopguard binary and
    /// hook settings, `.claude/settings*.json`, `.mcp.json`, `.codex/`, `.gemini/`. Any later
    /// change denies writes and trips the breaker until approved again.
    Approve(ApproveArgs),
    /// The success gate: re-run the verify commands, confirm nothing changed since the reviewed
    /// commit (outside an allowed folder), and write a signed certification (operator only).
    Certify(CertifyArgs),
    /// The circuit breaker: status, check, reset (operator), trip, flush.
    Breaker {
        #[command(subcommand)]
        command: BreakerCommand,
    },
    /// Operators: the humans who may reset breakers and break the glass.
    Operator {
        #[command(subcommand)]
        command: OperatorCommand,
    },
    /// Waive named rules or paths for a short time (operator only; never the backstops).
    BreakGlass(BreakGlassArgs),
    /// Yolo: approve the gate's asks automatically for a while (operator only; denies and
    /// backstops still hold).
    Yolo {
        #[command(subcommand)]
        command: YoloCommand,
    },
    /// Grants: pre-authorise a tool on a resource (operator only), list, revoke.
    Grant {
        #[command(subcommand)]
        command: GrantCommand,
    },
    /// Run a command in the kernel sandbox: scrubbed environment, writes confined (Landlock),
    /// network off unless --net, output redacted, exit code kept.
    Exec(ExecArgs),
    /// Walk back the agent's steps from the step journal: list them, undo the last one, or
    /// every step back to one (files restored byte for byte, files the steps created removed).
    Undo(UndoArgs),
    /// Fetch a URL safely: each host resolved once, every address checked, the connection pinned
    /// to it, every redirect hop checked again, size and time capped. The body goes to stdout.
    Fetch(FetchArgs),
    /// Offline OSV advisories: import a snapshot, check a lockfile.
    Advisories {
        #[command(subcommand)]
        command: AdvisoriesCommand,
    },
    /// Whether a change (`base..head`) is eligible for an automatic merge (exit 1 when not).
    MergeCheck(MergeCheckArgs),
    /// Replay a recorded agent session through the gate (needs no setup).
    Demo,
    /// Check this binary as it was built: every built-in and policy-added pattern compiles,
    /// every pack rule and secret rule meets its examples, a fixed set of calls is decided as
    /// expected through the real hook handler (exit 1 naming what fails).
    Selftest(SelftestArgs),
    /// Decide tool calls with the gate alone, as this binary was built: JSON requests on stdin,
    /// one per line, one answer per line (no host, no state read or written; docs/decide.md).
    Decide,
    /// Serve the local dashboard: the live feed of the audit logs, breakers, grants, yolo,
    /// escalations and the loop canvas, with the human actions (each needs an operator's
    /// passphrase). Prints a one-time link; listens on 127.0.0.1 unless the user policy allows
    /// more.
    Dashboard(DashboardArgs),
    /// The fleet (`[fleet]` in the user policy): the database schema, the per-host agent, and
    /// the fleet-wide positions (operators only).
    Fleet {
        #[command(subcommand)]
        command: FleetCommand,
    },
}

#[derive(Subcommand)]
pub enum FleetCommand {
    /// Create or upgrade the fleet's schema in PostgreSQL (versioned, idempotent).
    Migrate,
    /// Run this host's fleet agent: mirror the fleet's positions, ship the audit logs, heartbeat.
    Agent {
        /// One round, then exit (for scripts and tests).
        #[arg(long)]
        once: bool,
    },
    /// Set the fleet (or one group) to a position, signed with this state home's key. Every
    /// host obeys from its next call; lifting a position needs a key the hosts pin.
    Set {
        /// full-auto (lifts the fleet's cap), pr-only, read-only or stopped.
        position: String,
        /// Only this group of hosts.
        #[arg(long)]
        group: Option<String>,
        /// Why.
        #[arg(long)]
        reason: String,
    },
    /// Stop every host of the fleet (or of one group): `set stopped`.
    Stop {
        /// Only this group of hosts.
        #[arg(long)]
        group: Option<String>,
        /// Why.
        #[arg(long)]
        reason: String,
    },
    /// This host's view: the positions accepted and refused, the budgets reserved for it, and
    /// the key to pin for operators.
    Status {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Write a systemd user unit that keeps this host's fleet agent running
    /// (`~/.config/systemd/user/loopguard-fleet-agent.service`).
    Install {
        /// Replace a unit that exists and differs.
        #[arg(long)]
        force: bool,
        /// Also enable and start it (`systemctl --user enable --now`).
        #[arg(long)]
        now: bool,
    },
    /// A host is gone for good (machine or state home destroyed): remove its registration and
    /// give the unused part of its reservations back to the budgets. Lapsed reservations are
    /// never taken back otherwise (a host cut off may have spent them).
    Forget {
        /// The host's name in the fleet.
        host: String,
    },
    /// Shared budgets: daily USD and token limits per fleet, group or repository.
    Budget {
        #[command(subcommand)]
        command: BudgetCommand,
    },
}

#[derive(Subcommand)]
pub enum BudgetCommand {
    /// Set a daily budget for a scope: `*` (the whole fleet), `group:NAME` or `repo:HOST/PATH`
    /// (the repository's `origin`, e.g. `repo:github.com/org/app`).
    Set {
        /// The scope.
        scope: String,
        /// US dollars a day (e.g. 10 or 12.50).
        #[arg(long)]
        usd: Option<f64>,
        /// Tokens a day.
        #[arg(long)]
        tokens: Option<u64>,
    },
    /// Remove a budget (its ledger stays, for the record).
    Remove {
        /// The scope.
        scope: String,
    },
    /// The ledger of a day: each budget's limit, what the hosts hold and spent, overshoot, and
    /// whether it reconciles. Exit 1 when a ledger does not reconcile or was overspent.
    Status {
        /// The UTC day (default today), `YYYY-MM-DD`.
        #[arg(long)]
        day: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct DashboardArgs {
    /// Where to listen (default 127.0.0.1 on a random free port).
    #[arg(long, value_name = "ADDR:PORT")]
    pub bind: Option<std::net::SocketAddr>,
    /// A workspace to show (repeatable); every workspace with an audit log in the state home
    /// is shown anyway, this tells the dashboard its root when no session start recorded it.
    #[arg(long, value_name = "DIR")]
    pub workspace: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Host {
    /// Claude Code.
    ClaudeCode,
    /// OpenAI Codex CLI.
    Codex,
    /// Google Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Cursor (the IDE's agent and `cursor-agent`).
    Cursor,
}

impl Host {
    /// Every host, in the order `--all` wires them.
    pub const ALL: [Host; 5] = [Host::ClaudeCode, Host::Codex, Host::Gemini, Host::Copilot, Host::Cursor];

    /// The name on the command line (`loopguard hook <name>`).
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Copilot => "copilot",
            Host::Cursor => "cursor",
        }
    }

    /// The host named `name`.
    pub fn from_name(name: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.name() == name)
    }
}

#[derive(Args)]
#[group(multiple = false)]
pub struct InstallTarget {
    /// The project's configuration (`.claude/settings.json`, `.codex/hooks.json`,
    /// `.gemini/settings.json`, `.github/hooks/loopguard.json`, `.cursor/hooks.json`). The default
    /// for Claude Code.
    #[arg(long)]
    pub project: bool,
    /// The user's configuration (`~/.claude/settings.json`, `$CODEX_HOME/hooks.json`,
    /// `~/.gemini/settings.json`, `$COPILOT_HOME/hooks/loopguard.json`, `~/.cursor/hooks.json`).
    /// The default for the other hosts: they load it in every folder.
    #[arg(long)]
    pub user: bool,
    /// An explicit file.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Check policy files: one FILE, or every layer that applies to the current directory.
    Check {
        /// The file to check.
        file: Option<PathBuf>,
        /// Which layer FILE is (default: project when it is `.loopguard/policy.toml`, else user).
        #[arg(long)]
        layer: Option<LayerArg>,
    },
    /// List the packs (what the gate knows about programs): on or off, rule counts, source.
    Packs {
        /// JSON output.
        #[arg(long)]
        json: bool,
        /// Print docs/packs.md (the built-in packs and every rule) instead.
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
    },
    /// Show the policy.
    Show {
        /// The merged policy of every layer for the current directory (the only view so far).
        #[arg(long)]
        effective: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Human,
    Json,
    Sarif,
}

#[derive(Subcommand)]
pub enum BreakerCommand {
    /// Position, active trips with values and cooldowns, budget use (exit 1 when tripped).
    Status {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Exit 1 when the breaker is tripped, 0 when not (for harness scripts).
    Check,
    /// Clear trips and restart the run's counters (operator only).
    Reset {
        /// The operator resetting it.
        #[arg(long)]
        operator: String,
        /// Why the run may go on: recorded in the audit log.
        #[arg(long)]
        reason: String,
        /// Only clear trips of this trigger.
        #[arg(long)]
        trigger: Option<String>,
        /// Read the passphrase from stdin instead of the terminal.
        #[arg(long)]
        passphrase_stdin: bool,
    },
    /// Trip the breaker by hand.
    Trip {
        /// require_approval | pr_only | read_only | stop.
        #[arg(long)]
        to: String,
        /// Why: recorded in the audit log.
        #[arg(long)]
        reason: String,
    },
    /// Carry out pending trip effects (revert, escalation) and deliver webhook events.
    Flush {
        /// Print nothing.
        #[arg(long)]
        quiet: bool,
    },
    /// Print the webhook signing key (created on first use).
    WebhookKey,
}

#[derive(Subcommand)]
pub enum AdvisoriesCommand {
    /// Import OSV records (crates.io, npm, PyPI, Go) from a directory (*.json, recursively) or a
    /// zip archive (osv.dev's `all.zip`), replacing the store.
    Import {
        /// e.g. a checkout of the RustSec advisory database's OSV export, or osv.dev's
        /// `<ecosystem>/all.zip`.
        source: PathBuf,
    },
    /// Check manifests and lockfiles against the store: exit 1 when a dependency is affected,
    /// 2 when there is no data or a file cannot be read.
    Check {
        /// Cargo.toml, Cargo.lock, package.json, package-lock.json, yarn.lock, pnpm-lock.yaml,
        /// requirements*.txt, pyproject.toml, poetry.lock, uv.lock, Pipfile.lock or go.mod
        /// (default: every one of them in the current directory).
        files: Vec<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum YoloCommand {
    /// Switch yolo on for a while.
    On {
        /// The operator switching it on.
        #[arg(long)]
        operator: String,
        /// How long (required; at most break_glass.max).
        #[arg(long = "for")]
        duration: String,
        /// Why: recorded in the audit log.
        #[arg(long)]
        reason: String,
        /// Read the passphrase from stdin instead of the terminal.
        #[arg(long)]
        passphrase_stdin: bool,
    },
    /// Switch yolo off now (audits what it approved).
    Off,
}

#[derive(Subcommand)]
pub enum GrantCommand {
    /// Pre-authorise a tool (name or glob) on a resource glob, here or for one session.
    Add {
        /// The operator granting it.
        #[arg(long)]
        operator: String,
        /// Tool name or glob (`Bash`, `mcp__github__*`).
        #[arg(long)]
        tool: String,
        /// Resource glob: a path for file tools, the command for Bash, the URL for WebFetch.
        #[arg(long)]
        resource: Option<String>,
        /// How long (e.g. 2h); without it the grant lasts until revoked.
        #[arg(long = "for")]
        duration: Option<String>,
        /// Only this host session.
        #[arg(long)]
        session: Option<String>,
        /// Why: recorded in the audit log.
        #[arg(long)]
        reason: String,
        /// Allow a grant of any tool on any resource.
        #[arg(long)]
        allow_broad: bool,
        /// Read the passphrase from stdin instead of the terminal.
        #[arg(long)]
        passphrase_stdin: bool,
    },
    /// The grants in force here (policy and workspace), with warnings about broad ones.
    List {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Remove a workspace grant.
    Revoke {
        /// The grant id.
        id: i64,
        /// The operator revoking it.
        #[arg(long)]
        operator: String,
        /// Read the passphrase from stdin instead of the terminal.
        #[arg(long)]
        passphrase_stdin: bool,
    },
}

#[derive(Subcommand)]
pub enum OperatorCommand {
    /// Create the first operator, or add one (`--by` an existing operator).
    Init {
        /// The new operator's name.
        #[arg(long)]
        name: String,
        /// An existing operator authorising the addition.
        #[arg(long)]
        by: Option<String>,
        /// Read passphrases from stdin (the existing operator's first, then the new one).
        #[arg(long)]
        passphrase_stdin: bool,
    },
}

pub fn secrets(stdin: bool) -> loopguard::operator::Secrets {
    if stdin {
        loopguard::operator::Secrets::Stdin(Box::new(std::io::BufReader::new(std::io::stdin())))
    } else {
        loopguard::operator::Secrets::Terminal
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LayerArg {
    User,
    Project,
}

#[derive(Subcommand)]
pub enum AuditCommand {
    /// Verify the hash chain, the head anchor and every signed checkpoint; names the first
    /// problem (exit 1 when any log is tampered with).
    Verify {
        #[command(flatten)]
        which: LogSelect,
        /// Verify every host's chain shipped to the fleet's database instead (and name the hosts
        /// that fell silent).
        #[arg(long, conflicts_with_all = ["log", "all"])]
        fleet: bool,
        /// With --fleet: a host is silent after this many seconds without a heartbeat.
        #[arg(long, default_value_t = 30, requires = "fleet")]
        silent_after: i64,
        /// JSON output (with --fleet).
        #[arg(long, requires = "fleet")]
        json: bool,
        /// With --fleet: the hosts' public keys as the operators recorded them (`HOST KEY` per
        /// line, `#` comments; `loopguard fleet status` prints a host's key). Without it, the
        /// keys the hosts registered in the database are used.
        #[arg(long, requires = "fleet")]
        host_keys: Option<PathBuf>,
    },
    /// Sign a checkpoint over the log as it is now (Ed25519 over its size, chain head and
    /// Merkle root; also written at every session end).
    Checkpoint {
        #[command(flatten)]
        which: LogSelect,
    },
    /// Counts by decision, reason and kind, sessions, time span, checkpoints and integrity.
    Summary {
        #[command(flatten)]
        which: LogSelect,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// The whole log, its checkpoints, the public key and the verification result as one JSON
    /// document, to keep somewhere else.
    Export {
        #[command(flatten)]
        which: LogSelect,
        /// JSON output (the only format).
        #[arg(long)]
        json: bool,
    },
    /// Print the last events.
    Tail {
        #[command(flatten)]
        which: LogSelect,
        /// How many events.
        #[arg(short = 'n', long, default_value_t = 20)]
        lines: usize,
        /// One JSON event per line, as stored.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
#[group(multiple = false)]
pub struct LogSelect {
    /// A log file (default: the current workspace's log).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Every log in the state home (the break-glass log included).
    #[arg(long)]
    pub all: bool,
}

/// `loopguard hook`'s arguments.
#[derive(Args)]
pub struct HookArgs {
    /// The host whose protocol to speak.
    pub host: Host,
    /// Answer with a deny if no decision is made within this many milliseconds.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub deadline_ms: u64,
}

/// `loopguard selftest`'s arguments.
#[derive(Args)]
pub struct SelftestArgs {
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also play a fixed set of attacks against your effective policy in a throwaway home and
    /// workspace, run what the gate allows, and report every harm (refuses to run unless the
    /// real file system can be made read-only in a mount namespace of its own).
    #[arg(long)]
    pub adversary: bool,
}

/// `loopguard doctor`'s arguments.
#[derive(Args)]
pub struct DoctorArgs {
    /// Check this host's wiring (default: Claude Code).
    pub host: Option<Host>,
    /// Check every host found on this machine.
    #[arg(long, conflicts_with = "host")]
    pub all: bool,
}

/// `loopguard install`'s arguments.
#[derive(Args)]
pub struct InstallArgs {
    /// The host.
    #[arg(required_unless_present = "all")]
    pub host: Option<Host>,
    /// Every host found on this machine (its CLI on PATH or its configuration directory in
    /// HOME), each at user level.
    #[arg(long, conflicts_with_all = ["host", "project", "settings"])]
    pub all: bool,
    #[command(flatten)]
    pub target: InstallTarget,
    /// Print the resulting settings instead of writing them.
    #[arg(long)]
    pub dry_run: bool,
    /// Copilot CLI only: register the events PascalCase (`PreToolUse`…, Copilot names the event
    /// in its input) or camelCase (`preToolUse`…, the form GitHub documents; each command names
    /// its event). Default: the form already in the file, else pascal.
    #[arg(long, value_enum, conflicts_with = "all")]
    pub form: Option<CopilotFormArg>,
}

/// `install copilot --form`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CopilotFormArg {
    /// `PreToolUse`, `PostToolUse`, …
    Pascal,
    /// `preToolUse`, `postToolUse`, …
    Camel,
}

/// `loopguard scan`'s arguments.
#[derive(Args)]
pub struct ScanArgs {
    /// Files and directories to scan (`-` is stdin); the current directory by default.
    pub paths: Vec<PathBuf>,
    /// Scan the lines a git range adds (e.g. `main..HEAD`).
    #[arg(long, value_name = "RANGE", conflicts_with_all = ["staged", "paths"])]
    pub git_diff: Option<String>,
    /// Scan what is staged for the next commit.
    #[arg(long, conflicts_with = "paths")]
    pub staged: bool,
    /// Also scan files .gitignore excludes.
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: FormatArg,
    /// Accept the fingerprints in this file (`{"fingerprints": [...]}`).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write every current finding's fingerprint to this file (to accept them).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// A gitleaks configuration (default: `.gitleaks.toml` in the current directory, if any).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `loopguard preview`'s arguments.
#[derive(Args)]
pub struct PreviewArgs {
    /// A shell command to preview.
    #[arg(long, conflicts_with = "call")]
    pub command: Option<String>,
    /// A tool call as JSON (`{"tool_name": …, "tool_input": …}`), or `-` to read tool calls
    /// from stdin, one JSON object per line (previewed together, in order).
    #[arg(long)]
    pub call: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
    /// Time limit for a simulated command, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub timeout_ms: u64,
}

/// `loopguard approve`'s arguments.
#[derive(Args)]
pub struct ApproveArgs {
    /// The approving operator.
    #[arg(long, required_unless_present = "status")]
    pub operator: Option<String>,
    /// Why: recorded in the approval and the audit log.
    #[arg(long, required_unless_present = "status")]
    pub reason: Option<String>,
    /// Read the passphrase from stdin instead of the terminal.
    #[arg(long)]
    pub passphrase_stdin: bool,
    /// Only show whether the control plane still matches its approval (exit 1 on drift).
    #[arg(long)]
    pub status: bool,
}

/// `loopguard certify`'s arguments.
#[derive(Args)]
pub struct CertifyArgs {
    /// The commit a human reviewed.
    #[arg(long, required_unless_present = "check")]
    pub reviewed_head: Option<String>,
    /// A verify command, run with `bash -c` in the workspace (repeatable; all must pass).
    #[arg(long = "verify", required_unless_present = "check")]
    pub verify: Vec<String>,
    /// A folder where changes since the reviewed commit are allowed (repeatable).
    #[arg(long = "allow-dir")]
    pub allow_dirs: Vec<String>,
    /// The run being certified (default: the newest session in the audit log).
    #[arg(long)]
    pub run_id: Option<String>,
    /// The certifying operator.
    #[arg(long, required_unless_present = "check")]
    pub operator: Option<String>,
    /// Read the passphrase from stdin instead of the terminal.
    #[arg(long)]
    pub passphrase_stdin: bool,
    /// Re-check an existing certification: CERTIFIED, or BLOCKED with why (exit 1).
    #[arg(long)]
    pub check: bool,
}

/// `loopguard break-glass`'s arguments.
#[derive(Args)]
pub struct BreakGlassArgs {
    /// The operator(s) authorising it (two when the policy demands dual control).
    #[arg(long = "operator", required = true)]
    pub operators: Vec<String>,
    /// What is waived: `rule:CODE` or `path:GLOB` (repeatable).
    #[arg(long, required = true)]
    pub scope: Vec<String>,
    /// How long (e.g. 30m; default and maximum from the policy's `[break_glass]`).
    #[arg(long = "for")]
    pub duration: Option<String>,
    /// Why: recorded in the audit logs and STATE.md.
    #[arg(long)]
    pub reason: String,
    /// Read the passphrase(s) from stdin, one line each, instead of the terminal.
    #[arg(long)]
    pub passphrase_stdin: bool,
}

/// `loopguard exec`'s arguments.
#[derive(Args)]
pub struct ExecArgs {
    /// workspace-write (the workspace roots and temp) or read-only.
    #[arg(long, default_value = "workspace-write")]
    pub profile: String,
    /// Allow TCP connections and binds.
    #[arg(long)]
    pub net: bool,
    /// The workspace whose roots the command may write (absolute; default: the one around the
    /// current directory). The hook names it, so a host that runs the command in a directory
    /// of the agent's choosing cannot widen the sandbox.
    #[arg(long)]
    pub workspace: Option<std::path::PathBuf>,
    /// The command and its arguments (after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub argv: Vec<String>,
}

/// `loopguard fetch`'s arguments.
#[derive(Args)]
pub struct FetchArgs {
    /// The URL (http or https).
    pub url: String,
    /// Largest body accepted.
    #[arg(long, default_value_t = 10 << 20)]
    pub max_bytes: u64,
    /// Give up after this long (e.g. 30s).
    #[arg(long, default_value = "30s")]
    pub timeout: String,
}

/// `loopguard merge-check`'s arguments.
#[derive(Args)]
pub struct MergeCheckArgs {
    /// The range, e.g. `main..HEAD`.
    pub range: String,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `loopguard undo [--list] [--to STEP | --session ID] [--force]`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// List the workspace's steps (number, time, tool, what it touched) and change nothing.
    #[arg(long, conflicts_with_all = ["to", "session", "force"])]
    pub list: bool,
    /// Undo every step from STEP on, newest first (without it: the last step not undone yet).
    #[arg(long, value_name = "STEP", conflicts_with = "session")]
    pub to: Option<u64>,
    /// Undo every step from the first one of session ID on (later sessions' steps too: they
    /// were taken on top of it).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Restore even where files changed since the step (by the human or anything else).
    #[arg(long)]
    pub force: bool,
}
