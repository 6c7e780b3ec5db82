//! `loopguard breaker status|check|reset|trip`.

use super::*;

/// `breaker status`: position, trips with values and cooldowns, budget use. JSON with `json`.
pub fn status(env: &Env, t: &Target, as_json: bool) -> Result<(String, bool), String> {
    let policy = policy(env, t)?;
    let cfg = policy.breaker();
    let n = now();
    let (doc, daily) = hot::write(&t.state, &t.key, |tx| Ok((tx.doc().clone(), tx.daily_usd(&day_of(n))?)))?;
    let state = doc.ws.breaker.clone();
    let run = doc.runs.values().max_by_key(|r| r.started_at).cloned();
    let bg: Vec<_> = doc.ws.waivers.iter().filter(|w| w.until > n).cloned().collect();
    let revoked = doc.ws.revoked.clone();
    let tripped = state.is_tripped();
    let metrics = run.clone().map(|run| RunMetrics { run, now: n, daily_usd: daily, velocity: Vec::new() });
    let budgets: Vec<Value> = cfg
        .rules
        .iter()
        .filter(|r| r.trigger != Trigger::SpendVelocity)
        .map(|r| {
            let v = metrics.as_ref().and_then(|m| m.reading(r.trigger, r.window).value);
            json!({
                "trigger": r.trigger.as_str(), "value": v, "threshold": r.threshold, "action": r.action.as_str(),
                "reset": r.reset.as_str(), "used": v.map(|v| if r.threshold > 0.0 { v / r.threshold } else { 0.0 }),
            })
        })
        .collect();
    let trips: Vec<Value> = state
        .trips
        .iter()
        .map(|tr| {
            json!({
                "id": tr.id, "trigger": tr.trigger.as_str(), "action": tr.action.as_str(), "value": tr.value,
                "threshold": tr.threshold, "reason": tr.reason, "session": tr.session, "since": time(tr.at),
                "cooldown_until": time(tr.cooldown_until), "reset": tr.reset.as_str(),
            })
        })
        .collect();
    let v = json!({
        "workspace": t.workspace.display().to_string(),
        "profile": cfg.profile.as_str(),
        "position": state.position.as_str(),
        "require_approval": state.require_approval,
        "tripped": tripped,
        "trips": trips,
        "next_step_at": (state.next_step_at > 0).then(|| time(state.next_step_at)),
        "run": run.as_ref().map(|r| json!({
            "session": r.session, "started": time(r.started_at), "steps": r.steps, "tokens": r.tokens,
            "usd": if r.usd_unknown { None } else { Some(r.usd) }, "consecutive_blocks": r.consecutive_blocks,
            "usd_estimated": crate::breaker::spend_estimate_label(r), "unpriced_models": r.estimated_models,
            "best_passed": r.best_passed, "last_passed": r.last_passed, "transcript_error": r.transcript_error,
            "spend_unreported": r.spend_unreported,
        })),
        "daily_usd": daily,
        "budgets": budgets,
        "break_glass": bg.iter().map(|g| json!({"id": g.id, "scope": g.scope, "until": time(g.until)})).collect::<Vec<_>>(),
        "revoked": revoked.map(|(at, trip)| json!({"at": time(at), "by": trip})),
    });
    if as_json {
        return Ok((format!("{v:#}\n"), tripped));
    }
    Ok((render_status(t, cfg, &state, metrics.as_ref(), &bg), tripped))
}

/// `breaker status` for a human.
fn render_status(
    t: &Target,
    cfg: &loopguard_core::policy::BreakerConfig,
    state: &BreakerState,
    metrics: Option<&RunMetrics>,
    bg: &[crate::model::ActiveWaiver],
) -> String {
    let mut out = format!(
        "breaker of {} ({} profile): {}{}\n",
        t.workspace.display(),
        cfg.profile.as_str(),
        state.position.as_str().to_uppercase(),
        if state.require_approval { " + require approval" } else { "" }
    );
    for tr in &state.trips {
        out.push_str(&format!(
            "  trip #{} {} → {}: {} (since {}, cooldown until {}, reset {})\n",
            tr.id,
            tr.trigger.as_str(),
            tr.action.as_str(),
            tr.reason,
            time(tr.at),
            time(tr.cooldown_until),
            tr.reset.as_str()
        ));
    }
    if let Some(m) = metrics {
        out.push_str(&format!("run {} (since {}):\n", m.run.session, time(m.run.started_at)));
        for r in cfg.rules.iter().filter(|r| r.trigger != Trigger::SpendVelocity) {
            let v = m.reading(r.trigger, r.window).value;
            out.push_str(&format!(
                "  {:<20} {:>14} of {:<12} → {}\n",
                r.trigger.as_str(),
                v.map_or("unknown".into(), |v| fmt_value(r.trigger, v)),
                fmt_value(r.trigger, r.threshold),
                r.action.as_str()
            ));
        }
        if let Some(label) = crate::breaker::spend_estimate_label(&m.run) {
            out.push_str(&format!("  USD is {label}: charged at the highest price in the table\n"));
        }
    } else {
        out.push_str("no run recorded in this workspace yet\n");
    }
    for g in bg {
        out.push_str(&format!("break-glass #{} until {}: {}\n", g.id, time(g.until), g.scope.join(", ")));
    }
    out
}

