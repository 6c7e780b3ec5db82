//! The effective policy of a workspace, loaded the one way the hook and every command load it:
//! the built-in policy, the user policy, and the project policy — which may only tighten, unless
//! a human approved it (`loopguard approve`) and the control plane has not drifted since, in
//! which case it may loosen too.

use crate::approval::Drift;
use crate::state::{Env, project_policy};
use loopguard_core::Policy;
use loopguard_core::policy::PolicyError;
use std::path::Path;

/// The approved control plane of a workspace, as of now.
#[derive(Debug)]
pub struct Plane {
    /// What moved since the approval (`Ok(None)`: nothing, or nobody approved this workspace),
    /// or why that cannot be checked.
    pub drift: Result<Option<Drift>, String>,
    /// The approved project policy's hash, when there is an approval and nothing drifted.
    pub approved_project: Option<String>,
}

/// Checks the workspace's approved control plane (cheap unless something moved; nothing at all
/// to do for a workspace nobody approved).
pub fn plane(env: &Env, state: &Path, workspace: &Path) -> Plane {
    let approval = crate::approval::load(state, workspace);
    let drift = match &approval {
        Ok(None) => Ok(None),
        Ok(Some(a)) => crate::approval::check_against(state, &crate::approval::plane(env, workspace), a.clone()),
        Err(e) => Err(e.clone()),
    };
    // A drifted plane approves nothing, the project policy included.
    let approved_project = approval.as_ref().ok().and_then(|a| a.as_ref()).and_then(|a| {
        matches!(drift, Ok(None)).then(|| crate::approval::approved_project_policy(a).map(str::to_string)).flatten()
    });
    Plane { drift, approved_project }
}

/// The workspace's policy given its checked control plane.
pub fn load_with(env: &Env, workspace: &Path, plane: &Plane) -> Result<Policy, PolicyError> {
    Policy::load_approved(
        env.user_policy().as_deref(),
        Some(&project_policy(workspace)),
        plane.approved_project.as_deref(),
    )
}

/// The workspace's policy, as the hook sees it now.
pub fn load(env: &Env, workspace: &Path) -> Result<Policy, PolicyError> {
    let plane = match env.state_home() {
        Ok(state) => plane(env, &state, workspace),
        // No state home: no approval can be read, so the project policy only tightens.
        Err(_) => Plane { drift: Ok(None), approved_project: None },
    };
    load_with(env, workspace, &plane)
}
