//! Where loopguard keeps things: the state home (off-tree), policy file locations, the
//! workspace a call belongs to, and the per-workspace audit log.

use loopguard_audit::{AuditLog, hex};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The process environment loopguard depends on, captured once so tests and the demo can
/// supply their own.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `$LOOPGUARD_HOME`.
    pub loopguard_home: Option<PathBuf>,
    /// `$XDG_STATE_HOME`.
    pub xdg_state_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$CLAUDE_PROJECT_DIR` (set by Claude Code for hooks).
    pub claude_project_dir: Option<PathBuf>,
    /// Trip effects are left queued for an explicit `loopguard breaker flush` instead of a
    /// detached background flush (`LOOPGUARD_EFFECTS=manual`; the demo and some tests).
    pub manual_effects: bool,
    /// When the host's answer is due (a hook call): advice that takes time — the ask's preview —
    /// is cut to what is left of it, or left out.
    pub hook_deadline: Option<std::time::Instant>,
}

fn abs_var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute())
}

impl Env {
    /// Reads the process environment. Relative paths in these variables are ignored.
    pub fn from_process() -> Self {
        Env {
            loopguard_home: abs_var("LOOPGUARD_HOME"),
            xdg_state_home: abs_var("XDG_STATE_HOME"),
            xdg_config_home: abs_var("XDG_CONFIG_HOME"),
            home: abs_var("HOME"),
            claude_project_dir: abs_var("CLAUDE_PROJECT_DIR"),
            manual_effects: std::env::var_os("LOOPGUARD_EFFECTS").is_some_and(|v| v == "manual"),
            hook_deadline: None,
        }
    }

    /// `$LOOPGUARD_HOME`, else `$XDG_STATE_HOME/loopguard`, else `~/.local/state/loopguard`.
    pub fn state_home(&self) -> Result<PathBuf, String> {
        if let Some(p) = &self.loopguard_home {
            return Ok(p.clone());
        }
        if let Some(p) = &self.xdg_state_home {
            return Ok(p.join("loopguard"));
        }
        match &self.home {
            Some(h) => Ok(h.join(".local/state/loopguard")),
            None => Err("no state home: set LOOPGUARD_HOME or HOME".into()),
        }
    }

    /// `$XDG_CONFIG_HOME/loopguard/policy.toml`, else `~/.config/loopguard/policy.toml`.
    pub fn user_policy(&self) -> Option<PathBuf> {
        match (&self.xdg_config_home, &self.home) {
            (Some(x), _) => Some(x.join("loopguard/policy.toml")),
            (None, Some(h)) => Some(h.join(".config/loopguard/policy.toml")),
            (None, None) => None,
        }
    }

    /// The workspace root for a call made in `cwd`: `$CLAUDE_PROJECT_DIR` when set, else the
    /// enclosing git work tree, else `cwd` itself.
    pub fn workspace_for(&self, cwd: &Path) -> PathBuf {
        if let Some(p) = &self.claude_project_dir {
            return p.clone();
        }
        git_toplevel(cwd).unwrap_or_else(|| cwd.to_path_buf())
    }
}

/// The nearest ancestor of `dir` (or `dir`) that holds a `.git` entry.
pub fn git_toplevel(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

/// The project policy file of a workspace.
pub fn project_policy(workspace: &Path) -> PathBuf {
    workspace.join(".loopguard/policy.toml")
}

/// A stable, readable key for a workspace: its directory name and a hash of its real path.
pub fn workspace_key(workspace: &Path) -> String {
    let real = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let name: String = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(40)
        .collect();
    let digest = Sha256::digest(real.as_os_str().as_encoded_bytes());
    format!("{name}-{}", hex(&digest[..6]))
}

/// The audit log of a workspace.
pub fn audit_log(state_home: &Path, workspace: &Path) -> AuditLog {
    AuditLog::new(state_home.join("audit").join(format!("{}.jsonl", workspace_key(workspace))))
}

/// Hex SHA-256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_home_precedence() {
        let mut env = Env { home: Some("/h".into()), ..Env::default() };
        assert_eq!(env.state_home().unwrap(), PathBuf::from("/h/.local/state/loopguard"));
        env.xdg_state_home = Some("/x".into());
        assert_eq!(env.state_home().unwrap(), PathBuf::from("/x/loopguard"));
        env.loopguard_home = Some("/lg".into());
        assert_eq!(env.state_home().unwrap(), PathBuf::from("/lg"));
        assert!(Env::default().state_home().is_err());
    }

    #[test]
    fn workspace_prefers_project_dir_then_git() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("repo/.git")).unwrap();
        std::fs::create_dir_all(d.path().join("repo/src/deep")).unwrap();
        let env = Env::default();
        assert_eq!(env.workspace_for(&d.path().join("repo/src/deep")), d.path().join("repo"));
        assert_eq!(env.workspace_for(d.path()), d.path().to_path_buf());
        let env = Env { claude_project_dir: Some("/p".into()), ..Env::default() };
        assert_eq!(env.workspace_for(d.path()), PathBuf::from("/p"));
    }

    #[test]
    fn workspace_keys_are_stable_and_distinct() {
        let a = workspace_key(Path::new("/srv/my project"));
        assert!(a.starts_with("my_project-") && a.len() == "my_project-".len() + 12, "{a}");
        assert_eq!(a, workspace_key(Path::new("/srv/my project")));
        assert_ne!(a, workspace_key(Path::new("/other/my project")));
    }
}
