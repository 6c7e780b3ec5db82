use serde::{Deserialize, Serialize};

/// How much harm a call can do if it goes wrong. Ordered: `Low < Medium < High < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RiskLevel {
    /// Reads and bookkeeping.
    Low,
    /// Workspace writes, network reads.
    Medium,
    /// Shell commands, external tools, anything with wide effects.
    High,
    /// Destroys data or history, or escapes confinement.
    Critical,
}

impl RiskLevel {
    /// The stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }
}
