//! The stable reason codes loopguard itself emits. Each is documented in docs/reason-codes.md
//! (a test keeps the two in step). Policy `[[commands]]` rules add codes of their own.

/// A built-in reason code and a one-line description.
#[derive(Debug, Clone, Copy)]
pub struct ReasonCode {
    /// The stable kebab-case code.
    pub code: &'static str,
    /// What it means.
    pub summary: &'static str,
}

macro_rules! codes {
    ($($konst:ident = $code:literal : $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub const $konst: &str = $code;
        )*
        /// Every built-in reason code.
        pub const REASON_CODES: &[ReasonCode] = &[$(ReasonCode { code: $code, summary: $summary }),*];
    };
}

codes! {
    INTERNAL_ERROR = "internal-error": "loopguard failed internally while deciding; the call is denied (fail closed).";
    POLICY_INVALID = "policy-invalid": "A policy file exists but does not load or validate; every call is denied until it is fixed.";
    UNKNOWN_TOOL = "unknown-tool": "The tool is not in loopguard's table and the policy has no entry for it; the policy's `unknown_tool` decides.";
    TOOL_POLICY = "tool-policy": "The policy's `[tools]` table sets ask or deny for this tool.";
    TOOL_INPUT_INVALID = "tool-input-invalid": "The tool's input lacks a field the gate needs to check it, or has the wrong type.";
    AUTONOMY_EXCEEDED = "autonomy-exceeded": "The call needs a higher autonomy level than min(policy level, breaker cap).";
    BREAKER_STOPPED = "breaker-stopped": "The run's circuit breaker is stopped; nothing runs until a human resets it.";
    SHELL_UNPARSABLE = "shell-unparsable": "The shell command could not be split into words (unbalanced quotes, too deep, too long).";
    SHELL_DYNAMIC = "shell-dynamic-command": "A program name, an rm target or a redirection target is only known at run time (a variable or a command substitution).";
    SHELL_TOO_LARGE = "shell-too-large": "The shell command is longer than the analysis limit.";
    DESTRUCTIVE_RM_ROOT = "destructive-rm-root": "Recursive or forced rm of the filesystem root.";
    DESTRUCTIVE_RM_HOME = "destructive-rm-home": "Recursive or forced rm of the home directory.";
    DESTRUCTIVE_RM_PARENT = "destructive-rm-parent": "Recursive or forced rm of a parent directory (`..`).";
    DESTRUCTIVE_RM_WORKSPACE = "destructive-rm-workspace": "Recursive or forced rm of the workspace root itself.";
    DESTRUCTIVE_GIT_PUSH_FORCE = "destructive-git-push-force": "git push that overwrites remote history (--force, -f, --force-with-lease, +refspec, --mirror).";
    DESTRUCTIVE_GIT_RESET_HARD = "destructive-git-reset-hard": "git reset --hard discards uncommitted work.";
    PATH_OUTSIDE_WORKSPACE = "path-outside-workspace": "A write target resolves (symlinks followed) outside every workspace root.";
    HOOK_INPUT_INVALID = "hook-input-invalid": "The hook's stdin is not the JSON object the host protocol describes.";
    HOOK_INPUT_TOO_LARGE = "hook-input-too-large": "The hook's stdin is larger than 1 MiB.";
    HOOK_UNKNOWN_EVENT = "hook-unknown-event": "The hook event name is not one loopguard handles.";
    HOOK_DEADLINE_EXCEEDED = "hook-deadline-exceeded": "loopguard did not decide within its own deadline; the call is denied.";
    AUDIT_WRITE_FAILED = "audit-write-failed": "The audit event could not be written; without evidence the call is denied.";
    STATE_UNAVAILABLE = "state-unavailable": "The state home cannot be found or created.";
}

/// The built-in rule codes whose decision a policy `[rules]` table may set.
pub const CONFIGURABLE_RULES: &[&str] = &[
    DESTRUCTIVE_RM_ROOT,
    DESTRUCTIVE_RM_HOME,
    DESTRUCTIVE_RM_PARENT,
    DESTRUCTIVE_RM_WORKSPACE,
    DESTRUCTIVE_GIT_PUSH_FORCE,
    DESTRUCTIVE_GIT_RESET_HARD,
    PATH_OUTSIDE_WORKSPACE,
    SHELL_UNPARSABLE,
    SHELL_DYNAMIC,
];

/// Whether a code is a built-in reason code.
pub fn is_builtin(code: &str) -> bool {
    REASON_CODES.iter().any(|c| c.code == code)
}

/// Whether a code is kebab-case: lowercase ASCII letters and digits in dash-separated words.
pub fn is_kebab_case(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 64
        && code.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}
