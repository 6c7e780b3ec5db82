//! The call journal: for each decided tool call, what it was (its action, redacted) and why it
//! was decided so (each reason with its message and remedy), keyed by the audit event's position
//! and hash. The audit log itself holds only a hash of the input (it is append-only and signed:
//! a secret the redactor missed could never be taken out of it); the journal sits beside it
//! (`audit/<log>.jsonl.calls`, 0600), is bounded (one rotation at [`MAX_BYTES`]) and may be
//! deleted without breaking anything. The dashboard reads it to show a call's input and reasons,
//! and checks each entry against the chain (same `seq`, same `hash`).

use loopguard_audit::{AuditEvent, AuditLog};
use loopguard_core::{Action, Change, Decision};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Size at which the journal is rotated (the previous one is kept as `.calls.1`).
pub const MAX_BYTES: u64 = 8 << 20;
/// Longest text kept per field (longer ones are cut, marked with `…`).
pub const MAX_TEXT: usize = 4096;

/// One decided call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The audit event's position.
    pub seq: u64,
    /// The audit event's hash.
    pub hash: String,
    /// The host's tool name.
    pub tool: String,
    /// What the call does, redacted.
    pub action: ActionView,
    /// Every reason behind the decision, strictest first (messages redacted).
    pub reasons: Vec<ReasonView>,
}

/// A call's action, host-neutral and redacted.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ActionView {
    /// shell, write, patch, read, search, fetch, web-search, mcp, agent, meta, invalid, unknown.
    pub kind: String,
    /// The command line of a shell call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Files the call reads or writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The URL of a fetch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `server/tool` of an MCP call, or what was wrong with an invalid input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One reason, as the agent was told it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonView {
    /// Its code.
    pub code: String,
    /// allow / ask / deny.
    pub verdict: String,
    /// What was found.
    pub message: String,
    /// What would make the call pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remedy: Option<String>,
    /// The path or target it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// The journal beside an audit log.
pub fn journal_path(log: &Path) -> PathBuf {
    let mut p = log.as_os_str().to_os_string();
    p.push(".calls");
    PathBuf::from(p)
}

impl ActionView {
    /// The view of an action (not yet redacted).
    pub fn of(action: &Action) -> ActionView {
        let mut v = ActionView { kind: kind_name(action).to_string(), ..Default::default() };
        match action {
            Action::Shell { command } => v.command = Some(command.clone()),
            Action::WriteFile { .. } | Action::Patch { .. } => {
                v.paths = action.file_changes().into_iter().map(|(p, _)| p.to_string()).collect();
                if let Some((_, Change::Delete)) = action.file_changes().first() {
                    v.detail = Some("delete".into());
                }
            }
            Action::ReadFile { path } | Action::Search { path, .. } => v.paths.extend(path.clone()),
            Action::Fetch { url } => v.url = url.clone(),
            Action::Mcp { server, tool } => v.detail = Some(format!("{server}/{tool}")),
            Action::Invalid { problem, .. } => v.detail = Some(problem.clone()),
            Action::WebSearch | Action::Agent | Action::Meta | Action::Unknown => {}
        }
        v
    }
}

fn kind_name(action: &Action) -> &'static str {
    match action {
        Action::Shell { .. } => "shell",
        Action::WriteFile { .. } => "write",
        Action::Patch { .. } => "patch",
        Action::ReadFile { .. } => "read",
        Action::Search { .. } => "search",
        Action::Fetch { .. } => "fetch",
        Action::WebSearch => "web-search",
        Action::Mcp { .. } => "mcp",
        Action::Agent => "agent",
        Action::Meta => "meta",
        Action::Invalid { .. } => "invalid",
        Action::Unknown => "unknown",
    }
}

impl CallRecord {
    /// The record of a decided call, every text redacted and bounded.
    pub fn new(sealed: &AuditEvent, tool: &str, action: &Action, decision: &Decision) -> CallRecord {
        let reasons = decision
            .reasons()
            .iter()
            .map(|r| ReasonView {
                code: r.code.clone(),
                verdict: r.verdict.as_str().to_string(),
                message: r.message.clone(),
                remedy: r.remedy.clone(),
                target: r.target.clone(),
            })
            .collect();
        let raw = CallRecord {
            seq: sealed.seq,
            hash: sealed.hash.clone(),
            tool: bounded(tool),
            action: ActionView::of(action),
            reasons,
        };
        raw.redacted()
    }

    /// The same record with every text redacted and cut to [`MAX_TEXT`].
    fn redacted(self) -> CallRecord {
        let scanner = loopguard_secrets::Scanner::builtin();
        let clean = |s: &str| bounded(&scanner.redact(s));
        let opt = |s: &Option<String>| s.as_deref().map(clean);
        CallRecord {
            action: ActionView {
                kind: self.action.kind,
                command: opt(&self.action.command),
                paths: self.action.paths.iter().map(|p| clean(p)).collect(),
                url: opt(&self.action.url),
                detail: opt(&self.action.detail),
            },
            reasons: self
                .reasons
                .into_iter()
                .map(|r| ReasonView { message: clean(&r.message), remedy: opt(&r.remedy), target: opt(&r.target), ..r })
                .collect(),
            ..self
        }
    }
}

