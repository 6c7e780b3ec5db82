//! The documents of the state home, shared by the per-call state files (`hot`) and the SQLite
//! store (`store`), so that neither depends on the other: a run, the workspace document (breaker,
//! grants, waivers, yolo, canaries), spend aggregates, and trips waiting for their effects.

use loopguard_core::breaker::{BreakerState, Metrics, Reading, Trigger, Trip};
use serde::{Deserialize, Serialize};

/// A store error, as text (every caller turns it into a deny or an exit code).
pub type StoreResult<T> = Result<T, String>;

/// A run: one host session in one workspace. Stored as one JSON document (parsing a document
/// costs less than SQL over twenty columns, and every hook call reads and writes one).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Run {
    /// Workspace key.
    pub workspace: String,
    /// Host session id.
    pub session: String,
    /// Unix seconds.
    pub started_at: i64,
    /// The commit the run started from.
    pub base_ref: Option<String>,
    /// Tool calls decided.
    pub steps: i64,
    /// Blocked decisions in a row.
    pub consecutive_blocks: i64,
    /// Tokens from the transcript.
    pub tokens: i64,
    /// USD from the transcript.
    pub usd: f64,
    /// Some message's cost could not be computed (usage without token counts): USD unknown.
    pub usd_unknown: bool,
    /// The human was told that the kernel cannot confine commands here.
    pub sandbox_notice: bool,
    /// Models without a price in the table whose messages were charged at the table's ceiling
    /// (USD is then an upper bound, "estimated"). At most [`MAX_ESTIMATED_MODELS`] names.
    pub estimated_models: Vec<String>,
    /// Bytes of the transcript already read.
    pub transcript_offset: i64,
    /// Why the transcript could not be read, if it could not.
    pub transcript_error: Option<String>,
    /// In a fleet: the repository key the session's spend is counted under, fixed at its first
    /// call (renaming the remote later does not move the session out of a repository budget).
    pub fleet_repo: Option<String>,
    /// The host reports no spend (no transcript loopguard reads): spend budgets are not
    /// measured for this run (readings of zero with no volume), its other limits are.
    pub spend_unreported: bool,
    /// The last message id counted (a message spans several lines).
    pub last_msg_id: Option<String>,
    /// Calls that carried secrets.
    pub secret_findings: i64,
    /// Calls that tried to change loopguard.
    pub self_protection: i64,
    /// Denylisted paths touched.
    pub denylist: i64,
    /// Calls that used a canary credential or read a canary file.
    pub canary_hits: i64,
    /// Calls made while the control plane did not match its approval.
    pub approval_drift: i64,
    /// Highest reversal count of one region while tests failed.
    pub ping_pong: i64,
    /// Best passing-test count of the run.
    pub best_passed: Option<i64>,
    /// Passing tests in the last run seen.
    pub last_passed: Option<i64>,
    /// Failing tests in the last run seen.
    pub last_failed: Option<i64>,
    /// Test runs seen.
    pub test_runs: i64,
    /// Evidence (audit/escalation) writes that failed.
    pub evidence_failures: i64,
}

/// Most unpriced model names a run remembers (each is shown once to the human).
pub const MAX_ESTIMATED_MODELS: usize = 16;

/// The per-workspace document: the breaker, recent spend (for velocity), revocation, and the
/// break-glass waivers in force.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct WsDoc {
    /// The breaker.
    pub breaker: BreakerState,
    /// Recent spend `(unix seconds, USD or None when unpriced)`, oldest first, pruned to the
    /// longest window any rule may use (24 h).
    pub spend: Vec<(i64, Option<f64>)>,
    /// Grants and credentials revoked as of this time, by this trip.
    pub revoked: Option<(i64, String)>,
    /// Break-glass waivers in force (expired ones are dropped as they are seen).
    pub waivers: Vec<ActiveWaiver>,
    /// Grants made with `loopguard grant` for this workspace (repo or session scope).
    pub grants: Vec<loopguard_core::permissions::PermissionGrant>,
    /// The next grant id.
    pub next_grant: i64,
    /// Yolo, while a human has it on.
    pub yolo: Option<Yolo>,
    /// Canary credentials `loopguard exec` planted (most recent last, at most 32).
    pub canaries: Vec<Canary>,
}

/// A canary credential: a fake value no honest command has a reason to send anywhere.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Canary {
    /// The environment variable it was planted as.
    pub name: String,
    /// The value.
    pub value: String,
    /// The canary file holding it, if one was written.
    pub file: Option<String>,
    /// When (Unix seconds).
    pub at: i64,
}

/// A yolo period: a human let loopguard approve its asks until `until`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Yolo {
    /// The operator who switched it on.
    pub operator: String,
    /// Why.
    pub reason: String,
    /// From (Unix seconds).
    pub from: i64,
    /// Until (Unix seconds).
    pub until: i64,
    /// Calls whose asks it approved.
    pub approved: u64,
    /// How often each rule code was approved.
    pub codes: std::collections::BTreeMap<String, u64>,
}

impl Yolo {
    /// Counts one call it waved through (`record_operation`).
    pub fn record_operation(&mut self, codes: &[String]) {
        self.approved = self.approved.saturating_add(1);
        for c in codes {
            let n = self.codes.entry(c.clone()).or_insert(0);
            *n = n.saturating_add(1);
        }
    }

