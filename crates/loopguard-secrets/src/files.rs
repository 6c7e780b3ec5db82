//! Scanning files (a parallel, .gitignore-aware walk) and git diffs (added lines only).

use crate::scanner::{Scanner, SecretFinding};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Files larger than this are skipped (and counted): they are not source.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A finding in a file.
#[derive(Debug, Clone, Serialize)]
pub struct FileFinding {
    /// The file (or `-` for stdin, or the diff's file).
    pub path: PathBuf,
    /// The finding; `line` is the line in that file.
    #[serde(flatten)]
    pub finding: SecretFinding,
}

/// What a scan looked at.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScanStats {
    /// Files scanned.
    pub files: u64,
    /// Bytes scanned.
    pub bytes: u64,
    /// Files skipped (too large, not UTF-8, unreadable).
    pub skipped: u64,
}

/// Whether a line carries an inline allow marker (`gitleaks:allow`, `loopguard:allow`).
fn allowed_inline(text: &str, f: &SecretFinding) -> bool {
    let start = text[..f.span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[f.span.end..].find('\n').map_or(text.len(), |i| f.span.end + i);
    let line = &text[start..end];
    line.contains("gitleaks:allow") || line.contains("loopguard:allow")
}

/// Scans one text, dropping findings on lines marked allowed.
pub fn scan_text(scanner: &Scanner, path: &Path, text: &str) -> Vec<FileFinding> {
    scanner
        .scan_in(text, Some(&path.to_string_lossy()))
        .into_iter()
        .filter(|f| !allowed_inline(text, f))
        .map(|finding| FileFinding { path: path.to_path_buf(), finding })
        .collect()
}

/// Walks `roots` in parallel (respecting .gitignore unless `all`), scanning every text file.
/// `progress` is called with the running byte count.
pub fn scan_paths(
    scanner: &Scanner,
    roots: &[PathBuf],
    all: bool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> (Vec<FileFinding>, ScanStats) {
    let findings = Mutex::new(Vec::new());
    let (files, bytes, skipped) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let Some((first, rest)) = roots.split_first() else { return (Vec::new(), ScanStats::default()) };
    let mut b = ignore::WalkBuilder::new(first);
    for r in rest {
        b.add(r);
    }
    b.standard_filters(!all)
        .hidden(false)
        .git_ignore(!all)
        .threads(std::thread::available_parallelism().map_or(2, |n| n.get()));
    b.build_parallel().run(|| {
        Box::new(|entry| {
            let Ok(e) = entry else {
                skipped.fetch_add(1, Ordering::Relaxed);
                return ignore::WalkState::Continue;
            };
            if e.path().components().any(|c| c.as_os_str() == ".git") {
                return ignore::WalkState::Continue;
            }
            if !e.file_type().is_some_and(|t| t.is_file()) {
                return ignore::WalkState::Continue;
            }
            if e.metadata().map_or(true, |m| m.len() > MAX_FILE_BYTES) {
                skipped.fetch_add(1, Ordering::Relaxed);
                return ignore::WalkState::Continue;
            }
            match std::fs::read(e.path()) {
                Ok(data) if !data.contains(&0) => {
                    let text = String::from_utf8_lossy(&data);
                    let found = scan_text(scanner, e.path(), &text);
                    let n = files.fetch_add(1, Ordering::Relaxed) + 1;
                    let b = bytes.fetch_add(data.len() as u64, Ordering::Relaxed) + data.len() as u64;
                    progress(n, b);
                    if !found.is_empty()
                        && let Ok(mut all) = findings.lock()
                    {
                        all.extend(found);
                    }
                }
                _ => {
                    skipped.fetch_add(1, Ordering::Relaxed);
                }
            }
            ignore::WalkState::Continue
        })
    });
    let mut out = findings.into_inner().unwrap_or_default();
    out.sort_by(|a, b| a.path.cmp(&b.path).then(a.finding.span.start.cmp(&b.finding.span.start)));
    let stats = ScanStats { files: files.into_inner(), bytes: bytes.into_inner(), skipped: skipped.into_inner() };
    (out, stats)
}

/// Scans the lines a unified diff adds (`+` lines), reporting each finding at its line in the
/// new file. Consecutive added lines are scanned together, so a key spread over lines (a PEM
/// block, a name on one line and its value on the next) is found as it would be in the file.
pub fn scan_diff(scanner: &Scanner, diff: &str) -> Vec<FileFinding> {
    let mut out = Vec::new();
    let mut file = PathBuf::new();
    let mut new_line = 0usize;
    // The run of added lines being collected: its text and its first line in the new file.
    let mut run = String::new();
    let mut run_start = 0usize;
    let flush = |run: &mut String, start: usize, file: &Path, out: &mut Vec<FileFinding>| {
        if !run.is_empty() {
            for mut f in scan_text(scanner, file, run) {
                f.finding.line = start + f.finding.line - 1;
                out.push(f);
            }
            run.clear();
        }
    };
    for line in diff.lines() {
        if let Some(added) = line.strip_prefix('+').filter(|_| !line.starts_with("+++ ")) {
            if run.is_empty() {
                run_start = new_line;
            }
            run.push_str(added);
            run.push('\n');
            new_line += 1;
            continue;
        }
        flush(&mut run, run_start, &file, &mut out);
        if let Some(f) = line.strip_prefix("+++ ") {
            file = PathBuf::from(f.strip_prefix("b/").unwrap_or(f));
        } else if line.starts_with("@@") {
            // @@ -a,b +c,d @@
            new_line = line
                .split_whitespace()
                .find(|w| w.starts_with('+'))
                .and_then(|w| w[1..].split(',').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
        } else if !line.starts_with('-')
            && !line.starts_with('\\')
            && !line.starts_with("diff ")
            && !line.starts_with("index ")
            && !line.starts_with("commit ")
        {
            new_line += 1;
        }
    }
    flush(&mut run, run_start, &file, &mut out);
    out
}
