//! `loopguard breaker status|check|reset|trip`.

use super::*;

/// `breaker status`, as data: the command prints it as JSON or [`BreakerStatus::render`]s it for
/// a human.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BreakerStatus {
    /// The workspace.
    pub workspace: String,
    /// The breaker profile.
    pub profile: &'static str,
    /// FULL_AUTO → PR_ONLY → READ_ONLY → STOPPED.
    pub position: &'static str,
    /// Each call needs a human.
    pub require_approval: bool,
    /// Any trip is active.
    pub tripped: bool,
    /// The active trips.
    pub trips: Vec<TripView>,
    /// When the next step of a stepped recovery is due.
    pub next_step_at: Option<String>,
    /// The latest run.
    pub run: Option<RunView>,
    /// USD spent today, all workspaces (`None`: some spend had no price).
    pub daily_usd: Option<f64>,
    /// Each rule's value against its threshold.
    pub budgets: Vec<BudgetView>,
    /// Active break-glass waivers.
    pub break_glass: Vec<WaiverView>,
    /// When (and by which trip) the workspace's credentials were revoked.
    pub revoked: Option<RevokedView>,
}

/// One active trip.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TripView {
    /// Its id.
    pub id: i64,
    /// What tripped it.
    pub trigger: &'static str,
    /// What it caps the agent to.
    pub action: &'static str,
    /// The reading.
    pub value: Option<f64>,
    /// The rule's threshold.
    pub threshold: f64,
    /// Why.
    pub reason: String,
    /// The session.
    pub session: String,
    /// When.
    pub since: String,
    /// Until when it cannot be reset.
    pub cooldown_until: String,
    /// How it resets.
    pub reset: &'static str,
}

/// The latest run's counters.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunView {
    /// The session.
    pub session: String,
    /// When it started.
    pub started: String,
    /// Tool calls decided.
    pub steps: i64,
    /// Tokens spent.
    pub tokens: i64,
    /// USD spent (none: some spend had no price).
    pub usd: Option<f64>,
    /// Blocked decisions in a row.
    pub consecutive_blocks: i64,
    /// How USD was estimated, when it was.
    pub usd_estimated: Option<String>,
    /// Models charged at the ceiling price.
    pub unpriced_models: Vec<String>,
    /// The most tests seen passing.
    pub best_passed: Option<i64>,
    /// Tests passing in the last run.
    pub last_passed: Option<i64>,
    /// Why the transcript could not be read.
    pub transcript_error: Option<String>,
    /// The host reports no spend: spend budgets are not measured.
    pub spend_unreported: bool,
}

/// One rule's reading.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BudgetView {
    #[serde(skip)]
    kind: Trigger,
    /// What tripped it.
    pub trigger: &'static str,
    /// The reading.
    pub value: Option<f64>,
    /// The rule's threshold.
    pub threshold: f64,
    /// What it caps the agent to.
    pub action: &'static str,
    /// How it resets.
    pub reset: &'static str,
    /// value / threshold.
    pub used: Option<f64>,
}

/// One active break-glass waiver.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WaiverView {
    /// Its id.
    pub id: i64,
    /// What it covers.
    pub scope: Vec<String>,
    /// Until when.
    pub until: String,
}

/// A credential revocation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RevokedView {
    /// When.
    pub at: String,
    /// The trip that did it.
    pub by: String,
}

