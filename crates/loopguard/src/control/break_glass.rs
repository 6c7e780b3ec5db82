//! `loopguard break-glass`.

use super::*;

/// `break-glass`: a named, time-boxed, scoped waiver by one operator (two when the policy
/// demands dual control for a scope). Never waives a backstop.
pub fn break_glass(
    env: &Env,
    t: &Target,
    operators: &[String],
    scope: &[String],
    duration: Option<&str>,
    reason: &str,
    secrets: &mut Secrets,
) -> Result<String, String> {
    let policy = policy(env, t)?;
    let cfg = policy.breaker();
    let secs = validate(&policy, scope, duration, reason)?;
    let dual = scope.iter().any(|s| cfg.dual_control.contains(s));
    if dual && operators.len() < 2 {
        return Err(format!("the policy demands dual control for {}: name two different operators", scope.join(", ")));
    }
    let mut store = t.store()?;
    operator::authenticate(&mut store, operators, secrets, "break-glass")?;
    let n = now();
    let bg = BreakGlass {
        id: 0,
        operators: operators.to_vec(),
        scope: scope.to_vec(),
        reason: reason.to_string(),
        from: n,
        until: n + i64::try_from(secs).unwrap_or(0),
    };
    let id = store.write(|tx| tx.add_break_glass(&t.key, &bg))?;
    hot::write(&t.state, &t.key, |tx| {
        let mut doc = tx.doc();
        doc.ws.waivers.retain(|w| w.until > n);
        doc.ws.waivers.push(crate::model::ActiveWaiver { id, scope: bg.scope.clone(), until: bg.until });
        tx.mark_tripped();
        Ok(())
    })?;
    record(t, id, &bg, dual)?;
    Ok(format!("break-glass #{id} in force until {} for {}\n", time(bg.until), scope.join(", ")))
}

/// The scope (rule codes loopguard knows that are not backstops, path globs), the reason and the
/// duration (within the policy's maximum), checked before any passphrase is asked.
fn validate(policy: &Policy, scope: &[String], duration: Option<&str>, reason: &str) -> Result<u64, String> {
    let cfg = policy.breaker();
    if reason.trim().is_empty() {
        return Err("--reason must say why the glass is broken".into());
    }
    if scope.is_empty() {
        return Err("--scope names what is waived: rule:CODE or path:GLOB (repeatable)".into());
    }
    for s in scope {
        match s.split_once(':') {
            Some(("rule", code)) if loopguard_core::reasons::Code::of(code).is_backstop() => {
                return Err(format!("rule `{code}` is a backstop: no break-glass waives it"));
            }
            Some(("rule", code))
                if loopguard_core::reasons::is_builtin(code) || policy.commands().iter().any(|c| c.code() == code) => {}
            Some(("rule", code)) => return Err(format!("`{code}` is not a rule code loopguard knows")),
            Some(("path", g)) if globset::Glob::new(g).is_ok() && !g.is_empty() => {}
            _ => return Err(format!("scope `{s}` must be rule:CODE or path:GLOB")),
        }
    }
    let secs = match duration {
        Some(d) => loopguard_core::policy::parse_duration(d)
            .ok_or_else(|| format!("--for `{d}` is not a duration like 30m"))?,
        None => cfg.break_glass_default,
    };
    if secs == 0 || secs > cfg.break_glass_max {
        return Err(format!("--for must be more than 0 and at most {} s (break_glass.max)", cfg.break_glass_max));
    }
    Ok(secs)
}

/// Puts a break-glass on record: its own signed log, the main audit log, and a post-event review
/// in STATE.md.
fn record(t: &Target, id: i64, bg: &BreakGlass, dual: bool) -> Result<(), String> {
    let (operators, scope, reason, n) = (&bg.operators, &bg.scope, &bg.reason, bg.from);
    let details = json!({
        "id": id, "operators": operators, "scope": scope, "reason": reason, "from": time(bg.from),
        "until": time(bg.until), "dual_control": dual, "actor": actor(),
        "workspace": t.workspace.display().to_string(),
    });
    // Its own log, and the main audit log.
    for log in [AuditLog::new(t.state.join("break-glass.jsonl")), t.log()] {
        let mut e = NewEvent::new("", EventKind::BreakGlass);
        e.reasons = scope.to_vec();
        e.details = Some(details.clone());
        log.append(e)
            .map_err(|e| format!("break-glass not recorded ({e}); it is in the store until {}", time(bg.until)))?;
    }
    // The break-glass log is signed after every entry: its history cannot be rewritten unseen.
    crate::keys::signing(&t.state)
        .and_then(|k| AuditLog::new(t.state.join("break-glass.jsonl")).checkpoint(&k, "break-glass"))
        .map_err(|e| format!("break-glass recorded, but its log could not be checkpointed: {e}"))?;
    let review = crate::escalation::Escalation {
        time: time(n),
        title: format!("break-glass #{id} — post-event review"),
        kind: "REVIEW".into(),
        fields: vec![
            ("operators".into(), operators.join(" + ")),
            ("scope".into(), scope.join(", ")),
            ("window".into(), format!("{} → {}", time(bg.from), time(bg.until))),
            ("reason".into(), reason.to_string()),
        ],
        todo: format!(
            "- [ ] review every call made under break-glass #{id} (`loopguard audit tail` shows them with `waived`), then note the outcome here."
        ),
    };
    crate::escalation::escalate(&t.state, &t.workspace, &review)
        .map_err(|e| format!("break-glass #{id} is in force, but STATE.md could not be updated: {e}"))?;
    Ok(())
}
