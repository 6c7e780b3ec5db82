use crate::{AutonomyLevel, RiskLevel};
use serde::{Deserialize, Serialize};

/// What happens to a call. Ordered `Allow < Ask < Deny`; combining takes the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The call may run.
    Allow,
    /// A human must confirm (in non-interactive hosts this acts as a deny).
    Ask,
    /// The call must not run.
    Deny,
}

impl Verdict {
    /// The stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }

    /// Parses a policy value.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "allow" => Some(Verdict::Allow),
            "ask" => Some(Verdict::Ask),
            "deny" => Some(Verdict::Deny),
            _ => None,
        }
    }
}

/// One reason behind a decision: a stable kebab-case code, a message for the agent, and what would
/// make the call pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    /// Stable kebab-case code, documented in docs/reason-codes.md (or a policy rule's own code).
    pub code: String,
    /// What this reason alone asks for.
    pub verdict: Verdict,
    /// How risky the thing it found is.
    pub risk: RiskLevel,
    /// What was found, in words the agent can act on.
    pub message: String,
    /// What would make the call pass: a narrower command, a grant, a human.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remedy: Option<String>,
    /// The path or target the reason is about, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The policy pattern that matched, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

/// What a check reports. Checks return findings; only the gate turns them into a [`Decision`].
pub type Finding = Reason;

impl Reason {
    /// A finding with no remedy.
    pub fn new(code: impl Into<String>, verdict: Verdict, risk: RiskLevel, message: impl Into<String>) -> Self {
        Reason { code: code.into(), verdict, risk, message: message.into(), remedy: None, target: None, pattern: None }
    }

    /// Names the target and the pattern that matched it.
    pub fn with_target(mut self, target: impl Into<String>, pattern: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self.pattern = Some(pattern.into());
        self
    }

    /// Adds what would make the call pass.
    pub fn with_remedy(mut self, remedy: impl Into<String>) -> Self {
        self.remedy = Some(remedy.into());
        self
    }
}

/// The outcome of evaluating one call. An `Allow` can only come out of a completed
/// [`crate::Gate::evaluate`]; anything else can only produce a deny ([`Decision::fail_closed`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    verdict: Verdict,
    risk: RiskLevel,
    required: AutonomyLevel,
    /// `None` when the breaker stops everything.
    effective: Option<AutonomyLevel>,
    reasons: Vec<Reason>,
    /// Rule codes a break-glass waived for this call.
    waived: Vec<String>,
    /// The grant that pre-authorised this call, when one did.
    granted: Option<i64>,
    /// Rule codes whose asks yolo approved.
    yolo_approved: Vec<String>,
    /// The call reaches the network (from the shell analysis).
    network: bool,
    /// The call runs code the analysis cannot see into: if allowed, only inside the sandbox.
    confined: bool,
    /// The files the call is predicted to write, create or delete (resolved): the step journal
    /// keeps their pre-images.
    #[serde(skip)]
    writes: Vec<std::path::PathBuf>,
}

impl Decision {
    /// Combines findings: the strictest verdict wins; reasons are ordered strictest first, and
    /// findings that ask for `Allow` are kept out of the reasons.
    pub(crate) fn from_findings(
        findings: Vec<Reason>,
        base_risk: RiskLevel,
        required: AutonomyLevel,
        effective: Option<AutonomyLevel>,
    ) -> Self {
        let verdict = findings.iter().map(|f| f.verdict).max().unwrap_or(Verdict::Allow);
        let risk = findings.iter().map(|f| f.risk).fold(base_risk, std::cmp::max);
        let mut reasons: Vec<Reason> = findings.into_iter().filter(|f| f.verdict > Verdict::Allow).collect();
        // Stable sort keeps the order checks ran in among equals.
        reasons.sort_by(|a, b| b.verdict.cmp(&a.verdict).then(b.risk.cmp(&a.risk)));
        Decision {
            verdict,
            risk,
            required,
            effective,
            reasons,
            waived: Vec::new(),
            granted: None,
            yolo_approved: Vec::new(),
            network: false,
            confined: false,
            writes: Vec::new(),
        }
    }

    pub(crate) fn with_waived(mut self, waived: Vec<String>) -> Self {
        self.waived = waived;
        self
    }

    pub(crate) fn with_granted(mut self, granted: Option<i64>) -> Self {
        self.granted = granted;
        self
    }

    pub(crate) fn with_network(mut self, network: bool) -> Self {
        self.network = network;
        self
    }

    pub(crate) fn with_writes(mut self, writes: Vec<std::path::PathBuf>) -> Self {
        self.writes = writes;
        self
    }

    /// The files the call is predicted to write, create or delete (resolved; a shell command's
    /// targets known only at run time are not among them).
    pub fn writes(&self) -> &[std::path::PathBuf] {
        &self.writes
    }

    pub(crate) fn with_confined(mut self, confined: bool) -> Self {
        self.confined = confined;
        self
    }

    /// Whether the call runs code the analysis cannot see into, so that it may run only inside
    /// loopguard's kernel sandbox (the host must wrap it, or not run it).
    pub fn must_confine(&self) -> bool {
        self.confined
    }

    /// Whether the call gets the network in `loopguard exec`: only when the analysis names a
    /// need — a network tool or remote target it saw, or a command whose job is to download (a
    /// package install, `git fetch`, a package runner). Builds, tests and code the analysis cannot
    /// see into run without it.
    pub fn network(&self) -> bool {
        self.network
    }

    pub(crate) fn with_yolo(mut self, approved: Vec<String>) -> Self {
        self.yolo_approved = approved;
        self
    }

