//! `loopguard audit verify | checkpoint | summary | export | tail`.

use crate::keys;
use loopguard_audit::{AuditEvent, AuditLog};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// Verifies one log: the chain, the head anchor, and every signed checkpoint. Returns a line
/// for the human and whether all is well.
pub fn verify(state: &Path, log: &AuditLog) -> Result<(String, bool), String> {
    let r = log.verify().map_err(|e| format!("{}: {e}", log.path().display()))?;
    let name = log.path().display();
    if let Some(p) = &r.problem {
        let at = if p.line > 0 { format!(":{}", p.line) } else { String::new() };
        return Ok((format!("TAMPERED: {name}{at}: {} ({} events verified before it)", p.message, r.events), false));
    }
    let trusted = keys::trusted(state)?;
    match log.verify_checkpoints(trusted.as_ref()) {
        Ok(0) => Ok((format!("ok: {name} ({} events, chain intact, no checkpoint yet)", r.events), true)),
        Ok(n) => Ok((
            format!(
                "ok: {name} ({} events, chain intact, {n} signed checkpoints valid, key {})",
                r.events,
                trusted.as_ref().map(keys::fingerprint).unwrap_or_default()
            ),
            true,
        )),
        Err(e) => Ok((format!("TAMPERED: {name}: {e} (the chain alone verifies {} events)", r.events), false)),
    }
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

/// Counts by kind, decision and reason code, sessions, time span, checkpoints, integrity.
pub fn summary(state: &Path, log: &AuditLog, json_out: bool) -> Result<String, String> {
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
    let (line, ok) = verify(state, log)?;
    let checkpoints = log.checkpoints().map(|c| c.len()).unwrap_or(0);
    let first = evs.first().map(|e| e.time.clone());
    let last = evs.last().map(|e| e.time.clone());
    if json_out {
        let v = json!({
            "log": log.path().display().to_string(), "events": evs.len(), "sessions": sessions.len(),
            "first": first, "last": last, "kinds": kinds, "decisions": decisions, "reasons": reasons,
            "checkpoints": checkpoints, "intact": ok, "verify": line,
        });
        return Ok(format!("{v:#}\n"));
    }
    let mut out = format!("{}\n", log.path().display());
    out.push_str(&format!(
        "  {} events in {} sessions, {} … {}\n",
        evs.len(),
        sessions.len(),
        first.as_deref().unwrap_or("-"),
        last.as_deref().unwrap_or("-")
    ));
    let list = |m: &BTreeMap<String, u64>| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    out.push_str(&format!("  decisions: {}\n", if decisions.is_empty() { "-".into() } else { list(&decisions) }));
    let mut top: Vec<_> = reasons.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = top.iter().take(10).map(|(k, v)| format!("{k} {v}")).collect();
    out.push_str(&format!("  top reasons: {}\n", if top.is_empty() { "-".into() } else { top.join(", ") }));
    out.push_str(&format!("  events by kind: {}\n", list(&kinds)));
    out.push_str(&format!("  signed checkpoints: {checkpoints}\n  integrity: {line}\n"));
    Ok(out)
}

/// One JSON document: the events, the checkpoints, the public key and the verification result,
/// for keeping elsewhere (the answer to a local attacker who rolls everything back together).
pub fn export(state: &Path, log: &AuditLog) -> Result<String, String> {
    let evs = events(log)?;
    let (line, ok) = verify(state, log)?;
    let v = json!({
        "log": log.path().display().to_string(),
        "public_key": keys::trusted(state)?.map(|k| loopguard_audit::hex(k.as_bytes())),
        "events": evs,
        "checkpoints": log.checkpoints()?,
        "intact": ok,
        "verify": line,
    });
    Ok(format!("{v}\n"))
}
