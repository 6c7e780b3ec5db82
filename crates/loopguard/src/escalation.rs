//! Holds and escalations: when a denylisted path is touched, the run is put on hold (a marker in
//! the state home that makes the gate deny every write) and a human is told, in STATE.md at the
//! repository root and in loop-run-log.md. Concurrent sessions escalate under one lock per
//! workspace; STATE.md is replaced atomically, the log is appended.

use crate::state::workspace_key;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The heading escalations go under.
pub const HEADING: &str = "## ⚠️ Blockers & Escalations";

/// A run on hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    /// When it was placed (RFC 3339).
    pub time: String,
    /// The session that touched the path.
    pub session: String,
    /// The tool call.
    pub tool: String,
    /// Why (the denylist finding's message).
    pub reason: String,
}

fn hold_path(state: &Path, workspace: &Path) -> PathBuf {
    state.join("holds").join(format!("{}.json", workspace_key(workspace)))
}

fn lock_path(state: &Path, workspace: &Path) -> PathBuf {
    state.join("locks").join(format!("{}.lock", workspace_key(workspace)))
}

/// The hold on a workspace, if any. An unreadable hold file counts as a hold (fail closed).
pub fn current(state: &Path, workspace: &Path) -> Option<Hold> {
    match std::fs::read(hold_path(state, workspace)) {
        Ok(bytes) => Some(serde_json::from_slice(&bytes).unwrap_or_else(|_| Hold {
            time: String::new(),
            session: String::new(),
            tool: String::new(),
            reason: "the hold file is unreadable; a human must inspect it".into(),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Hold {
            time: String::new(),
            session: String::new(),
            tool: String::new(),
            reason: format!("the hold file cannot be read ({e})"),
        }),
    }
}

/// Removes the hold (a human act). Returns the hold that was removed.
pub fn release(state: &Path, workspace: &Path) -> std::io::Result<Option<Hold>> {
    let hold = current(state, workspace);
    match std::fs::remove_file(hold_path(state, workspace)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(hold),
    }
}

/// Places the hold and writes the escalation. Holds the workspace lock throughout.
pub fn escalate(state: &Path, workspace: &Path, hold: &Hold, path: &str, rule: &str) -> std::io::Result<()> {
    loopguard_audit::create_private_dir(&state.join("locks"))?;
    loopguard_audit::create_private_dir(&state.join("holds"))?;
    let lock =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(lock_path(state, workspace))?;
    lock.lock()?;
    let result = (|| {
        let target = hold_path(state, workspace);
        if !target.exists() {
            let tmp = target.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec_pretty(hold).map_err(std::io::Error::other)?)?;
            std::fs::rename(&tmp, &target)?;
        }
        write_state_md(workspace, hold, path, rule)?;
        let mut log = std::fs::OpenOptions::new().create(true).append(true).open(workspace.join("loop-run-log.md"))?;
        log.write_all(
            format!(
                "- {} FAILURE run on hold — {} in session {} ({}): {}\n",
                hold.time,
                hold.tool,
                hold.session,
                "path-denylisted",
                one_line(&hold.reason)
            )
            .as_bytes(),
        )?;
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
fn write_state_md(workspace: &Path, hold: &Hold, path: &str, rule: &str) -> std::io::Result<()> {
    let file = workspace.join("STATE.md");
    let existing = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let entry = format!(
        "\n### {} — denylisted path touched (path-denylisted)\n- session: `{}`\n- tool: `{}`\n- path: `{}`\n- rule: denylist pattern `{}`\n- what a human must do: review the attempted change (the call was denied), then release the hold with `loopguard hold release --reason \"…\"`. Until then every write in this workspace is denied.\n",
        hold.time,
        hold.session,
        hold.tool,
        Path::new(path).strip_prefix(workspace).map_or_else(|_| path.to_string(), |p| p.display().to_string()),
        rule,
    );
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
                    let hold = Hold {
                        time: format!("t{i}"),
                        session: format!("s{i}"),
                        tool: "Write".into(),
                        reason: format!("r{i}"),
                    };
                    escalate(&state, &ws, &hold, &format!("p{i}"), ".env").unwrap();
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
        assert!(current(&state, &ws).is_some());
        assert!(release(&state, &ws).unwrap().is_some());
        assert!(current(&state, &ws).is_none());
    }
}
