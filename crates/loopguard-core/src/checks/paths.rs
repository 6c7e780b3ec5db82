//! Where a file target really is: symlink-resolving path validation against the write roots.

use crate::checks::path_rules::PathRules;
use crate::reasons::{
    AUTORUN_FILE, CREDENTIAL_READ, PATH_DENYLISTED, PATH_HARDLINK, PATH_OUTSIDE_WORKSPACE, SECRET_IN_OUTGOING,
    SELF_PROTECTION,
};
use crate::{Finding, RiskLevel, Verdict};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Most symlinks followed while resolving one path (Linux's own limit is 40).
const MAX_LINK_HOPS: usize = 40;

/// Why a path could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// Contains a NUL byte.
    Nul,
    /// Too many symlinks (a loop).
    LinkLoop,
    /// The filesystem refused a lookup (permission, I/O).
    Io(String),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Nul => write!(f, "path contains a NUL byte"),
            PathError::LinkLoop => write!(f, "more than {MAX_LINK_HOPS} symlinks (a loop?)"),
            PathError::Io(e) => write!(f, "cannot resolve path: {e}"),
        }
    }
}

/// `raw` relative to `base`, `.` and `..` folded lexically, the file system untouched.
pub fn lexical_join(base: &Path, raw: &str) -> PathBuf {
    let mut out = if raw.starts_with('/') { PathBuf::from("/") } else { base.to_path_buf() };
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out
}

/// Resolves `path` (relative to `cwd`) the way the kernel would: `..` applies to the real,
/// symlink-resolved parent; every existing prefix is followed through symlinks; once a component
/// does not exist, the rest is appended lexically (that is what a write would create).
pub fn resolve(path: &Path, cwd: &Path) -> Result<PathBuf, PathError> {
    let joined = if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) };
    walk(PathBuf::from("/"), true, &joined)
}

/// Like [`resolve`], for a `base` that is already resolved (a real path, as [`resolve`] returns
/// it): only the components of a relative `path` are looked up, so the cost does not grow with
/// the depth of `base`.
pub fn resolve_under(base: &Path, path: &Path) -> Result<PathBuf, PathError> {
    if path.is_absolute() {
        return walk(PathBuf::from("/"), true, path);
    }
    let exists = base.as_os_str() == "/" || std::fs::symlink_metadata(base).is_ok();
    walk(base.to_path_buf(), exists, path)
}

fn walk(start: PathBuf, start_exists: bool, path: &Path) -> Result<PathBuf, PathError> {
    walk_meta(start, start_exists, path, &[]).map(|(p, _)| p)
}

/// [`walk`], also returning whether the final component is a regular file with several hard links.
/// `real` lists directories known to be real (resolved roots): a component that lands on one of
/// them, or on a prefix of one, needs no lookup — which matters after an absolute symlink sends
/// the walk back to `/`.
fn walk_meta(
    start: PathBuf,
    start_exists: bool,
    path: &Path,
    real: &[(PathBuf, bool)],
) -> Result<(PathBuf, bool), PathError> {
    use std::os::unix::ffi::OsStrExt;
    if path.as_os_str().as_bytes().contains(&0) || start.as_os_str().as_bytes().contains(&0) {
        return Err(PathError::Nul);
    }
    // The fast path costs three syscalls (openat2, statat, close); the walk one lstat per
    // component. Measured: it only wins from four components on.
    if start_exists
        && path.components().count() >= 4
        && let Some(found) = kernel_checked(&start, path)
    {
        return Ok(found);
    }
    walk_components(start, start_exists, path, real)
}

