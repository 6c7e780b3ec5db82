//! Reading a rule file (`rules/*.toml`) at run time: for the tests, which check every rule's
//! examples, and for `examples/rulecheck.rs`, which checks a file before it joins the build.
//! build.rs reads the same format at build time into `BUILTIN_RULES`.

use crate::rules::Severity;
use crate::scanner::RuleSpec;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    rule: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    description: String,
    severity: String,
    keywords: Vec<String>,
    regex: String,
    group: Option<usize>,
    entropy: Option<f32>,
    prefix: Option<String>,
    check: Option<String>,
    #[serde(default)]
    tp: Vec<String>,
    #[serde(default)]
    fp: Vec<String>,
}

/// One rule of a file with its examples.
#[derive(Debug, Clone)]
pub struct FileRule {
    /// The rule as the scanner takes it.
    pub spec: RuleSpec,
    /// Texts in which the rule must find a secret.
    pub tp: Vec<String>,
    /// Texts in which nothing may be found.
    pub fp: Vec<String>,
}

/// Parses a rule file; every problem is an error naming the rule.
pub fn parse_rule_file(text: &str) -> Result<Vec<FileRule>, String> {
    let f: File = toml::from_str(text).map_err(|e| format!("not a rule file: {e}"))?;
    let mut out = Vec::new();
    for e in f.rule {
        let severity = match e.severity.as_str() {
            "critical" => Severity::Critical,
            "high" => Severity::High,
            "medium" => Severity::Medium,
            "low" => Severity::Low,
            other => return Err(format!("{}: severity `{other}`", e.id)),
        };
        let re = regex::Regex::new(&e.regex).map_err(|err| format!("{}: regex: {err}", e.id))?;
        let group = e.group.unwrap_or(1);
        if group >= re.captures_len() {
            return Err(format!("{}: group {group} but the regex has {} groups", e.id, re.captures_len() - 1));
        }
        if e.keywords.is_empty() || e.keywords.iter().any(|k| k.len() < 2 || *k != k.to_ascii_lowercase()) {
            return Err(format!("{}: keywords must be non-empty, lowercase, 2+ bytes", e.id));
        }
        if !matches!(e.check.as_deref(), None | Some("" | "jwt" | "url")) {
            return Err(format!("{}: unknown check", e.id));
        }
        out.push(FileRule {
            spec: RuleSpec {
                id: e.id.into(),
                description: e.description.into(),
                severity,
                keywords: e.keywords.into_iter().map(Into::into).collect(),
                regex: e.regex.into(),
                group,
                min_entropy: e.entropy.unwrap_or(0.0),
                path: None,
                allow: Vec::new(),
                prefix: e.prefix.unwrap_or_default().into(),
                check: e.check.unwrap_or_default().into(),
            },
            tp: e.tp,
            fp: e.fp,
        });
    }
    Ok(out)
}

/// Checks a file's rules against their examples with `scanner` (which must hold them): every
/// `tp` yields a finding of its rule, every `fp` no finding at all, every rule has both, and
/// each keyword of a rule occurs in each of its `tp` (the prefilter needs one). Failures, one
/// per line.
pub fn check_examples(rules: &[FileRule], scanner: &crate::Scanner) -> Vec<String> {
    let mut failures = Vec::new();
    for r in rules {
        let id = &r.spec.id;
        if r.tp.is_empty() || r.fp.is_empty() {
            failures.push(format!("{id}: needs at least one tp and one fp example"));
        }
        for t in &r.tp {
            let found = scanner.scan(t);
            if !found.iter().any(|f| &f.rule == id) {
                let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
                failures.push(format!("{id}: missed tp `{}` (found {rules:?})", t.escape_debug()));
            }
            let l = t.to_ascii_lowercase();
            if !r.spec.keywords.iter().any(|k| l.contains(k.as_ref())) {
                failures.push(format!("{id}: no keyword occurs in tp `{}`", t.escape_debug()));
            }
            let redacted = scanner.redact(t);
            for f in &found {
                if redacted.contains(&t[f.span.clone()]) {
                    failures.push(format!("{id}: redaction left `{}`", &t[f.span.clone()]));
                }
            }
        }
        for t in &r.fp {
            let found = scanner.scan(t);
            if !found.is_empty() {
                let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
                failures.push(format!("{id}: fp `{}` fired {rules:?}", t.escape_debug()));
            }
        }
    }
    failures
}
