//! `loopguard doctor`: is loopguard installed and working here? Claude Code here; the other
//! hosts in [`hosts`].

pub mod hosts;

use crate::install::{EVENTS, FAIL_CLOSED_EVENTS, ON_FAILURE_SINCE, loopguard_binary};
use crate::state::Env;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One check's result.
#[derive(Debug, Clone)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// Whether it passed.
    pub ok: bool,
    /// What was found.
    pub detail: String,
}

/// All checks.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// In the order run.
    pub checks: Vec<Check>,
}

impl Report {
    /// Whether every check passed.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// Human-readable lines.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for c in &self.checks {
            s.push_str(&format!("{} {}: {}\n", if c.ok { "ok  " } else { "FAIL" }, c.name, c.detail));
        }
        s.push_str(if self.ok() { "all checks passed\n" } else { "some checks failed\n" });
        s
    }

    pub(crate) fn push(&mut self, name: &'static str, result: Result<String, String>) {
        let (ok, detail) = match result {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        self.checks.push(Check { name, ok, detail });
    }
}

/// Runs every check for the workspace of `cwd`.
pub fn run(env: &Env, cwd: &Path) -> Report {
    let workspace = env.workspace_for(cwd);
    let mut report = Report::default();
    let hooks = installed_hooks(env, &workspace);
    let binary = hooks.as_ref().ok().and_then(|(_, b)| b.clone());
    let switch = fail_closed_switch(env, &workspace);
    report.push("hooks", hooks.map(|(d, _)| d));
    report.push("host", check_host(find_on_path("claude").as_deref(), switch));
    report.push("policy", check_policy(env, &workspace));
    report.push("state home", check_state_home(env));
    let exe = binary.or_else(|| std::env::current_exe().ok());
    report.push(
        "sample deny",
        match &exe {
            Some(exe) => sample_deny(exe, &workspace),
            None => Err("cannot find a loopguard binary to test".into()),
        },
    );
    report.push("selftest", selftest(exe.as_deref(), &workspace));
    report.push("sandbox", sandbox(exe.as_deref()));
    report
}

/// What the kernel sandbox can do here, found by running `exe exec` for real in a throwaway
/// home, workspace and state home: confinement itself (a failure fails the check), whether calls
/// share a session's namespaces or fall back to their own, whether caches are copy-on-write or
/// read-only, and whether the machine delegates a cgroup (not used yet: no memory, process or
/// disk limits).
pub(crate) fn sandbox(exe: Option<&Path>) -> Result<String, String> {
    let exe = exe.ok_or("cannot find a loopguard binary to test")?;
    let tmp = tempfile::tempdir().map_err(|e| format!("cannot create a temp dir: {e}"))?;
    let (home, ws, state) = (tmp.path().join("home"), tmp.path().join("ws"), tmp.path().join("state"));
    for d in [&home.join(".cache"), &ws] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let probe = "tr '\\0' ' ' < /proc/1/cmdline; echo; echo probe > \"$HOME/.cache/lg-probe\" && echo layered";
    let out = Command::new(exe)
        .args(["exec", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", probe])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("LOOPGUARD_HOME", &state)
        .current_dir(&ws)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("cannot confine a command here: {}", err.trim()));
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let session = if said.contains("__session-holder") {
        "session namespaces (PID, loopback-only network): yes"
    } else {
        "session namespaces: no — each call has namespaces of its own (servers do not outlive their call's network, signals scoped by Landlock where the kernel can)"
    };
    let cow = if said.contains("layered") && !home.join(".cache/lg-probe").exists() {
        "copy-on-write caches (overlayfs): yes"
    } else {
        "copy-on-write caches: no — caches are read-only inside"
    };
    Ok(format!("Landlock and namespaces enforced; {session}; {cow}; {}", cgroups()))
}

/// Whether this process's cgroup is delegated to it (it may create and limit child cgroups).
fn cgroups() -> &'static str {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let path = own.lines().find_map(|l| l.strip_prefix("0::")).unwrap_or("");
    let control = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/')).join("cgroup.subtree_control");
    if !path.is_empty() && rustix::fs::access(&control, rustix::fs::Access::WRITE_OK).is_ok() {
        "cgroup delegation: offered, not used yet (no memory, process or disk limits)"
    } else {
        "cgroup delegation: not offered (no memory, process or disk limits)"
    }
}