    /// The closing summary of the period (`audit_summary`), for the audit log.
    pub fn audit_summary(&self, ended: i64, how: &str) -> serde_json::Value {
        serde_json::json!({
            "operator": self.operator, "reason": self.reason, "from": self.from, "until": self.until,
            "ended": ended, "how": how, "approved": self.approved, "codes": self.codes,
        })
    }
}

/// A break-glass waiver in force, as the hook needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ActiveWaiver {
    /// Its id in the break-glass history.
    pub id: i64,
    /// `rule:CODE` and `path:GLOB` entries.
    pub scope: Vec<String>,
    /// Until (Unix seconds).
    pub until: i64,
}

/// Longest spend history kept per workspace.
const SPEND_HISTORY: i64 = 24 * 3600;

/// The metrics the breaker reads: a run, plus spend aggregates computed for the rule windows.
#[derive(Debug, Clone)]
pub struct RunMetrics {
    /// The run.
    pub run: Run,
    /// Now (Unix seconds).
    pub now: i64,
    /// USD today, all workspaces (`None`: some spend had no price).
    pub daily_usd: Option<f64>,
    /// (window seconds, USD in the window, records in the window; `None` USD: unpriced spend).
    pub velocity: Vec<(u64, Option<f64>, u64)>,
}

impl Metrics for RunMetrics {
    fn reading(&self, trigger: Trigger, window: Option<u64>) -> Reading {
        let r = &self.run;
        let n = |v: i64| Reading::of(v as f64, v.max(0) as u64);
        match trigger {
            Trigger::Steps => n(r.steps),
            Trigger::WallClock => n(self.now.saturating_sub(r.started_at).max(0)),
            // The day's spend of the runs that report it still counts.
            Trigger::DailyUsd if r.spend_unreported => {
                self.daily_usd.map_or(Reading::of(0.0, 0), |v| Reading::of(v, 1))
            }
            Trigger::RunTokens | Trigger::RunUsd | Trigger::SpendVelocity if r.spend_unreported => Reading::of(0.0, 0),
            Trigger::RunTokens | Trigger::RunUsd if r.transcript_error.is_some() => Reading::unknown(),
            Trigger::RunTokens => n(r.tokens),
            Trigger::RunUsd if r.usd_unknown => Reading::unknown(),
            Trigger::RunUsd => Reading::of(r.usd, 1),
            Trigger::DailyUsd if r.transcript_error.is_some() => Reading::unknown(),
            Trigger::DailyUsd => self.daily_usd.map_or_else(Reading::unknown, |v| Reading::of(v, 1)),
            Trigger::SpendVelocity => match self.velocity.iter().find(|(w, _, _)| Some(*w) == window) {
                Some((_, Some(usd), count)) if r.transcript_error.is_none() => Reading::of(*usd, *count),
                _ => Reading::unknown(),
            },
            Trigger::ConsecutiveBlocks => n(r.consecutive_blocks),
            Trigger::SecretFindings => n(r.secret_findings),
            Trigger::SelfProtection => n(r.self_protection),
            Trigger::Denylist => n(r.denylist),
            Trigger::Canary => n(r.canary_hits),
            Trigger::ApprovalDrift => n(r.approval_drift),
            Trigger::PingPong => n(r.ping_pong),
            Trigger::TestDegradation => match (r.best_passed, r.last_passed) {
                (Some(best), Some(last)) => Reading::of((best - last).max(0) as f64, r.test_runs.max(0) as u64),
                _ => Reading::of(0.0, r.test_runs.max(0) as u64),
            },
            Trigger::EvidenceFailures => n(r.evidence_failures),
            Trigger::Manual => Reading::of(0.0, 0),
        }
    }
}

impl WsDoc {
    /// Records spend in the recent history (pruned to 24 h).
    pub fn add_spend(&mut self, at: i64, usd: Option<f64>) {
        self.spend.push((at, usd));
        let cut = at.saturating_sub(SPEND_HISTORY);
        let keep_from = self.spend.iter().position(|(t, _)| *t > cut).unwrap_or(self.spend.len());
        self.spend.drain(..keep_from);
    }

    /// USD and record count in the last `window` seconds (`None` USD: some spend unpriced).
    pub fn velocity(&self, now: i64, window: u64) -> (Option<f64>, u64) {
        let since = now.saturating_sub(i64::try_from(window).unwrap_or(i64::MAX));
        let recent = self.spend.iter().filter(|(t, _)| *t > since);
        let (mut usd, mut n, mut unknown) = (0.0, 0u64, false);
        for (_, u) in recent {
            n += 1;
            match u {
                Some(u) => usd += u,
                None => unknown = true,
            }
        }
        ((!unknown).then_some(usd), n)
    }
}

/// UTC day of a Unix time, `YYYY-MM-DD`.
pub fn day_of(t: i64) -> String {
    jiff::Timestamp::from_second(t)
        .map(|ts| ts.strftime("%Y-%m-%d").to_string())
        .unwrap_or_else(|_| "invalid-day".to_string())
}

/// A trip whose effects the flush has not queued yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// The trip (its id is per workspace).
    pub trip: Trip,
    /// The workspace path.
    pub workspace_path: String,
    /// The session that tripped.
    pub session: String,
    /// Revert the worktree.
    pub revert: bool,
    /// The run's base commit.
    pub base_ref: Option<String>,
    /// Post webhook events.
    pub webhook: bool,
    /// The breaker position right after the trip.
    pub position: String,
}