    /// Rule codes whose asks yolo approved for this call (empty when yolo did nothing).
    pub fn yolo_approved(&self) -> &[String] {
        &self.yolo_approved
    }

    /// The grant that pre-authorised this call (turned its asks into an allow), if any.
    pub fn granted(&self) -> Option<i64> {
        self.granted
    }

    /// Rule codes a break-glass waived for this call (they would otherwise have asked or denied).
    pub fn waived(&self) -> &[String] {
        &self.waived
    }

    /// A deny that does not come from an evaluation: internal errors, bad input, deadlines.
    pub fn fail_closed(code: impl Into<String>, message: impl Into<String>) -> Self {
        Decision {
            verdict: Verdict::Deny,
            risk: RiskLevel::Critical,
            required: AutonomyLevel::Observe,
            effective: None,
            reasons: vec![Reason::new(code, Verdict::Deny, RiskLevel::Critical, message)],
            waived: Vec::new(),
            granted: None,
            yolo_approved: Vec::new(),
            network: false,
            confined: false,
            writes: Vec::new(),
        }
    }

    /// Turns this decision into a deny with an extra reason (e.g. the audit event could not be written).
    pub fn escalate_to_deny(mut self, reason: Reason) -> Self {
        self.verdict = Verdict::Deny;
        self.risk = self.risk.max(reason.risk);
        self.reasons.insert(0, reason);
        self
    }

    /// Adds a reason found after the gate decided (by a check that needs the state home, such as
    /// the advisory gate): the verdict can only get stricter.
    pub fn escalate(mut self, reason: Reason) -> Self {
        self.verdict = self.verdict.max(reason.verdict);
        self.risk = self.risk.max(reason.risk);
        let at = self.reasons.iter().position(|r| r.verdict < reason.verdict).unwrap_or(self.reasons.len());
        self.reasons.insert(at, reason);
        self
    }

    /// Allow, ask or deny.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The highest risk among the findings and the tool's own level.
    pub fn risk(&self) -> RiskLevel {
        self.risk
    }

    /// The autonomy level the call needs.
    pub fn required_level(&self) -> AutonomyLevel {
        self.required
    }

    /// min(policy level, breaker cap); `None` when the breaker stops everything.
    pub fn effective_level(&self) -> Option<AutonomyLevel> {
        self.effective
    }

    /// Reasons for ask and deny, strictest first. Empty for a plain allow.
    pub fn reasons(&self) -> &[Reason] {
        &self.reasons
    }

    /// The reason codes, strictest first.
    pub fn codes(&self) -> Vec<String> {
        self.reasons.iter().map(|r| r.code.clone()).collect()
    }

    /// One text for the agent: every reason with its code, message and remedy.
    pub fn explain(&self) -> String {
        if self.reasons.is_empty() {
            return "loopguard: allowed".to_string();
        }
        let head = match self.verdict {
            Verdict::Deny => "loopguard blocked this call",
            Verdict::Ask => "loopguard needs a human to confirm this call",
            Verdict::Allow => "loopguard allowed this call",
        };
        let mut out = String::from(head);
        out.push(':');
        for r in &self.reasons {
            out.push_str("\n- [");
            out.push_str(&r.code);
            out.push_str("] ");
            out.push_str(&r.message);
            if let Some(remedy) = &r.remedy {
                out.push_str(" To proceed: ");
                out.push_str(remedy);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(code: &str, v: Verdict, r: RiskLevel) -> Reason {
        Reason::new(code, v, r, code)
    }

    #[test]
    fn strictest_finding_wins_and_orders_reasons() {
        let d = Decision::from_findings(
            vec![
                f("a", Verdict::Ask, RiskLevel::Medium),
                f("b", Verdict::Deny, RiskLevel::High),
                f("c", Verdict::Allow, RiskLevel::Low),
            ],
            RiskLevel::Low,
            AutonomyLevel::Implement,
            Some(AutonomyLevel::Pr),
        );
        assert_eq!(d.verdict(), Verdict::Deny);
        assert_eq!(d.codes(), vec!["b", "a"]);
        assert_eq!(d.risk(), RiskLevel::High);
    }

    #[test]
    fn no_findings_is_allow_with_base_risk() {
        let d = Decision::from_findings(vec![], RiskLevel::Medium, AutonomyLevel::Implement, Some(AutonomyLevel::Pr));
        assert_eq!(d.verdict(), Verdict::Allow);
        assert_eq!(d.risk(), RiskLevel::Medium);
        assert!(d.reasons().is_empty());
    }

    #[test]
    fn combining_is_monotone() {
        // Adding a finding never makes a decision less strict.
        let all = [Verdict::Allow, Verdict::Ask, Verdict::Deny];
        for a in all {
            for b in all {
                let one = Decision::from_findings(
                    vec![f("x", a, RiskLevel::Low)],
                    RiskLevel::Low,
                    AutonomyLevel::Observe,
                    None,
                );
                let two = Decision::from_findings(
                    vec![f("x", a, RiskLevel::Low), f("y", b, RiskLevel::Low)],
                    RiskLevel::Low,
                    AutonomyLevel::Observe,
                    None,
                );
                assert!(two.verdict() >= one.verdict());
            }
        }
    }

    #[test]
    fn fail_closed_is_a_deny_with_its_code() {
        let d = Decision::fail_closed("internal-error", "boom");
        assert_eq!(d.verdict(), Verdict::Deny);
        assert_eq!(d.codes(), vec!["internal-error"]);
        assert!(d.explain().contains("[internal-error] boom"));
    }
}
