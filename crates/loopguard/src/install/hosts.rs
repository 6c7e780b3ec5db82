//! `loopguard install` for Codex CLI, Gemini CLI, Copilot CLI and Cursor. Each writes the host's
//! own hook configuration (idempotent, keeping every other key and hook, refusing a file it
//! cannot parse, atomic) and makes the hooks actually run where the host skips untrusted hooks
//! silently, or says exactly what the user must do.

use super::{HOST_TIMEOUT_SECS, Installed, host_hook_command, is_loopguard_command, read_json, write_atomic};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Codex's events loopguard registers for, and whether each takes a tool matcher.
pub const CODEX_EVENTS: &[(&str, bool)] = &[
    ("PreToolUse", true),
    ("PostToolUse", true),
    ("SessionStart", false),
    ("SessionEnd", false),
    ("UserPromptSubmit", false),
    ("Stop", false),
];

/// Gemini CLI's events, and whether each takes a tool matcher.
pub const GEMINI_EVENTS: &[(&str, bool)] = &[
    ("BeforeTool", true),
    ("AfterTool", true),
    ("SessionStart", false),
    ("SessionEnd", false),
    ("BeforeAgent", false),
    ("AfterAgent", false),
];

/// Copilot CLI's events (PascalCase: Copilot then sends the event name and Claude-style fields).
pub const COPILOT_EVENTS: &[&str] =
    &["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd", "UserPromptSubmit", "Stop"];

/// The same events spelled camelCase, the form GitHub documents: Copilot then sends no event
/// name (each command names its own with `--event`) and ignores `hookSpecificOutput`.
pub const COPILOT_CAMEL_EVENTS: &[&str] = &[
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "agentStop",
];

/// How loopguard's Copilot hooks are registered: which spelling of the event names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopilotForm {
    /// `PreToolUse`, … (the default: Copilot names the event in its input).
    Pascal,
    /// `preToolUse`, … (documented; each command carries `--event <name>`).
    Camel,
}

impl CopilotForm {
    /// The events registered in this form.
    pub fn events(self) -> &'static [&'static str] {
        match self {
            CopilotForm::Pascal => COPILOT_EVENTS,
            CopilotForm::Camel => COPILOT_CAMEL_EVENTS,
        }
    }

    /// The form's name on the command line (`--form`).
    pub fn name(self) -> &'static str {
        match self {
            CopilotForm::Pascal => "pascal",
            CopilotForm::Camel => "camel",
        }
    }

    /// The command an entry for `event` runs.
    pub fn command(self, base: &str, event: &str) -> String {
        match self {
            CopilotForm::Pascal => base.to_string(),
            CopilotForm::Camel => format!("{base} --event {event}"),
        }
    }
}

/// The form of the loopguard entries in a Copilot hooks document, if it holds any (camelCase
/// when any camelCase event does).
pub fn copilot_form_in(root: &Value) -> Option<CopilotForm> {
    let has = |form: CopilotForm| {
        form.events().iter().any(|e| {
            root.pointer(&format!("/hooks/{e}")).and_then(Value::as_array).is_some_and(|entries| {
                entries.iter().any(|h| h.get("bash").and_then(Value::as_str).is_some_and(is_loopguard_command))
            })
        })
    };
    [CopilotForm::Camel, CopilotForm::Pascal].into_iter().find(|f| has(*f))
}

/// Cursor's events, each with its matcher and whether it fails closed. preToolUse leaves out
/// MCP calls and reads: beforeMCPExecution (which names the server) and beforeReadFile (which
/// carries the content) decide those, so no call is decided twice.
pub const CURSOR_EVENTS: &[(&str, Option<&str>, bool)] = &[
    ("preToolUse", Some("^(?!MCP:|Read$)"), true),
    ("beforeMCPExecution", None, true),
    ("beforeReadFile", None, true),
    ("postToolUse", None, true),
    ("postToolUseFailure", None, false),
    ("sessionStart", None, false),
    ("sessionEnd", None, false),
    ("beforeSubmitPrompt", None, true),
    ("stop", None, false),
];

