//! The breaker at run time: metrics gathered from the hook stream, trips decided by
//! `loopguard_core::breaker`, all inside the store transaction of the hook call.
//!
//! - [`before`]: at a PreToolUse, before the gate: read new transcript usage, let auto-reset
//!   trips recover, trip on the metrics (steps so far, time, spend…).
//! - [`after`]: after the gate: count the decision (blocks, secrets, self-protection, denylist),
//!   trip again; those trips take effect on the next call.
//! - [`observe_result`]: at a PostToolUse: test counts and ping-pong edits.
//!
//! New trips revoke grants and credentials, queue their effects (escalation, revert, webhook)
//! in the same transaction, and are carried out by [`crate::effects`] outside the hook's deadline.

use crate::hot::HotTx as Tx;
use crate::model::{Run, RunMetrics, StoreResult, WsDoc, day_of};
use loopguard_core::breaker::{self, BreakerState, Trip, pingpong, testcount};
use loopguard_core::policy::BreakerConfig;
use loopguard_core::reasons::*;
use loopguard_core::{Decision, Verdict};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Most transcript bytes read per call (the rest is read by the next calls).
const MAX_TRANSCRIPT_READ: u64 = 8 << 20;

/// What the gate needs from the breaker, and what the call changed.
#[derive(Debug, Clone)]
pub struct Before {
    /// The workspace's breaker after recovery and new trips.
    pub state: BreakerState,
    /// The run (counters as of this call).
    pub run: Run,
    /// Trips recorded by this call.
    pub new_trips: Vec<Trip>,
    /// Trips cleared by auto reset in this call.
    pub cleared: Vec<Trip>,
    /// The workspace document (saved, with `state`, by `after`).
    pub doc: WsDoc,
    /// Spend aggregates read in `before` (spend does not change within the call): daily USD
    /// and the velocity per window.
    daily_usd: Option<f64>,
    velocity: Vec<(u64, Option<f64>, u64)>,
    /// Models first seen without a price in this call (charged at the table's ceiling): the
    /// hook tells the human once, so they can add them to `[prices]`.
    pub newly_estimated: Vec<String>,
    /// In a fleet: this host's ledger for today as it stood before this call's own turn in
    /// flight was added (what the fleet's budgets are checked against).
    pub fleet_day: Option<crate::fleet::budget::FleetDay>,
    /// In a fleet: the workspace's repository key.
    pub fleet_repo: String,
}

/// In a fleet: where a session's spend is counted.
#[derive(Debug, Clone, Copy)]
struct Ledger<'a> {
    /// The session's repository key (empty: none).
    repo: &'a str,
    /// The reservation size (the floor of a turn's estimate).
    reservation: crate::fleet::budget::Meter,
}

/// The session's repository key, read from the workspace's git configuration at its first call
/// and fixed from then on (renaming the remote later does not move the session out of a
/// repository budget; later calls read no file for it).
fn pinned_repo(run: &mut Run, workspace_path: &Path) -> String {
    run.fleet_repo.get_or_insert_with(|| crate::fleet::budget::repo_key(workspace_path)).clone()
}

/// How a run's USD reads: "estimated (unknown model X, Y)" when some messages were charged at
/// the ceiling price, else `None`.
pub fn spend_estimate_label(run: &Run) -> Option<String> {
    (!run.estimated_models.is_empty()).then(|| format!("estimated (unknown model {})", run.estimated_models.join(", ")))
}

impl Before {
    /// The notice for the human about models charged at the ceiling price, once per run and
    /// model.
    pub fn estimate_notice(&self) -> Option<String> {
        let first = self.newly_estimated.first()?;
        let names = self.newly_estimated.join(", ");
        Some(format!(
            "spend is estimated: no price is known for {names}, so its tokens are charged at the highest \
                 price in the table (an upper bound; budgets may trip early). Add it to the user policy, e.g. \
                 [prices.\"{first}\"] input = … output = … (USD per million tokens)."
        ))
    }

    /// The active trips, in words, for the gate's reason.
    pub fn paused_reason(&self) -> Option<String> {
        if self.state.trips.is_empty() {
            return self.state.is_tripped().then(|| "the breaker was tripped and is recovering".to_string());
        }
        let parts: Vec<String> =
            self.state.trips.iter().map(|t| format!("{} → {}", t.reason, t.action.as_str())).collect();
        Some(parts.join("; "))
    }
}

/// Where a run's spend comes from.
#[derive(Debug, Clone, Copy)]
pub enum Usage<'a> {
    /// A Claude Code transcript (when the host names one).
    Transcript(Option<&'a Path>),
    /// The host reports no spend to hooks: the run's spend budgets cannot be measured.
    NotReported,
}

