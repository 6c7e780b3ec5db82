//! `loopguard doctor <host>` for Codex CLI, Gemini CLI, Copilot CLI and Cursor: the hooks are in
//! the host's configuration for every event, the host will actually run them (trust), the binary
//! they run denies `rm -rf /` in the host's own protocol, and the host has called loopguard here.

use super::{Report, check_policy, check_state_home, is_executable};
use crate::install::hosts::{
    CODEX_EVENTS, COPILOT_CAMEL_EVENTS, COPILOT_EVENTS, CURSOR_EVENTS, CopilotForm, GEMINI_EVENTS, codex_home,
    codex_trust_hash, copilot_home, snake,
};
use crate::install::{hook_host, loopguard_binary, split_event};
use crate::state::Env;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// One loopguard handler found in a host's configuration.
#[derive(Debug, Clone)]
struct Found {
    file: PathBuf,
    event: String,
    group: usize,
    handler: usize,
    matcher: Option<String>,
    entry: Value,
    binary: PathBuf,
}

/// Runs every check of `host` (`codex`, `gemini`, `copilot`, `cursor`) for the workspace of `cwd`.
pub fn run(env: &Env, cwd: &Path, host: &'static str) -> Report {
    let workspace = env.workspace_for(cwd);
    let mut report = Report::default();
    let (files, events, key): (Vec<PathBuf>, Vec<&str>, &str) = match host {
        "codex" => (
            [codex_home(env.home.as_deref()).map(|h| h.join("hooks.json")), Some(workspace.join(".codex/hooks.json"))]
                .into_iter()
                .flatten()
                .collect(),
            CODEX_EVENTS.iter().map(|(e, _)| *e).collect(),
            "command",
        ),
        "gemini" => (
            [env.home.as_ref().map(|h| h.join(".gemini/settings.json")), Some(workspace.join(".gemini/settings.json"))]
                .into_iter()
                .flatten()
                .collect(),
            GEMINI_EVENTS.iter().map(|(e, _)| *e).collect(),
            "command",
        ),
        // Both spellings are looked for: which one is registered decides what is checked.
        "copilot" => (copilot_files(env, &workspace), [COPILOT_EVENTS, COPILOT_CAMEL_EVENTS].concat(), "bash"),
        _ => (
            [env.home.as_ref().map(|h| h.join(".cursor/hooks.json")), Some(workspace.join(".cursor/hooks.json"))]
                .into_iter()
                .flatten()
                .collect(),
            CURSOR_EVENTS.iter().map(|(e, _, _)| *e).collect(),
            "command",
        ),
    };
    let found = find(&files, &events, key, host);
    let (events, form, problems) = match host {
        "copilot" => {
            let (form, problems) = copilot_form(&found);
            (form.events().to_vec(), Some(form), problems)
        }
        _ => (events, None, Vec::new()),
    };
    let hooks = check_hooks(host, &found, &events, problems);
    report.push("hooks", hooks.map(|ok| form.map_or(ok.clone(), |f| format!("{ok} ({} form)", f.name()))));
    report.push("trust", check_trust(env, &workspace, host, &found));
    report.push("policy", check_policy(env, &workspace));
    report.push("state home", check_state_home(env));
    let exe = found.first().map(|f| f.binary.clone()).or_else(|| std::env::current_exe().ok());
    report.push(
        "sample deny",
        match &exe {
            Some(exe) => sample_deny(exe, host, form == Some(CopilotForm::Camel), &workspace),
            None => Err("cannot find a loopguard binary to test".into()),
        },
    );
    report.push("selftest", super::selftest(exe.as_deref(), &workspace));
    report.push("sandbox", super::sandbox(exe.as_deref()));
    report.push("host calls loopguard", check_called(env, &workspace, host));
    report
}

/// Copilot's hooks files: the user's (`$COPILOT_HOME/hooks/*.json`) and the repository's
/// (`.github/hooks/*.json`).
fn copilot_files(env: &Env, workspace: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [copilot_home(env.home.as_deref()).map(|h| h.join("hooks")), Some(workspace.join(".github/hooks"))]
        .into_iter()
        .flatten()
    {
        let mut in_dir: Vec<PathBuf> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        in_dir.sort();
        files.extend(in_dir);
    }
    files
}

