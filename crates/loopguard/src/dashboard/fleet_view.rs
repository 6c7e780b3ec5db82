//! The dashboard's fleet view: the hosts, positions, budgets and shipping of the fleet this
//! state home belongs to, read from the same PostgreSQL the agents use (read-only, one
//! connection per refresh; the page asks every few seconds while it is open). A dashboard
//! outside a fleet answers `{"fleet": null}`.

use crate::fleet::{self, Member, reserve};
use crate::state::Env;
use serde_json::{Value, json};

/// A host is shown as silent after this many seconds without a heartbeat (as `audit verify
/// --fleet` says by default).
const SILENT_AFTER: i64 = 30;

/// The fleet as the database has it now.
pub fn view(env: &Env) -> Result<Value, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let policy =
        crate::effective::load(env, &env.workspace_for(&cwd)).map_err(|e| format!("the policy does not load: {e}"))?;
    let Some(m) = Member::of(&policy) else { return Ok(json!({ "fleet": null })) };
    let mut client = fleet::connect(&m.settings)?;
    // A database stuck on a lock must not hold the page's thread and connection for long.
    client.batch_execute("SET statement_timeout = 5000").map_err(|e| fleet::describe(&e))?;
    snapshot(&mut client, &m).map_err(|e| fleet::describe(&e))
}

fn snapshot(client: &mut postgres::Client, m: &Member) -> Result<Value, postgres::Error> {
    let name = &m.settings.name;
    // One snapshot for everything on the page.
    let mut tx =
        client.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead).read_only(true).start()?;
    let now: i64 = tx.query_one("SELECT extract(epoch from now())::bigint", &[])?.get(0);
    let hosts: Vec<Value> = tx
        .query("SELECT host, grp, last_seen FROM loopguard_hosts WHERE fleet = $1 ORDER BY host", &[name])?
        .iter()
        .map(|r| {
            let (host, group, seen): (String, String, i64) = (r.get(0), r.get(1), r.get(2));
            json!({ "host": host, "group": group, "silent_for": now - seen, "silent": now - seen > SILENT_AFTER })
        })
        .collect();
    let shipping: Vec<Value> = tx
        .query("SELECT host, log, seq, problem FROM loopguard_ship WHERE fleet = $1 ORDER BY host, log", &[name])?
        .iter()
        .map(|r| {
            let (host, log, seq, problem): (String, String, i64, Option<String>) =
                (r.get(0), r.get(1), r.get(2), r.get(3));
            json!({ "host": host, "log": log, "shipped": seq, "problem": problem })
        })
        .collect();
    tx.commit()?;
    let pinned = &m.settings.operator_keys;
    let mut positions: Vec<Value> = fleet::settings(client, name)?
        .iter()
        .map(|s| {
            // Unsigned words are the database's, not an operator's: shown as such.
            let signed = s.signed_by(pinned);
            json!({ "scope": s.scope, "position": s.position, "version": s.version, "signed": signed,
                    "set_by": if signed { s.set_by.as_str() } else { "" } })
        })
        .collect();
    positions.sort_by(|a, b| a["scope"].as_str().cmp(&b["scope"].as_str()));
    let today = crate::model::day_of(crate::effects::now());
    // A limit is an operator's word only when its definition carries a pinned signature.
    let defs = reserve::definitions(client, name)?;
    let budgets: Vec<Value> = reserve::ledger(client, name, &today)?
        .iter()
        .map(|l| {
            let signed = defs.iter().any(|d| d.scope == l.scope && d.signed_by(pinned));
            let mut v = json!(l);
            v["signed"] = json!(signed);
            v
        })
        .collect();
    Ok(json!({
        "fleet": name, "this_host": m.host, "now": now, "day": today, "hosts": hosts,
        "positions": positions, "budgets": budgets, "shipping": shipping,
    }))
}