/// Where loopguard's group goes in an event's list.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// First: it runs before the others (hosts that run hooks in order).
    First,
    /// Where the earlier loopguard group was, else last: the other groups keep their positions
    /// (Codex's trust records name a hook by its position).
    Keep,
}

/// Puts `group(event)` into every event's list of a `{"hooks": {Event: [{matcher?, hooks:
/// [...]}]}}` document, dropping earlier loopguard handlers. Returns each event's group index.
fn put_groups(
    root: &mut Value,
    events: &[(&str, bool)],
    place: Place,
    group: impl Fn(&str, bool) -> Value,
) -> Result<Vec<(String, usize)>, String> {
    let obj = root.as_object_mut().ok_or("the file must hold a JSON object")?;
    let hooks = obj.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or("`hooks` must be an object")?;
    let mut at = Vec::new();
    for (event, matcher) in events {
        let list = hooks.entry(event.to_string()).or_insert_with(|| Value::Array(Vec::new()));
        let groups = list.as_array_mut().ok_or_else(|| format!("`hooks.{event}` must be an array"))?;
        let ours = |h: &Value| h.get("command").and_then(Value::as_str).is_some_and(is_loopguard_command);
        // A group holding only loopguard's handler is replaced where it stands (Keep).
        let old = groups.iter().position(|g| {
            g.get("hooks").and_then(Value::as_array).is_some_and(|hs| !hs.is_empty() && hs.iter().all(ours))
        });
        for g in groups.iter_mut() {
            if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                hs.retain(|h| !ours(h));
            }
        }
        let new = group(event, *matcher);
        let index = match (place, old) {
            (Place::Keep, Some(i)) => {
                groups[i] = new;
                i
            }
            (Place::First, _) => {
                groups.insert(0, new);
                0
            }
            (Place::Keep, None) => {
                groups.push(new);
                groups.len() - 1
            }
        };
        // Groups left empty by the removal go; indices shift only past loopguard's own group
        // when it was First, or were its own (Keep replaced it in place).
        let mut i = 0;
        let mut index = index;
        groups.retain(|g| {
            let keep = g.get("hooks").and_then(Value::as_array).is_none_or(|hs| !hs.is_empty());
            if !keep && i < index {
                index -= 1;
            }
            i += 1;
            keep
        });
        at.push((event.to_string(), index));
    }
    Ok(at)
}

/// Codex's name for an event in its trust records (`PreToolUse` → `pre_tool_use`).
pub fn snake(event: &str) -> String {
    let mut s = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                s.push('_');
            }
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

/// JSON text with every object's keys sorted, compact (what Codex hashes).
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&m[k.as_str()]))).collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Codex's longest SessionEnd hook timeout (a longer one is clamped to it).
const CODEX_SESSION_END_MAX_SECS: u64 = 3;

/// The trust hash Codex records for one hook handler: sha256 over the canonical JSON of the
/// event, the group's matcher and the handler, as Codex normalises them — the effective timeout
/// (600 s by default; SessionEnd and Interrupt 1 s, SessionEnd clamped to 3 s), `async` always
/// present, and no matcher for the events that ignore one (UserPromptSubmit, Stop).
pub fn codex_trust_hash(event: &str, matcher: Option<&str>, handler: &Value) -> String {
    let mut h = handler.clone();
    let default = if matches!(event, "SessionEnd" | "Interrupt") { 1 } else { 600 };
    let timeout = h.get("timeout").and_then(Value::as_u64).unwrap_or(default);
    let timeout = if event == "SessionEnd" { timeout.min(CODEX_SESSION_END_MAX_SECS) } else { timeout };
    h["timeout"] = json!(timeout);
    if h.get("async").is_none() {
        h["async"] = json!(false);
    }
    let mut v = json!({ "event_name": snake(event), "hooks": [h] });
    if let Some(m) = matcher.filter(|_| !matches!(event, "UserPromptSubmit" | "Stop")) {
        v["matcher"] = json!(m);
    }
    format!("sha256:{}", crate::state::sha256_hex(canonical(&v).as_bytes()))
}

