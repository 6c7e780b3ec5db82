//! Hash approval of the loop's control plane (`loopguard approve`): approve a hash, not a
//! promise. Three groups of files are hashed with SHA-256, each file's label (its path relative
//! to the workspace, the home directory or the binary) folded into the hash, so adding,
//! removing or renaming a file changes it:
//!
//! - **contract**: the user and project policy files;
//! - **harness**: the loopguard binary answering the hook, the hook registrations in
//!   `~/.claude/settings.json` / `settings.local.json`, and every file under `.claude/hooks/`;
//! - **control plane**: `.claude/settings.json`, `.claude/settings.local.json`, `.mcp.json`, and
//!   every file under `.codex/` and `.gemini/`.
//!
//! The record is stored off-tree, in the state home, keyed by repository (the git common
//! directory) and worktree: `approvals/<repo-key>/<worktree-key>.json`. Every call re-checks it:
//! first a cheap metadata comparison (inode, size, mtime, ctime of every file and directory
//! recorded), and only when something moved a full re-hash. A workspace nobody approved is not
//! checked; once approved, any mismatch is drift.

use loopguard_audit::hex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// More files than this under one approved directory is an error (bounds the walk).
const MAX_ENTRIES: usize = 10_000;

/// The approved state of one worktree.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Approval {
    /// Format version (1).
    pub v: u32,
    /// The repository (git common directory).
    pub repo: String,
    /// The worktree.
    pub worktree: String,
    /// Unix seconds.
    pub approved_at: i64,
    /// The operator who approved.
    pub operator: String,
    /// Why.
    pub reason: String,
    /// Hash of each group.
    pub groups: BTreeMap<String, String>,
    /// Each file's label, group and hash (`absent` for a file that does not exist).
    pub entries: Vec<Entry>,
    /// Metadata of every file and directory, for the cheap check.
    pub stats: Vec<(String, String)>,
}

/// One hashed file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    /// `ws:.mcp.json`, `home:.claude/settings.json`, `bin:loopguard`, `user:policy.toml`.
    pub label: String,
    /// `contract`, `harness` or `control_plane`.
    pub group: String,
    /// SHA-256 of the content, `link:<target>` for a symbolic link, or `absent`.
    pub hash: String,
    /// Where it is, and its metadata when hashed (a file whose metadata did not move is not
    /// read again: the loopguard binary alone is megabytes).
    #[serde(default)]
    pub path: String,
    /// Its metadata when hashed (inode, size, mtime, ctime).
    #[serde(default)]
    pub stat: String,
}

/// What is watched, where.
pub struct Plane {
    /// The workspace.
    pub workspace: PathBuf,
    /// The home directory (for `~/.claude`).
    pub home: Option<PathBuf>,
    /// The user policy file.
    pub user_policy: Option<PathBuf>,
    /// The loopguard binary answering the hook.
    pub exe: Option<PathBuf>,
}

struct Item {
    group: &'static str,
    label: String,
    path: PathBuf,
    recursive: bool,
}

impl Plane {
    fn items(&self) -> Vec<Item> {
        let ws = |rel: &str, group, recursive| Item {
            group,
            label: format!("ws:{rel}"),
            path: self.workspace.join(rel),
            recursive,
        };
        let mut v = Vec::new();
        if let Some(u) = &self.user_policy {
            v.push(Item { group: "contract", label: "user:policy.toml".into(), path: u.clone(), recursive: false });
        }
        v.push(ws(".loopguard/policy.toml", "contract", false));
        if let Some(e) = &self.exe {
            v.push(Item { group: "harness", label: "bin:loopguard".into(), path: e.clone(), recursive: false });
        }
        if let Some(h) = &self.home {
            for f in [".claude/settings.json", ".claude/settings.local.json"] {
                v.push(Item { group: "harness", label: format!("home:{f}"), path: h.join(f), recursive: false });
            }
        }
        v.push(ws(".claude/hooks", "harness", true));
        for f in [".claude/settings.json", ".claude/settings.local.json", ".mcp.json"] {
            v.push(ws(f, "control_plane", false));
        }
        v.push(ws(".codex", "control_plane", true));
        v.push(ws(".gemini", "control_plane", true));
        v
    }

