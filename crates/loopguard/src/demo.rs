//! `loopguard demo`: replays a recorded Claude Code session (examples/demo-session.jsonl, real
//! hook-event format) through the real hook handler, with a throwaway workspace and state home,
//! then verifies the audit log and shows that tampering with it is caught.

use crate::hosts::claude_code;
use crate::state::{Env, audit_log};
use loopguard_audit::AuditEvent;
use serde_json::Value;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The recorded session.
pub const SESSION: &str = include_str!("../../../examples/demo-session.jsonl");

/// A real RustSec advisory (smallvec, CVSS 9.8) in OSV form, for the demo's dependency step.
const DEMO_ADVISORY: &str = include_str!("../tests/fixtures/advisories/RUSTSEC-2021-0003.json");

/// One line describing an audit event (used by `audit tail` too).
pub fn describe_event(ev: &AuditEvent) -> String {
    let mut s = format!("#{:<4} {} {:?}", ev.seq, ev.time.get(..19).unwrap_or(&ev.time), ev.kind);
    if let Some(t) = &ev.tool {
        s.push_str(&format!(" {t}"));
    }
    if let Some(d) = &ev.decision {
        s.push_str(&format!(" → {d}"));
    }
    if !ev.reasons.is_empty() {
        s.push_str(&format!(" [{}]", ev.reasons.join(", ")));
    }
    if ev.details.as_ref().and_then(|d| d.get("recovered")).and_then(Value::as_bool) == Some(true) {
        s.push_str(" (recovered: session left open)");
    }
    s
}

fn summary(v: &Value) -> String {
    let input = &v["tool_input"];
    let text = input["command"]
        .as_str()
        .or_else(|| input["file_path"].as_str())
        .map(String::from)
        .unwrap_or_else(|| input.to_string());
    let mut t: String = text.chars().take(70).collect();
    if text.chars().count() > 70 {
        t.push('…');
    }
    t
}

/// Runs the demo, writing to `out`. Returns whether the audit log verified (and the tampered
/// copy did not).
pub fn run(out: &mut impl Write) -> io::Result<bool> {
    let tmp = tempfile::tempdir()?;
    let (home, project, state, env) = setup(tmp.path())?;
    let (project_s, home_s) = (project.display().to_string(), home.display().to_string());
    writeln!(out, "loopguard demo: replaying a recorded Claude Code session through the gate")?;
    writeln!(out, "workspace {project_s}\nstate     {}\n", state.display())?;
    let (mut allowed, mut stopped) = (0, 0);
    for (i, line) in SESSION.lines().enumerate() {
        // Through placeholders, so a replacement is never replaced again.
        let line = line
            .replace("/home/dev/project", "\u{1}P")
            .replace("/home/dev", "\u{1}H")
            .replace("\u{1}P", &project_s)
            .replace("\u{1}H", &home_s);
        let v: Value = serde_json::from_str(&line).map_err(io::Error::other)?;
        let event = v["hook_event_name"].as_str().unwrap_or("?").to_string();
        let outcome = claude_code::handle(line.as_bytes(), &env);
        if event != "PreToolUse" {
            let status = if outcome.exit == crate::hosts::Exit::Proceed { "recorded" } else { "FAILED" };
            writeln!(out, "{:>2}. {event:<18} {status}", i + 1)?;
            continue;
        }
        let tool = v["tool_name"].as_str().unwrap_or("?");
        let what = summary(&v).replace(&project_s, "<workspace>").replace(&home_s, "~");
        writeln!(out, "{:>2}. {event:<18} {tool}: {what}", i + 1)?;
        if outcome.stdout.is_empty() {
            allowed += 1;
            writeln!(out, "      ALLOW")?;
            continue;
        }
        let answer: Value = serde_json::from_str(outcome.stdout.trim()).map_err(io::Error::other)?;
        let hso = &answer["hookSpecificOutput"];
        if hso.is_null() || hso["permissionDecision"] == "allow" {
            allowed += 1;
            let how = if hso["updatedInput"].is_null() { "" } else { ", inside the kernel sandbox (loopguard exec)" };
            writeln!(out, "      ALLOW{how}")?;
            continue;
        }
        stopped += 1;
        let verdict = hso["permissionDecision"].as_str().unwrap_or("?").to_uppercase();
        let reason = hso["permissionDecisionReason"].as_str().unwrap_or("");
        writeln!(out, "      {verdict}")?;
        for l in reason.lines().skip(1) {
            writeln!(out, "      {}", l.replace(&project_s, "<workspace>").replace(&home_s, "~"))?;
        }
    }
    // What the trips set in motion (escalation, revert), carried out here rather than in the
    // background so the demo can show it.
    crate::effects::flush(&env, None, 1000).map_err(io::Error::other)?;
    if let Ok(text) = std::fs::read_to_string(project.join("STATE.md")) {
        writeln!(out, "\nSTATE.md now tells a human what happened:")?;
        for l in text.lines() {
            writeln!(out, "  | {}", l.replace(&project_s, "<workspace>").replace(&home_s, "~"))?;
        }
    }
    writeln!(out, "\n{allowed} calls allowed, {stopped} stopped.")?;
    show_evidence(out, &state, &project, tmp.path())
}