/// The form loopguard's Copilot hooks are registered in, and what is wrong with them: both
/// forms at once (every call decided twice), a camelCase entry whose command does not name its
/// own event, a PascalCase one that names an event (either way, every call there is denied).
fn copilot_form(found: &[Found]) -> (CopilotForm, Vec<String>) {
    let camel = |f: &Found| COPILOT_CAMEL_EVENTS.contains(&f.event.as_str());
    let mut problems = Vec::new();
    if found.iter().any(camel) && !found.iter().all(camel) {
        problems.push("loopguard is registered under both PascalCase and camelCase events, so every call would be decided twice; run `loopguard install copilot --form <pascal|camel>` to keep one".to_string());
    }
    for f in found {
        let named = f.entry.get("bash").and_then(Value::as_str).and_then(|c| split_event(c).1);
        let wrong = match (camel(f), named) {
            (true, Some(e)) if e == f.event => continue,
            (true, Some(e)) => format!("names `--event {e}`"),
            (true, None) => "does not name its event (`--event`)".to_string(),
            (false, Some(e)) => format!("names `--event {e}`, which PascalCase entries must not"),
            (false, None) => continue,
        };
        problems.push(format!(
            "the {} hook in {} {wrong}: every call there is denied; run `loopguard install copilot` again",
            f.event,
            f.file.display()
        ));
    }
    let form = if found.iter().any(camel) { CopilotForm::Camel } else { CopilotForm::Pascal };
    (form, problems)
}

/// Every loopguard handler for `host` in `files` (grouped `{matcher, hooks: [...]}` lists, or
/// flat lists of entries), with where it sits.
fn find(files: &[PathBuf], events: &[&str], key: &str, host: &str) -> Vec<Found> {
    let mut out = Vec::new();
    for file in files {
        let Some(v) = std::fs::read_to_string(file).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok()) else {
            continue;
        };
        for event in events {
            for (gi, group) in v["hooks"][event].as_array().into_iter().flatten().enumerate() {
                // A group of handlers, or (Copilot, Cursor) an entry itself.
                let handlers: Vec<&Value> = match group.get("hooks").and_then(Value::as_array) {
                    Some(hs) => hs.iter().collect(),
                    None => vec![group],
                };
                for (hi, h) in handlers.into_iter().enumerate() {
                    let Some(cmd) = h.get(key).and_then(Value::as_str) else { continue };
                    if hook_host(cmd) != Some(host) {
                        continue;
                    }
                    if let Some(binary) = loopguard_binary(cmd) {
                        out.push(Found {
                            file: file.clone(),
                            event: event.to_string(),
                            group: gi,
                            handler: hi,
                            matcher: group.get("matcher").and_then(Value::as_str).map(String::from),
                            entry: h.clone(),
                            binary,
                        });
                    }
                }
            }
        }
    }
    out
}

fn check_hooks(host: &str, found: &[Found], events: &[&str], mut problems: Vec<String>) -> Result<String, String> {
    if found.is_empty() {
        return Err(format!(
            "no loopguard hook for {host} in any of its configuration files; run `loopguard install {host}`"
        ));
    }
    let missing: Vec<&str> = events.iter().copied().filter(|e| !found.iter().any(|f| f.event == *e)).collect();
    if !missing.is_empty() {
        problems.push(format!("no loopguard hook for {}; run `loopguard install {host}` again", missing.join(", ")));
    }
    for f in found.iter().filter(|f| !is_executable(&f.binary)) {
        problems.push(format!("{} runs {}, which is not an executable file", f.file.display(), f.binary.display()));
    }
    if host == "cursor" {
        for (event, _, _) in CURSOR_EVENTS.iter().filter(|(_, _, fail_closed)| *fail_closed) {
            if found.iter().any(|f| f.event == *event && f.entry.get("failClosed") != Some(&Value::Bool(true))) {
                problems.push(format!("the {event} hook lacks `failClosed: true` (a crash would let the call run)"));
            }
        }
    }
    if problems.is_empty() {
        let mut files: Vec<String> = found.iter().map(|f| f.file.display().to_string()).collect();
        files.dedup();
        Ok(format!("all {} events hooked in {}", events.len(), files.join(", ")))
    } else {
        Err(problems.join("; "))
    }
}