    /// Hashes everything: the entries, the group hashes and the metadata.
    #[allow(clippy::type_complexity)]
    fn measure(
        &self,
        known: Option<&Approval>,
    ) -> Result<(Vec<Entry>, BTreeMap<String, String>, Vec<(String, String)>), String> {
        let mut entries = Vec::new();
        let mut stats = Vec::new();
        let cache: BTreeMap<(&str, &str), &str> = known
            .map(|a| {
                a.entries
                    .iter()
                    .filter(|e| !e.stat.is_empty() && e.stat != "absent")
                    .map(|e| ((e.path.as_str(), e.stat.as_str()), e.hash.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        for it in self.items() {
            walk(&it, &it.path, &it.label, 0, &cache, &mut entries, &mut stats)?;
        }
        entries.sort_by(|a, b| a.label.cmp(&b.label));
        let mut groups: BTreeMap<String, Sha256> = BTreeMap::new();
        for g in ["contract", "harness", "control_plane"] {
            groups.insert(g.into(), Sha256::new());
        }
        for e in &entries {
            if let Some(h) = groups.get_mut(&e.group) {
                // Label and hash, each terminated: renaming a file changes the group's hash.
                h.update(e.label.as_bytes());
                h.update([0]);
                h.update(e.hash.as_bytes());
                h.update([0]);
            }
        }
        let groups = groups.into_iter().map(|(k, h)| (k, hex(&h.finalize()))).collect();
        Ok((entries, groups, stats))
    }
}

fn stat_of(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) => format!("{}:{}:{}.{}:{}.{}", m.ino(), m.len(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()),
        Err(_) => "absent".into(),
    }
}

fn walk(
    it: &Item,
    path: &Path,
    label: &str,
    depth: usize,
    cache: &BTreeMap<(&str, &str), &str>,
    entries: &mut Vec<Entry>,
    stats: &mut Vec<(String, String)>,
) -> Result<(), String> {
    if entries.len() > MAX_ENTRIES || depth > 16 {
        return Err(format!("{} holds too many files or levels to approve", it.path.display()));
    }
    let (shown, stat) = (path.display().to_string(), stat_of(path));
    stats.push((shown.clone(), stat.clone()));
    let entry = |hash: String| Entry {
        label: label.to_string(),
        group: it.group.to_string(),
        hash,
        path: shown.clone(),
        stat: stat.clone(),
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            entries.push(entry("absent".into()));
            return Ok(());
        }
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).map_err(|e| format!("{}: {e}", path.display()))?;
        entries.push(entry(format!("link:{}", target.display())));
    } else if meta.is_dir() && it.recursive {
        let mut names: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        names.sort();
        if names.is_empty() {
            entries.push(entry("empty-dir".into()));
        }
        for n in names {
            let child_label = format!("{label}/{}", n.to_string_lossy());
            walk(it, &path.join(&n), &child_label, depth + 1, cache, entries, stats)?;
        }
    } else if let Some(h) = meta.is_file().then(|| cache.get(&(shown.as_str(), stat.as_str()))).flatten() {
        entries.push(entry(h.to_string()));
    } else if meta.is_file() {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        entries.push(entry(hex(&Sha256::digest(&bytes))));
    } else {
        entries.push(entry("not-a-file".into()));
    }
    Ok(())
}

/// The git common directory of a worktree, read from `.git` without running git (this runs on
/// every call): a directory is its own; a `.git` file points at the worktree's git dir, whose
/// `commondir` names the shared one.
pub fn git_common_dir(workspace: &Path) -> PathBuf {
    let dot = workspace.join(".git");
    if let Ok(text) = std::fs::read_to_string(&dot)
        && let Some(gitdir) = text.trim().strip_prefix("gitdir:")
    {
        let gitdir = workspace.join(gitdir.trim());
        if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
            let c = gitdir.join(common.trim());
            return std::fs::canonicalize(&c).unwrap_or(c);
        }
        return gitdir;
    }
    std::fs::canonicalize(&dot).unwrap_or(dot)
}

/// The control plane of a workspace as the hook sees it (the running binary as the harness).
pub fn plane(env: &crate::state::Env, workspace: &Path) -> Plane {
    Plane {
        workspace: workspace.to_path_buf(),
        home: env.home.clone(),
        user_policy: env.user_policy(),
        exe: std::env::current_exe().ok(),
    }
}

