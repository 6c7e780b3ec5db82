//! `loopguard hook claude-code`: Claude Code's hook protocol (see shared/claude-code/PROTOCOL.md).
//!
//! - PreToolUse: the gate decides. Allow prints nothing and exits 0, so the host's own
//!   permission flow still applies; ask and deny print the JSON decision with a reason the
//!   model can act on.
//! - PostToolUse, PostToolUseFailure, SessionStart, SessionEnd, UserPromptSubmit, Stop: audited.
//! - Anything wrong (bad input, unknown event, internal error, deadline): a JSON deny on stdout,
//!   the reason on stderr, exit 2. Stop is the exception: exit 2 there would make the agent keep
//!   going, so a failing Stop exits 0 with the reason on stderr.

use super::{HookOutcome, MAX_INPUT_BYTES, read_bounded, run_with_deadline};
use crate::sessions::{HostProcess, Sessions};
use crate::state::{Env, audit_log, project_policy, sha256_hex, workspace_key};
use loopguard_audit::{AuditLog, EventKind, NewEvent};
use loopguard_core::reasons::*;
use loopguard_core::{Context, Decision, ExecutionMode, Policy, Reason, RiskLevel, ToolCall, Verdict};
use serde_json::{Map, Value, json};
use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

/// How one hook call runs.
#[derive(Debug, Clone)]
pub struct HookConfig {
    /// The environment (state home, home, project dir).
    pub env: Env,
    /// Answer (with a deny) if not done by then.
    pub deadline: Duration,
}

/// Runs one hook call: reads the event from `stdin`, decides, answers. Never panics. If the
/// deadline passes first, the deny is printed and the process exits from the watchdog thread,
/// and this returns `None` (the caller must then wait: see [`super::wait_for_watchdog`]).
pub fn run(stdin: impl Read, config: HookConfig) -> Option<HookOutcome> {
    let deadline = config.deadline;
    let env = config.env;
    run_with_deadline(
        deadline,
        move || match read_bounded(stdin) {
            Ok(bytes) => handle(&bytes, &env),
            Err(e) => fail(HOOK_INPUT_INVALID, &format!("cannot read the hook input: {e}")),
        },
        || fail(INTERNAL_ERROR, "loopguard failed internally while deciding; the call is denied."),
        move || {
            super::answer_and_exit(&fail(
                HOOK_DEADLINE_EXCEEDED,
                &format!(
                    "loopguard did not decide within its {} ms deadline; the call is denied.",
                    deadline.as_millis()
                ),
            ))
        },
    )
}

/// The deny every failure answers with: JSON deny on stdout (honoured if this was a
/// PreToolUse), reason on stderr, exit 2 (blocks whatever the event was).
pub fn fail(code: &str, message: &str) -> HookOutcome {
    let d = Decision::fail_closed(code, message);
    let why = loopguard_secrets::Scanner::builtin().redact(&d.explain());
    HookOutcome { stdout: decision_json(&d), stderr: format!("{why}\n"), exit: 2 }
}

fn decision_json(d: &Decision) -> String {
    decision_json_with(d, None)
}

fn decision_json_with(d: &Decision, preview: Option<&str>) -> String {
    let mut reason = d.explain();
    if let Some(p) = preview {
        reason.push_str(&format!("\nPreview: {p}"));
    }
    let v = json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": d.verdict().as_str(),
            // Reasons quote commands and paths: never let one carry a secret out.
            "permissionDecisionReason": loopguard_secrets::Scanner::builtin().redact(&reason),
        }
    });
    format!("{v}\n")
}

/// Time a high-risk ask may spend simulating its command for the human (the hook's deadline is
/// 2 s by default).
const PREVIEW_IN_HOOK: std::time::Duration = std::time::Duration::from_millis(700);

