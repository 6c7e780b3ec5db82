//! Ping-pong edits: the same region of a file changed back and forth. Each successful
//! Edit/MultiEdit/Write result becomes transitions `(file, before-hash → after-hash)`; the store
//! counts a reversal when a region's change goes back to where it came from.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// One change of one region of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The file.
    pub file: String,
    /// The region, independent of direction (hash of both sides, sorted).
    pub region: String,
    /// Hash of the text after the change.
    pub to: String,
}

fn h(s: &str) -> String {
    let d = Sha256::digest(s.as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn transition(file: &str, before: &str, after: &str) -> Option<Transition> {
    if before == after {
        return None;
    }
    let (a, b) = (h(before), h(after));
    let region = if a < b { format!("{a}{b}") } else { format!("{b}{a}") };
    Some(Transition { file: file.to_string(), region, to: b })
}

/// The transitions of a PostToolUse for a file-changing tool (`input` is `tool_input`,
/// `response` is `tool_response`). Other tools have none.
pub fn transitions(tool: &str, input: &Value, response: Option<&Value>) -> Vec<Transition> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let Some(file) = s(input, "file_path") else { return Vec::new() };
    match tool {
        "Edit" => match (s(input, "old_string"), s(input, "new_string")) {
            (Some(a), Some(b)) => transition(&file, &a, &b).into_iter().collect(),
            _ => Vec::new(),
        },
        "MultiEdit" => input
            .get("edits")
            .and_then(Value::as_array)
            .map(|edits| {
                edits.iter().filter_map(|e| transition(&file, &s(e, "old_string")?, &s(e, "new_string")?)).collect()
            })
            .unwrap_or_default(),
        "Write" => {
            let before = response.and_then(|r| s(r, "originalFile")).unwrap_or_default();
            s(input, "content").and_then(|after| transition(&file, &before, &after)).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_and_its_undo_share_a_region() {
        let a =
            transitions("Edit", &json!({"file_path": "/w/a.rs", "old_string": "x + 1", "new_string": "x - 1"}), None);
        let b =
            transitions("Edit", &json!({"file_path": "/w/a.rs", "old_string": "x - 1", "new_string": "x + 1"}), None);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].region, b[0].region);
        assert_ne!(a[0].to, b[0].to);
        let c = transitions("Edit", &json!({"file_path": "/w/a.rs", "old_string": "y", "new_string": "z"}), None);
        assert_ne!(a[0].region, c[0].region);
    }

    #[test]
    fn writes_use_the_original_file_and_multiedit_every_edit() {
        let w = transitions(
            "Write",
            &json!({"file_path": "/w/a", "content": "new"}),
            Some(&json!({"originalFile": "old"})),
        );
        assert_eq!(w.len(), 1);
        let m = transitions(
            "MultiEdit",
            &json!({"file_path": "/w/a", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]}),
            None,
        );
        assert_eq!(m.len(), 2);
        assert!(
            transitions("Edit", &json!({"file_path": "/w/a", "old_string": "a", "new_string": "a"}), None).is_empty()
        );
        assert!(transitions("Read", &json!({"file_path": "/w/a"}), None).is_empty());
    }
}
