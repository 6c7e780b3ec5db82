//! The state store: one SQLite database in the state home (`state.db`) holding each
//! workspace's breaker, each run's metrics, spend records, edit history for ping-pong detection,
//! operators, break-glass waivers and the webhook outbox.
//!
//! Every hook call runs its read-modify-write inside one `BEGIN IMMEDIATE` transaction, so
//! concurrent hook processes (the host runs parallel tool calls as parallel hooks) serialise on
//! the database lock and no update is lost. Anything that fails here fails the call closed.

use loopguard_core::breaker::{BreakerState, Metrics, Reading, Trigger, Trip};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::time::Duration;

/// Schema version in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS operators (
    name       TEXT PRIMARY KEY,
    phc        TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS break_glass (
    id        INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    operators TEXT NOT NULL,
    scope     TEXT NOT NULL,
    reason    TEXT NOT NULL,
    from_at   INTEGER NOT NULL,
    until_at  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS effects (
    id             INTEGER PRIMARY KEY,
    trip_id        INTEGER NOT NULL,
    workspace      TEXT NOT NULL,
    workspace_path TEXT NOT NULL,
    session        TEXT NOT NULL,
    trip           TEXT NOT NULL,
    revert         INTEGER NOT NULL,
    base_ref       TEXT,
    created_at     INTEGER NOT NULL,
    done_at        INTEGER,
    result         TEXT,
    UNIQUE (workspace, trip_id)
);
CREATE TABLE IF NOT EXISTS outbox (
    id           INTEGER PRIMARY KEY,
    workspace    TEXT NOT NULL,
    event        TEXT NOT NULL,
    body         TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      INTEGER NOT NULL,
    delivered_at INTEGER,
    last_error   TEXT
);
";

/// A webhook event due for delivery: (id, workspace key, event, body, attempts so far).
pub type Outgoing = (i64, String, String, String, i64);

/// A store error, as text (every caller turns it into a deny or an exit code).
pub type StoreResult<T> = Result<T, String>;

fn sql(e: rusqlite::Error) -> String {
    format!("state store: {e}")
}

/// An open state store.
pub struct Store {
    conn: Connection,
    path: std::path::PathBuf,
}

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

impl Store {
    /// Opens (creating) `<state home>/state.db`. Waits up to `busy` for other writers.
    pub fn open(state_home: &Path, busy: Duration) -> StoreResult<Store> {
        loopguard_audit::create_private_dir(state_home).map_err(|e| format!("state home: {e}"))?;
        let path = state_home.join("state.db");
        let conn = Connection::open(&path).map_err(sql)?;
        conn.busy_timeout(busy).map_err(sql)?;
        // Every hook is a short-lived process and usually the database's only connection.
        // Measured per call on this project's machines (examples/prof_breaker.rs, open + the
        // breaker transaction + close): WAL mode ~0.95 ms (the last connection to close
        // checkpoints and deletes the WAL, the next one recreates it), a rollback journal with
        // synchronous=NORMAL ~0.65 ms (two fsyncs per commit), PERSIST with synchronous=OFF
        // ~0.29 ms. So: no fsync per commit. A crash of loopguard or of the agent cannot corrupt
        // the database (the journal is still written and used); an OS crash or power loss can lose
        // the last counter updates, so commits that record a trip are flushed with `sync`. A
        // database that does not open or read is an error, which the hook turns into a deny.
        conn.execute_batch("PRAGMA journal_mode=PERSIST; PRAGMA synchronous=OFF;").map_err(sql)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql)?;
        if version > SCHEMA_VERSION {
            return Err(format!(
                "state store: schema version {version} is newer than this loopguard understands ({SCHEMA_VERSION})"
            ));
        }
        if version < SCHEMA_VERSION {
            let tx = conn.unchecked_transaction().map_err(sql)?;
            tx.execute_batch(SCHEMA).map_err(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};")).map_err(sql)?;
            tx.commit().map_err(sql)?;
        }
        Ok(Store { conn, path })
    }

    /// Flushes the database file to disk (after a commit that must survive a power loss).
    pub fn sync(&self) -> StoreResult<()> {
        std::fs::File::open(&self.path).and_then(|f| f.sync_all()).map_err(|e| format!("state store: sync: {e}"))
    }

    /// Runs `f` inside one `BEGIN IMMEDIATE` transaction (committed when `f` returns `Ok`).
    pub fn write<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> StoreResult<T>) -> StoreResult<T> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let out = f(&Tx { tx: &tx })?;
        tx.commit().map_err(sql)?;
        Ok(out)
    }

    /// Runs `f` in a read transaction.
    pub fn read<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> StoreResult<T>) -> StoreResult<T> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Deferred).map_err(sql)?;
        f(&Tx { tx: &tx })
    }
}