/// Reads usage the run has not counted yet from the transcript (into the fleet's ledger too,
/// where there is one).
#[allow(clippy::too_many_arguments)]
fn read_usage(
    tx: &Tx,
    run: &mut Run,
    doc: &mut WsDoc,
    cfg: &BreakerConfig,
    transcript: Option<&Path>,
    (now, fleet): (i64, Option<Ledger<'_>>),
    newly_estimated: &mut Vec<String>,
) -> StoreResult<()> {
    let Some(path) = transcript else {
        run.transcript_error = Some("the hook input names no transcript".into());
        return Ok(());
    };
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        // Claude Code creates the transcript with its first message: nothing spent yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && run.transcript_offset == 0 => {
            run.transcript_error = None;
            return Ok(());
        }
        Err(e) => {
            run.transcript_error = Some(format!("cannot read the transcript: {e}"));
            return Ok(());
        }
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let offset = u64::try_from(run.transcript_offset).unwrap_or(0);
    if len < offset {
        run.transcript_error = Some("the transcript shrank; usage cannot be trusted".into());
        return Ok(());
    }
    if len == offset {
        return Ok(());
    }
    let mut buf = Vec::new();
    let read =
        file.seek(SeekFrom::Start(offset)).and_then(|_| (&mut file).take(MAX_TRANSCRIPT_READ).read_to_end(&mut buf));
    if let Err(e) = read {
        run.transcript_error = Some(format!("cannot read the transcript: {e}"));
        return Ok(());
    }
    // Only whole lines: the host may be writing the last one.
    let Some(end) = buf.iter().rposition(|b| *b == b'\n') else {
        if buf.len() as u64 >= MAX_TRANSCRIPT_READ {
            run.transcript_error = Some("a transcript line is longer than 8 MiB".into());
        }
        return Ok(());
    };
    let text = String::from_utf8_lossy(&buf[..end]);
    for line in text.lines() {
        let Some(m) = breaker::usage::parse_line(line, &cfg.prices) else { continue };
        if run.last_msg_id.as_deref() == Some(m.id.as_str()) && !m.id.is_empty() {
            continue;
        }
        run.last_msg_id = Some(m.id.clone());
        let tokens = i64::try_from(m.tokens).unwrap_or(i64::MAX);
        run.tokens = run.tokens.saturating_add(tokens);
        match m.usd {
            Some(usd) => run.usd += usd,
            None => run.usd_unknown = true,
        }
        if m.estimated
            && m.usd.is_some()
            && !run.estimated_models.contains(&m.model)
            && run.estimated_models.len() < crate::model::MAX_ESTIMATED_MODELS
        {
            run.estimated_models.push(m.model.clone());
            newly_estimated.push(m.model.clone());
        }
        doc.add_spend(now, m.usd);
        tx.add_day_spend(&day_of(now), m.usd)?;
        if let Some(f) = fleet {
            tx.fleet_day(&day_of(now), |d| d.add_turn(&run.session, f.repo, m.usd, m.tokens))?;
        }
    }
    run.transcript_offset = i64::try_from(offset + end as u64 + 1).unwrap_or(i64::MAX);
    run.transcript_error = None;
    Ok(())
}

fn metrics(tx: &Tx, cfg: &BreakerConfig, run: &Run, doc: &WsDoc, now: i64) -> StoreResult<RunMetrics> {
    let mut windows: Vec<u64> = cfg.rules.iter().filter_map(|r| r.window).collect();
    windows.sort_unstable();
    windows.dedup();
    let velocity = windows
        .into_iter()
        .map(|w| {
            let (usd, n) = doc.velocity(now, w);
            (w, usd, n)
        })
        .collect();
    Ok(RunMetrics { run: run.clone(), now, daily_usd: tx.daily_usd(&day_of(now))?, velocity })
}

/// Trips whatever the metrics call for; new trips revoke grants and credentials and queue
/// their effects. `spend` reuses the spend aggregates of an earlier `metrics` in the same call.
fn trip(
    tx: &Tx,
    cfg: &BreakerConfig,
    doc: &mut WsDoc,
    run: &Run,
    now: i64,
    workspace_path: &Path,
) -> StoreResult<Vec<Trip>> {
    let m = metrics(tx, cfg, run, doc, now)?;
    trip_on(tx, cfg, doc, &m, now, workspace_path)
}

