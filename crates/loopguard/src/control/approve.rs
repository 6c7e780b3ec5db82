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

/// `loopguard approve --status`.
pub fn approval_status(env: &Env, t: &Target) -> Result<(String, bool), String> {
    let Some(a) = crate::approval::load(&t.state, &t.workspace)? else {
        return Ok(("not approved: the control plane of this worktree is not checked\n".into(), true));
    };
    let plane = crate::approval::Plane {
        workspace: t.workspace.clone(),
        home: env.home.clone(),
        user_policy: env.user_policy(),
        exe: approved_exe(env),
    };
    Ok(match crate::approval::check(&t.state, &plane)? {
        None => (format!("approved by {} at {}: unchanged\n", a.operator, time(a.approved_at)), true),
        Some(d) => (format!("DRIFT since the approval by {}: {}\n", a.operator, d.changes.join(", ")), false),
    })
}
