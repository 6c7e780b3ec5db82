//! What a trip does besides capping the breaker, carried out outside the hook's deadline by a
//! detached `loopguard breaker flush` (one at a time, under a lock):
//! - on `stop` with `revert`: the worktree's changes since the run's base are moved out of the
//!   way without losing them (a named stash, kept under `refs/loopguard/trip-N/worktree`, and the
//!   run's commits under `refs/loopguard/trip-N/head` before the branch goes back to the base);
//! - on `stop` or a manual-reset trip: an escalation in STATE.md and loop-run-log.md;
//! - webhook events (`circuit_breaker.triggered`, `agent.paused`), HMAC-SHA256 signed, retried
//!   with exponential backoff; failures are audited and never undo the trip.
//!
//! The effects are queued in the same transaction as the trip, so a crash loses none of them.

use crate::model::Run;
use crate::state::{Env, audit_log};
use crate::store::{Effect, Store, StoreResult, Tx};
use hmac::{KeyInit, Mac};
use loopguard_audit::{EventKind, NewEvent};
use loopguard_core::breaker::{ResetRule, Trip, TripAction, fmt_value};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Delivery attempts per webhook event.
pub const MAX_ATTEMPTS: i64 = 5;

/// Unix seconds now. Debug builds (the test binaries) take `LOOPGUARD_TEST_NOW` as an injected
/// clock so cooldowns are tested without sleeping; release builds ignore it.
pub fn now() -> i64 {
    #[cfg(debug_assertions)]
    if let Some(t) = std::env::var("LOOPGUARD_TEST_NOW").ok().and_then(|v| v.parse().ok()) {
        return t;
    }
    jiff::Timestamp::now().as_second()
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

fn rfc3339(t: i64) -> String {
    jiff::Timestamp::from_second(t).map_or_else(|_| t.to_string(), |ts| ts.to_string())
}

/// Records a trip's effects in the trip's own transaction (the hot state); the flush queues
/// and carries them out. Returns the trip id.
#[allow(clippy::too_many_arguments)] // the trip's context, all needed for its record
pub fn queue(
    tx: &crate::hot::HotTx,
    workspace_path: &Path,
    run: &Run,
    trip: &Trip,
    revert: bool,
    webhook: bool,
    position: &str,
    _now: i64,
) -> StoreResult<i64> {
    tx.add_pending(crate::model::Pending {
        trip: trip.clone(),
        workspace_path: workspace_path.to_string_lossy().into_owned(),
        session: run.session.clone(),
        revert,
        base_ref: run.base_ref.clone(),
        webhook,
        position: position.to_string(),
    })
}

/// Moves recorded trips from the hot state into the effect and webhook queues (idempotent: a
/// trip already queued is not queued again, so a crash between the two steps loses nothing).
fn collect(state_home: &Path, store: &mut Store) -> Result<(), String> {
    for key in crate::hot::workspaces(state_home)? {
        crate::hot::write(state_home, &key, |hot| {
            let pending = hot.doc().pending.clone();
            if pending.is_empty() {
                return Ok(());
            }
            let n = now();
            store.write(|tx| {
                for p in &pending {
                    if tx.add_effect(&key, p, n)? && p.webhook {
                        enqueue_events(tx, &key, p, n)?;
                    }
                }
                Ok(())
            })?;
            hot.doc().pending.clear();
            Ok(())
        })?;
    }
    Ok(())
}

fn enqueue_events(tx: &Tx<'_>, key: &str, p: &crate::model::Pending, now: i64) -> StoreResult<()> {
    let trip = &p.trip;
    let mut events = vec!["circuit_breaker.triggered"];
    if trip.action == TripAction::Stop {
        events.push("agent.paused");
    }
    for event in events {
        let body = json!({
            "event": event,
            "breaker": trip.trigger.as_str(),
            "action": trip.action.as_str(),
            "value": trip.value,
            "threshold": trip.threshold,
            "state": p.position,
            "reason": trip.reason,
            "time": rfc3339(trip.at),
            "trip_id": trip.id,
            "workspace": p.workspace_path,
            "session": p.session,
        });
        tx.enqueue(key, event, &body.to_string(), now.saturating_mul(1000))?;
    }
    Ok(())
}

/// Starts a detached `loopguard breaker flush` for the state home (the hook does not wait).
pub fn spawn_flush(state_home: &Path) {
    use std::os::unix::process::CommandExt;
    let Ok(exe) = std::env::current_exe() else { return };
    let _ = Command::new(exe)
        .args(["breaker", "flush", "--quiet"])
        .env("LOOPGUARD_HOME", state_home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
}

fn git(ws: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(ws)
        .args(["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// The commit a workspace is at, if it is a git work tree with commits.
pub fn head_of(ws: &Path) -> Option<String> {
    git(ws, &["rev-parse", "--verify", "-q", "HEAD"]).ok().filter(|s| !s.is_empty())
}

/// What a revert did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Reverted {
    /// The ref holding the stashed worktree changes, if there were any.
    pub worktree_ref: Option<String>,
    /// The stash message (the entry is also in `git stash list`).
    pub stash_message: Option<String>,
    /// The ref holding the run's commits, if HEAD had moved past the base.
    pub head_ref: Option<String>,
    /// The commit the worktree is back at.
    pub base: Option<String>,
}

/// Moves the worktree back to the run's base, keeping everything: uncommitted and untracked
/// changes go to a named stash (also kept under a ref, so dropping the stash loses nothing), and
/// commits made since the base stay reachable from a backup ref.
pub fn revert(ws: &Path, trip_id: i64, trigger: &str, base: Option<&str>) -> Result<Reverted, String> {
    git(ws, &["rev-parse", "--is-inside-work-tree"])
        .map_err(|_| "not a git work tree: nothing reverted".to_string())?;
    let head = head_of(ws).ok_or("the repository has no commits: nothing reverted")?;
    let mut r = Reverted::default();
    let status = git(ws, &["status", "--porcelain", "--untracked-files=all"])?;
    if !status.is_empty() {
        let msg = format!("loopguard: breaker trip #{trip_id} ({trigger}) — worktree changes set aside");
        git(ws, &["stash", "push", "--include-untracked", "-m", &msg])?;
        let stash = git(ws, &["rev-parse", "--verify", "refs/stash"])?;
        let name = format!("refs/loopguard/trip-{trip_id}/worktree");
        git(ws, &["update-ref", &name, &stash])?;
        r.worktree_ref = Some(name);
        r.stash_message = Some(msg);
    }
    let base = base.unwrap_or(&head).to_string();
    if base != head {
        let name = format!("refs/loopguard/trip-{trip_id}/head");
        git(ws, &["update-ref", &name, &head])?;
        // The worktree is clean now (stashed above), and the commits are kept by the ref.
        git(ws, &["reset", "--hard", "-q", &base])?;
        r.head_ref = Some(name);
    }
    r.base = Some(base);
    Ok(r)
}

fn needs_human(t: &Trip) -> bool {
    t.action == TripAction::Stop || t.reset == ResetRule::Manual
}

/// Carries out one effect: revert, escalation, audit. Returns the result recorded.
fn carry_out(state_home: &Path, e: &Effect) -> serde_json::Value {
    let ws = PathBuf::from(&e.workspace_path);
    let t = &e.trip;
    let reverted = (t.action == TripAction::Stop && e.revert)
        .then(|| revert(&ws, t.id, t.trigger.as_str(), e.base_ref.as_deref()));
    let mut escalation_error = None;
    if needs_human(t) {
        let mut fields = vec![
            ("breaker".to_string(), t.trigger.as_str().to_string()),
            ("value".to_string(), t.value.map_or("cannot be computed".into(), |v| fmt_value(t.trigger, v))),
            ("threshold".to_string(), fmt_value(t.trigger, t.threshold)),
            ("action".to_string(), t.action.as_str().to_string()),
            ("session".to_string(), e.session.clone()),
            ("trip".to_string(), format!("#{}", t.id)),
        ];
        match &reverted {
            Some(Ok(r)) => {
                if let Some(w) = &r.worktree_ref {
                    fields.push((
                        "worktree changes kept in".into(),
                        format!("{w} (stash: {})", r.stash_message.clone().unwrap_or_default()),
                    ));
                }
                if let Some(h) = &r.head_ref {
                    fields.push(("run commits kept in".into(), h.clone()));
                }
                fields.push(("worktree reset to".into(), r.base.clone().unwrap_or_default()));
            }
            Some(Err(err)) => fields.push(("revert".into(), format!("failed: {err}"))),
            None => {}
        }
        let title = match t.action {
            TripAction::Stop => format!("circuit breaker stopped the run ({})", t.trigger.as_str()),
            a => format!("circuit breaker tripped to {} ({})", a.as_str(), t.trigger.as_str()),
        };
        let restore = if reverted.as_ref().is_some_and(|r| r.is_ok()) {
            " To get the agent's work back: `git stash apply <worktree ref>` and/or `git reset --hard <commits ref>`."
        } else {
            ""
        };
        let esc = crate::escalation::Escalation {
            time: rfc3339(t.at),
            title,
            kind: "FAILURE".into(),
            fields,
            todo: format!(
                "{}. Review the run, then reset the breaker with `loopguard breaker reset --operator NAME --reason \"…\"`.{restore}",
                t.reason
            ),
        };
        if let Err(err) = crate::escalation::escalate(state_home, &ws, &esc) {
            escalation_error = Some(err.to_string());
        }
    }
    let result = json!({
        "revert": reverted.as_ref().map(|r| match r { Ok(r) => json!(r), Err(e) => json!({ "error": e }) }),
        "escalated": needs_human(t) && escalation_error.is_none(),
        "escalation_error": escalation_error,
    });
    let mut ev = NewEvent::new(&e.session, EventKind::BreakerEffects);
    ev.reasons = vec![t.trigger.as_str().to_string()];
    ev.details = Some(json!({ "trip": t.id, "result": result }));
    let _ = audit_log(state_home, &ws).append(ev);
    result
}

/// The webhook signing key (`<state home>/webhook.key`, 32 random bytes as hex, mode 0600),
/// created on first use. Share it with the receiver; the gate keeps agents out of the state home.
pub fn webhook_key(state_home: &Path) -> Result<String, String> {
    let path = state_home.join("webhook.key");
    match std::fs::read_to_string(&path) {
        Ok(k) if !k.trim().is_empty() => return Ok(k.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("webhook key: {e}")),
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("webhook key: no randomness: {e}"))?;
    let key = loopguard_audit::hex(&bytes);
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("webhook key: {e}"))?;
    f.write_all(key.as_bytes()).map_err(|e| format!("webhook key: {e}"))?;
    Ok(key)
}

/// `sha256=<hex HMAC-SHA256 of body>`.
pub fn sign(key: &str, body: &str) -> Result<String, String> {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).map_err(|e| e.to_string())?;
    mac.update(body.as_bytes());
    Ok(format!("sha256={}", loopguard_audit::hex(&mac.finalize().into_bytes())))
}

/// The delay before attempt `attempts + 1`: base × 2^attempts.
pub fn backoff_ms(base_ms: i64, attempts: i64) -> i64 {
    base_ms.saturating_mul(1i64 << attempts.clamp(0, 20))
}

fn post(url: &str, key: &str, event: &str, id: i64, body: &str) -> Result<(), String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(5)))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let resp = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("User-Agent", concat!("loopguard/", env!("CARGO_PKG_VERSION")))
        .header("X-Loopguard-Event", event)
        .header("X-Loopguard-Delivery", id.to_string())
        .header("X-Loopguard-Signature", sign(key, body)?)
        .send(body)
        .map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    if (200..300).contains(&status) { Ok(()) } else { Err(format!("HTTP {status}")) }
}

