//! Open-session markers, so that a session that died without a SessionEnd is closed (with a
//! recovery marker in the audit log) by the next SessionStart in the same workspace.
//!
//! A marker records the host process (the nearest ancestor of the hook that is not a shell) and
//! its start time; a session is only closed by another when that process is gone, so two live
//! sessions in one workspace never close each other.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a marker file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// Host session id.
    pub session: String,
    /// When the marker was written (RFC 3339).
    pub started: String,
    /// The host process, when known.
    pub host: Option<HostProcess>,
}

/// A process identified by pid and start time (so a reused pid is not mistaken for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostProcess {
    /// Process id.
    pub pid: u32,
    /// Start time in clock ticks since boot (field 22 of /proc/PID/stat).
    pub start: u64,
}

/// `(ppid, start time, command name)` of a process, from /proc.
fn proc_stat(pid: u32) -> Option<(u32, u64, String)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = text.get(close + 2..)?.split(' ').collect();
    // After "pid (comm) ": state=0, ppid=1, …, starttime=19.
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start, comm))
}

impl HostProcess {
    /// The hook's host: the parent, skipping shells the host may have used to start the hook.
    pub fn of_current() -> Option<HostProcess> {
        let mut pid = std::os::unix::process::parent_id();
        for _ in 0..4 {
            let (ppid, start, comm) = proc_stat(pid)?;
            if !matches!(comm.as_str(), "sh" | "bash" | "dash" | "zsh") || ppid <= 1 {
                return Some(HostProcess { pid, start });
            }
            pid = ppid;
        }
        None
    }

    /// Whether this very process is still running.
    pub fn is_alive(&self) -> bool {
        proc_stat(self.pid).is_some_and(|(_, start, _)| start == self.start)
    }
}

/// The marker directory of one workspace.
#[derive(Debug, Clone)]
pub struct Sessions {
    dir: PathBuf,
}

/// A file-name-safe form of a session id (hashed when it has other characters).
fn file_name(session: &str) -> String {
    let safe = !session.is_empty()
        && session.len() <= 128
        && session.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if safe { format!("{session}.json") } else { format!("h-{}.json", crate::state::sha256_hex(session.as_bytes())) }
}

impl Sessions {
    /// Markers under `<state home>/sessions/<workspace key>/`.
    pub fn new(state_home: &Path, workspace: &Path) -> Self {
        Sessions { dir: state_home.join("sessions").join(crate::state::workspace_key(workspace)) }
    }

    fn path(&self, session: &str) -> PathBuf {
        self.dir.join(file_name(session))
    }

    /// Records a session as open (idempotent). Returns whether the marker is new. `host` is
    /// only called when the marker is new (it reads /proc).
    pub fn open(&self, session: &str, host: impl FnOnce() -> Option<HostProcess>) -> std::io::Result<bool> {
        let path = self.path(session);
        if path.exists() {
            return Ok(false);
        }
        let host = host();
        loopguard_audit::create_private_dir(&self.dir)?;
        let marker = Marker { session: session.to_string(), started: jiff::Timestamp::now().to_string(), host };
        let tmp = self.dir.join(format!(".{}.tmp{}", file_name(session), std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec(&marker).map_err(std::io::Error::other)?)?;
        std::fs::rename(&tmp, &path)?;
        Ok(true)
    }

    /// Removes a session's marker. A missing marker is fine.
    pub fn close(&self, session: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.path(session)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Open sessions other than `current` whose host process is gone (or unknown). Unreadable
    /// markers count as abandoned: they are closed rather than left open forever.
    pub fn abandoned(&self, current: &str) -> std::io::Result<Vec<Marker>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in entries {
            let path = entry?.path();
            if path.extension().is_none_or(|e| e != "json")
                || path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                continue;
            }
            let marker = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Marker>(&b).ok())
                .unwrap_or_else(|| Marker {
                    session: path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
                    started: String::new(),
                    host: None,
                });
            if marker.session == current {
                continue;
            }
            if marker.host.is_none_or(|h| !h.is_alive()) {
                out.push(marker);
            }
        }
        out.sort_by(|a, b| a.started.cmp(&b.started));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_open_close_and_dead_hosts_are_abandoned() {
        let d = tempfile::tempdir().unwrap();
        let s = Sessions::new(d.path(), Path::new("/ws"));
        assert!(s.open("a", || None).unwrap());
        assert!(!s.open("a", || None).unwrap());
        let me = HostProcess { pid: std::process::id(), start: proc_stat(std::process::id()).unwrap().1 };
        assert!(me.is_alive());
        s.open("live", || Some(me)).unwrap();
        let reused_pid = HostProcess { pid: me.pid, start: me.start + 1 };
        s.open("dead", || Some(reused_pid)).unwrap();
        let mut gone: Vec<String> = s.abandoned("a").unwrap().into_iter().map(|m| m.session).collect();
        gone.sort();
        assert_eq!(gone, ["dead"]);
        let mut gone: Vec<String> = s.abandoned("new").unwrap().into_iter().map(|m| m.session).collect();
        gone.sort();
        assert_eq!(gone, ["a", "dead"]);
        s.close("a").unwrap();
        s.close("a").unwrap();
        assert_eq!(s.abandoned("x").unwrap().len(), 1);
    }

    #[test]
    fn odd_session_ids_are_hashed_into_safe_names() {
        assert_eq!(file_name("abc-123"), "abc-123.json");
        assert!(file_name("../../etc/passwd").starts_with("h-"));
        assert!(file_name("").starts_with("h-"));
    }
}
