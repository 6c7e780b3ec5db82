//! Ping-pong edits: the same region of a file changed back and forth. Each successful file
//! change (edits, or a whole write) becomes transitions `(file, before-hash → after-hash)`; the store
//! counts a reversal when a region's change goes back to where it came from.

use crate::{Action, Change};
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

/// The transitions of a finished file change: each edit's old and new text, or a whole write
/// against the file as it was before (`original`, when the host reports it). Other actions have
/// none.
pub fn transitions(action: &Action, original: Option<&str>) -> Vec<Transition> {
    let changes = action.file_changes();
    // The original a host reports belongs to a single-file write.
    let original = if changes.len() == 1 { original } else { None };
    changes
        .into_iter()
        .flat_map(|(path, change)| match change {
            Change::Edits(edits) => edits.iter().filter_map(|e| transition(path, &e.old, &e.new)).collect(),
            Change::Whole(after) => transition(path, original.unwrap_or_default(), after).into_iter().collect(),
            Change::Cell(_) | Change::Delete => Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Edit;

    fn edits(path: &str, pairs: &[(&str, &str)]) -> Action {
        let edits = pairs.iter().map(|(o, n)| Edit { old: o.to_string(), new: n.to_string(), all: false }).collect();
        Action::WriteFile { path: path.into(), change: Change::Edits(edits) }
    }

    #[test]
    fn an_edit_and_its_undo_share_a_region() {
        let a = transitions(&edits("/w/a.rs", &[("x + 1", "x - 1")]), None);
        let b = transitions(&edits("/w/a.rs", &[("x - 1", "x + 1")]), None);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].region, b[0].region);
        assert_ne!(a[0].to, b[0].to);
        let c = transitions(&edits("/w/a.rs", &[("y", "z")]), None);
        assert_ne!(a[0].region, c[0].region);
    }

    #[test]
    fn writes_use_the_original_file_and_multiedit_every_edit() {
        let write = Action::WriteFile { path: "/w/a".into(), change: Change::Whole("new".into()) };
        assert_eq!(transitions(&write, Some("old")).len(), 1);
        assert_eq!(transitions(&edits("/w/a", &[("a", "b"), ("c", "d")]), None).len(), 2);
        assert!(transitions(&edits("/w/a", &[("a", "a")]), None).is_empty());
        assert!(transitions(&Action::ReadFile { path: Some("/w/a".into()) }, None).is_empty());
    }
}