/// Where the approval of a worktree is kept.
pub fn record_path(state: &Path, workspace: &Path) -> PathBuf {
    let repo = crate::state::workspace_key(&git_common_dir(workspace));
    state.join("approvals").join(repo).join(format!("{}.json", crate::state::workspace_key(workspace)))
}

fn write_record(path: &Path, a: &Approval) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        loopguard_audit::create_private_dir(dir).map_err(|e| e.to_string())?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec_pretty(a).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, path).map_err(|e| e.to_string())
}

/// Records the current hashes as approved. Returns the record.
pub fn approve(state: &Path, plane: &Plane, operator: &str, reason: &str, now: i64) -> Result<Approval, String> {
    let (entries, groups, stats) = plane.measure(None)?;
    let a = Approval {
        v: 1,
        repo: git_common_dir(&plane.workspace).display().to_string(),
        worktree: plane.workspace.display().to_string(),
        approved_at: now,
        operator: operator.into(),
        reason: reason.into(),
        groups,
        entries,
        stats,
    };
    write_record(&record_path(state, &plane.workspace), &a)?;
    Ok(a)
}

/// The approval of a worktree, if any. A record that exists but does not read is an error.
pub fn load(state: &Path, workspace: &Path) -> Result<Option<Approval>, String> {
    let path = record_path(state, workspace);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("the approval record {} is unreadable: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// What changed since the approval.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// Labels changed, added or removed, with what happened.
    pub changes: Vec<String>,
}

impl Drift {
    /// One line for reasons and the audit.
    pub fn describe(&self) -> String {
        let shown: Vec<&str> = self.changes.iter().take(6).map(String::as_str).collect();
        let more = self.changes.len().saturating_sub(shown.len());
        format!("{}{}", shown.join(", "), if more > 0 { format!(" and {more} more") } else { String::new() })
    }
}

/// Checks a worktree against its approval. `Ok(None)`: not approved (not checked) or unchanged.
pub fn check(state: &Path, plane: &Plane) -> Result<Option<Drift>, String> {
    match load(state, &plane.workspace)? {
        Some(a) => check_against(state, plane, a),
        None => Ok(None),
    }
}

/// Checks a worktree against an approval already loaded. `Ok(None)`: unchanged.
pub fn check_against(state: &Path, plane: &Plane, mut a: Approval) -> Result<Option<Drift>, String> {
    // Cheap: nothing recorded moved, and no directory gained or lost an entry.
    if a.stats.iter().all(|(p, s)| stat_of(Path::new(p)) == *s)
        && plane.items().iter().all(|it| {
            let p = it.path.display().to_string();
            a.stats.iter().any(|(q, _)| *q == p)
        })
    {
        return Ok(None);
    }
    let (entries, groups, stats) = plane.measure(Some(&a))?;
    if groups == a.groups {
        // Touched but identical: remember the new metadata so the next check is cheap again.
        a.stats = stats;
        a.entries = entries;
        let _ = write_record(&record_path(state, &plane.workspace), &a);
        return Ok(None);
    }
    let old: BTreeMap<&str, &str> = a.entries.iter().map(|e| (e.label.as_str(), e.hash.as_str())).collect();
    let new: BTreeMap<&str, &str> = entries.iter().map(|e| (e.label.as_str(), e.hash.as_str())).collect();
    let mut changes = Vec::new();
    for (label, h) in &new {
        match old.get(label) {
            None => changes.push(format!("{label} added")),
            Some(o) if o != h => changes.push(format!(
                "{label} {}",
                match (*o, *h) {
                    ("absent", _) => "created",
                    (_, "absent") => "deleted",
                    _ => "changed",
                }
            )),
            _ => {}
        }
    }
    for label in old.keys().filter(|l| !new.contains_key(*l)) {
        changes.push(format!("{label} removed"));
    }
    Ok(Some(Drift { changes }))
}

/// The current hash of each group (contract, harness, control_plane).
pub fn group_hashes(plane: &Plane) -> Result<BTreeMap<String, String>, String> {
    plane.measure(None).map(|(_, g, _)| g)
}

/// The approved SHA-256 of the project policy file, for loading it as an approved layer.
pub fn approved_project_policy(a: &Approval) -> Option<&str> {
    a.entries.iter().find(|e| e.label == "ws:.loopguard/policy.toml").map(|e| e.hash.as_str()).filter(|h| h.len() == 64)
}