fn trip_on(
    tx: &Tx,
    cfg: &BreakerConfig,
    doc: &mut WsDoc,
    m: &RunMetrics,
    now: i64,
    workspace_path: &Path,
) -> StoreResult<Vec<Trip>> {
    let run = &m.run;
    let state = &mut doc.breaker;
    let hits = breaker::tripped(&cfg.rules, m);
    let mut new = state.trip(now, &run.session, &cfg.rules, &hits);
    let position = state.position.as_str();
    for t in &mut new {
        let revert = cfg.rules.iter().any(|r| r.trigger == t.trigger && r.action == t.action && r.revert);
        t.id = crate::effects::queue(tx, workspace_path, run, t, revert, cfg.webhook_url.is_some(), position, now)?;
    }
    if let Some(t) = new.last() {
        doc.revoked = Some((now, format!("{} #{}", t.trigger.as_str(), t.id)));
    }
    let state = &mut doc.breaker;
    // The ids were assigned after `state.trip` stored the trips: copy them in.
    for t in &new {
        if let Some(s) = state.trips.iter_mut().find(|s| s.id == 0 && s.trigger == t.trigger && s.action == t.action) {
            s.id = t.id;
        }
    }
    Ok(new)
}

/// Before the gate decides a PreToolUse. In a fleet (`reservation`: its reservation size), the
/// call's answer will be followed by one more model turn: it is recorded in flight for the
/// session.
#[allow(clippy::too_many_arguments)]
pub fn before(
    tx: &Tx,
    cfg: &BreakerConfig,
    workspace: &str,
    workspace_path: &Path,
    session: &str,
    usage: Usage<'_>,
    now: i64,
    reservation: Option<crate::fleet::budget::Meter>,
) -> StoreResult<Before> {
    let mut run = tx.run(workspace, session, now)?;
    let mut doc = tx.ws(workspace)?;
    let mut newly_estimated = Vec::new();
    let repo = reservation.map(|_| pinned_repo(&mut run, workspace_path));
    let fleet = reservation.zip(repo.as_deref()).map(|(reservation, repo)| Ledger { repo, reservation });
    match usage {
        Usage::Transcript(transcript) => {
            read_usage(tx, &mut run, &mut doc, cfg, transcript, (now, fleet), &mut newly_estimated)?;
        }
        Usage::NotReported => {
            run.transcript_error = None;
            run.spend_unreported = true;
        }
    }
    let fleet_day = match fleet {
        Some(f) => Some(tx.fleet_day(&day_of(now), |d| {
            let before = d.clone();
            d.set_in_flight(session, f.repo, d.estimate(f.reservation), now);
            before
        })?),
        None => None,
    };
    let m = metrics(tx, cfg, &run, &doc, now)?;
    let cleared = doc.breaker.recover(now, &cfg.rules, &m, cfg.hysteresis);
    let new_trips = trip_on(tx, cfg, &mut doc, &m, now, workspace_path)?;
    // Saved by `after`, in the same transaction.
    Ok(Before {
        state: doc.breaker.clone(),
        run,
        new_trips,
        cleared,
        doc,
        daily_usd: m.daily_usd,
        velocity: m.velocity,
        newly_estimated,
        fleet_day,
        fleet_repo: repo.unwrap_or_default(),
    })
}

/// Whether a decision was made by the breaker itself (those are not counted as blocks: a paused
/// agent's retries must not stack up new trips).
fn by_breaker(d: &Decision) -> bool {
    d.reasons().iter().any(|r| r.code == BREAKER_STOPPED || r.code == BREAKER_REQUIRE_APPROVAL)
}

/// After the gate decided: counts the decision and trips what it calls for (effective from the
/// next call). Returns the new trips.
pub fn after(
    tx: &Tx,
    cfg: &BreakerConfig,
    b: &mut Before,
    decision: &Decision,
    now: i64,
    workspace_path: &Path,
) -> StoreResult<Vec<Trip>> {
    let run = &mut b.run;
    run.steps = run.steps.saturating_add(1);
    let codes = decision.codes();
    let has = |c: &str| codes.iter().any(|x| x == c);
    if !by_breaker(decision) {
        match decision.verdict() {
            Verdict::Deny => run.consecutive_blocks = run.consecutive_blocks.saturating_add(1),
            Verdict::Allow => run.consecutive_blocks = 0,
            Verdict::Ask => {}
        }
    }
    run.secret_findings = run.secret_findings.saturating_add(i64::from(has(SECRET_IN_ARGUMENTS)));
    run.self_protection = run.self_protection.saturating_add(i64::from(has(SELF_PROTECTION)));
    run.denylist = run.denylist.saturating_add(i64::from(has(PATH_DENYLISTED)));
    run.canary_hits = run.canary_hits.saturating_add(i64::from(has(CANARY_TRIPPED)));
    run.approval_drift = run.approval_drift.saturating_add(i64::from(has(APPROVAL_DRIFT)));
    let m = RunMetrics { run: b.run.clone(), now, daily_usd: b.daily_usd, velocity: b.velocity.clone() };
    let mut new = trip_on(tx, cfg, &mut b.doc, &m, now, workspace_path)?;
    // Say which path: the trip's reason is what the escalation and the next deny show.
    if let Some(r) = decision.reasons().iter().find(|r| r.code == PATH_DENYLISTED) {
        for t in new.iter_mut().filter(|t| t.trigger == breaker::Trigger::Denylist) {
            t.reason = format!("{}: {}", t.reason, r.message.trim_end_matches('.'));
            if let Some(s) = b.doc.breaker.trips.iter_mut().find(|s| s.id == t.id) {
                s.reason = t.reason.clone();
            }
            tx.set_pending_trip(t)?;
        }
    }
    b.state = b.doc.breaker.clone();
    tx.set_ws(&b.run.workspace, &b.doc)?;
    tx.save_run(&b.run)?;
    b.new_trips.extend(new.iter().cloned());
    Ok(new)
}

