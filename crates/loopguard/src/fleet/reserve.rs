//! Shared budgets, the fleet's side: one ACID ledger in PostgreSQL, reserved from in chunks by
//! each host's agent and settled with what the host actually spent.
//!
//! - `loopguard_budget_def`: the operator's budgets (USD and/or tokens a day, per scope:
//!   `*`, `group:NAME`, `repo:KEY`).
//! - `loopguard_budget`: one row per budget and UTC day. `granted` is what all hosts together
//!   hold; a `CHECK (granted <= limit)` makes overspending by reservation impossible whatever
//!   the concurrency (every change to the row happens with it locked, `SELECT … FOR UPDATE`,
//!   and the constraint is the backstop). `over` is spend found beyond what was granted when
//!   the budget had nothing left to grant — recorded, never hidden.
//! - `loopguard_grant`: one row per budget, day and host: granted to it, spent (as the host
//!   reported), its overshoot, its lease, and the epoch of the host's local ledger. A lease not
//!   renewed lapses: the host spends nothing more from it. The unused part is *not* taken back
//!   on its own — a host cut off from the database may have spent it without being able to say
//!   so — but when the host settles again, or when an operator says the host is gone for good
//!   (`fleet forget`).
//!
//! Lock order, always: the budget row, then grant rows — no two agents can deadlock.

use super::Member;
use super::budget::{Allowance, BudgetDef, Defs, FleetDay, Meter};
use std::path::Path;

/// Budgets settled and reserved in one round.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reserved {
    /// What the mirror will hold.
    pub allowances: Vec<Allowance>,
    /// The local day ledger did not read (nothing was settled; the mirror keeps what it held).
    pub unread: Option<String>,
}

/// One budget's row for a day, locked.
struct Row {
    limit: (Option<i64>, Option<i64>),
    granted: Meter,
}

/// The scopes that bind this host today: the fleet's, its group's, and the repositories it
/// spent on or has turns in flight for.
fn scopes(m: &Member, day: &FleetDay) -> Vec<String> {
    let mut s = vec!["*".to_string()];
    if let Some(g) = &m.settings.group {
        s.push(format!("group:{g}"));
    }
    let repos = day.repos.keys().chain(day.in_flight.values().map(|t| &t.repo));
    s.extend(repos.filter(|r| !r.is_empty()).map(|r| format!("repo:{r}")));
    s.sort();
    s.dedup();
    s
}