/// Whether the host will run the hooks it has.
fn check_trust(env: &Env, workspace: &Path, host: &str, found: &[Found]) -> Result<String, String> {
    match host {
        "codex" => codex_trust(env, workspace, found),
        "gemini" => gemini_trust(env, workspace, found),
        "copilot" => {
            let user = copilot_home(env.home.as_deref());
            if found.iter().any(|f| user.as_ref().is_some_and(|u| f.file.starts_with(u))) {
                Ok("user-level hooks: Copilot CLI loads them in every folder".into())
            } else if found.is_empty() {
                Err("nothing installed".into())
            } else {
                Err("only repository hooks: Copilot CLI skips them silently in `-p` mode unless the folder is trusted (`--trust-folder`); run `loopguard install copilot` for user-level hooks".into())
            }
        }
        _ => {
            let user = env.home.as_ref().map(|h| h.join(".cursor"));
            if found.iter().any(|f| user.as_ref().is_some_and(|u| f.file.starts_with(u))) {
                Ok("user-level hooks: Cursor loads them in every workspace".into())
            } else if found.is_empty() {
                Err("nothing installed".into())
            } else {
                Ok("project hooks: Cursor runs them only in a trusted workspace".into())
            }
        }
    }
}

fn codex_trust(env: &Env, workspace: &Path, found: &[Found]) -> Result<String, String> {
    let home = codex_home(env.home.as_deref()).ok_or("neither CODEX_HOME nor HOME is set")?;
    let config_path = home.join("config.toml");
    let text = std::fs::read_to_string(&config_path).unwrap_or_default();
    let config: toml_edit::DocumentMut =
        text.parse().map_err(|e| format!("{} is not valid TOML: {e}", config_path.display()))?;
    let state = config.get("hooks").and_then(|h| h.get("state"));
    let mut problems = Vec::new();
    for f in found {
        let key = format!("{}:{}:{}:{}", f.file.display(), snake(&f.event), f.group, f.handler);
        let want = codex_trust_hash(&f.event, f.matcher.as_deref(), &f.entry);
        let have = state.and_then(|s| s.get(&key)).and_then(|t| t.get("trusted_hash")).and_then(|h| h.as_str());
        if have != Some(want.as_str()) {
            problems.push(f.event.clone());
        }
        if !f.file.starts_with(&home) {
            let trusted = config
                .get("projects")
                .and_then(|p| p.get(workspace.display().to_string()))
                .and_then(|p| p.get("trust_level"))
                .and_then(|t| t.as_str())
                == Some("trusted");
            if !trusted {
                return Err(format!(
                    "{} is a project hooks file, and Codex loads project hooks only in a trusted project: set `[projects.\"{}\"] trust_level = \"trusted\"` in {}",
                    f.file.display(),
                    workspace.display(),
                    config_path.display()
                ));
            }
        }
    }
    problems.dedup();
    if problems.is_empty() {
        Ok(format!("every loopguard hook is trusted in {}", config_path.display()))
    } else {
        Err(format!(
            "Codex skips untrusted hooks silently, and these are not trusted (or changed since): {}; run `loopguard install codex` again",
            problems.join(", ")
        ))
    }
}

fn gemini_trust(env: &Env, workspace: &Path, found: &[Found]) -> Result<String, String> {
    let settings = |p: Option<PathBuf>| {
        p.and_then(|p| std::fs::read_to_string(p).ok()).and_then(|t| serde_json::from_str::<Value>(&t).ok())
    };
    let user = settings(env.home.as_ref().map(|h| h.join(".gemini/settings.json")));
    let project = settings(Some(workspace.join(".gemini/settings.json")));
    for s in [&user, &project].into_iter().flatten() {
        if s.pointer("/hooksConfig/enabled") == Some(&Value::Bool(false)) {
            return Err("`hooksConfig.enabled` is false: Gemini CLI runs no hooks at all".into());
        }
    }
    if found.is_empty() {
        return Err("nothing installed".into());
    }
    let trust_off = [&user, &project]
        .into_iter()
        .flatten()
        .any(|s| s.pointer("/security/folderTrust/enabled") == Some(&Value::Bool(false)));
    if trust_off || std::env::var("GEMINI_CLI_TRUST_WORKSPACE").as_deref() == Ok("true") {
        return Ok("folder trust is off here: Gemini CLI runs the hooks".into());
    }
    let trusted = settings(env.home.as_ref().map(|h| h.join(".gemini/trustedFolders.json")))
        .and_then(|v| v.as_object().cloned())
        .is_some_and(|m| {
            m.iter().any(|(dir, level)| {
                let dir = Path::new(dir);
                match level.as_str() {
                    Some("TRUST_FOLDER") => workspace.starts_with(dir),
                    Some("TRUST_PARENT") => dir.parent().is_some_and(|p| workspace.starts_with(p)),
                    _ => false,
                }
            })
        });
    if trusted {
        Ok(format!("{} is a trusted folder: Gemini CLI runs the hooks", workspace.display()))
    } else {
        Err(format!(
            "{} is not a trusted folder: Gemini CLI registers no settings hooks there (headless runs refuse to start); trust it when `gemini` asks, or add it to ~/.gemini/trustedFolders.json",
            workspace.display()
        ))
    }
}

