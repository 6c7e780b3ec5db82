//! The policy's path patterns compiled with globset: the absolute denylist, secret paths (and
//! their exceptions), and the files that protect loopguard itself.
//!
//! Patterns: `/abs/**` is absolute, `~/x` is relative to the home directory, anything else is
//! relative to the workspace, and a pattern without `/` matches at any depth (gitignore style).
//! A directory matches a `dir/**` pattern too (deleting it deletes what is inside).

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};

/// Files that loopguard itself, and the hosts' hook settings, live in. Relative to the workspace.
pub const SELF_PROTECTED: &[&str] = &[
    ".git/hooks",
    ".git/hooks/**",
    ".git/config",
    ".git/config.worktree",
    ".git/commondir",
    ".git/info/**",
    ".git/modules/**/hooks/**",
    ".git/modules/**/config",
    ".claude",
    ".claude/hooks",
    ".claude/hooks/**",
    ".loopguard",
    ".loopguard/**",
    ".claude/settings*.json",
    ".mcp.json",
    ".codex",
    ".codex/**",
    ".gemini",
    ".gemini/**",
    ".github/hooks",
    ".github/hooks/**",
    ".cursor/hooks.json",
    ".cursor/hooks",
    ".cursor/hooks/**",
    ".cursor/mcp.json",
    "~/.claude/settings*.json",
    "~/.codex/**",
    "~/.gemini/**",
    "~/.cursor/hooks.json",
    "~/.cursor/hooks/**",
    "~/.cursor/mcp.json",
    "~/.copilot/hooks",
    "~/.copilot/hooks/**",
    "~/.copilot/settings.json",
    "~/.copilot/config.json",
    "~/.copilot/mcp-config.json",
    "~/.config/loopguard/**",
    "~/.local/state/loopguard/**",
];

/// Files a tool runs by itself when someone opens, enters or pushes the folder: CI workflows
/// (run on push, with the repository's secrets), direnv's `.envrc` (on `cd`), editor tasks and
/// settings that run commands on folder open, devcontainer lifecycle commands, git-hook managers.
/// What they run later runs outside any sandbox. Relative to the workspace.
pub const AUTORUN: &[&str] = &[
    ".github/workflows",
    ".github/workflows/**",
    ".github/actions/**",
    ".gitlab-ci.yml",
    ".gitlab-ci.yaml",
    ".gitlab/ci/**",
    ".circleci/**",
    ".buildkite/**",
    ".travis.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    "Jenkinsfile",
    ".woodpecker.yml",
    ".woodpecker/**",
    ".drone.yml",
    "**/.envrc",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".vscode/launch.json",
    ".devcontainer.json",
    ".devcontainer",
    ".devcontainer/**",
    ".husky",
    ".husky/**",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".idea/runConfigurations/**",
    ".idea/workspace.xml",
];

/// One list of patterns: a literal prefilter, and the globsets (split by anchor) compiled only
/// when a path passes the prefilter. Compiling costs hundreds of microseconds; the prefilter a
/// microsecond, and almost every path fails it.
#[derive(Debug)]
struct Patterns {
    list: Vec<String>,
    /// Per pattern, the longest literal run a matching path must contain; `None` when the
    /// pattern has none (then every path goes to the globs). Computed on first use.
    literals: std::sync::OnceLock<Vec<Option<String>>>,
    compiled: std::sync::OnceLock<Compiled>,
}

#[derive(Debug)]
struct Compiled {
    absolute: GlobSet,
    home: GlobSet,
    relative: GlobSet,
    abs_src: Vec<String>,
    home_src: Vec<String>,
    rel_src: Vec<String>,
}

fn glob(p: &str) -> Option<Glob> {
    GlobBuilder::new(p).literal_separator(true).build().ok()
}

/// The longest run of a glob that is matched literally (outside `*?[]{}` and escapes).
fn longest_literal(p: &str) -> Option<String> {
    let mut best = String::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => {
                if cur.len() > best.len() {
                    best = std::mem::take(&mut cur);
                }
                cur.clear();
            }
            '[' | '{' => {
                depth += 1;
                if cur.len() > best.len() {
                    best = std::mem::take(&mut cur);
                }
                cur.clear();
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            '\\' => {
                let _ = chars.next();
                if cur.len() > best.len() {
                    best = std::mem::take(&mut cur);
                }
                cur.clear();
            }
            c if depth == 0 => cur.push(c),
            _ => {}
        }
    }
    if cur.len() > best.len() {
        best = cur;
    }
    // A bare separator says nothing.
    (best.trim_matches('/').len() >= 2).then_some(best)
}

impl Clone for Patterns {
    fn clone(&self) -> Self {
        Patterns::new(&self.list)
    }
}

impl Patterns {
    fn new(list: &[String]) -> Self {
        Patterns { list: list.to_vec(), literals: std::sync::OnceLock::new(), compiled: std::sync::OnceLock::new() }
    }

