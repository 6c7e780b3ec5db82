//! The step journal in the hook and `loopguard undo` (the store itself: `loopguard-journal`).
//!
//! Before an allowed (or asked) call that writes runs, the hook keeps a pre-image of what the
//! call may destroy: a Write/Edit's file, the targets the shell analysis predicts (`rm`, `mv`,
//! `>`, `sed -i`, …). When the host reports the result, the state the step left is recorded, so
//! an undo can tell whether someone else changed the files since. A pre-image that cannot be
//! taken never lets the call run unprotected: it is asked in normal mode, denied unattended.

use loopguard_core::reasons::JOURNAL_UNAVAILABLE;
use loopguard_core::{Decision, ExecutionMode, Reason, RiskLevel, Verdict};
use loopguard_journal::{Journal, JournalError, Limits, StepMeta};
use std::path::{Path, PathBuf};

/// The journal of the workspace `ws_key` in the state home.
pub fn open(state: &Path, ws_key: &str) -> Result<Journal, JournalError> {
    Journal::open(state.join("journal").join(ws_key))
}

/// What one call is, for the journal's listing.
pub struct Call<'a> {
    /// The host's session.
    pub session: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The host's id of the call.
    pub use_id: Option<&'a str>,
    /// The command or file, in short.
    pub summary: String,
    /// How the host runs the agent.
    pub mode: ExecutionMode,
}

/// Keeps the pre-image of what an allowed or asked call may write; where it cannot be kept, the
/// call is asked (normal and the other modes with a human) or denied (unattended).
pub fn before_call(
    decision: Decision,
    journal: Result<Journal, JournalError>,
    call: &Call,
    roots: &[PathBuf],
) -> Decision {
    if decision.verdict() == Verdict::Deny || decision.writes().is_empty() {
        return decision;
    }
    let meta = StepMeta {
        at: crate::effects::now(),
        session: call.session.to_string(),
        tool: call.tool.to_string(),
        call: call.use_id.unwrap_or("").to_string(),
        summary: call.summary.chars().take(200).collect(),
    };
    let recorded = journal.and_then(|j| j.record(meta, decision.writes(), roots, &Limits::default()));
    match recorded {
        Ok(_) => decision,
        Err(e) => {
            let verdict = if call.mode == ExecutionMode::Unattended { Verdict::Deny } else { Verdict::Ask };
            decision.escalate(
                Reason::new(
                    JOURNAL_UNAVAILABLE,
                    verdict,
                    RiskLevel::High,
                    format!("loopguard could not keep what this call may overwrite or delete, so it could not be undone: {e}."),
                )
                .with_remedy("change fewer or smaller files per call, or ask the human to run it."),
            )
        }
    }
}

/// Records the state the call `use_id` left (its PostToolUse). Best effort: an undo without it
/// cannot tell whether someone else changed the files since, and restores anyway only when told.
pub fn after_call(state: &Path, ws_key: &str, use_id: Option<&str>) {
    let Some(id) = use_id.filter(|id| !id.is_empty()) else { return };
    // No journal yet: no step to seal (and none is made for it).
    if !state.join("journal").join(ws_key).join("steps.jsonl").exists() {
        return;
    }
    if let Ok(j) = open(state, ws_key) {
        let _ = j.seal(id);
    }
}

/// Where an undo starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum From {
    /// The last step not undone yet.
    Last,
    /// This step and every later one.
    Step(u64),
    /// The first step of this session and every later one.
    Session(String),
}

/// `loopguard undo --list`: the workspace's steps, oldest first.
pub fn list(state: &Path, ws_key: &str) -> Result<String, String> {
    let dir = state.join("journal").join(ws_key);
    if !dir.join("steps.jsonl").exists() {
        return Ok("no steps in the journal of this workspace.\n".into());
    }
    let views = open(state, ws_key).and_then(|j| j.steps()).map_err(|e| format!("the journal: {e}"))?;
    let mut out = String::new();
    for v in &views {
        let s = &v.step;
        let when = jiff::Timestamp::from_second(s.meta.at).map_or_else(|_| s.meta.at.to_string(), |t| t.to_string());
        let (mut existed, mut absent, mut skipped) = (0, 0, 0);
        for e in &s.entries {
            match e {
                loopguard_journal::Entry::Absent { .. } => absent += 1,
                loopguard_journal::Entry::Skipped { .. } => skipped += 1,
                _ => existed += 1,
            }
        }
        out.push_str(&format!(
            "{:>4}  {}  {:<6} {}{}\n      kept {existed} existing, {absent} new{}; session {}\n",
            s.id,
            when,
            s.meta.tool,
            s.meta.summary.lines().next().unwrap_or(""),
            if v.undone { "  (undone)" } else { "" },
            if skipped > 0 { format!(", {skipped} regenerable not kept") } else { String::new() },
            s.meta.session,
        ));
    }
    if views.is_empty() {
        out.push_str("no steps in the journal of this workspace.\n");
    }
    Ok(out)
}

/// `loopguard undo`: restores the workspace to before the chosen steps, and audits it (a refusal
/// too).
pub fn undo(state: &Path, workspace: &Path, ws_key: &str, from: From, force: bool) -> Result<String, String> {
    let journal = open(state, ws_key).map_err(|e| format!("the journal: {e}"))?;
    let views = journal.steps().map_err(|e| format!("the journal: {e}"))?;
    let live: Vec<&loopguard_journal::StepView> = views.iter().filter(|v| !v.undone).collect();
    let start = match &from {
        From::Last => live.last().map(|v| v.step.id),
        From::Step(n) => live.iter().any(|v| v.step.id >= *n).then_some(*n),
        From::Session(s) => live.iter().find(|v| v.step.meta.session == *s).map(|v| v.step.id),
    };
    let Some(start) = start else {
        return Err(match from {
            From::Session(s) => format!("no step of session `{s}` is left to undo."),
            _ => "there is no step to undo.".into(),
        });
    };
    let result = journal.undo(start, force, crate::effects::now());
    let mut e = loopguard_audit::NewEvent::new("", loopguard_audit::EventKind::Undo);
    e.decision = Some(if result.is_ok() { "allow" } else { "deny" }.into());
    e.details = Some(match &result {
        Ok(r) => serde_json::json!({
            "steps": r.steps, "restored": r.restored.len(), "removed": r.removed.len(),
            "skipped": r.skipped.len(), "force": force,
        }),
        Err(err) => serde_json::json!({ "from": start, "refused": err.to_string(), "force": force }),
    });
    crate::state::audit_log(state, workspace)
        .append(e)
        .map_err(|err| format!("cannot write the audit event of the undo: {err}"))?;
    let r = result.map_err(|e| format!("undo refused: {e}"))?;
    let ids: Vec<String> = r.steps.iter().map(u64::to_string).collect();
    let mut out = format!(
        "undone step(s) {}: {} path(s) restored, {} removed",
        ids.join(", "),
        r.restored.len(),
        r.removed.len()
    );
    if !r.skipped.is_empty() {
        out.push_str(&format!(
            "; {} regenerable folder(s) were not kept and are left to be rebuilt ({})",
            r.skipped.len(),
            r.skipped.iter().take(3).map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ));
    }
    out.push_str(".\n");
    Ok(out)
}