/// The component-by-component walk of [`walk_meta`].
fn walk_components(
    start: PathBuf,
    start_exists: bool,
    path: &Path,
    real: &[(PathBuf, bool)],
) -> Result<(PathBuf, bool), PathError> {
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_components(&mut queue, path, false);
    let mut out = start;
    let mut hops = 0;
    let mut exists = start_exists;
    let mut hard_linked = false;
    while let Some(part) = queue.pop_front() {
        hard_linked = false;
        if part == "/" {
            out = PathBuf::from("/");
        } else if part == ".." {
            out.pop();
            // Back up into a place that exists: later components must be looked up again (a
            // directory created later in the same command line makes `new/../link` reach
            // `link`, which may be a symlink).
            if !exists {
                exists = out.as_os_str() == "/" || std::fs::symlink_metadata(&out).is_ok();
            }
        } else {
            out.push(&part);
            if !exists {
                continue;
            }
            if real.iter().any(|(r, exists)| *exists && r.starts_with(&out)) {
                continue;
            }
            match std::fs::symlink_metadata(&out) {
                Ok(m) if m.file_type().is_symlink() => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Err(PathError::LinkLoop);
                    }
                    let target = std::fs::read_link(&out).map_err(|e| PathError::Io(e.to_string()))?;
                    out.pop();
                    push_components(&mut queue, &target, true);
                }
                Ok(m) => hard_linked = is_multiply_linked(&m),
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(20 /* ENOTDIR */) =>
                {
                    exists = false;
                }
                Err(e) => return Err(PathError::Io(e.to_string())),
            }
        }
    }
    Ok((out, hard_linked))
}

/// The fast path of [`walk_meta`]. One `openat2(RESOLVE_NO_SYMLINKS)` asks the kernel to walk
/// to the parent of the last name and fail if any component on the way (`..` targets included)
/// is a symlink; one `statat(AT_SYMLINK_NOFOLLOW)` then looks at the last name. With no symlink
/// anywhere, the lexical normal form is the real path. Anything else (a symlink, a missing
/// directory, a path not ending in a name, an old kernel, a seccomp filter) returns `None` and
/// the component-by-component walk decides, as it always did.
fn kernel_checked(start: &Path, path: &Path) -> Option<(PathBuf, bool)> {
    use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, ResolveFlags, openat2, statat};
    let full = start.join(path);
    let Some(Component::Normal(name)) = path.components().next_back() else {
        return None;
    };
    let parent = full.parent().filter(|p| p.is_absolute())?;
    let dir = openat2(
        CWD,
        parent,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS,
    )
    .ok()?;
    let hard_linked = match statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => return None,
            FileType::RegularFile => st.st_nlink > 1,
            _ => false,
        },
        Err(rustix::io::Errno::NOENT) => false,
        Err(_) => return None,
    };
    let mut out = PathBuf::from("/");
    for c in parent.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out.push(name);
    Some((out, hard_linked))
}

fn push_components(queue: &mut VecDeque<OsString>, p: &Path, front: bool) {
    let parts: Vec<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::RootDir => Some(OsString::from("/")),
            Component::ParentDir => Some(OsString::from("..")),
            Component::Normal(n) => Some(n.to_os_string()),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    if front {
        for part in parts.into_iter().rev() {
            queue.push_front(part);
        }
    } else {
        queue.extend(parts);
    }
}