/// `breaker reset`: a human clears trips (all, or one trigger's). Needs an operator's passphrase.
pub fn reset(
    env: &Env,
    t: &Target,
    operator: &str,
    reason: &str,
    trigger: Option<&str>,
    secrets: &mut Secrets,
) -> Result<String, String> {
    if reason.trim().is_empty() {
        return Err("--reason must say why the breaker can be reset".into());
    }
    let trigger = match trigger {
        Some(s) => Some(
            Trigger::parse(s)
                .or((s == "manual").then_some(Trigger::Manual))
                .ok_or_else(|| format!("unknown trigger `{s}`"))?,
        ),
        None => None,
    };
    let _ = policy(env, t)?;
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "breaker reset")?;
    let base = effects::head_of(&t.workspace);
    let n = now();
    drop(store);
    let (cleared, state) = hot::write(&t.state, &t.key, |tx| {
        let mut doc = tx.doc();
        let cleared = doc.ws.breaker.reset(trigger);
        // The runs start over: counters zeroed, clock and base restarted. The transcript
        // position is kept (no usage counted twice); day totals stay (daily budgets hold).
        for run in doc.runs.values_mut() {
            *run = crate::model::Run {
                workspace: run.workspace.clone(),
                session: run.session.clone(),
                started_at: n,
                base_ref: base.clone().or(run.base_ref.clone()),
                transcript_offset: run.transcript_offset,
                transcript_error: run.transcript_error.clone(),
                last_msg_id: run.last_msg_id.clone(),
                ..Default::default()
            };
        }
        doc.regions.clear();
        tx.mark_tripped();
        Ok((cleared, doc.ws.breaker.clone()))
    })?;
    let mut e = NewEvent::new("", EventKind::BreakerReset);
    e.reasons = cleared.iter().map(|c| c.trigger.as_str().to_string()).collect();
    e.details = Some(json!({
        "operator": operator, "actor": actor(), "reason": reason,
        "cleared": cleared.iter().map(|c| c.id).collect::<Vec<_>>(), "position": state.position.as_str(),
    }));
    t.log().append(e).map_err(|e| format!("the breaker was reset, but the audit event failed: {e}"))?;
    Ok(format!(
        "cleared {} trip(s); breaker of {} is now {}\n",
        cleared.len(),
        t.workspace.display(),
        state.position.as_str()
    ))
}

/// `breaker trip --to ACTION`: a human caps the agent by hand (making things stricter needs no
/// passphrase; the gate still keeps agents from running it).
pub fn trip(t: &Target, to: &str, reason: &str) -> Result<String, String> {
    let action = TripAction::parse(to)
        .ok_or_else(|| format!("--to must be require_approval, pr_only, read_only or stop, found `{to}`"))?;
    let n = now();
    let state = hot::write(&t.state, &t.key, |tx| {
        let mut state: BreakerState = tx.doc().ws.breaker.clone();
        state.trips.retain(|x| !(x.trigger == Trigger::Manual && x.action == action));
        state.trips.push(loopguard_core::breaker::Trip {
            id: 0,
            trigger: Trigger::Manual,
            action,
            value: None,
            threshold: 0.0,
            reason: format!("tripped by hand by {}: {reason}", actor()),
            session: "human".into(),
            at: n,
            cooldown_until: n,
            reset: ResetRule::Manual,
        });
        state.position = state.position.min(state.floor());
        state.require_approval |= action == TripAction::RequireApproval;
        let mut doc = tx.doc();
        doc.ws.breaker = state.clone();
        doc.ws.revoked = Some((n, "manual".into()));
        tx.mark_tripped();
        Ok(state)
    })?;
    let mut e = NewEvent::new("", EventKind::BreakerManualTrip);
    e.details = Some(
        json!({ "actor": actor(), "reason": reason, "action": action.as_str(), "position": state.position.as_str() }),
    );
    t.log().append(e).map_err(|e| format!("tripped, but the audit event failed: {e}"))?;
    Ok(format!("breaker of {} is now {}\n", t.workspace.display(), state.position.as_str()))
}
