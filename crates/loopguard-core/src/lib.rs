//! The core of loopguard: the vocabulary (tool calls, decisions, risk, autonomy), the layered policy,
//! and [`Gate::evaluate`], which turns a [`ToolCall`] into a [`Decision`] and cannot fail.
//!
//! ```
//! use loopguard_core::{Action, Gate, Policy, ToolCall, Context, Verdict};
//! let policy = Policy::builtin();
//! let gate = Gate::new(&policy);
//! let command = "rm -rf /".to_string();
//! let call = ToolCall::new("Bash", Action::Shell { command }, serde_json::json!({"command": "rm -rf /"}), "/work/project");
//! let ctx = Context::new("/work/project");
//! let decision = gate.evaluate(&call, &ctx);
//! assert_eq!(decision.verdict(), Verdict::Deny);
//! assert_eq!(decision.reasons()[0].code, "destructive-rm-root");
//! ```

mod action;
pub mod advisories;
mod autonomy;
pub mod breaker;
mod call;
pub mod checks;
mod decision;
mod gate;
pub mod merge;
pub mod packs;
pub mod permissions;
pub mod policy;
pub mod reasons;
mod risk;
#[cfg(test)]
mod testing;
mod tools;

pub use action::{Action, Change, Edit, FileChange, ToolKind};
pub use autonomy::{AutonomyLevel, BreakerPosition, ExecutionMode};
pub use call::{Context, Dns, ToolCall, Waiver, Worktree, WorktreeRef};
pub use decision::{Decision, Finding, Reason, Verdict};
pub use gate::Gate;
pub use policy::Policy;
pub use reasons::{REASON_CODES, ReasonCode};
pub use risk::RiskLevel;
pub use tools::ToolMetadata;
