//! Where a file target really is: symlink-resolving path validation against the write roots.

use crate::reasons::PATH_OUTSIDE_WORKSPACE;
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
    use std::os::unix::ffi::OsStrExt;
    if path.as_os_str().as_bytes().contains(&0) || start.as_os_str().as_bytes().contains(&0) {
        return Err(PathError::Nul);
    }
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_components(&mut queue, path, false);
    let mut out = start;
    let mut hops = 0;
    let mut exists = start_exists;
    while let Some(part) = queue.pop_front() {
        if part == "/" {
            out = PathBuf::from("/");
        } else if part == ".." {
            out.pop();
        } else {
            out.push(&part);
            if !exists {
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
                Ok(_) => {}
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(20 /* ENOTDIR */) =>
                {
                    exists = false;
                }
                Err(e) => return Err(PathError::Io(e.to_string())),
            }
        }
    }
    Ok(out)
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

/// Whether a (resolved) path holds credentials: SSH and cloud keys, `.env` files (not
/// `.example`/`.sample`/`.template`), private key files outside test fixtures, token files,
/// `/proc/*/environ`, `/etc/shadow`. Directories that hold them count too (`~/.ssh`).
pub fn is_credential_path(p: &Path, home: Option<&Path>) -> bool {
    let s = p.to_string_lossy();
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name == ".env"
        || (name.starts_with(".env.")
            && !name.ends_with(".example")
            && !name.ends_with(".sample")
            && !name.ends_with(".template")
            && !name.ends_with(".dist"))
    {
        return true;
    }
    if matches!(
        name.as_str(),
        "id_rsa"
            | "id_dsa"
            | "id_ecdsa"
            | "id_ed25519"
            | "id_ecdsa_sk"
            | "id_ed25519_sk"
            | ".git-credentials"
            | ".netrc"
            | ".pgpass"
            | ".my.cnf"
    ) {
        return true;
    }
    let fixture = s.contains("/test") || s.contains("/fixture") || s.contains("/example") || s.contains("/testdata");
    let key_file = [".key", ".p12", ".pfx", ".jks", ".keystore"].iter().any(|x| name.ends_with(x))
        || (name.ends_with(".pem") && (name.contains("key") || name.contains("private")));
    if key_file && !fixture {
        return true;
    }
    if (s.starts_with("/proc/") && (s.ends_with("/environ"))) || matches!(s.as_ref(), "/etc/shadow" | "/etc/gshadow") {
        return true;
    }
    let Some(rel) = home.and_then(|h| p.strip_prefix(h).ok()) else {
        return false;
    };
    let r = rel.to_string_lossy();
    if r == ".ssh" || r.starts_with(".ssh/") {
        return !(name.ends_with(".pub")
            || matches!(name.as_str(), "known_hosts" | "known_hosts.old" | "config" | "authorized_keys"));
    }
    [
        ".aws",
        ".config/gcloud",
        ".kube/config",
        ".docker/config.json",
        ".npmrc",
        ".pypirc",
        ".gnupg",
        ".config/gh/hosts.yml",
        ".azure",
        ".terraform.d/credentials.tfrc.json",
        ".cargo/credentials",
        ".cargo/credentials.toml",
    ]
    .iter()
    .any(|d| r == *d || r.starts_with(&format!("{d}/")))
}

/// Checks write targets against the write roots (the workspace and the policy's extra roots),
/// all resolved through symlinks.
#[derive(Debug, Clone)]
pub struct PathValidator {
    roots: Vec<PathBuf>,
}

impl PathValidator {
    /// Resolves each root. A root that cannot be resolved is dropped (it then allows nothing);
    /// an empty list allows nothing.
    pub fn new<'a>(roots: impl IntoIterator<Item = &'a Path>) -> Self {
        let roots = roots.into_iter().filter_map(|r| resolve(r, Path::new("/")).ok()).collect();
        PathValidator { roots }
    }

    /// The resolved roots.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a resolved path lies inside one of the roots (or is one).
    pub fn contains(&self, resolved: &Path) -> bool {
        self.roots.iter().any(|r| resolved.starts_with(r))
    }

    /// `None` when writing `raw` (relative to `cwd`) stays inside the roots; otherwise a finding.
    pub fn check_write(&self, raw: &str, cwd: &Path, what: &str) -> Option<Finding> {
        if is_harmless_device(raw) {
            return None;
        }
        self.judge(raw, resolve(Path::new(raw), cwd), what)
    }

    /// [`PathValidator::check_write`] for a `base` that is already resolved (see [`resolve_under`]).
    pub fn check_write_under(&self, raw: &str, base: &Path, what: &str) -> Option<Finding> {
        if is_harmless_device(raw) {
            return None;
        }
        self.judge(raw, resolve_under(base, Path::new(raw)), what)
    }

    fn judge(&self, raw: &str, resolved: Result<PathBuf, PathError>, what: &str) -> Option<Finding> {
        match resolved {
            Ok(real) if self.contains(&real) => None,
            Ok(real) => {
                let via = if real.as_path() != Path::new(raw) {
                    format!(" (resolves to {})", real.display())
                } else {
                    String::new()
                };
                Some(
                    Finding::new(
                        PATH_OUTSIDE_WORKSPACE,
                        Verdict::Deny,
                        RiskLevel::High,
                        format!("{what} `{raw}`{via} is outside the workspace."),
                    )
                    .with_remedy(format!(
                        "write inside {} instead, or ask the human to add the directory to workspace.extra_roots in their user policy.",
                        self.roots.first().map_or_else(|| "the workspace".to_string(), |r| r.display().to_string())
                    )),
                )
            }
            Err(e) => Some(Finding::new(
                PATH_OUTSIDE_WORKSPACE,
                Verdict::Deny,
                RiskLevel::High,
                format!(
                    "{what} `{}`: {e}; an unresolvable target is treated as outside the workspace.",
                    raw.escape_debug()
                ),
            )),
        }
    }
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
        assert!(v.check_write("link/file.txt", ws.path(), "write").is_some());
        assert!(v.check_write("inside.txt", ws.path(), "write").is_none());
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
        assert!(v.check_write("l/../x", ws.path(), "write").is_some());
    }

    #[test]
    fn symlink_loops_are_errors() {
        let ws = tempfile::tempdir().unwrap();
        symlink(ws.path().join("b"), ws.path().join("a")).unwrap();
        symlink(ws.path().join("a"), ws.path().join("b")).unwrap();
        assert_eq!(resolve(Path::new("a/x"), ws.path()), Err(PathError::LinkLoop));
        let v = PathValidator::new([ws.path()]);
        assert!(v.check_write("a/x", ws.path(), "write").is_some());
    }

    #[test]
    fn empty_root_list_allows_nothing() {
        let v = PathValidator::new(std::iter::empty());
        assert!(v.check_write("/tmp/x", Path::new("/tmp"), "write").is_some());
    }

    #[test]
    fn devices_that_discard_output_are_fine() {
        let v = PathValidator::new(std::iter::empty());
        for d in ["/dev/null", "/dev/stderr", "/dev/fd/2"] {
            assert!(v.check_write(d, Path::new("/"), "write").is_none(), "{d}");
        }
        assert!(v.check_write("/dev/sda", Path::new("/"), "write").is_some());
        assert!(v.check_write("/dev/fd/../sda", Path::new("/"), "write").is_some());
    }

    #[test]
    fn nul_is_rejected() {
        assert_eq!(resolve(Path::new("a\0b"), Path::new("/")), Err(PathError::Nul));
    }
}