/// A short preview of what a high-risk asked call would do, for the human deciding.
fn ask_preview(
    d: &Decision,
    call: &ToolCall,
    workspace: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Option<String> {
    // Code the analysis cannot see into is never run to preview it: the preview sandbox would
    // be running an attacker's code at decision time.
    if d.verdict() != Verdict::Ask
        || d.risk() < RiskLevel::High
        || !matches!(call.tool.as_str(), "Bash" | "Write" | "Edit" | "MultiEdit")
        || d.codes().iter().any(|c| c == SHELL_HIDDEN_CODE || c == SHELL_OPAQUE_CODE || c == SHELL_DYNAMIC)
    {
        return None;
    }
    let ctx = crate::preview::Ctx { workspace, home, timeout: PREVIEW_IN_HOOK };
    match crate::preview::preview_tool_call(call, &ctx) {
        Ok(p) => Some(p.summary()),
        Err(e) => Some(format!("not available ({e})")),
    }
}

/// `'…'` quoting for a POSIX shell.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// An allowed Bash call rewritten to run under `loopguard exec`: the kernel enforces what the
/// analysis predicted (writes inside the workspace; the network only when the analysis saw it;
/// the read-only profile for commands that need no more than `observe`).
fn wrapped_bash(d: &Decision, input: &Value) -> Option<HookOutcome> {
    let cmd = input.get("command").and_then(Value::as_str)?;
    let exe = std::env::current_exe().ok()?;
    let profile =
        if d.required_level() <= loopguard_core::AutonomyLevel::Suggest { "read-only" } else { "workspace-write" };
    let net = if d.network() { " --net" } else { "" };
    let mut updated = input.clone();
    updated["command"] = Value::String(format!(
        "{} exec --profile {profile}{net} -- bash -c {}",
        sh_quote(&exe.to_string_lossy()),
        sh_quote(cmd)
    ));
    let v = json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": "loopguard: runs in its kernel sandbox (loopguard exec)",
        "updatedInput": updated,
    }});
    Some(HookOutcome { stdout: format!("{v}\n"), stderr: String::new(), exit: 0 })
}

fn answer(d: &Decision) -> HookOutcome {
    match d.verdict() {
        Verdict::Allow => HookOutcome { stdout: String::new(), stderr: String::new(), exit: 0 },
        Verdict::Ask | Verdict::Deny => HookOutcome { stdout: decision_json(d), stderr: String::new(), exit: 0 },
    }
}

fn ok() -> HookOutcome {
    HookOutcome { stdout: String::new(), stderr: String::new(), exit: 0 }
}

/// A hook event's common fields, checked.
struct Event<'a> {
    obj: &'a Map<String, Value>,
    name: &'a str,
    session: &'a str,
    cwd: PathBuf,
}

fn field_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("`{key}` must be a string, found {}", type_name(other))),
        None => Err(format!("`{key}` is missing")),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_event(bytes: &[u8]) -> Result<(Value, String), (String, String)> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err((HOOK_INPUT_TOO_LARGE.into(), format!("the hook input is larger than {MAX_INPUT_BYTES} bytes")));
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| (HOOK_INPUT_INVALID.to_string(), "the hook input is not UTF-8".to_string()))?;
    let v: Value = serde_json::from_str(text)
        .map_err(|e| (HOOK_INPUT_INVALID.to_string(), format!("the hook input is not valid JSON: {e}")))?;
    let name = match v.as_object().map(|o| field_str(o, "hook_event_name")) {
        Some(Ok(n)) => n.to_string(),
        Some(Err(e)) => return Err((HOOK_INPUT_INVALID.into(), e)),
        None => {
            return Err((
                HOOK_INPUT_INVALID.into(),
                format!("the hook input must be a JSON object, found {}", type_name(&v)),
            ));
        }
    };
    Ok((v, name))
}

/// Handles one hook input (already read). Pure apart from the state home and policy files.
pub fn handle(bytes: &[u8], env: &Env) -> HookOutcome {
    let (value, name) = match parse_event(bytes) {
        Ok(x) => x,
        Err((code, msg)) => return fail_audited(env, None, &code, &msg),
    };
    let Some(obj) = value.as_object() else {
        return fail(HOOK_INPUT_INVALID, "the hook input must be a JSON object");
    };
    let common = field_str(obj, "session_id").and_then(|s| {
        let cwd = PathBuf::from(field_str(obj, "cwd")?);
        if cwd.is_absolute() { Ok((s, cwd)) } else { Err("`cwd` must be an absolute path".into()) }
    });
    let (session, cwd) = match common {
        Ok(x) => x,
        Err(e) => {
            return fail_audited(env, None, HOOK_INPUT_INVALID, &format!("the {name} input is invalid: {e}"));
        }
    };
    let ev = Event { obj, name: &name, session, cwd };
    let result = match ev.name {
        "PreToolUse" => return pre_tool_use(&ev, env),
        "PostToolUse" | "PostToolUseFailure" => {
            return match post_tool_use(&ev, env) {
                Ok(stdout) => HookOutcome { stdout, stderr: String::new(), exit: 0 },
                Err((code, msg)) => fail(code, &msg),
            };
        }
        "SessionStart" => session_start(&ev, env),
        "SessionEnd" => session_end(&ev, env),
        "UserPromptSubmit" => user_prompt(&ev, env),
        "Stop" | "SubagentStop" => {
            return match stop(&ev, env) {
                Ok(()) => ok(),
                // Exit 2 on Stop would force the agent to continue: report and let it stop.
                Err(e) => HookOutcome { stdout: String::new(), stderr: format!("loopguard: {e}\n"), exit: 0 },
            };
        }
        other => {
            let msg = format!("`{other}` is not a hook event loopguard handles; denied.");
            return fail_audited(env, Some(&ev), HOOK_UNKNOWN_EVENT, &msg);
        }
    };
    match result {
        Ok(()) => ok(),
        Err((code, msg)) => fail(code, &msg),
    }
}

