//! The state store: one SQLite database in the state home (`state.db`, WAL mode) holding each
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
CREATE TABLE IF NOT EXISTS breaker (
    workspace TEXT PRIMARY KEY,
    state     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    workspace          TEXT NOT NULL,
    session            TEXT NOT NULL,
    started_at         INTEGER NOT NULL,
    base_ref           TEXT,
    steps              INTEGER NOT NULL DEFAULT 0,
    consecutive_blocks INTEGER NOT NULL DEFAULT 0,
    tokens             INTEGER NOT NULL DEFAULT 0,
    usd                REAL NOT NULL DEFAULT 0,
    usd_unknown        INTEGER NOT NULL DEFAULT 0,
    transcript_offset  INTEGER NOT NULL DEFAULT 0,
    transcript_error   TEXT,
    last_msg_id        TEXT,
    secret_findings    INTEGER NOT NULL DEFAULT 0,
    self_protection    INTEGER NOT NULL DEFAULT 0,
    denylist           INTEGER NOT NULL DEFAULT 0,
    ping_pong          INTEGER NOT NULL DEFAULT 0,
    best_passed        INTEGER,
    last_passed        INTEGER,
    last_failed        INTEGER,
    test_runs          INTEGER NOT NULL DEFAULT 0,
    evidence_failures  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace, session)
);
CREATE TABLE IF NOT EXISTS spend (
    at        INTEGER NOT NULL,
    day       TEXT NOT NULL,
    workspace TEXT NOT NULL,
    session   TEXT NOT NULL,
    usd       REAL,
    tokens    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS spend_day ON spend (day);
CREATE INDEX IF NOT EXISTS spend_ws_at ON spend (workspace, at);
CREATE TABLE IF NOT EXISTS edits (
    workspace TEXT NOT NULL,
    session   TEXT NOT NULL,
    file      TEXT NOT NULL,
    region    TEXT NOT NULL,
    last_to   TEXT NOT NULL,
    reversals INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace, session, file, region)
);
CREATE TABLE IF NOT EXISTS revocations (
    workspace   TEXT PRIMARY KEY,
    at          INTEGER NOT NULL,
    trip        TEXT NOT NULL
);
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
    workspace      TEXT NOT NULL,
    workspace_path TEXT NOT NULL,
    session        TEXT NOT NULL,
    trip           TEXT NOT NULL,
    revert         INTEGER NOT NULL,
    base_ref       TEXT,
    created_at     INTEGER NOT NULL,
    done_at        INTEGER,
    result         TEXT
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

/// An outbox row for status: (event, attempts, delivered, last error).
pub type OutboxRow = (String, i64, bool, Option<String>);

/// A store error, as text (every caller turns it into a deny or an exit code).
pub type StoreResult<T> = Result<T, String>;

fn sql(e: rusqlite::Error) -> String {
    format!("state store: {e}")
}

/// An open state store.
pub struct Store {
    conn: Connection,
}

/// A run: one host session in one workspace.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// Some message had no price: USD cannot be computed.
    pub usd_unknown: bool,
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

const RUN_COLUMNS: &str = "workspace, session, started_at, base_ref, steps, consecutive_blocks, tokens, usd, \
    usd_unknown, transcript_offset, transcript_error, last_msg_id, secret_findings, self_protection, denylist, \
    ping_pong, best_passed, last_passed, last_failed, test_runs, evidence_failures";

