//! Escalations: when the breaker trips in a way a human must look at (a stop, a manual-reset
//! trip, a break-glass that needs review), a structured entry goes to the `## ⚠️ Blockers &
//! Escalations` section of STATE.md at the repository root and a line to loop-run-log.md.
//! Concurrent escalations serialise on one lock per workspace; STATE.md is replaced atomically,
//! the log is appended.

use crate::state::workspace_key;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The heading escalations go under.
pub const HEADING: &str = "## ⚠️ Blockers & Escalations";

/// One escalation entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    /// When (RFC 3339).
    pub time: String,
    /// What happened, in a few words (the entry's heading).
    pub title: String,
    /// The event kind for loop-run-log.md (`FAILURE`, `REVIEW`).
    pub kind: String,
    /// Facts as `- key: value` lines (values are redacted).
    pub fields: Vec<(String, String)>,
    /// What a human must do.
    pub todo: String,
}

fn lock_path(state: &Path, workspace: &Path) -> PathBuf {
    state.join("locks").join(format!("{}.lock", workspace_key(workspace)))
}

/// Writes the escalation to STATE.md and loop-run-log.md under the workspace lock.
pub fn escalate(state: &Path, workspace: &Path, e: &Escalation) -> std::io::Result<()> {
    loopguard_audit::create_private_dir(&state.join("locks"))?;
    let lock =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(lock_path(state, workspace))?;
    lock.lock()?;
    let result = (|| {
        write_state_md(workspace, e)?;
        let mut log = std::fs::OpenOptions::new().create(true).append(true).open(workspace.join("loop-run-log.md"))?;
        let facts: Vec<String> = e.fields.iter().map(|(k, v)| format!("{k}={}", one_line(v))).collect();
        log.write_all(format!("- {} {} {} — {}\n", e.time, e.kind, one_line(&e.title), facts.join(", ")).as_bytes())?;
        Ok(())
    })();
    let _ = lock.unlock();
    result
}

fn one_line(s: &str) -> String {
    loopguard_secrets::Scanner::builtin().redact(&s.replace('\n', " "))
}

/// Inserts the escalation at the end of the blockers section of STATE.md (created if missing),
/// replacing the file atomically.
fn write_state_md(workspace: &Path, e: &Escalation) -> std::io::Result<()> {
    let file = workspace.join("STATE.md");
    let existing = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err),
    };
    let mut entry = format!("\n### {} — {}\n", e.time, one_line(&e.title));
    for (k, v) in &e.fields {
        entry.push_str(&format!("- {k}: `{}`\n", one_line(v)));
    }
    entry.push_str(&format!("- what a human must do: {}\n", e.todo));
    let text = insert_entry(&existing, &entry);
    let tmp = workspace.join(format!(".STATE.md.loopguard-tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &file)
}

/// The text with `entry` appended to the blockers section (added at the end when absent).
pub fn insert_entry(existing: &str, entry: &str) -> String {
    let Some(start) = existing.find(HEADING) else {
        let mut out = if existing.is_empty() { "# STATE\n".to_string() } else { existing.to_string() };
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(HEADING);
        out.push('\n');
        out.push_str(entry);
        return out;
    };
    let after_heading = start + HEADING.len();
    // The section ends at the next level-2 heading.
    let end = existing[after_heading..].find("\n## ").map_or(existing.len(), |i| after_heading + i + 1);
    let mut out = String::with_capacity(existing.len() + entry.len());
    out.push_str(existing[..end].trim_end_matches('\n'));
    out.push('\n');
    out.push_str(entry);
    if end < existing.len() {
        out.push('\n');
        out.push_str(&existing[end..]);
    }
    out
}

/// One entry of the blockers section of a STATE.md, as a human reads it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Blocker {
    /// The entry's heading (`time — title`).
    pub title: String,
    /// Its facts, as written.
    pub facts: Vec<String>,
    /// What a human must do.
    pub todo: Option<String>,
}

/// The entries of the blockers section of a STATE.md text (entries are `### ` headings; a
/// bounded number of them, the newest last).
pub fn blockers(text: &str) -> Vec<Blocker> {
    let Some(start) = text.find(HEADING) else { return Vec::new() };
    let rest = &text[start + HEADING.len()..];
    let section = rest.find("\n## ").map_or(rest, |i| &rest[..i]);
    let mut out: Vec<Blocker> = Vec::new();
    for line in section.lines() {
        if let Some(h) = line.strip_prefix("### ") {
            out.push(Blocker { title: h.trim().to_string(), facts: Vec::new(), todo: None });
        } else if let (Some(b), Some(fact)) = (out.last_mut(), line.strip_prefix("- ")) {
            match fact.strip_prefix("what a human must do: ") {
                Some(todo) => b.todo = Some(todo.to_string()),
                None => b.facts.push(fact.to_string()),
            }
        }
    }
    let skip = out.len().saturating_sub(200);
    out.split_off(skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_go_at_the_end_of_the_section_and_keep_the_rest() {
        let doc = "# STATE\n\nintro\n\n## ⚠️ Blockers & Escalations\n\n### old\n- x\n\n## Next\nkeep me\n";
        let out = insert_entry(doc, "\n### new\n- y\n");
        assert!(out.contains("### old\n- x\n\n### new\n- y\n"), "{out}");
        assert!(out.ends_with("## Next\nkeep me\n"), "{out}");
        assert!(out.starts_with("# STATE\n\nintro\n"));
        let fresh = insert_entry("", "\n### e\n");
        assert_eq!(fresh, "# STATE\n\n## ⚠️ Blockers & Escalations\n\n### e\n");
    }

    #[test]
    fn concurrent_escalations_lose_nothing() {
        let d = tempfile::tempdir().unwrap();
        let (state, ws) = (d.path().join("state"), d.path().join("ws"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("STATE.md"), "# STATE\n\n## Plan\n- a\n").unwrap();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (state, ws) = (state.clone(), ws.clone());
                std::thread::spawn(move || {
                    let e = Escalation {
                        time: format!("t{i}"),
                        title: "breaker stopped".into(),
                        kind: "FAILURE".into(),
                        fields: vec![("session".into(), format!("s{i}")), ("path".into(), format!("p{i}"))],
                        todo: "look".into(),
                    };
                    escalate(&state, &ws, &e).unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = std::fs::read_to_string(ws.join("STATE.md")).unwrap();
        for i in 0..8 {
            assert!(text.contains(&format!("- session: `s{i}`")), "{text}");
            assert!(text.contains(&format!("- path: `p{i}`")), "{text}");
        }
        assert!(text.contains("## Plan\n- a"));
        let log = std::fs::read_to_string(ws.join("loop-run-log.md")).unwrap();
        assert_eq!(log.lines().count(), 8);
        assert!(log.lines().all(|l| l.contains("FAILURE breaker stopped")), "{log}");
    }

    #[test]
    fn blockers_are_read_back_with_what_a_human_must_do() {
        let doc = insert_entry(
            "# STATE\n\n## Next\nkeep\n",
            "\n### t1 — stop\n- trigger: `x`\n- what a human must do: reset it\n",
        );
        let doc = insert_entry(&doc, "\n### t2 — review\n- what a human must do: look\n");
        let b = blockers(&doc);
        assert_eq!(b.len(), 2, "{doc}");
        assert_eq!(b[0].title, "t1 — stop");
        assert_eq!(b[0].facts, vec!["trigger: `x`".to_string()]);
        assert_eq!(b[0].todo.as_deref(), Some("reset it"));
        assert_eq!(b[1].todo.as_deref(), Some("look"));
        assert!(blockers("# nothing here").is_empty());
    }
}