/// Fails, and records the failure in the audit log when there is a log to record it in.
fn fail_audited(env: &Env, ev: Option<&Event<'_>>, code: &str, message: &str) -> HookOutcome {
    let cwd = ev.map(|e| e.cwd.clone()).or_else(|| env.claude_project_dir.clone());
    if let (Some(cwd), Ok(state)) = (cwd, env.state_home()) {
        let log = audit_log(&state, &env.workspace_for(&cwd));
        let mut e = NewEvent::new(ev.map_or("", |e| e.session), EventKind::HookError);
        e.decision = Some("deny".into());
        e.reasons = vec![code.to_string()];
        e.details = ev.map(|e| json!({ "event": e.name }));
        let _ = log.append(e);
    }
    fail(code, message)
}

struct Place {
    workspace: PathBuf,
    log: AuditLog,
    state: PathBuf,
}

fn place(ev: &Event<'_>, env: &Env) -> Result<Place, (&'static str, String)> {
    let state = env.state_home().map_err(|e| (STATE_UNAVAILABLE, e))?;
    let workspace = env.workspace_for(&ev.cwd);
    let log = audit_log(&state, &workspace);
    Ok(Place { workspace, log, state })
}

fn new_event(ev: &Event<'_>, kind: EventKind) -> NewEvent {
    let mut e = NewEvent::new(ev.session, kind);
    e.tool = ev.obj.get("tool_name").and_then(Value::as_str).map(String::from);
    e.tool_use_id = ev.obj.get("tool_use_id").and_then(Value::as_str).map(String::from);
    e
}

fn write(log: &AuditLog, e: NewEvent) -> Result<(), (&'static str, String)> {
    log.append(e)
        .map(|_| ())
        .map_err(|err| (AUDIT_WRITE_FAILED, format!("loopguard could not write its audit log: {err}")))
}

fn waiver(g: &crate::store::ActiveWaiver) -> loopguard_core::Waiver {
    loopguard_core::Waiver {
        id: g.id,
        rules: g.scope.iter().filter_map(|s| s.strip_prefix("rule:")).map(str::to_string).collect(),
        paths: g.scope.iter().filter_map(|s| s.strip_prefix("path:")).map(str::to_string).collect(),
    }
}

/// Audits new and cleared trips.
fn audit_trips(
    p: &Place,
    session: &str,
    new: &[loopguard_core::breaker::Trip],
    cleared: &[loopguard_core::breaker::Trip],
) {
    for (kind, trips) in [(EventKind::BreakerTripped, new), (EventKind::BreakerRecovered, cleared)] {
        for t in trips {
            let mut e = NewEvent::new(session, kind);
            e.reasons = vec![t.trigger.as_str().to_string()];
            e.details = Some(json!({
                "trip": t.id, "trigger": t.trigger.as_str(), "action": t.action.as_str(), "value": t.value,
                "threshold": t.threshold, "reason": t.reason, "reset": t.reset.as_str(), "source": t.session,
            }));
            // A failed write here shows as a gap `audit verify` cannot see; the trip itself is in
            // the store either way.
            let _ = p.log.append(e);
        }
    }
}

/// Counts a failed evidence write against the run; true when that tripped the breaker.
fn evidence_failed(p: &Place, policy: &Policy, session: &str) -> bool {
    let ws_key = workspace_key(&p.workspace);
    let now = crate::effects::now();
    crate::hot::write(&p.state, &ws_key, |tx| {
        crate::breaker::evidence_failed(tx, policy.breaker(), &ws_key, &p.workspace, session, now)
    })
    .is_ok_and(|t| !t.is_empty())
}