/// Special files any command may write to.
fn is_harmless_device(raw: &str) -> bool {
    matches!(raw, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty")
        || raw.strip_prefix("/dev/fd/").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The one gate every file target passes: write roots (the workspace and the policy's extra
/// roots, resolved through symlinks), the absolute denylist, self-protection, secret paths and
/// hard links.
#[derive(Debug, Clone)]
pub struct PathValidator<'p> {
    roots: Vec<PathBuf>,
    /// Whether each root exists (resolved roots are real paths, so walks can start there).
    roots_exist: Vec<bool>,
    /// The roots with their existence, for walks that come back through `/`.
    known_real: Vec<(PathBuf, bool)>,
    rules: Option<&'p PathRules>,
    home: Option<PathBuf>,
    /// Absolute paths protected wherever they are: the state home, the user policy file.
    protected: Vec<PathBuf>,
    /// Absolute paths the agent may not even read: the state home (operator hashes, the webhook
    /// key, the breaker state).
    read_protected: Vec<PathBuf>,
    /// Canary files: reading one is an exfiltration attempt.
    canaries: Vec<PathBuf>,
}

/// What kind of access a target gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Created or changed.
    Write,
    /// Deleted.
    Delete,
    /// Staged for a commit (`git add`).
    Stage,
}

impl<'p> PathValidator<'p> {
    /// Resolves each root. A root that cannot be resolved is dropped (it then allows nothing);
    /// an empty list allows nothing. No denylist, secret or self-protection rules until
    /// [`PathValidator::with_rules`].
    pub fn new<'a>(roots: impl IntoIterator<Item = &'a Path>) -> Self {
        let roots: Vec<PathBuf> = roots.into_iter().filter_map(|r| resolve(r, Path::new("/")).ok()).collect();
        let roots_exist: Vec<bool> = roots.iter().map(|r| std::fs::symlink_metadata(r).is_ok()).collect();
        let known_real = roots.iter().cloned().zip(roots_exist.iter().copied()).collect();
        PathValidator {
            roots,
            roots_exist,
            known_real,
            rules: None,
            home: None,
            protected: Vec::new(),
            read_protected: Vec::new(),
            canaries: Vec::new(),
        }
    }

    /// Adds the policy's path rules, the home directory and the absolute paths to protect.
    pub fn with_rules(mut self, rules: &'p PathRules, home: Option<&Path>, protected: &[PathBuf]) -> Self {
        self.rules = Some(rules);
        self.home = home.and_then(|h| resolve(h, Path::new("/")).ok());
        self.protected = protected.iter().filter_map(|p| resolve(p, Path::new("/")).ok()).collect();
        self
    }

    /// Adds directories the agent may not read anything in.
    pub fn with_read_protected(mut self, dirs: &[PathBuf]) -> Self {
        self.read_protected = dirs.iter().filter_map(|p| resolve(p, Path::new("/")).ok()).collect();
        self
    }

    /// Adds canary files.
    pub fn with_canary_files(mut self, files: &[PathBuf]) -> Self {
        self.canaries = files.iter().filter_map(|p| resolve(p, Path::new("/")).ok()).collect();
        self
    }

    /// Whether a denylist is in force.
    pub fn has_denylist(&self) -> bool {
        self.rules.is_some_and(|r| r.has_denylist())
    }

    /// The resolved roots (the workspace first).
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a resolved path lies inside one of the roots (or is one).
    pub fn contains(&self, resolved: &Path) -> bool {
        self.roots.iter().any(|r| resolved.starts_with(r))
    }

    fn workspace(&self) -> &Path {
        self.roots.first().map_or(Path::new("/nonexistent-workspace"), |p| p.as_path())
    }

    /// Resolves `path` (relative to `cwd`) like [`resolve`]; a path that lexically starts with a
    /// root is walked from that root, which is already real (its prefixes hold no symlinks), so
    /// its components are not looked up again. Also returns whether the final component is a
    /// regular file with more than one hard link.
    fn resolve_meta(&self, path: &Path, cwd: &Path) -> Result<(PathBuf, bool), PathError> {
        let joined = if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) };
        for (root, exists) in self.roots.iter().zip(&self.roots_exist) {
            if let Ok(rest) = joined.strip_prefix(root) {
                return walk_meta(root.clone(), *exists, rest, &self.known_real);
            }
        }
        walk_meta(PathBuf::from("/"), true, &joined, &self.known_real)
    }

    /// [`resolve`], faster for paths under a root.
    pub fn resolve(&self, path: &Path, cwd: &Path) -> Result<PathBuf, PathError> {
        self.resolve_meta(path, cwd).map(|(p, _)| p)
    }

    /// Findings for writing `raw` (relative to `cwd`): empty when all is well.
    pub fn check_write(&self, raw: &str, cwd: &Path, what: &str) -> Vec<Finding> {
        if is_harmless_device(raw) {
            return Vec::new();
        }
        match self.resolve_meta(Path::new(raw), cwd) {
            Ok((real, hard_linked)) => self.judge_with(raw, Ok(real), hard_linked, what, Access::Write),
            Err(e) => self.judge_with(raw, Err(e), false, what, Access::Write),
        }
    }

    /// Findings for an access to `raw` relative to an already-resolved `base` ([`resolve_under`]).
    pub fn check_under(&self, raw: &str, base: &Path, what: &str, access: Access) -> Vec<Finding> {
        if is_harmless_device(raw) {
            return Vec::new();
        }
        self.judge(raw, resolve_under(base, Path::new(raw)), what, access)
    }

    /// Whether a lexical path (not resolved: no file system access) falls under a secret pattern
    /// or the read-protected state. A cheap first look before resolving a program's operand.
    pub fn may_be_secret(&self, lexical: &Path) -> bool {
        self.read_protected.iter().any(|d| lexical.starts_with(d))
            || self.canaries.iter().any(|c| c == lexical)
            || self.rules.is_some_and(|r| r.secret(lexical, self.workspace(), self.home.as_deref()).is_some())
    }

    /// A finding when reading the resolved path `real` would read a secret.
    pub fn check_read(&self, raw: &str, real: &Path, what: &str) -> Option<Finding> {
        if self.canaries.iter().any(|c| c == real) {
            return Some(Finding::new(
                crate::reasons::CANARY_TRIPPED,
                Verdict::Deny,
                RiskLevel::Critical,
                format!("{what} `{raw}` reads a canary credential file planted by loopguard: an exfiltration attempt."),
            ));
        }
        if let Some(dir) = self.read_protected.iter().find(|d| real.starts_with(d)) {
            return Some(
                Finding::new(
                    SELF_PROTECTION,
                    Verdict::Deny,
                    RiskLevel::Critical,
                    format!(
                        "{what} `{raw}` reads loopguard's state ({}), which holds operator secrets.",
                        dir.display()
                    ),
                )
                .with_remedy("leave loopguard's state to the human; `loopguard breaker status` shows the breaker."),
            );
        }
        let rules = self.rules?;
        let pattern = rules.secret(real, self.workspace(), self.home.as_deref())?;
        Some(
            Finding::new(
                CREDENTIAL_READ,
                Verdict::Deny,
                RiskLevel::Critical,
                format!("{what} `{raw}` reads credentials (secret path `{pattern}`)."),
            )
            .with_remedy("work from a template such as `.env.example`, or ask the human for the one value needed."),
        )
    }

    /// Findings for an access to a target the caller has already resolved.
    pub fn check_resolved(
        &self,
        raw: &str,
        resolved: Result<PathBuf, PathError>,
        what: &str,
        access: Access,
    ) -> Vec<Finding> {
        if is_harmless_device(raw) {
            return Vec::new();
        }
        self.judge(raw, resolved, what, access)
    }

    fn judge(&self, raw: &str, resolved: Result<PathBuf, PathError>, what: &str, access: Access) -> Vec<Finding> {
        let hard_linked = match (&resolved, access) {
            (Ok(real), Access::Write) => std::fs::symlink_metadata(real).is_ok_and(|m| is_multiply_linked(&m)),
            _ => false,
        };
        self.judge_with(raw, resolved, hard_linked, what, access)
    }

    fn judge_with(
        &self,
        raw: &str,
        resolved: Result<PathBuf, PathError>,
        hard_linked: bool,
        what: &str,
        access: Access,
    ) -> Vec<Finding> {
        let real = match resolved {
            Ok(real) => real,
            Err(e) => {
                return vec![Finding::new(
                    PATH_OUTSIDE_WORKSPACE,
                    Verdict::Deny,
                    RiskLevel::High,
                    format!(
                        "{what} `{}`: {e}; an unresolvable target is treated as outside the workspace.",
                        raw.escape_debug()
                    ),
                )];
            }
        };
        let mut out = Vec::new();
        let via =
            if real.as_path() != Path::new(raw) { format!(" (resolves to {})", real.display()) } else { String::new() };
        // Deleting a directory deletes what is inside: an ancestor of a protected path counts.
        let protected = self
            .protected
            .iter()
            .find(|p| real.starts_with(p) || (access == Access::Delete && p.starts_with(&real)))
            .map(|p| p.display().to_string())
            .or_else(|| self.rules.and_then(|r| r.protected(&real, self.workspace(), self.home.as_deref())));
        if let Some(pattern) = protected.filter(|_| access != Access::Stage) {
            out.push(
                Finding::new(SELF_PROTECTION, Verdict::Deny, RiskLevel::Critical, format!("{what} `{raw}`{via} is part of loopguard's own control plane or the host's hook settings (`{pattern}`)."))
                    .with_remedy("leave policy, hook settings and loopguard's state to the human."),
            );
        }
        if let Some(pattern) = self.rules.and_then(|r| r.denylisted(&real, self.workspace(), self.home.as_deref())) {
            let verb = match access {
                Access::Write => "modifies",
                Access::Delete => "deletes",
                Access::Stage => "stages",
            };
            out.push(
                Finding::new(
                    PATH_DENYLISTED,
                    Verdict::Deny,
                    RiskLevel::Critical,
                    format!("{what} `{raw}` {verb} a denylisted path (pattern `{pattern}`)."),
                )
                .with_remedy("stop and leave this file to the human; the escalation is in STATE.md.")
                .with_target(real.display().to_string(), pattern),
            );
        }
        if access == Access::Stage {
            if out.is_empty() {
                out.extend(self.staged_secret(raw, &real, what));
            }
            return out;
        }
        if out.is_empty() {
            out.extend(self.autorun(raw, &real, what, access));
        }
        if !self.contains(&real) {
            out.push(
                Finding::new(PATH_OUTSIDE_WORKSPACE, Verdict::Deny, RiskLevel::High, format!("{what} `{raw}`{via} is outside the workspace."))
                    .with_remedy(format!(
                        "write inside {} instead, or ask the human to add the directory to workspace.extra_roots in their user policy.",
                        self.roots.first().map_or_else(|| "the workspace".to_string(), |r| r.display().to_string())
                    )),
            );
        } else if access == Access::Write && hard_linked {
            out.push(
                Finding::new(PATH_HARDLINK, Verdict::Ask, RiskLevel::High, format!("{what} `{raw}` is a file with several hard links: writing it also changes the other names, which may be outside the workspace."))
                    .with_remedy("write a new file instead, or break the link first (copy, then replace)."),
            );
        }
        out
    }

    /// A file the policy calls secret (a key, a `.tfvars`, …), staged — `git add -f` forces even
    /// an ignored one in: a commit records it, a push publishes it.
    fn staged_secret(&self, raw: &str, real: &Path, what: &str) -> Option<Finding> {
        let pattern = self.rules?.secret(real, self.workspace(), self.home.as_deref())?;
        Some(
            Finding::new(
                SECRET_IN_OUTGOING,
                Verdict::Ask,
                RiskLevel::High,
                format!("{what} `{raw}` stages a secret file (pattern `{pattern}`): a commit records it and a push publishes it."),
            )
            .with_remedy("keep it out of git (list it in .gitignore) and commit a template such as `.env.example` instead."),
        )
    }

    /// A write or delete of a file a tool runs by itself later (`autorun-file`).
    fn autorun(&self, raw: &str, real: &Path, what: &str, access: Access) -> Option<Finding> {
        let pattern = self.rules?.autorun(real, self.workspace(), self.home.as_deref())?;
        let verb = if access == Access::Delete { "deletes" } else { "writes" };
        Some(
            Finding::new(
                AUTORUN_FILE,
                Verdict::Ask,
                RiskLevel::High,
                format!(
                    "{what} `{raw}` {verb} a file a tool runs by itself later (`{pattern}`: CI on push, direnv on `cd`, the editor on opening the folder, a dev container or a git-hook manager), outside any sandbox."
                ),
            )
            .with_remedy("leave CI, editor, direnv and hook configuration to the human, or ask them to confirm this change."),
        )
    }
}

