//! `loopguard fleet agent`: one per host. Connects, registers, and then, on every notification
//! of a position change and at least once per heartbeat: takes the fleet's positions into the
//! local mirror (as [`Mirror::accept`] allows), ships new audit lines, and heartbeats. A lost
//! connection is retried with backoff; meanwhile the mirror keeps what it last accepted, so a
//! stop stays a stop while the database is away.

use super::budget::Allowance;
use super::control::{self, Mirror, Refusal};
use super::{Member, ship::Shipper};
use postgres::fallible_iterator::FallibleIterator;
use std::path::Path;
use std::time::Duration;

/// What one round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Round {
    /// Settings newly accepted.
    pub accepted: usize,
    /// Settings refused, with why.
    pub refused: Vec<String>,
    /// Audit lines shipped.
    pub shipped: usize,
}

/// How often the agent looks for a hook's request between notifications.
const WAKE_SLICE: Duration = Duration::from_millis(100);

/// Marks an error the agent does not retry.
const FATAL: &str = "fatal: ";

/// Runs the agent until the process ends (or for one round with `once`).
pub fn run(state: &Path, m: &Member, once: bool) -> Result<(), String> {
    let mut backoff = Duration::from_millis(200);
    loop {
        match session(state, m, once) {
            Ok(()) => return Ok(()),
            Err(e) if e.starts_with(FATAL) => return Err(e[FATAL.len()..].to_string()),
            Err(e) if once => return Err(e),
            Err(e) => {
                eprintln!("loopguard fleet agent: {e}; retrying in {} ms", backoff.as_millis());
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// One connection's life.
fn session(state: &Path, m: &Member, once: bool) -> Result<(), String> {
    let db = |e: postgres::Error| super::describe(&e);
    let mut client = super::connect(&m.settings)?;
    let latest = super::schema::MIGRATIONS.last().map_or(0, |x| x.0);
    let current = super::schema::current(&mut client).map_err(db)?;
    if current < latest {
        return Err(format!(
            "the fleet's schema is at version {current}, this loopguard needs {latest}: run `loopguard fleet migrate`"
        ));
    }
    client.batch_execute("LISTEN loopguard_control").map_err(db)?;
    let signing = crate::keys::signing(state).map_err(|e| format!("{FATAL}the audit key: {e}"))?;
    let audit_key = loopguard_audit::hex(signing.verifying_key().as_bytes());
    let mut shipper = Shipper::new(&m.settings.name, &m.host, Some(signing));
    let heartbeat = Duration::from_secs(m.settings.heartbeat);
    loop {
        let r = match round(&mut client, state, m, &mut shipper, &audit_key) {
            Ok(r) => r,
            Err(Halt::Db(e)) => return Err(db(e)),
            Err(Halt::Fatal(e)) => return Err(format!("{FATAL}{e}")),
        };
        for why in &r.refused {
            eprintln!("loopguard fleet agent: refused a fleet setting: {why}");
        }
        if once {
            return Ok(());
        }
        // Wake on the first notification, a hook asking for a reservation, or at the heartbeat;
        // drain the rest.
        let until = std::time::Instant::now() + heartbeat;
        let wake = super::budget::wake_path(state);
        let mut notes = client.notifications();
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if notes.timeout_iter(left.min(WAKE_SLICE)).next().map_err(db)?.is_some() || left <= WAKE_SLICE {
                break;
            }
            if std::fs::remove_file(&wake).is_ok() {
                break;
            }
        }
        while notes.iter().next().map_err(db)?.is_some() {}
    }
}

/// Positions, shipping, heartbeat.
pub fn round(
    client: &mut postgres::Client,
    state: &Path,
    m: &Member,
    shipper: &mut Shipper,
    audit_key: &str,
) -> Result<Round, Halt> {
    let fleet = &m.settings.name;
    let mut r = Round::default();
    // A damaged mirror is not rebuilt (see `read_mirror`): the agent stops here, the hook stops
    // every call, a human looks.
    let mut mirror = control::read_mirror(state, fleet).map_err(Halt::Fatal)?;
    take_settings(client, m, &mut mirror, &mut r)?;
    // Written every round (the hook reads its age: a mirror nobody refreshes means the fleet
    // cannot reach this host), and before anything else: the hook obeys from its next call.
    let now = crate::effects::now();
    mirror.checked_at = now;
    let _ = control::write_mirror(state, &mirror);
    r.shipped = shipper.ship(client, state)?;
    shipper.publish(client, now)?;
    heartbeat(client, m, audit_key)?;
    budgets(client, state, m, &mut mirror, (&mut r, now))?;
    Ok(r)
}

/// The fleet's positions and budget definitions, taken into the mirror as the rules allow;
/// what was refused is kept (the last 20). Every accepted budget that binds this host is in
/// the mirror from the moment it is accepted (with nothing reserved until a round reserves),
/// so no failure later in the round can leave a budget unbound.
fn take_settings(client: &mut postgres::Client, m: &Member, mirror: &mut Mirror, r: &mut Round) -> Result<(), Halt> {
    let fleet = &m.settings.name;
    let mut settings = super::settings(client, fleet)?;
    settings.sort_by_key(|s| s.version);
    for s in &settings {
        match mirror.accept(s, &m.settings.operator_keys) {
            Ok(true) => r.accepted += 1,
            Ok(false) => {}
            Err(why) => r.refused.push(refusal(s, &why)),
        }
    }
    for d in super::reserve::definitions(client, fleet)? {
        match mirror.budget_defs.accept(&d, fleet, &m.settings.operator_keys) {
            Ok(true) => r.accepted += 1,
            Ok(false) => {}
            Err(why) => r.refused.push(why),
        }
    }
    for why in &r.refused {
        if !mirror.refused.contains(why) {
            mirror.refused.push(why.clone());
        }
    }
    let skip = mirror.refused.len().saturating_sub(20);
    mirror.refused.drain(..skip);
    for (scope, d) in &mirror.budget_defs.scopes {
        if !d.removed() && super::reserve::binds(m, scope) && !mirror.budgets.iter().any(|a| &a.scope == scope) {
            mirror.budgets.push(Allowance { scope: scope.clone(), ..Allowance::default() });
        }
    }
    Ok(())
}

/// Budgets: settle what was spent, top the reservations up, renew the leases. The mirror is
/// written again only when what the hook checks changed (or half a lease went by). A budget
/// that cannot be settled (a constraint, a bug, an unreadable day ledger) must not stop
/// shipping or the heartbeat: the mirror keeps what it held, the leases run out, spend is
/// refused.
fn budgets(
    client: &mut postgres::Client,
    state: &Path,
    m: &Member,
    mirror: &mut Mirror,
    (r, now): (&mut Round, i64),
) -> Result<(), Halt> {
    let defs = mirror.budget_defs.clone();
    let reserved = match super::reserve::round(client, state, m, &defs, (&crate::model::day_of(now), now)) {
        Ok(super::reserve::Reserved { unread: Some(e), .. }) => {
            r.refused.push(format!("this host's day ledger does not read, so nothing was settled: {e}"));
            return Ok(());
        }
        Ok(r) => r,
        Err(e) if e.as_db_error().is_some() => {
            r.refused.push(format!("the fleet's budgets could not be settled: {}", super::describe(&e)));
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let half = i64::try_from(m.settings.lease / 2).unwrap_or(150);
    let fresh: Vec<_> = reserved
        .allowances
        .into_iter()
        .map(|a| match mirror.budgets.iter().find(|o| o.scope == a.scope) {
            Some(o) if o.lease_until - now > half && Allowance { lease_until: o.lease_until, ..a.clone() } == *o => {
                o.clone()
            }
            _ => a,
        })
        .collect();
    if fresh != mirror.budgets {
        mirror.budgets = fresh;
        let _ = control::write_mirror(state, mirror);
    }
    Ok(())
}

/// The heartbeat: this host is alive, with its key. A host name another state home (another
/// key) already holds is refused: two machines under one name would share one reservation and
/// one chain.
fn heartbeat(client: &mut postgres::Client, m: &Member, audit_key: &str) -> Result<(), Halt> {
    let fleet = &m.settings.name;
    let n = client.execute(
        "INSERT INTO loopguard_hosts (fleet, host, grp, last_seen, audit_key) VALUES ($1, $2, $3, extract(epoch from now())::bigint, $4)
         ON CONFLICT (fleet, host) DO UPDATE SET grp = EXCLUDED.grp, last_seen = EXCLUDED.last_seen, audit_key = EXCLUDED.audit_key
         WHERE loopguard_hosts.audit_key IN (EXCLUDED.audit_key, '')",
        &[fleet, &m.host, &m.settings.group.clone().unwrap_or_default(), &audit_key],
    )?;
    if n == 0 {
        return Err(Halt::Fatal(format!(
            "the host name `{}` is already used in fleet `{fleet}` by another state home (another key): give this host its own name ([fleet] host), or, if this host's state home was replaced, have an operator run `loopguard fleet forget {}`",
            m.host, m.host
        )));
    }
    Ok(())
}

fn refusal(s: &control::Setting, why: &Refusal) -> String {
    let what = match why {
        Refusal::Replayed => "not newer than the one accepted (a replay)",
        Refusal::Unsigned => "it loosens and is not signed by a pinned operator key",
        Refusal::Invalid => "not a position of this fleet",
    };
    format!("version {} ({} {} by {}): {what}", s.version, s.scope, s.position, s.set_by)
}

/// The mirror as the agent last wrote it, for `fleet status`.
pub fn mirror(state: &Path, m: &Member) -> Result<Mirror, String> {
    control::read_mirror(state, &m.settings.name)
}

/// Why a round stopped.
#[derive(Debug)]
pub enum Halt {
    /// The database failed (the agent reconnects).
    Db(postgres::Error),
    /// The local mirror is damaged, or this host's name is taken (the agent exits: a human
    /// must look).
    Fatal(String),
}

impl From<postgres::Error> for Halt {
    fn from(e: postgres::Error) -> Self {
        Halt::Db(e)
    }
}
