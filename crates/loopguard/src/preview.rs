//! Dry-run previews: what a tool call would really do, from the tool's own simulation rather than
//! a description. Write / Edit / MultiEdit: the unified diff against the current file. Shell
//! commands: run in a copy-on-write overlay of the workspace (user + mount + network namespaces,
//! overlayfs, Landlock; see `exec::preview_inner`), then read the overlay's upper layer for the
//! files created, modified and deleted — the real workspace is untouched. Writes the analysis
//! predicts outside the workspace are reported as blocked (Landlock refuses them in the
//! simulation, the gate refuses them for real); network use is reported from the analysis (the
//! simulation has none). When the simulation cannot run, the static analysis is shown instead,
//! labelled as a prediction.

use loopguard_core::checks::paths::PathValidator;
use loopguard_core::checks::shell;
use loopguard_core::{Action, Change};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Variables that point programs at daemons' sockets (agents, container engines, session
/// buses): a preview must not reach a daemon that would act for real.
const SOCKET_VARS: &[&str] = &[
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "WAYLAND_DISPLAY",
    "DISPLAY",
];

/// Output kept from a simulated command, at most.
const MAX_OUTPUT: usize = 16 << 10;
/// Files larger than this are not diffed.
const MAX_DIFF_BYTES: u64 = 256 << 10;
/// Lines of diff kept per file.
const MAX_DIFF_LINES: usize = 400;

/// What one file would go through.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileChange {
    /// Relative to the workspace (absolute when outside it).
    pub path: String,
    /// `created`, `modified` or `deleted`.
    pub change: &'static str,
    /// Unified diff (text files up to 256 KiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How the preview was obtained.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Method {
    /// The edit computed against the current file.
    Computed,
    /// The command ran in the copy-on-write sandbox.
    Simulated {
        /// Its exit code (`None`: killed at the time limit or by a signal).
        exit_code: Option<i32>,
        /// It was stopped at the time limit.
        timed_out: bool,
        /// Milliseconds it ran.
        millis: u64,
    },
    /// The simulation was impossible: the static analysis' prediction.
    Predicted {
        /// Why it could not be simulated.
        why: String,
    },
}

/// A dry-run preview of one tool call.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DryRunPreview {
    /// The tool.
    pub tool: String,
    /// What the call is (the command, or the file).
    pub target: String,
    /// How this was found.
    #[serde(flatten)]
    pub method: Method,
    /// Files created, modified, deleted (in the workspace).
    pub changes: Vec<FileChange>,
    /// Writes outside the workspace: blocked.
    pub blocked: Vec<String>,
    /// Network use the analysis predicts (the simulation runs without network).
    pub network: bool,
    /// Files under `.git/` the command changed (git's own bookkeeping: index, refs, objects),
    /// counted rather than listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub git_metadata: usize,
    /// The command's output in the simulation (truncated, secrets redacted).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub output: String,
}

impl DryRunPreview {
    /// One line: what would happen.
    pub fn summary(&self) -> String {
        let count = |c: &str| self.changes.iter().filter(|f| f.change == c).count();
        let mut parts = Vec::new();
        for (c, word) in [("created", "created"), ("modified", "modified"), ("deleted", "deleted")] {
            let n = count(c);
            if n > 0 {
                let names: Vec<&str> =
                    self.changes.iter().filter(|f| f.change == c).take(3).map(|f| f.path.as_str()).collect();
                let more = if n > 3 { format!(" +{}", n - 3) } else { String::new() };
                parts.push(format!("{n} {word} ({}{more})", names.join(", ")));
            }
        }
        if parts.is_empty() {
            parts.push("no file changes in the workspace".into());
        }
        if !self.blocked.is_empty() {
            parts.push(format!("writes outside the workspace blocked: {}", self.blocked.join(", ")));
        }
        if self.git_metadata > 0 {
            parts.push(format!("git metadata updated ({} files under .git/)", self.git_metadata));
        }
        if self.network {
            parts.push("uses the network".into());
        }
        let how = match &self.method {
            Method::Computed => "diff".to_string(),
            Method::Simulated { timed_out: true, .. } => "simulated, stopped at the time limit".to_string(),
            Method::Simulated { exit_code, .. } => {
                format!("simulated, exit {}", exit_code.map_or("?".to_string(), |c| c.to_string()))
            }
            Method::Predicted { .. } => "predicted, not simulated".to_string(),
        };
        format!("{} ({how})", parts.join("; "))
    }
}