/// `loopguard install codex`: loopguard's hooks in `hooks_file` (`$CODEX_HOME/hooks.json`, or a
/// project's `.codex/hooks.json`), and their trust recorded in `$CODEX_HOME/config.toml` —
/// Codex skips untrusted hooks silently.
pub fn install_codex(codex_home: &Path, hooks_file: &Path, exe: &Path, dry_run: bool) -> Result<Installed, String> {
    let command = host_hook_command(exe, "codex");
    let mut root = read_json(hooks_file)?;
    let before = root.clone();
    // SessionEnd's timeout is clamped by Codex: write the value it uses.
    let handler = |event: &str| {
        let t = if event == "SessionEnd" { CODEX_SESSION_END_MAX_SECS } else { HOST_TIMEOUT_SECS };
        json!({ "type": "command", "command": command, "timeout": t })
    };
    let at = put_groups(&mut root, CODEX_EVENTS, Place::Keep, |e, m| {
        if m { json!({ "matcher": "*", "hooks": [handler(e)] }) } else { json!({ "hooks": [handler(e)] }) }
    })?;
    let config_path = codex_home.join("config.toml");
    let config_text = match std::fs::read_to_string(&config_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", config_path.display())),
    };
    let mut config: toml_edit::DocumentMut = config_text
        .parse()
        .map_err(|e| format!("{} is not valid TOML ({e}); not changing it", config_path.display()))?;
    let hooks_key = hooks_file.display().to_string();
    let state = config
        .entry("hooks")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| format!("`hooks` in {} is not a table", config_path.display()))?
        .entry("state")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or_else(|| format!("`hooks.state` in {} is not a table", config_path.display()))?;
    for ((event, matcher), (_, group)) in CODEX_EVENTS.iter().zip(&at) {
        let key = format!("{hooks_key}:{}:{group}:0", snake(event));
        let hash = codex_trust_hash(event, matcher.then_some("*"), &handler(event));
        let mut t = toml_edit::Table::new();
        t.insert("trusted_hash", toml_edit::value(hash));
        state.insert(&key, toml_edit::Item::Table(t));
    }
    let hooks_text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())? + "\n";
    let new_config = config.to_string();
    if dry_run {
        let text = format!("# {}\n{hooks_text}# {}\n{new_config}", hooks_file.display(), config_path.display());
        return Ok(Installed::dry_run(hooks_file, text));
    }
    let changed = root != before || new_config != config_text;
    write_atomic(hooks_file, &hooks_text)?;
    write_atomic(&config_path, &new_config)?;
    let mut notes = vec![format!("trusted in {} (Codex runs only trusted hooks)", config_path.display())];
    if !hooks_file.starts_with(codex_home) {
        notes.push(format!(
            "Codex loads project hooks only in a trusted project: `[projects.\"{}\"] trust_level = \"trusted\"` in {}",
            hooks_file.parent().and_then(Path::parent).unwrap_or(hooks_file).display(),
            config_path.display()
        ));
    }
    Ok(Installed::new(changed, CODEX_EVENTS.len(), hooks_file, notes))
}

/// `loopguard install gemini`: loopguard's hooks in a Gemini CLI `settings.json` (the user's
/// `~/.gemini/settings.json` by default). Timeouts there are in milliseconds.
pub fn install_gemini(settings: &Path, exe: &Path, dry_run: bool) -> Result<Installed, String> {
    let command = host_hook_command(exe, "gemini");
    let mut root = read_json(settings)?;
    let before = root.clone();
    let handler =
        json!({ "type": "command", "name": "loopguard", "command": command, "timeout": HOST_TIMEOUT_SECS * 1000 });
    put_groups(&mut root, GEMINI_EVENTS, Place::First, |_, m| {
        if m { json!({ "matcher": "*", "hooks": [handler.clone()] }) } else { json!({ "hooks": [handler.clone()] }) }
    })?;
    let mut notes = vec![
        "Gemini CLI runs settings hooks only in a trusted folder (`gemini` asks on first start; headless runs in an untrusted folder refuse to start)".to_string(),
    ];
    if root.pointer("/hooksConfig/enabled") == Some(&Value::Bool(false)) {
        notes.push(
            "`hooksConfig.enabled` is false in these settings: Gemini CLI runs no hooks at all until it is true".into(),
        );
    }
    let text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())? + "\n";
    if dry_run {
        return Ok(Installed::dry_run(settings, text));
    }
    write_atomic(settings, &text)?;
    Ok(Installed::new(root != before, GEMINI_EVENTS.len(), settings, notes))
}

