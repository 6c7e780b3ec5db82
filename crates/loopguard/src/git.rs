//! loopguard's own reading of git repositories the agent can write to: nothing of the repository
//! runs. Also the analysis' window on the working tree ([`GitWorktree`]): core runs no process.

use std::path::{Path, PathBuf};

/// A git command for loopguard's own reading of a repository the agent can write to: nothing of
/// the repository's runs — no hooks, no fsmonitor, no external diff, and every clean, smudge or
/// process filter it configures emptied (reading the config runs nothing); no optional locks, so
/// the index is not rewritten either. Callers add `--no-ext-diff --no-textconv` to diffs.
pub fn safe_git(dir: &Path) -> std::process::Command {
    let mut filters = Vec::new();
    let listed = std::process::Command::new("git")
        .args(["config", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    if let Ok(o) = listed {
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            if let Some(key) = line.split_whitespace().next() {
                filters.push("-c".to_string());
                filters.push(format!("{key}="));
            }
        }
    }
    let mut c = std::process::Command::new("git");
    c.current_dir(dir)
        .args(["--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "diff.external="])
        .args(filters)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .stdin(std::process::Stdio::null());
    c
}

/// The files `git status` reports as changed or untracked under `dir` (relative to `dir`), or
/// `None` when git cannot say (not a repository, git missing, bad output).
fn changed_files(dir: &Path) -> Option<Vec<String>> {
    let out = safe_git(dir)
        .args(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "."])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let top = safe_git(dir).args(["rev-parse", "--show-toplevel"]).output().ok()?;
    let top = PathBuf::from(String::from_utf8(top.stdout).ok()?.trim());
    let mut files = Vec::new();
    for entry in out.stdout.split(|b| *b == 0).filter(|e| e.len() > 3) {
        let rel = std::str::from_utf8(&entry[3..]).ok()?;
        files.push(top.join(rel).to_string_lossy().into_owned());
    }
    Some(files)
}

/// The working tree as git reports it, for the shell analysis (`git add -A` stages what
/// `git status` lists).
#[derive(Debug, Clone, Copy, Default)]
pub struct GitWorktree;

impl loopguard_core::Worktree for GitWorktree {
    fn changed_files(&self, dir: &Path) -> Option<Vec<String>> {
        changed_files(dir)
    }
}
