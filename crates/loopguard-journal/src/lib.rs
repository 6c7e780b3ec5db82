//! The step journal: before a tool call that may write runs, what it can destroy is copied into
//! a content-addressed store, so that the step can be undone byte for byte.
//!
//! One journal per workspace, in loopguard's state home (control plane: the sandbox hides it and
//! the gate protects it). Its directory holds:
//! - `objects/ab/cdef…`: file contents by SHA-256, deduplicated. Always copies, never hard links
//!   (an in-place write through a hard link would change the pre-image too);
//! - `steps.jsonl`: one line per event — a step and its pre-images, the state a step left behind
//!   (its post-state, recorded when the host reports the result), an undo;
//! - `lock`: the lock that serialises writers (hooks of parallel tool calls run at the same
//!   time); it holds the last step's number;
//! - `pending/`: per tool call not reported yet, its step and targets (for [`Journal::seal`]).
//!
//! What a step's pre-image holds is decided by the caller: the paths the call will write, create
//! or delete (a Write's file; the targets the shell analysis predicts for `rm`, `mv`, `>`,
//! `sed -i`, …). A directory target is kept whole, bounded by [`Limits`]; regenerable outputs
//! (`node_modules`, `target`, caches) are not kept — the journal records that it skipped them, and
//! undo leaves them to be rebuilt.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::{self, BufRead, Write};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

/// One path as it was before a step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// Did not exist: undo removes whatever the step put there.
    Absent {
        /// The path.
        path: PathBuf,
    },
    /// A regular file: its content is the object `sha256`.
    File {
        /// The path.
        path: PathBuf,
        /// The content's SHA-256 (hex), the object's name.
        sha256: String,
        /// Permission bits.
        mode: u32,
        /// Size in bytes.
        size: u64,
    },
    /// A symbolic link (never followed).
    Symlink {
        /// The path.
        path: PathBuf,
        /// Where it points.
        target: PathBuf,
    },
    /// A directory; its entries follow it in the step.
    Dir {
        /// The path.
        path: PathBuf,
        /// Permission bits.
        mode: u32,
    },
    /// Not kept (regenerable output, or not a file loopguard can copy: a socket, a device).
    Skipped {
        /// The path.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

impl Entry {
    /// The path this entry is about.
    pub fn path(&self) -> &Path {
        match self {
            Entry::Absent { path }
            | Entry::File { path, .. }
            | Entry::Symlink { path, .. }
            | Entry::Dir { path, .. }
            | Entry::Skipped { path, .. } => path,
        }
    }
}

/// What is at a path now, compact enough to compare (a post-state).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Nothing.
    Absent,
    /// A file with this SHA-256 and mode.
    File(String, u32),
    /// A symbolic link to this target.
    Symlink(PathBuf),
    /// A directory (its contents are not compared).
    Dir,
    /// Something else.
    Other,
}

/// Who took a step, and what it was.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StepMeta {
    /// Unix seconds.
    pub at: i64,
    /// The host's session id.
    pub session: String,
    /// The tool (`Bash`, `Write`, …).
    pub tool: String,
    /// The host's id of the tool call, to find the step again when its result comes.
    pub call: String,
    /// A short description (the command, the file).
    pub summary: String,
}

/// A recorded step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Step {
    /// Its number in this journal, from 1.
    pub id: u64,
    /// Who and what.
    #[serde(flatten)]
    pub meta: StepMeta,
    /// The paths the call was predicted to touch (after widening to a created parent).
    pub targets: Vec<PathBuf>,
    /// What they held before, parents before children.
    pub entries: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Step(Step),
    Post { step: u64, states: Vec<(PathBuf, State)> },
    Undone { steps: Vec<u64>, at: i64 },
}

/// A step as listed: whether it was undone, and the state it left, when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepView {
    /// The step.
    pub step: Step,
    /// Undone already.
    pub undone: bool,
    /// The state its targets were left in (recorded when the result came).
    pub post: Option<Vec<(PathBuf, State)>>,
}

/// Bounds on one step's pre-image: a step that would need more is refused a journal entry (and
/// the caller refuses or asks about the step: never run unprotected).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Files (and links and directories) in one step.
    pub max_entries: usize,
    /// Bytes of file content in one step.
    pub max_bytes: u64,
    /// Directory names that hold regenerable output: not kept.
    pub regenerable: Vec<String>,
}

