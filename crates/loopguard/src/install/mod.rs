//! `loopguard install <host>`: adds loopguard's hooks to a host's configuration. Idempotent (an
//! earlier loopguard entry is replaced, never duplicated), keeps every other key and hook,
//! refuses to touch a file it cannot parse, and writes atomically. Claude Code here; the other
//! hosts in [`hosts`].

pub mod hosts;

pub use hosts::cursor_hooks_installed;

use serde_json::{Map, Value, json};
use std::path::Path;

/// The events loopguard registers for, and whether each takes a tool matcher.
pub const EVENTS: &[(&str, bool)] = &[
    ("PreToolUse", true),
    ("PostToolUse", true),
    ("PostToolUseFailure", true),
    ("SessionStart", false),
    ("SessionEnd", false),
    ("Stop", false),
    ("UserPromptSubmit", false),
];

/// The events whose loopguard entry carries `"onFailure": "block"`: Claude Code ≥ 2.1.295 then
/// blocks the call (or prompt) when the hook crashes or times out instead of letting it run.
/// Session start/end and Stop are left out: there is nothing to block there (the host ignores the
/// switch for Stop), and a broken state home already denies every tool call.
pub const FAIL_CLOSED_EVENTS: &[&str] = &["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"];

/// The first Claude Code version that honours `onFailure` on command hooks; older versions
/// ignore the key (and fail open when a hook crashes or hangs).
pub const ON_FAILURE_SINCE: (u64, u64, u64) = (2, 1, 295);

/// The host's timeout for one hook call, in seconds. loopguard's own deadline (2 s) is well
/// under it, so loopguard always answers before the host gives up (and fails open).
pub const HOST_TIMEOUT_SECS: u64 = 10;

/// The hosts `loopguard hook` speaks to, by their command-line names.
pub const HOST_NAMES: &[&str] = &["claude-code", "codex", "gemini", "copilot", "cursor"];

/// The command line a host's configuration runs for `host` (`claude-code`, `codex`, …).
pub fn host_hook_command(exe: &Path, host: &str) -> String {
    let p = exe.display().to_string();
    let quoted = if p.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        p
    } else {
        format!("'{}'", p.replace('\'', r"'\''"))
    };
    format!("{quoted} hook {host}")
}

/// The command line Claude Code's settings run.
pub fn hook_command(exe: &Path) -> String {
    host_hook_command(exe, "claude-code")
}

/// The host a loopguard hook command speaks to, or `None` when the command is not loopguard's.
pub fn hook_host(cmd: &str) -> Option<&'static str> {
    let cmd = split_event(cmd).0;
    let host = HOST_NAMES.iter().find(|h| cmd.ends_with(&format!(" hook {h}")))?;
    loopguard_binary(cmd).map(|_| *host)
}

/// A hook command, and the event its trailing `--event <name>` names (Copilot's camelCase
/// entries: their input does not name it).
pub fn split_event(cmd: &str) -> (&str, Option<&str>) {
    let cmd = cmd.trim_end();
    match cmd.rsplit_once(" --event ") {
        Some((head, name)) if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()) => {
            (head.trim_end(), Some(name))
        }
        _ => (cmd, None),
    }
}

/// The binary a loopguard hook command runs, or `None` when the command is not loopguard's.
pub fn loopguard_binary(cmd: &str) -> Option<std::path::PathBuf> {
    let cmd = split_event(cmd).0;
    let prog = HOST_NAMES.iter().find_map(|h| cmd.strip_suffix(&format!(" hook {h}")))?.trim();
    let prog = prog.strip_prefix('\'').and_then(|p| p.strip_suffix('\'')).unwrap_or(prog).replace(r"'\''", "'");
    (prog.rsplit('/').next() == Some("loopguard")).then(|| std::path::PathBuf::from(prog))
}

/// Whether a hook command is one of loopguard's (any binary path).
pub fn is_loopguard_command(cmd: &str) -> bool {
    loopguard_binary(cmd).is_some()
}

/// Adds or refreshes loopguard's hooks in `settings`. Returns a short report.
pub fn install_claude_code(settings: &Path, exe: &Path, dry_run: bool) -> Result<Installed, String> {
    let mut root = read_json(settings)?;
    let changed = merge(&mut root, &hook_command(exe))?;
    let text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())? + "\n";
    if dry_run {
        return Ok(Installed::dry_run(settings, text));
    }
    write_atomic(settings, &text)?;
    Ok(Installed::new(changed, EVENTS.len(), settings, Vec::new()))
}

/// What an install did (or, for a dry run, would write).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Installed {
    /// The file written.
    pub file: String,
    /// How many events are hooked.
    pub events: usize,
    /// Whether anything changed (installing again changes nothing).
    pub changed: bool,
    /// What the user should know (trust, where the host loads hooks from).
    pub notes: Vec<String>,
    /// A dry run: the text that would be written, nothing written.
    pub dry_run: Option<String>,
}

impl Installed {
    /// An install that wrote `file`.
    pub fn new(changed: bool, events: usize, file: &Path, notes: Vec<String>) -> Self {
        Installed { file: file.display().to_string(), events, changed, notes, dry_run: None }
    }

    /// A dry run.
    pub fn dry_run(file: &Path, text: String) -> Self {
        Installed {
            file: file.display().to_string(),
            events: 0,
            changed: false,
            notes: Vec::new(),
            dry_run: Some(text),
        }
    }

    /// For a human (a dry run prints what would be written).
    pub fn render(&self) -> String {
        if let Some(text) = &self.dry_run {
            return text.clone();
        }
        let mut s = if self.changed {
            format!("installed loopguard hooks for {} events in {}\n", self.events, self.file)
        } else {
            format!("loopguard hooks already installed in {}; nothing changed\n", self.file)
        };
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s
    }
}