    fn literals(&self) -> &[Option<String>] {
        self.literals.get_or_init(|| {
            self.list.iter().map(|p| longest_literal(p.trim_start_matches("~/").trim_end_matches('/'))).collect()
        })
    }

    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            let (mut a, mut h, mut r) = (GlobSetBuilder::new(), GlobSetBuilder::new(), GlobSetBuilder::new());
            let (mut abs_src, mut home_src, mut rel_src) = (Vec::new(), Vec::new(), Vec::new());
            for p in &self.list {
                let p = p.trim_end_matches('/');
                if let Some(rest) = p.strip_prefix("~/") {
                    if let Some(g) = glob(rest) {
                        h.add(g);
                        home_src.push(p.to_string());
                    }
                } else if p.starts_with('/') {
                    if let Some(g) = glob(p) {
                        a.add(g);
                        abs_src.push(p.to_string());
                    }
                } else {
                    let anchored = if p.contains('/') { p.to_string() } else { format!("**/{p}") };
                    if let Some(g) = glob(&anchored) {
                        r.add(g);
                        rel_src.push(p.to_string());
                    }
                }
            }
            let build = |b: GlobSetBuilder| b.build().unwrap_or_else(|_| GlobSet::empty());
            Compiled { absolute: build(a), home: build(h), relative: build(r), abs_src, home_src, rel_src }
        })
    }

    /// Whether any pattern could match `p` (or a path below it), by its literal part.
    fn may_match(&self, p: &Path) -> bool {
        let text = p.to_string_lossy();
        let below = format!("{text}/…");
        self.literals().iter().any(|l| l.as_deref().is_none_or(|l| below.contains(l)))
    }

    /// The first pattern matching `p` (absolute, resolved), or `None`.
    fn matching(&self, p: &Path, workspace: &Path, home: Option<&Path>) -> Option<String> {
        if self.list.is_empty() || !self.may_match(p) {
            return None;
        }
        let c = self.compiled();
        let child = p.join("…");
        for cand in [p, child.as_path()] {
            if let Some(i) = c.absolute.matches(cand).first() {
                return c.abs_src.get(*i).cloned();
            }
            if let Some(rel) = home.and_then(|h| cand.strip_prefix(h).ok())
                && let Some(i) = c.home.matches(rel).first()
            {
                return c.home_src.get(*i).cloned();
            }
            let rel = cand.strip_prefix(workspace).unwrap_or_else(|_| cand.strip_prefix("/").unwrap_or(cand));
            if let Some(i) = c.relative.matches(rel).first() {
                return c.rel_src.get(*i).cloned();
            }
        }
        None
    }

    /// Whether `p` itself (not below it) matches.
    fn is_match_exact(&self, p: &Path, workspace: &Path, home: Option<&Path>) -> bool {
        if self.list.is_empty() {
            return false;
        }
        let text = p.to_string_lossy();
        if !self.literals().iter().any(|l| l.as_deref().is_none_or(|l| text.contains(l))) {
            return false;
        }
        let c = self.compiled();
        let rel = p.strip_prefix(workspace).unwrap_or_else(|_| p.strip_prefix("/").unwrap_or(p));
        c.absolute.is_match(p)
            || home.and_then(|h| p.strip_prefix(h).ok()).is_some_and(|r| c.home.is_match(r))
            || c.relative.is_match(rel)
    }
}

/// The compiled path rules of a policy.
#[derive(Debug, Clone)]
pub struct PathRules {
    denylist: Patterns,
    secret: Patterns,
    secret_except: Patterns,
    protected: Patterns,
    autorun: Patterns,
}