/// The agent stopped (or the session ended): the usage of its last turns is read now, so the
/// day's spend and the fleet's ledger count it (no tool call may follow to read it), and the
/// session has no turn in flight any more. Trips on it take effect at the next call.
pub fn settle(
    tx: &Tx,
    cfg: &BreakerConfig,
    (workspace, workspace_path): (&str, &Path),
    session: &str,
    usage: Usage<'_>,
    (now, reservation): (i64, Option<crate::fleet::budget::Meter>),
) -> StoreResult<()> {
    let Usage::Transcript(transcript) = usage else { return Ok(()) };
    let mut run = tx.run(workspace, session, now)?;
    let mut doc = tx.ws(workspace)?;
    let repo = reservation.map(|_| pinned_repo(&mut run, workspace_path));
    let fleet = reservation.zip(repo.as_deref()).map(|(reservation, repo)| Ledger { repo, reservation });
    read_usage(tx, &mut run, &mut doc, cfg, transcript, (now, fleet), &mut Vec::new())?;
    if fleet.is_some() {
        tx.fleet_day(&day_of(now), |d| {
            d.in_flight.remove(session);
        })?;
    }
    tx.save_run(&run)?;
    tx.set_ws(workspace, &doc)
}

/// A failed evidence write (audit or escalation) in a run: counted, and tripped on.
pub fn evidence_failed(
    tx: &Tx,
    cfg: &BreakerConfig,
    workspace: &str,
    workspace_path: &Path,
    session: &str,
    now: i64,
) -> StoreResult<Vec<Trip>> {
    let mut run = tx.run(workspace, session, now)?;
    run.evidence_failures = run.evidence_failures.saturating_add(1);
    tx.save_run(&run)?;
    let mut doc = tx.ws(workspace)?;
    let new = trip(tx, cfg, &mut doc, &run, now, workspace_path)?;
    tx.set_ws(workspace, &doc)?;
    Ok(new)
}

/// What a tool result tells the breaker: a test run, edits. `None` when nothing (most results):
/// the caller then touches no state at all.
#[derive(Debug, Clone)]
pub struct Observation {
    tests: Option<testcount::TestRun>,
    edits: Vec<pingpong::Transition>,
}

/// Reads a finished call (pure; no state): the text it printed (test counts) and, for a file
/// change, its edits against the file as it was (`original`, for a whole write).
pub fn observe(action: &loopguard_core::Action, text: Option<&str>, original: Option<&str>) -> Option<Observation> {
    let tests = text.and_then(testcount::parse);
    let edits = pingpong::transitions(action, original);
    (tests.is_some() || !edits.is_empty()).then_some(Observation { tests, edits })
}

/// Records an observation in the run: test counts, ping-pong. Returns new trips.
pub fn observe_result(
    tx: &Tx,
    cfg: &BreakerConfig,
    workspace: &str,
    workspace_path: &Path,
    session: &str,
    obs: Observation,
    now: i64,
) -> StoreResult<Vec<Trip>> {
    let Observation { tests, edits } = obs;
    let mut run = tx.run(workspace, session, now)?;
    if let Some(t) = tests {
        let passed = i64::try_from(t.passed).unwrap_or(i64::MAX);
        run.last_passed = Some(passed);
        run.last_failed = Some(i64::try_from(t.failed).unwrap_or(i64::MAX));
        run.best_passed = Some(run.best_passed.map_or(passed, |b| b.max(passed)));
        run.test_runs = run.test_runs.saturating_add(1);
    }
    let failing = run.last_failed.is_some_and(|f| f > 0);
    for e in edits {
        let n = tx.edit(&run, &e.file, &e.region, &e.to, failing)?;
        run.ping_pong = run.ping_pong.max(n);
    }
    tx.save_run(&run)?;
    let mut doc = tx.ws(workspace)?;
    let new = trip(tx, cfg, &mut doc, &run, now, workspace_path)?;
    tx.set_ws(workspace, &doc)?;
    Ok(new)
}