/// Where previews run.
pub struct Ctx<'a> {
    /// The workspace.
    pub workspace: &'a Path,
    /// The home directory.
    pub home: Option<&'a Path>,
    /// Time limit for a simulated command.
    pub timeout: Duration,
}

fn rel(ws: &Path, p: &Path) -> String {
    p.strip_prefix(ws).map(|r| r.display().to_string()).unwrap_or_else(|_| p.display().to_string())
}

fn unified(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff.unified_diff().context_radius(3).header(&format!("a/{path}"), &format!("b/{path}")).to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() > MAX_DIFF_LINES {
        format!("{}\n… {} more lines\n", lines[..MAX_DIFF_LINES].join("\n"), lines.len() - MAX_DIFF_LINES)
    } else {
        text
    }
}

/// Whether `p` lies in the workspace, resolved the way the gate resolves it (symlinks followed,
/// `..` applied to the real parent): a path that only *looks* inside, through a symlink that
/// leads out, is outside.
fn inside(ws: &Path, p: &Path) -> bool {
    let v = PathValidator::new([ws]);
    v.resolve(p, ws).is_ok_and(|real| v.contains(&real))
}

/// Previews one tool call. `files` holds contents already changed by earlier calls of a batch
/// (path → new content; `None` = deleted), and is updated with this call's effect on them.
pub fn preview_with(
    tool: &str,
    action: &Action,
    ctx: &Ctx<'_>,
    files: &mut BTreeMap<PathBuf, Option<String>>,
) -> Result<DryRunPreview, String> {
    match action {
        Action::WriteFile { path: file, change: change @ (Change::Whole(_) | Change::Edits(_)) } => {
            let path = ctx.workspace.join(file);
            let shown = rel(ctx.workspace, &path);
            let old = match files.get(&path) {
                Some(c) => c.clone(),
                None => std::fs::read_to_string(&path).ok(),
            };
            let new = change.apply(old.as_deref().unwrap_or("")).ok_or("the edit's fields are missing")?;
            if matches!(change, Change::Edits(_)) && old.as_deref().is_some_and(|o| o == new) {
                return Err(format!("the edit does not apply to {shown}: the text it replaces is not in the file"));
            }
            let mut p = DryRunPreview {
                tool: tool.into(),
                target: shown.clone(),
                method: Method::Computed,
                changes: Vec::new(),
                blocked: Vec::new(),
                network: false,
                git_metadata: 0,
                output: String::new(),
            };
            if !inside(ctx.workspace, &path) {
                p.blocked.push(path.display().to_string());
                return Ok(p);
            }
            p.changes.push(FileChange {
                path: shown.clone(),
                change: if old.is_some() { "modified" } else { "created" },
                diff: Some(unified(&shown, old.as_deref().unwrap_or(""), &new)),
            });
            files.insert(path, Some(new));
            Ok(p)
        }
        Action::Shell { command } => Ok(preview_command(command, ctx)),
        _ => Err(format!("`{tool}` cannot be previewed: only shell commands and file writes and edits can")),
    }
}

/// Previews one tool call on its own.
pub fn preview_tool_call(call: &loopguard_core::ToolCall, ctx: &Ctx<'_>) -> Result<DryRunPreview, String> {
    preview_with(&call.tool, &call.action, ctx, &mut BTreeMap::new())
}

/// A tool call the preview can dry-run: a shell command, or a file written or edited.
pub fn previewable(call: &loopguard_core::ToolCall) -> bool {
    matches!(call.action, Action::Shell { .. } | Action::WriteFile { change: Change::Whole(_) | Change::Edits(_), .. })
}

/// Previews several pending calls together: each sees the effects of the edits before it.
pub fn preview_batch(calls: &[(String, Action)], ctx: &Ctx<'_>) -> Vec<Result<DryRunPreview, String>> {
    let mut files = BTreeMap::new();
    calls.iter().map(|(t, a)| preview_with(t, a, ctx, &mut files)).collect()
}

