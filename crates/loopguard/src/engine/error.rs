//! The hook's one error type, and the one place an error becomes a deny.

use loopguard_core::Decision;
use loopguard_core::reasons::*;
use std::fmt;

/// Why a hook call could not be decided. Every variant ends the call in a deny
/// ([`HookError::decision`]); the host adapter only chooses how to render it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookError {
    /// The host's input is not what its protocol says (not UTF-8, not JSON, a field missing).
    InputInvalid(String),
    /// The input is larger than loopguard reads.
    InputTooLarge(usize),
    /// An event loopguard does not handle.
    UnknownEvent(String),
    /// The hook's own command line is wrong.
    Usage(String),
    /// The state home cannot be found, read or updated.
    StateUnavailable(String),
    /// The audit log cannot be written.
    AuditWrite(String),
    /// The audit checkpoint could not be signed or written.
    Checkpoint(String),
    /// No decision within the deadline (milliseconds).
    Deadline(u128),
    /// loopguard failed internally (a panic, a sandbox wrap that could not be built).
    Internal(String),
}

impl HookError {
    /// The stable reason code (docs/reason-codes.md).
    pub fn code(&self) -> &'static str {
        match self {
            HookError::InputInvalid(_) => HOOK_INPUT_INVALID,
            HookError::InputTooLarge(_) => HOOK_INPUT_TOO_LARGE,
            HookError::UnknownEvent(_) => HOOK_UNKNOWN_EVENT,
            HookError::StateUnavailable(_) => STATE_UNAVAILABLE,
            HookError::AuditWrite(_) | HookError::Checkpoint(_) => AUDIT_WRITE_FAILED,
            HookError::Deadline(_) => HOOK_DEADLINE_EXCEEDED,
            HookError::Usage(_) | HookError::Internal(_) => INTERNAL_ERROR,
        }
    }

    /// Input errors are recorded in the audit log (when there is one to write to); the others
    /// are failures of the log or the state themselves, or have no workspace.
    pub fn is_input_error(&self) -> bool {
        matches!(self, HookError::InputInvalid(_) | HookError::InputTooLarge(_) | HookError::UnknownEvent(_))
    }

    /// The deny this error answers with: the only conversion from an error to a decision in the
    /// hook path.
    pub fn decision(&self) -> Decision {
        Decision::fail_closed(self.code(), self.to_string())
    }
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookError::InputInvalid(m)
            | HookError::UnknownEvent(m)
            | HookError::Usage(m)
            | HookError::StateUnavailable(m)
            | HookError::AuditWrite(m)
            | HookError::Internal(m) => f.write_str(m),
            HookError::InputTooLarge(max) => write!(f, "the hook input is larger than {max} bytes"),
            HookError::Checkpoint(m) => write!(f, "the audit checkpoint failed: {m}"),
            HookError::Deadline(ms) => {
                write!(f, "loopguard did not decide within its {ms} ms deadline; the call is denied.")
            }
        }
    }
}

impl std::error::Error for HookError {}
