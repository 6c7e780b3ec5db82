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
//!   reported), and the lease. A lease not renewed lapses; the next agent to look gives the
//!   unused part back to the budget.
//!
//! Lock order, always: the budget row, then grant rows — no two agents can deadlock.

use super::Member;
use super::budget::{Allowance, FleetDay, Meter};
use std::path::Path;

/// Budgets settled and reserved in one round.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reserved {
    /// What the mirror will hold.
    pub allowances: Vec<Allowance>,
    /// Unused reservations of lapsed leases given back (any host's).
    pub reclaimed: usize,
}

/// One budget's row for a day, locked.
struct Row {
    limit: (Option<i64>, Option<i64>),
    granted: Meter,
}

/// One host's grant row.
#[derive(Clone, Copy, Default)]
struct Grant {
    granted: Meter,
    spent: Meter,
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

/// Settles this host's spend for `today` and tops its reservations up, in one transaction.
pub fn round(
    client: &mut postgres::Client,
    state: &Path,
    m: &Member,
    (today, local_now): (&str, i64),
) -> Result<Reserved, postgres::Error> {
    let day = crate::hot::fleet_day(state, today).unwrap_or_default();
    let scopes = scopes(m, &day);
    let fleet = &m.settings.name;
    let mut tx = client.transaction()?;
    let db_now: i64 = tx.query_one("SELECT extract(epoch from clock_timestamp())::bigint", &[])?.get(0);
    // Today's rows of the budgets that exist for these scopes.
    tx.execute(
        "INSERT INTO loopguard_budget (fleet, scope, day, usd_limit, token_limit)
         SELECT fleet, scope, $2, usd_limit, token_limit FROM loopguard_budget_def WHERE fleet = $1 AND scope = ANY($3)
         ON CONFLICT DO NOTHING",
        &[fleet, &today, &scopes],
    )?;
    let mut out = Reserved::default();
    let lease = i64::try_from(m.settings.lease).unwrap_or(300);
    // The host stops spending from a reservation a margin before the fleet can take it back.
    let margin = (lease / 10).max(i64::try_from(m.settings.heartbeat.saturating_mul(2)).unwrap_or(2));
    for scope in &scopes {
        let repo = scope.strip_prefix("repo:");
        let (local, needed) = (day.spent_in(repo), day.needed(repo, local_now));
        // Most rounds change only this host's own row: the shared budget row is locked only
        // when a reservation must grow, shrink or record overshoot (it is the fleet's one hot row).
        let Some(limits) = budget_limits(&mut tx, fleet, scope, today)? else { continue };
        let a = match steady(&mut tx, m, (scope, today), limits, (local, needed), db_now + lease)? {
            Some(a) => a,
            None => {
                let Some(row) = lock_budget(&mut tx, fleet, scope, today)? else { continue };
                out.reclaimed += reclaim(&mut tx, fleet, scope, today, db_now)?;
                let row = lock_budget(&mut tx, fleet, scope, today)?.unwrap_or(row);
                settle(&mut tx, m, (scope, today), &row, (local, needed), db_now + lease)?
            }
        };
        out.allowances.push(Allowance { lease_until: local_now + lease - margin, ..a });
    }
    // Repository budgets of repositories this host has not worked on today: listed with nothing
    // reserved, so the hook's first call in one waits for a reservation instead of slipping by.
    for r in tx.query(
        "SELECT scope FROM loopguard_budget_def WHERE fleet = $1 AND scope LIKE 'repo:%' AND NOT (scope = ANY($2)) ORDER BY scope LIMIT 1000",
        &[fleet, &scopes],
    )? {
        out.allowances.push(Allowance { scope: r.get(0), ..Allowance::default() });
    }
    tx.commit()?;
    Ok(out)
}

/// A budget's limits: micro-dollars, tokens (`None`: that meter is not limited).
type Limits = (Option<i64>, Option<i64>);

/// A budget's limits for a day, read without a lock.
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
/// spent beyond it): spent and lease are updated on its own row, nothing else is touched.
/// `None`: the grant must change (the caller takes the locked path).
fn steady(
    tx: &mut postgres::Transaction<'_>,
    m: &Member,
    (scope, day): (&str, &str),
    (usd_limit, token_limit): Limits,
    (local, needed): (Meter, Meter),
    lease_until: i64,
) -> Result<Option<Allowance>, postgres::Error> {
    let res = reservation(m);
    let row = tx.query_opt(
        "UPDATE loopguard_grant SET usd_spent = GREATEST(usd_spent, $5::bigint), token_spent = GREATEST(token_spent, $6::bigint),
           lease_until = $7::bigint
         WHERE fleet = $1 AND scope = $2 AND day = $3 AND host = $4
           AND ($8::bigint IS NULL OR (usd_granted - GREATEST(usd_spent, $5::bigint, $9::bigint) >= $10::bigint / 2
                AND usd_granted <= GREATEST(usd_spent, $5::bigint, $9::bigint) + $10::bigint))
           AND ($11::bigint IS NULL OR (token_granted - GREATEST(token_spent, $6::bigint, $12::bigint) >= $13::bigint / 2
                AND token_granted <= GREATEST(token_spent, $6::bigint, $12::bigint) + $13::bigint))
         RETURNING usd_granted, token_granted",
        &[
            &m.settings.name,
            &scope,
            &day,
            &m.host,
            &local.usd,
            &local.tokens,
            &lease_until,
            &usd_limit,
            &needed.usd,
            &res.usd,
            &token_limit,
            &needed.tokens,
            &res.tokens,
        ],
    )?;
    Ok(row.map(|r| Allowance {
        scope: scope.to_string(),
        day: day.to_string(),
        usd_limit,
        token_limit,
        granted: Meter { usd: r.get(0), tokens: r.get(1) },
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

/// Gives back the unused part of every lapsed lease of a budget (the budget row is locked).
fn reclaim(
    tx: &mut postgres::Transaction<'_>,
    fleet: &str,
    scope: &str,
    day: &str,
    db_now: i64,
) -> Result<usize, postgres::Error> {
    let rows = tx.query(
        "UPDATE loopguard_grant g SET usd_granted = LEAST(g.usd_granted, g.usd_spent), token_granted = LEAST(g.token_granted, g.token_spent)
         FROM (SELECT host, usd_granted, token_granted FROM loopguard_grant
               WHERE fleet = $1 AND scope = $2 AND day = $3 AND lease_until < $4
                 AND (usd_granted > usd_spent OR token_granted > token_spent) FOR UPDATE) old
         WHERE g.fleet = $1 AND g.scope = $2 AND g.day = $3 AND g.host = old.host
         RETURNING old.usd_granted - g.usd_granted, old.token_granted - g.token_granted",
        &[&fleet, &scope, &day, &db_now],
    )?;
    let back = rows.iter().fold(Meter::default(), |acc, r| acc.plus(Meter { usd: r.get(0), tokens: r.get(1) }));
    if !rows.is_empty() {
        tx.execute(
            "UPDATE loopguard_budget SET usd_granted = usd_granted - $4, token_granted = token_granted - $5
             WHERE fleet = $1 AND scope = $2 AND day = $3",
            &[&fleet, &scope, &day, &back.usd, &back.tokens],
        )?;
    }
    Ok(rows.len())
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
    let new = if granted.saturating_sub(need) < reservation / 2 {
        granted.saturating_add(target.saturating_sub(granted).min(left))
    } else if granted > target {
        target
    } else {
        granted
    };
    let exhausted = new < target && new.saturating_sub(granted) >= left;
    (new, spent.saturating_sub(new).max(0), exhausted)
}

/// Settles and tops up this host's grant of one budget.
fn settle(
    tx: &mut postgres::Transaction<'_>,
    m: &Member,
    (scope, day): (&str, &str),
    row: &Row,
    (local, needed): (Meter, Meter),
    lease_until: i64,
) -> Result<Allowance, postgres::Error> {
    let fleet = &m.settings.name;
    tx.execute(
        "INSERT INTO loopguard_grant (fleet, scope, day, host, lease_until) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        &[fleet, &scope, &day, &m.host, &lease_until],
    )?;
    let r = tx.query_one(
        "SELECT usd_granted, token_granted, usd_spent, token_spent FROM loopguard_grant
         WHERE fleet = $1 AND scope = $2 AND day = $3 AND host = $4 FOR UPDATE",
        &[fleet, &scope, &day, &m.host],
    )?;
    let old =
        Grant { granted: Meter { usd: r.get(0), tokens: r.get(1) }, spent: Meter { usd: r.get(2), tokens: r.get(3) } };
    // What the host reports only grows (a state home reset cannot unspend).
    let spent = old.spent.max(local);
    let res = Meter {
        usd: m.settings.reservation_micro_usd,
        tokens: i64::try_from(m.settings.reservation_tokens).unwrap_or(i64::MAX),
    };
    let (usd, usd_over, usd_out) =
        meter(row.limit.0, row.granted.usd, (old.granted.usd, spent.usd), needed.usd, res.usd);
    let (tokens, token_over, tok_out) =
        meter(row.limit.1, row.granted.tokens, (old.granted.tokens, spent.tokens), needed.tokens, res.tokens);
    let old_over = Meter {
        usd: old.spent.usd.saturating_sub(old.granted.usd).max(0),
        tokens: old.spent.tokens.saturating_sub(old.granted.tokens).max(0),
    };
    // Overshoot is counted only on a meter the budget limits.
    let old_over_usd = if row.limit.0.is_some() { old_over.usd } else { 0 };
    let old_over_tok = if row.limit.1.is_some() { old_over.tokens } else { 0 };
    tx.execute(
        "UPDATE loopguard_budget SET usd_granted = usd_granted + $4, token_granted = token_granted + $5,
           usd_over = usd_over + $6, token_over = token_over + $7
         WHERE fleet = $1 AND scope = $2 AND day = $3",
        &[
            fleet,
            &scope,
            &day,
            &(usd - old.granted.usd),
            &(tokens - old.granted.tokens),
            &(usd_over - old_over_usd),
            &(token_over - old_over_tok),
        ],
    )?;
    tx.execute(
        "UPDATE loopguard_grant SET usd_granted = $5, token_granted = $6, usd_spent = $7, token_spent = $8, lease_until = $9
         WHERE fleet = $1 AND scope = $2 AND day = $3 AND host = $4",
        &[fleet, &scope, &day, &m.host, &usd, &tokens, &spent.usd, &spent.tokens, &lease_until],
    )?;
    Ok(Allowance {
        scope: scope.to_string(),
        day: day.to_string(),
        usd_limit: row.limit.0,
        token_limit: row.limit.1,
        granted: Meter { usd, tokens },
        lease_until,
        exhausted: usd_out || tok_out,
    })
}

/// `fleet budget set`: a budget of `usd` (micro-dollars) and/or `tokens` a day for `scope`.
/// Today's row takes the new limits at once (a limit lowered below what is already reserved
/// stops new reservations; what hosts hold stays theirs).
pub fn define(
    client: &mut postgres::Client,
    fleet: &str,
    scope: &str,
    (usd, tokens): (Option<i64>, Option<i64>),
) -> Result<(), String> {
    if !super::budget::valid_scope(scope) {
        return Err(format!("`{scope}` is not a budget scope: `*`, `group:NAME` or `repo:HOST/PATH`"));
    }
    if usd.is_none() && tokens.is_none() {
        return Err("a budget needs --usd, --tokens or both".into());
    }
    let db = |e: postgres::Error| super::describe(&e);
    let who = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    let mut tx = client.transaction().map_err(db)?;
    tx.execute(
        "INSERT INTO loopguard_budget_def (fleet, scope, usd_limit, token_limit, set_by, set_at)
         VALUES ($1, $2, $3, $4, $5, extract(epoch from now())::bigint)
         ON CONFLICT (fleet, scope) DO UPDATE SET usd_limit = EXCLUDED.usd_limit, token_limit = EXCLUDED.token_limit,
           set_by = EXCLUDED.set_by, set_at = EXCLUDED.set_at",
        &[&fleet, &scope, &usd, &tokens, &who],
    )
    .map_err(db)?;
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
    tx.commit().map_err(db)
}

/// `fleet budget remove`: the budget no longer binds (its ledger rows stay, for the record).
pub fn remove(client: &mut postgres::Client, fleet: &str, scope: &str) -> Result<bool, String> {
    let db = |e: postgres::Error| super::describe(&e);
    let n = client
        .execute("DELETE FROM loopguard_budget_def WHERE fleet = $1 AND scope = $2", &[&fleet, &scope])
        .map_err(db)?;
    Ok(n > 0)
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
    /// each host's spend beyond its grant).
    pub reconciles: bool,
    /// Per host: (host, granted, spent, lease_until).
    pub hosts: Vec<(String, Meter, Meter, i64)>,
}

/// Every budget row of `day` with its grants.
pub fn ledger(client: &mut postgres::Client, fleet: &str, day: &str) -> Result<Vec<Ledger>, postgres::Error> {
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
        let hosts: Vec<(String, Meter, Meter, i64)> = client
            .query(
                "SELECT host, usd_granted, token_granted, usd_spent, token_spent, lease_until FROM loopguard_grant
                 WHERE fleet = $1 AND scope = $2 AND day = $3 ORDER BY host",
                &[&fleet, &scope, &day],
            )?
            .iter()
            .map(|g| {
                (
                    g.get(0),
                    Meter { usd: g.get(1), tokens: g.get(2) },
                    Meter { usd: g.get(3), tokens: g.get(4) },
                    g.get(5),
                )
            })
            .collect();
        let sum =
            |f: fn(&(String, Meter, Meter, i64)) -> Meter| hosts.iter().map(f).fold(Meter::default(), Meter::plus);
        let spent = sum(|h| h.2);
        let host_over = sum(|h| Meter {
            usd: h.2.usd.saturating_sub(h.1.usd).max(0),
            tokens: h.2.tokens.saturating_sub(h.1.tokens).max(0),
        });
        let want_over = Meter {
            usd: if usd_limit.is_some() { host_over.usd } else { 0 },
            tokens: if token_limit.is_some() { host_over.tokens } else { 0 },
        };
        let reconciles = sum(|h| h.1) == granted && want_over == over;
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
