//! The human side of the breaker: `loopguard breaker status|check|reset|trip|flush`,
//! `loopguard operator init` and `loopguard break-glass`. Resets, operator changes and
//! break-glass need an operator's passphrase; the gate also denies these subcommands to agents.

use crate::effects::{self, now};
use crate::hot;
use crate::model::{RunMetrics, day_of};
use crate::operator::{self, Secrets};
use crate::state::{Env, audit_log, workspace_key};
use crate::store::{BreakGlass, Store};
use loopguard_audit::{AuditLog, EventKind, NewEvent};
use loopguard_core::Policy;
use loopguard_core::breaker::{BreakerState, Metrics, ResetRule, Trigger, TripAction, fmt_value};
use loopguard_core::reasons::BACKSTOPS;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The workspace a command run in `cwd` is about, and its key.
pub struct Target {
    /// The workspace root.
    pub workspace: PathBuf,
    /// Its key in the store.
    pub key: String,
    /// The state home.
    pub state: PathBuf,
}

impl Target {
    /// The workspace of `cwd`.
    pub fn of(env: &Env, cwd: &Path) -> Result<Target, String> {
        let workspace = env.workspace_for(cwd);
        Ok(Target { key: workspace_key(&workspace), workspace, state: env.state_home()? })
    }

    pub(crate) fn store(&self) -> Result<Store, String> {
        Store::open(&self.state, Duration::from_secs(10))
    }

    pub(crate) fn log(&self) -> AuditLog {
        audit_log(&self.state, &self.workspace)
    }
}

fn policy(env: &Env, t: &Target) -> Result<Policy, String> {
    crate::effective::load(env, &t.workspace).map_err(|e| format!("the policy does not load: {e}"))
}

fn time(t: i64) -> String {
    jiff::Timestamp::from_second(t).map_or_else(|_| t.to_string(), |ts| ts.to_string())
}