/// The auto-merge prohibition: a call the gate lets through at the `merge` level (the policy
/// grants merge) still needs a change `loopguard merge-check` finds eligible. A command whose range
/// cannot be told (wrappers, `gh pr merge`) or checked is denied.
fn merge_gate(
    decision: Decision,
    tool: &str,
    input: &Value,
    workspace: &std::path::Path,
    policy: &Policy,
    home: Option<&std::path::Path>,
) -> Decision {
    if decision.verdict() == Verdict::Deny || decision.required_level() != loopguard_core::AutonomyLevel::Merge {
        return decision;
    }
    let command = (tool == "Bash").then(|| input.get("command").and_then(Value::as_str)).flatten();
    let why = match command.and_then(crate::merge_check::merge_range) {
        None => "loopguard cannot tell which change this merges, so it cannot check that it is eligible".to_string(),
        Some(range) => match crate::merge_check::run(workspace, &range, policy, home) {
            Ok(r) if r.eligible => return decision,
            Ok(r) => {
                let no: Vec<String> = r
                    .files
                    .iter()
                    .filter(|f| f.category.is_none())
                    .map(|f| format!("{}: {}", f.path, f.reason))
                    .collect();
                format!("`{range}` is not eligible for an automatic merge ({})", no.join("; "))
            }
            Err(e) => format!("`{range}` cannot be checked: {e}"),
        },
    };
    decision.escalate_to_deny(
        Reason::new(
            MERGE_NOT_ELIGIBLE,
            Verdict::Deny,
            RiskLevel::High,
            format!("{why}; a human reviews and merges it."),
        )
        .with_remedy("open a pull request and leave the merge to the human."),
    )
}

/// Secrets in what a shell command would send (see `crate::outgoing`): the staged diff of a
/// commit, the commits of a push, files an upload reads. Critical findings deny; the rest add up
/// against `[secrets] ask_score` like the arguments' own findings.
fn outgoing_gate(
    decision: Decision,
    tool: &str,
    input: &Value,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
    policy: &Policy,
) -> Decision {
    // Also on a call denied for another reason: the agent learns every reason at once.
    if tool != "Bash" {
        return decision;
    }
    let Some(command) = input.get("command").and_then(Value::as_str) else { return decision };
    let scanner = loopguard_secrets::Scanner::builtin();
    let mut decision = decision;
    let mut score = 0u32;
    let mut lesser = Vec::new();
    for payload in crate::outgoing::payloads(command, cwd, home) {
        let what = crate::outgoing::what(&payload);
        if let crate::outgoing::Payload::Unreadable { why, .. } = &payload {
            decision = decision.escalate(Reason::new(
                SECRET_IN_OUTGOING,
                Verdict::Ask,
                RiskLevel::High,
                format!("loopguard could not read {what} to check it for secrets ({why}); a human decides."),
            ));
            continue;
        }
        for (at, f) in crate::outgoing::scan(&payload, scanner) {
            let found = format!("{} (`{}`) at {at}", f.description, f.rule);
            if f.severity == loopguard_secrets::Severity::Critical {
                decision = decision.escalate_to_deny(
                    Reason::new(SECRET_IN_OUTGOING, Verdict::Deny, RiskLevel::Critical, format!("{what} would send a {found}."))
                        .with_remedy("remove the secret (and rotate it if it was ever pushed), read it from the environment or a secret store instead, then try again."),
                );
            } else {
                score = score.saturating_add(f.severity.weight());
                lesser.push(format!("{found} in {what}"));
            }
        }
    }
    if score >= policy.secrets_ask_score() && !lesser.is_empty() {
        decision = decision.escalate(
            Reason::new(
                SECRET_IN_OUTGOING,
                Verdict::Ask,
                RiskLevel::High,
                format!("the command would send what looks like secrets: {}.", lesser.join("; ")),
            )
            .with_remedy(
                "check that these values are not live credentials; remove them or keep them out of what is sent.",
            ),
        );
    }
    decision
}

/// The dependency advisory gate: a call that adds or changes a dependency with a known advisory
/// (crates.io, npm, PyPI, Go) is asked about or denied per `[advisories]`. The store is read only
/// for such calls. Returns the decision and a note for the audit and the human (missing or
/// stale data).
fn advisory_gate(
    decision: Decision,
    tool: &str,
    input: &Value,
    cwd: &std::path::Path,
    state: &std::path::Path,
    cfg: &loopguard_core::policy::AdvisoryConfig,
) -> (Decision, Option<String>) {
    if decision.verdict() == Verdict::Deny {
        return (decision, None);
    }
    let Some(changes) = crate::advisories::dependency_changes(tool, input, cwd) else {
        return (decision, None);
    };
    match changes.and_then(|deps| crate::advisories::gate(state, &deps, cfg)) {
        Ok(r) => (r.findings.into_iter().fold(decision, |d, f| d.escalate(f)), r.note),
        // The data exists but cannot be read or applied, or the new manifest does not read: a
        // human decides (fail closed).
        Err(e) => (
            decision.escalate(
                Reason::new(
                    VULNERABLE_DEPENDENCY,
                    Verdict::Ask,
                    RiskLevel::High,
                    format!("this call changes dependencies, and they cannot be checked against the advisory data: {e}"),
                )
                .with_remedy("fix the manifest, or ask the human to re-import the advisory data (`loopguard advisories import`)."),
            ),
            Some(format!("not checked: {e}")),
        ),
    }
}

