//! Finding and redacting secrets in text: tool arguments before a call, tool output after it,
//! and everything loopguard itself writes.
//!
//! Pipeline: a case-insensitive literal prefilter (aho-corasick over every rule's keywords) →
//! each rule whose keyword occurs runs its regex only on the lines around the hit → the secret
//! is the rule's capture group → entropy and placeholder checks → a [`SecretFinding`] whose
//! fingerprint is a hash of the secret value (never its position).
//!
//! ```
//! let s = loopguard_secrets::Scanner::builtin();
//! let text = "export AWS_ACCESS_KEY_ID=AKIAQWERTYUIOPASDFG7";
//! let found = s.scan(text);
//! assert_eq!(found[0].rule, "aws-access-key-id");
//! assert!(!s.redact(text).contains("AKIAQWERTYUIOPASDFG7"));
//! ```

mod context;
pub mod files;
pub mod gitleaks;
mod rules;
pub mod ruleset;
mod scanner;
mod values;

pub use context::{KINDS as CONTEXT_KINDS, Kind as ContextKind, NameClass, classify_name, is_secret_name};
pub use rules::{BUILTIN_EXAMPLES, BUILTIN_RULES, Rule, Severity, check_builtin_examples};
pub use scanner::{
    AllowTarget, Allowlist, RuleSpec, Scanner, SecretFinding, Summary, asciify, redact_json, redact_path, safe_text,
};
