//! The fleet's schema in PostgreSQL, owned by loopguard: numbered migrations, each applied once
//! in its own transaction under an advisory lock (so two `fleet migrate` runs, or two agents
//! starting, never apply one twice), recorded in `loopguard_schema`.
//!
//! Times are Unix seconds in `bigint` columns: the client needs no date types, and every
//! comparison the fleet makes is against a number the host also has.

/// (version, what it does, SQL). Append only: a released migration is never edited.
pub const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "hosts, positions, shipped audit events",
        "
    CREATE TABLE loopguard_hosts (
        fleet text NOT NULL,
        host text NOT NULL,
        grp text NOT NULL DEFAULT '',
        last_seen bigint NOT NULL,
        audit_key text NOT NULL DEFAULT '',
        PRIMARY KEY (fleet, host)
    );
    CREATE SEQUENCE loopguard_control_version;
    CREATE TABLE loopguard_control (
        fleet text NOT NULL,
        scope text NOT NULL,
        version bigint NOT NULL,
        position text NOT NULL CHECK (position IN ('full-auto', 'pr-only', 'read-only', 'stopped')),
        reason text NOT NULL,
        set_by text NOT NULL,
        set_at bigint NOT NULL,
        key text NOT NULL DEFAULT '',
        sig text NOT NULL DEFAULT '',
        PRIMARY KEY (fleet, scope)
    );
    CREATE TABLE loopguard_audit (
        fleet text NOT NULL,
        host text NOT NULL,
        log text NOT NULL,
        seq bigint NOT NULL CHECK (seq >= 1),
        hash text NOT NULL,
        prev_hash text NOT NULL,
        line text NOT NULL,
        received_at bigint NOT NULL,
        PRIMARY KEY (fleet, host, log, seq)
    );
    CREATE TABLE loopguard_ship (
        fleet text NOT NULL,
        host text NOT NULL,
        log text NOT NULL,
        seq bigint NOT NULL,
        hash text NOT NULL,
        problem text,
        PRIMARY KEY (fleet, host, log)
    );
    ",
    ),
    (
        2,
        "shared budgets: signed definitions (both limits empty: removed), a ledger per day, reservations per host",
        "
    CREATE TABLE loopguard_budget_def (
        fleet text NOT NULL,
        scope text NOT NULL,
        usd_limit bigint CHECK (usd_limit >= 0),
        token_limit bigint CHECK (token_limit >= 0),
        set_by text NOT NULL,
        set_at bigint NOT NULL,
        version bigint NOT NULL DEFAULT 0,
        key text NOT NULL DEFAULT '',
        sig text NOT NULL DEFAULT '',
        PRIMARY KEY (fleet, scope)
    );
    CREATE TABLE loopguard_budget (
        fleet text NOT NULL,
        scope text NOT NULL,
        day text NOT NULL,
        usd_limit bigint,
        token_limit bigint,
        usd_granted bigint NOT NULL DEFAULT 0 CHECK (usd_granted >= 0),
        token_granted bigint NOT NULL DEFAULT 0 CHECK (token_granted >= 0),
        usd_over bigint NOT NULL DEFAULT 0 CHECK (usd_over >= 0),
        token_over bigint NOT NULL DEFAULT 0 CHECK (token_over >= 0),
        CHECK (usd_limit IS NULL OR usd_granted <= usd_limit),
        CHECK (token_limit IS NULL OR token_granted <= token_limit),
        PRIMARY KEY (fleet, scope, day)
    );
    CREATE TABLE loopguard_grant (
        fleet text NOT NULL,
        scope text NOT NULL,
        day text NOT NULL,
        host text NOT NULL,
        usd_granted bigint NOT NULL DEFAULT 0 CHECK (usd_granted >= 0),
        token_granted bigint NOT NULL DEFAULT 0 CHECK (token_granted >= 0),
        usd_spent bigint NOT NULL DEFAULT 0 CHECK (usd_spent >= 0),
        token_spent bigint NOT NULL DEFAULT 0 CHECK (token_spent >= 0),
        usd_over bigint NOT NULL DEFAULT 0 CHECK (usd_over >= 0),
        token_over bigint NOT NULL DEFAULT 0 CHECK (token_over >= 0),
        epoch text NOT NULL DEFAULT '',
        base_usd bigint NOT NULL DEFAULT 0 CHECK (base_usd >= 0),
        base_tokens bigint NOT NULL DEFAULT 0 CHECK (base_tokens >= 0),
        lease_until bigint NOT NULL,
        PRIMARY KEY (fleet, scope, day, host),
        CHECK (base_usd <= usd_spent AND base_tokens <= token_spent),
        FOREIGN KEY (fleet, scope, day) REFERENCES loopguard_budget
    );
    ",
    ),
    (
        3,
        "shipping cursors signed by the host's key; signed checkpoints shipped; each host's signed manifest",
        "
    ALTER TABLE loopguard_ship ADD COLUMN key text NOT NULL DEFAULT '';
    ALTER TABLE loopguard_ship ADD COLUMN sig text NOT NULL DEFAULT '';
    CREATE TABLE loopguard_checkpoint (
        fleet text NOT NULL,
        host text NOT NULL,
        log text NOT NULL,
        n bigint NOT NULL CHECK (n >= 1),
        line text NOT NULL,
        PRIMARY KEY (fleet, host, log, n)
    );
    CREATE TABLE loopguard_manifest (
        fleet text NOT NULL,
        host text NOT NULL,
        at bigint NOT NULL,
        body text NOT NULL,
        key text NOT NULL,
        sig text NOT NULL,
        PRIMARY KEY (fleet, host)
    );
    ",
    ),
];

/// The advisory lock key migrations run under ("lgfl").
const LOCK: i64 = 0x6c67_666c;

/// Applies every migration not yet applied; returns the versions applied now.
pub fn migrate(client: &mut postgres::Client) -> Result<Vec<i32>, postgres::Error> {
    // The lock first: even `CREATE TABLE IF NOT EXISTS` races with itself in PostgreSQL.
    client.execute("SELECT pg_advisory_lock($1)", &[&LOCK])?;
    let result = (|| {
        client.batch_execute(
            "CREATE TABLE IF NOT EXISTS loopguard_schema (version int PRIMARY KEY, what text NOT NULL, applied_at bigint NOT NULL)",
        )?;
        let mut applied = Vec::new();
        for &(version, what, sql) in MIGRATIONS {
            let mut tx = client.transaction()?;
            let done = tx.query_opt("SELECT 1 FROM loopguard_schema WHERE version = $1", &[&version])?.is_some();
            if done {
                continue;
            }
            tx.batch_execute(sql)?;
            tx.execute(
                "INSERT INTO loopguard_schema (version, what, applied_at) VALUES ($1, $2, extract(epoch from now())::bigint)",
                &[&version, &what],
            )?;
            tx.commit()?;
            applied.push(version);
        }
        Ok(applied)
    })();
    client.execute("SELECT pg_advisory_unlock($1)", &[&LOCK])?;
    result
}

/// The newest version applied (0: none).
pub fn current(client: &mut postgres::Client) -> Result<i32, postgres::Error> {
    let row = client.query_opt("SELECT max(version) FROM loopguard_schema", &[])?;
    Ok(row.and_then(|r| r.get::<_, Option<i32>>(0)).unwrap_or(0))
}