/// Control-plane drift: every call that writes or runs is denied (reads go on, so the agent can
/// report), and every call carries the code so the `approval_drift` breaker trips.
fn approval_gate(decision: Decision, drift: &Result<Option<crate::approval::Drift>, String>) -> Decision {
    let what = match drift {
        Ok(None) => return decision,
        Ok(Some(d)) => format!("the control plane no longer matches what a human approved: {}", d.describe()),
        Err(e) => format!("the approved control plane cannot be checked: {e}"),
    };
    let writes = decision.required_level() > loopguard_core::AutonomyLevel::Observe;
    decision.escalate(
        Reason::new(
            APPROVAL_DRIFT,
            if writes { Verdict::Deny } else { Verdict::Allow },
            RiskLevel::High,
            format!("{what}; until it is approved again, nothing that writes or runs is allowed"),
        )
        .with_remedy("stop and report: a human reviews the change and runs `loopguard approve`."),
    )
}

fn pre_tool_use(ev: &Event<'_>, env: &Env) -> HookOutcome {
    let tool = match field_str(ev.obj, "tool_name") {
        Ok(t) => t,
        Err(e) => {
            return fail_audited(env, Some(ev), HOOK_INPUT_INVALID, &format!("the PreToolUse input is invalid: {e}"));
        }
    };
    let Some(input) = ev.obj.get("tool_input") else {
        return fail_audited(
            env,
            Some(ev),
            HOOK_INPUT_INVALID,
            "the PreToolUse input is invalid: `tool_input` is missing",
        );
    };
    let p = match place(ev, env) {
        Ok(p) => p,
        Err((code, msg)) => return fail(code, &msg),
    };
    let mode =
        ev.obj.get("permission_mode").and_then(Value::as_str).map_or(ExecutionMode::Normal, ExecutionMode::from_claude);
    let transcript = ev.obj.get("transcript_path").and_then(Value::as_str).map(PathBuf::from);
    let call = ToolCall {
        tool: tool.to_string(),
        input: input.clone(),
        cwd: ev.cwd.clone(),
        session: Some(ev.session.to_string()),
    };
    let now = crate::effects::now();
    let ws_key = workspace_key(&p.workspace);

    let mut ended_yolo = None;
    // The approved control plane: checked before anything else (cheap unless something moved;
    // nothing at all to do for a worktree nobody approved).
    let approval = crate::approval::load(&p.state, &p.workspace);
    let drift = match &approval {
        Ok(None) => Ok(None),
        Ok(Some(a)) => crate::approval::check_against(&p.state, &crate::approval::plane(env, &p.workspace), a.clone()),
        Err(e) => Err(e.clone()),
    };
    let approved_project = approval.as_ref().ok().and_then(|a| a.as_ref()).and_then(|a| {
        // A drifted plane approves nothing, the project policy included.
        matches!(drift, Ok(None)).then(|| crate::approval::approved_project_policy(a).map(str::to_string)).flatten()
    });
    let policy = Policy::load_approved(
        env.user_policy().as_deref(),
        Some(&project_policy(&p.workspace)),
        approved_project.as_deref(),
    );
    // The second layer: allowed shell calls run inside the kernel sandbox where the policy wants
    // it (the default) and the kernel can enforce it. Only then may unattended calls run code the
    // analysis cannot see into.
    let wants_sandbox = tool == "Bash" && policy.as_ref().is_ok_and(Policy::exec_wrap_bash);
    let confine = wants_sandbox && crate::exec::kernel_can_confine();
    let mut sandbox_notice = false;
    // One transaction: breaker state and run metrics before, the gate, the counters after.
    let outcome = match &policy {
        Err(e) => Err(Decision::fail_closed(
            POLICY_INVALID,
            format!("The loopguard policy does not load, so every call is denied until a human fixes it: {e}"),
        )),
        Ok(policy) => {
            let cfg = policy.breaker();
            crate::hot::write(&p.state, &ws_key, |tx| {
                let mut b =
                    crate::breaker::before(tx, cfg, &ws_key, &p.workspace, ev.session, transcript.as_deref(), now)?;
                // Once per run: the human learns that the kernel cannot confine commands here.
                if wants_sandbox && !confine && !b.run.sandbox_notice {
                    b.run.sandbox_notice = true;
                    sandbox_notice = true;
                }
                let waivers = b.doc.waivers.iter().filter(|w| w.until > now).map(waiver).collect();
                let permissions = loopguard_core::permissions::PermissionStore {
                    grants: policy.grants().iter().chain(&b.doc.grants).cloned().collect(),
                    revoked_at: b.doc.revoked.as_ref().map(|r| r.0),
                };
                // Yolo: on while a human's period lasts; an expired one is closed with a summary.
                let yolo_on = b.doc.yolo.as_ref().is_some_and(|y| y.until > now);
                if let Some(y) = b.doc.yolo.take_if(|y| y.until <= now) {
                    ended_yolo = Some(y.audit_summary(now, "expired"));
                }
                let mode = if yolo_on && mode != ExecutionMode::Plan { ExecutionMode::Yolo } else { mode };
                let ctx = Context::new(&p.workspace)
                    .with_home(env.home.as_deref())
                    .with_mode(mode)
                    .with_confinement(confine)
                    .with_dns(loopguard_core::Dns::System { wait_ms: 100 })
                    .with_protected(Some(&p.state), env.user_policy().as_deref())
                    .with_breaker_state(b.state.position, b.paused_reason(), b.state.require_approval)
                    .with_waivers(waivers)
                    .with_permissions(permissions, now)
                    .with_canaries(
                        b.doc.canaries.iter().map(|c| c.value.clone()).collect(),
                        b.doc.canaries.iter().filter_map(|c| c.file.as_ref().map(PathBuf::from)).collect(),
                    );
                let result = loopguard_core::permissions::PermissionChecker::new(policy).check(&call, &ctx);
                let decision = merge_gate(result.full, tool, input, &p.workspace, policy, env.home.as_deref());
                let decision = outgoing_gate(decision, tool, input, &ev.cwd, env.home.as_deref(), policy);
                let (decision, adv_note) = advisory_gate(decision, tool, input, &ev.cwd, &p.state, policy.advisories());
                let decision = approval_gate(decision, &drift);
                // Allowed only confined (a grant or yolo let code the analysis cannot see into
                // through), and there is no sandbox here: it does not run.
                let decision = if decision.verdict() == Verdict::Allow && decision.must_confine() && !confine {
                    decision.escalate_to_deny(Reason::new(
                        SHELL_OPAQUE_CODE,
                        Verdict::Deny,
                        RiskLevel::High,
                        "This call runs code the analysis cannot see into and may run only inside loopguard's kernel sandbox, which is not in use here.",
                    ))
                } else {
                    decision
                };
                if let Some(y) = b.doc.yolo.as_mut().filter(|_| !decision.yolo_approved().is_empty()) {
                    y.record_operation(decision.yolo_approved());
                }
                crate::breaker::after(tx, cfg, &mut b, &decision, now, &p.workspace)?;
                Ok((decision, b, adv_note))
            })
            .map_err(|e| {
                Decision::fail_closed(
                    STATE_UNAVAILABLE,
                    format!("loopguard cannot read or update its breaker state, so the call is denied: {e}"),
                )
            })
        }
    };
    let (decision, before, adv_note) = match outcome {
        Ok((d, b, n)) => (d, Some(b), n),
        Err(d) => (d, None, None),
    };

    let mut e = new_event(ev, EventKind::PreToolUse);
    e.decision = Some(decision.verdict().as_str().into());
    e.reasons = decision.codes();
    e.details = Some(json!({
        "input_sha256": sha256_hex(input.to_string().as_bytes()),
        "risk": decision.risk().as_str(),
        "required": decision.required_level().as_str(),
        "effective": decision.effective_level().map(|l| l.as_str()),
        "self_protection": decision.codes().iter().any(|c| c == SELF_PROTECTION),
        "breaker": before.as_ref().map(|b| b.state.position.as_str()),
        "require_approval": before.as_ref().map(|b| b.state.require_approval),
        "waived": decision.waived(),
        "granted": decision.granted(),
        "yolo_approved": decision.yolo_approved(),
        "step": before.as_ref().map(|b| b.run.steps),
        "advisories": adv_note,
        "spend": before.as_ref().and_then(|b| crate::breaker::spend_estimate_label(&b.run)),
    }));
    if let Some(summary) = ended_yolo {
        let mut y = new_event(ev, EventKind::YoloSummary);
        y.details = Some(summary);
        let _ = p.log.append(y);
    }
    let audited = write(&p.log, e);
    if let (Some(b), Ok(policy)) = (&before, &policy) {
        audit_trips(&p, ev.session, &b.new_trips, &b.cleared);
        let mut tripped = !b.new_trips.is_empty();
        if audited.is_err() {
            tripped |= evidence_failed(&p, policy, ev.session);
        }
        if tripped && !env.manual_effects {
            crate::effects::spawn_flush(&p.state);
        }
    }
    let decision = match audited {
        Ok(()) => decision,
        Err((code, msg)) => decision.escalate_to_deny(Reason::new(
            code,
            Verdict::Deny,
            RiskLevel::Critical,
            format!("{msg}; without evidence nothing runs."),
        )),
    };
    // A session whose SessionStart was missed (hook installed mid-session) is still tracked.
    let _ = Sessions::new(&p.state, &p.workspace).open(ev.session, HostProcess::of_current);
    // What the human should know whatever the verdict: spend charged at the ceiling price (once
    // per run and model), and — for a call nothing blocks — what the advisory check could not say.
    let mut notices: Vec<String> =
        before.as_ref().and_then(crate::breaker::Before::estimate_notice).into_iter().collect();
    if sandbox_notice {
        notices.push(
            "this kernel cannot confine commands (Landlock or user namespaces are unavailable), so shell calls run unconfined and only the analysis decides; code it cannot see into is not run unattended. `loopguard doctor` says what is missing.".into(),
        );
    }
    if decision.verdict() == Verdict::Allow {
        notices.extend(adv_note);
    }
    let out = if decision.verdict() == Verdict::Allow && tool == "Bash" && confine {
        // The kernel enforces this call: if it cannot be wrapped, it does not run.
        wrapped_bash(&decision, input)
            .unwrap_or_else(|| fail(INTERNAL_ERROR, "loopguard could not wrap this Bash call in its sandbox; denied."))
    } else {
        match policy
            .as_ref()
            .is_ok_and(Policy::preview_in_hook)
            .then(|| ask_preview(&decision, &call, &p.workspace, env.home.as_deref()))
            .flatten()
        {
            Some(preview) => {
                HookOutcome { stdout: decision_json_with(&decision, Some(&preview)), stderr: String::new(), exit: 0 }
            }
            None => answer(&decision),
        }
    };
    with_notices(out, &notices)
}

