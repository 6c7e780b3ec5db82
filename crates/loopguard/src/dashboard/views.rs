//! What the dashboard's panels show, computed by the same code the CLI uses: breaker status,
//! grants, yolo, log verification, escalations; and for one call, its shell segments each
//! decided alone, and a path's symlink chain against the workspace roots.

use super::feed::Workspace;
use crate::audit_cli::Verified;
use crate::control::{BreakerStatus, GrantList, Target};
use crate::escalation::Blocker;
use crate::state::Env;
use loopguard_core::checks::paths::{lexical_join, resolve};
use loopguard_core::{Action, Context, ExecutionMode, Gate, ToolCall};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Everything the panels of one workspace show.
#[derive(Debug, Clone, Serialize)]
pub struct WorkspaceView {
    /// Its key.
    pub key: String,
    /// Its root, when known.
    pub path: Option<String>,
    /// The audit log's verification (chain, head, signed checkpoints).
    pub verify: Result<Verified, String>,
    /// The breaker (needs the workspace's root for its policy).
    pub breaker: Option<Result<BreakerStatus, String>>,
    /// Grants in force here.
    pub grants: Option<Result<GrantList, String>>,
    /// A yolo period, when one is on.
    pub yolo: Option<YoloView>,
    /// The blockers of the workspace's STATE.md.
    pub escalations: Vec<Blocker>,
}

/// A yolo period.
#[derive(Debug, Clone, Serialize)]
pub struct YoloView {
    /// Who switched it on.
    pub operator: String,
    /// Why.
    pub reason: String,
    /// From (Unix seconds).
    pub from: i64,
    /// Until (Unix seconds).
    pub until: i64,
    /// Asks it approved so far.
    pub approved: u64,
}

/// The view of one workspace. `verified` is the log's last verification, reused while the log
/// has not changed (verifying reads the whole log).
pub fn workspace(env: &Env, state: &Path, w: &Workspace, verified: Result<Verified, String>) -> WorkspaceView {
    let target =
        w.path.as_ref().map(|p| Target { workspace: p.clone(), key: w.key.clone(), state: state.to_path_buf() });
    let yolo = crate::hot::read(state, &w.key).ok().and_then(|d| d.ws.yolo).filter(|y| y.until > crate::effects::now());
    WorkspaceView {
        key: w.key.clone(),
        path: w.path.as_ref().map(|p| p.display().to_string()),
        verify: verified,
        breaker: target.as_ref().map(|t| crate::control::status(env, t)),
        grants: target.as_ref().map(|t| crate::control::grant_list(env, t)),
        yolo: yolo.map(|y| YoloView {
            operator: y.operator,
            reason: y.reason,
            from: y.from,
            until: y.until,
            approved: y.approved,
        }),
        escalations: w
            .path
            .as_ref()
            .and_then(|p| read_plain(&p.join("STATE.md"), 1 << 20))
            .map(|t| crate::escalation::blockers(&t))
            .unwrap_or_default(),
    }
}

/// A file the agent can write (STATE.md), read without trusting it: no symlink followed, a
/// FIFO or device never opened for a blocking read, at most `max` bytes.
fn read_plain(path: &Path, max: u64) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32 | rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::new();
    f.take(max).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Verifies a workspace's log as `loopguard audit verify` does.
pub fn verify(state: &Path, w: &Workspace) -> Result<Verified, String> {
    crate::audit_cli::verify(state, &loopguard_audit::AuditLog::new(&w.log))
}

/// One segment of a command line, decided alone.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentView {
    /// The segment's words, shell-quoted.
    pub text: String,
    /// allow / ask / deny.
    pub verdict: &'static str,
    /// Its reason codes.
    pub reasons: Vec<String>,
    /// Its first reason's message.
    pub message: Option<String>,
}

/// The segments of a (redacted) command line, each run through the gate alone with the
/// workspace's effective policy, unattended (findings alone decide).
pub fn segments(
    env: &Env,
    state: &Path,
    workspace: &Path,
    tool: &str,
    command: &str,
) -> Result<Vec<SegmentView>, String> {
    let home = env.home.as_deref().and_then(Path::to_str);
    let segs = loopguard_core::checks::shell::split_with_home(command, home).map_err(|e| e.to_string())?;
    let policy = crate::effective::load(env, workspace).map_err(|e| format!("the policy does not load: {e}"))?;
    let gate = Gate::new(&policy);
    let ctx = Context::new(workspace)
        .with_home(env.home.as_deref())
        .with_mode(ExecutionMode::Unattended)
        .with_protected(Some(state), env.user_policy().as_deref());
    let mut out = Vec::new();
    for s in segs.iter().take(64) {
        let text = s.words.iter().map(|w| quote(&w.text)).collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            continue;
        }
        let input = serde_json::json!({ "command": text });
        let call = ToolCall::new(tool, Action::Shell { command: text.clone() }, input, workspace);
        let d = gate.evaluate(&call, &ctx);
        out.push(SegmentView {
            verdict: d.verdict().as_str(),
            reasons: d.codes(),
            message: d.reasons().first().map(|r| r.message.clone()),
            text,
        });
    }
    Ok(out)
}

/// A word as the shell would read it back.
fn quote(w: &str) -> String {
    let plain = !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b));
    if plain { w.to_string() } else { format!("'{}'", w.replace('\'', "'\\''")) }
}