fn actor() -> String {
    std::env::var("USER").unwrap_or_else(|_| "unknown".into())
}

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
        })),
        "daily_usd": daily,
        "budgets": budgets,
        "break_glass": bg.iter().map(|g| json!({"id": g.id, "scope": g.scope, "until": time(g.until)})).collect::<Vec<_>>(),
        "revoked": revoked.map(|(at, trip)| json!({"at": time(at), "by": trip})),
    });
    if as_json {
        return Ok((format!("{v:#}\n"), tripped));
    }
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
    if let Some(m) = &metrics {
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
    for g in &bg {
        out.push_str(&format!("break-glass #{} until {}: {}\n", g.id, time(g.until), g.scope.join(", ")));
    }
    Ok((out, tripped))
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

/// `operator init --name NAME [--by OPERATOR]`: the first operator, or another one added by an
/// existing operator.
pub fn operator_init(t: &Target, name: &str, by: Option<&str>, secrets: &mut Secrets) -> Result<String, String> {
    if name.is_empty() || name.len() > 64 || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        return Err("operator names are 1-64 letters, digits, `-`, `_` or `.`".into());
    }
    let mut store = t.store()?;
    let count = store.read(|tx| tx.operator_count())?;
    let created_by = match (count, by) {
        (0, _) => "init".to_string(),
        (_, None) => return Err("operators exist already: an existing operator adds another with --by NAME".into()),
        (_, Some(b)) => {
            operator::authenticate(&mut store, &[b.to_string()], secrets, &format!("add operator {name}"))?;
            b.to_string()
        }
    };
    let pass = secrets.get(name, "new passphrase")?;
    if matches!(secrets, Secrets::Terminal) {
        let again = secrets.get(name, "the new passphrase again")?;
        if again != pass {
            return Err("the passphrases differ".into());
        }
    }
    let phc = operator::hash(&pass)?;
    store.write(|tx| tx.add_operator(name, &phc, now(), &created_by))?;
    let mut e = NewEvent::new("", EventKind::OperatorAdded);
    e.details = Some(json!({ "operator": name, "by": created_by, "actor": actor() }));
    let _ = t.log().append(e);
    Ok(format!("operator `{name}` added\n"))
}

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
    if reason.trim().is_empty() {
        return Err("--reason must say why the glass is broken".into());
    }
    if scope.is_empty() {
        return Err("--scope names what is waived: rule:CODE or path:GLOB (repeatable)".into());
    }
    for s in scope {
        match s.split_once(':') {
            Some(("rule", code)) if BACKSTOPS.contains(&code) => {
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
    Ok(format!("break-glass #{id} in force until {} for {}\n", time(bg.until), scope.join(", ")))
}

/// `grant add`: a human pre-authorises a tool on a resource in this workspace (or one session),
/// for a while. Needs an operator's passphrase. Over-broad grants are refused unless `broad`.
#[allow(clippy::too_many_arguments)] // one per flag
pub fn grant_add(
    t: &Target,
    operator: &str,
    tool: &str,
    resource: Option<&str>,
    duration: Option<&str>,
    session: Option<&str>,
    reason: &str,
    broad: bool,
    secrets: &mut Secrets,
) -> Result<String, String> {
    use loopguard_core::permissions::{GrantScope, PermissionGrant};
    if reason.trim().is_empty() {
        return Err("--reason must say why".into());
    }
    for (what, g) in [("--tool", Some(tool)), ("--resource", resource)] {
        if let Some(g) = g {
            globset::Glob::new(g).map_err(|e| format!("{what} `{g}` is not a valid glob: {e}"))?;
        }
    }
    let secs = duration
        .map(|d| {
            loopguard_core::policy::parse_duration(d).ok_or_else(|| format!("--for `{d}` is not a duration like 2h"))
        })
        .transpose()?;
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "grant")?;
    drop(store);
    let n = now();
    let mut g = PermissionGrant {
        id: 0,
        tool: tool.to_string(),
        resource: resource.map(str::to_string),
        scope: session.map_or(GrantScope::Repo, |s| GrantScope::Session(s.to_string())),
        expires_at: secs.map(|s| n.saturating_add(i64::try_from(s).unwrap_or(i64::MAX))),
        created_at: n,
        created_by: operator.to_string(),
        reason: reason.to_string(),
    };
    if g.is_over_broad() && !broad {
        return Err(format!(
            "a grant of `{tool}` on any resource allows everything the gate would ask about; narrow it, or pass --allow-broad"
        ));
    }
    let id = hot::write(&t.state, &t.key, |tx| {
        let mut doc = tx.doc();
        doc.ws.next_grant += 1;
        g.id = doc.ws.next_grant;
        doc.ws.grants.retain(|x| x.expires_at.is_none_or(|e| e > n));
        doc.ws.grants.push(g.clone());
        Ok(g.id)
    })?;
    let mut e = NewEvent::new("", EventKind::GrantAdded);
    e.details = Some(json!({ "grant": g, "actor": actor() }));
    t.log().append(e).map_err(|e| format!("grant #{id} made, but the audit event failed: {e}"))?;
    let warn = if g.is_over_broad() { " (over-broad: it allows everything the gate would ask about)" } else { "" };
    Ok(format!(
        "grant #{id}: {tool}{} {}{warn}\n",
        resource.map(|r| format!(" on {r}")).unwrap_or_default(),
        g.expires_at.map_or("until revoked".to_string(), |e| format!("until {}", time(e)))
    ))
}

/// `grant list`: the grants in force here (policy and workspace).
pub fn grant_list(env: &Env, t: &Target) -> Result<String, String> {
    let policy = policy(env, t)?;
    let doc = hot::read(&t.state, &t.key)?;
    let n = now();
    let store = loopguard_core::permissions::PermissionStore {
        grants: policy.grants().iter().chain(&doc.ws.grants).cloned().collect(),
        revoked_at: doc.ws.revoked.as_ref().map(|r| r.0),
    };
    let mut out = String::new();
    for g in &store.grants {
        let state = if g.expires_at.is_some_and(|e| n >= e) {
            "expired".to_string()
        } else if g.is_temporary() && store.revoked_at.is_some_and(|r| g.created_at <= r) {
            "revoked by a breaker trip".to_string()
        } else {
            g.expires_at.map_or("in force".to_string(), |e| format!("in force until {}", time(e)))
        };
        out.push_str(&format!(
            "#{} {}{} [{:?}] by {}: {} — {state}\n",
            g.id,
            g.tool,
            g.resource.as_deref().map(|r| format!(" on {r}")).unwrap_or_default(),
            g.scope,
            g.created_by,
            g.reason
        ));
    }
    for w in store.warnings() {
        out.push_str(&format!("warning: {w}\n"));
    }
    if out.is_empty() {
        out.push_str("no grants\n");
    }
    Ok(out)
}

/// `grant revoke ID`: removes a workspace grant (operator only).
pub fn grant_revoke(t: &Target, operator: &str, id: i64, secrets: &mut Secrets) -> Result<String, String> {
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "grant revoke")?;
    drop(store);
    let removed = hot::write(&t.state, &t.key, |tx| {
        let mut doc = tx.doc();
        let before = doc.ws.grants.len();
        doc.ws.grants.retain(|g| g.id != id);
        Ok(before != doc.ws.grants.len())
    })?;
    if !removed {
        return Err(format!("no workspace grant #{id} (policy grants are removed from the policy file)"));
    }
    let mut e = NewEvent::new("", EventKind::GrantRevoked);
    e.details = Some(json!({ "grant": id, "operator": operator, "actor": actor() }));
    let _ = t.log().append(e);
    Ok(format!("grant #{id} revoked\n"))
}