/// Adds `systemMessage` (shown to the human, not the model) to an answer that exits 0. A
/// failing answer (exit 2) is left as it is: its reason is what matters.
fn with_notices(mut out: HookOutcome, notices: &[String]) -> HookOutcome {
    if notices.is_empty() || out.exit != 0 {
        return out;
    }
    let text = notices.iter().map(|n| format!("loopguard: {n}")).collect::<Vec<_>>().join("\n");
    let text = loopguard_secrets::Scanner::builtin().redact(&text);
    let mut v = if out.stdout.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        match serde_json::from_str::<Value>(&out.stdout) {
            Ok(v @ Value::Object(_)) => v,
            // Not ours to change: keep the answer exactly.
            _ => return out,
        }
    };
    v["systemMessage"] = Value::String(text);
    out.stdout = format!("{v}\n");
    out
}

/// Audits the result and redacts secrets out of it. The redacted response keeps the tool's own
/// shape exactly (only string contents change): Claude Code ignores an `updatedToolOutput` of
/// another shape and passes the original through.
fn post_tool_use(ev: &Event<'_>, env: &Env) -> Result<String, (&'static str, String)> {
    let failed = ev.name == "PostToolUseFailure";
    let scanner = loopguard_secrets::Scanner::builtin();
    let (stdout, redacted) = match ev.obj.get("tool_response") {
        Some(resp) if !failed => {
            let (clean, n) = loopguard_secrets::redact_json(resp, scanner);
            let out = if n > 0 {
                let v = json!({ "hookSpecificOutput": { "hookEventName": "PostToolUse", "updatedToolOutput": clean } });
                format!("{v}\n")
            } else {
                String::new()
            };
            (out, n)
        }
        _ => (String::new(), 0),
    };
    let p = match place(ev, env) {
        Ok(p) => p,
        // The redaction still goes out: secrets must not reach the model even if the log fails.
        Err(_) if !stdout.is_empty() => return Ok(stdout),
        Err(e) => return Err(e),
    };
    // The breaker learns from results: test counts and edits going back and forth.
    let mut breaker_error = None;
    let observation = match (failed, ev.obj.get("tool_response"), ev.obj.get("tool_name").and_then(Value::as_str)) {
        (false, Some(resp), Some(tool)) => {
            crate::breaker::observe(tool, ev.obj.get("tool_input").unwrap_or(&Value::Null), resp)
        }
        _ => None,
    };
    // Most results say nothing to the breaker: then no policy load and no state file.
    if let Some(obs) = observation {
        let observed = Policy::load(env.user_policy().as_deref(), Some(&project_policy(&p.workspace)))
            .map_err(|e| e.to_string())
            .and_then(|policy| {
                let ws_key = workspace_key(&p.workspace);
                let now = crate::effects::now();
                crate::hot::write(&p.state, &ws_key, |tx| {
                    crate::breaker::observe_result(tx, policy.breaker(), &ws_key, &p.workspace, ev.session, obs, now)
                })
            });
        match observed {
            Ok(trips) if !trips.is_empty() => {
                audit_trips(&p, ev.session, &trips, &[]);
                if !env.manual_effects {
                    crate::effects::spawn_flush(&p.state);
                }
            }
            Ok(_) => {}
            Err(e) => breaker_error = Some(e),
        }
    }
    let mut e = new_event(ev, if failed { EventKind::PostToolUseFailure } else { EventKind::PostToolUse });
    let size = |k: &str| ev.obj.get(k).map(|v| v.to_string().len());
    e.details = Some(json!({
        "response_bytes": size("tool_response"),
        "error_bytes": size("error"),
        "is_interrupt": ev.obj.get("is_interrupt").and_then(Value::as_bool),
        "duration_ms": ev.obj.get("duration_ms").and_then(Value::as_u64),
        "secrets_redacted": redacted,
        "breaker_error": breaker_error,
    }));
    match write(&p.log, e) {
        Ok(()) => Ok(stdout),
        Err(_) if !stdout.is_empty() => Ok(stdout),
        Err(e) => Err(e),
    }
}