/// The host's own `rm -rf /` tool call, fed to `loopguard hook <host>` (for Copilot, in the form
/// its hooks are registered in): it must come back denied in the host's protocol.
fn sample_deny(exe: &Path, host: &str, camel: bool, workspace: &Path) -> Result<String, String> {
    let tmp = tempfile::tempdir().map_err(|e| format!("cannot create a temp dir: {e}"))?;
    let common = json!({ "session_id": "loopguard-doctor", "cwd": workspace });
    let mut input = common.clone();
    let extra = match host {
        "codex" => {
            json!({"hook_event_name": "PreToolUse", "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}, "tool_use_id": "doctor"})
        }
        "gemini" => {
            json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /"}})
        }
        "copilot" if camel => {
            input = json!({"sessionId": "loopguard-doctor", "timestamp": 0, "cwd": workspace});
            json!({"toolName": "bash", "toolArgs": {"command": "rm -rf /", "description": "doctor check"}})
        }
        "copilot" => {
            json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
        }
        _ => {
            json!({"hook_event_name": "preToolUse", "conversation_id": "loopguard-doctor", "tool_name": "Shell", "tool_input": {"command": "rm -rf /"}})
        }
    };
    for (k, v) in extra.as_object().into_iter().flatten() {
        input[k] = v.clone();
    }
    let args: &[&str] = if camel { &[host, "--event", "preToolUse"] } else { &[host] };
    let out = super::feed_hook(exe, args, tmp.path(), None, &input)?;
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let (denied, reason) = match host {
        "codex" => (
            v.pointer("/hookSpecificOutput/permissionDecision") == Some(&json!("deny")),
            v.pointer("/hookSpecificOutput/permissionDecisionReason"),
        ),
        "gemini" => (v["decision"] == "deny", v.get("reason")),
        "copilot" => (v["permissionDecision"] == "deny", v.get("permissionDecisionReason")),
        _ => (v["permission"] == "deny", v.get("agent_message")),
    };
    let reason = reason.and_then(Value::as_str).unwrap_or("");
    if denied && out.status.code() == Some(0) && reason.contains("[destructive-rm-root]") {
        let form = if camel { " (camelCase registration)" } else { "" };
        Ok(format!("`rm -rf /` is denied by {} in {host}'s protocol{form}", exe.display()))
    } else if denied {
        Ok(format!("`rm -rf /` is denied by {}, though not by its own rule: {reason}", exe.display()))
    } else {
        Err(format!(
            "`rm -rf /` was not denied by {} in {host}'s protocol (stdout {:?}, exit {:?})",
            exe.display(),
            String::from_utf8_lossy(&out.stdout),
            out.status.code()
        ))
    }
}

/// Whether the audit log of this workspace holds an event the host sent (its name is in every
/// event's details).
fn check_called(env: &Env, workspace: &Path, host: &str) -> Result<String, String> {
    let state = env.state_home()?;
    let log = crate::state::audit_log(&state, workspace);
    let events = log.tail(10_000).unwrap_or_default();
    match events
        .iter()
        .rev()
        .find(|e| e.details.as_ref().and_then(|d| d.get("host")).and_then(Value::as_str) == Some(host))
    {
        Some(e) => {
            let kind = serde_json::to_value(e.kind).ok().and_then(|k| k.as_str().map(String::from)).unwrap_or_default();
            Ok(format!("{host} called loopguard here (last: {kind} at {})", e.time))
        }
        None => Err(format!(
            "no call from {host} is on record for {}: start {host} here once (in a folder it trusts) and run `loopguard doctor {host}` again",
            workspace.display()
        )),
    }
}
