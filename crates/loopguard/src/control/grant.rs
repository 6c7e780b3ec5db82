//! `loopguard grant add|list|revoke`.

use super::*;

/// `grant add`: a human pre-authorises a tool on a resource in this workspace (or one session),
/// for a while. Needs an operator's passphrase. Over-broad grants are refused unless `broad`.
#[allow(clippy::too_many_arguments)] // one per flag
pub fn grant_add(
    t: &Target,
    operator: &str,
    tool: &str,
    resource: Option<&str>,
    duration: Option<&str>,
    session: Option<&str>,
    reason: &str,
    broad: bool,
    secrets: &mut Secrets,
) -> Result<String, String> {
    use loopguard_core::permissions::{GrantScope, PermissionGrant};
    if reason.trim().is_empty() {
        return Err("--reason must say why".into());
    }
    for (what, g) in [("--tool", Some(tool)), ("--resource", resource)] {
        if let Some(g) = g {
            globset::Glob::new(g).map_err(|e| format!("{what} `{g}` is not a valid glob: {e}"))?;
        }
    }
    let secs = duration
        .map(|d| {
            loopguard_core::policy::parse_duration(d).ok_or_else(|| format!("--for `{d}` is not a duration like 2h"))
        })
        .transpose()?;
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "grant")?;
    drop(store);
    let n = now();
    let mut g = PermissionGrant {
        id: 0,
        tool: tool.to_string(),
        resource: resource.map(str::to_string),
        scope: session.map_or(GrantScope::Repo, |s| GrantScope::Session(s.to_string())),
        expires_at: secs.map(|s| n.saturating_add(i64::try_from(s).unwrap_or(i64::MAX))),
        created_at: n,
        created_by: operator.to_string(),
        reason: reason.to_string(),
    };
    if g.is_over_broad() && !broad {
        return Err(format!(
            "a grant of `{tool}` on any resource allows everything the gate would ask about; narrow it, or pass --allow-broad"
        ));
    }
    let id = hot::write(&t.state, &t.key, |tx| {
        let mut doc = tx.doc();
        doc.ws.next_grant += 1;
        g.id = doc.ws.next_grant;
        doc.ws.grants.retain(|x| x.expires_at.is_none_or(|e| e > n));
        doc.ws.grants.push(g.clone());
        Ok(g.id)
    })?;
    let mut e = NewEvent::new("", EventKind::GrantAdded);
    e.details = Some(json!({ "grant": g, "actor": actor() }));
    t.log().append(e).map_err(|e| format!("grant #{id} made, but the audit event failed: {e}"))?;
    let warn = if g.is_over_broad() { " (over-broad: it allows everything the gate would ask about)" } else { "" };
    Ok(format!(
        "grant #{id}: {tool}{} {}{warn}\n",
        resource.map(|r| format!(" on {r}")).unwrap_or_default(),
        g.expires_at.map_or("until revoked".to_string(), |e| format!("until {}", time(e)))
    ))
}

/// `grant list`, as data: the grants in force here (policy and workspace) and the warnings about
/// them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GrantList {
    /// Every grant, with its state.
    pub grants: Vec<GrantView>,
    /// Warnings (broad grants).
    pub warnings: Vec<String>,
}

/// One grant.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GrantView {
    /// Its id.
    pub id: i64,
    /// The tool.
    pub tool: String,
    /// The resource (none: any).
    pub resource: Option<String>,
    /// What it covers.
    pub scope: String,
    /// The operator who made it.
    pub created_by: String,
    /// Why.
    pub reason: String,
    /// `in force`, `in force until …`, `expired` or `revoked by a breaker trip`.
    pub state: String,
    /// When it was made (Unix seconds).
    pub created_at: i64,
    /// When it expires (Unix seconds; none: until revoked).
    pub expires_at: Option<i64>,
    /// Whether it is in force now.
    pub active: bool,
}

/// `grant list`.
pub fn grant_list(env: &Env, t: &Target) -> Result<GrantList, String> {
    let policy = policy(env, t)?;
    let doc = hot::read(&t.state, &t.key)?;
    let n = now();
    let store = loopguard_core::permissions::PermissionStore {
        grants: policy.grants().iter().chain(&doc.ws.grants).cloned().collect(),
        revoked_at: doc.ws.revoked.as_ref().map(|r| r.0),
    };
    let grants = store
        .grants
        .iter()
        .map(|g| {
            let expired = g.expires_at.is_some_and(|e| n >= e);
            let revoked = g.is_temporary() && store.revoked_at.is_some_and(|r| g.created_at <= r);
            GrantView {
                id: g.id,
                tool: g.tool.clone(),
                resource: g.resource.clone(),
                scope: format!("{:?}", g.scope),
                created_by: g.created_by.clone(),
                reason: g.reason.clone(),
                created_at: g.created_at,
                expires_at: g.expires_at,
                active: !expired && !revoked,
                state: if expired {
                    "expired".to_string()
                } else if revoked {
                    "revoked by a breaker trip".to_string()
                } else {
                    g.expires_at.map_or("in force".to_string(), |e| format!("in force until {}", time(e)))
                },
            }
        })
        .collect();
    Ok(GrantList { grants, warnings: store.warnings() })
}

impl GrantList {
    /// For a human.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for g in &self.grants {
            out.push_str(&format!(
                "#{} {}{} [{}] by {}: {} — {}\n",
                g.id,
                g.tool,
                g.resource.as_deref().map(|r| format!(" on {r}")).unwrap_or_default(),
                g.scope,
                g.created_by,
                g.reason,
                g.state
            ));
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        if out.is_empty() {
            out.push_str("no grants\n");
        }
        out
    }
}

/// `grant revoke ID`: removes a workspace grant (operator only).
pub fn grant_revoke(t: &Target, operator: &str, id: i64, secrets: &mut Secrets) -> Result<String, String> {
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "grant revoke")?;
    drop(store);
    let removed = hot::write(&t.state, &t.key, |tx| {
        let mut doc = tx.doc();
        let before = doc.ws.grants.len();
        doc.ws.grants.retain(|g| g.id != id);
        Ok(before != doc.ws.grants.len())
    })?;
    if !removed {
        return Err(format!("no workspace grant #{id} (policy grants are removed from the policy file)"));
    }
    let mut e = NewEvent::new("", EventKind::GrantRevoked);
    e.details = Some(json!({ "grant": id, "operator": operator, "actor": actor() }));
    let _ = t.log().append(e);
    Ok(format!("grant #{id} revoked\n"))
}