/// Settles this host's spend for `today` (and what it spent yesterday after its last report
/// of that day) and tops its reservations up, in one transaction. The budgets are the ones the
/// host accepted (`defs`): a limit the database holds looser than that is not used.
pub fn round(
    client: &mut postgres::Client,
    state: &Path,
    m: &Member,
    defs: &Defs,
    (today, local_now): (&str, i64),
) -> Result<Reserved, postgres::Error> {
    // A day file that does not read is not an empty ledger: nothing is settled this round (the
    // reservations' leases run out, spend is refused) rather than settling zero.
    let day = match crate::hot::fleet_day(state, today) {
        Ok(d) => d,
        Err(e) => return Ok(Reserved { allowances: Vec::new(), unread: Some(e) }),
    };
    let scopes: Vec<String> = scopes(m, &day).into_iter().filter(|s| defs.limits(s).is_some()).collect();
    let fleet = &m.settings.name;
    let mut tx = client.transaction()?;
    let db_now: i64 = tx.query_one("SELECT extract(epoch from clock_timestamp())::bigint", &[])?.get(0);
    // Today's rows of these budgets, with the limits this host accepted.
    for scope in &scopes {
        let (usd, tokens) = defs.limits(scope).unwrap_or_default();
        tx.execute(
            "INSERT INTO loopguard_budget (fleet, scope, day, usd_limit, token_limit) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT DO NOTHING",
            &[fleet, &scope, &today, &usd, &tokens],
        )?;
    }
    let mut out = Reserved::default();
    let lease = i64::try_from(m.settings.lease).unwrap_or(300);
    // The host stops spending from a reservation a margin before the lease ends by the
    // database's clock (never more than half the lease).
    let margin = (lease / 10).max(i64::try_from(m.settings.heartbeat.saturating_mul(2)).unwrap_or(2)).min(lease / 2);
    for scope in &scopes {
        let repo = scope.strip_prefix("repo:");
        let (local, needed) = (day.spent_in(repo), day.needed(repo, local_now));
        let accepted = defs.limits(scope).unwrap_or_default();
        // Most rounds change only this host's own row: the shared budget row is locked only
        // when a reservation must grow, shrink or record overshoot (it is the fleet's one hot row).
        let Some(limits) = budget_limits(&mut tx, fleet, scope, today)? else { continue };
        let limits = (stricter(limits.0, accepted.0), stricter(limits.1, accepted.1));
        let spend = Spend { epoch: &day.epoch, local, needed, reservation: reservation(m) };
        let a = match steady(&mut tx, m, (scope, today), limits, &spend, db_now + lease)? {
            Some(a) => a,
            None => {
                let Some(mut row) = lock_budget(&mut tx, fleet, scope, today)? else { continue };
                row.limit = limits;
                settle(&mut tx, m, (scope, today), &row, &spend, db_now + lease)?
            }
        };
        // However the database was written, this host never holds more than the whole budget.
        let cap = |g: i64, l: Option<i64>| l.map_or(g, |l| g.min(l));
        let granted = Meter { usd: cap(a.granted.usd, limits.0), tokens: cap(a.granted.tokens, limits.1) };
        out.allowances.push(Allowance { lease_until: local_now + lease - margin, granted, ..a });
    }
    settle_yesterday(&mut tx, state, m, local_now)?;
    // Budgets that bind this host with nothing reserved yet (a repository it has not worked on
    // today, or a budget the database lost): listed, so the hook waits for a reservation
    // instead of slipping by.
    for scope in defs.scopes.keys().filter(|s| defs.limits(s).is_some()) {
        if !out.allowances.iter().any(|a| &a.scope == scope) && binds(m, scope) {
            out.allowances.push(Allowance { scope: scope.clone(), ..Allowance::default() });
        }
    }
    tx.commit()?;
    Ok(out)
}

/// Whether a budget's scope concerns this host at all (repository budgets may, on any host).
pub fn binds(m: &Member, scope: &str) -> bool {
    scope == "*" || scope.starts_with("repo:") || scope.strip_prefix("group:") == m.settings.group.as_deref()
}

/// The stricter of two limits (`None`: no limit).
fn stricter(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (x, None) | (None, x) => x,
    }
}

/// Every budget definition of a fleet, oldest version first (for [`Defs::accept`]).
pub fn definitions(client: &mut postgres::Client, fleet: &str) -> Result<Vec<BudgetDef>, postgres::Error> {
    Ok(client
        .query(
            "SELECT scope, usd_limit, token_limit, version, set_by, set_at, key, sig FROM loopguard_budget_def
             WHERE fleet = $1 ORDER BY version",
            &[&fleet],
        )?
        .into_iter()
        .map(|r| BudgetDef {
            fleet: fleet.to_string(),
            scope: r.get(0),
            usd_limit: r.get(1),
            token_limit: r.get(2),
            version: r.get(3),
            set_by: r.get(4),
            set_at: r.get(5),
            key: r.get(6),
            sig: r.get(7),
        })
        .collect())
}

/// What the hook counted, for one scope.
struct Spend<'a> {
    /// The local ledger's epoch.
    epoch: &'a str,
    /// Spent (local count).
    local: Meter,
    /// Spent plus turns in flight (local count).
    needed: Meter,
    /// The reservation size (zero for a day that is over: settle only).
    reservation: Meter,
}

