use serde::{Deserialize, Serialize};

/// The autonomy ladder: how far an agent may act on its own. Compared by order, never by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AutonomyLevel {
    /// Read and look only.
    Observe,
    /// Propose changes without making them.
    Suggest,
    /// Change files in the workspace.
    Implement,
    /// Push branches and open pull requests.
    Pr,
    /// Merge, or push to a protected branch.
    Merge,
    /// Deploy to a staging environment.
    Stage,
    /// Publish releases and packages.
    Release,
    /// Change infrastructure and databases.
    Operate,
}

impl AutonomyLevel {
    /// Every level, lowest first.
    pub const ALL: [AutonomyLevel; 8] = [
        AutonomyLevel::Observe,
        AutonomyLevel::Suggest,
        AutonomyLevel::Implement,
        AutonomyLevel::Pr,
        AutonomyLevel::Merge,
        AutonomyLevel::Stage,
        AutonomyLevel::Release,
        AutonomyLevel::Operate,
    ];

    /// The stable lowercase name used in policy files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            AutonomyLevel::Observe => "observe",
            AutonomyLevel::Suggest => "suggest",
            AutonomyLevel::Implement => "implement",
            AutonomyLevel::Pr => "pr",
            AutonomyLevel::Merge => "merge",
            AutonomyLevel::Stage => "stage",
            AutonomyLevel::Release => "release",
            AutonomyLevel::Operate => "operate",
        }
    }

    /// Parses a policy name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// Where the run's circuit breaker stands. Ordered from most to least restricted:
/// `Stopped < ReadOnly < PrOnly < FullAuto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BreakerPosition {
    /// Nothing runs.
    Stopped,
    /// No writes.
    ReadOnly,
    /// Capped at opening pull requests.
    PrOnly,
    /// No cap from the breaker (policy still applies).
    FullAuto,
}

impl BreakerPosition {
    /// The highest autonomy level the breaker lets through, or `None` when nothing may run.
    pub fn cap(self) -> Option<AutonomyLevel> {
        match self {
            BreakerPosition::Stopped => None,
            BreakerPosition::ReadOnly => Some(AutonomyLevel::Observe),
            BreakerPosition::PrOnly => Some(AutonomyLevel::Pr),
            BreakerPosition::FullAuto => Some(AutonomyLevel::Operate),
        }
    }

    /// The stable name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerPosition::Stopped => "stopped",
            BreakerPosition::ReadOnly => "read-only",
            BreakerPosition::PrOnly => "pr-only",
            BreakerPosition::FullAuto => "full-auto",
        }
    }
}

/// How the host runs the agent. The same risk means different things in different modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionMode {
    /// The host asks the human for risky calls.
    Normal,
    /// The host accepts workspace edits on its own.
    AutoEdit,
    /// Planning only: nothing may change.
    Plan,
    /// The host asks nothing (Claude Code's `bypassPermissions`, unattended loops): no
    /// confirmation layer — loopguard's own findings alone decide what is asked or denied.
    Unattended,
    /// A human switched loopguard's yolo on (`loopguard yolo on`, always with an expiry): the
    /// gate's asks are approved automatically; its denies and every backstop still hold.
    Yolo,
}

impl ExecutionMode {
    /// The stable name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionMode::Normal => "normal",
            ExecutionMode::AutoEdit => "auto-edit",
            ExecutionMode::Plan => "plan",
            ExecutionMode::Unattended => "unattended",
            ExecutionMode::Yolo => "yolo",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_is_ordered_as_documented() {
        let mut sorted = AutonomyLevel::ALL;
        sorted.sort();
        assert_eq!(sorted, AutonomyLevel::ALL);
        assert!(AutonomyLevel::Observe < AutonomyLevel::Operate);
    }

    #[test]
    fn breaker_caps_are_monotone_in_position() {
        let positions =
            [BreakerPosition::Stopped, BreakerPosition::ReadOnly, BreakerPosition::PrOnly, BreakerPosition::FullAuto];
        for w in positions.windows(2) {
            assert!(w[0] < w[1]);
            assert!(w[0].cap() < w[1].cap());
        }
    }

    #[test]
    fn level_names_round_trip() {
        for l in AutonomyLevel::ALL {
            assert_eq!(AutonomyLevel::parse(l.as_str()), Some(l));
        }
        assert_eq!(AutonomyLevel::parse("PR"), None);
    }
}