/// `yolo on`: for a while, the gate's asks are approved automatically here (operator only, always
/// with an expiry no longer than `break_glass.max`). Denies and backstops still hold.
pub fn yolo_on(
    env: &Env,
    t: &Target,
    operator: &str,
    duration: &str,
    reason: &str,
    secrets: &mut Secrets,
) -> Result<String, String> {
    let policy = policy(env, t)?;
    let max = policy.breaker().break_glass_max;
    let secs = loopguard_core::policy::parse_duration(duration)
        .ok_or_else(|| format!("--for `{duration}` is not a duration like 30m"))?;
    if secs == 0 || secs > max {
        return Err(format!("--for must be more than 0 and at most {max} s (break_glass.max)"));
    }
    if reason.trim().is_empty() {
        return Err("--reason must say why".into());
    }
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "yolo on")?;
    drop(store);
    let n = now();
    let y = crate::model::Yolo {
        operator: operator.to_string(),
        reason: reason.to_string(),
        from: n,
        until: n.saturating_add(i64::try_from(secs).unwrap_or(0)),
        ..Default::default()
    };
    let previous = hot::write(&t.state, &t.key, |tx| Ok(tx.doc().ws.yolo.replace(y.clone())))?;
    if let Some(p) = previous {
        let mut e = NewEvent::new("", EventKind::YoloSummary);
        e.details = Some(p.audit_summary(n, "replaced"));
        let _ = t.log().append(e);
    }
    let mut e = NewEvent::new("", EventKind::YoloOn);
    e.details = Some(json!({ "operator": operator, "reason": reason, "until": time(y.until), "actor": actor() }));
    t.log().append(e).map_err(|e| format!("yolo is on, but the audit event failed: {e}"))?;
    Ok(format!(
        "yolo on in {} until {} (asks approved; denies and backstops hold)\n",
        t.workspace.display(),
        time(y.until)
    ))
}

/// `yolo off`: ends the period now and audits its summary. Switching off needs no passphrase.
pub fn yolo_off(t: &Target) -> Result<String, String> {
    let n = now();
    let ended = hot::write(&t.state, &t.key, |tx| Ok(tx.doc().ws.yolo.take()))?;
    match ended {
        None => Ok("yolo was not on\n".into()),
        Some(y) => {
            let mut e = NewEvent::new("", EventKind::YoloSummary);
            e.details = Some(y.audit_summary(n, if y.until <= n { "expired" } else { "switched off" }));
            t.log().append(e).map_err(|e| format!("yolo is off, but the summary failed: {e}"))?;
            Ok(format!("yolo off; it approved {} call(s)\n", y.approved))
        }
    }
}

/// `loopguard approve`: records the control plane's hashes as approved (operator).
pub fn approve(env: &Env, t: &Target, operator: &str, reason: &str, secrets: &mut Secrets) -> Result<String, String> {
    if reason.trim().is_empty() {
        return Err("--reason must say what was reviewed".into());
    }
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "approve")?;
    drop(store);
    let plane = crate::approval::Plane {
        workspace: t.workspace.clone(),
        home: env.home.clone(),
        user_policy: env.user_policy(),
        exe: approved_exe(env),
    };
    let a = crate::approval::approve(&t.state, &plane, operator, reason, now())?;
    let mut e = NewEvent::new("", EventKind::Approved);
    e.details = Some(serde_json::json!({ "operator": operator, "reason": reason, "groups": a.groups }));
    t.log().append(e).map_err(|e| format!("approved, but the audit log refused the record: {e}"))?;
    let mut out = format!("approved {} files of {}:\n", a.entries.len(), t.workspace.display());
    for (g, h) in &a.groups {
        out.push_str(&format!("  {g:<14} {h}\n"));
    }
    out.push_str("a tripped approval_drift breaker still needs `loopguard breaker reset`.\n");
    Ok(out)
}

/// The harness binary approved: this one, which must be the one the hook runs (`loopguard
/// install` registers the binary it is run from); another copy shows as drift at once.
fn approved_exe(_env: &Env) -> Option<PathBuf> {
    std::env::current_exe().ok()
}

/// `loopguard approve --status`.
pub fn approval_status(env: &Env, t: &Target) -> Result<(String, bool), String> {
    let Some(a) = crate::approval::load(&t.state, &t.workspace)? else {
        return Ok(("not approved: the control plane of this worktree is not checked\n".into(), true));
    };
    let plane = crate::approval::Plane {
        workspace: t.workspace.clone(),
        home: env.home.clone(),
        user_policy: env.user_policy(),
        exe: approved_exe(env),
    };
    Ok(match crate::approval::check(&t.state, &plane)? {
        None => (format!("approved by {} at {}: unchanged\n", a.operator, time(a.approved_at)), true),
        Some(d) => (format!("DRIFT since the approval by {}: {}\n", a.operator, d.changes.join(", ")), false),
    })
}
