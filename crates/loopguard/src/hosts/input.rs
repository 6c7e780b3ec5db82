//! Reading a hook input: the parts every host's JSON shares (an object, its event name, session
//! and working directory), with errors that say what is wrong and keep what could be read, so an
//! input error can still be put on record.

use super::{MAX_INPUT_BYTES, Rejected};
use crate::engine::{EventKind, HookError, HostEvent};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// Where a host puts the fields every event carries.
#[derive(Debug, Clone, Copy)]
pub struct Keys {
    /// The event's name (`hook_event_name`).
    pub event: &'static str,
    /// The session's id.
    pub session: &'static str,
    /// The working directory.
    pub cwd: &'static str,
}

/// Claude Code's keys, which Codex, Gemini CLI and Copilot CLI (PascalCase events) share.
pub const CLAUDE_KEYS: Keys = Keys { event: "hook_event_name", session: "session_id", cwd: "cwd" };

/// The input as a JSON object.
pub fn object(bytes: &[u8]) -> Result<Map<String, Value>, HookError> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(HookError::InputTooLarge(MAX_INPUT_BYTES));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| HookError::InputInvalid("the hook input is not UTF-8".into()))?;
    let v: Value = serde_json::from_str(text)
        .map_err(|e| HookError::InputInvalid(format!("the hook input is not valid JSON: {e}")))?;
    match v {
        Value::Object(o) => Ok(o),
        other => {
            Err(HookError::InputInvalid(format!("the hook input must be a JSON object, found {}", type_name(&other))))
        }
    }
}

/// A string field, or what is wrong with it.
pub fn field_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("`{key}` must be a string, found {}", type_name(other))),
        None => Err(format!("`{key}` is missing")),
    }
}

/// A string field, when it is one.
pub fn text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(String::from)
}

/// How a JSON value's type reads in an error.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An input read as far as its event: the object and the bare event, with its kind from
/// `kind_of` (an event the host adapter does not handle is an error). `event` names the event
/// when the host's input does not (Copilot's camelCase events): then `keys.event` is not read.
pub fn head(
    bytes: &[u8],
    keys: Keys,
    event: Option<&str>,
    kind_of: impl Fn(&str) -> Option<EventKind>,
) -> Result<(Map<String, Value>, HostEvent), Rejected> {
    head_of(object(bytes).map_err(Rejected::bare)?, keys, event, kind_of)
}

/// [`head`] of an input already read as an object.
pub fn head_of(
    obj: Map<String, Value>,
    keys: Keys,
    event: Option<&str>,
    kind_of: impl Fn(&str) -> Option<EventKind>,
) -> Result<(Map<String, Value>, HostEvent), Rejected> {
    let name = match event {
        Some(e) => e.to_string(),
        None => field_str(&obj, keys.event).map_err(|e| Rejected::bare(HookError::InputInvalid(e)))?.to_string(),
    };
    let common = field_str(&obj, keys.session).and_then(|s| {
        let cwd = PathBuf::from(field_str(&obj, keys.cwd)?);
        if cwd.is_absolute() {
            Ok((s.to_string(), cwd))
        } else {
            Err(format!("`{}` must be an absolute path", keys.cwd))
        }
    });
    let (session, cwd) =
        common.map_err(|e| Rejected::bare(HookError::InputInvalid(format!("the {name} input is invalid: {e}"))))?;
    let Some(kind) = kind_of(&name) else {
        return Err(Rejected {
            error: HookError::UnknownEvent(format!("`{name}` is not a hook event loopguard handles; denied.")),
            session,
            cwd: Some(cwd),
            event: Some(name),
        });
    };
    Ok((obj, HostEvent::new(kind, &name, &session, cwd)))
}

/// The rejection of an event already read as far as [`head`].
pub fn reject(ev: &HostEvent, error: HookError) -> Rejected {
    Rejected { error, session: ev.session.clone(), cwd: Some(ev.cwd.clone()), event: Some(ev.name.clone()) }
}

/// A tool call's tool name and input (`tool_key`, `input_key`), both required.
pub fn tool_fields(
    obj: &Map<String, Value>,
    ev: &HostEvent,
    tool_key: &str,
    input_key: &str,
) -> Result<(String, Value), Rejected> {
    let invalid = |e: String| reject(ev, HookError::InputInvalid(format!("the {} input is invalid: {e}", ev.name)));
    let name = field_str(obj, tool_key).map_err(invalid)?.to_string();
    let input = obj.get(input_key).cloned().ok_or_else(|| invalid(format!("`{input_key}` is missing")))?;
    Ok((name, input))
}

/// A JSON string's text, or the value as JSON text.
pub fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The redacted output, as the text a host that can only hand the model a reason shows in its
/// place, with a note saying what happened.
pub fn redacted_text(text: &str, redacted: usize) -> String {
    let s = if redacted == 1 { "" } else { "s" };
    format!("{text}\n[loopguard redacted {redacted} secret{s} from this output]")
}

/// The reason of a decision, redacted (reasons quote commands and paths: never let one carry a
/// secret out) and never blank (some hosts run the call when the reason is blank).
pub fn reason(text: &str) -> String {
    let r = loopguard_secrets::Scanner::builtin().redact(text);
    if r.trim().is_empty() { "loopguard denied this call.".to_string() } else { r }
}

/// Notices for the human, one line each.
pub fn notices_text(notices: &[String]) -> Option<String> {
    (!notices.is_empty()).then(|| {
        let text = notices.iter().map(|n| format!("loopguard: {n}")).collect::<Vec<_>>().join("\n");
        loopguard_secrets::Scanner::builtin().redact(&text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_never_blank() {
        assert_eq!(reason("  "), "loopguard denied this call.");
        assert_eq!(reason("x"), "x");
    }

    #[test]
    fn head_keeps_what_it_read_when_the_event_is_unknown() {
        let r = head(br#"{"hook_event_name":"Nope","session_id":"s","cwd":"/w"}"#, CLAUDE_KEYS, None, |_| None)
            .unwrap_err();
        assert_eq!(r.session, "s");
        assert_eq!(r.event.as_deref(), Some("Nope"));
        assert_eq!(r.error.code(), HookError::UnknownEvent(String::new()).code());
    }
}