/// The demo's world under `root`: a home, a git repository with a bug, a state home with one
/// real RustSec record imported.
fn setup(root: &Path) -> io::Result<(PathBuf, PathBuf, PathBuf, Env)> {
    let home = root.join("home/dev");
    let project = home.join("project");
    std::fs::create_dir_all(project.join("src"))?;
    std::fs::create_dir_all(project.join("build"))?;
    std::fs::write(project.join("src/lib.rs"), "pub fn add(a: i32, b: i32) -> i32 { a - b }\n")?;
    // A real repository, so `git add -A` can be checked against the denylist. Without git the
    // demo still runs; that step then asks instead of allowing.
    let _ = std::process::Command::new("git")
        .args(["init", "-q", "-b", "fix/add"])
        .current_dir(&project)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    let state = root.join("state");
    let env = Env {
        loopguard_home: Some(state.clone()),
        home: Some(home.clone()),
        claude_project_dir: Some(project.clone()),
        manual_effects: true,
        ..Env::default()
    };
    // One real RustSec record, so the dependency advisory gate has data to decide with.
    let osv = root.join("osv");
    std::fs::create_dir_all(&osv)?;
    std::fs::write(osv.join("RUSTSEC-2021-0003.json"), DEMO_ADVISORY)?;
    crate::advisories::import(&state, &osv).map_err(io::Error::other)?;
    Ok((home, project, state, env))
}

/// The audit log's evidence: the chain verified, the signed checkpoints, and a tampered copy
/// caught. True when all three hold.
fn show_evidence(out: &mut dyn Write, state: &Path, project: &Path, tmp: &Path) -> io::Result<bool> {
    let log = audit_log(state, project);
    let report = log.verify().map_err(io::Error::other)?;
    writeln!(out, "\naudit log: {} events; chain {}", report.events, if report.is_ok() { "intact" } else { "BROKEN" })?;
    let trusted = crate::keys::trusted(state).map_err(io::Error::other)?;
    let signed = log.verify_checkpoints(trusted.as_ref());
    match &signed {
        Ok(n) => writeln!(out, "signed checkpoints (Ed25519, written at session end): {n} valid")?,
        Err(e) => writeln!(out, "signed checkpoints: INVALID: {e}")?,
    }
    // Now show what tampering looks like: flip one deny to allow in a copy of the log.
    let copy = tmp.join("tampered.jsonl");
    let text = std::fs::read_to_string(log.path())?;
    let tampered = text.replacen("\"decision\":\"deny\"", "\"decision\":\"allow\"", 1);
    std::fs::write(&copy, tampered)?;
    std::fs::copy(log.head_path(), format!("{}.head", copy.display()))?;
    let bad = loopguard_audit::AuditLog::new(&copy).verify().map_err(io::Error::other)?;
    match &bad.problem {
        Some(p) => writeln!(out, "tampered copy (one deny edited to allow): caught at line {}: {}", p.line, p.message)?,
        None => writeln!(out, "tampered copy: NOT detected")?,
    }
    Ok(report.is_ok() && signed.is_ok_and(|n| n > 0) && bad.problem.is_some())
}
