//! `loopguard`: the thin binary. Flags are parsed here; everything else lives in the libraries.

use clap::{Args, Parser, Subcommand, ValueEnum};
use loopguard::hosts::{self as hook, HookOutcome};
use loopguard::state::{self, Env};
use loopguard_core::Policy;
use loopguard_core::policy::{LayerKind, diag};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "loopguard", version, about = "Fail-closed safety gate for autonomous coding agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Answer a host's hook call (reads the event on stdin).
    Hook {
        /// The host whose protocol to speak.
        host: Host,
        /// Answer with a deny if no decision is made within this many milliseconds.
        #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(10..=60_000))]
        deadline_ms: u64,
    },
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
    Install {
        /// The host.
        host: Host,
        #[command(flatten)]
        target: InstallTarget,
        /// Print the resulting settings instead of writing them.
        #[arg(long)]
        dry_run: bool,
    },
    /// Scan files, stdin or a git diff for secrets (exit 1 when something new is found).
    Scan {
        /// Files and directories to scan (`-` is stdin); the current directory by default.
        paths: Vec<PathBuf>,
        /// Scan the lines a git range adds (e.g. `main..HEAD`).
        #[arg(long, value_name = "RANGE", conflicts_with_all = ["staged", "paths"])]
        git_diff: Option<String>,
        /// Scan what is staged for the next commit.
        #[arg(long, conflicts_with = "paths")]
        staged: bool,
        /// Also scan files .gitignore excludes.
        #[arg(long)]
        all: bool,
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: FormatArg,
        /// Accept the fingerprints in this file (`{"fingerprints": [...]}`).
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
        /// Write every current finding's fingerprint to this file (to accept them).
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
        /// A gitleaks configuration (default: `.gitleaks.toml` in the current directory, if any).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Check that loopguard is installed and working here.
    Doctor,
    /// Dry-run preview: what a tool call would do — a Write/Edit/MultiEdit's diff, or a command
    /// run in a copy-on-write sandbox of the workspace (created, modified, deleted files with
    /// diffs; writes outside the workspace blocked; no network). The workspace is untouched.
    Preview {
        /// A shell command to preview.
        #[arg(long, conflicts_with = "call")]
        command: Option<String>,
        /// A tool call as JSON (`{"tool_name": …, "tool_input": …}`), or `-` to read tool calls
        /// from stdin, one JSON object per line (previewed together, in order).
        #[arg(long)]
        call: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
        /// Time limit for a simulated command, in milliseconds.
        #[arg(long, default_value_t = 10_000)]
        timeout_ms: u64,
    },
    /// Approve the control plane's hashes (operator only): policy files, the loopguard binary and
    /// hook settings, `.claude/settings*.json`, `.mcp.json`, `.codex/`, `.gemini/`. Any later
    /// change denies writes and trips the breaker until approved again.
    Approve {
        /// The approving operator.
        #[arg(long, required_unless_present = "status")]
        operator: Option<String>,
        /// Why: recorded in the approval and the audit log.
        #[arg(long, required_unless_present = "status")]
        reason: Option<String>,
        /// Read the passphrase from stdin instead of the terminal.
        #[arg(long)]
        passphrase_stdin: bool,
        /// Only show whether the control plane still matches its approval (exit 1 on drift).
        #[arg(long)]
        status: bool,
    },
    /// The success gate: re-run the verify commands, confirm nothing changed since the reviewed
    /// commit (outside an allowed folder), and write a signed certification (operator only).
    Certify {
        /// The commit a human reviewed.
        #[arg(long, required_unless_present = "check")]
        reviewed_head: Option<String>,
        /// A verify command, run with `bash -c` in the workspace (repeatable; all must pass).
        #[arg(long = "verify", required_unless_present = "check")]
        verify: Vec<String>,
        /// A folder where changes since the reviewed commit are allowed (repeatable).
        #[arg(long = "allow-dir")]
        allow_dirs: Vec<String>,
        /// The run being certified (default: the newest session in the audit log).
        #[arg(long)]
        run_id: Option<String>,
        /// The certifying operator.
        #[arg(long, required_unless_present = "check")]
        operator: Option<String>,
        /// Read the passphrase from stdin instead of the terminal.
        #[arg(long)]
        passphrase_stdin: bool,
        /// Re-check an existing certification: CERTIFIED, or BLOCKED with why (exit 1).
        #[arg(long)]
        check: bool,
    },
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
    BreakGlass {
        /// The operator(s) authorising it (two when the policy demands dual control).
        #[arg(long = "operator", required = true)]
        operators: Vec<String>,
        /// What is waived: `rule:CODE` or `path:GLOB` (repeatable).
        #[arg(long, required = true)]
        scope: Vec<String>,
        /// How long (e.g. 30m; default and maximum from the policy's [break_glass]).
        #[arg(long = "for")]
        duration: Option<String>,
        /// Why: recorded in the audit logs and STATE.md.
        #[arg(long)]
        reason: String,
        /// Read the passphrase(s) from stdin, one line each, instead of the terminal.
        #[arg(long)]
        passphrase_stdin: bool,
    },
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
    Exec {
        /// workspace-write (the workspace roots and temp) or read-only.
        #[arg(long, default_value = "workspace-write")]
        profile: String,
        /// Allow TCP connections and binds.
        #[arg(long)]
        net: bool,
        /// The command and its arguments (after `--`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        argv: Vec<String>,
    },
    /// Fetch a URL safely: each host resolved once, every address checked, the connection pinned
    /// to it, every redirect hop checked again, size and time capped. The body goes to stdout.
    Fetch {
        /// The URL (http or https).
        url: String,
        /// Largest body accepted.
        #[arg(long, default_value_t = 10 << 20)]
        max_bytes: u64,
        /// Give up after this long (e.g. 30s).
        #[arg(long, default_value = "30s")]
        timeout: String,
    },
    /// Offline OSV advisories: import a snapshot, check a lockfile.
    Advisories {
        #[command(subcommand)]
        command: AdvisoriesCommand,
    },
    /// Whether a change (`base..head`) is eligible for an automatic merge (exit 1 when not).
    MergeCheck {
        /// The range, e.g. `main..HEAD`.
        range: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Replay a recorded agent session through the gate (needs no setup).
    Demo,
}

#[derive(Clone, Copy, ValueEnum)]
enum Host {
    /// Claude Code.
    ClaudeCode,
}

#[derive(Args)]
#[group(multiple = false)]
struct InstallTarget {
    /// The project's `.claude/settings.json` (the default).
    #[arg(long)]
    project: bool,
    /// The user's `~/.claude/settings.json`.
    #[arg(long)]
    user: bool,
    /// An explicit settings file.
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,
}

#[derive(Subcommand)]
enum PolicyCommand {
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
enum FormatArg {
    Human,
    Json,
    Sarif,
}

#[derive(Subcommand)]
enum BreakerCommand {
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
enum AdvisoriesCommand {
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
enum YoloCommand {
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
enum GrantCommand {
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
    List,
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
enum OperatorCommand {
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

fn secrets(stdin: bool) -> loopguard::operator::Secrets {
    if stdin {
        loopguard::operator::Secrets::Stdin(Box::new(std::io::BufReader::new(std::io::stdin())))
    } else {
        loopguard::operator::Secrets::Terminal
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum LayerArg {
    User,
    Project,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Verify the hash chain, the head anchor and every signed checkpoint; names the first
    /// problem (exit 1 when any log is tampered with).
    Verify {
        #[command(flatten)]
        which: LogSelect,
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
struct LogSelect {
    /// A log file (default: the current workspace's log).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Every log in the state home (the break-glass log included).
    #[arg(long)]
    all: bool,
}

fn main() -> ExitCode {
    // The hook is parsed by hand first: it must answer even if flag parsing would exit(1).
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("hook") {
        return hook_main(&args);
    }
    if args.get(1).map(String::as_str) == Some("__exec-inner") {
        return exec_inner(&args[2..]);
    }
    if args.get(1).map(String::as_str) == Some("__preview-inner") {
        // WORKSPACE UPPER WORK TMP -- CMD…
        let a = &args[2..];
        if a.len() < 6 || a[4] != "--" {
            eprintln!("loopguard preview: bad internal arguments");
            return ExitCode::from(125);
        }
        let p = |i: usize| PathBuf::from(&a[i]);
        return match loopguard::exec::preview_inner(&p(0), &p(1), &p(2), &p(3), &a[5..]) {
            Ok(never) => match never {},
            Err(e) => {
                eprintln!("loopguard preview: {e}");
                ExitCode::from(125)
            }
        };
    }
    // `exec` wraps every Bash call the hook allows: its usual form is read by hand (building
    // clap's parser for the whole CLI costs about 0.3 ms); anything else goes to clap.
    let fast = (args.get(1).map(String::as_str) == Some("exec")).then(|| exec_args(&args[2..])).flatten();
    let cli = match fast {
        Some(command) => Cli { command },
        None => Cli::parse(),
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("loopguard: error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `loopguard hook …`: every failure, even of its own flags, ends in a deny with exit 2. The
/// arguments are read by hand: building clap's parser for the whole CLI costs more than a
/// decision, and this runs on every tool call.
fn hook_main(args: &[String]) -> ExitCode {
    std::panic::set_hook(Box::new(|_| {}));
    if args.iter().skip(2).any(|a| a == "--help" || a == "-h") {
        let _ = Cli::try_parse_from(args).map_err(|e| e.print());
        return ExitCode::SUCCESS;
    }
    let outcome = match parse_hook_args(&args[2..]) {
        Some(deadline_ms) => {
            let deadline = Duration::from_millis(deadline_ms);
            match hook::run(hook::claude_code::ClaudeCode, std::io::stdin(), Env::from_process(), deadline) {
                Some(outcome) => outcome,
                None => hook::wait_for_watchdog(),
            }
        }
        None => hook::claude_code::fail(&loopguard::engine::HookError::Usage(
            "the loopguard hook command line is invalid (expected `loopguard hook claude-code [--deadline-ms N]`, N from 10 to 60000); denied.".into(),
        ).decision()),
    };
    emit(&outcome)
}

/// The sandboxed half of `loopguard exec` (internal): `--profile P [--net] [--root R]… -- CMD…`.
fn exec_inner(args: &[String]) -> ExitCode {
    let mut profile = None;
    let (mut net, mut roots, mut tmp, mut ask) = (false, Vec::new(), None, false);
    let mut writable = Vec::new();
    let mut mounts = loopguard::exec::Mounts::default();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--profile" => {
                profile = args.get(i + 1).and_then(|p| loopguard::exec::Profile::parse(p));
                i += 2;
            }
            "--net" => {
                net = true;
                i += 1;
            }
            "--unenforced-ask" => {
                ask = true;
                i += 1;
            }
            "--root" => {
                roots.extend(args.get(i + 1).map(PathBuf::from));
                i += 2;
            }
            "--tmp" => {
                tmp = args.get(i + 1).map(PathBuf::from);
                i += 2;
            }
            "--write" => {
                writable.extend(args.get(i + 1).map(PathBuf::from));
                i += 2;
            }
            "--hide" => {
                mounts.hide.extend(args.get(i + 1).map(PathBuf::from));
                i += 2;
            }
            "--ro" => {
                mounts.read_only.extend(args.get(i + 1).map(PathBuf::from));
                i += 2;
            }
            "--" => break,
            _ => {
                eprintln!("loopguard exec: bad internal arguments");
                return ExitCode::from(126);
            }
        }
    }
    let Some(profile) = profile else {
        eprintln!("loopguard exec: bad internal arguments");
        return ExitCode::from(126);
    };
    match loopguard::exec::inner(
        profile,
        net,
        &roots,
        tmp.as_deref(),
        &writable,
        &mounts,
        ask,
        args.get(i + 1..).unwrap_or(&[]),
    ) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("loopguard exec: {e}");
            ExitCode::from(126)
        }
    }
}

/// `[--profile P | --profile=P] [--net] -- CMD…` → `Command::Exec`; `None` for any other form
/// (help, a repeated flag, no `--`), which clap then parses or rejects.
fn exec_args(args: &[String]) -> Option<Command> {
    let (mut profile, mut net) = (None, false);
    let mut i = 0;
    loop {
        let a = args.get(i)?.as_str();
        match a {
            "--" => break,
            "--net" if !net => net = true,
            "--profile" if profile.is_none() => {
                i += 1;
                profile = Some(args.get(i)?.clone());
            }
            _ => match a.strip_prefix("--profile=") {
                Some(p) if profile.is_none() => profile = Some(p.to_string()),
                _ => return None,
            },
        }
        i += 1;
    }
    let argv = args[i + 1..].to_vec();
    if argv.is_empty() {
        return None;
    }
    Some(Command::Exec { profile: profile.unwrap_or_else(|| "workspace-write".into()), net, argv })
}

/// `claude-code [--deadline-ms N | --deadline-ms=N]` → the deadline in ms.
fn parse_hook_args(args: &[String]) -> Option<u64> {
    let (host, rest) = args.split_first()?;
    if host != "claude-code" {
        return None;
    }
    let value = match rest {
        [] => return Some(hook::DEFAULT_DEADLINE.as_millis() as u64),
        [flag, v] if flag == "--deadline-ms" => v.as_str(),
        [flag] => flag.strip_prefix("--deadline-ms=")?,
        _ => return None,
    };
    value.parse().ok().filter(|ms| (10..=60_000).contains(ms))
}

fn emit(o: &HookOutcome) -> ExitCode {
    hook::write_outcome(o);
    ExitCode::from(o.exit.code())
}

fn cwd() -> Result<PathBuf, String> {
    std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    let env = Env::from_process();
    match cli.command {
        Command::Hook { .. } => Ok(ExitCode::from(2)),
        Command::Policy { command: PolicyCommand::Check { file, layer } } => policy_check(&env, file, layer),
        Command::Policy { command: PolicyCommand::Packs { json, markdown } } => {
            if markdown {
                print!("{}", loopguard_core::packs::markdown());
                return Ok(ExitCode::SUCCESS);
            }
            let rows = loopguard::packs_report::rows(&effective_policy(&env)?);
            if json {
                println!("{}", serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?);
            } else {
                print!("{}", loopguard::packs_report::human(&rows));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Policy { command: PolicyCommand::Show { effective: _ } } => {
            print!("{}", effective_policy(&env)?.to_effective_toml());
            Ok(ExitCode::SUCCESS)
        }
        Command::Audit { command } => audit(&env, command),
        Command::Install { host: Host::ClaudeCode, target, dry_run } => {
            let path = match (target.user, target.settings) {
                (_, Some(p)) => p,
                (true, None) => env.home.clone().ok_or("HOME is not set")?.join(".claude/settings.json"),
                (false, None) => cwd()?.join(".claude/settings.json"),
            };
            let exe = std::env::current_exe().map_err(|e| format!("cannot find the loopguard binary: {e}"))?;
            let report = loopguard::install::install_claude_code(&path, &exe, dry_run)?;
            print!("{report}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Scan { paths, git_diff, staged, all, format, baseline, write_baseline, config } => {
            use loopguard::scan::{Format, Source};
            let source = match (git_diff, staged) {
                (Some(r), _) => Source::GitDiff(r),
                (None, true) => Source::Staged,
                (None, false) => Source::Paths(if paths.is_empty() { vec![PathBuf::from(".")] } else { paths }),
            };
            let accepted = match &baseline {
                Some(p) => loopguard::scan::read_baseline(p)?,
                None => Default::default(),
            };
            let scanner = loopguard::scan::scanner(config.as_deref())?;
            let report = loopguard::scan::run(&source, all, &accepted, scanner)?;
            if let Some(p) = write_baseline {
                std::fs::write(&p, loopguard::scan::baseline_json(&report))
                    .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            }
            let format = match format {
                FormatArg::Human => Format::Human,
                FormatArg::Json => Format::Json,
                FormatArg::Sarif => Format::Sarif,
            };
            print!("{}", loopguard::scan::render(&report, format));
            Ok(if report.findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Breaker { command } => {
            use loopguard::control;
            let t = control::Target::of(&env, &cwd()?)?;
            match command {
                BreakerCommand::Status { json } => {
                    let (out, tripped) = control::status(&env, &t, json)?;
                    print!("{out}");
                    Ok(if tripped { ExitCode::from(1) } else { ExitCode::SUCCESS })
                }
                BreakerCommand::Check => {
                    let (_, tripped) = control::status(&env, &t, true)?;
                    println!("{}", if tripped { "tripped" } else { "ok" });
                    Ok(if tripped { ExitCode::from(1) } else { ExitCode::SUCCESS })
                }
                BreakerCommand::Reset { operator, reason, trigger, passphrase_stdin } => {
                    let mut s = secrets(passphrase_stdin);
                    print!("{}", control::reset(&env, &t, &operator, &reason, trigger.as_deref(), &mut s)?);
                    Ok(ExitCode::SUCCESS)
                }
                BreakerCommand::Trip { to, reason } => {
                    print!("{}", control::trip(&t, &to, &reason)?);
                    Ok(ExitCode::SUCCESS)
                }
                BreakerCommand::Flush { quiet } => {
                    let policy = loopguard::effective::load(&env, &t.workspace)
                        .map_err(|e| format!("the policy does not load: {e}"))?;
                    let base =
                        std::env::var("LOOPGUARD_WEBHOOK_BACKOFF_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
                    let r = loopguard::effects::flush(&env, policy.breaker().webhook_url.as_deref(), base)?;
                    if !quiet {
                        println!(
                            "{} trip effect(s) carried out, {} webhook event(s) delivered, {} given up",
                            r.effects, r.delivered, r.failed
                        );
                    }
                    Ok(if r.failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
                }
                BreakerCommand::WebhookKey => {
                    println!("{}", loopguard::effects::webhook_key(&t.state)?);
                    Ok(ExitCode::SUCCESS)
                }
            }
        }
        Command::Operator { command: OperatorCommand::Init { name, by, passphrase_stdin } } => {
            let t = loopguard::control::Target::of(&env, &cwd()?)?;
            print!("{}", loopguard::control::operator_init(&t, &name, by.as_deref(), &mut secrets(passphrase_stdin))?);
            Ok(ExitCode::SUCCESS)
        }
        Command::BreakGlass { operators, scope, duration, reason, passphrase_stdin } => {
            let t = loopguard::control::Target::of(&env, &cwd()?)?;
            let mut s = secrets(passphrase_stdin);
            print!(
                "{}",
                loopguard::control::break_glass(&env, &t, &operators, &scope, duration.as_deref(), &reason, &mut s)?
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Preview { command, call, json, timeout_ms } => {
            let workspace = env.workspace_for(&cwd()?);
            let ctx = loopguard::preview::Ctx {
                workspace: &workspace,
                home: env.home.as_deref(),
                timeout: std::time::Duration::from_millis(timeout_ms),
            };
            let calls: Vec<(String, serde_json::Value)> = match (command, call) {
                (Some(c), None) => vec![("Bash".into(), serde_json::json!({ "command": c }))],
                (None, Some(c)) => {
                    let text = if c == "-" {
                        let mut s = String::new();
                        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| e.to_string())?;
                        s
                    } else {
                        c
                    };
                    text.lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(|l| {
                            let v: serde_json::Value =
                                serde_json::from_str(l).map_err(|e| format!("not a JSON tool call: {e}"))?;
                            let tool = v.get("tool_name").or_else(|| v.get("tool")).and_then(|t| t.as_str());
                            let input = v.get("tool_input").or_else(|| v.get("input"));
                            match (tool, input) {
                                (Some(t), Some(i)) => Ok((t.to_string(), i.clone())),
                                _ => Err("a tool call needs `tool_name` and `tool_input`".to_string()),
                            }
                        })
                        .collect::<Result<_, String>>()?
                }
                _ => return Err("name what to preview: --command CMD or --call JSON (or --call - for stdin)".into()),
            };
            let results = loopguard::preview::preview_batch(&calls, &ctx);
            if json {
                let v: Vec<serde_json::Value> = results
                    .iter()
                    .map(|r| match r {
                        Ok(p) => serde_json::to_value(p).unwrap_or_default(),
                        Err(e) => serde_json::json!({ "error": e }),
                    })
                    .collect();
                let v = if v.len() == 1 { v[0].clone() } else { serde_json::Value::Array(v) };
                println!("{v:#}");
            } else {
                let color = std::io::IsTerminal::is_terminal(&std::io::stdout());
                let text = if results.len() == 1 {
                    match &results[0] {
                        Ok(p) => loopguard::preview::display_preview(p, color),
                        Err(e) => return Err(e.clone()),
                    }
                } else {
                    loopguard::preview::display_batch_preview(&results, color)
                };
                loopguard::preview::page(&text, color);
            }
            Ok(if results.iter().all(Result::is_ok) { ExitCode::SUCCESS } else { ExitCode::from(2) })
        }
        Command::Approve { operator, reason, passphrase_stdin, status } => {
            let t = loopguard::control::Target::of(&env, &cwd()?)?;
            if status {
                let (out, ok) = loopguard::control::approval_status(&env, &t)?;
                print!("{out}");
                return Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) });
            }
            let (operator, reason) = (operator.unwrap_or_default(), reason.unwrap_or_default());
            print!("{}", loopguard::control::approve(&env, &t, &operator, &reason, &mut secrets(passphrase_stdin))?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Certify { reviewed_head, verify, allow_dirs, run_id, operator, passphrase_stdin, check } => {
            let t = loopguard::control::Target::of(&env, &cwd()?)?;
            let (out, ok) = if check {
                loopguard::certify::check(&env, &t)?
            } else {
                let req = loopguard::certify::Request {
                    reviewed_head: reviewed_head.unwrap_or_default(),
                    verify,
                    allow_dirs,
                    run_id,
                    operator: operator.unwrap_or_default(),
                };
                loopguard::certify::certify(&env, &t, &req, &mut secrets(passphrase_stdin))?
            };
            print!("{out}");
            Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Advisories { command } => {
            let state = env.state_home()?;
            match command {
                AdvisoriesCommand::Import { source } => {
                    let (records, packages, skipped) = loopguard::advisories::import(&state, &source)?;
                    println!("imported {records} advisories for {packages} packages");
                    if skipped > 0 {
                        println!("skipped {skipped} records of ecosystems loopguard does not check");
                    }
                    Ok(ExitCode::SUCCESS)
                }
                AdvisoriesCommand::Check { files, json } => {
                    let files = if files.is_empty() { loopguard::advisories::default_files(&cwd()?) } else { files };
                    let workspace = env.workspace_for(&cwd()?);
                    let policy = loopguard::effective::load(&env, &workspace)
                        .map_err(|e| format!("the policy does not load: {e}"))?;
                    let (out, found) = loopguard::advisories::check_files(&state, &files, json, policy.advisories())?;
                    print!("{out}");
                    Ok(if found { ExitCode::from(1) } else { ExitCode::SUCCESS })
                }
            }
        }
        Command::Yolo { command } => {
            let t = loopguard::control::Target::of(&env, &cwd()?)?;
            let out = match command {
                YoloCommand::On { operator, duration, reason, passphrase_stdin } => loopguard::control::yolo_on(
                    &env,
                    &t,
                    &operator,
                    &duration,
                    &reason,
                    &mut secrets(passphrase_stdin),
                )?,
                YoloCommand::Off => loopguard::control::yolo_off(&t)?,
            };
            print!("{out}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Grant { command } => {
            use loopguard::control;
            let t = control::Target::of(&env, &cwd()?)?;
            let out = match command {
                GrantCommand::Add {
                    operator,
                    tool,
                    resource,
                    duration,
                    session,
                    reason,
                    allow_broad,
                    passphrase_stdin,
                } => control::grant_add(
                    &t,
                    &operator,
                    &tool,
                    resource.as_deref(),
                    duration.as_deref(),
                    session.as_deref(),
                    &reason,
                    allow_broad,
                    &mut secrets(passphrase_stdin),
                )?,
                GrantCommand::List => control::grant_list(&env, &t)?,
                GrantCommand::Revoke { id, operator, passphrase_stdin } => {
                    control::grant_revoke(&t, &operator, id, &mut secrets(passphrase_stdin))?
                }
            };
            print!("{out}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Exec { profile, net, argv } => {
            let profile = loopguard::exec::Profile::parse(&profile)
                .ok_or_else(|| format!("--profile must be workspace-write or read-only, found `{profile}`"))?;
            let workspace = env.workspace_for(&cwd()?);
            let policy =
                loopguard::effective::load(&env, &workspace).map_err(|e| format!("the policy does not load: {e}"))?;
            let revoked = env
                .state_home()
                .ok()
                .and_then(|s| loopguard::hot::read(&s, &state::workspace_key(&workspace)).ok())
                .is_some_and(|d| d.ws.revoked.is_some());
            let roots = loopguard::exec::roots(&workspace, policy.extra_roots());
            let (names, file) = policy.exec_canaries();
            let canaries = if names.is_empty() && !file {
                Vec::new()
            } else {
                let state = env.state_home()?;
                loopguard::exec::plant_canaries(
                    &state,
                    &state::workspace_key(&workspace),
                    names,
                    file,
                    loopguard::effects::now(),
                )?
            };
            let mut mounts =
                loopguard::exec::Mounts::default_profile(env.home.as_deref(), &roots, env.state_home().ok().as_deref());
            mounts.hide.extend(env.user_policy().and_then(|p| p.parent().map(std::path::Path::to_path_buf)));
            mounts.settle(&roots);
            let caches = loopguard::exec::caches(env.home.as_deref());
            let code = loopguard::exec::run(
                profile,
                net,
                &roots,
                &caches,
                &mounts,
                policy.exec_env_allow(),
                revoked,
                canaries,
                policy.exec_unenforced_ask(),
                &argv,
            )?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        Command::Fetch { url, max_bytes, timeout } => {
            let secs = loopguard_core::policy::parse_duration(&timeout)
                .ok_or_else(|| format!("--timeout `{timeout}` is not a duration like 30s"))?;
            let opts = loopguard::fetch::FetchOptions {
                max_bytes,
                timeout: Duration::from_secs(secs.max(1)),
                ..Default::default()
            };
            let got = loopguard::fetch::fetch(&url, &opts, std::sync::Arc::new(loopguard::fetch::SystemLookup))?;
            use std::io::Write;
            std::io::stdout().write_all(&got.body).map_err(|e| format!("cannot write the body: {e}"))?;
            eprintln!("loopguard fetch: {} {} ({} bytes)", got.status, got.url, got.body.len());
            Ok(if (200..300).contains(&got.status) { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::MergeCheck { range, json } => {
            let repo = state::git_toplevel(&cwd()?).ok_or("not inside a git repository")?;
            let policy =
                loopguard::effective::load(&env, &repo).map_err(|e| format!("the policy does not load: {e}"))?;
            let report = loopguard::merge_check::run(&repo, &range, &policy, env.home.as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?);
            } else {
                print!("{}", loopguard::merge_check::render(&report));
            }
            Ok(if report.eligible { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Doctor => {
            let report = loopguard::doctor::run(&env, &cwd()?);
            print!("{}", report.render());
            Ok(if report.ok() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Demo => {
            let mut out = std::io::stdout().lock();
            let ok = loopguard::demo::run(&mut out).map_err(|e| format!("demo failed: {e}"))?;
            Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}

/// The policy as the hook sees it for the current directory: an approved, undrifted project
/// policy may loosen.
fn effective_policy(env: &Env) -> Result<Policy, String> {
    let workspace = env.workspace_for(&cwd()?);
    loopguard::effective::load(env, &workspace).map_err(|e| format!("the policy does not load:\n{e}"))
}

fn policy_check(env: &Env, file: Option<PathBuf>, layer: Option<LayerArg>) -> Result<ExitCode, String> {
    let files: Vec<(LayerKind, PathBuf)> = match file {
        Some(f) => {
            let kind = match layer {
                Some(LayerArg::User) => LayerKind::User,
                Some(LayerArg::Project) => LayerKind::Project,
                None if f.ends_with(".loopguard/policy.toml") => LayerKind::Project,
                None => LayerKind::User,
            };
            if !f.exists() {
                return Err(format!("{} does not exist", f.display()));
            }
            vec![(kind, f)]
        }
        None => {
            let workspace = env.workspace_for(&cwd()?);
            let mut v = Vec::new();
            if let Some(u) = env.user_policy() {
                v.push((LayerKind::User, u));
            }
            v.push((LayerKind::Project, state::project_policy(&workspace)));
            v
        }
    };
    let mut texts = Vec::new();
    for (kind, path) in &files {
        match std::fs::read_to_string(path) {
            Ok(t) => texts.push((*kind, path.clone(), t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        }
    }
    match Policy::from_layers(&texts) {
        Ok(policy) => {
            for (kind, path, _) in &texts {
                println!("ok: {} ({} layer)", path.display(), kind.as_str());
            }
            if texts.is_empty() {
                println!("ok: no policy files; the built-in policy applies");
            }
            let grants =
                loopguard_core::permissions::PermissionStore { grants: policy.grants().to_vec(), revoked_at: None };
            for w in grants.warnings() {
                println!("warning: {w}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let sources: Vec<(PathBuf, String)> = texts.into_iter().map(|(_, p, t)| (p, t)).collect();
            eprint!("{}", diag::render(&e, &sources));
            eprintln!(
                "{} problem(s); while the policy does not load, the hook denies every call.",
                e.diagnostics.len()
            );
            Ok(ExitCode::from(1))
        }
    }
}

fn logs(env: &Env, which: &LogSelect) -> Result<Vec<loopguard_audit::AuditLog>, String> {
    if let Some(p) = &which.log {
        return Ok(vec![loopguard_audit::AuditLog::new(p)]);
    }
    let home = env.state_home()?;
    if which.all {
        let dir = home.join("audit");
        let mut v: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
        };
        v.sort();
        let bg = home.join("break-glass.jsonl");
        if bg.exists() {
            v.push(bg);
        }
        return Ok(v.into_iter().map(loopguard_audit::AuditLog::new).collect());
    }
    Ok(vec![state::audit_log(&home, &env.workspace_for(&cwd()?))])
}

fn audit(env: &Env, command: AuditCommand) -> Result<ExitCode, String> {
    match command {
        AuditCommand::Verify { which } => {
            let state = env.state_home()?;
            let mut all_ok = true;
            let logs = logs(env, &which)?;
            if logs.is_empty() {
                println!("no audit logs");
            }
            for log in logs {
                let (line, ok) = loopguard::audit_cli::verify(&state, &log)?;
                println!("{line}");
                all_ok &= ok;
            }
            Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        AuditCommand::Checkpoint { which } => {
            let state = env.state_home()?;
            for log in logs(env, &which)? {
                println!("{}", loopguard::audit_cli::checkpoint(&state, &log)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Summary { which, json } => {
            let state = env.state_home()?;
            for log in logs(env, &which)? {
                print!("{}", loopguard::audit_cli::summary(&state, &log, json)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Export { which, json: _ } => {
            let state = env.state_home()?;
            for log in logs(env, &which)? {
                print!("{}", loopguard::audit_cli::export(&state, &log)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Tail { which, lines, json } => {
            for log in logs(env, &which)? {
                for ev in log.tail(lines).map_err(|e| e.to_string())? {
                    if json {
                        println!("{}", ev.to_line());
                    } else {
                        println!("{}", loopguard::demo::describe_event(&ev));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cli, Command, exec_args, parse_hook_args};
    use clap::Parser;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hook_arguments() {
        assert_eq!(parse_hook_args(&args(&["claude-code"])), Some(2000));
        assert_eq!(parse_hook_args(&args(&["claude-code", "--deadline-ms", "500"])), Some(500));
        assert_eq!(parse_hook_args(&args(&["claude-code", "--deadline-ms=750"])), Some(750));
        for bad in [
            &[][..],
            &["codex"],
            &["claude-code", "--deadline-ms"],
            &["claude-code", "--deadline-ms", "5"],
            &["claude-code", "--deadline-ms", "x"],
            &["claude-code", "extra"],
            &["claude-code", "--deadline-ms", "99999999"],
        ] {
            assert_eq!(parse_hook_args(&args(bad)), None, "{bad:?}");
        }
    }

    /// The hand parser for `exec` reads exactly what clap would, and hands every other form to it.
    #[test]
    fn exec_arguments_read_by_hand_agree_with_clap() {
        let fields = |c: Command| match c {
            Command::Exec { profile, net, argv } => Some((profile, net, argv)),
            _ => None,
        };
        let cases: &[&[&str]] = &[
            &["--", "true"],
            &["--net", "--", "bash", "-c", "echo --net"],
            &["--profile", "read-only", "--", "ls", "-la"],
            &["--profile=read-only", "--net", "--", "x", "--", "y"],
            &["--net", "--profile", "workspace-write", "--", "--profile"],
        ];
        for case in cases {
            let fast = exec_args(&args(case)).and_then(fields).unwrap_or_else(|| panic!("not read by hand: {case:?}"));
            let mut full = vec!["loopguard", "exec"];
            full.extend_from_slice(case);
            let clap = Cli::try_parse_from(full).ok().and_then(|c| fields(c.command));
            assert_eq!(Some(fast), clap, "{case:?}");
        }
        for other in [
            &[][..],
            &["--"],
            &["--help"],
            &["true"],
            &["--net", "--net", "--", "true"],
            &["--profile"],
            &["--profile", "a", "--profile", "b", "--", "true"],
            &["--verbose", "--", "true"],
        ] {
            assert!(exec_args(&args(other)).is_none(), "{other:?}");
        }
    }
}
