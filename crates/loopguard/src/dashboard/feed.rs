//! What the dashboard reads: the workspaces with an audit log in the state home, their recent
//! events (with each call's journal record), and the tail of every log as it grows.

use crate::calls::{self, CallRecord};
use crate::state::workspace_key;
use loopguard_audit::AuditEvent;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Longest run of new log bytes read in one poll (a log that grew more is read over several).
const MAX_READ: u64 = 4 << 20;

/// A workspace the dashboard shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Workspace {
    /// Its key (the audit log's name without `.jsonl`).
    pub key: String,
    /// Its root, when known (from a session start, the breaker's runs, or the command line).
    pub path: Option<PathBuf>,
    /// Its audit log.
    #[serde(skip)]
    pub log: PathBuf,
}

/// One event of the feed.
#[derive(Debug, Clone, Serialize)]
pub struct FeedItem {
    /// The workspace key.
    pub ws: String,
    /// The audit event as written.
    pub event: AuditEvent,
    /// The call's journal record, when it has one and it matches the event's hash.
    pub call: Option<CallRecord>,
}

/// The audit logs in the state home, each with its workspace when it can be told. `known` are
/// workspaces named on the command line.
pub fn workspaces(state: &Path, known: &[PathBuf], cache: &mut HashMap<String, Option<PathBuf>>) -> Vec<Workspace> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(state.join("audit")) else { return out };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(key) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else { continue };
        let key = key.to_string();
        let path = match cache.get(&key) {
            Some(Some(p)) => Some(p.clone()),
            _ => {
                let found = find_path(state, &key, &e.path(), known);
                cache.insert(key.clone(), found.clone());
                found
            }
        };
        out.push(Workspace { key, path, log: e.path() });
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// The workspace root of the log `key`: a path whose key is `key`, from the command line, the
/// log's session starts, or the breaker's runs.
fn find_path(state: &Path, key: &str, log: &Path, known: &[PathBuf]) -> Option<PathBuf> {
    let matches = |p: &Path| workspace_key(p) == key;
    if let Some(p) = known.iter().find(|p| matches(p)) {
        return Some(p.clone());
    }
    if let Ok(text) = std::fs::read_to_string(log) {
        for line in text.lines().filter(|l| l.contains("\"workspace\"")) {
            let Ok(ev) = AuditEvent::parse_line(line) else { continue };
            let ws = ev.details.as_ref().and_then(|d| d.get("workspace")).and_then(|w| w.as_str()).map(PathBuf::from);
            if let Some(ws) = ws.filter(|w| matches(w)) {
                return Some(ws);
            }
        }
    }
    let doc = crate::hot::read(state, key).ok()?;
    doc.runs.values().map(|r| PathBuf::from(&r.workspace)).find(|w| matches(w))
}

/// The last `limit` events of each workspace, oldest first, with their journal records.
pub fn recent(workspaces: &[Workspace], limit: usize) -> Vec<FeedItem> {
    let mut out = Vec::new();
    for w in workspaces {
        let Ok(events) = loopguard_audit::AuditLog::new(&w.log).tail(limit) else { continue };
        let journal = calls::read(&w.log);
        out.extend(events.into_iter().map(|event| FeedItem {
            call: journal.get(&event.seq).filter(|c| c.hash == event.hash).cloned(),
            ws: w.key.clone(),
            event,
        }));
    }
    out.sort_by(|a, b| a.event.time.cmp(&b.event.time));
    out
}

/// The journal record of one event, checked against the log's event at that position.
pub fn call(w: &Workspace, seq: u64) -> Option<(AuditEvent, Option<CallRecord>)> {
    let text = std::fs::read_to_string(&w.log).ok()?;
    let line = text.lines().nth(usize::try_from(seq).ok()?.checked_sub(1)?)?;
    let event = AuditEvent::parse_line(line).ok()?;
    let rec = calls::read(&w.log).remove(&seq).filter(|c| c.hash == event.hash);
    Some((event, rec))
}

/// Follows every log (and its journal) from where it was when the tail was warmed.
#[derive(Debug, Default)]
pub struct Tail {
    /// Bytes of each log already sent.
    logs: HashMap<PathBuf, u64>,
    /// Bytes of each journal already read, and the records not yet matched to an event.
    journals: HashMap<PathBuf, (u64, BTreeMap<u64, CallRecord>)>,
    /// Modification times of the breaker state files.
    states: HashMap<PathBuf, std::time::SystemTime>,
    /// Whether the offsets are current (someone is listening).
    pub warm: bool,
}

impl Tail {
    /// Starts following from the logs' current ends.
    pub fn warm(&mut self, state: &Path) {
        self.logs.clear();
        self.journals.clear();
        for (log, len) in logs(state) {
            let journal = calls::journal_path(&log);
            let jlen = std::fs::metadata(&journal).map_or(0, |m| m.len());
            self.journals.insert(journal, (jlen, BTreeMap::new()));
            self.logs.insert(log, len);
        }
        self.states = states(state);
        self.warm = true;
    }

