use crate::checks::paths::PathValidator;
use crate::checks::shell;
use crate::reasons::*;
use crate::{
    Action, AutonomyLevel, BreakerPosition, Context, Decision, ExecutionMode, Finding, Policy, RiskLevel, ToolCall,
    ToolKind, ToolMetadata, Verdict,
};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Evaluates tool calls against a policy.
#[derive(Debug, Clone, Copy)]
pub struct Gate<'p> {
    policy: &'p Policy,
}

impl<'p> Gate<'p> {
    /// A gate over a loaded policy.
    pub fn new(policy: &'p Policy) -> Self {
        Gate { policy }
    }

    /// Decides one call. Cannot fail: a panic anywhere inside becomes a deny with code
    /// `internal-error`.
    pub fn evaluate(&self, call: &ToolCall, ctx: &Context) -> Decision {
        match catch_unwind(AssertUnwindSafe(|| self.decide(call, ctx))) {
            Ok(d) => d,
            Err(_) => Decision::fail_closed(
                INTERNAL_ERROR,
                "loopguard hit an internal error while deciding; the call is denied.",
            ),
        }
    }

    fn decide(&self, call: &ToolCall, ctx: &Context) -> Decision {
        let policy = self.policy;
        let mut findings: Vec<Finding> = Vec::new();
        let meta = ToolMetadata::of(&call.action);
        // A tool nobody described may do anything: assume it writes.
        let mut required = meta.map_or(AutonomyLevel::Implement, |m| m.required);
        let base_risk = meta.map_or(RiskLevel::High, |m| m.risk);
        let mut network = false;
        let mut writes = Vec::new();

        findings.extend(tool_policy(policy, call, meta, base_risk));

        if !call.input.is_object() {
            findings.push(invalid_input(&call.tool, "the input is not a JSON object"));
        } else {
            let (f, level, net, w) = self.action_findings(call, ctx);
            findings.extend(f);
            required = required.max(level.unwrap_or(required));
            network = net;
            writes = w;
        }

        let mut effective = ctx.breaker.cap().map(|cap| cap.min(policy.autonomy()));
        if ctx.mode == ExecutionMode::Plan {
            effective = effective.map(|e| e.min(AutonomyLevel::Suggest));
        }
        findings.extend(secrets_in_arguments(call, policy.secrets_ask_score()));
        findings.extend(canaries_in_arguments(call, &ctx.canaries));
        findings.extend(autonomy(policy, ctx, required, effective));

        // The policy's per-rule decisions; "allow" switches a rule off.
        for f in &mut findings {
            if let Some(v) = policy.rule_verdict(&f.code) {
                f.verdict = v;
            }
        }
        present_human(&mut findings, ctx, policy);
        let confined = confine(&mut findings, ctx, network);
        refuse_autorun_unattended(&mut findings, ctx);
        let waived = waive(&mut findings, ctx);
        confirmation(&mut findings, call, ctx, meta, required, policy.rule_verdict(CONFIRMATION_REQUIRED));
        let granted = grant(&mut findings, call, ctx);
        let yolo = if ctx.mode == ExecutionMode::Yolo { yolo(&mut findings) } else { Vec::new() };
        findings.extend(require_approval(ctx));
        Decision::from_findings(findings, base_risk, required, effective)
            .with_waived(waived)
            .with_granted(granted)
            .with_yolo(yolo)
            .with_network(network)
            .with_writes(writes)
            .with_confined(confined)
    }
}

/// Findings, the autonomy level the analysis found, the network need, the predicted writes.
type ActionFindings = (Vec<Finding>, Option<AutonomyLevel>, bool, Vec<std::path::PathBuf>);