/// Previews a shell command: simulated when possible, else predicted.
pub fn preview_command(cmd: &str, ctx: &Ctx<'_>) -> DryRunPreview {
    let analysis_ctx = loopguard_core::Context::new(ctx.workspace)
        .with_home(ctx.home)
        .with_worktree(std::sync::Arc::new(crate::git::GitWorktree));
    let validator = PathValidator::new([ctx.workspace]);
    let report = shell::analyze(cmd, ctx.workspace, &analysis_ctx, shell::Knowledge::builtin(), &validator);
    let blocked: Vec<String> =
        report.predicted_writes.iter().filter(|p| !inside(ctx.workspace, p)).map(|p| p.display().to_string()).collect();
    let mut p = DryRunPreview {
        tool: "Bash".into(),
        target: cmd.to_string(),
        method: Method::Predicted { why: String::new() },
        changes: Vec::new(),
        blocked,
        network: report.network,
        git_metadata: 0,
        output: String::new(),
    };
    match simulate(cmd, ctx) {
        Ok((method, changes, output)) => {
            p.method = method;
            let (git, files): (Vec<FileChange>, Vec<FileChange>) =
                changes.into_iter().partition(|c| c.path == ".git" || c.path.starts_with(".git/"));
            p.git_metadata = git.len();
            p.changes = files;
            p.output = output;
        }
        Err(why) => {
            p.method = Method::Predicted { why };
            p.changes = report
                .predicted_writes
                .iter()
                .filter(|w| inside(ctx.workspace, w))
                .map(|w| FileChange {
                    path: rel(ctx.workspace, w),
                    change: if w.exists() { "modified or deleted" } else { "created" },
                    diff: None,
                })
                .collect();
        }
    }
    p
}

type Simulated = (Method, Vec<FileChange>, String);

/// Waits for the preview's command until `timeout` (from `start`); then kills its session and
/// waits a moment more, never longer: a process stuck in the kernel (setting up namespaces,
/// paging in) dies only when its system call returns, and the hook's answer is due. Returns the
/// exit status and whether the time limit ended it.
fn wait_bounded(
    child: &mut std::process::Child,
    start: Instant,
    timeout: Duration,
) -> Result<(std::process::ExitStatus, bool), String> {
    loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok((s, false));
        }
        if start.elapsed() > timeout {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    kill_session(child.id());
    let until = Instant::now() + PIPE_GRACE;
    loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok((s, true));
        }
        if Instant::now() > until {
            return Err("the simulation did not stop within its time limit".into());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Kills the preview's process group and every process of its session (`leader`'s): what left
/// the group (`timeout`, a backgrounded job) is still in the session. A process that made a
/// session of its own (`setsid`) is not found this way.
fn kill_session(leader: u32) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    let Some(pid) = Pid::from_raw(leader as i32) else { return };
    let _ = kill_process_group(pid, Signal::KILL);
    let Ok(procs) = std::fs::read_dir("/proc") else { return };
    for e in procs.flatten() {
        let Some(n) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // `pid (comm) state ppid pgrp session …`: the name may hold spaces and parentheses.
        let session = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(3));
        if session.and_then(|s| s.parse::<i32>().ok()) == Some(leader as i32)
            && let Some(p) = Pid::from_raw(n)
        {
            let _ = kill_process(p, Signal::KILL);
        }
    }
}

/// How long a preview waits for its pipes' last bytes once the command has ended.
const PIPE_GRACE: Duration = Duration::from_millis(100);