/// `breaker status`: position, trips with values and cooldowns, budget use.
pub fn status(env: &Env, t: &Target) -> Result<BreakerStatus, String> {
    let policy = policy(env, t)?;
    let cfg = policy.breaker();
    let n = now();
    let (doc, daily) = hot::peek(&t.state, &t.key, |tx| Ok((tx.doc().clone(), tx.daily_usd(&day_of(n))?)))?;
    let state = doc.ws.breaker.clone();
    let run = doc.runs.values().max_by_key(|r| r.started_at).cloned();
    let metrics = run.clone().map(|run| RunMetrics { run, now: n, daily_usd: daily, velocity: Vec::new() });
    let budgets = cfg
        .rules
        .iter()
        .filter(|r| r.trigger != Trigger::SpendVelocity)
        .map(|r| {
            let v = metrics.as_ref().and_then(|m| m.reading(r.trigger, r.window).value);
            BudgetView {
                kind: r.trigger,
                trigger: r.trigger.as_str(),
                value: v,
                threshold: r.threshold,
                action: r.action.as_str(),
                reset: r.reset.as_str(),
                used: v.map(|v| if r.threshold > 0.0 { v / r.threshold } else { 0.0 }),
            }
        })
        .collect();
    let trips = state
        .trips
        .iter()
        .map(|tr| TripView {
            id: tr.id,
            trigger: tr.trigger.as_str(),
            action: tr.action.as_str(),
            value: tr.value,
            threshold: tr.threshold,
            reason: tr.reason.clone(),
            session: tr.session.clone(),
            since: time(tr.at),
            cooldown_until: time(tr.cooldown_until),
            reset: tr.reset.as_str(),
        })
        .collect();
    Ok(BreakerStatus {
        workspace: t.workspace.display().to_string(),
        profile: cfg.profile.as_str(),
        position: state.position.as_str(),
        require_approval: state.require_approval,
        tripped: state.is_tripped(),
        trips,
        next_step_at: (state.next_step_at > 0).then(|| time(state.next_step_at)),
        run: run.as_ref().map(|r| RunView {
            session: r.session.clone(),
            started: time(r.started_at),
            steps: r.steps,
            tokens: r.tokens,
            usd: if r.usd_unknown { None } else { Some(r.usd) },
            consecutive_blocks: r.consecutive_blocks,
            usd_estimated: crate::breaker::spend_estimate_label(r),
            unpriced_models: r.estimated_models.clone(),
            best_passed: r.best_passed,
            last_passed: r.last_passed,
            transcript_error: r.transcript_error.clone(),
            spend_unreported: r.spend_unreported,
        }),
        daily_usd: daily,
        budgets,
        break_glass: doc
            .ws
            .waivers
            .iter()
            .filter(|w| w.until > n)
            .map(|g| WaiverView { id: g.id, scope: g.scope.clone(), until: time(g.until) })
            .collect(),
        revoked: doc.ws.revoked.clone().map(|(at, by)| RevokedView { at: time(at), by }),
    })
}

impl BreakerStatus {
    /// For a human.
    pub fn render(&self) -> String {
        let mut out = format!(
            "breaker of {} ({} profile): {}{}\n",
            self.workspace,
            self.profile,
            self.position.to_uppercase(),
            if self.require_approval { " + require approval" } else { "" }
        );
        for tr in &self.trips {
            out.push_str(&format!(
                "  trip #{} {} → {}: {} (since {}, cooldown until {}, reset {})\n",
                tr.id, tr.trigger, tr.action, tr.reason, tr.since, tr.cooldown_until, tr.reset
            ));
        }
        match &self.run {
            Some(run) => {
                out.push_str(&format!("run {} (since {}):\n", run.session, run.started));
                for b in &self.budgets {
                    out.push_str(&format!(
                        "  {:<20} {:>14} of {:<12} → {}\n",
                        b.trigger,
                        b.value.map_or("unknown".into(), |v| fmt_value(b.kind, v)),
                        fmt_value(b.kind, b.threshold),
                        b.action
                    ));
                }
                if let Some(label) = &run.usd_estimated {
                    out.push_str(&format!("  USD is {label}: charged at the highest price in the table\n"));
                }
            }
            None => out.push_str("no run recorded in this workspace yet\n"),
        }
        for g in &self.break_glass {
            out.push_str(&format!("break-glass #{} until {}: {}\n", g.id, g.until, g.scope.join(", ")));
        }
        out
    }
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
/// passphrase; the gate still keeps agents from running it). `operator`: the operator whose
/// passphrase was checked (the dashboard), recorded as the actor; else the login user.
pub fn trip(t: &Target, to: &str, reason: &str, operator: Option<&str>) -> Result<String, String> {
    let who = operator.map_or_else(actor, str::to_string);
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
            reason: format!("tripped by hand by {who}: {reason}"),
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
    e.details = Some(json!({ "actor": who, "operator": operator, "reason": reason, "action": action.as_str(),
            "position": state.position.as_str() }));
    t.log().append(e).map_err(|e| format!("tripped, but the audit event failed: {e}"))?;
    Ok(format!("breaker of {} is now {}\n", t.workspace.display(), state.position.as_str()))
}