impl Gate<'_> {
    /// The checks of what the call does: the shell analysis, path rules for reads, searches and
    /// writes, the URL check for fetches. Returns the findings, the autonomy level the analysis
    /// found (shell), whether the call needs the network, and the files it is predicted to write
    /// (resolved: the step journal keeps their pre-images).
    fn action_findings(&self, call: &ToolCall, ctx: &Context) -> ActionFindings {
        let policy = self.policy;
        let protected = ctx.protected_paths();
        // The user policy holds the fleet's database credential when the host is in a fleet.
        let fleet_secret = ctx.user_policy.iter().filter(|_| policy.fleet().is_some());
        let read_protected: Vec<std::path::PathBuf> = ctx.state_home.iter().chain(fleet_secret).cloned().collect();
        let paths = || {
            let roots =
                std::iter::once(ctx.workspace.as_path()).chain(policy.extra_roots().iter().map(|p| p.as_path()));
            PathValidator::new(roots)
                .with_rules(policy.path_rules(), ctx.home.as_deref(), &protected)
                .with_read_protected(&read_protected)
                .with_canary_files(&ctx.canary_files)
        };
        let mut findings = Vec::new();
        match &call.action {
            Action::Shell { command } => {
                let knowledge = shell::Knowledge { commands: policy.commands(), packs: policy.packs() };
                let report = shell::analyze(command, &call.cwd, ctx, knowledge, &paths());
                // The sandbox gives the network only to what the analysis names a need for: a
                // network tool or remote target it saw, or a command whose job is to download.
                // Builds, tests and code it cannot see into run without it.
                // A call that reaches only loopback gets the sandbox session's loopback instead.
                return (report.findings, report.required, report.remote || report.fetches, report.predicted_writes);
            }
            Action::ReadFile { path } | Action::Search { path, .. } => {
                let target = path.as_deref().map(|p| expand_home(p, ctx.home.as_deref()));
                let real = target
                    .as_deref()
                    .and_then(|p| crate::checks::paths::resolve(std::path::Path::new(p), &call.cwd).ok());
                if let (Some(p), Some(real)) = (&target, &real) {
                    findings.extend(paths().check_read(p, real, &format!("`{}` of", call.tool)));
                }
                // A content search limited by a glob (`glob: ".env*"`) prints lines of every file
                // the glob matches under its path: those are reads.
                if let Action::Search { content_glob: Some(glob), .. } = &call.action {
                    let base = real.clone().unwrap_or_else(|| call.cwd.clone());
                    let found = glob_matches(&base, glob)
                        .into_iter()
                        .find_map(|m| paths().check_read(glob, &m, &format!("`{}` (glob `{glob}`) of", call.tool)));
                    findings.extend(found);
                }
            }
            Action::Fetch { url: Some(url) } => {
                findings.extend(fetch_url(&call.tool, url, &ctx.dns));
                if let Some(port) = crate::checks::ssrf::guarded_port_in(url, &ctx.guarded_ports) {
                    findings.push(crate::checks::ssrf::guarded_port_finding(&format!("`{}`", call.tool), port));
                }
            }
            Action::WriteFile { .. } | Action::Patch { .. } => {
                let mut writes = Vec::new();
                for (path, _) in call.action.file_changes() {
                    let p = expand_home(path, ctx.home.as_deref());
                    findings.extend(paths().check_write(&p, &call.cwd, &format!("{} target", call.tool)));
                    writes.extend(crate::checks::paths::resolve(std::path::Path::new(&p), &call.cwd).ok());
                }
                return (findings, None, false, writes);
            }
            Action::Invalid { problem, .. } => findings.push(invalid_input(&call.tool, problem)),
            _ => {}
        }
        (findings, None, false, Vec::new())
    }
}

/// The policy's `[tools]` entry for the call's tool, or its `unknown_tool` decision for a tool
/// no adapter knows.
fn tool_policy(policy: &Policy, call: &ToolCall, meta: Option<ToolMetadata>, base_risk: RiskLevel) -> Option<Finding> {
    match (policy.tool_verdict(&call.tool), meta) {
        (Some(v), _) if v > Verdict::Allow => Some(
            Finding::new(
                TOOL_POLICY,
                v,
                base_risk,
                format!("The policy sets `{}` for the tool `{}`.", v.as_str(), call.tool),
            )
            .with_remedy("use another tool, or ask the human to change [tools] in their policy."),
        ),
        (Some(_), _) | (None, Some(_)) => None,
        (None, None) => {
            let v = policy.unknown_tool();
            (v > Verdict::Allow).then(|| {
                Finding::new(
                    UNKNOWN_TOOL,
                    v,
                    RiskLevel::High,
                    format!("`{}` is not a tool loopguard knows.", call.tool),
                )
                .with_remedy(format!("ask the human to add \"{}\" to [tools] in their policy.", call.tool))
            })
        }
    }
}