/// A transaction on the store.
pub struct Tx<'a> {
    tx: &'a rusqlite::Transaction<'a>,
}

impl Tx<'_> {
    /// Queues a webhook event.
    pub fn enqueue(&self, workspace: &str, event: &str, body: &str, now: i64) -> StoreResult<()> {
        self.tx
            .execute(
                "INSERT INTO outbox (workspace, event, body, next_at) VALUES (?1, ?2, ?3, ?4)",
                params![workspace, event, body, now],
            )
            .map_err(sql)?;
        Ok(())
    }

    /// Webhook events due for delivery: (id, workspace, event, body, attempts).
    pub fn due(&self, now: i64, max_attempts: i64) -> StoreResult<Vec<Outgoing>> {
        let mut stmt = self
            .tx
            .prepare(
                "SELECT id, workspace, event, body, attempts FROM outbox
                 WHERE delivered_at IS NULL AND attempts < ?2 AND next_at <= ?1 ORDER BY id",
            )
            .map_err(sql)?;
        stmt.query_map(params![now, max_attempts], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
            .map_err(sql)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql)
    }

    /// Undelivered events that will be tried again: the earliest next attempt.
    pub fn next_due(&self, max_attempts: i64) -> StoreResult<Option<i64>> {
        self.tx
            .query_row(
                "SELECT MIN(next_at) FROM outbox WHERE delivered_at IS NULL AND attempts < ?1",
                [max_attempts],
                |r| r.get(0),
            )
            .map_err(sql)
    }

    /// Records a delivery attempt.
    pub fn attempted(&self, id: i64, now: i64, error: Option<&str>, next_at: i64) -> StoreResult<()> {
        match error {
            None => self.tx.execute(
                "UPDATE outbox SET attempts = attempts + 1, delivered_at = ?2, last_error = NULL WHERE id = ?1",
                params![id, now],
            ),
            Some(e) => self.tx.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?2, next_at = ?3 WHERE id = ?1",
                params![id, e, next_at],
            ),
        }
        .map_err(sql)?;
        Ok(())
    }

    /// An operator's password hash (PHC string).
    pub fn operator(&self, name: &str) -> StoreResult<Option<String>> {
        self.tx.query_row("SELECT phc FROM operators WHERE name = ?1", [name], |r| r.get(0)).optional().map_err(sql)
    }

    /// How many operators exist.
    pub fn operator_count(&self) -> StoreResult<i64> {
        self.tx.query_row("SELECT COUNT(*) FROM operators", [], |r| r.get(0)).map_err(sql)
    }

    /// Adds an operator (fails if the name exists).
    pub fn add_operator(&self, name: &str, phc: &str, now: i64, by: &str) -> StoreResult<()> {
        self.tx
            .execute(
                "INSERT INTO operators (name, phc, created_at, created_by) VALUES (?1, ?2, ?3, ?4)",
                params![name, phc, now, by],
            )
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation => {
                    format!("an operator named `{name}` already exists")
                }
                e => sql(e),
            })?;
        Ok(())
    }

    /// Records a break-glass waiver; returns its id.
    pub fn add_break_glass(&self, workspace: &str, bg: &BreakGlass) -> StoreResult<i64> {
        self.tx
            .execute(
                "INSERT INTO break_glass (workspace, operators, scope, reason, from_at, until_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![workspace, bg.operators.join(","), bg.scope.join("\n"), bg.reason, bg.from, bg.until],
            )
            .map_err(sql)?;
        Ok(self.tx.last_insert_rowid())
    }
}

/// A trip's pending effects.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    /// Store id.
    pub id: i64,
    /// Workspace key.
    pub workspace: String,
    /// Workspace path.
    pub workspace_path: String,
    /// The session that tripped.
    pub session: String,
    /// The trip.
    pub trip: Trip,
    /// Revert the worktree.
    pub revert: bool,
    /// The run's base commit.
    pub base_ref: Option<String>,
}

