//! The gates the engine runs after the core gate: each takes the decision so far and can only
//! make it stricter (`escalate`, `escalate_to_deny`).

use loopguard_core::reasons::*;
use loopguard_core::{Action, Decision, Policy, Reason, RiskLevel, Verdict};
use serde_json::Value;
use std::path::Path;

/// The auto-merge prohibition: a call the gate lets through at the `merge` level (the policy
/// grants merge) still needs a change `loopguard merge-check` finds eligible. A command whose range
/// cannot be told (wrappers, `gh pr merge`) or checked is denied.
pub(super) fn merge_gate(
    decision: Decision,
    command: Option<&str>,
    workspace: &Path,
    policy: &Policy,
    home: Option<&Path>,
) -> Decision {
    if decision.verdict() == Verdict::Deny || decision.required_level() != loopguard_core::AutonomyLevel::Merge {
        return decision;
    }
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
pub(super) fn outgoing_gate(
    decision: Decision,
    command: Option<&str>,
    cwd: &Path,
    home: Option<&Path>,
    policy: &Policy,
) -> Decision {
    // Also on a call denied for another reason: the agent learns every reason at once.
    let Some(command) = command else { return decision };
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
pub(super) fn advisory_gate(
    decision: Decision,
    action: &Action,
    cwd: &Path,
    state: &Path,
    cfg: &loopguard_core::policy::AdvisoryConfig,
) -> (Decision, Option<String>) {
    if decision.verdict() == Verdict::Deny {
        return (decision, None);
    }
    let Some(changes) = crate::advisories::dependency_changes(action, cwd) else {
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
pub(super) fn approval_gate(decision: Decision, drift: &Result<Option<crate::approval::Drift>, String>) -> Decision {
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

/// Allowed only confined (a grant or yolo let code the analysis cannot see into through), and
/// there is no sandbox here: it does not run.
pub(super) fn confinement_gate(decision: Decision, confine: bool) -> Decision {
    if decision.verdict() == Verdict::Allow && decision.must_confine() && !confine {
        decision.escalate_to_deny(Reason::new(
            SHELL_OPAQUE_CODE,
            Verdict::Deny,
            RiskLevel::High,
            "This call runs code the analysis cannot see into and may run only inside loopguard's kernel sandbox, which is not in use here.",
        ))
    } else {
        decision
    }
}

/// A host that shows the engine what a read will hand the model (Cursor's `beforeReadFile`
/// carries the file's content) but cannot replace it: content holding a secret is not read.
pub(super) fn content_gate(decision: Decision, content: Option<&Value>, can_replace: bool) -> Decision {
    let Some(content) = content.filter(|_| !can_replace) else { return decision };
    let text = crate::hosts::input::as_text(content);
    let found = loopguard_secrets::Scanner::builtin().scan(&text);
    let Some(first) = found.first() else { return decision };
    let kinds: std::collections::BTreeSet<&str> = found.iter().map(|f| f.rule.as_str()).collect();
    decision.escalate_to_deny(
        Reason::new(
            SECRET_IN_CONTENT,
            Verdict::Deny,
            RiskLevel::High,
            format!(
                "the file holds {} secret(s) ({}; the first on line {}), and this host would hand the model the file unredacted.",
                found.len(),
                kinds.into_iter().collect::<Vec<_>>().join(", "),
                first.line
            ),
        )
        .with_remedy("read it through the shell (its output is redacted there), or ask the human to move the secret out of the file."),
    )
}

/// A call that quotes a running dashboard's one-time token is trying to log in to the human's
/// controls; an MCP call naming a dashboard's port (a browser or HTTP tool) is trying to reach
/// them. Both denied. (Shell commands and fetch URLs are checked for the port by the core gate.)
pub(super) fn dashboard_gate(
    decision: Decision,
    tool: Option<&super::ToolUse>,
    (ports, tokens): &(Vec<u16>, Vec<String>),
) -> Decision {
    let Some(tool) = tool.filter(|_| !ports.is_empty() || !tokens.is_empty()) else { return decision };
    let text = tool.input.to_string();
    let port = matches!(tool.action, Action::Mcp { .. })
        .then(|| loopguard_core::checks::ssrf::guarded_port_in(&text, ports))
        .flatten();
    if let Some(port) = port {
        return decision
            .escalate_to_deny(loopguard_core::checks::ssrf::guarded_port_finding(&format!("`{}`", tool.name), port));
    }
    if !tokens.iter().any(|t| text.contains(t.as_str())) {
        return decision;
    }
    decision.escalate_to_deny(
        Reason::new(
            SELF_PROTECTION,
            Verdict::Deny,
            RiskLevel::Critical,
            "the call quotes the token of loopguard's dashboard (the human's controls).",
        )
        .with_remedy("the dashboard is for the human; agents may not log in to it."),
    )
}