/// Yesterday's spend read after the agent's last round of that day: settled on yesterday's
/// rows (covered from what was left, else recorded as overshoot; nothing more reserved).
fn settle_yesterday(
    tx: &mut postgres::Transaction<'_>,
    state: &Path,
    m: &Member,
    local_now: i64,
) -> Result<(), postgres::Error> {
    let yesterday = crate::model::day_of(local_now - 86_400);
    let Ok(day) = crate::hot::fleet_day(state, &yesterday) else { return Ok(()) };
    if day.epoch.is_empty() {
        return Ok(());
    }
    for scope in scopes(m, &day) {
        let repo = scope.strip_prefix("repo:");
        let spent = day.spent_in(repo);
        let held: Option<(i64, i64, String, i64, i64)> = tx
            .query_opt(
                "SELECT usd_spent, token_spent, epoch, base_usd, base_tokens FROM loopguard_grant
                 WHERE fleet = $1 AND scope = $2 AND day = $3 AND host = $4",
                &[&m.settings.name, &scope, &yesterday, &m.host],
            )?
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)));
        // Only where this host held a reservation that day, and only when there is news.
        let Some((usd, tokens, epoch, bu, bt)) = held else { continue };
        let base = if epoch == day.epoch { Meter { usd: bu, tokens: bt } } else { Meter { usd, tokens } };
        if base.plus(spent) == (Meter { usd, tokens }) {
            continue;
        }
        let Some(row) = lock_budget(tx, &m.settings.name, &scope, &yesterday)? else { continue };
        let spend = Spend { epoch: &day.epoch, local: spent, needed: spent, reservation: Meter::default() };
        settle(tx, m, (&scope, &yesterday), &row, &spend, 0)?;
    }
    Ok(())
}

/// A budget's limits: micro-dollars, tokens (`None`: that meter is not limited).
type Limits = (Option<i64>, Option<i64>);

/// A budget's limits for a day as the database holds them, read without a lock; `None` when
/// it has no row for the day.
fn budget_limits(
    tx: &mut postgres::Transaction<'_>,
    fleet: &str,
    scope: &str,
    day: &str,
) -> Result<Option<Limits>, postgres::Error> {
    let row = tx.query_opt(
        "SELECT usd_limit, token_limit FROM loopguard_budget WHERE fleet = $1 AND scope = $2 AND day = $3",
        &[&fleet, &scope, &day],
    )?;
    Ok(row.map(|r| (r.get(0), r.get(1))))
}

/// The steady round: this host's grant already holds what [`meter`] would leave unchanged
/// (at least half a reservation above what is needed, at most a reservation above it, nothing
/// spent beyond it) and the local ledger is the one it knows: spent and lease are updated on
/// its own row, nothing else is touched. `None`: the grant must change (the locked path).
fn steady(
    tx: &mut postgres::Transaction<'_>,
    m: &Member,
    (scope, day): (&str, &str),
    (usd_limit, token_limit): Limits,
    s: &Spend<'_>,
    lease_until: i64,
) -> Result<Option<Allowance>, postgres::Error> {
    let row = tx.query_opt(
        "UPDATE loopguard_grant SET usd_spent = GREATEST(usd_spent, base_usd + $5::bigint),
           token_spent = GREATEST(token_spent, base_tokens + $6::bigint), lease_until = $7::bigint
         WHERE fleet = $1 AND scope = $2 AND day = $3 AND host = $4 AND epoch = $14
           AND base_usd BETWEEN 0 AND usd_spent AND base_tokens BETWEEN 0 AND token_spent
           AND ($8::bigint IS NULL OR (usd_granted - GREATEST(usd_spent, base_usd + $5::bigint, base_usd + $9::bigint) >= $10::bigint / 2
                AND usd_granted <= GREATEST(usd_spent, base_usd + $5::bigint, base_usd + $9::bigint) + $10::bigint))
           AND ($11::bigint IS NULL OR (token_granted - GREATEST(token_spent, base_tokens + $6::bigint, base_tokens + $12::bigint) >= $13::bigint / 2
                AND token_granted <= GREATEST(token_spent, base_tokens + $6::bigint, base_tokens + $12::bigint) + $13::bigint))
         RETURNING usd_granted, token_granted, base_usd, base_tokens",
        &[
            &m.settings.name,
            &scope,
            &day,
            &m.host,
            &s.local.usd,
            &s.local.tokens,
            &lease_until,
            &usd_limit,
            &s.needed.usd,
            &s.reservation.usd,
            &token_limit,
            &s.needed.tokens,
            &s.reservation.tokens,
            &s.epoch,
        ],
    )?;
    Ok(row.map(|r| Allowance {
        scope: scope.to_string(),
        day: day.to_string(),
        usd_limit,
        token_limit,
        granted: Meter { usd: r.get(0), tokens: r.get(1) },
        base: Meter { usd: r.get(2), tokens: r.get(3) },
        lease_until,
        exhausted: false,
    }))
}

fn reservation(m: &Member) -> Meter {
    Meter {
        usd: m.settings.reservation_micro_usd,
        tokens: i64::try_from(m.settings.reservation_tokens).unwrap_or(i64::MAX),
    }
}