/// A path's way to the file it names: the symlinks it passes through, and whether each step
/// stays inside the workspace roots.
#[derive(Debug, Clone, Serialize)]
pub struct PathChain {
    /// The workspace roots (resolved).
    pub roots: Vec<String>,
    /// The path as given, made absolute.
    pub path: String,
    /// Each symlink passed: the link, where it points, and whether that is inside the roots.
    pub hops: Vec<Hop>,
    /// The file it finally names.
    pub target: String,
    /// Whether that is inside the roots.
    pub inside: bool,
}

/// One symlink on the way.
#[derive(Debug, Clone, Serialize)]
pub struct Hop {
    /// The link.
    pub link: String,
    /// What it points to (as resolved up to there).
    pub to: String,
    /// Whether `to` is inside the roots.
    pub inside: bool,
}

/// Longest symlink chain followed (the kernel's own limit is 40).
const MAX_HOPS: usize = 40;

/// The chain of `raw` (relative to `workspace`), against the workspace and the policy's extra
/// roots.
pub fn path_chain(env: &Env, workspace: &Path, raw: &str) -> Result<PathChain, String> {
    let policy = crate::effective::load(env, workspace).map_err(|e| format!("the policy does not load: {e}"))?;
    let expanded = match (raw.strip_prefix("~/"), env.home.as_deref()) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => PathBuf::from(raw),
    };
    let roots: Vec<PathBuf> = std::iter::once(workspace.to_path_buf())
        .chain(policy.extra_roots().iter().cloned())
        .map(|r| resolve(&r, Path::new("/")).unwrap_or(r))
        .collect();
    let inside = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    let start = lexical_join(workspace, &expanded.to_string_lossy());
    let mut hops = Vec::new();
    let target = follow(&start, &mut hops, &inside)?;
    Ok(PathChain {
        roots: roots.iter().map(|r| r.display().to_string()).collect(),
        path: start.display().to_string(),
        inside: inside(&target),
        target: target.display().to_string(),
        hops,
    })
}

/// Walks `path` component by component, following symlinks, recording each.
fn follow(path: &Path, hops: &mut Vec<Hop>, inside: &dyn Fn(&Path) -> bool) -> Result<PathBuf, String> {
    let mut todo: Vec<std::ffi::OsString> = path.components().rev().map(|c| c.as_os_str().to_os_string()).collect();
    let mut at = PathBuf::from("/");
    while let Some(part) = todo.pop() {
        if part == "/" {
            at = PathBuf::from("/");
            continue;
        }
        if part == ".." {
            at.pop();
            continue;
        }
        if part == "." {
            continue;
        }
        let next = at.join(&part);
        match std::fs::read_link(&next) {
            Ok(dest) => {
                if hops.len() >= MAX_HOPS {
                    return Err(format!("more than {MAX_HOPS} symlinks on the way"));
                }
                let to = lexical_join(&at, &dest.to_string_lossy());
                hops.push(Hop { link: next.display().to_string(), to: to.display().to_string(), inside: inside(&to) });
                // The link's target replaces it; relative targets resolve from its directory.
                for c in dest.components().rev() {
                    todo.push(c.as_os_str().to_os_string());
                }
                if dest.is_absolute() {
                    at = PathBuf::from("/");
                }
            }
            Err(_) => at = next,
        }
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_chain_is_followed_hop_by_hop_and_each_hop_is_judged() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let out = dir.path().join("outside");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink("sub/b", ws.join("a")).unwrap();
        std::os::unix::fs::symlink(out.join("secret"), ws.join("sub/b")).unwrap();
        let env = Env {
            home: Some(dir.path().join("home")),
            loopguard_home: Some(dir.path().join("state")),
            ..Env::default()
        };
        let c = path_chain(&env, &ws, "a").unwrap();
        let real_ws = std::fs::canonicalize(&ws).unwrap();
        assert_eq!(c.hops.len(), 2, "{c:?}");
        assert!(c.hops[0].inside, "a → sub/b stays inside: {c:?}");
        assert!(!c.hops[1].inside, "sub/b → outside/secret leaves: {c:?}");
        assert!(!c.inside);
        assert_eq!(c.roots, vec![real_ws.display().to_string()]);
        let plain = path_chain(&env, &ws, "sub/new.txt").unwrap();
        assert!(plain.hops.is_empty() && plain.inside, "{plain:?}");
    }

    #[test]
    fn state_md_is_read_only_as_a_plain_file() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("STATE.md");
        std::fs::write(&plain, "x".repeat(100)).unwrap();
        assert_eq!(read_plain(&plain, 10).unwrap().len(), 10, "bounded");
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&plain, &link).unwrap();
        assert_eq!(read_plain(&link, 10), None, "a symlink is not followed");
        let fifo = dir.path().join("fifo.md");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert_eq!(read_plain(&fifo, 10), None, "a FIFO is neither waited on nor read");
    }

    #[test]
    fn a_symlink_loop_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let env = Env { loopguard_home: Some(dir.path().join("state")), ..Env::default() };
        let err = path_chain(&env, dir.path(), "a").unwrap_err();
        assert!(err.contains("symlinks"), "{err}");
    }

    #[test]
    fn each_segment_is_decided_alone() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let env = Env {
            home: Some(dir.path().join("home")),
            loopguard_home: Some(dir.path().join("state")),
            ..Env::default()
        };
        let segs = segments(&env, &dir.path().join("state"), &ws, "Bash", "ls -la && rm -rf / ; echo 'a b'").unwrap();
        let verdicts: Vec<&str> = segs.iter().map(|s| s.verdict).collect();
        assert_eq!(verdicts, vec!["allow", "deny", "allow"], "{segs:?}");
        assert_eq!(segs[2].text, "echo 'a b'");
    }
}