/// `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home(home: Option<&Path>) -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => home.map(|h| h.join(".codex")),
    }
}

/// `$COPILOT_HOME`, else `~/.copilot`.
pub fn copilot_home(home: Option<&Path>) -> Option<PathBuf> {
    match std::env::var_os("COPILOT_HOME").filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => home.map(|h| h.join(".copilot")),
    }
}

/// The hooks file loopguard owns in Copilot's home: user-level hooks load in every folder,
/// trusted or not (repository hooks are skipped silently in an untrusted folder).
pub fn copilot_hooks_file(copilot_home: &Path) -> PathBuf {
    copilot_home.join("hooks/loopguard.json")
}

/// `loopguard install copilot`: loopguard's own hooks file (`$COPILOT_HOME/hooks/loopguard.json`
/// by default), in `form` — else the form already in the file, else PascalCase. loopguard's
/// entries of the other form are removed, so no call is decided twice.
pub fn install_copilot(file: &Path, exe: &Path, form: Option<CopilotForm>, dry_run: bool) -> Result<Installed, String> {
    let base = host_hook_command(exe, "copilot");
    let mut root = read_json(file)?;
    let before = root.clone();
    let had = copilot_form_in(&root);
    let form = form.or(had).unwrap_or(CopilotForm::Pascal);
    let obj = root.as_object_mut().ok_or_else(|| format!("{} must hold a JSON object", file.display()))?;
    obj.insert("version".into(), json!(1));
    let hooks = obj.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or_else(|| format!("`hooks` in {} must be an object", file.display()))?;
    let ours = |h: &Value| h.get("bash").and_then(Value::as_str).is_some_and(is_loopguard_command);
    for event in COPILOT_EVENTS.iter().chain(COPILOT_CAMEL_EVENTS).filter(|e| !form.events().contains(e)) {
        if let Some(entries) = hooks.get_mut(*event).and_then(Value::as_array_mut) {
            entries.retain(|h| !ours(h));
            if entries.is_empty() {
                hooks.remove(*event);
            }
        }
    }
    for event in form.events() {
        let list = hooks.entry(event.to_string()).or_insert_with(|| Value::Array(Vec::new()));
        let entries = list.as_array_mut().ok_or_else(|| format!("`hooks.{event}` must be an array"))?;
        entries.retain(|h| !ours(h));
        let command = form.command(&base, event);
        entries.insert(0, json!({ "type": "command", "bash": command, "timeoutSec": HOST_TIMEOUT_SECS }));
    }
    let text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())? + "\n";
    if dry_run {
        return Ok(Installed::dry_run(file, text));
    }
    write_atomic(file, &text)?;
    let mut notes = Vec::new();
    if form == CopilotForm::Camel {
        notes.push("camelCase events (the documented form): each entry names its event (`--event`), and loopguard answers in the top-level fields that form reads".to_string());
    }
    if let Some(old) = had.filter(|h| *h != form) {
        notes.push(format!("replaced loopguard's {} registration with the {} one", old.name(), form.name()));
    }
    Ok(Installed::new(root != before, form.events().len(), file, notes))
}