fn lock_budget(
    tx: &mut postgres::Transaction<'_>,
    fleet: &str,
    scope: &str,
    day: &str,
) -> Result<Option<Row>, postgres::Error> {
    let row = tx.query_opt(
        "SELECT usd_limit, token_limit, usd_granted, token_granted FROM loopguard_budget
         WHERE fleet = $1 AND scope = $2 AND day = $3 FOR UPDATE",
        &[&fleet, &scope, &day],
    )?;
    Ok(row.map(|r| Row { limit: (r.get(0), r.get(1)), granted: Meter { usd: r.get(2), tokens: r.get(3) } }))
}

/// What one meter of a grant becomes: `(granted, over)` after settling `spent` and topping up
/// towards `needed + reservation` from what the budget has left.
fn meter(limit: Option<i64>, budget_granted: i64, g: (i64, i64), needed: i64, reservation: i64) -> (i64, i64, bool) {
    let (granted, spent) = g;
    let Some(limit) = limit else { return (granted, 0, false) };
    let left = limit.saturating_sub(budget_granted).max(0);
    // Top up when less than half a reservation is left above what is needed (spent and in
    // flight); give back what is held beyond a reservation above it.
    let need = needed.max(spent);
    let target = need.saturating_add(reservation);
    let new = if granted.saturating_sub(need) < reservation / 2 || granted < need {
        granted.saturating_add(target.saturating_sub(granted).min(left))
    } else if granted > target {
        target
    } else {
        granted
    };
    let exhausted = new < target && new.saturating_sub(granted) >= left;
    (new, spent.saturating_sub(new).max(0), exhausted)
}

/// Settles and tops up this host's grant of one budget (the budget row is locked). A local
/// ledger of another epoch than the grant knows started from zero: what was settled before
/// becomes its base.
fn settle(
    tx: &mut postgres::Transaction<'_>,
    m: &Member,
    (scope, day): (&str, &str),
    row: &Row,
    s: &Spend<'_>,
    lease_until: i64,
) -> Result<Allowance, postgres::Error> {
    let fleet = &m.settings.name;
    tx.execute(
        "INSERT INTO loopguard_grant (fleet, scope, day, host, lease_until, epoch) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT DO NOTHING",
        &[fleet, &scope, &day, &m.host, &lease_until, &s.epoch],
    )?;
    let r = tx.query_one(
        "SELECT usd_granted, token_granted, usd_spent, token_spent, usd_over, token_over, epoch, base_usd, base_tokens
         FROM loopguard_grant WHERE fleet = $1 AND scope = $2 AND day = $3 AND host = $4 FOR UPDATE",
        &[fleet, &scope, &day, &m.host],
    )?;
    let granted = Meter { usd: r.get(0), tokens: r.get(1) };
    let old_spent = Meter { usd: r.get(2), tokens: r.get(3) };
    let old_over = Meter { usd: r.get(4), tokens: r.get(5) };
    let epoch: String = r.get(6);
    // The base is what the host reported before this epoch: never below zero, never above what
    // it reported (whatever the row says).
    let stored = Meter {
        usd: r.get::<_, i64>(7).clamp(0, old_spent.usd.max(0)),
        tokens: r.get::<_, i64>(8).clamp(0, old_spent.tokens.max(0)),
    };
    let base = if epoch == s.epoch { stored } else { old_spent };
    // What the host reports only grows.
    let spent = old_spent.max(base.plus(s.local));
    let needed = base.plus(s.needed);
    let res = s.reservation;
    let (usd, usd_over, usd_out) = meter(row.limit.0, row.granted.usd, (granted.usd, spent.usd), needed.usd, res.usd);
    let (tokens, token_over, tok_out) =
        meter(row.limit.1, row.granted.tokens, (granted.tokens, spent.tokens), needed.tokens, res.tokens);
    let changed = Meter { usd: usd - granted.usd, tokens: tokens - granted.tokens };
    let over_changed = Meter { usd: usd_over - old_over.usd, tokens: token_over - old_over.tokens };
    apply(tx, (fleet, scope, day), changed, over_changed)?;
    tx.execute(
        "UPDATE loopguard_grant SET usd_granted = $5, token_granted = $6, usd_spent = $7, token_spent = $8,
           usd_over = $9, token_over = $10, epoch = $11, base_usd = $12, base_tokens = $13,
           lease_until = GREATEST(lease_until, $14)
         WHERE fleet = $1 AND scope = $2 AND day = $3 AND host = $4",
        &[
            fleet,
            &scope,
            &day,
            &m.host,
            &usd,
            &tokens,
            &spent.usd,
            &spent.tokens,
            &usd_over,
            &token_over,
            &s.epoch,
            &base.usd,
            &base.tokens,
            &lease_until,
        ],
    )?;
    Ok(Allowance {
        scope: scope.to_string(),
        day: day.to_string(),
        usd_limit: row.limit.0,
        token_limit: row.limit.1,
        granted: Meter { usd, tokens },
        base,
        lease_until,
        exhausted: usd_out || tok_out,
    })
}

