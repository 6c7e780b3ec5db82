//! The built-in rules: data in `rules/*.toml`, turned into this table by build.rs. Each rule's
//! `tp`/`fp` examples (and rows of tests/fixtures/rules.tsv) are enforced by tests/rules.rs.

use serde::Serialize;

/// How bad a leak of this kind is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Weak or generic signal.
    Low,
    /// Likely a credential of limited scope.
    Medium,
    /// A live credential for a service.
    High,
    /// Keys to infrastructure, money or identity (cloud keys, private keys, payment keys).
    Critical,
}

impl Severity {
    /// Weight used in scoring.
    pub fn weight(self) -> u32 {
        match self {
            Severity::Low => 1,
            Severity::Medium => 3,
            Severity::High => 10,
            Severity::Critical => 40,
        }
    }
}

/// One detection rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Stable id (also the redaction label).
    pub id: &'static str,
    /// What it finds.
    pub description: &'static str,
    /// How bad a finding is.
    pub severity: Severity,
    /// Lowercase literals, one of which must occur near a match (the prefilter).
    pub keywords: &'static [&'static str],
    /// The pattern; the secret is capture group `group` (0 = whole match).
    pub regex: &'static str,
    /// Which capture group is the secret.
    pub group: usize,
    /// Minimum Shannon entropy (bits per char) of the secret; 0 disables the check.
    pub min_entropy: f32,
    /// Public prefixes that name the kind (`ghp_`), `|`-separated: kept in front of a redaction.
    pub prefix: &'static str,
    /// A structural check the secret must pass (`jwt`: header and payload decode to JSON), or "".
    pub check: &'static str,
}

/// loopguard's rule set, from `rules/*.toml`.
pub const BUILTIN_RULES: &[Rule] = include!(concat!(env!("OUT_DIR"), "/builtin_rules.rs"));

/// Each built-in rule's examples, `(id, tp, fp)`, from the same files: what `loopguard selftest`
/// checks in the binary as it was built (a rule whose regex does not compile there finds nothing).
pub const BUILTIN_EXAMPLES: &[(&str, &[&str], &[&str])] = include!(concat!(env!("OUT_DIR"), "/builtin_examples.rs"));

/// Checks every built-in rule against its examples with `scanner` (the built-in one): every rule
/// compiles, every `tp` finds its rule and is redacted, every `fp` finds nothing. Failures, one
/// per line (empty when all hold).
pub fn check_builtin_examples(scanner: &crate::Scanner) -> Vec<String> {
    let mut failures = Vec::new();
    let compiled = scanner.compile_all();
    if compiled != BUILTIN_RULES.len() {
        failures.push(format!("only {compiled} of {} rule patterns compile in this build", BUILTIN_RULES.len()));
    }
    for (id, tp, fp) in BUILTIN_EXAMPLES {
        for t in *tp {
            let found = scanner.scan(t);
            if !found.iter().any(|f| f.rule == *id) {
                failures.push(format!("{id}: missed tp `{}`", t.escape_debug()));
            }
            if found.iter().any(|f| scanner.redact(t).contains(&t[f.span.clone()])) {
                failures.push(format!("{id}: redaction left the secret in `{}`", t.escape_debug()));
            }
        }
        for t in *fp {
            let found = scanner.scan(t);
            if !found.is_empty() {
                let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
                failures.push(format!("{id}: fp `{}` fired {rules:?}", t.escape_debug()));
            }
        }
    }
    failures
}