impl Default for Limits {
    fn default() -> Self {
        // The copy is made inside the hook's deadline: bounded so that it fits.
        Limits {
            max_entries: 10_000,
            max_bytes: 128 * 1024 * 1024,
            regenerable: REGENERABLE.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// Output directories that tools rebuild by themselves.
pub const REGENERABLE: &[&str] = &[
    "node_modules",
    "target",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".gradle",
    ".next",
    ".turbo",
    ".parcel-cache",
    ".cache",
];

/// What went wrong.
#[derive(Debug)]
pub enum JournalError {
    /// A file operation failed.
    Io(PathBuf, io::Error),
    /// The step's pre-image would exceed the limits.
    TooLarge {
        /// Entries counted before stopping.
        entries: usize,
        /// Bytes counted before stopping.
        bytes: u64,
    },
    /// The journal's own files are damaged.
    Corrupt(String),
    /// Undo refused: these paths changed since the steps (by someone else).
    Conflict(Vec<PathBuf>),
    /// No step to undo.
    Nothing,
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            JournalError::TooLarge { entries, bytes } => write!(
                f,
                "the step's pre-image is too large to keep (more than {entries} files or {} MiB)",
                bytes / (1024 * 1024)
            ),
            JournalError::Corrupt(m) => write!(f, "the journal is damaged: {m}"),
            JournalError::Conflict(paths) => {
                let list: Vec<String> = paths.iter().take(5).map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "{} path(s) changed since the step by something else ({}{}); nothing was restored (--force restores anyway)",
                    paths.len(),
                    list.join(", "),
                    if paths.len() > 5 { ", …" } else { "" }
                )
            }
            JournalError::Nothing => write!(f, "there is no step to undo"),
        }
    }
}

impl std::error::Error for JournalError {}

fn io_at(p: &Path) -> impl FnOnce(io::Error) -> JournalError + '_ {
    move |e| JournalError::Io(p.to_path_buf(), e)
}

/// What an undo did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct UndoReport {
    /// The steps undone, newest first.
    pub steps: Vec<u64>,
    /// Files, links and directories put back.
    pub restored: Vec<PathBuf>,
    /// Paths the steps created, removed.
    pub removed: Vec<PathBuf>,
    /// Paths not kept (regenerable), left as they are.
    pub skipped: Vec<PathBuf>,
}