/// Adds a grant's changes to its budget row (locked by the caller).
fn apply(
    tx: &mut postgres::Transaction<'_>,
    (fleet, scope, day): (&str, &str, &str),
    granted: Meter,
    over: Meter,
) -> Result<(), postgres::Error> {
    tx.execute(
        "UPDATE loopguard_budget SET usd_granted = usd_granted + $4, token_granted = token_granted + $5,
           usd_over = usd_over + $6, token_over = token_over + $7
         WHERE fleet = $1 AND scope = $2 AND day = $3",
        &[&fleet, &scope, &day, &granted.usd, &granted.tokens, &over.usd, &over.tokens],
    )?;
    Ok(())
}

/// `fleet forget HOST`: the host is gone for good (its state home with it). Its registration is
/// removed and the unused part of its reservations goes back to the budgets — only an operator
/// can say so: a host that merely cannot reach the database may still be spending what it holds,
/// so lapsed reservations are never taken back on their own. Returns the reservations released.
pub fn forget(client: &mut postgres::Client, fleet: &str, host: &str) -> Result<usize, String> {
    let db = |e: postgres::Error| super::describe(&e);
    let mut tx = client.transaction().map_err(db)?;
    let rows = tx
        .query(
            "SELECT scope, day FROM loopguard_grant WHERE fleet = $1 AND host = $2
               AND (usd_granted > usd_spent OR token_granted > token_spent) ORDER BY scope, day",
            &[&fleet, &host],
        )
        .map_err(db)?;
    for r in &rows {
        let (scope, day): (String, String) = (r.get(0), r.get(1));
        // The budget row first, as every writer of both does.
        lock_budget(&mut tx, fleet, &scope, &day).map_err(db)?;
        let back = tx
            .query_one(
                "UPDATE loopguard_grant g SET usd_granted = LEAST(g.usd_granted, g.usd_spent),
                   token_granted = LEAST(g.token_granted, g.token_spent)
                 FROM (SELECT usd_granted AS u, token_granted AS t FROM loopguard_grant
                       WHERE fleet = $1 AND scope = $2 AND day = $3 AND host = $4 FOR UPDATE) old
                 WHERE g.fleet = $1 AND g.scope = $2 AND g.day = $3 AND g.host = $4
                 RETURNING old.u - g.usd_granted, old.t - g.token_granted",
                &[&fleet, &scope, &day, &host],
            )
            .map_err(db)?;
        let (u, t): (i64, i64) = (back.get(0), back.get(1));
        tx.execute(
            "UPDATE loopguard_budget SET usd_granted = usd_granted - $4, token_granted = token_granted - $5
             WHERE fleet = $1 AND scope = $2 AND day = $3",
            &[&fleet, &scope, &day, &u, &t],
        )
        .map_err(db)?;
    }
    let gone =
        tx.execute("DELETE FROM loopguard_hosts WHERE fleet = $1 AND host = $2", &[&fleet, &host]).map_err(db)?;
    if gone == 0 && rows.is_empty() {
        return Err(format!("fleet {fleet} knows no host `{host}`"));
    }
    tx.commit().map_err(db)?;
    Ok(rows.len())
}

