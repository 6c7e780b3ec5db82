//! The human side of loopguard, one file per command group: the breaker (`status`, `check`,
//! `reset`, `trip`), operators, break-glass, grants, yolo and the control-plane approval. Every
//! change needs an operator's passphrase (or, for tightening, nothing); the gate denies these
//! subcommands to agents. This module holds what they share: the target workspace and its
//! policy, time and actor formatting.

mod approve;
mod break_glass;
mod breaker;
mod grant;
mod operators;
mod yolo;

pub use approve::{ApprovalStatus, approval_status, approve};
pub use break_glass::break_glass;
pub use breaker::{BreakerStatus, BudgetView, RevokedView, RunView, TripView, WaiverView, reset, status, trip};
pub use grant::{GrantList, GrantView, grant_add, grant_list, grant_revoke};
pub use operators::operator_init;
pub use yolo::{yolo_off, yolo_on};

use crate::effects::{self, now};
use crate::hot;
use crate::model::{RunMetrics, day_of};
use crate::operator::{self, Secrets};
use crate::state::{Env, audit_log, workspace_key};
use crate::store::{BreakGlass, Store};
use loopguard_audit::{AuditLog, EventKind, NewEvent};
use loopguard_core::Policy;
use loopguard_core::breaker::{BreakerState, Metrics, ResetRule, Trigger, TripAction, fmt_value};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The workspace a command run in `cwd` is about, and its key.
pub struct Target {
    /// The workspace root.
    pub workspace: PathBuf,
    /// Its key in the store.
    pub key: String,
    /// The state home.
    pub state: PathBuf,
}

impl Target {
    /// The workspace of `cwd`.
    pub fn of(env: &Env, cwd: &Path) -> Result<Target, String> {
        let workspace = env.workspace_for(cwd);
        Ok(Target { key: workspace_key(&workspace), workspace, state: env.state_home()? })
    }

    pub(crate) fn store(&self) -> Result<Store, String> {
        Store::open(&self.state, Duration::from_secs(10))
    }

    pub(crate) fn log(&self) -> AuditLog {
        audit_log(&self.state, &self.workspace)
    }
}

pub(crate) fn policy(env: &Env, t: &Target) -> Result<Policy, String> {
    crate::effective::load(env, &t.workspace).map_err(|e| format!("the policy does not load: {e}"))
}

pub(crate) fn time(t: i64) -> String {
    jiff::Timestamp::from_second(t).map_or_else(|_| t.to_string(), |ts| ts.to_string())
}

pub(crate) fn actor() -> String {
    std::env::var("USER").unwrap_or_else(|_| "unknown".into())
}