fn simulate(cmd: &str, ctx: &Ctx<'_>) -> Result<Simulated, String> {
    use std::process::{Command, Stdio};
    let ws = std::fs::canonicalize(ctx.workspace).map_err(|e| format!("{}: {e}", ctx.workspace.display()))?;
    let scratch = tempfile::Builder::new()
        .prefix("loopguard-preview-")
        .tempdir()
        .map_err(|e| format!("no scratch directory: {e}"))?;
    let (upper, work, tmp) = (scratch.path().join("upper"), scratch.path().join("work"), scratch.path().join("tmp"));
    for d in [&upper, &work, &tmp] {
        std::fs::create_dir(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find loopguard itself: {e}"))?;
    let mut c = Command::new(exe);
    c.arg("__preview-inner")
        .arg(&ws)
        .arg(&upper)
        .arg(&work)
        .arg(&tmp)
        .args(["--", "bash", "-c", cmd])
        .current_dir(&ws)
        .env_clear()
        .envs(
            crate::exec::scrubbed(std::env::vars(), &[], true)
                .into_iter()
                .filter(|(k, _)| !SOCKET_VARS.contains(&k.as_str())),
        )
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The inner half makes a session of its own (`setsid`), which is also its process group.
    let start = Instant::now();
    let mut child = c.spawn().map_err(|e| format!("cannot start the sandbox: {e}"))?;
    // Each pipe is read on a thread of its own that hands its bytes over a channel: the wait for
    // them is bounded below, so a process that cannot die at once (stuck in the kernel, holding
    // the pipe open) cannot hold the preview past its budget.
    let pump = |r: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(r) = r {
                let _ = r.take(MAX_OUTPUT as u64 * 4).read_to_end(&mut buf);
            }
            let _ = tx.send(buf);
        });
        rx
    };
    let out = pump(child.stdout.take().map(|o| Box::new(o) as Box<dyn Read + Send>));
    let err = pump(child.stderr.take().map(|e| Box::new(e) as Box<dyn Read + Send>));
    let (status, timed_out) = wait_bounded(&mut child, start, ctx.timeout)?;
    let millis = start.elapsed().as_millis() as u64;
    // The output the pipes gave by the end of the budget (plus a moment for a finished command's
    // last bytes); what comes later is not waited for.
    let grace = ctx.timeout.saturating_sub(start.elapsed()).max(PIPE_GRACE);
    let (stdout, stderr) =
        (out.recv_timeout(grace).unwrap_or_default(), err.recv_timeout(PIPE_GRACE).unwrap_or_default());
    let stderr_text = String::from_utf8_lossy(&stderr).into_owned();
    // The sandbox could not be set up: say so, do not pretend it ran.
    if status.code() == Some(125) && stderr_text.starts_with("loopguard preview:") {
        return Err(stderr_text.trim().trim_start_matches("loopguard preview:").trim().to_string());
    }
    let changes = read_upper(&upper, &ws, &ws)?;
    let mut output = String::from_utf8_lossy(&stdout).into_owned();
    output.push_str(&stderr_text);
    if output.len() > MAX_OUTPUT {
        let mut cut = MAX_OUTPUT;
        while !output.is_char_boundary(cut) {
            cut -= 1;
        }
        output.truncate(cut);
        output.push_str("\n… (truncated)");
    }
    let output = loopguard_secrets::Scanner::builtin().redact(&output);
    Ok((Method::Simulated { exit_code: status.code(), timed_out, millis }, changes, output))
}

fn is_whiteout(m: &std::fs::Metadata) -> bool {
    m.file_type().is_char_device() && m.rdev() == 0
}

fn opaque(dir: &Path) -> bool {
    // Unprivileged overlayfs (`userxattr`) marks a directory that replaced a lower one with
    // `user.overlay.opaque`.
    rustix::fs::getxattr(dir, "user.overlay.opaque", &mut [0u8; 4]).is_ok_and(|n| n > 0)
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>, budget: &mut usize) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if *budget == 0 {
            return;
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => files_under(&p, out, budget),
            Ok(_) => {
                *budget -= 1;
                out.push(p);
            }
            Err(_) => {}
        }
    }
}