/// `fleet budget set` (and `remove`: both limits `None`): a budget of `usd` (micro-dollars)
/// and/or `tokens` a day for `scope`, signed with the operator's key (hosts take a new or
/// lower budget as it comes; a raise or a removal only signed by a key they pin). Today's row
/// takes the new limits at once (a limit lowered below what is already reserved stops new
/// reservations; what hosts hold stays theirs).
pub fn define(
    client: &mut postgres::Client,
    fleet: &str,
    scope: &str,
    (usd, tokens): (Option<i64>, Option<i64>),
    key: &loopguard_audit::SigningKey,
) -> Result<i64, String> {
    // Repository keys are lower case (hosting services ignore case; `repo_key` folds it).
    let scope = &match scope.strip_prefix("repo:") {
        Some(r) => format!("repo:{}", r.to_ascii_lowercase()),
        None => scope.to_string(),
    };
    if !super::budget::valid_scope(scope) {
        return Err(format!("`{scope}` is not a budget scope: `*`, `group:NAME` or `repo:HOST/PATH`"));
    }
    let db = |e: postgres::Error| super::describe(&e);
    let mut tx = client.transaction().map_err(db)?;
    let version: i64 = tx.query_one("SELECT nextval('loopguard_control_version')", &[]).map_err(db)?.get(0);
    let d = BudgetDef {
        fleet: fleet.into(),
        scope: scope.into(),
        usd_limit: usd,
        token_limit: tokens,
        version,
        set_by: std::env::var("USER").unwrap_or_else(|_| "unknown".into()),
        set_at: crate::effects::now(),
        key: String::new(),
        sig: String::new(),
    }
    .sign(key);
    let n = tx
        .execute(
            "INSERT INTO loopguard_budget_def (fleet, scope, usd_limit, token_limit, set_by, set_at, version, key, sig)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (fleet, scope) DO UPDATE SET usd_limit = EXCLUDED.usd_limit, token_limit = EXCLUDED.token_limit,
               set_by = EXCLUDED.set_by, set_at = EXCLUDED.set_at, version = EXCLUDED.version, key = EXCLUDED.key, sig = EXCLUDED.sig
             WHERE loopguard_budget_def.version < EXCLUDED.version OR loopguard_budget_def.key <> EXCLUDED.key",
            &[&d.fleet, &d.scope, &d.usd_limit, &d.token_limit, &d.set_by, &d.set_at, &d.version, &d.key, &d.sig],
        )
        .map_err(db)?;
    if n == 0 {
        return Err(format!(
            "another operator (same key) changed budget {scope} at the same moment; look and set it again"
        ));
    }
    let today = crate::model::day_of(crate::effects::now());
    tx.execute(
        "UPDATE loopguard_budget SET
           usd_limit = CASE WHEN $4::bigint IS NULL THEN NULL ELSE GREATEST($4, usd_granted) END,
           token_limit = CASE WHEN $5::bigint IS NULL THEN NULL ELSE GREATEST($5, token_granted) END
         WHERE fleet = $1 AND scope = $2 AND day = $3",
        &[&fleet, &scope, &today, &usd, &tokens],
    )
    .map_err(db)?;
    tx.execute("SELECT pg_notify('loopguard_control', $1)", &[&fleet]).map_err(db)?;
    tx.commit().map_err(db)?;
    Ok(version)
}

/// One budget's ledger for a day, for `fleet budget status`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Ledger {
    /// The scope.
    pub scope: String,
    /// The day.
    pub day: String,
    /// Limits (micro-dollars, tokens).
    pub usd_limit: Option<i64>,
    /// Tokens.
    pub token_limit: Option<i64>,
    /// Held by all hosts together.
    pub granted: Meter,
    /// Spent by all hosts together (as settled).
    pub spent: Meter,
    /// Spend beyond what the budget could grant.
    pub over: Meter,
    /// Whether the budget row and the grant rows agree (granted = sum of grants, over = sum of
    /// the hosts' overshoot, each host's overshoot = its spend beyond its grant).
    pub reconciles: bool,
    /// Per host.
    pub hosts: Vec<HostLedger>,
}

/// One host's grant of a budget.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostLedger {
    /// The host.
    pub host: String,
    /// Reserved for it.
    pub granted: Meter,
    /// Spent, as it reported.
    pub spent: Meter,
    /// Spent beyond its reservation when the budget had nothing left.
    pub over: Meter,
    /// Until when it may spend from it (the database's clock).
    pub lease_until: i64,
}