fn bounded(s: &str) -> String {
    if s.len() <= MAX_TEXT {
        return s.to_string();
    }
    let mut end = MAX_TEXT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Appends a record to the journal of `log` (best effort: the journal is not evidence, so a
/// failed write does not fail the call; the audit event already holds the decision).
///
/// Rotation is decided under the journal's own lock and on the file actually open: a writer
/// that finds the name now points at another file (someone rotated in between) opens it again,
/// so two hooks never rotate twice or write into a file that was just moved aside.
pub fn append(log: &AuditLog, record: &CallRecord) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let path = journal_path(log.path());
    let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    line.push(b'\n');
    for _ in 0..3 {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(&path)?;
        f.lock()?;
        let open = f.metadata()?;
        let named = std::fs::metadata(&path)?;
        if (open.dev(), open.ino()) != (named.dev(), named.ino()) {
            continue;
        }
        if open.len() >= MAX_BYTES {
            let mut old = path.as_os_str().to_os_string();
            old.push(".1");
            std::fs::rename(&path, PathBuf::from(old))?;
            continue;
        }
        // One write of one line with O_APPEND, under the lock.
        return f.write_all(&line);
    }
    Err(std::io::Error::other("the call journal kept changing under this writer"))
}

/// The records of a journal (and its rotated predecessor) by audit position. Lines that do not
/// parse are skipped: the journal is a convenience, the audit log is the record.
pub fn read(log: &Path) -> std::collections::BTreeMap<u64, CallRecord> {
    let path = journal_path(log);
    let mut old = path.as_os_str().to_os_string();
    old.push(".1");
    let mut out = std::collections::BTreeMap::new();
    for p in [PathBuf::from(old), path] {
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        for line in text.lines() {
            if let Ok(r) = serde_json::from_str::<CallRecord>(line) {
                out.insert(r.seq, r);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard_audit::{EventKind, NewEvent};
    use loopguard_core::{Reason, RiskLevel, Verdict};

    #[test]
    fn a_record_is_redacted_bounded_and_read_back_by_position() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().join("audit/w.jsonl"));
        let sealed = log.append(NewEvent::new("s", EventKind::PreToolUse)).unwrap();
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let action =
            Action::Shell { command: format!("curl -H 'Authorization: token {secret}' x; {}", "y".repeat(9000)) };
        let decision = Decision::fail_closed("internal-error", format!("saw {secret}"))
            .escalate_to_deny(Reason::new("x", Verdict::Deny, RiskLevel::High, "m").with_remedy("r"));
        let rec = CallRecord::new(&sealed, "Bash", &action, &decision);
        append(&log, &rec).unwrap();
        let text = std::fs::read_to_string(journal_path(log.path())).unwrap();
        assert!(!text.contains(secret), "{text}");
        let back = read(log.path());
        let r = &back[&sealed.seq];
        assert_eq!(r.hash, sealed.hash);
        assert_eq!(r.action.kind, "shell");
        let cmd = r.action.command.as_deref().unwrap();
        assert!(cmd.ends_with('…') && cmd.len() <= MAX_TEXT + 3, "{}", cmd.len());
        assert_eq!(r.reasons.len(), 2);
        assert!(r.reasons.iter().any(|x| x.remedy.as_deref() == Some("r")));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(journal_path(log.path())).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_full_journal_is_rotated_once_and_nothing_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().join("audit/w.jsonl"));
        let sealed = log.append(NewEvent::new("s", EventKind::PreToolUse)).unwrap();
        let rec =
            CallRecord::new(&sealed, "Bash", &Action::Shell { command: "ls".into() }, &Decision::fail_closed("x", "y"));
        let path = journal_path(log.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, vec![b'\n'; MAX_BYTES as usize]).unwrap();
        append(&log, &rec).unwrap();
        append(&log, &rec).unwrap();
        let mut old = path.as_os_str().to_os_string();
        old.push(".1");
        assert_eq!(std::fs::metadata(PathBuf::from(old)).unwrap().len(), MAX_BYTES, "the full one kept as .1");
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2, "both records in the new one");
        assert_eq!(read(log.path()).len(), 1, "read by position");
    }

    #[test]
    fn views_name_each_kind_of_action() {
        let w = Action::WriteFile { path: "/w/a".into(), change: Change::Delete };
        let v = ActionView::of(&w);
        assert_eq!(
            (v.kind.as_str(), v.paths.as_slice(), v.detail.as_deref()),
            ("write", &["/w/a".to_string()][..], Some("delete"))
        );
        let m = ActionView::of(&Action::Mcp { server: "gh".into(), tool: "create".into() });
        assert_eq!(m.detail.as_deref(), Some("gh/create"));
        assert_eq!(ActionView::of(&Action::Fetch { url: Some("https://x".into()) }).url.as_deref(), Some("https://x"));
    }
}