/// `loopguard install cursor`: loopguard's hooks in a Cursor `hooks.json` (the user's
/// `~/.cursor/hooks.json` by default; a project's `.cursor/hooks.json` runs only in a trusted
/// workspace), each permission hook with `failClosed`.
pub fn install_cursor(file: &Path, exe: &Path, dry_run: bool) -> Result<Installed, String> {
    let command = host_hook_command(exe, "cursor");
    // Cursor strips `//…` as a comment before parsing, even inside strings.
    if command.contains("//") {
        return Err(format!(
            "the loopguard path `{}` holds `//`, which Cursor's hooks.json reader breaks on",
            exe.display()
        ));
    }
    let mut root = read_json(file)?;
    let before = root.clone();
    let obj = root.as_object_mut().ok_or_else(|| format!("{} must hold a JSON object", file.display()))?;
    let valid_version = obj.get("version").and_then(Value::as_u64).is_some_and(|n| n > 0);
    if !valid_version {
        obj.insert("version".into(), json!(1));
    }
    let hooks = obj.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or_else(|| format!("`hooks` in {} must be an object", file.display()))?;
    for (event, matcher, fail_closed) in CURSOR_EVENTS {
        let list = hooks.entry(event.to_string()).or_insert_with(|| Value::Array(Vec::new()));
        let entries = list.as_array_mut().ok_or_else(|| format!("`hooks.{event}` must be an array"))?;
        entries.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(is_loopguard_command));
        let mut entry = json!({ "command": command, "timeout": HOST_TIMEOUT_SECS });
        if let Some(m) = matcher {
            entry["matcher"] = json!(m);
        }
        if *fail_closed {
            entry["failClosed"] = json!(true);
        }
        entries.insert(0, entry);
    }
    let text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())? + "\n";
    if dry_run {
        return Ok(Installed::dry_run(file, text));
    }
    write_atomic(file, &text)?;
    Ok(Installed::new(root != before, CURSOR_EVENTS.len(), file, Vec::new()))
}

