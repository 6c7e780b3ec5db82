//! The stable reason codes loopguard itself emits. Each is documented in docs/reason-codes.md
//! (a test keeps the two in step). Policy `[[commands]]` rules add codes of their own.

/// A built-in reason code and a one-line description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    BREAKER_STOPPED = "breaker-stopped": "The run's circuit breaker is stopped: the agent is paused (not failed) and nothing runs until the breaker is reset.";
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
    PATH_DENYLISTED = "path-denylisted": "Modifying, deleting or staging a path on the absolute denylist: denied, the denylist breaker stops the run (HOLD) until a human resets it, and STATE.md gets an escalation.";
    AUTORUN_FILE = "autorun-file": "Writing, editing or deleting a file a tool runs by itself later, outside any sandbox: CI workflows (on push, with the repository's secrets), direnv's `.envrc` (on `cd`), editor tasks and settings (on opening the folder), dev container lifecycle commands, git-hook managers (husky, pre-commit, lefthook). Asked in normal mode; denied unattended, where nobody can confirm it.";
    PATH_HARDLINK = "path-hardlink": "Writing a file that has several hard links (the other names may be outside the workspace).";
    SELF_PROTECTION = "self-protection": "Writing loopguard's policy, state or audit logs, the hosts' hook settings, or running a human-only loopguard subcommand.";
    SECRET_IN_ARGUMENTS = "secret-in-arguments": "A tool call's arguments carry a secret (a key in a Write, a token in a command line): critical secrets deny, high ones ask.";
    SECRET_IN_CONTENT = "secret-in-content": "The host hands the model a file's whole content with the read, and cannot hand it a redacted copy: a file holding a secret is not read. The reason names the kind of secret, never the value.";
    SECRET_IN_OUTGOING = "secret-in-outgoing": "What a command would send holds a secret: the staged changes of `git commit`, the commits `git push` would publish (not yet on a remote), a file that `gh` or an HTTP client would upload (`--body-file`, `gh gist create`, `curl -d @file`, `-T`). Critical secrets deny, high ones ask; the reason names file, line and kind, never the value. Staging (`git add`, `-f` included) a file the policy calls secret asks.";
    VULNERABLE_DEPENDENCY = "vulnerable-dependency": "The call adds or changes a dependency (crates.io, npm, PyPI, Go; by command or manifest/lockfile edit) whose version, or the lowest version its requirement admits, has a known advisory in the offline OSV data: `[advisories] action` (ask), deny from `deny_cvss` (9.0); the reason names the fixed version. Data that cannot be read asks.";
    APPROVAL_DRIFT = "approval-drift": "The control plane (policy files, the loopguard binary and hook settings, `.claude/settings*.json`, `.mcp.json`, `.codex/`, `.gemini/`) no longer matches the hashes a human approved with `loopguard approve`: every call that writes or runs is denied and the `approval_drift` breaker trips (read-only) until a human re-approves.";
    ADVISORY_DATA_MISSING = "advisory-data-missing": "The call changes dependencies and no advisory data is imported, and `[advisories] missing` says to ask or deny (the default, allow, only notes it in the audit).";
    CANARY_TRIPPED = "canary-tripped": "The call carries a canary credential that `loopguard exec` planted, or reads its canary file: an exfiltration attempt. Denied, and the canary breaker stops the run.";
    SSRF_UNRESOLVED = "ssrf-unresolved": "The host name of a URL a fetch tool is asked to read did not resolve within the hook's wait, so its addresses could not be checked; a human decides.";
    NETWORK_REMOTE_WRITE = "network-remote-write": "An HTTP client (curl, wget, HTTPie, xh) sends a request that changes something on a remote host (POST, PUT, PATCH or another writing method, a body or an upload).";
    NETWORK_REMOTE_DELETE = "network-remote-delete": "An HTTP client sends a DELETE request to a remote host: something on a remote service is destroyed.";
    NETWORK_REMOTE_FETCH = "network-remote-fetch": "An HTTP client reads from a remote host (GET or HEAD): medium risk, like WebFetch, so a present human confirms it in normal mode.";
    SSRF_INTERNAL = "ssrf-internal-address": "A URL or network target (WebFetch, curl, wget, ssh, nc, …) is a private, loopback, link-local, cloud-metadata or other special-purpose address, or an internal-only name.";
    MERGE_NOT_ELIGIBLE = "merge-not-eligible": "A merge (or push to a protected branch) at the `merge` level is allowed only for a change `loopguard merge-check` finds eligible; this one is not, or cannot be checked.";
    CONFIRMATION_REQUIRED = "confirmation-required": "In normal mode a call of medium risk or more needs the human's confirmation unless a grant covers it (in auto-edit mode, workspace edits do not).";
    BREAKER_REQUIRE_APPROVAL = "breaker-require-approval": "A tripped circuit breaker requires approval: a call that would be allowed is asked instead.";
    HOOK_INPUT_INVALID = "hook-input-invalid": "The hook's stdin is not the JSON object the host protocol describes.";
    HOOK_INPUT_TOO_LARGE = "hook-input-too-large": "The hook's stdin is larger than 1 MiB.";
    HOOK_UNKNOWN_EVENT = "hook-unknown-event": "The hook event name is not one loopguard handles.";
    HOOK_DEADLINE_EXCEEDED = "hook-deadline-exceeded": "loopguard did not decide within its own deadline; the call is denied.";
    HOST_CANNOT_ASK = "host-cannot-ask": "The gate would ask a human, but this host cannot ask (it would hang or proceed): the call is denied instead.";
    AUDIT_WRITE_FAILED = "audit-write-failed": "The audit event could not be written; without evidence the call is denied.";
    STATE_UNAVAILABLE = "state-unavailable": "The state home cannot be found or created.";
    JOURNAL_UNAVAILABLE = "journal-unavailable": "The step journal could not keep a pre-image of what the call may destroy (too large, unreadable, disk full); the call is asked in normal mode and denied unattended, never run unprotected.";
    DESTRUCTIVE_DD_DEVICE = "destructive-dd-device": "`dd` writes to a device (`of=/dev/…`).";
    DESTRUCTIVE_CHMOD_RECURSIVE = "destructive-chmod-recursive": "Recursive chmod/chown/chgrp of `/`, home, a parent of the workspace or the workspace.";
    DESTRUCTIVE_FIND_DELETE = "destructive-find-delete": "`find -delete` under `/`, home, a parent of the workspace or the workspace.";
    DESTRUCTIVE_RSYNC_DELETE = "destructive-rsync-delete": "`rsync --delete` into `/`, home, a parent of the workspace or the workspace.";
    DESTRUCTIVE_DISK_FORMAT = "destructive-disk-format": "mkfs, wipefs, fdisk, parted and the like: formats or repartitions a disk.";
    DESTRUCTIVE_FORK_BOMB = "destructive-fork-bomb": "A function that pipes into itself in the background: a fork bomb.";
    DESTRUCTIVE_KILL_ALL = "destructive-kill-all": "`kill -1` / `killall5`: signals every process.";
    DESTRUCTIVE_SHUTDOWN = "destructive-shutdown": "shutdown, reboot, halt, poweroff, `init 0|6`, `systemctl poweroff|reboot`.";
    DESTRUCTIVE_CRONTAB_REMOVE = "destructive-crontab-remove": "`crontab -r` deletes every scheduled job.";
    DESTRUCTIVE_FIREWALL_FLUSH = "destructive-firewall-flush": "Flushing or disabling the firewall (`iptables -F`, `nft flush ruleset`, `ufw disable`).";
    DESTRUCTIVE_GIT_PUSH_DELETE = "destructive-git-push-delete": "`git push --delete`, `:branch` refspecs or `--prune`: deletes refs on the remote.";
    DESTRUCTIVE_GIT_CLEAN = "destructive-git-clean": "`git clean -f` deletes untracked files.";
    DESTRUCTIVE_GIT_BRANCH_DELETE = "destructive-git-branch-delete": "`git branch -D` deletes a branch whatever its merge state.";
    DESTRUCTIVE_GIT_DISCARD = "destructive-git-discard": "`git checkout -- <paths>`, `checkout .`, `checkout -f`, `restore`, `switch --discard-changes`: discards uncommitted changes.";
    DESTRUCTIVE_GIT_STASH_DROP = "destructive-git-stash-drop": "`git stash drop` / `clear` throws stashed work away.";
    DESTRUCTIVE_GIT_HISTORY_REWRITE = "destructive-git-history-rewrite": "filter-branch, filter-repo, `reflog expire`, `gc --prune=now`, `update-ref -d`.";
    DESTRUCTIVE_FORGE_DELETE = "destructive-forge-delete": "Deleting on a forge or registry: `gh repo delete`, `gh release delete`, `npm unpublish`, `gh api -X DELETE`.";
    DESTRUCTIVE_INFRA = "destructive-infra": "Destroying infrastructure: terraform/pulumi destroy, kubectl delete, helm uninstall, cloud deletes, docker prune.";
    DESTRUCTIVE_DB = "destructive-db": "SQL that drops, truncates or deletes every row; redis FLUSHALL/FLUSHDB; mongo drops.";
    CREDENTIAL_READ = "credential-read": "Reading credentials: ~/.ssh keys, cloud credentials, .env files, private keys, /proc/*/environ, printing secret variables.";
    EXFIL_UPLOAD = "exfil-upload": "Uploading a local file to a remote host (curl -d @f, -F x=@f, -T f, wget --post-file, scp).";
    EXFIL_PIPE = "exfil-pipe": "The environment or a credential piped or substituted into a network tool.";
    EXFIL_REVERSE_SHELL = "exfil-reverse-shell": "A shell handed to a network peer: `nc -e`, socat EXEC, redirections to /dev/tcp or /dev/udp.";
    SHELL_REMOTE_CODE = "shell-remote-code": "Code fetched from the network is executed (`curl … | sh`, `bash <(wget …)`, `sh -c \"$(curl …)\"`).";
    SHELL_OBFUSCATED_EXEC = "shell-obfuscated-exec": "Decoded or decompressed data is executed (`base64 -d | sh`, `xxd -r | bash`).";
    SHELL_REMOTE_EXEC = "shell-remote-exec": "A command runs on another machine (`ssh host cmd`), outside every local check.";
    SHELL_OPAQUE_CODE = "shell-opaque-code": "The command runs the workspace's or a tool's code the analysis cannot see into (a script file, a package runner, interpreter code that uses real APIs); asked in normal mode, run only inside the kernel sandbox when unattended, denied there when it cannot be confined.";
    SHELL_HIDDEN_CODE = "shell-hidden-code": "Code reaches a shell or interpreter through a channel ordinary work does not use (a launcher, an exec option or configuration, code on stdin, names built at run time, a script written a moment earlier or outside the workspace); a human confirms it in every mode.";
    SHELL_INLINE_CODE = "shell-inline-code": "An interpreter runs inline code (`python -c`, `node -e`, …); allowed unless the policy says otherwise, destructive calls inside are checked.";
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
    DESTRUCTIVE_DD_DEVICE,
    DESTRUCTIVE_CHMOD_RECURSIVE,
    DESTRUCTIVE_FIND_DELETE,
    DESTRUCTIVE_RSYNC_DELETE,
    DESTRUCTIVE_DISK_FORMAT,
    DESTRUCTIVE_FORK_BOMB,
    DESTRUCTIVE_KILL_ALL,
    DESTRUCTIVE_SHUTDOWN,
    DESTRUCTIVE_CRONTAB_REMOVE,
    DESTRUCTIVE_FIREWALL_FLUSH,
    DESTRUCTIVE_GIT_PUSH_DELETE,
    DESTRUCTIVE_GIT_CLEAN,
    DESTRUCTIVE_GIT_BRANCH_DELETE,
    DESTRUCTIVE_GIT_DISCARD,
    DESTRUCTIVE_GIT_STASH_DROP,
    DESTRUCTIVE_GIT_HISTORY_REWRITE,
    DESTRUCTIVE_FORGE_DELETE,
    DESTRUCTIVE_INFRA,
    DESTRUCTIVE_DB,
    CREDENTIAL_READ,
    EXFIL_UPLOAD,
    EXFIL_PIPE,
    EXFIL_REVERSE_SHELL,
    SHELL_REMOTE_CODE,
    SHELL_OBFUSCATED_EXEC,
    SHELL_REMOTE_EXEC,
    SHELL_INLINE_CODE,
    SHELL_OPAQUE_CODE,
    SHELL_HIDDEN_CODE,
    PATH_HARDLINK,
    AUTORUN_FILE,
    SECRET_IN_ARGUMENTS,
    CONFIRMATION_REQUIRED,
    SSRF_INTERNAL,
    NETWORK_REMOTE_WRITE,
    NETWORK_REMOTE_DELETE,
    NETWORK_REMOTE_FETCH,
    VULNERABLE_DEPENDENCY,
    ADVISORY_DATA_MISSING,
    APPROVAL_DRIFT,
];

