//! Grants: a human's pre-authorisation of a tool on a resource, scoped and possibly temporary.
//! A matching grant turns an *ask* into an allow (the pre-authorised fast path); it never
//! touches a deny, and never a backstop. Grants are re-checked on every call — nothing caches an
//! authorisation, so a grant that expires between two calls no longer counts at the second.

use crate::ToolCall;
use serde::{Deserialize, Serialize};

/// Where a grant applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantScope {
    /// One host session.
    Session(String),
    /// The workspace (repository) it is stored with.
    Repo,
    /// Every workspace of the user (from the user policy).
    User,
}

/// One grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionGrant {
    /// Id (per store).
    pub id: i64,
    /// Tool name or glob (`Bash`, `mcp__github__*`).
    pub tool: String,
    /// Resource glob (a path for file tools, the command for Bash, the URL for WebFetch); `None`
    /// for any resource.
    pub resource: Option<String>,
    /// Where it applies.
    pub scope: GrantScope,
    /// Unix seconds after which it no longer applies (`None`: until removed).
    pub expires_at: Option<i64>,
    /// Unix seconds it was made.
    pub created_at: i64,
    /// Who made it (operator name, or `policy`).
    pub created_by: String,
    /// Why.
    pub reason: String,
}

/// The resource a call acts on, for grant matching.
pub fn resource_of(call: &ToolCall) -> Option<&str> {
    call.action.resource()
}

fn glob_match(pattern: &str, text: &str) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher().is_match(text))
        .unwrap_or(false)
}

impl PermissionGrant {
    /// Whether the grant is temporary (has an expiry).
    pub fn is_temporary(&self) -> bool {
        self.expires_at.is_some()
    }

    /// Whether the grant covers any tool on any resource.
    pub fn is_over_broad(&self) -> bool {
        matches!(self.tool.as_str(), "*" | "**")
            && self.resource.as_deref().is_none_or(|r| matches!(r, "*" | "**" | "/**" | "**/*"))
    }

    /// Whether the grant covers `call` in `session` at `now`. Temporary grants made before
    /// `revoked_at` (a breaker trip revoked them) cover nothing.
    pub fn covers(&self, call: &ToolCall, session: Option<&str>, now: i64, revoked_at: Option<i64>) -> bool {
        if self.expires_at.is_some_and(|e| now >= e) {
            return false;
        }
        if self.is_temporary() && revoked_at.is_some_and(|r| self.created_at <= r) {
            return false;
        }
        if let GrantScope::Session(s) = &self.scope
            && Some(s.as_str()) != session
        {
            return false;
        }
        if !(self.tool == call.tool || glob_match(&self.tool, &call.tool)) {
            return false;
        }
        match &self.resource {
            None => true,
            Some(pattern) => resource_of(call).is_some_and(|r| glob_match(pattern, r)),
        }
    }
}

/// The grants in force for a call: from the policy, from `loopguard grant`, for the session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionStore {
    /// Every grant.
    pub grants: Vec<PermissionGrant>,
    /// When temporary grants were last revoked (a breaker trip).
    pub revoked_at: Option<i64>,
}

impl PermissionStore {
    /// The first grant covering the call, checked now (never cached).
    pub fn is_authorized(&self, call: &ToolCall, session: Option<&str>, now: i64) -> Option<&PermissionGrant> {
        self.grants.iter().find(|g| g.covers(call, session, now, self.revoked_at))
    }