/// Whether loopguard's Cursor hooks are in the user's or the project's `hooks.json`.
pub fn cursor_hooks_installed(home: Option<&Path>, project: Option<&Path>) -> bool {
    let files = [home.map(|h| h.join(".cursor/hooks.json")), project.map(|p| p.join(".cursor/hooks.json"))];
    files.into_iter().flatten().any(|f| {
        let Ok(v) = read_json(&f) else { return false };
        v.pointer("/hooks/preToolUse").and_then(Value::as_array).is_some_and(|entries| {
            entries.iter().any(|e| {
                e.get("command").and_then(Value::as_str).is_some_and(|c| super::hook_host(c) == Some("cursor"))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_trust_hash_is_over_sorted_compact_json() {
        let handler = json!({"type": "command", "command": "x", "timeout": 10});
        let expect = format!(
            "sha256:{}",
            crate::state::sha256_hex(
                br#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"x","timeout":10,"type":"command"}],"matcher":"*"}"#
            )
        );
        assert_eq!(codex_trust_hash("PreToolUse", Some("*"), &handler), expect);
        assert_eq!(snake("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn codex_install_keeps_other_hooks_in_place_and_trusts_its_own() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join(".codex");
        let hooks = home.join("hooks.json");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            &hooks,
            r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"mine"}]}]}}"#,
        )
        .unwrap();
        std::fs::write(home.join("config.toml"), "model = \"m\" # keep me\n").unwrap();
        let exe = Path::new("/opt/loopguard");
        assert!(install_codex(&home, &hooks, exe, false).unwrap().render().starts_with("installed"));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&hooks).unwrap()).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "mine", "the user's hook keeps its place");
        assert_eq!(v["hooks"]["PreToolUse"][1]["hooks"][0]["command"], "/opt/loopguard hook codex");
        let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
        assert!(config.starts_with("model = \"m\" # keep me\n"), "{config}");
        let doc: toml_edit::DocumentMut = config.parse().unwrap();
        let state = doc["hooks"]["state"].as_table_like().unwrap();
        let key = format!("{}:pre_tool_use:1:0", hooks.display());
        assert!(state.get(&key).unwrap()["trusted_hash"].as_str().unwrap().starts_with("sha256:"), "{config}");
        assert_eq!(state.len(), CODEX_EVENTS.len());
        // Idempotent.
        let first = (std::fs::read_to_string(&hooks).unwrap(), config);
        assert!(install_codex(&home, &hooks, exe, false).unwrap().render().contains("nothing changed"));
        assert_eq!(
            first,
            (std::fs::read_to_string(&hooks).unwrap(), std::fs::read_to_string(home.join("config.toml")).unwrap())
        );
    }

    #[test]
    fn refuses_files_it_cannot_read() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("hooks.json");
        std::fs::write(&f, "{ nope").unwrap();
        let exe = Path::new("/opt/loopguard");
        assert!(install_cursor(&f, exe, false).is_err());
        assert!(install_copilot(&f, exe, None, false).is_err());
        assert!(install_gemini(&f, exe, false).is_err());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "{ nope");
        let home = d.path().join("codex");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), "[broken").unwrap();
        assert!(install_codex(&home, &home.join("hooks.json"), exe, false).unwrap_err().contains("not valid TOML"));
        assert!(!home.join("hooks.json").exists());
    }

    #[test]
    fn cursor_install_is_idempotent_and_detected() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join(".cursor/hooks.json");
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, r#"{"version":1,"hooks":{"stop":[{"command":"notify"}]}}"#).unwrap();
        let exe = Path::new("/opt/loopguard");
        assert!(!cursor_hooks_installed(Some(d.path()), None));
        install_cursor(&f, exe, false).unwrap();
        let first = std::fs::read_to_string(&f).unwrap();
        assert!(install_cursor(&f, exe, false).unwrap().render().contains("nothing changed"));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), first);
        let v: Value = serde_json::from_str(&first).unwrap();
        assert_eq!(v["hooks"]["stop"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["preToolUse"][0]["failClosed"], true);
        assert!(cursor_hooks_installed(Some(d.path()), None));
        assert!(install_cursor(&f, Path::new("/a//b/loopguard"), true).is_err());
    }

    #[test]
    fn copilot_installs_either_form_keeps_it_and_never_both() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("hooks/loopguard.json");
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, r#"{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"mine"}]}}"#).unwrap();
        let exe = Path::new("/opt/loopguard");
        let read = || serde_json::from_str::<Value>(&std::fs::read_to_string(&f).unwrap()).unwrap();
        // Default: PascalCase, the user's camelCase hook untouched.
        install_copilot(&f, exe, None, false).unwrap();
        let v = read();
        assert_eq!(v["hooks"]["PreToolUse"][0]["bash"], "/opt/loopguard hook copilot");
        assert_eq!(v["hooks"]["preToolUse"], json!([{"type": "command", "bash": "mine"}]));
        assert_eq!(copilot_form_in(&v), Some(CopilotForm::Pascal));
        // camelCase: each entry names its event; the PascalCase entries go.
        let r = install_copilot(&f, exe, Some(CopilotForm::Camel), false).unwrap();
        assert!(r.notes.iter().any(|n| n.contains("replaced loopguard's pascal")), "{:?}", r.notes);
        let v = read();
        assert_eq!(v["hooks"]["preToolUse"][0]["bash"], "/opt/loopguard hook copilot --event preToolUse");
        assert_eq!(v["hooks"]["preToolUse"][1]["bash"], "mine");
        assert_eq!(v["hooks"]["agentStop"][0]["bash"], "/opt/loopguard hook copilot --event agentStop");
        assert!(COPILOT_EVENTS.iter().all(|e| v["hooks"].get(*e).is_none()), "{v}");
        // Installing again without `--form` keeps the form found, and changes nothing.
        let first = std::fs::read_to_string(&f).unwrap();
        assert!(install_copilot(&f, exe, None, false).unwrap().render().contains("nothing changed"));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), first);
        // And back.
        install_copilot(&f, exe, Some(CopilotForm::Pascal), false).unwrap();
        let v = read();
        assert_eq!(v["hooks"]["preToolUse"], json!([{"type": "command", "bash": "mine"}]));
        assert!(v["hooks"].get("agentStop").is_none(), "{v}");
        assert_eq!(crate::install::hook_host("/opt/loopguard hook copilot --event preToolUse"), Some("copilot"));
    }
}