impl PathRules {
    /// Compiles the `[paths]` lists (invalid patterns were already rejected when the policy loaded).
    pub fn new(lists: &crate::policy::model::PathLists) -> Self {
        let denylist: Vec<String> =
            lists.denylist.iter().filter(|p| !(lists.migration_session && p.contains("migrations"))).cloned().collect();
        let protected: Vec<String> = SELF_PROTECTED.iter().map(|s| s.to_string()).collect();
        PathRules {
            denylist: Patterns::new(&denylist),
            secret: Patterns::new(&lists.secret_read),
            secret_except: Patterns::new(&lists.secret_read_except),
            protected: Patterns::new(&protected),
            autorun: Patterns::new(&AUTORUN.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        }
    }

    /// Whether the denylist has any pattern.
    pub fn has_denylist(&self) -> bool {
        !self.denylist.list.is_empty()
    }

    /// The denylist pattern `p` falls under (only paths inside the workspace are denylisted).
    pub fn denylisted(&self, p: &Path, workspace: &Path, home: Option<&Path>) -> Option<String> {
        if !p.starts_with(workspace) {
            return None;
        }
        self.denylist.matching(p, workspace, home)
    }

    /// The secret pattern `p` falls under, unless an exception covers it.
    pub fn secret(&self, p: &Path, workspace: &Path, home: Option<&Path>) -> Option<String> {
        let hit = self.secret.matching(p, workspace, home)?;
        // Exceptions are checked on the path itself only (a directory is not excused by them).
        let excused = self.secret_except.is_match_exact(p, workspace, home);
        (!excused).then_some(hit)
    }

    /// The self-protection pattern `p` falls under.
    pub fn protected(&self, p: &Path, workspace: &Path, home: Option<&Path>) -> Option<String> {
        self.protected.matching(p, workspace, home)
    }

    /// The auto-run pattern (a file a tool runs by itself later) `p` falls under.
    pub fn autorun(&self, p: &Path, workspace: &Path, home: Option<&Path>) -> Option<String> {
        self.autorun.matching(p, workspace, home)
    }
}

/// Absolute paths that are protected wherever they are (the state home, the user policy file).
#[derive(Debug, Clone, Default)]
pub struct ProtectedRoots(pub Vec<PathBuf>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefilter_extracts_the_longest_fixed_run() {
        assert_eq!(longest_literal("**/secrets/**").as_deref(), Some("/secrets/"));
        assert_eq!(longest_literal(".env.*").as_deref(), Some(".env."));
        assert_eq!(longest_literal("**/*_key*").as_deref(), Some("_key"));
        assert_eq!(longest_literal("*.{pem,key}").as_deref(), None);
        assert_eq!(longest_literal("*").as_deref(), None);
        assert_eq!(longest_literal("k8s/production/**").as_deref(), Some("k8s/production/"));
    }

    fn lists(deny: &[&str], secret: &[&str], except: &[&str]) -> crate::policy::model::PathLists {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
        crate::policy::model::PathLists {
            denylist: v(deny),
            secret_read: v(secret),
            secret_read_except: v(except),
            migration_session: false,
        }
    }

    #[test]
    fn anchors_and_depth_follow_gitignore() {
        let r = PathRules::new(&lists(&[".env", "auth/**", "**/secrets/**", "**/*_key*", "*.{pem,key}"], &[], &[]));
        let ws = Path::new("/w");
        let hit = |p: &str| r.denylisted(Path::new(p), ws, None);
        assert_eq!(hit("/w/.env").as_deref(), Some(".env"));
        assert_eq!(hit("/w/sub/.env").as_deref(), Some(".env"), "no slash: any depth");
        assert_eq!(hit("/w/auth/login.rs").as_deref(), Some("auth/**"));
        assert_eq!(hit("/w/src/auth/login.rs"), None, "a slash anchors at the workspace");
        assert_eq!(hit("/w/secrets").as_deref(), Some("**/secrets/**"), "the directory itself");
        assert_eq!(hit("/w/a/secrets/x").as_deref(), Some("**/secrets/**"));
        assert_eq!(hit("/w/api_key.txt").as_deref(), Some("**/*_key*"));
        assert_eq!(hit("/w/cert.pem").as_deref(), Some("*.{pem,key}"), "no literal: still checked");
        assert_eq!(hit("/w/src/main.rs"), None);
        assert_eq!(hit("/elsewhere/.env"), None, "only the workspace is denylisted");
    }

    #[test]
    fn secrets_and_exceptions() {
        let r =
            PathRules::new(&lists(&[], &[".env.*", "~/.ssh/**", "/proc/*/environ"], &["*.example", "~/.ssh/*.pub"]));
        let (ws, home) = (Path::new("/w"), Some(Path::new("/h")));
        let hit = |p: &str| r.secret(Path::new(p), ws, home);
        assert!(hit("/w/.env.local").is_some());
        assert!(hit("/w/.env.example").is_none());
        assert!(hit("/h/.ssh/id_rsa").is_some());
        assert!(hit("/h/.ssh").is_some(), "the directory holding them");
        assert!(hit("/h/.ssh/id_rsa.pub").is_none());
        assert!(hit("/proc/1/environ").is_some());
        assert!(hit("/h/notes.txt").is_none());
    }

    #[test]
    fn self_protection_covers_hook_settings_and_policy() {
        let r = PathRules::new(&lists(&[], &[], &[]));
        let (ws, home) = (Path::new("/w"), Some(Path::new("/h")));
        for p in [
            "/w/.claude/settings.json",
            "/w/.claude/settings.local.json",
            "/w/.mcp.json",
            "/w/.codex/config.toml",
            "/w/.loopguard/policy.toml",
            "/w/.github/hooks/pre",
            "/h/.claude/settings.json",
            "/h/.config/loopguard/policy.toml",
            "/w/.loopguard",
        ] {
            assert!(r.protected(Path::new(p), ws, home).is_some(), "{p}");
        }
        for p in ["/w/.claude/agents/x.md", "/w/src/settings.json", "/w/.github/workflows/ci.yml"] {
            assert!(r.protected(Path::new(p), ws, home).is_none(), "{p}");
        }
    }

    #[test]
    fn migration_session_lifts_migrations() {
        let mut l = lists(&["**/migrations/**"], &[], &[]);
        assert!(PathRules::new(&l).denylisted(Path::new("/w/db/migrations/1.sql"), Path::new("/w"), None).is_some());
        l.migration_session = true;
        assert!(PathRules::new(&l).denylisted(Path::new("/w/db/migrations/1.sql"), Path::new("/w"), None).is_none());
    }
}
