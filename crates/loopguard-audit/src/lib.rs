//! loopguard's audit trail: one JSONL file per workspace, each line an [`AuditEvent`] whose
//! `hash` is SHA-256 over its own canonical bytes (which include the previous line's hash).
//! A separate head file anchors the last `(seq, hash)`, so cutting lines off the end is detected
//! too. Appends from many processes are serialised with an exclusive file lock.
//!
//! ```
//! use loopguard_audit::{AuditLog, EventKind, NewEvent};
//! let dir = tempfile::tempdir().unwrap();
//! let log = AuditLog::new(dir.path().join("ws.jsonl"));
//! log.append(NewEvent::new("s1", EventKind::SessionStart)).unwrap();
//! log.append(NewEvent::new("s1", EventKind::SessionEnd)).unwrap();
//! assert_eq!(log.verify().unwrap().events, 2);
//! ```

mod checkpoint;
mod event;
mod verify;

pub use checkpoint::{Checkpoint, merkle_root, sign_bytes, signing_key, verify_signature, verifying_key};
pub use ed25519_dalek::{SigningKey, VerifyingKey};

pub use event::{AuditEvent, EventKind, GENESIS_HASH, NewEvent, hex};
pub use verify::{Problem, VerifyReport};

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Longest line an event may serialise to.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Why an audit operation failed.
#[derive(Debug)]
pub enum AuditError {
    /// The file system refused.
    Io(std::io::Error),
    /// The log's last line is not a complete, valid event, so nothing can be chained to it.
    BrokenTail(String),
    /// The event is larger than [`MAX_LINE_BYTES`].
    TooLarge(usize),
}

impl fmt::Display for AuditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuditError::Io(e) => write!(f, "audit log I/O error: {e}"),
            AuditError::BrokenTail(why) => write!(f, "audit log tail is broken ({why}); run `loopguard audit verify`"),
            AuditError::TooLarge(n) => {
                write!(f, "audit event of {n} bytes exceeds {MAX_LINE_BYTES}")
            }
        }
    }
}

impl std::error::Error for AuditError {}

impl From<std::io::Error> for AuditError {
    fn from(e: std::io::Error) -> Self {
        AuditError::Io(e)
    }
}

/// One audit log file and its head anchor (`<log>.head`).
#[derive(Debug, Clone)]
pub struct AuditLog {
    path: PathBuf,
    head: PathBuf,
    fsync: bool,
}

impl AuditLog {
    /// The log at `path`; its head anchor sits beside it.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let mut head = path.clone().into_os_string();
        head.push(".head");
        AuditLog { path, head: PathBuf::from(head), fsync: false }
    }

    /// Also fsync the log and head after each append (survives power loss, costs milliseconds).
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The head anchor file.
    pub fn head_path(&self) -> &Path {
        &self.head
    }

    /// Appends one event, chained to the last. Holds an exclusive lock on the log for the whole
    /// read-tail, write, update-head sequence, so concurrent appenders never fork the chain.
    pub fn append(&self, new: NewEvent) -> Result<AuditEvent, AuditError> {
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir)?;
        }
        let mut file = OpenOptions::new().read(true).append(true).create(true).mode(0o600).open(&self.path)?;
        file.lock()?;
        let result = self.append_locked(&mut file, new);
        let _ = file.unlock();
        result
    }

    fn append_locked(&self, file: &mut File, new: NewEvent) -> Result<AuditEvent, AuditError> {
        let (seq, prev_hash) = match last_line(file)? {
            None => (1, GENESIS_HASH.to_string()),
            Some(line) => {
                let (seq, hash) = AuditEvent::tail_link(&line).map_err(AuditError::BrokenTail)?;
                (seq + 1, hash)
            }
        };
        let event = AuditEvent::seal(new, seq, prev_hash);
        let mut line = event.to_line();
        if line.len() > MAX_LINE_BYTES {
            return Err(AuditError::TooLarge(line.len()));
        }
        line.push('\n');
        file.write_all(line.as_bytes())?;
        if self.fsync {
            file.sync_data()?;
        }
        self.write_head(event.seq, &event.hash)?;
        Ok(event)
    }

    /// Overwrites the head anchor in place: one small write at offset 0 of a fixed-size record
    /// (cheaper than write-and-rename, which costs a journaled metadata update per call). Only
    /// ever written under the log's lock.
    fn write_head(&self, seq: u64, hash: &str) -> Result<(), AuditError> {
        use std::os::unix::fs::FileExt;
        let f = OpenOptions::new().write(true).create(true).truncate(false).mode(0o600).open(&self.head)?;
        let record = format!("{seq:020} {hash}\n");
        f.write_all_at(record.as_bytes(), 0)?;
        if self.fsync {
            f.sync_data()?;
        }
        Ok(())
    }

    /// Checks the whole chain and the head anchor. `Ok` carries the report (which may list a
    /// problem); `Err` only when the files cannot be read at all.
    pub fn verify(&self) -> Result<VerifyReport, AuditError> {
        verify::verify(&self.path, &self.head)
    }

    /// The last `n` events (fewer if the log is shorter). Lines that do not parse are skipped;
    /// `verify` is the tool for finding them.
    pub fn tail(&self, n: usize) -> Result<Vec<AuditEvent>, AuditError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.len().saturating_sub(n);
        Ok(lines[start..].iter().filter_map(|l| AuditEvent::parse_line(l).ok()).collect())
    }
}

/// Creates a directory (and parents) readable only by the owner.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// The last complete line of the file, or `None` when it is empty. A file that does not end in
/// a newline has a torn last write: that is an error, not something to build on.
fn last_line(file: &mut File) -> Result<Option<String>, AuditError> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(None);
    }
    let window = len.min((MAX_LINE_BYTES + 1) as u64);
    file.seek(SeekFrom::Start(len - window))?;
    let mut buf = Vec::with_capacity(window as usize);
    Read::by_ref(file).take(window).read_to_end(&mut buf)?;
    if buf.last() != Some(&b'\n') {
        return Err(AuditError::BrokenTail("last line is incomplete".into()));
    }
    let body = &buf[..buf.len() - 1];
    let start = match body.iter().rposition(|&b| b == b'\n') {
        Some(i) => i + 1,
        None if window == len => 0,
        None => return Err(AuditError::BrokenTail("last line is too long".into())),
    };
    String::from_utf8(body[start..].to_vec())
        .map(Some)
        .map_err(|_| AuditError::BrokenTail("last line is not UTF-8".into()))
}

#[cfg(test)]
mod tests;
