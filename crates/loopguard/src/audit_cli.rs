//! `loopguard audit verify | checkpoint | summary | export | tail`.

use crate::keys;
use loopguard_audit::{AuditEvent, AuditLog};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// What verifying one log found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Verified {
    /// The log file.
    pub log: String,
    /// The chain, the head anchor and every checkpoint hold.
    pub ok: bool,
    /// Events verified (before the problem, if any).
    pub events: u64,
    /// Signed checkpoints verified.
    pub checkpoints: u64,
    /// The trusted key's fingerprint, when checkpoints were checked against it.
    pub key: Option<String>,
    /// What is wrong.
    pub problem: Option<String>,
    /// The line of the log where it is (when it is in a line).
    pub line: Option<u64>,
}

impl Verified {
    /// One line for a human.
    pub fn render(&self) -> String {
        let name = &self.log;
        match (&self.problem, self.checkpoints) {
            (Some(p), _) => format!("TAMPERED: {name}{}: {p}", self.line.map(|l| format!(":{l}")).unwrap_or_default()),
            (None, 0) => format!("ok: {name} ({} events, chain intact, no checkpoint yet)", self.events),
            (None, n) => format!(
                "ok: {name} ({} events, chain intact, {n} signed checkpoints valid, key {})",
                self.events,
                self.key.as_deref().unwrap_or_default()
            ),
        }
    }
}

/// Verifies one log: the chain, the head anchor, and every signed checkpoint.
pub fn verify(state: &Path, log: &AuditLog) -> Result<Verified, String> {
    let r = log.verify().map_err(|e| format!("{}: {e}", log.path().display()))?;
    let mut v = Verified {
        log: log.path().display().to_string(),
        ok: false,
        events: r.events,
        checkpoints: 0,
        key: None,
        problem: None,
        line: None,
    };
    if let Some(p) = &r.problem {
        v.line = (p.line > 0).then_some(p.line);
        v.problem = Some(format!("{} ({} events verified before it)", p.message, r.events));
        return Ok(v);
    }
    let trusted = keys::trusted(state)?;
    match log.verify_checkpoints(trusted.as_ref()) {
        Ok(n) => {
            v.ok = true;
            v.checkpoints = n;
            v.key = trusted.as_ref().map(keys::fingerprint);
        }
        Err(e) => v.problem = Some(format!("{e} (the chain alone verifies {} events)", r.events)),
    }
    Ok(v)
}

/// Signs a checkpoint over a log now.
pub fn checkpoint(state: &Path, log: &AuditLog) -> Result<String, String> {
    let key = keys::signing(state)?;
    let cp = log.checkpoint(&key, "loopguard-cli")?;
    Ok(format!(
        "checkpoint {} of {}: {} events, root {}…, key {}",
        cp.n,
        log.path().display(),
        cp.size,
        &cp.root[..16],
        keys::fingerprint(&key.verifying_key())
    ))
}

fn events(log: &AuditLog) -> Result<Vec<AuditEvent>, String> {
    log.tail(usize::MAX).map_err(|e| e.to_string())
}

/// `audit summary` of one log: the command prints it as JSON or renders it for a human.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    /// The log file.
    pub log: String,
    /// Events in the log.
    pub events: usize,
    /// Sessions in the log.
    pub sessions: usize,
    /// The first event's time.
    pub first: Option<String>,
    /// The last event's time.
    pub last: Option<String>,
    /// Events by kind.
    pub kinds: BTreeMap<String, u64>,
    /// Events by decision.
    pub decisions: BTreeMap<String, u64>,
    /// Events by reason code.
    pub reasons: BTreeMap<String, u64>,
    /// Signed checkpoints.
    pub checkpoints: usize,
    /// The chain and checkpoints verify.
    pub intact: bool,
    /// The verification's line.
    pub verify: String,
}

/// Counts by kind, decision and reason code, sessions, time span, checkpoints, integrity.
pub fn summary(state: &Path, log: &AuditLog) -> Result<Summary, String> {
    let evs = events(log)?;
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut decisions: BTreeMap<String, u64> = BTreeMap::new();
    let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
    let mut sessions = std::collections::BTreeSet::new();
    for e in &evs {
        let kind = serde_json::to_value(e.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        *kinds.entry(kind).or_default() += 1;
        if let Some(d) = &e.decision {
            *decisions.entry(d.clone()).or_default() += 1;
        }
        for r in &e.reasons {
            *reasons.entry(r.clone()).or_default() += 1;
        }
        sessions.insert(e.session.clone());
    }
    let verified = verify(state, log)?;
    Ok(Summary {
        log: log.path().display().to_string(),
        events: evs.len(),
        sessions: sessions.len(),
        first: evs.first().map(|e| e.time.clone()),
        last: evs.last().map(|e| e.time.clone()),
        kinds,
        decisions,
        reasons,
        checkpoints: log.checkpoints().map(|c| c.len()).unwrap_or(0),
        intact: verified.ok,
        verify: verified.render(),
    })
}

impl Summary {
    /// For a human.
    pub fn render(&self) -> String {
        let mut out = format!("{}\n", self.log);
        out.push_str(&format!(
            "  {} events in {} sessions, {} … {}\n",
            self.events,
            self.sessions,
            self.first.as_deref().unwrap_or("-"),
            self.last.as_deref().unwrap_or("-")
        ));
        let list = |m: &BTreeMap<String, u64>| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
        let decisions = if self.decisions.is_empty() { "-".into() } else { list(&self.decisions) };
        out.push_str(&format!("  decisions: {decisions}\n"));
        let mut top: Vec<_> = self.reasons.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let top: Vec<String> = top.iter().take(10).map(|(k, v)| format!("{k} {v}")).collect();
        out.push_str(&format!("  top reasons: {}\n", if top.is_empty() { "-".into() } else { top.join(", ") }));
        out.push_str(&format!("  events by kind: {}\n", list(&self.kinds)));
        out.push_str(&format!("  signed checkpoints: {}\n  integrity: {}\n", self.checkpoints, self.verify));
        out
    }
}

/// One JSON document: the events, the checkpoints, the public key and the verification result,
/// for keeping elsewhere (the answer to a local attacker who rolls everything back together).
pub fn export(state: &Path, log: &AuditLog) -> Result<String, String> {
    let evs = events(log)?;
    let verified = verify(state, log)?;
    let v = json!({
        "log": log.path().display().to_string(),
        "public_key": keys::trusted(state)?.map(|k| loopguard_audit::hex(k.as_bytes())),
        "events": evs,
        "checkpoints": log.checkpoints()?,
        "intact": verified.ok,
        "verify": verified.render(),
    });
    Ok(format!("{v}\n"))
}
