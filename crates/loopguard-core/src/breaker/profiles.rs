//! The two shipped breaker profiles. docs/breakers.md shows them as a table; a test keeps the
//! two in step.

use super::{BreakerRule, ResetRule, Trigger, TripAction};

/// A named set of breaker rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Unattended loops: the seed defaults. Tight, every trip needs a human, stops revert.
    Loop,
    /// A human at the keyboard (the default): looser limits, mild trips clear on their own.
    Interactive,
}

impl Profile {
    /// The policy name.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Loop => "loop",
            Profile::Interactive => "interactive",
        }
    }

    /// Parses a policy name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "loop" => Some(Profile::Loop),
            "interactive" => Some(Profile::Interactive),
            _ => None,
        }
    }

    /// How strict the profile is (loop is stricter): a project policy may only raise it.
    pub fn strictness(self) -> u8 {
        match self {
            Profile::Interactive => 0,
            Profile::Loop => 1,
        }
    }

    /// The profile's rules.
    pub fn rules(self) -> Vec<BreakerRule> {
        use Trigger::*;
        use TripAction::*;
        let rule = |trigger, threshold, action, reset: ResetRule, cooldown: u64, revert: bool| BreakerRule {
            reset,
            cooldown,
            revert: revert && action == Stop,
            ..BreakerRule::new(trigger, threshold, action)
        };
        let (m, a) = (ResetRule::Manual, ResetRule::Auto);
        match self {
            Profile::Loop => vec![
                rule(Steps, 20.0, Stop, m, 600, true),
                rule(WallClock, 900.0, Stop, m, 600, true),
                rule(RunUsd, 1.50, Stop, m, 600, true),
                rule(RunTokens, 250_000.0, Stop, m, 600, true),
                rule(DailyUsd, 20.0, Stop, m, 600, true),
                BreakerRule { window: Some(300), min_volume: 3, ..rule(SpendVelocity, 1.0, ReadOnly, m, 600, false) },
                rule(ConsecutiveBlocks, 5.0, Stop, m, 600, true),
                rule(SecretFindings, 3.0, ReadOnly, m, 600, false),
                rule(SelfProtection, 1.0, Stop, m, 600, true),
                rule(PingPong, 3.0, Stop, m, 600, true),
                rule(TestDegradation, 1.0, Stop, m, 600, true),
                rule(EvidenceFailures, 1.0, Stop, m, 600, true),
                rule(Denylist, 1.0, Stop, m, 600, false),
                rule(Canary, 1.0, Stop, m, 600, true),
                rule(ApprovalDrift, 1.0, ReadOnly, m, 600, false),
            ],
            Profile::Interactive => vec![
                rule(Steps, 500.0, RequireApproval, a, 600, false),
                rule(WallClock, 14_400.0, RequireApproval, a, 600, false),
                rule(RunUsd, 25.0, RequireApproval, a, 600, false),
                rule(RunTokens, 5_000_000.0, RequireApproval, a, 600, false),
                rule(DailyUsd, 100.0, ReadOnly, m, 600, false),
                BreakerRule {
                    window: Some(600),
                    min_volume: 3,
                    ..rule(SpendVelocity, 5.0, RequireApproval, a, 600, false)
                },
                rule(ConsecutiveBlocks, 5.0, Stop, m, 600, false),
                rule(SecretFindings, 5.0, RequireApproval, a, 600, false),
                rule(SelfProtection, 3.0, ReadOnly, m, 600, false),
                rule(PingPong, 4.0, RequireApproval, a, 600, false),
                rule(TestDegradation, 1.0, RequireApproval, a, 300, false),
                rule(EvidenceFailures, 1.0, ReadOnly, m, 600, false),
                rule(Denylist, 1.0, Stop, m, 600, false),
                rule(Canary, 1.0, Stop, m, 600, false),
                rule(ApprovalDrift, 1.0, ReadOnly, m, 600, false),
            ],
        }
    }
}