/// Every budget row of `day` with its grants.
pub fn ledger(client: &mut postgres::Client, fleet: &str, day: &str) -> Result<Vec<Ledger>, postgres::Error> {
    // One snapshot: the budget rows and the grant rows as of one moment.
    let mut client =
        client.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead).read_only(true).start()?;
    let mut out = Vec::new();
    for r in client.query(
        "SELECT scope, usd_limit, token_limit, usd_granted, token_granted, usd_over, token_over FROM loopguard_budget
         WHERE fleet = $1 AND day = $2 ORDER BY scope",
        &[&fleet, &day],
    )? {
        let scope: String = r.get(0);
        let (usd_limit, token_limit): (Option<i64>, Option<i64>) = (r.get(1), r.get(2));
        let granted = Meter { usd: r.get(3), tokens: r.get(4) };
        let over = Meter { usd: r.get(5), tokens: r.get(6) };
        let hosts: Vec<HostLedger> = client
            .query(
                "SELECT host, usd_granted, token_granted, usd_spent, token_spent, usd_over, token_over, lease_until
                 FROM loopguard_grant WHERE fleet = $1 AND scope = $2 AND day = $3 ORDER BY host",
                &[&fleet, &scope, &day],
            )?
            .iter()
            .map(|g| HostLedger {
                host: g.get(0),
                granted: Meter { usd: g.get(1), tokens: g.get(2) },
                spent: Meter { usd: g.get(3), tokens: g.get(4) },
                over: Meter { usd: g.get(5), tokens: g.get(6) },
                lease_until: g.get(7),
            })
            .collect();
        let sum = |f: fn(&HostLedger) -> Meter| hosts.iter().map(f).fold(Meter::default(), Meter::plus);
        let spent = sum(|h| h.spent);
        // Each host's overshoot is its spend beyond its grant, on the meters the budget limits.
        let own = |h: &HostLedger| {
            let beyond = |spent: i64, granted: i64, limited: bool| if limited { (spent - granted).max(0) } else { 0 };
            h.over
                == Meter {
                    usd: beyond(h.spent.usd, h.granted.usd, usd_limit.is_some()),
                    tokens: beyond(h.spent.tokens, h.granted.tokens, token_limit.is_some()),
                }
        };
        let reconciles = sum(|h| h.granted) == granted && sum(|h| h.over) == over && hosts.iter().all(own);
        out.push(Ledger {
            scope,
            day: day.to_string(),
            usd_limit,
            token_limit,
            granted,
            spent,
            over,
            reconciles,
            hosts,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::meter;

    #[test]
    fn a_meter_tops_up_from_what_is_left_and_records_only_true_overshoot() {
        // Nothing held, $10 left: a reservation ($1) above what is needed.
        assert_eq!(meter(Some(10_000_000), 0, (0, 0), 0, 1_000_000), (1_000_000, 0, false));
        // Plenty held: unchanged.
        assert_eq!(meter(Some(10_000_000), 1_000_000, (1_000_000, 100_000), 200_000, 1_000_000), (1_000_000, 0, false));
        // Less than half a reservation above the need: topped up to need + reservation.
        assert_eq!(meter(Some(10_000_000), 1_000_000, (1_000_000, 600_000), 700_000, 1_000_000), (1_700_000, 0, false));
        // Only $0.30 left in the budget: it gets that, and the budget is exhausted.
        assert_eq!(meter(Some(10_000_000), 9_700_000, (1_000_000, 900_000), 900_000, 1_000_000), (1_300_000, 0, true));
        // Spent beyond the grant, nothing left: the excess is over.
        assert_eq!(
            meter(Some(10_000_000), 10_000_000, (1_000_000, 1_200_000), 1_200_000, 1_000_000),
            (1_000_000, 200_000, true)
        );
        // Spent beyond the grant, room left: the grant grows to cover it, no overshoot.
        assert_eq!(
            meter(Some(10_000_000), 5_000_000, (1_000_000, 1_200_000), 1_200_000, 1_000_000),
            (2_200_000, 0, false)
        );
        // Holding far more than needed: given back down to need + reservation.
        assert_eq!(meter(Some(10_000_000), 5_000_000, (5_000_000, 100_000), 100_000, 1_000_000), (1_100_000, 0, false));
        // No limit on this meter: nothing is reserved.
        assert_eq!(meter(None, 0, (0, 500), 500, 1_000), (0, 0, false));
    }
}
