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
    /// Every verified line's hash, in order (for the checkpoints' Merkle roots).
    #[serde(skip)]
    hashes: Vec<String>,
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
/// Each host's key comes from `pinned` (host → hex public key, from a file the operators keep)
/// or, without it, from what the host registered in the database (then a writer who replaces
/// a host's key and re-signs can pass: pin the keys).
pub fn verify(
    client: &mut postgres::Client,
    fleet: &str,
    silent_after: i64,
    pinned: Option<&std::collections::BTreeMap<String, String>>,
) -> Result<FleetVerified, postgres::Error> {
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
            "SELECT seq, hash, problem, key, sig FROM loopguard_ship WHERE fleet = $1 AND host = $2 AND log = $3",
            &[&fleet, &host, &log],
        )?;
        let registered: Option<String> = client
            .query_opt("SELECT audit_key FROM loopguard_hosts WHERE fleet = $1 AND host = $2", &[&fleet, &host])?
            .map(|r| r.get(0));
        let known = registered.is_some();
        let key = match pinned {
            Some(p) => p.get(&host).cloned(),
            None => registered,
        };
        if chain.problem.is_none() {
            chain.problem = match shipped {
                None => Some("no shipping record: these lines were not sent by a fleet agent".into()),
                Some(r) => {
                    let (seq, hash, problem): (i64, String, Option<String>) = (r.get(0), r.get(1), r.get(2));
                    let (cursor_key, sig): (String, String) = (r.get(3), r.get(4));
                    let cursor = super::ship::cursor_bytes(fleet, &host, &log, seq, &hash);
                    let signed = key.as_deref().is_some_and(|k| {
                        k.eq_ignore_ascii_case(&cursor_key)
                            && loopguard_audit::verifying_key(k)
                                .is_some_and(|vk| loopguard_audit::verify_signature(&vk, &cursor, &sig))
                    });
                    match problem {
                        Some(p) => Some(format!("the host stopped shipping it: {p}")),
                        None if key.is_none() => Some(format!("no key is pinned for host `{host}`")),
                        None if !signed => Some(
                            "the shipping cursor is not signed by the host's key (rewritten in the database?)".into(),
                        ),
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
        if chain.problem.is_none()
            && let Some(k) = key.as_deref()
        {
            chain.problem = check_checkpoints(client, fleet, &chain, k)?;
        }
        chains.push(chain);
    }
    check_manifests(client, fleet, silent_after, pinned, &mut chains)?;
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

/// Each host's newest signed manifest against what the fleet holds: signed by the host's key
/// (pinned, or as registered), fresh (no older than `silent_after`: an old one replayed is not
/// the host's word now), and every log it names present up to the line and hash it names, with
/// its checkpoints, and no problem it recorded hidden. Problems go on the log's chain, or on a
/// `(manifest)` entry for the host.
fn check_manifests(
    client: &mut postgres::Client,
    fleet: &str,
    silent_after: i64,
    pinned: Option<&std::collections::BTreeMap<String, String>>,
    chains: &mut Vec<Chain>,
) -> Result<(), postgres::Error> {
    use super::ship::{MANIFEST_V1, Manifest};
    let now: i64 = client.query_one("SELECT extract(epoch from now())::bigint", &[])?.get(0);
    let hosts = host_keys(client, fleet, pinned)?;
    let counts: std::collections::HashMap<(String, String), i64> = client
        .query("SELECT host, log, count(*) FROM loopguard_checkpoint WHERE fleet = $1 GROUP BY 1, 2", &[&fleet])?
        .iter()
        .map(|r| ((r.get(0), r.get(1)), r.get(2)))
        .collect();
    for (host, key) in hosts {
        let row = client.query_opt(
            "SELECT at, body, key, sig FROM loopguard_manifest WHERE fleet = $1 AND host = $2",
            &[&fleet, &host],
        )?;
        let verdict = manifest_of(row, key.as_deref(), (fleet, &host)).and_then(|m: Manifest| {
            if m.v != MANIFEST_V1 {
                Err("its manifest is of an unknown format".to_string())
            } else if now - m.at > silent_after {
                Err(format!(
                    "its newest signed manifest is {} s old (an old one replayed, or the host is silent)",
                    now - m.at
                ))
            } else {
                Ok(m)
            }
        });
        let m = match verdict {
            Ok(m) => m,
            Err(why) => {
                chains.push(Chain {
                    host: host.clone(),
                    log: "(manifest)".into(),
                    events: 0,
                    problem: Some(why),
                    last: String::new(),
                    hashes: Vec::new(),
                });
                continue;
            }
        };
        for l in m.logs {
            let held = counts.get(&(host.clone(), l.log.clone())).copied().unwrap_or(0);
            let problem = log_problem(chains, &host, &l, held);
            let Some(problem) = problem else { continue };
            match chains.iter_mut().find(|c| c.host == host && c.log == l.log) {
                Some(c) => c.problem = Some(problem),
                None => chains.push(Chain {
                    host: host.clone(),
                    log: l.log.clone(),
                    events: 0,
                    problem: Some(problem),
                    last: String::new(),
                    hashes: Vec::new(),
                }),
            }
        }
    }
    Ok(())
}

/// The hosts whose manifests are checked, with the key each must be signed by: the pinned
/// keys when given (a registered host that is not pinned has none), else the registered ones.
fn host_keys(
    client: &mut postgres::Client,
    fleet: &str,
    pinned: Option<&std::collections::BTreeMap<String, String>>,
) -> Result<std::collections::BTreeMap<String, Option<String>>, postgres::Error> {
    let mut hosts: std::collections::BTreeMap<String, Option<String>> = client
        .query("SELECT host, audit_key FROM loopguard_hosts WHERE fleet = $1", &[&fleet])?
        .iter()
        .map(|r| (r.get::<_, String>(0), Some(r.get::<_, String>(1))))
        .collect();
    if let Some(p) = pinned {
        for k in hosts.values_mut() {
            *k = None;
        }
        for (h, k) in p {
            hosts.insert(h.clone(), Some(k.clone()));
        }
    }
    Ok(hosts)
}

/// What is wrong with one log against the host's manifest entry for it (`held`: checkpoints
/// the fleet holds), if anything.
fn log_problem(chains: &[Chain], host: &str, l: &super::ship::ManifestLog, held: i64) -> Option<String> {
    match chains.iter().find(|c| c.host == host && c.log == l.log) {
        None if l.seq > 0 => {
            Some(format!("the host's signed manifest says {} lines were shipped; the fleet holds none", l.seq))
        }
        None => None,
        // Already wrong: the host's own record of a problem is added if it was hidden.
        Some(c) if c.problem.is_some() => match (&c.problem, &l.problem) {
            (Some(have), Some(p)) if !have.contains(p.as_str()) => Some(format!("{have}; the host recorded: {p}")),
            _ => None,
        },
        Some(c) if (c.hashes.len() as i64) < l.seq => {
            Some(format!("the chain ends at line {} but the host's signed manifest says {}", c.hashes.len(), l.seq))
        }
        Some(c) if l.seq > 0 && c.hashes[(l.seq - 1) as usize] != l.hash => {
            Some(format!("line {} is not the one in the host's signed manifest", l.seq))
        }
        Some(_) if held < l.checkpoints => {
            Some(format!("{} signed checkpoint(s) shipped, the fleet holds {held}", l.checkpoints))
        }
        Some(_) => l.problem.as_ref().map(|p| format!("the host recorded: {p}")),
    }
}

/// A manifest row, checked against the host's key.
fn manifest_of(
    row: Option<postgres::Row>,
    key: Option<&str>,
    (fleet, host): (&str, &str),
) -> Result<super::ship::Manifest, String> {
    let Some(key) = key.filter(|k| !k.is_empty()) else {
        return Err(format!("no key is known or pinned for host `{host}`"));
    };
    let Some(r) = row else { return Err("it has no signed manifest".into()) };
    let (body, row_key, sig): (String, String, String) = (r.get(1), r.get(2), r.get(3));
    let signed = key.eq_ignore_ascii_case(&row_key)
        && loopguard_audit::verifying_key(key)
            .is_some_and(|vk| loopguard_audit::verify_signature(&vk, body.as_bytes(), &sig));
    if !signed {
        return Err("its manifest is not signed by the host's key".into());
    }
    let m: super::ship::Manifest =
        serde_json::from_str(&body).map_err(|e| format!("its manifest does not read: {e}"))?;
    if m.fleet != fleet || m.host != host {
        return Err("its manifest is another host's".into());
    }
    Ok(m)
}

/// The host's signed checkpoints of a log against its shipped chain: each signed by the host's
/// key, each following the one before, each naming the chain's line at its size and the Merkle
/// root of the lines up to it. A chain rewritten or cut below a checkpoint fails here even when
/// its cursor was rewritten too.
fn check_checkpoints(
    client: &mut postgres::Client,
    fleet: &str,
    chain: &Chain,
    key: &str,
) -> Result<Option<String>, postgres::Error> {
    let rows = client.query(
        "SELECT n, line FROM loopguard_checkpoint WHERE fleet = $1 AND host = $2 AND log = $3 ORDER BY n",
        &[&fleet, &chain.host, &chain.log],
    )?;
    let Some(vk) = loopguard_audit::verifying_key(key) else {
        return Ok(Some(format!("the host's key `{key}` is not an Ed25519 public key")));
    };
    let mut prev = GENESIS_HASH.to_string();
    for (i, r) in rows.iter().enumerate() {
        let (n, line): (i64, String) = (r.get(0), r.get(1));
        let at = format!("signed checkpoint {n}");
        let Ok(cp) = serde_json::from_str::<loopguard_audit::Checkpoint>(&line) else {
            return Ok(Some(format!("{at} does not read")));
        };
        let size = usize::try_from(cp.size).unwrap_or(usize::MAX);
        let problem = if n != i as i64 + 1 || cp.n != n as u64 {
            Some(format!("{at} is missing or out of place"))
        } else if cp.log != format!("{}.jsonl", chain.log) {
            Some(format!("{at} is another log's"))
        } else if !cp.signature_ok(&vk) {
            Some(format!("{at} is not signed by the host's key"))
        } else if cp.prev != prev {
            Some(format!("{at} does not follow the one before it"))
        } else if size > chain.hashes.len() {
            Some(format!("the chain ends at line {} below {at}, which covers {size} lines", chain.hashes.len()))
        } else {
            let prefix = &chain.hashes[..size];
            let leaves: Vec<Vec<u8>> = prefix.iter().map(|h| h.as_bytes().to_vec()).collect();
            let head = prefix.last().map_or(GENESIS_HASH, |h| h.as_str());
            (head != cp.head || loopguard_audit::hex(&loopguard_audit::merkle_root(&leaves)) != cp.root)
                .then(|| format!("the first {size} lines are not the ones the host signed in {at}"))
        };
        if problem.is_some() {
            return Ok(problem);
        }
        prev = cp.hash();
    }
    Ok(None)
}

fn check_chain(client: &mut postgres::Client, fleet: &str, host: &str, log: &str) -> Result<Chain, postgres::Error> {
    let rows = client.query(
        "SELECT seq, hash, prev_hash, line FROM loopguard_audit WHERE fleet = $1 AND host = $2 AND log = $3 ORDER BY seq",
        &[&fleet, &host, &log],
    )?;
    let mut chain = Chain {
        host: host.into(),
        log: log.into(),
        events: 0,
        problem: None,
        last: GENESIS_HASH.into(),
        hashes: Vec::new(),
    };
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
        chain.hashes.push(hash.clone());
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
