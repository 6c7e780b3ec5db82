//! `loopguard audit verify --fleet`: every host's shipped chain checked line by line as the
//! host's own log is (canonical form, hash, position, link), the shipper's recorded problems,
//! and the hosts that fell silent.

use loopguard_audit::{AuditEvent, GENESIS_HASH};
use serde::Serialize;

/// What verifying the fleet found.
#[derive(Debug, Clone, Serialize)]
pub struct FleetVerified {
    /// The fleet.
    pub fleet: String,
    /// One entry per shipped log.
    pub chains: Vec<Chain>,
    /// Hosts whose last heartbeat is older than the silence limit.
    pub silent: Vec<Silent>,
    /// Every chain holds and no host is silent.
    pub ok: bool,
}

/// One shipped log.
#[derive(Debug, Clone, Serialize)]
pub struct Chain {
    /// The host.
    pub host: String,
    /// The log's name.
    pub log: String,
    /// Lines verified (before the problem, if any).
    pub events: i64,
    /// What is wrong, and at which line.
    pub problem: Option<String>,
    /// The last line's hash.
    #[serde(skip)]
    last: String,
}

/// A host that stopped reporting.
#[derive(Debug, Clone, Serialize)]
pub struct Silent {
    /// The host.
    pub host: String,
    /// Seconds since its last heartbeat.
    pub silent_for: i64,
}

/// Verifies every chain of `fleet`; hosts silent for more than `silent_after` seconds are named.
pub fn verify(client: &mut postgres::Client, fleet: &str, silent_after: i64) -> Result<FleetVerified, postgres::Error> {
    let mut chains = Vec::new();
    let logs = client.query(
        "SELECT DISTINCT host, log FROM loopguard_audit WHERE fleet = $1
         UNION SELECT host, log FROM loopguard_ship WHERE fleet = $1 ORDER BY 1, 2",
        &[&fleet],
    )?;
    for row in logs {
        let (host, log): (String, String) = (row.get(0), row.get(1));
        let mut chain = check_chain(client, fleet, &host, &log)?;
        let shipped = client.query_opt(
            "SELECT seq, hash, problem FROM loopguard_ship WHERE fleet = $1 AND host = $2 AND log = $3",
            &[&fleet, &host, &log],
        )?;
        let known = client
            .query_opt("SELECT 1 FROM loopguard_hosts WHERE fleet = $1 AND host = $2", &[&fleet, &host])?
            .is_some();
        if chain.problem.is_none() {
            chain.problem = match shipped {
                None => Some("no shipping record: these lines were not sent by a fleet agent".into()),
                Some(r) => {
                    let (seq, hash, problem): (i64, String, Option<String>) = (r.get(0), r.get(1), r.get(2));
                    match problem {
                        Some(p) => Some(format!("the host stopped shipping it: {p}")),
                        // The chain must end where the host's cursor says it sent up to: a cut
                        // tail, or a tail rewritten with fresh hashes, ends elsewhere.
                        None if seq != chain.events || chain.last != hash => Some(format!(
                            "the chain ends at line {} but the host shipped up to line {seq}",
                            chain.events
                        )),
                        None => None,
                    }
                }
            };
        }
        if chain.problem.is_none() && !known {
            chain.problem = Some(format!("host `{host}` never reported to this fleet"));
        }
        chains.push(chain);
    }
    let silent = client
        .query(
            "SELECT host, extract(epoch from now())::bigint - last_seen FROM loopguard_hosts
             WHERE fleet = $1 AND extract(epoch from now())::bigint - last_seen > $2 ORDER BY host",
            &[&fleet, &silent_after],
        )?
        .into_iter()
        .map(|r| Silent { host: r.get(0), silent_for: r.get(1) })
        .collect::<Vec<_>>();
    let ok = silent.is_empty() && chains.iter().all(|c| c.problem.is_none());
    Ok(FleetVerified { fleet: fleet.to_string(), chains, silent, ok })
}

fn check_chain(client: &mut postgres::Client, fleet: &str, host: &str, log: &str) -> Result<Chain, postgres::Error> {
    let rows = client.query(
        "SELECT seq, hash, prev_hash, line FROM loopguard_audit WHERE fleet = $1 AND host = $2 AND log = $3 ORDER BY seq",
        &[&fleet, &host, &log],
    )?;
    let mut chain = Chain { host: host.into(), log: log.into(), events: 0, problem: None, last: GENESIS_HASH.into() };
    let mut prev = GENESIS_HASH.to_string();
    for (i, r) in rows.iter().enumerate() {
        let (seq, hash, prev_hash, line): (i64, String, String, String) = (r.get(0), r.get(1), r.get(2), r.get(3));
        let problem = match AuditEvent::parse_line(&line) {
            _ if seq != i as i64 + 1 => Some(format!("line {} is missing", i + 1)),
            Err(e) => Some(format!("line {seq} was changed or does not read: {e}")),
            Ok(ev) if ev.compute_hash() != ev.hash || ev.hash != hash => {
                Some(format!("line {seq} was changed: its hash is not the hash of its content"))
            }
            Ok(ev) if ev.seq as i64 != seq => Some(format!("line {seq} says it is line {}", ev.seq)),
            Ok(ev) if ev.prev_hash != prev || prev_hash != prev => {
                Some(format!("line {seq} does not chain to line {}", seq - 1))
            }
            Ok(_) => None,
        };
        if problem.is_some() {
            chain.problem = problem;
            return Ok(chain);
        }
        prev = hash.clone();
        chain.last = hash;
        chain.events = seq;
    }
    Ok(chain)
}

impl FleetVerified {
    /// For a human.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for c in &self.chains {
            match &c.problem {
                None => out.push_str(&format!("ok: {}/{} ({} events)\n", c.host, c.log, c.events)),
                Some(p) => out.push_str(&format!(
                    "TAMPERED: {}/{}: {p} ({} events verified before it)\n",
                    c.host, c.log, c.events
                )),
            }
        }
        for s in &self.silent {
            out.push_str(&format!("SILENT: {} (no heartbeat for {} s)\n", s.host, s.silent_for));
        }
        if self.chains.is_empty() {
            out.push_str(&format!("fleet `{}`: nothing shipped yet\n", self.fleet));
        }
        out
    }
}