/// A regular file with more than one hard link.
fn is_multiply_linked(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    m.is_file() && m.nlink() > 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn resolves_dotdot_lexically_for_missing_paths() {
        let r = resolve(Path::new("a/../b/./c"), Path::new("/nonexistent-root-xyz")).unwrap();
        assert_eq!(r, PathBuf::from("/nonexistent-root-xyz/b/c"));
        assert_eq!(resolve(Path::new("/../.."), Path::new("/")).unwrap(), PathBuf::from("/"));
    }

    #[test]
    fn follows_a_symlink_that_points_outside() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), ws.path().join("link")).unwrap();
        let v = PathValidator::new([ws.path()]);
        assert!(!v.check_write("link/file.txt", ws.path(), "write").is_empty());
        assert!(v.check_write("inside.txt", ws.path(), "write").is_empty());
    }

    #[test]
    fn dotdot_after_a_symlink_uses_the_real_parent() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(outside.path().join("deep")).unwrap();
        symlink(outside.path().join("deep"), ws.path().join("l")).unwrap();
        // ws/l/.. is outside/, not ws/.
        let real = resolve(Path::new("l/../x"), ws.path()).unwrap();
        assert_eq!(real, resolve(outside.path(), Path::new("/")).unwrap().join("x"));
        let v = PathValidator::new([ws.path()]);
        assert!(!v.check_write("l/../x", ws.path(), "write").is_empty());
    }

    #[test]
    fn symlink_loops_are_errors() {
        let ws = tempfile::tempdir().unwrap();
        symlink(ws.path().join("b"), ws.path().join("a")).unwrap();
        symlink(ws.path().join("a"), ws.path().join("b")).unwrap();
        assert_eq!(resolve(Path::new("a/x"), ws.path()), Err(PathError::LinkLoop));
        let v = PathValidator::new([ws.path()]);
        assert!(!v.check_write("a/x", ws.path(), "write").is_empty());
    }

    #[test]
    fn empty_root_list_allows_nothing() {
        let v = PathValidator::new(std::iter::empty());
        assert!(!v.check_write("/tmp/x", Path::new("/tmp"), "write").is_empty());
    }

    #[test]
    fn devices_that_discard_output_are_fine() {
        let v = PathValidator::new(std::iter::empty());
        for d in ["/dev/null", "/dev/stderr", "/dev/fd/2"] {
            assert!(v.check_write(d, Path::new("/"), "write").is_empty(), "{d}");
        }
        assert!(!v.check_write("/dev/sda", Path::new("/"), "write").is_empty());
        assert!(!v.check_write("/dev/fd/../sda", Path::new("/"), "write").is_empty());
    }

    #[test]
    fn dotdot_out_of_a_missing_directory_looks_links_up_again() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), ws.path().join("link")).unwrap();
        let v = PathValidator::new([ws.path()]);
        // `mkdir new && echo > new/../link/x` writes through the link.
        assert!(!v.check_write("new/../link/x", ws.path(), "write").is_empty());
        let real = resolve(Path::new("new/../link/x"), ws.path()).unwrap();
        assert_eq!(real, resolve(outside.path(), Path::new("/")).unwrap().join("x"));
        // A fuzzer find: `..` from a missing cwd back to `/` and into /dev/fd.
        let a = resolve(Path::new("../..//dev/fd/x/0"), Path::new("/nonexistent-xyz/ws")).unwrap();
        assert_eq!(resolve(&a, Path::new("/")).unwrap(), a);
    }

    /// The openat2 fast path must agree with the walk wherever it answers, and must not answer
    /// for any path that touches a symlink.
    #[test]
    fn the_kernel_fast_path_agrees_with_the_walk() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join("a/b/f.txt"), "x").unwrap();
        std::fs::write(root.join("a/b/c/once.txt"), "x").unwrap();
        std::fs::hard_link(root.join("a/b/f.txt"), root.join("a/b/c/twice.txt")).unwrap();
        symlink(root.join("a/b"), root.join("ab")).unwrap();
        symlink("../..", root.join("a/b/up")).unwrap();
        symlink("/etc", root.join("a/etc")).unwrap();
        let parts = ["a", "b", "c", "f.txt", "once.txt", "twice.txt", "ab", "up", "etc", "..", ".", "missing"];
        let mut answered = 0;
        // Every path of up to 4 parts over the alphabet above.
        let mut paths: Vec<PathBuf> = vec![PathBuf::new()];
        for _ in 0..4 {
            let next: Vec<PathBuf> = paths.iter().flat_map(|p| parts.iter().map(move |x| p.join(x))).collect();
            paths.extend(next);
            paths.dedup();
        }
        for p in &paths {
            let slow = walk_components(root.clone(), true, p, &[]).unwrap();
            if let Some(fast) = kernel_checked(&root, p) {
                answered += 1;
                assert_eq!(fast.0, slow.0, "{p:?}");
                assert_eq!(fast.1, slow.1, "{p:?}");
            }
        }
        assert!(answered > 100, "the fast path answered only {answered} times");
        assert_eq!(kernel_checked(&root, Path::new("a/b/c/twice.txt")), Some((root.join("a/b/c/twice.txt"), true)));
        assert_eq!(kernel_checked(&root, Path::new("a/b/c/once.txt")), Some((root.join("a/b/c/once.txt"), false)));
        for through_a_link in ["ab", "ab/c", "a/b/up", "a/b/up/a", "a/etc", "a/etc/..", "a/b/c/../up"] {
            assert!(kernel_checked(&root, Path::new(through_a_link)).is_none(), "{through_a_link}");
        }
    }

    #[test]
    fn nul_is_rejected() {
        assert_eq!(resolve(Path::new("a\0b"), Path::new("/")), Err(PathError::Nul));
    }
}