fn session_start(ev: &Event<'_>, env: &Env) -> Result<(), (&'static str, String)> {
    let p = place(ev, env)?;
    let sessions = Sessions::new(&p.state, &p.workspace);
    let io = |e: std::io::Error| (STATE_UNAVAILABLE, format!("session markers: {e}"));
    for left in sessions.abandoned(ev.session).map_err(io)? {
        let mut e = NewEvent::new(&left.session, EventKind::SessionEnd);
        e.details = Some(json!({ "recovered": true, "started": left.started, "closed_by": ev.session }));
        write(&p.log, e)?;
        sessions.close(&left.session).map_err(io)?;
    }
    let mut e = new_event(ev, EventKind::SessionStart);
    e.details = Some(json!({
        "source": ev.obj.get("source").and_then(Value::as_str),
        "workspace": p.workspace.display().to_string(),
    }));
    write(&p.log, e)?;
    sessions.open(ev.session, HostProcess::of_current).map_err(io)?;
    // Re-check the approved control plane at every start; drift is on record from the first moment.
    let drift = match crate::approval::load(&p.state, &p.workspace) {
        Ok(None) => Ok(None),
        Ok(Some(_)) => crate::approval::check(&p.state, &crate::approval::plane(env, &p.workspace)),
        Err(e) => Err(e),
    };
    let why = match drift {
        Ok(None) => None,
        Ok(Some(d)) => Some(json!({ "changes": d.changes })),
        Err(e) => Some(json!({ "error": e })),
    };
    if let Some(details) = why {
        let mut e = new_event(ev, EventKind::ApprovalDrift);
        e.details = Some(details);
        write(&p.log, e)?;
    }
    // The run's base: what a stop reverts to.
    let base = crate::effects::head_of(&p.workspace);
    let ws_key = workspace_key(&p.workspace);
    crate::hot::write(&p.state, &ws_key, |tx| {
        let mut run = tx.run(&ws_key, ev.session, crate::effects::now())?;
        if run.base_ref.is_none() {
            run.base_ref = base;
            tx.save_run(&run)?;
        }
        Ok(())
    })
    .map_err(|e| (STATE_UNAVAILABLE, e))?;
    Ok(())
}