/// One workspace's journal.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    /// Opens (creating, owner-only) the journal in `dir`.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Journal, JournalError> {
        let dir = dir.into();
        fs::create_dir_all(dir.join("objects")).map_err(io_at(&dir))?;
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).map_err(io_at(&dir))?;
        Ok(Journal { dir })
    }

    /// The journal's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn locked(&self) -> Result<fs::File, JournalError> {
        let p = self.dir.join("lock");
        let f =
            fs::OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&p).map_err(io_at(&p))?;
        f.lock().map_err(io_at(&p))?;
        Ok(f)
    }

    fn append(&self, line: &Line) -> Result<(), JournalError> {
        let p = self.dir.join("steps.jsonl");
        let mut text = serde_json::to_string(line).map_err(|e| JournalError::Corrupt(e.to_string()))?;
        text.push('\n');
        let mut f = fs::OpenOptions::new().create(true).append(true).open(&p).map_err(io_at(&p))?;
        // No fsync: it would cost milliseconds inside the hook's deadline. A crash can lose the
        // last seconds of the journal; undo checks every object's hash, so a torn one is refused,
        // never restored.
        f.write_all(text.as_bytes()).map_err(io_at(&p))
    }

    fn lines(&self) -> Result<Vec<Line>, JournalError> {
        let p = self.dir.join("steps.jsonl");
        let f = match fs::File::open(&p) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(JournalError::Io(p, e)),
        };
        let mut out = Vec::new();
        for (n, line) in io::BufReader::new(f).lines().enumerate() {
            let line = line.map_err(io_at(&p))?;
            if line.trim().is_empty() {
                continue;
            }
            out.push(
                serde_json::from_str(&line)
                    .map_err(|e| JournalError::Corrupt(format!("steps.jsonl:{}: {e}", n + 1)))?,
            );
        }
        Ok(out)
    }

    /// Records the pre-image of `targets` (absolute paths) before a step runs. Targets outside
    /// every root in `roots` are not kept (the gate keeps writes inside them). A missing target
    /// whose parent is missing too is widened to the topmost missing directory below its root,
    /// so undo removes what the step created. Returns the step's number.
    pub fn record(
        &self,
        meta: StepMeta,
        targets: &[PathBuf],
        roots: &[PathBuf],
        limits: &Limits,
    ) -> Result<u64, JournalError> {
        let lock = self.locked()?;
        let mut widened: Vec<PathBuf> = Vec::new();
        for t in targets {
            let Some(root) = roots.iter().find(|r| t.starts_with(r) && t != *r) else { continue };
            let mut top = t.clone();
            while let Some(parent) = top.parent() {
                if parent == root.as_path() || parent.symlink_metadata().is_ok() {
                    break;
                }
                top = parent.to_path_buf();
            }
            if !widened.iter().any(|w| top.starts_with(w)) {
                widened.retain(|w| !w.starts_with(&top));
                widened.push(top);
            }
        }
        let mut cap = Capture { journal: self, limits, entries: Vec::new(), seen: HashSet::new(), bytes: 0 };
        for t in &widened {
            cap.capture(t)?;
        }
        // The lock file holds the last step's number (one file fewer to write per step).
        let seq = self.dir.join("lock");
        let mut last = String::new();
        io::Read::read_to_string(&mut &lock, &mut last).map_err(io_at(&seq))?;
        let id = match last.trim() {
            "" => 0,
            n => n.parse::<u64>().map_err(|e| JournalError::Corrupt(format!("lock: {e}")))?,
        } + 1;
        let entries = cap.entries;
        // Where `seal` finds the step of a call without reading the whole journal.
        let pending = serde_json::to_vec(&(id, &widened)).map_err(|e| JournalError::Corrupt(e.to_string()))?;
        let call = meta.call.clone();
        self.append(&Line::Step(Step { id, meta, targets: widened, entries }))?;
        {
            use std::os::unix::fs::FileExt;
            let text = format!("{id:020}");
            lock.write_all_at(text.as_bytes(), 0).map_err(io_at(&seq))?;
        }
        if !call.is_empty() {
            let dir = self.dir.join("pending");
            fs::create_dir_all(&dir).map_err(io_at(&dir))?;
            write_atomic(&dir.join(call_key(&call)), &pending, 0o600)?;
        }
        Ok(id)
    }

    /// Records the state the step of tool call `call` left its targets in (when the host reports
    /// the result). False when no step has that call id.
    pub fn seal(&self, call: &str) -> Result<bool, JournalError> {
        let pending = self.dir.join("pending").join(call_key(call));
        let bytes = match fs::read(&pending) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(JournalError::Io(pending, e)),
        };
        let (id, targets): (u64, Vec<PathBuf>) =
            serde_json::from_slice(&bytes).map_err(|e| JournalError::Corrupt(format!("{}: {e}", pending.display())))?;
        let _lock = self.locked()?;
        let states = targets.iter().map(|t| Ok((t.clone(), state_of(t)?))).collect::<Result<Vec<_>, _>>()?;
        self.append(&Line::Post { step: id, states })?;
        fs::remove_file(&pending).map_err(io_at(&pending))?;
        Ok(true)
    }

    /// Every step, oldest first.
    pub fn steps(&self) -> Result<Vec<StepView>, JournalError> {
        let mut views: BTreeMap<u64, StepView> = BTreeMap::new();
        for line in self.lines()? {
            match line {
                Line::Step(s) => {
                    views.insert(s.id, StepView { step: s, undone: false, post: None });
                }
                Line::Post { step, states } => {
                    if let Some(v) = views.get_mut(&step) {
                        v.post = Some(states);
                    }
                }
                Line::Undone { steps, .. } => {
                    for id in steps {
                        if let Some(v) = views.get_mut(&id) {
                            v.undone = true;
                        }
                    }
                }
            }
        }
        Ok(views.into_values().collect())
    }

    /// Undoes every step numbered `from` or later that is not undone yet, newest first. Refuses,
    /// changing nothing, when a path the steps touched is no longer as the newest of them left it
    /// (someone else changed it since), unless `force`; or when an object is missing or damaged.
    pub fn undo(&self, from: u64, force: bool, now: i64) -> Result<UndoReport, JournalError> {
        let _lock = self.locked()?;
        let mut todo: Vec<StepView> = self.steps()?.into_iter().filter(|v| v.step.id >= from && !v.undone).collect();
        if todo.is_empty() {
            return Err(JournalError::Nothing);
        }
        todo.reverse();
        if !force {
            let mut changed = Vec::new();
            let mut checked = HashSet::new();
            for v in &todo {
                for (path, want) in v.post.iter().flatten() {
                    if checked.insert(path.clone()) && state_of(path)? != *want {
                        changed.push(path.clone());
                    }
                }
            }
            if !changed.is_empty() {
                return Err(JournalError::Conflict(changed));
            }
        }
        // Every object is read and checked before anything changes, and no path is reached
        // through a link: recorded paths are resolved, so a folder on the way that is a link now
        // was swapped in since, and restoring through it would write (or delete) elsewhere.
        // Refused even with `force`.
        for v in &todo {
            for e in &v.step.entries {
                if let Entry::File { sha256, .. } = e {
                    self.verified_object(sha256)?;
                }
                if let Some(link) =
                    e.path().ancestors().skip(1).find(|a| a.symlink_metadata().is_ok_and(|m| m.is_symlink()))
                {
                    return Err(JournalError::Corrupt(format!(
                        "{} is now a symbolic link, so restoring {} would write through it; nothing was restored",
                        link.display(),
                        e.path().display()
                    )));
                }
            }
        }
        let mut report = UndoReport::default();
        for v in &todo {
            self.restore(&v.step, &mut report)?;
            report.steps.push(v.step.id);
        }
        self.append(&Line::Undone { steps: report.steps.clone(), at: now })?;
        Ok(report)
    }

    fn object_path(&self, sha256: &str) -> Result<PathBuf, JournalError> {
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(JournalError::Corrupt(format!("bad object name `{sha256}`")));
        }
        Ok(self.dir.join("objects").join(&sha256[..2]).join(&sha256[2..]))
    }

    fn verified_object(&self, sha256: &str) -> Result<Vec<u8>, JournalError> {
        let p = self.object_path(sha256)?;
        let bytes = fs::read(&p).map_err(io_at(&p))?;
        if hex(&Sha256::digest(&bytes)) != sha256 {
            return Err(JournalError::Corrupt(format!("object {sha256} does not match its hash")));
        }
        Ok(bytes)
    }

    /// Copies a file into the store; returns its hash and size.
    fn store(&self, path: &Path) -> Result<(String, u64), JournalError> {
        let bytes = fs::read(path).map_err(io_at(path))?;
        let sha = hex(&Sha256::digest(&bytes));
        let obj = self.object_path(&sha)?;
        if !obj.exists() {
            if let Some(parent) = obj.parent() {
                fs::create_dir_all(parent).map_err(io_at(parent))?;
            }
            write_atomic(&obj, &bytes, 0o600)?;
        }
        Ok((sha, bytes.len() as u64))
    }

    fn restore(&self, step: &Step, report: &mut UndoReport) -> Result<(), JournalError> {
        // Created by the step: removed (whole, for a directory).
        for e in &step.entries {
            if let Entry::Absent { path } = e
                && path.symlink_metadata().is_ok()
            {
                remove_any(path)?;
                report.removed.push(path.clone());
            }
        }
        for e in &step.entries {
            match e {
                Entry::Dir { path, .. } => {
                    if !path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                        if path.symlink_metadata().is_ok() {
                            remove_any(path)?;
                        }
                        fs::create_dir_all(path).map_err(io_at(path))?;
                    }
                }
                Entry::File { path, sha256, mode, .. } => {
                    let bytes = self.verified_object(sha256)?;
                    if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                        remove_any(path)?;
                    }
                    if let Some(parent) = path.parent() {
                        fs::create_dir_all(parent).map_err(io_at(parent))?;
                    }
                    write_atomic(path, &bytes, *mode)?;
                    report.restored.push(path.clone());
                }
                Entry::Symlink { path, target } => {
                    if path.symlink_metadata().is_ok() {
                        remove_any(path)?;
                    }
                    if let Some(parent) = path.parent() {
                        fs::create_dir_all(parent).map_err(io_at(parent))?;
                    }
                    symlink(target, path).map_err(io_at(path))?;
                    report.restored.push(path.clone());
                }
                Entry::Skipped { path, .. } => report.skipped.push(path.clone()),
                Entry::Absent { .. } => {}
            }
        }
        // A directory holds exactly what it held: what the step added inside is removed. Modes
        // last, children first (a read-only directory would refuse its children).
        let known: HashSet<&Path> = step.entries.iter().map(Entry::path).collect();
        for e in step.entries.iter().rev() {
            if let Entry::Dir { path, mode } = e {
                for child in fs::read_dir(path).map_err(io_at(path))? {
                    let child = child.map_err(io_at(path))?.path();
                    if !known.contains(child.as_path()) {
                        remove_any(&child)?;
                        report.removed.push(child);
                    }
                }
                fs::set_permissions(path, fs::Permissions::from_mode(*mode)).map_err(io_at(path))?;
                report.restored.push(path.clone());
            }
        }
        Ok(())
    }
}