/// The autonomy check: a stopped breaker pauses everything; a call needing more than the
/// effective level (min of policy and breaker cap) is asked (a present human may let one call
/// cross the policy's line) or denied (a breaker's cap, or nobody to ask).
fn autonomy(
    policy: &Policy,
    ctx: &Context,
    required: AutonomyLevel,
    effective: Option<AutonomyLevel>,
) -> Option<Finding> {
    let Some(eff) = effective else {
        return Some(
            Finding::new(
                BREAKER_STOPPED,
                Verdict::Deny,
                RiskLevel::Critical,
                format!(
                    "Paused, not failed: loopguard's circuit breaker stopped this run ({}).",
                    ctx.paused.as_deref().unwrap_or("tripped")
                ),
            )
            .with_remedy("stop here and report what you were doing; a human reviews the run (see STATE.md) and resets the breaker with `loopguard breaker reset`."),
        );
    };
    if required <= eff {
        return None;
    }
    // With a human present (normal, auto-edit), the policy's level is a line the human may let
    // one call cross; a breaker's cap is not.
    let breaker_binds = ctx.breaker.cap().is_none_or(|c| required > c);
    let cap = match (ctx.breaker < BreakerPosition::FullAuto, &ctx.paused) {
        // The cap is what stops the call: say whose it is (a trip, the fleet).
        (true, Some(why)) if breaker_binds => format!(", breaker {}: {why}", ctx.breaker.as_str()),
        (true, _) => format!(", breaker {}", ctx.breaker.as_str()),
        (false, _) => String::new(),
    };
    let verdict = if matches!(ctx.mode, ExecutionMode::Normal | ExecutionMode::AutoEdit) && !breaker_binds {
        Verdict::Ask
    } else {
        Verdict::Deny
    };
    Some(
        Finding::new(
            AUTONOMY_EXCEEDED,
            verdict,
            RiskLevel::High,
            format!(
                "This call needs autonomy level `{}`, above the effective level `{}` (policy `{}`{cap}).",
                required.as_str(),
                eff.as_str(),
                policy.autonomy().as_str()
            ),
        )
        .with_remedy("stay within the current level, or leave this step to the human."),
    )
}

/// A tripped breaker that requires a human to approve each call.
fn require_approval(ctx: &Context) -> Option<Finding> {
    (ctx.require_approval && ctx.breaker > BreakerPosition::Stopped).then(|| {
        Finding::new(
            BREAKER_REQUIRE_APPROVAL,
            Verdict::Ask,
            RiskLevel::Medium,
            format!(
                "loopguard's circuit breaker requires a human to approve each call ({}).",
                ctx.paused.as_deref().unwrap_or("tripped")
            ),
        )
        .with_remedy("wait for the human's approval, or slow down.")
    })
}

/// Code the analysis cannot see into (`shell-opaque-code`). Unattended, nobody can be asked: it
/// may run only inside the kernel sandbox (allowed, and the decision says it must be confined),
/// and is denied where the host will not confine it. Other modes keep the ask — and so does a
/// line that gets the network (`network`: something in it downloads or reaches a host), where
/// code nobody read could send what it reads anywhere. Returns whether the call must run
/// confined (whatever the verdict becomes later: a grant or yolo may allow it).
fn confine(findings: &mut [Finding], ctx: &Context, network: bool) -> bool {
    let mut opaque = false;
    for f in findings.iter_mut().filter(|f| f.code == SHELL_OPAQUE_CODE) {
        opaque = true;
        if f.verdict != Verdict::Ask || ctx.mode != ExecutionMode::Unattended {
            continue;
        }
        if network {
            f.message.push_str(
                " The same command line gets the network, so it cannot run confined unattended: run the download and the code in separate calls.",
            );
            continue;
        }
        if ctx.confinement {
            f.verdict = Verdict::Allow;
        } else {
            f.verdict = Verdict::Deny;
            f.message.push_str(
                " Unattended, it could only run inside loopguard's kernel sandbox, which is not in use here.",
            );
        }
    }
    opaque
}

/// A write of a file a tool runs by itself later (`autorun-file`): unattended, nobody can
/// confirm it, and the sandbox cannot help (it runs later, outside): denied. Other modes ask.
fn refuse_autorun_unattended(findings: &mut [Finding], ctx: &Context) {
    if ctx.mode != ExecutionMode::Unattended {
        return;
    }
    for f in findings.iter_mut().filter(|f| f.code == AUTORUN_FILE && f.verdict == Verdict::Ask) {
        f.verdict = Verdict::Deny;
        f.message.push_str(" Unattended, nobody can confirm it.");
    }
}