    /// Warnings about grants that cover everything.
    pub fn warnings(&self) -> Vec<String> {
        self.grants
            .iter()
            .filter(|g| g.is_over_broad())
            .map(|g| {
                format!(
                    "grant #{} (`{}` on any resource, by {}) allows everything the gate would ask about",
                    g.id, g.tool, g.created_by
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grant(tool: &str, resource: Option<&str>, expires_at: Option<i64>) -> PermissionGrant {
        PermissionGrant {
            id: 1,
            tool: tool.into(),
            resource: resource.map(str::to_string),
            scope: GrantScope::Repo,
            expires_at,
            created_at: 100,
            created_by: "ann".into(),
            reason: "r".into(),
        }
    }

    #[test]
    fn grants_match_tool_and_resource_globs() {
        let call = crate::testing::call("mcp__github__create_issue", json!({}), "/w");
        assert!(grant("mcp__github__*", None, None).covers(&call, None, 0, None));
        assert!(!grant("mcp__jira__*", None, None).covers(&call, None, 0, None));
        let push = crate::testing::call("Bash", json!({"command": "git push origin feature/x"}), "/w");
        assert!(grant("Bash", Some("git push origin feature/*"), None).covers(&push, None, 0, None));
        assert!(!grant("Bash", Some("git push origin main"), None).covers(&push, None, 0, None));
        let read = crate::testing::call("Read", json!({"file_path": "/w/docs/a.md"}), "/w");
        assert!(grant("Read", Some("/w/docs/**"), None).covers(&read, None, 0, None));
    }

    #[test]
    fn grants_expire_between_calls_and_are_revoked_by_a_trip() {
        let call = crate::testing::call("WebFetch", json!({"url": "https://docs.rs/x"}), "/w");
        let g = grant("WebFetch", Some("https://docs.rs/*"), Some(700));
        let store = PermissionStore { grants: vec![g.clone()], revoked_at: None };
        assert!(store.is_authorized(&call, None, 699).is_some());
        assert!(store.is_authorized(&call, None, 700).is_none(), "expired at 700");
        let revoked = PermissionStore { grants: vec![g], revoked_at: Some(150) };
        assert!(revoked.is_authorized(&call, None, 200).is_none(), "made before the trip");
        let permanent = PermissionStore { grants: vec![grant("WebFetch", None, None)], revoked_at: Some(150) };
        assert!(permanent.is_authorized(&call, None, 200).is_some(), "a trip revokes temporary grants only");
    }

    #[test]
    fn session_grants_stay_in_their_session_and_broad_grants_warn() {
        let call = crate::testing::call("Bash", json!({"command": "ls"}), "/w");
        let mut g = grant("Bash", None, None);
        g.scope = GrantScope::Session("s1".into());
        assert!(g.covers(&call, Some("s1"), 0, None));
        assert!(!g.covers(&call, Some("s2"), 0, None));
        let store =
            PermissionStore { grants: vec![grant("*", None, None), grant("*", Some("**"), None), g], revoked_at: None };
        assert_eq!(store.warnings().len(), 2);
    }
}

/// What the permission check concluded about one call — the object callers branch on.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionResult {
    /// allow, ask or deny.
    pub decision: crate::Verdict,
    /// Why, strictest first.
    pub reasons: Vec<crate::Reason>,
    /// The grant that pre-authorised the call.
    pub matched_grant: Option<i64>,
    /// How risky the call is.
    pub risk: crate::RiskLevel,
    /// The autonomy level it needs.
    pub required_level: crate::AutonomyLevel,
    /// min(policy level, breaker cap); `None` when the breaker stops everything.
    pub effective_level: Option<crate::AutonomyLevel>,
    /// A human must confirm it (the decision is ask).
    pub needs_confirmation: bool,
    /// Codes whose asks yolo approved.
    pub yolo_approved: Vec<String>,
    /// Codes a break-glass waived.
    pub waived: Vec<String>,
    /// The full decision (for its explanation).
    pub full: crate::Decision,
}

impl From<crate::Decision> for PermissionResult {
    fn from(d: crate::Decision) -> Self {
        PermissionResult {
            decision: d.verdict(),
            reasons: d.reasons().to_vec(),
            matched_grant: d.granted(),
            risk: d.risk(),
            required_level: d.required_level(),
            effective_level: d.effective_level(),
            needs_confirmation: d.verdict() == crate::Verdict::Ask,
            yolo_approved: d.yolo_approved().to_vec(),
            waived: d.waived().to_vec(),
            full: d,
        }
    }
}

/// Checks calls against a policy and the context's grants, mode and breaker.
#[derive(Debug, Clone, Copy)]
pub struct PermissionChecker<'p> {
    gate: crate::Gate<'p>,
}

impl<'p> PermissionChecker<'p> {
    /// A checker over a loaded policy.
    pub fn new(policy: &'p crate::Policy) -> Self {
        PermissionChecker { gate: crate::Gate::new(policy) }
    }

    /// Checks one call. Cannot fail (the gate turns any internal error into a deny).
    pub fn check(&self, call: &ToolCall, ctx: &crate::Context) -> PermissionResult {
        self.gate.evaluate(call, ctx).into()
    }
}

#[cfg(test)]
mod checker_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_result_carries_what_callers_branch_on() {
        let p = crate::Policy::builtin();
        let checker = PermissionChecker::new(&p);
        let ctx = crate::Context::new("/w").with_mode(crate::ExecutionMode::Normal).with_home(None);
        let r = checker.check(&crate::testing::call("mcp__a__b", json!({}), "/w"), &ctx);
        assert_eq!(r.decision, crate::Verdict::Ask);
        assert!(r.needs_confirmation);
        assert_eq!(r.required_level, crate::AutonomyLevel::Implement);
        assert_eq!(r.effective_level, Some(crate::AutonomyLevel::Pr));
        assert_eq!(r.reasons[0].code, "tool-policy");
        assert!(r.matched_grant.is_none());
        let r = checker.check(&crate::testing::call("Bash", json!({"command": "rm -rf /"}), "/w"), &ctx);
        assert_eq!(
            (r.decision, r.needs_confirmation, r.risk),
            (crate::Verdict::Deny, false, crate::RiskLevel::Critical)
        );
    }
}