/// Runs `selftest` in the binary the hooks run (its patterns, packs, secret rules and a fixed
/// set of decisions, as that binary was built), in the workspace with this environment.
pub(crate) fn selftest(exe: Option<&Path>, workspace: &Path) -> Result<String, String> {
    let exe = exe.ok_or("cannot find a loopguard binary to test")?;
    let out = Command::new(exe)
        .args(["selftest", "--json"])
        .current_dir(workspace)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let report: Value = serde_json::from_slice(&out.stdout).map_err(|_| {
        let err = String::from_utf8_lossy(&out.stderr);
        format!("{} selftest gave no report (too old a binary?): {}", exe.display(), err.trim())
    })?;
    let checks = report["checks"].as_array().cloned().unwrap_or_default();
    let checked: u64 = checks.iter().filter_map(|c| c["checked"].as_u64()).sum();
    let problems: Vec<String> = checks
        .iter()
        .flat_map(|c| c["problems"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.as_str().map(String::from))
        .collect();
    match (out.status.success(), problems.first()) {
        (true, None) if checked > 0 => Ok(format!("{checked} checks passed in {}", exe.display())),
        (_, Some(first)) => Err(format!(
            "{} problems in {} (run `loopguard selftest`); the first: {first}",
            problems.len(),
            exe.display()
        )),
        _ => Err(format!("{} selftest failed (exit {:?})", exe.display(), out.status.code())),
    }
}

fn settings_files(env: &Env, workspace: &Path) -> Vec<PathBuf> {
    let mut v = vec![workspace.join(".claude/settings.json"), workspace.join(".claude/settings.local.json")];
    if let Some(h) = &env.home {
        v.push(h.join(".claude/settings.json"));
    }
    v
}

/// Which events have a loopguard hook, and whether the binaries they run exist.
fn installed_hooks(env: &Env, workspace: &Path) -> Result<(String, Option<PathBuf>), String> {
    let mut covered: Vec<&str> = Vec::new();
    let mut binary: Option<PathBuf> = None;
    let mut problems = Vec::new();
    let mut found_in = Vec::new();
    for file in settings_files(env, workspace) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let v: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("{} is not valid JSON: {e}", file.display()));
                continue;
            }
        };
        for (event, _) in EVENTS {
            let cmds = v["hooks"][event]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
                .filter_map(|h| h["command"].as_str())
                .filter_map(loopguard_binary);
            for prog in cmds {
                covered.push(event);
                if !found_in.contains(&file) {
                    found_in.push(file.clone());
                }
                if !is_executable(&prog) {
                    problems.push(format!(
                        "{} runs {}, which is not an executable file",
                        file.display(),
                        prog.display()
                    ));
                } else {
                    binary.get_or_insert(prog);
                }
            }
        }
    }
    let missing: Vec<&str> = EVENTS.iter().map(|(e, _)| *e).filter(|e| !covered.contains(e)).collect();
    if found_in.is_empty() {
        return Err("no loopguard hook in any Claude Code settings file; run `loopguard install claude-code`".into());
    }
    if !missing.is_empty() {
        problems
            .push(format!("no loopguard hook for {}; run `loopguard install claude-code` again", missing.join(", ")));
    }
    if problems.is_empty() {
        let files: Vec<String> = found_in.iter().map(|f| f.display().to_string()).collect();
        Ok((format!("all {} events hooked in {}", EVENTS.len(), files.join(", ")), binary))
    } else {
        Err(problems.join("; "))
    }
}

/// Whether every loopguard entry of the fail-closed events carries `"onFailure": "block"`
/// (`None`: no loopguard entry found for them).
fn fail_closed_switch(env: &Env, workspace: &Path) -> Option<bool> {
    let mut seen = false;
    for file in settings_files(env, workspace) {
        let Some(v) = std::fs::read_to_string(&file).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok()) else {
            continue;
        };
        for event in FAIL_CLOSED_EVENTS {
            let entries = v["hooks"][event]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
                .filter(|h| h["command"].as_str().and_then(loopguard_binary).is_some());
            for h in entries {
                seen = true;
                if h["onFailure"].as_str() != Some("block") {
                    return Some(false);
                }
            }
        }
    }
    seen.then_some(true)
}

/// The first executable `name` on `PATH`.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| is_executable(p))
}