/// The risk a call carries for the execution mode's confirmation layer: its findings, the level
/// it needs (implement and PR are medium, merge and above high), and — for tools other than the
/// shell, whose risk is what its analysis found — the tool's own base risk.
fn call_risk(findings: &[Finding], meta: Option<ToolMetadata>, required: AutonomyLevel) -> RiskLevel {
    let level = match required {
        AutonomyLevel::Observe | AutonomyLevel::Suggest => RiskLevel::Low,
        AutonomyLevel::Implement | AutonomyLevel::Pr => RiskLevel::Medium,
        _ => RiskLevel::High,
    };
    let base = meta.filter(|m| m.kind != ToolKind::Shell).map_or(RiskLevel::Low, |m| m.risk);
    findings.iter().map(|f| f.risk).fold(level.max(base), std::cmp::max)
}

/// A URL a fetch tool is asked to read: refused when it could be read two ways or names an
/// internal host; its name resolved (bounded) so a public-looking name pointing inside is caught.
fn fetch_url(tool: &str, url: &str, dns: &crate::Dns) -> Option<Finding> {
    use crate::checks::ssrf;
    let what = format!("`{tool}`");
    match ssrf::check_fetch_url(url) {
        Err(e) => return Some(invalid_input(tool, &format!("`url` is refused: it {e}"))),
        Ok(Some(i)) => return Some(ssrf::finding(&what, url, &i)),
        Ok(None) => {}
    }
    let host = url::Url::parse(url).ok()?.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return None;
    }
    let resolved = match dns {
        crate::Dns::Off => return None,
        crate::Dns::Table(t) => match t.iter().find(|(n, _)| *n == host) {
            Some((_, a)) => ssrf::Resolved::Addrs(a.clone()),
            None => ssrf::Resolved::NotFound("not in the table".into()),
        },
        crate::Dns::System { wait_ms } => ssrf::resolve_bounded(&host, std::time::Duration::from_millis(*wait_ms)),
    };
    match resolved {
        ssrf::Resolved::Addrs(a) => ssrf::internal_address(&host, &a).map(|i| ssrf::finding(&what, url, &i)),
        ssrf::Resolved::NotFound(_) => None,
        ssrf::Resolved::TimedOut => Some(
            Finding::new(
                SSRF_UNRESOLVED,
                Verdict::Ask,
                RiskLevel::High,
                format!("{what} would read `{url}`, but `{host}` did not resolve in time to check its addresses."),
            )
            .with_remedy("retry, or a human confirms the host is public."),
        ),
    }
}

/// Normal and auto-edit modes, where the host asks a present human: a recognised destructive
/// operation a human may approve (force push, `git reset --hard`, a pack's rule…) is asked
/// instead of denied, unless a policy file's `[rules]` set its decision. Backstops and wipes stay.
fn present_human(findings: &mut [Finding], ctx: &Context, policy: &Policy) {
    if !matches!(ctx.mode, ExecutionMode::Normal | ExecutionMode::AutoEdit) {
        return;
    }
    for f in findings.iter_mut().filter(|f| f.verdict == Verdict::Deny) {
        let approvable =
            crate::reasons::HUMAN_APPROVABLE.contains(&f.code.as_str()) || policy.packs().has_code(&f.code);
        if approvable && !policy.rule_set_by_file(&f.code) {
            f.verdict = Verdict::Ask;
        }
    }
}

/// The mode × risk matrix. Normal: a call of medium risk or more that nothing else asks or
/// denies needs the human's confirmation (`confirmation-required`, ask) unless a grant covers it.
/// Auto-edit: the same, except file edits inside the workspace. Plan (capped at suggest by the
/// autonomy check), unattended (no confirmation layer) and yolo add nothing here.
fn confirmation(
    findings: &mut Vec<Finding>,
    call: &ToolCall,
    ctx: &Context,
    meta: Option<ToolMetadata>,
    required: AutonomyLevel,
    rule: Option<Verdict>,
) {
    // A file edit inside the workspace whose pre-image the step journal keeps can be walked
    // back (`loopguard undo`): low risk, in normal mode as in auto-edit. A target outside the
    // workspace, denylisted or otherwise in question has a finding of its own and stops here.
    let file_write = meta.is_some_and(|m| m.kind == ToolKind::FileWrite);
    let layer = match ctx.mode {
        ExecutionMode::Normal => !(file_write && ctx.journal),
        ExecutionMode::AutoEdit => !file_write,
        ExecutionMode::Plan | ExecutionMode::Unattended | ExecutionMode::Yolo => false,
    };
    let verdict = rule.unwrap_or(Verdict::Ask);
    if !layer || verdict == Verdict::Allow || findings.iter().any(|f| f.verdict > Verdict::Allow) {
        return;
    }
    let risk = call_risk(findings, meta, required);
    if risk >= RiskLevel::Medium {
        findings.push(
            Finding::new(
                CONFIRMATION_REQUIRED,
                verdict,
                risk,
                format!(
                    "`{}` is a {} risk call; in {} mode the human confirms it.",
                    call.tool,
                    risk.as_str(),
                    ctx.mode.as_str()
                ),
            )
            .with_remedy("wait for the human, or ask them for a grant (`loopguard grant add`) for this kind of call."),
        );
    }
}

