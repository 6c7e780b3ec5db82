//! The state store: one SQLite database in the state home (`state.db`) holding each
//! workspace's breaker, each run's metrics, spend records, edit history for ping-pong detection,
//! operators, break-glass waivers and the webhook outbox.
//!
//! Every hook call runs its read-modify-write inside one `BEGIN IMMEDIATE` transaction, so
//! concurrent hook processes (the host runs parallel tool calls as parallel hooks) serialise on
//! the database lock and no update is lost. Anything that fails here fails the call closed.

use loopguard_core::breaker::Trip;
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

pub use crate::model::StoreResult;

fn sql(e: rusqlite::Error) -> String {
    format!("state store: {e}")
}

/// An open state store.
pub struct Store {
    conn: Connection,
    path: std::path::PathBuf,
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
    pub fn add_effect(&self, workspace: &str, p: &crate::model::Pending, now: i64) -> StoreResult<bool> {
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
    use crate::model::WsDoc;
    use loopguard_core::breaker::Trigger;

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
        let p = crate::model::Pending {
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