impl Run {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Run> {
        Ok(Run {
            workspace: r.get(0)?,
            session: r.get(1)?,
            started_at: r.get(2)?,
            base_ref: r.get(3)?,
            steps: r.get(4)?,
            consecutive_blocks: r.get(5)?,
            tokens: r.get(6)?,
            usd: r.get(7)?,
            usd_unknown: r.get(8)?,
            transcript_offset: r.get(9)?,
            transcript_error: r.get(10)?,
            last_msg_id: r.get(11)?,
            secret_findings: r.get(12)?,
            self_protection: r.get(13)?,
            denylist: r.get(14)?,
            ping_pong: r.get(15)?,
            best_passed: r.get(16)?,
            last_passed: r.get(17)?,
            last_failed: r.get(18)?,
            test_runs: r.get(19)?,
            evidence_failures: r.get(20)?,
        })
    }
}

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
        let conn = Connection::open(state_home.join("state.db")).map_err(sql)?;
        conn.busy_timeout(busy).map_err(sql)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql)?;
        if version != SCHEMA_VERSION {
            if version > SCHEMA_VERSION {
                return Err(format!(
                    "state store: schema version {version} is newer than this loopguard understands ({SCHEMA_VERSION})"
                ));
            }
            // WAL: readers do not block the writer; NORMAL sync is durable at checkpoints and
            // never corrupts (a crash may lose the last transactions, not the database).
            conn.execute_batch("PRAGMA journal_mode=WAL;").map_err(sql)?;
            let tx = conn.unchecked_transaction().map_err(sql)?;
            tx.execute_batch(SCHEMA).map_err(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};")).map_err(sql)?;
            tx.commit().map_err(sql)?;
        }
        conn.execute_batch("PRAGMA synchronous=NORMAL;").map_err(sql)?;
        Ok(Store { conn })
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
    /// The breaker of a workspace (the default, untripped, when none is stored). A stored state
    /// that does not parse is an error: the caller denies.
    pub fn breaker(&self, workspace: &str) -> StoreResult<BreakerState> {
        let text: Option<String> = self
            .tx
            .query_row("SELECT state FROM breaker WHERE workspace = ?1", [workspace], |r| r.get(0))
            .optional()
            .map_err(sql)?;
        match text {
            None => Ok(BreakerState::default()),
            Some(t) => serde_json::from_str(&t).map_err(|e| format!("state store: breaker state is unreadable: {e}")),
        }
    }

    /// Stores the breaker of a workspace.
    pub fn set_breaker(&self, workspace: &str, state: &BreakerState) -> StoreResult<()> {
        let text = serde_json::to_string(state).map_err(|e| format!("state store: {e}"))?;
        self.tx
            .execute(
                "INSERT INTO breaker (workspace, state) VALUES (?1, ?2)
                 ON CONFLICT (workspace) DO UPDATE SET state = excluded.state",
                params![workspace, text],
            )
            .map_err(sql)?;
        Ok(())
    }

    /// Every workspace with a stored breaker.
    pub fn breakers(&self) -> StoreResult<Vec<(String, BreakerState)>> {
        let mut stmt = self.tx.prepare("SELECT workspace, state FROM breaker ORDER BY workspace").map_err(sql)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(sql)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql)?;
        rows.into_iter()
            .map(|(w, t)| {
                serde_json::from_str(&t).map(|s| (w, s)).map_err(|e| format!("state store: breaker state: {e}"))
            })
            .collect()
    }

    /// The run, created (started now) if new.
    pub fn run(&self, workspace: &str, session: &str, now: i64) -> StoreResult<Run> {
        self.tx
            .execute(
                "INSERT INTO runs (workspace, session, started_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                params![workspace, session, now],
            )
            .map_err(sql)?;
        self.tx
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE workspace = ?1 AND session = ?2"),
                params![workspace, session],
                Run::from_row,
            )
            .map_err(sql)
    }

    /// The most recent run of a workspace, if any.
    pub fn latest_run(&self, workspace: &str) -> StoreResult<Option<Run>> {
        self.tx
            .query_row(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs WHERE workspace = ?1 ORDER BY started_at DESC, rowid DESC LIMIT 1"
                ),
                [workspace],
                Run::from_row,
            )
            .optional()
            .map_err(sql)
    }

    /// After a human reset: every run of the workspace starts over (counters zeroed, clock and
    /// base restarted). The transcript position is kept, so no usage is counted twice; spend
    /// records stay, so daily budgets still hold.
    pub fn restart_runs(&self, workspace: &str, now: i64, base: Option<&str>) -> StoreResult<usize> {
        self.tx
            .execute(
                "UPDATE runs SET started_at = ?2, base_ref = COALESCE(?3, base_ref), steps = 0, consecutive_blocks = 0,
                 tokens = 0, usd = 0, usd_unknown = 0, secret_findings = 0, self_protection = 0, denylist = 0,
                 ping_pong = 0, best_passed = NULL, last_passed = NULL, last_failed = NULL, test_runs = 0,
                 evidence_failures = 0 WHERE workspace = ?1",
                params![workspace, now, base],
            )
            .map_err(sql)?;
        self.tx.execute("DELETE FROM edits WHERE workspace = ?1", [workspace]).map_err(sql)?;
        Ok(self.tx.changes() as usize)
    }

    /// Stores a run's counters.
    pub fn save_run(&self, r: &Run) -> StoreResult<()> {
        self.tx
            .execute(
                "UPDATE runs SET base_ref = ?3, steps = ?4, consecutive_blocks = ?5, tokens = ?6, usd = ?7,
                 usd_unknown = ?8, transcript_offset = ?9, transcript_error = ?10, last_msg_id = ?11,
                 secret_findings = ?12, self_protection = ?13, denylist = ?14, ping_pong = ?15,
                 best_passed = ?16, last_passed = ?17, last_failed = ?18, test_runs = ?19,
                 evidence_failures = ?20
                 WHERE workspace = ?1 AND session = ?2",
                params![
                    r.workspace,
                    r.session,
                    r.base_ref,
                    r.steps,
                    r.consecutive_blocks,
                    r.tokens,
                    r.usd,
                    r.usd_unknown,
                    r.transcript_offset,
                    r.transcript_error,
                    r.last_msg_id,
                    r.secret_findings,
                    r.self_protection,
                    r.denylist,
                    r.ping_pong,
                    r.best_passed,
                    r.last_passed,
                    r.last_failed,
                    r.test_runs,
                    r.evidence_failures
                ],
            )
            .map_err(sql)?;
        Ok(())
    }

    /// Records spend.
    pub fn add_spend(&self, r: &Run, at: i64, usd: Option<f64>, tokens: i64) -> StoreResult<()> {
        self.tx
            .execute(
                "INSERT INTO spend (at, day, workspace, session, usd, tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![at, day_of(at), r.workspace, r.session, usd, tokens],
            )
            .map_err(sql)?;
        Ok(())
    }

    /// USD spent on a day, all workspaces; `None` if some record had no price.
    pub fn daily_usd(&self, day: &str) -> StoreResult<Option<f64>> {
        let (sum, unknown): (f64, i64) = self
            .tx
            .query_row(
                "SELECT COALESCE(SUM(usd), 0), COALESCE(SUM(usd IS NULL), 0) FROM spend WHERE day = ?1",
                [day],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql)?;
        Ok((unknown == 0).then_some(sum))
    }

    /// USD and record count in a workspace in the last `window` seconds.
    pub fn velocity(&self, workspace: &str, now: i64, window: u64) -> StoreResult<(Option<f64>, u64)> {
        let since = now.saturating_sub(i64::try_from(window).unwrap_or(i64::MAX));
        let (sum, unknown, count): (f64, i64, i64) = self
            .tx
            .query_row(
                "SELECT COALESCE(SUM(usd), 0), COALESCE(SUM(usd IS NULL), 0), COUNT(*) FROM spend
                 WHERE workspace = ?1 AND at > ?2",
                params![workspace, since],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sql)?;
        Ok(((unknown == 0).then_some(sum), count.max(0) as u64))
    }

    /// Records one region change; returns the region's reversal count after it. A change whose
    /// result differs from the region's last result is a change back (a reversal); it counts
    /// only when `counting` (tests were failing).
    pub fn edit(&self, r: &Run, file: &str, region: &str, to: &str, counting: bool) -> StoreResult<i64> {
        let prev: Option<(String, i64)> = self
            .tx
            .query_row(
                "SELECT last_to, reversals FROM edits WHERE workspace = ?1 AND session = ?2 AND file = ?3 AND region = ?4",
                params![r.workspace, r.session, file, region],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(sql)?;
        let reversals = match &prev {
            Some((last, n)) if last != to && counting => n + 1,
            Some((_, n)) => *n,
            None => 0,
        };
        self.tx
            .execute(
                "INSERT INTO edits (workspace, session, file, region, last_to, reversals) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT DO UPDATE SET last_to = excluded.last_to, reversals = excluded.reversals",
                params![r.workspace, r.session, file, region, to, reversals],
            )
            .map_err(sql)?;
        Ok(reversals)
    }

    /// Marks temporary grants and credentials of a workspace revoked as of `at` (by `trip`).
    /// Grants issued before that time no longer authorise anything; `loopguard exec` scrubs
    /// revoked credentials from spawned commands.
    pub fn revoke(&self, workspace: &str, at: i64, trip: &str) -> StoreResult<()> {
        self.tx
            .execute(
                "INSERT INTO revocations (workspace, at, trip) VALUES (?1, ?2, ?3)
                 ON CONFLICT (workspace) DO UPDATE SET at = excluded.at, trip = excluded.trip",
                params![workspace, at, trip],
            )
            .map_err(sql)?;
        Ok(())
    }

    /// When grants and credentials of a workspace were last revoked, and by which trip.
    pub fn revocation(&self, workspace: &str) -> StoreResult<Option<(i64, String)>> {
        self.tx
            .query_row("SELECT at, trip FROM revocations WHERE workspace = ?1", [workspace], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(sql)
    }

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

    /// The outbox, for status and tests: (event, attempts, delivered, last error).
    pub fn outbox(&self) -> StoreResult<Vec<OutboxRow>> {
        let mut stmt = self
            .tx
            .prepare("SELECT event, attempts, delivered_at IS NOT NULL, last_error FROM outbox ORDER BY id")
            .map_err(sql)?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(sql)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql)
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

    /// Break-glass waivers of a workspace in force at `now`.
    pub fn active_break_glass(&self, workspace: &str, now: i64) -> StoreResult<Vec<BreakGlass>> {
        let mut stmt = self
            .tx
            .prepare(
                "SELECT id, operators, scope, reason, from_at, until_at FROM break_glass
                 WHERE workspace = ?1 AND from_at <= ?2 AND until_at > ?2 ORDER BY id",
            )
            .map_err(sql)?;
        stmt.query_map(params![workspace, now], |r| {
            Ok(BreakGlass {
                id: r.get(0)?,
                operators: r.get::<_, String>(1)?.split(',').map(str::to_string).collect(),
                scope: r.get::<_, String>(2)?.lines().map(str::to_string).collect(),
                reason: r.get(3)?,
                from: r.get(4)?,
                until: r.get(5)?,
            })
        })
        .map_err(sql)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(sql)
    }
}

/// A trip's pending effects.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    /// Store id (also the trip's id).
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
    /// Queues a trip's effects; returns the id (which becomes the trip's id).
    #[allow(clippy::too_many_arguments)] // one column each; a struct would only rename them
    pub fn add_effect(
        &self,
        workspace: &str,
        path: &str,
        session: &str,
        trip: &Trip,
        revert: bool,
        base: Option<&str>,
        now: i64,
    ) -> StoreResult<i64> {
        let text = serde_json::to_string(trip).map_err(|e| format!("state store: {e}"))?;
        self.tx
            .execute(
                "INSERT INTO effects (workspace, workspace_path, session, trip, revert, base_ref, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![workspace, path, session, text, revert, base, now],
            )
            .map_err(sql)?;
        Ok(self.tx.last_insert_rowid())
    }

    /// Replaces the trip recorded with an effect (same id).
    pub fn set_effect_trip(&self, trip: &Trip) -> StoreResult<()> {
        let text = serde_json::to_string(trip).map_err(|e| format!("state store: {e}"))?;
        self.tx.execute("UPDATE effects SET trip = ?2 WHERE id = ?1", params![trip.id, text]).map_err(sql)?;
        Ok(())
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
                let mut trip: Trip = serde_json::from_str(&trip).map_err(|e| format!("state store: trip: {e}"))?;
                trip.id = id;
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

    /// The result of a carried-out effect.
    pub fn effect_result(&self, id: i64) -> StoreResult<Option<String>> {
        self.tx
            .query_row("SELECT result FROM effects WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map(Option::flatten)
            .map_err(sql)
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
    fn runs_are_created_once_and_saved() {
        let (_d, mut s) = store();
        let r = s.write(|tx| tx.run("ws", "s1", 100)).unwrap();
        assert_eq!((r.started_at, r.steps), (100, 0));
        s.write(|tx| {
            let mut r = tx.run("ws", "s1", 200)?;
            assert_eq!(r.started_at, 100);
            r.steps = 7;
            r.best_passed = Some(3);
            tx.save_run(&r)
        })
        .unwrap();
        let r = s.read(|tx| tx.latest_run("ws")).unwrap().unwrap();
        assert_eq!((r.steps, r.best_passed), (7, Some(3)));
    }

    #[test]
    fn spend_aggregates_by_day_and_window_and_unpriced_spend_is_unknown() {
        let (_d, mut s) = store();
        let day = 1_764_547_200; // 2025-12-01T00:00:00Z
        s.write(|tx| {
            let r = tx.run("a", "s", day)?;
            tx.add_spend(&r, day + 10, Some(1.0), 100)?;
            tx.add_spend(&r, day + 500, Some(0.5), 100)?;
            let r2 = tx.run("b", "s", day)?;
            tx.add_spend(&r2, day + 20, Some(2.0), 100)?;
            tx.add_spend(&r2, day - 20, Some(9.0), 100)
        })
        .unwrap();
        let (daily, v) = s.read(|tx| Ok((tx.daily_usd(&day_of(day))?, tx.velocity("a", day + 600, 300)?))).unwrap();
        assert_eq!(daily, Some(3.5));
        assert_eq!(v, (Some(0.5), 1));
        s.write(|tx| tx.add_spend(&tx.run("a", "s", day)?, day + 30, None, 10)).unwrap();
        assert_eq!(s.read(|tx| tx.daily_usd(&day_of(day))).unwrap(), None);
    }

    #[test]
    fn reversals_count_only_changes_back_while_tests_fail() {
        let (_d, mut s) = store();
        s.write(|tx| {
            let r = tx.run("w", "s", 0)?;
            assert_eq!(tx.edit(&r, "f", "ab", "b", true)?, 0);
            assert_eq!(tx.edit(&r, "f", "ab", "a", true)?, 1);
            assert_eq!(tx.edit(&r, "f", "ab", "a", true)?, 1, "the same result again is no reversal");
            assert_eq!(tx.edit(&r, "f", "ab", "b", false)?, 1, "tests passing: not counted");
            assert_eq!(tx.edit(&r, "f", "ab", "a", true)?, 2);
            assert_eq!(tx.edit(&r, "g", "ab", "b", true)?, 0, "another file");
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn a_corrupt_breaker_state_is_an_error_not_a_reset() {
        let (d, mut s) = store();
        s.conn.execute("INSERT INTO breaker (workspace, state) VALUES ('w', 'garbage')", []).unwrap();
        assert!(s.read(|tx| tx.breaker("w")).is_err());
        drop(d);
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