/// A JSON configuration file as a value: an object when the file is missing or empty; an error
/// (and the file untouched) when it does not parse.
pub fn read_json(path: &Path) -> Result<Value, String> {
    match std::fs::read_to_string(path) {
        Ok(t) if t.trim().is_empty() => Ok(Value::Object(Map::new())),
        Ok(t) => serde_json::from_str::<Value>(&t)
            .map_err(|e| format!("{} is not valid JSON ({e}); not changing it", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Object(Map::new())),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Replaces `path` with `text` atomically (a temporary file renamed over it), creating its
/// directory.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.loopguard-tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot replace {}: {e}", path.display()))
}

/// Puts loopguard's entry into every event's list; returns whether anything changed.
pub fn merge(root: &mut Value, command: &str) -> Result<bool, String> {
    let before = root.clone();
    let obj = root.as_object_mut().ok_or("the settings file must hold a JSON object")?;
    let hooks = obj.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or("`hooks` in the settings must be an object")?;
    for (event, matcher) in EVENTS {
        let list = hooks.entry(event.to_string()).or_insert_with(|| Value::Array(Vec::new()));
        let groups = list.as_array_mut().ok_or_else(|| format!("`hooks.{event}` must be an array"))?;
        // Drop earlier loopguard entries (any path), keeping every other hook.
        for g in groups.iter_mut() {
            if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                hs.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(is_loopguard_command));
            }
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|hs| !hs.is_empty()));
        let mut entry = json!({ "type": "command", "command": command, "timeout": HOST_TIMEOUT_SECS });
        if FAIL_CLOSED_EVENTS.contains(event) {
            entry["onFailure"] = json!("block");
        }
        let group = if *matcher { json!({ "matcher": "*", "hooks": [entry] }) } else { json!({ "hooks": [entry] }) };
        // First, so loopguard runs before other hooks of the same event.
        groups.insert(0, group);
    }
    Ok(*root != before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_into_an_empty_file_and_is_idempotent() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join(".claude/settings.json");
        let exe = Path::new("/opt/bin/loopguard");
        assert!(install_claude_code(&s, exe, false).unwrap().render().starts_with("installed"));
        let first = std::fs::read_to_string(&s).unwrap();
        assert!(install_claude_code(&s, exe, false).unwrap().render().contains("nothing changed"));
        assert_eq!(std::fs::read_to_string(&s).unwrap(), first);
        let v: Value = serde_json::from_str(&first).unwrap();
        for (event, matcher) in EVENTS {
            let groups = v["hooks"][event].as_array().unwrap();
            assert_eq!(groups.len(), 1, "{event}");
            assert_eq!(groups[0]["hooks"][0]["command"], "/opt/bin/loopguard hook claude-code");
            assert_eq!(groups[0].get("matcher").is_some(), *matcher);
            let block = groups[0]["hooks"][0].get("onFailure").and_then(Value::as_str) == Some("block");
            assert_eq!(block, FAIL_CLOSED_EVENTS.contains(event), "{event}");
        }
        assert!(FAIL_CLOSED_EVENTS.contains(&"PreToolUse"));
    }

    #[test]
    fn keeps_other_settings_and_hooks_and_replaces_an_old_path() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join("settings.json");
        std::fs::write(
            &s,
            r#"{"model":"x","permissions":{"allow":["Bash(ls)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"other-hook"},{"type":"command","command":"/old/loopguard hook claude-code"}]}],"Notification":[{"hooks":[{"type":"command","command":"notify"}]}]}}"#,
        )
        .unwrap();
        install_claude_code(&s, Path::new("/new/loopguard"), false).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&s).unwrap()).unwrap();
        assert_eq!(v["model"], "x");
        assert_eq!(v["permissions"]["allow"][0], "Bash(ls)");
        assert_eq!(v["hooks"]["Notification"][0]["hooks"][0]["command"], "notify");
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "/new/loopguard hook claude-code");
        assert_eq!(pre[1]["hooks"].as_array().unwrap().len(), 1);
        assert_eq!(pre[1]["hooks"][0]["command"], "other-hook");
    }

    #[test]
    fn an_install_without_the_fail_closed_switch_is_upgraded_once() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join("settings.json");
        // What an earlier loopguard wrote: no onFailure.
        std::fs::write(
            &s,
            r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/x/loopguard hook claude-code","timeout":10}]}]}}"#,
        )
        .unwrap();
        assert!(install_claude_code(&s, Path::new("/x/loopguard"), false).unwrap().render().starts_with("installed"));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&s).unwrap()).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"], "block");
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
        assert!(
            install_claude_code(&s, Path::new("/x/loopguard"), false).unwrap().render().contains("nothing changed")
        );
    }

    #[test]
    fn refuses_invalid_json_without_touching_it() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join("settings.json");
        std::fs::write(&s, "{ not json").unwrap();
        assert!(install_claude_code(&s, Path::new("/x/loopguard"), false).unwrap_err().contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&s).unwrap(), "{ not json");
        std::fs::write(&s, r#"{"hooks": []}"#).unwrap();
        assert!(install_claude_code(&s, Path::new("/x/loopguard"), false).is_err());
    }

    #[test]
    fn quotes_paths_with_spaces() {
        assert_eq!(hook_command(Path::new("/My Tools/loopguard")), "'/My Tools/loopguard' hook claude-code");
        assert!(is_loopguard_command("'/My Tools/loopguard' hook claude-code"));
        assert!(!is_loopguard_command("other hook claude-code"));
    }
}
