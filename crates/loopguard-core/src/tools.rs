use crate::action::{Action, ToolKind};
use crate::{AutonomyLevel, RiskLevel};

/// What loopguard knows about a tool before looking at its input: its kind's base risk and the
/// autonomy level it needs (a shell call's level comes from the analysis of its command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolMetadata {
    /// What it does.
    pub kind: ToolKind,
    /// Its base risk.
    pub risk: RiskLevel,
    /// The autonomy level it needs before its input is looked at.
    pub required: AutonomyLevel,
}

use AutonomyLevel as A;
use RiskLevel as R;
use ToolKind as K;

impl ToolMetadata {
    /// The metadata of an action (`None`: an unknown tool, which the policy's `unknown_tool`
    /// decides and which is assumed to write).
    pub fn of(action: &Action) -> Option<ToolMetadata> {
        let (risk, required) = match action {
            Action::Unknown => return None,
            // Reads need only observe; the analysis raises the level of what writes.
            Action::Shell { .. } => (R::High, A::Observe),
            Action::WriteFile { .. } | Action::Patch { .. } => (R::Medium, A::Implement),
            Action::Fetch { .. } => (R::Medium, A::Observe),
            Action::Mcp { .. } => (R::High, A::Implement),
            Action::Invalid { kind, .. } => return Some(Self::of_kind(*kind)),
            Action::ReadFile { .. } | Action::Search { .. } | Action::WebSearch | Action::Agent | Action::Meta => {
                (R::Low, A::Observe)
            }
        };
        action.kind().map(|kind| ToolMetadata { kind, risk, required })
    }

    /// The metadata of a kind of tool (for a tool whose input is invalid).
    pub fn of_kind(kind: ToolKind) -> ToolMetadata {
        let (risk, required) = match kind {
            K::Shell => (R::High, A::Observe),
            K::FileWrite => (R::Medium, A::Implement),
            K::Network => (R::Medium, A::Observe),
            K::Mcp => (R::High, A::Implement),
            K::FileRead | K::Search | K::Agent | K::Meta => (R::Low, A::Observe),
        };
        ToolMetadata { kind, risk, required }
    }
}