/// Reads the overlay's upper layer: `upper` mirrors `lower`.
fn read_upper(upper: &Path, lower: &Path, ws: &Path) -> Result<Vec<FileChange>, String> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(upper)
        .map_err(|e| format!("{}: {e}", upper.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for u in entries {
        let name = u.file_name().unwrap_or_default();
        let l = lower.join(name);
        let m = std::fs::symlink_metadata(&u).map_err(|e| e.to_string())?;
        let lm = std::fs::symlink_metadata(&l).ok();
        if is_whiteout(&m) {
            // Deleted: a file, or a whole directory (every file under it).
            match &lm {
                Some(x) if x.is_dir() => {
                    let mut gone = Vec::new();
                    files_under(&l, &mut gone, &mut 10_000);
                    out.extend(gone.iter().map(|g| FileChange { path: rel(ws, g), change: "deleted", diff: None }));
                }
                Some(_) => out.push(FileChange { path: rel(ws, &l), change: "deleted", diff: None }),
                None => {}
            }
        } else if m.is_dir() {
            match &lm {
                Some(x) if x.is_dir() && !opaque(&u) => out.extend(read_upper(&u, &l, ws)?),
                _ => {
                    // A new directory (or one that replaced the lower one): its old files are
                    // gone, its files are new.
                    if lm.as_ref().is_some_and(|x| x.is_dir()) {
                        let mut gone = Vec::new();
                        files_under(&l, &mut gone, &mut 10_000);
                        out.extend(gone.iter().map(|g| FileChange { path: rel(ws, g), change: "deleted", diff: None }));
                    }
                    let mut new = Vec::new();
                    files_under(&u, &mut new, &mut 10_000);
                    for n in new {
                        let as_ws = l.join(n.strip_prefix(&u).unwrap_or(&n));
                        out.push(file_change(&as_ws, None, &n, ws));
                    }
                }
            }
        } else {
            let old = lm.filter(|x| x.is_file()).map(|_| l.clone());
            out.push(file_change(&l, old.as_deref(), &u, ws));
        }
    }
    Ok(out)
}

fn file_change(at: &Path, old: Option<&Path>, new: &Path, ws: &Path) -> FileChange {
    let path = rel(ws, at);
    let text = |p: &Path| {
        let m = std::fs::metadata(p).ok()?;
        if m.len() > MAX_DIFF_BYTES {
            return None;
        }
        String::from_utf8(std::fs::read(p).ok()?).ok()
    };
    let diff = match old {
        Some(o) => text(o).zip(text(new)).map(|(a, b)| unified(&path, &a, &b)),
        None => text(new).map(|b| unified(&path, "", &b)),
    };
    let diff = diff.map(|d| loopguard_secrets::Scanner::builtin().redact(&d));
    FileChange { path, change: if old.is_some() { "modified" } else { "created" }, diff }
}

/// The preview for a terminal (ANSI colours when `color`).
pub fn display_preview(p: &DryRunPreview, color: bool) -> String {
    let paint = |code: &str, s: &str| if color { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() };
    let mut out = format!("{} {}\n", paint("1", &format!("{}:", p.tool)), p.target);
    out.push_str(&format!("  {}\n", p.summary()));
    if let Method::Predicted { why } = &p.method {
        out.push_str(&format!(
            "  {}\n",
            paint("33", &format!("prediction only — the simulation was impossible: {why}"))
        ));
    }
    for c in &p.changes {
        let sign = match c.change {
            "created" => paint("32", "+ created "),
            "deleted" => paint("31", "- deleted "),
            _ => paint("33", "~ modified"),
        };
        out.push_str(&format!("  {sign} {}\n", c.path));
    }
    for b in &p.blocked {
        out.push_str(&format!("  {} {b}\n", paint("31", "! blocked (outside the workspace)")));
    }
    for c in p.changes.iter().filter(|c| c.diff.is_some()) {
        out.push('\n');
        for line in c.diff.as_deref().unwrap_or("").lines() {
            let l = if line.starts_with("+++") || line.starts_with("---") {
                paint("1", line)
            } else if line.starts_with('+') {
                paint("32", line)
            } else if line.starts_with('-') {
                paint("31", line)
            } else if line.starts_with("@@") {
                paint("36", line)
            } else {
                line.to_string()
            };
            out.push_str(&l);
            out.push('\n');
        }
    }
    if !p.output.is_empty() {
        out.push_str(&format!("\n  output in the simulation:\n{}\n", indent(&p.output)));
    }
    out
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// Several previews, numbered, with a total.
pub fn display_batch_preview(ps: &[Result<DryRunPreview, String>], color: bool) -> String {
    let mut out = String::new();
    let mut files = std::collections::BTreeSet::new();
    for (i, p) in ps.iter().enumerate() {
        out.push_str(&format!("[{}] ", i + 1));
        match p {
            Ok(p) => {
                files.extend(p.changes.iter().map(|c| c.path.clone()));
                out.push_str(&display_preview(p, color));
            }
            Err(e) => out.push_str(&format!("cannot be previewed: {e}\n")),
        }
        out.push('\n');
    }
    out.push_str(&format!("{} calls, {} files changed in all\n", ps.len(), files.len()));
    out
}

/// Prints text, through `$PAGER` (default `less -R`) when it is long and goes to a terminal.
pub fn page(text: &str, terminal: bool) {
    use std::io::Write;
    let long = text.lines().count() > 40;
    if terminal && long {
        let pager = std::env::var("PAGER").unwrap_or_else(|_| "less -R".into());
        let mut words = pager.split_whitespace();
        if let Some(prog) = words.next()
            && let Ok(mut child) =
                std::process::Command::new(prog).args(words).stdin(std::process::Stdio::piped()).spawn()
        {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(text.as_bytes());
            }
            let _ = child.wait();
            return;
        }
    }
    print!("{text}");
}