/// Whether a code is a built-in reason code.
pub fn is_builtin(code: &str) -> bool {
    REASON_CODES.iter().any(|c| c.code == code)
}

/// Whether a code is kebab-case: lowercase ASCII letters and digits in dash-separated words.
pub fn is_kebab_case(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 64
        && code.split('-').all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

/// Recognised destructive operations a present human may approve: in normal mode (the host asks
/// the human) they are asked instead of denied, unless the policy's `[rules]` sets their decision
/// (seed 002 safety-11). Pack rules are approvable too. Wiping `/`, the home or the workspace,
/// writing to disks, fork bombs, broad deletes by path and every backstop stay denied.
pub const HUMAN_APPROVABLE: &[&str] = &[
    DESTRUCTIVE_GIT_PUSH_FORCE,
    DESTRUCTIVE_GIT_RESET_HARD,
    DESTRUCTIVE_GIT_PUSH_DELETE,
    DESTRUCTIVE_GIT_CLEAN,
    DESTRUCTIVE_GIT_BRANCH_DELETE,
    DESTRUCTIVE_GIT_DISCARD,
    DESTRUCTIVE_GIT_STASH_DROP,
    DESTRUCTIVE_GIT_HISTORY_REWRITE,
    DESTRUCTIVE_FORGE_DELETE,
    DESTRUCTIVE_INFRA,
    DESTRUCTIVE_DB,
    DESTRUCTIVE_CRONTAB_REMOVE,
    DESTRUCTIVE_FIREWALL_FLUSH,
    DESTRUCTIVE_SHUTDOWN,
    NETWORK_REMOTE_DELETE,
];

/// A reason code, typed: one of loopguard's own (with its summary), or the code of a rule a policy
/// or a pack defines (which can never name a built-in: the policy reader refuses that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code<'a> {
    /// A built-in code.
    Builtin(&'static ReasonCode),
    /// A rule's own code.
    Rule(&'a str),
}

impl<'a> Code<'a> {
    /// The typed form of a code.
    pub fn of(code: &'a str) -> Self {
        REASON_CODES.iter().find(|r| r.code == code).map_or(Code::Rule(code), Code::Builtin)
    }

    /// The code as written.
    pub fn as_str(&self) -> &'a str {
        match self {
            Code::Builtin(r) => r.code,
            Code::Rule(c) => c,
        }
    }

    /// A backstop ([`BACKSTOPS`]): no break-glass waives it, no grant or yolo allows it.
    pub fn is_backstop(&self) -> bool {
        matches!(self, Code::Builtin(r) if BACKSTOPS.contains(&r.code))
    }
}

/// Rules no break-glass can waive (the forbidden backstops): loopguard protecting itself, secrets
/// leaving, the breaker and autonomy caps, fail-closed errors, and the unrecoverable commands.
pub const BACKSTOPS: &[&str] = &[
    INTERNAL_ERROR,
    POLICY_INVALID,
    TOOL_INPUT_INVALID,
    SELF_PROTECTION,
    SECRET_IN_ARGUMENTS,
    SECRET_IN_OUTGOING,
    BREAKER_STOPPED,
    BREAKER_REQUIRE_APPROVAL,
    AUTONOMY_EXCEEDED,
    SHELL_UNPARSABLE,
    SHELL_TOO_LARGE,
    DESTRUCTIVE_RM_ROOT,
    DESTRUCTIVE_RM_HOME,
    EXFIL_REVERSE_SHELL,
    SHELL_REMOTE_CODE,
    CANARY_TRIPPED,
    APPROVAL_DRIFT,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_typed_and_backstops_known() {
        assert_eq!(
            Code::of(SELF_PROTECTION),
            Code::Builtin(REASON_CODES.iter().find(|r| r.code == SELF_PROTECTION).unwrap())
        );
        assert!(Code::of(SELF_PROTECTION).is_backstop());
        assert!(Code::of(SECRET_IN_OUTGOING).is_backstop());
        assert!(!Code::of(DESTRUCTIVE_GIT_PUSH_FORCE).is_backstop());
        // A rule's own code is never a backstop, even when it looks like one.
        assert_eq!(Code::of("acme-wipe"), Code::Rule("acme-wipe"));
        assert!(!Code::of("acme-wipe").is_backstop());
        assert_eq!(Code::of("acme-wipe").as_str(), "acme-wipe");
        for b in BACKSTOPS {
            assert!(matches!(Code::of(b), Code::Builtin(_)), "{b} is not a registered code");
        }
    }
}
