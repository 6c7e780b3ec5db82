//! Shared by core's integration tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

/// The working tree as plain `git status` reports it (the product's own, hardened reader lives in
/// the loopguard crate; here the repositories are the tests' own).
#[derive(Debug)]
pub struct GitStatus;

impl loopguard_core::Worktree for GitStatus {
    fn changed_files(&self, dir: &Path) -> Option<Vec<String>> {
        let out = std::process::Command::new("git")
            .args(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "."])
            .current_dir(dir)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let top =
            std::process::Command::new("git").args(["rev-parse", "--show-toplevel"]).current_dir(dir).output().ok()?;
        let top = std::path::PathBuf::from(String::from_utf8(top.stdout).ok()?.trim());
        let mut files = Vec::new();
        for entry in out.stdout.split(|b| *b == 0).filter(|e| e.len() > 3) {
            files.push(top.join(std::str::from_utf8(&entry[3..]).ok()?).to_string_lossy().into_owned());
        }
        Some(files)
    }
}

/// A context's worktree reader for the tests.
pub fn worktree() -> std::sync::Arc<dyn loopguard_core::Worktree> {
    std::sync::Arc::new(GitStatus)
}