impl Tx<'_> {
    /// Queues a trip's effects (once: a trip already queued is left alone). True when new.
    pub fn add_effect(&self, workspace: &str, p: &crate::hot::Pending, now: i64) -> StoreResult<bool> {
        let text = serde_json::to_string(&p.trip).map_err(|e| format!("state store: {e}"))?;
        let n = self
            .tx
            .execute(
                "INSERT OR IGNORE INTO effects (trip_id, workspace, workspace_path, session, trip, revert, base_ref, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![p.trip.id, workspace, p.workspace_path, p.session, text, p.revert, p.base_ref, now],
            )
            .map_err(sql)?;
        Ok(n == 1)
    }

    /// Effects not carried out yet, oldest first.
    pub fn pending_effects(&self) -> StoreResult<Vec<Effect>> {
        let mut stmt = self
            .tx
            .prepare("SELECT id, workspace, workspace_path, session, trip, revert, base_ref FROM effects WHERE done_at IS NULL ORDER BY id")
            .map_err(sql)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get::<_, String>(4)?, r.get(5)?, r.get(6)?))
            })
            .map_err(sql)?
            .collect::<Result<Vec<(i64, String, String, String, String, bool, Option<String>)>, _>>()
            .map_err(sql)?;
        rows.into_iter()
            .map(|(id, workspace, workspace_path, session, trip, revert, base_ref)| {
                let trip: Trip = serde_json::from_str(&trip).map_err(|e| format!("state store: trip: {e}"))?;
                Ok(Effect { id, workspace, workspace_path, session, trip, revert, base_ref })
            })
            .collect()
    }

    /// Marks an effect carried out, with what happened.
    pub fn finish_effect(&self, id: i64, now: i64, result: &str) -> StoreResult<()> {
        self.tx
            .execute("UPDATE effects SET done_at = ?2, result = ?3 WHERE id = ?1", params![id, now, result])
            .map_err(sql)?;
        Ok(())
    }
}

/// A break-glass waiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakGlass {
    /// Store id.
    pub id: i64,
    /// The operators who authorised it.
    pub operators: Vec<String>,
    /// What it waives: `rule:CODE` and `path:GLOB` entries.
    pub scope: Vec<String>,
    /// Why.
    pub reason: String,
    /// From (Unix seconds).
    pub from: i64,
    /// Until (Unix seconds).
    pub until: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(d.path(), Duration::from_secs(5)).unwrap();
        (d, s)
    }

    #[test]
    fn spend_history_gives_velocity_and_is_pruned() {
        let mut doc = WsDoc::default();
        doc.add_spend(100, Some(1.0));
        doc.add_spend(500, Some(0.5));
        assert_eq!(doc.velocity(600, 300), (Some(0.5), 1));
        assert_eq!(doc.velocity(600, 600), (Some(1.5), 2));
        doc.add_spend(550, None);
        assert_eq!(doc.velocity(600, 300), (None, 2));
        doc.add_spend(100 + 24 * 3600 + 1, Some(1.0));
        assert_eq!(doc.spend.len(), 3, "history older than a day is dropped");
    }

    #[test]
    fn a_trip_is_queued_once() {
        let (_d, mut s) = store();
        let trip = Trip {
            id: 3,
            trigger: Trigger::Steps,
            action: loopguard_core::breaker::TripAction::Stop,
            value: Some(20.0),
            threshold: 20.0,
            reason: "r".into(),
            session: "s".into(),
            at: 0,
            cooldown_until: 0,
            reset: loopguard_core::breaker::ResetRule::Manual,
        };
        let p = crate::hot::Pending {
            trip,
            workspace_path: "/w".into(),
            session: "s".into(),
            revert: true,
            base_ref: None,
            webhook: false,
            position: "stopped".into(),
        };
        assert!(s.write(|tx| tx.add_effect("w", &p, 1)).unwrap());
        assert!(!s.write(|tx| tx.add_effect("w", &p, 2)).unwrap());
        assert!(s.write(|tx| tx.add_effect("other", &p, 2)).unwrap(), "ids are per workspace");
        let pending = s.read(|tx| tx.pending_effects()).unwrap();
        assert_eq!(pending.len(), 2);
        assert_eq!(pending[0].trip.id, 3);
    }

    #[test]
    fn operators_are_unique() {
        let (_d, mut s) = store();
        s.write(|tx| tx.add_operator("alice", "$argon2id$x", 1, "init")).unwrap();
        let e = s.write(|tx| tx.add_operator("alice", "$argon2id$y", 2, "init")).unwrap_err();
        assert!(e.contains("already exists"), "{e}");
        assert_eq!(s.read(|tx| tx.operator_count()).unwrap(), 1);
    }
}