/// `major.minor.patch` at the start of a `--version` line ("2.1.332 (Claude Code)").
pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let word = text.split_whitespace().next()?;
    let mut it = word.split('.').map(|n| n.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// Runs `claude --version` (at most 15 s).
fn host_version(bin: &Path) -> Result<String, String> {
    let mut child = Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < until => std::thread::sleep(std::time::Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} --version did not answer within 15 s", bin.display()));
            }
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The Claude Code CLI on PATH: its version, and whether it and the installed hooks make a
/// crash or a hang of loopguard block the call (`onFailure: "block"`, honoured since 2.1.295).
fn check_host(bin: Option<&Path>, switch: Option<bool>) -> Result<String, String> {
    let Some(bin) = bin else {
        return Ok("no `claude` on PATH; cannot tell which Claude Code version runs the hooks".into());
    };
    let text = host_version(bin)?;
    let (a, b, c) = ON_FAILURE_SINCE;
    let since = format!("{a}.{b}.{c}");
    let Some(v) = parse_version(&text) else {
        return Err(format!("{} --version printed {text:?}, not a version", bin.display()));
    };
    let shown = format!("Claude Code {}.{}.{} at {}", v.0, v.1, v.2, bin.display());
    match (v >= ON_FAILURE_SINCE, switch) {
        (true, Some(true)) => {
            Ok(format!("{shown}; onFailure \"block\" installed: a crash or hang of the hook blocks the call"))
        }
        (true, Some(false)) => Err(format!(
            "{shown} honours onFailure \"block\", but the installed hooks lack it (a crash or hang of the hook would let the call run); run `loopguard install claude-code` again"
        )),
        (true, None) => Ok(format!("{shown} honours onFailure \"block\" (no loopguard hook installed yet)")),
        (false, _) => Ok(format!(
            "{shown} is older than {since} and ignores onFailure: if the hook crashed or hung the call would run (loopguard answers deny at its own deadline; upgrade the host to close this)"
        )),
    }
}

pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.is_absolute() && std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

pub(crate) fn check_policy(env: &Env, workspace: &Path) -> Result<String, String> {
    match crate::effective::load(env, workspace) {
        Ok(p) => {
            let layers: Vec<&str> = p.sources().iter().map(|s| s.kind.as_str()).collect();
            Ok(format!("loads ({})", layers.join(" < ")))
        }
        Err(e) => Err(format!("does not load, so every call is denied:\n{e}")),
    }
}

pub(crate) fn check_state_home(env: &Env) -> Result<String, String> {
    let home = env.state_home()?;
    loopguard_audit::create_private_dir(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
    let probe = home.join(format!(".doctor-probe-{}", std::process::id()));
    std::fs::write(&probe, b"probe").map_err(|e| format!("{} is not writable: {e}", home.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(format!("{} is writable", home.display()))
}

/// Runs `exe hook <host>` with `input` on stdin and `state` as its state home (and, when given,
/// `project` as Claude Code's project directory).
pub(crate) fn feed_hook(
    exe: &Path,
    hook_args: &[&str],
    state: &Path,
    project: Option<&Path>,
    input: &Value,
) -> Result<std::process::Output, String> {
    let mut cmd = Command::new(exe);
    cmd.arg("hook").args(hook_args).env("LOOPGUARD_HOME", state);
    if let Some(p) = project {
        cmd.env("CLAUDE_PROJECT_DIR", p);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.to_string().as_bytes());
    }
    child.wait_with_output().map_err(|e| format!("{} did not finish: {e}", exe.display()))
}

/// Feeds `rm -rf /` to the hook binary (with a throwaway state home) and expects a deny.
fn sample_deny(exe: &Path, workspace: &Path) -> Result<String, String> {
    let tmp = tempfile::tempdir().map_err(|e| format!("cannot create a temp dir: {e}"))?;
    let input = serde_json::json!({
        "session_id": "loopguard-doctor",
        "transcript_path": "",
        "cwd": workspace,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": { "command": "rm -rf /", "description": "doctor check" },
        "tool_use_id": "doctor"
    });
    let out = feed_hook(exe, &["claude-code"], tmp.path(), Some(workspace), &input)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.trim()).map_err(|_| format!("unexpected hook output: {stdout:?}"))?;
    let decision = v["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap_or("");
    if decision == "deny" && reason.contains("[destructive-rm-root]") {
        Ok(format!("`rm -rf /` is denied by {}", exe.display()))
    } else if decision == "deny" {
        // Still denied (fail closed), but for another reason, e.g. a policy that does not load.
        let first = reason.lines().nth(1).unwrap_or(reason);
        Ok(format!("`rm -rf /` is denied by {}, though not by its own rule: {first}", exe.display()))
    } else {
        Err(format!(
            "`rm -rf /` was not denied by {} (decision {decision:?}, exit {:?})",
            exe.display(),
            out.status.code()
        ))
    }
}