    /// New events since the last poll, and whether any breaker state changed.
    pub fn poll(&mut self, state: &Path) -> (Vec<FeedItem>, bool) {
        let mut out = Vec::new();
        for (log, len) in logs(state) {
            let from = self.logs.get(&log).copied().unwrap_or(0);
            if len == from {
                continue;
            }
            // A log that shrank was replaced (or cut): start again from its beginning.
            let from = if len < from { 0 } else { from };
            let (text, read) = read_lines(&log, from, len);
            self.logs.insert(log.clone(), from + read);
            let key = log.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let journal = self.journal(&log);
            for line in text.lines() {
                let Ok(event) = AuditEvent::parse_line(line) else { continue };
                let call = journal.remove(&event.seq).filter(|c| c.hash == event.hash);
                out.push(FeedItem { ws: key.clone(), event, call });
            }
        }
        let now = states(state);
        let changed = now != self.states || !out.is_empty();
        self.states = now;
        (out, changed)
    }

    /// The unmatched records of a log's journal, read up to its end.
    fn journal(&mut self, log: &Path) -> &mut BTreeMap<u64, CallRecord> {
        let path = calls::journal_path(log);
        let entry = self.journals.entry(path.clone()).or_default();
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        let from = if len < entry.0 { 0 } else { entry.0 };
        if len > from {
            let (text, read) = read_lines(&path, from, len);
            entry.0 = from + read;
            for line in text.lines() {
                if let Ok(r) = serde_json::from_str::<CallRecord>(line) {
                    entry.1.insert(r.seq, r);
                }
            }
            // Records whose event never came (a failed append) do not pile up.
            while entry.1.len() > 4096 {
                entry.1.pop_first();
            }
        }
        &mut entry.1
    }
}

/// Every audit log with its length.
fn logs(state: &Path) -> Vec<(PathBuf, u64)> {
    let Ok(entries) = std::fs::read_dir(state.join("audit")) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.ends_with(".jsonl")))
        .filter_map(|e| Some((e.path(), e.metadata().ok()?.len())))
        .collect()
}

/// The breaker state files with their modification times.
fn states(state: &Path) -> HashMap<PathBuf, std::time::SystemTime> {
    let Ok(entries) = std::fs::read_dir(state.join("breaker")) else { return HashMap::new() };
    entries.flatten().filter_map(|e| Some((e.path(), e.metadata().ok()?.modified().ok()?))).collect()
}

/// The whole lines of `path` between `from` and `len` (at most [`MAX_READ`] bytes), and how many
/// bytes they span (a line still being written is left for the next poll).
fn read_lines(path: &Path, from: u64, len: u64) -> (String, u64) {
    let read = || -> std::io::Result<Vec<u8>> {
        let mut f = std::fs::File::open(path)?;
        f.seek(SeekFrom::Start(from))?;
        let mut buf = Vec::new();
        f.take((len - from).min(MAX_READ)).read_to_end(&mut buf)?;
        Ok(buf)
    };
    let Ok(mut buf) = read() else { return (String::new(), 0) };
    let whole = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    buf.truncate(whole);
    (String::from_utf8_lossy(&buf).into_owned(), whole as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loopguard_audit::{AuditLog, EventKind, NewEvent};

    #[test]
    fn the_tail_sends_only_new_whole_lines_and_notices_breaker_changes() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path();
        let log = AuditLog::new(state.join("audit/w-000000000000.jsonl"));
        log.append(NewEvent::new("old", EventKind::SessionStart)).unwrap();
        let mut tail = Tail::default();
        tail.warm(state);
        assert!(tail.poll(state).0.is_empty());
        log.append(NewEvent::new("s", EventKind::PreToolUse)).unwrap();
        // Half a line (a writer mid-write) waits for the next poll.
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(log.path()).unwrap();
        f.write_all(b"{\"v\":1").unwrap();
        let (items, changed) = tail.poll(state);
        assert_eq!(items.len(), 1);
        assert_eq!((items[0].ws.as_str(), items[0].event.seq), ("w-000000000000", 2));
        assert!(changed);
        assert!(tail.poll(state).0.is_empty());
        std::fs::create_dir_all(state.join("breaker")).unwrap();
        std::fs::write(state.join("breaker/w.state"), "x").unwrap();
        assert!(tail.poll(state).1, "a new breaker file is a change");
    }

    #[test]
    fn a_workspace_is_found_from_its_session_start() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("proj");
        std::fs::create_dir_all(&ws).unwrap();
        let log = crate::state::audit_log(dir.path(), &ws);
        let mut e = NewEvent::new("s", EventKind::SessionStart);
        e.details = Some(serde_json::json!({ "workspace": ws.display().to_string() }));
        log.append(e).unwrap();
        let mut cache = HashMap::new();
        let found = workspaces(dir.path(), &[], &mut cache);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path.as_deref(), Some(ws.as_path()));
        assert_eq!(found[0].key, workspace_key(&ws));
    }
}