fn session_end(ev: &Event<'_>, env: &Env) -> Result<(), (&'static str, String)> {
    let p = place(ev, env)?;
    let mut e = new_event(ev, EventKind::SessionEnd);
    e.details = Some(json!({ "reason": ev.obj.get("reason").and_then(Value::as_str) }));
    write(&p.log, e)?;
    // Sign a checkpoint over the session's log: from here on, shrinking or replacing it shows.
    crate::keys::signing(&p.state)
        .and_then(|k| p.log.checkpoint(&k, ev.session))
        .map_err(|e| (AUDIT_WRITE_FAILED, format!("the audit checkpoint failed: {e}")))?;
    Sessions::new(&p.state, &p.workspace)
        .close(ev.session)
        .map_err(|e| (STATE_UNAVAILABLE, format!("session markers: {e}")))
}

fn user_prompt(ev: &Event<'_>, env: &Env) -> Result<(), (&'static str, String)> {
    let p = place(ev, env)?;
    let mut e = new_event(ev, EventKind::UserPromptSubmit);
    // The prompt itself may hold secrets: only its size goes to the log.
    e.details = Some(json!({ "prompt_bytes": ev.obj.get("prompt").and_then(Value::as_str).map(str::len) }));
    write(&p.log, e)
}

fn stop(ev: &Event<'_>, env: &Env) -> Result<(), String> {
    let p = place(ev, env).map_err(|(_, m)| m)?;
    let mut e = new_event(ev, EventKind::Stop);
    e.details = Some(json!({ "event": ev.name }));
    write(&p.log, e).map_err(|(_, m)| m)
}