/// Yolo: every ask is approved — when nothing denies and no ask is a backstop (the breaker's
/// require-approval, secrets, self-protection…). Denies (forbidden commands, protected and
/// denylisted paths, the breaker's stop) are untouched. Returns the codes it approved.
fn yolo(findings: &mut [Finding]) -> Vec<String> {
    if findings.iter().any(|f| f.verdict == Verdict::Deny)
        || findings.iter().any(|f| f.verdict == Verdict::Ask && Code::of(&f.code).is_backstop())
    {
        return Vec::new();
    }
    let mut approved = Vec::new();
    for f in findings.iter_mut().filter(|f| f.verdict == Verdict::Ask) {
        f.verdict = Verdict::Allow;
        approved.push(f.code.clone());
    }
    approved
}

/// The pre-authorised fast path: when the call would be asked about (no deny) and a grant covers
/// it, its asks become allows. Backstops are never granted away.
fn grant(findings: &mut [Finding], call: &ToolCall, ctx: &Context) -> Option<i64> {
    let strictest = findings.iter().map(|f| f.verdict).max()?;
    if strictest != Verdict::Ask
        || findings.iter().any(|f| f.verdict == Verdict::Ask && Code::of(&f.code).is_backstop())
    {
        return None;
    }
    let g = ctx.permissions.is_authorized(call, call.session.as_deref(), ctx.now)?;
    for f in findings.iter_mut().filter(|f| f.verdict == Verdict::Ask) {
        f.verdict = Verdict::Allow;
    }
    Some(g.id)
}

/// Break-glass: findings a human waived for a while become allows (kept in the reasons, so the
/// audit log shows what was waived). Backstops are never waived.
fn waive(findings: &mut [Finding], ctx: &Context) -> Vec<String> {
    let mut waived = Vec::new();
    if ctx.waivers.is_empty() {
        return waived;
    }
    for f in findings.iter_mut().filter(|f| f.verdict > Verdict::Allow && !Code::of(&f.code).is_backstop()) {
        let by = ctx.waivers.iter().find(|w| {
            w.rules.contains(&f.code)
                || f.target
                    .as_deref()
                    .is_some_and(|t| w.paths.iter().any(|g| waiver_path_matches(g, t, &ctx.workspace)))
        });
        if let Some(w) = by {
            f.verdict = Verdict::Allow;
            waived.push(format!("{} (break-glass #{})", f.code, w.id));
        }
    }
    waived
}

fn waiver_path_matches(glob: &str, target: &str, workspace: &std::path::Path) -> bool {
    let rel = std::path::Path::new(target).strip_prefix(workspace).ok().and_then(|p| p.to_str());
    let Ok(g) = globset::GlobBuilder::new(glob).literal_separator(true).build() else { return false };
    let m = g.compile_matcher();
    m.is_match(target) || rel.is_some_and(|r| m.is_match(r))
}

/// Canary values anywhere in the call's input (a tool call carrying one is exfiltrating it).
fn canaries_in_arguments(call: &ToolCall, canaries: &[String]) -> Option<Finding> {
    if canaries.is_empty() {
        return None;
    }
    fn any(v: &serde_json::Value, canaries: &[String]) -> bool {
        match v {
            serde_json::Value::String(s) => canaries.iter().any(|c| !c.is_empty() && s.contains(c.as_str())),
            serde_json::Value::Array(a) => a.iter().any(|x| any(x, canaries)),
            serde_json::Value::Object(o) => o.values().any(|x| any(x, canaries)),
            _ => false,
        }
    }
    any(&call.input, canaries).then(|| {
        Finding::new(
            CANARY_TRIPPED,
            Verdict::Deny,
            RiskLevel::Critical,
            format!("`{}` carries a canary credential planted by loopguard: an exfiltration attempt.", call.tool),
        )
    })
}