/// Carries out every pending effect and delivers due webhook events, waiting for retries until
/// each event is delivered or out of attempts. One flush at a time (a lock in the state home).
pub fn flush(env: &Env, url: Option<&str>, backoff_base_ms: i64) -> Result<FlushReport, String> {
    let state_home = env.state_home()?;
    loopguard_audit::create_private_dir(&state_home.join("locks")).map_err(|e| e.to_string())?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(state_home.join("locks/effects.lock"))
        .map_err(|e| format!("effects lock: {e}"))?;
    lock.lock().map_err(|e| format!("effects lock: {e}"))?;
    let mut store = Store::open(&state_home, Duration::from_secs(10))?;
    collect(&state_home, &mut store)?;
    let mut report = FlushReport::default();
    for e in store.read(|tx| tx.pending_effects())? {
        let result = carry_out(&state_home, &e);
        store.write(|tx| tx.finish_effect(e.id, now(), &result.to_string()))?;
        report.effects += 1;
    }
    let key = match url {
        Some(_) => Some(webhook_key(&state_home)?),
        None => None,
    };
    loop {
        let due = store.read(|tx| tx.due(now_ms(), MAX_ATTEMPTS))?;
        for (id, workspace_key, event, body, attempts) in due {
            let outcome = match (url, &key) {
                (Some(u), Some(k)) => post(u, k, &event, id, &body),
                _ => Err("no webhook_url in the policy".to_string()),
            };
            let next = now_ms().saturating_add(backoff_ms(backoff_base_ms, attempts));
            store.write(|tx| tx.attempted(id, now_ms(), outcome.as_ref().err().map(String::as_str), next))?;
            match outcome {
                Ok(()) => report.delivered += 1,
                Err(err) => {
                    let last = attempts + 1 >= MAX_ATTEMPTS;
                    if last {
                        report.failed += 1;
                    }
                    // Audited in the workspace's log: the body names the workspace path.
                    let ws = serde_json::from_str::<serde_json::Value>(&body)
                        .ok()
                        .and_then(|v| v.get("workspace").and_then(|w| w.as_str()).map(PathBuf::from));
                    if let Some(ws) = ws {
                        let mut ev = NewEvent::new("", EventKind::WebhookFailed);
                        ev.details = Some(json!({
                            "event": event, "delivery": id, "attempt": attempts + 1, "error": err,
                            "final": last, "workspace_key": workspace_key,
                        }));
                        let _ = audit_log(&state_home, &ws).append(ev);
                    }
                }
            }
        }
        match store.read(|tx| tx.next_due(MAX_ATTEMPTS))? {
            Some(at) => {
                let wait = at.saturating_sub(now_ms()).clamp(0, 60_000);
                std::thread::sleep(Duration::from_millis(u64::try_from(wait).unwrap_or(0)));
            }
            None => break,
        }
    }
    let _ = lock.unlock();
    Ok(report)
}

/// What a flush did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlushReport {
    /// Trip effects carried out.
    pub effects: usize,
    /// Webhook events delivered.
    pub delivered: usize,
    /// Webhook events given up on.
    pub failed: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hmac_sha256() {
        // RFC 4231 test case 2.
        let mac = sign("Jefe", "what do ya want for nothing?").unwrap();
        assert_eq!(mac, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn backoff_doubles() {
        assert_eq!((0..5).map(|a| backoff_ms(1000, a)).collect::<Vec<_>>(), [1000, 2000, 4000, 8000, 16000]);
    }
}
