//! `loopguard approve`: hash approval of the control plane.

use super::*;

/// `loopguard approve`: records the control plane's hashes as approved (operator).
pub fn approve(env: &Env, t: &Target, operator: &str, reason: &str, secrets: &mut Secrets) -> Result<String, String> {
    if reason.trim().is_empty() {
        return Err("--reason must say what was reviewed".into());
    }
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "approve")?;
    drop(store);
    let plane = crate::approval::Plane {
        workspace: t.workspace.clone(),
        home: env.home.clone(),
        user_policy: env.user_policy(),
        exe: approved_exe(env),
    };
    let a = crate::approval::approve(&t.state, &plane, operator, reason, now())?;
    let mut e = NewEvent::new("", EventKind::Approved);
    e.details = Some(serde_json::json!({ "operator": operator, "reason": reason, "groups": a.groups }));
    t.log().append(e).map_err(|e| format!("approved, but the audit log refused the record: {e}"))?;
    let mut out = format!("approved {} files of {}:\n", a.entries.len(), t.workspace.display());
    for (g, h) in &a.groups {
        out.push_str(&format!("  {g:<14} {h}\n"));
    }
    out.push_str("a tripped approval_drift breaker still needs `loopguard breaker reset`.\n");
    Ok(out)
}

/// The harness binary approved: this one, which must be the one the hook runs (`loopguard
/// install` registers the binary it is run from); another copy shows as drift at once.
fn approved_exe(_env: &Env) -> Option<PathBuf> {
    std::env::current_exe().ok()
}

/// `loopguard approve --status`, as data.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Nothing approved: the control plane of this worktree is not checked.
    NotApproved,
    /// Approved, and nothing changed since.
    Unchanged {
        /// Who approved.
        operator: String,
        /// When.
        approved_at: String,
    },
    /// Changed since the approval: writes are denied until a human approves again.
    Drift {
        /// Who approved.
        operator: String,
        /// What changed.
        changes: Vec<String>,
    },
}

impl ApprovalStatus {
    /// Whether nothing drifted (also when nothing is approved).
    pub fn ok(&self) -> bool {
        !matches!(self, ApprovalStatus::Drift { .. })
    }

    /// For a human.
    pub fn render(&self) -> String {
        match self {
            ApprovalStatus::NotApproved => "not approved: the control plane of this worktree is not checked\n".into(),
            ApprovalStatus::Unchanged { operator, approved_at } => {
                format!("approved by {operator} at {approved_at}: unchanged\n")
            }
            ApprovalStatus::Drift { operator, changes } => {
                format!("DRIFT since the approval by {operator}: {}\n", changes.join(", "))
            }
        }
    }
}

/// `loopguard approve --status`.
pub fn approval_status(env: &Env, t: &Target) -> Result<ApprovalStatus, String> {
    let Some(a) = crate::approval::load(&t.state, &t.workspace)? else {
        return Ok(ApprovalStatus::NotApproved);
    };
    let plane = crate::approval::Plane {
        workspace: t.workspace.clone(),
        home: env.home.clone(),
        user_policy: env.user_policy(),
        exe: approved_exe(env),
    };
    Ok(match crate::approval::check(&t.state, &plane)? {
        None => ApprovalStatus::Unchanged { operator: a.operator, approved_at: time(a.approved_at) },
        Some(d) => ApprovalStatus::Drift { operator: a.operator, changes: d.changes },
    })
}