/// Secrets in what the call would send or write. The text an edit replaces is left out: removing
/// a leaked key from a file must stay possible.
fn secrets_in_arguments(call: &ToolCall, ask_score: u32) -> Vec<Finding> {
    fn strings<'a>(v: &'a serde_json::Value, key: &str, out: &mut Vec<(String, &'a str)>) {
        match v {
            serde_json::Value::String(s) => out.push((key.to_string(), s)),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, key, out)),
            serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| strings(x, k, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    strings(&call.input, "", &mut all);
    // The text an edit replaces is already in the file: removing a leaked key must stay possible.
    all.retain(|(_, s)| !call.action.only_replaced(s));
    let scanner = loopguard_secrets::Scanner::builtin();
    let mut out = Vec::new();
    // Critical secrets deny one by one; the rest add up (low 1, medium 3, high 10) and ask once
    // the score reaches the policy's threshold. Many small ones never make a deny.
    let mut score = 0u32;
    let mut lesser = Vec::new();
    let remedy = "read the value from the environment or a secret store at run time instead of writing it out.";
    for (key, text) in all {
        let field = if key.is_empty() { "input".to_string() } else { format!("`{key}`") };
        for f in scanner.scan(text) {
            let what = format!("{} (`{}`, line {})", f.description, f.rule, f.line);
            if f.severity == loopguard_secrets::Severity::Critical {
                out.push(
                    Finding::new(
                        SECRET_IN_ARGUMENTS,
                        Verdict::Deny,
                        RiskLevel::Critical,
                        format!("`{}` {field} holds a {what}.", call.tool),
                    )
                    .with_remedy(remedy),
                );
            } else {
                score = score.saturating_add(f.severity.weight());
                lesser.push(format!("{field}: {what}"));
            }
        }
    }
    if score >= ask_score {
        out.push(
            Finding::new(
                SECRET_IN_ARGUMENTS,
                Verdict::Ask,
                RiskLevel::High,
                format!("`{}` arguments hold secrets (score {score} ≥ {ask_score}): {}.", call.tool, lesser.join("; ")),
            )
            .with_remedy(remedy),
        );
    }
    out
}

/// Files under `base` that a search tool's `glob` selects, as ripgrep reads it: a glob without
/// `/` matches file names at any depth, one with `/` the path below `base`. Bounded: depth 8,
/// 4096 entries, 16 matches.
fn glob_matches(base: &std::path::Path, glob: &str) -> Vec<std::path::PathBuf> {
    let Ok(m) =
        globset::GlobBuilder::new(glob).literal_separator(glob.contains('/')).build().map(|g| g.compile_matcher())
    else {
        return Vec::new();
    };
    if base.is_file() {
        return if m.is_match(base.file_name().unwrap_or_default()) { vec![base.to_path_buf()] } else { Vec::new() };
    }
    let (mut out, mut seen) = (Vec::new(), 0usize);
    let mut stack = vec![(base.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.filter_map(Result::ok) {
            seen += 1;
            if seen > 4096 || out.len() >= 16 {
                return out;
            }
            let path = e.path();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                if depth < 8 && e.file_name() != ".git" {
                    stack.push((path, depth + 1));
                }
                continue;
            }
            let hit = if glob.contains('/') {
                path.strip_prefix(base).is_ok_and(|r| m.is_match(r))
            } else {
                m.is_match(e.file_name())
            };
            if hit {
                out.push(path);
            }
        }
    }
    out
}

/// `~/x` and `$HOME/x` in a tool's path mean the home directory, whatever the tool itself does
/// with them: check the place they could reach.
fn expand_home(p: &str, home: Option<&std::path::Path>) -> String {
    let Some(h) = home.and_then(|h| h.to_str()) else { return p.to_string() };
    for prefix in ["~/", "$HOME/", "${HOME}/"] {
        if let Some(rest) = p.strip_prefix(prefix) {
            return format!("{h}/{rest}");
        }
    }
    if matches!(p, "~" | "$HOME" | "${HOME}") { h.to_string() } else { p.to_string() }
}

fn invalid_input(tool: &str, what: &str) -> Finding {
    Finding::new(
        TOOL_INPUT_INVALID,
        Verdict::Deny,
        RiskLevel::High,
        format!("`{tool}` input cannot be checked: {what}."),
    )
}

#[cfg(test)]
mod tests;