struct Capture<'a> {
    journal: &'a Journal,
    limits: &'a Limits,
    entries: Vec<Entry>,
    seen: HashSet<PathBuf>,
    bytes: u64,
}

impl Capture<'_> {
    fn capture(&mut self, path: &Path) -> Result<(), JournalError> {
        if !self.seen.insert(path.to_path_buf()) {
            return Ok(());
        }
        if self.entries.len() >= self.limits.max_entries {
            return Err(JournalError::TooLarge { entries: self.entries.len(), bytes: self.bytes });
        }
        let meta = match path.symlink_metadata() {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.entries.push(Entry::Absent { path: path.to_path_buf() });
                return Ok(());
            }
            Err(e) => return Err(JournalError::Io(path.to_path_buf(), e)),
        };
        let mode = meta.permissions().mode() & 0o7777;
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = fs::read_link(path).map_err(io_at(path))?;
            self.entries.push(Entry::Symlink { path: path.to_path_buf(), target });
        } else if ft.is_file() {
            self.bytes += meta.len();
            if self.bytes > self.limits.max_bytes {
                return Err(JournalError::TooLarge { entries: self.entries.len(), bytes: self.bytes });
            }
            let (sha256, size) = self.journal.store(path)?;
            self.entries.push(Entry::File { path: path.to_path_buf(), sha256, mode, size });
        } else if ft.is_dir() {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if self.limits.regenerable.iter().any(|r| r == name) {
                self.entries.push(Entry::Skipped { path: path.to_path_buf(), why: "regenerable output".into() });
                return Ok(());
            }
            self.entries.push(Entry::Dir { path: path.to_path_buf(), mode });
            let mut children: Vec<PathBuf> = fs::read_dir(path)
                .map_err(io_at(path))?
                .map(|c| c.map(|c| c.path()))
                .collect::<Result<_, _>>()
                .map_err(io_at(path))?;
            children.sort();
            for c in children {
                self.capture(&c)?;
            }
        } else {
            self.entries.push(Entry::Skipped { path: path.to_path_buf(), why: "not a file loopguard copies".into() });
        }
        Ok(())
    }
}

/// What is at `path` now.
pub fn state_of(path: &Path) -> Result<State, JournalError> {
    let meta = match path.symlink_metadata() {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(State::Absent),
        Err(e) => return Err(JournalError::Io(path.to_path_buf(), e)),
    };
    let ft = meta.file_type();
    Ok(if ft.is_symlink() {
        State::Symlink(fs::read_link(path).map_err(io_at(path))?)
    } else if ft.is_file() {
        let bytes = fs::read(path).map_err(io_at(path))?;
        State::File(hex(&Sha256::digest(&bytes)), meta.permissions().mode() & 0o7777)
    } else if ft.is_dir() {
        State::Dir
    } else {
        State::Other
    })
}

fn remove_any(path: &Path) -> Result<(), JournalError> {
    let meta = path.symlink_metadata().map_err(io_at(path))?;
    if meta.is_dir() { fs::remove_dir_all(path) } else { fs::remove_file(path) }.map_err(io_at(path))
}

/// Writes `bytes` to a temporary file next to `path`, with `mode`, then renames it over `path`
/// (a reader sees the old file or the new one, never half of it).
fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), JournalError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.lg-{}", std::process::id()));
    let result = (|| {
        let mut f = fs::OpenOptions::new().write(true).create(true).truncate(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io_at(path))
}

/// A file name for a host's call id (any text): its SHA-256, shortened.
fn call_key(call: &str) -> String {
    hex(&Sha256::digest(call.as_bytes()))[..32].to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests;
