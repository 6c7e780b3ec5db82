//! Users' existing gitleaks configurations (`.gitleaks.toml`): rules with `regex`,
//! `secretGroup`, `entropy`, `keywords`, `path` and allowlists (`regexTarget`, `regexes`,
//! `stopwords`, `paths`, `condition`), `[extend] useDefault` and `disabledRules`, global
//! `[allowlist]` / `[[allowlists]]` (with `targetRules`). Lines marked `gitleaks:allow` are
//! skipped by the file scanner. Path-only rules (no regex) and `commits` allowlists are not
//! supported and are reported.

use crate::rules::{BUILTIN_RULES, Severity};
use crate::scanner::{AllowTarget, Allowlist, RuleSpec, Scanner};
use regex::Regex;
use serde::Deserialize;

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Config {
    #[serde(default)]
    extend: Option<Extend>,
    #[serde(default)]
    rules: Vec<GRule>,
    #[serde(default)]
    allowlist: Option<GAllow>,
    #[serde(default)]
    allowlists: Vec<GAllow>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Extend {
    use_default: Option<bool>,
    #[serde(default)]
    disabled_rules: Vec<String>,
    path: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GRule {
    id: String,
    description: Option<String>,
    regex: Option<String>,
    secret_group: Option<usize>,
    entropy: Option<f32>,
    #[serde(default)]
    keywords: Vec<String>,
    path: Option<String>,
    allowlist: Option<GAllow>,
    #[serde(default)]
    allowlists: Vec<GAllow>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct GAllow {
    condition: Option<String>,
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
    #[serde(default)]
    target_rules: Vec<String>,
}

/// gitleaks' ids for what our built-in rules find.
const ALIASES: &[(&str, &str)] = &[
    ("generic-api-key", "generic-secret-assignment"),
    ("aws-access-token", "aws-access-key-id"),
    ("github-app-token", "github-oauth"),
    ("github-oauth", "github-oauth"),
    ("github-refresh-token", "github-oauth"),
    ("gitlab-pat", "gitlab-token"),
    ("slack-bot-token", "slack-token"),
    ("slack-user-token", "slack-token"),
    ("slack-webhook-url", "slack-webhook"),
    ("stripe-access-token", "stripe-secret-key"),
    ("openai-api-key", "openai-api-key"),
    ("anthropic-api-key", "anthropic-api-key"),
    ("huggingface-access-token", "huggingface-token"),
    ("npm-access-token", "npm-token"),
    ("pypi-upload-token", "pypi-token"),
    ("jwt", "jwt"),
    ("gcp-api-key", "gcp-api-key"),
    ("sendgrid-api-token", "sendgrid-api-key"),
    ("twilio-api-key", "twilio-api-key"),
    ("digitalocean-pat", "digitalocean-token"),
];

fn our_id(id: &str) -> &str {
    ALIASES.iter().find(|(g, _)| *g == id).map_or(id, |(_, o)| o)
}

fn compile(what: &str, pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("{what}: invalid regex: {e}"))
}

fn allowlist(a: &GAllow, what: &str, notes: &mut Vec<String>) -> Result<Allowlist, String> {
    if !a.commits.is_empty() {
        notes.push(format!("{what}: `commits` allowlists are not supported (ignored)"));
    }
    let target = match a.regex_target.as_deref() {
        None | Some("secret") => AllowTarget::Secret,
        Some("match") => AllowTarget::Match,
        Some("line") => AllowTarget::Line,
        Some(other) => return Err(format!("{what}: unknown regexTarget `{other}`")),
    };
    let all = match a.condition.as_deref().map(str::to_ascii_uppercase).as_deref() {
        None | Some("OR") => false,
        Some("AND") => true,
        Some(other) => return Err(format!("{what}: unknown condition `{other}`")),
    };
    Ok(Allowlist {
        regexes: a.regexes.iter().map(|r| compile(what, r)).collect::<Result<_, _>>()?,
        target,
        stopwords: a.stopwords.clone(),
        paths: a.paths.iter().map(|r| compile(what, r)).collect::<Result<_, _>>()?,
        all,
    })
}

/// A scanner for a gitleaks configuration, and notes about what it ignored.
pub fn scanner_from_gitleaks(text: &str) -> Result<(Scanner, Vec<String>), String> {
    let cfg: Config = toml::from_str(text).map_err(|e| format!("not a valid gitleaks config: {e}"))?;
    let mut notes = Vec::new();
    let extend = cfg.extend.unwrap_or_default();
    if extend.path.is_some() {
        notes.push("[extend] path is not supported (ignored)".into());
    }
    let disabled: Vec<&str> = extend.disabled_rules.iter().map(|d| our_id(d)).collect();
    let mut specs: Vec<RuleSpec> = if extend.use_default.unwrap_or(false) {
        BUILTIN_RULES.iter().filter(|r| !disabled.contains(&r.id)).map(RuleSpec::from).collect()
    } else {
        Vec::new()
    };
    for r in &cfg.rules {
        let what = format!("rule `{}`", r.id);
        let Some(pattern) = &r.regex else {
            notes.push(format!("{what}: path-only rules are not supported (ignored)"));
            continue;
        };
        let re = compile(&what, pattern)?;
        let group = r.secret_group.unwrap_or(if re.captures_len() > 1 { 1 } else { 0 });
        let mut allow = Vec::new();
        for a in r.allowlist.iter().chain(&r.allowlists) {
            allow.push(allowlist(a, &what, &mut notes)?);
        }
        let spec = RuleSpec {
            id: r.id.clone().into(),
            description: r.description.clone().unwrap_or_else(|| r.id.clone()).into(),
            severity: Severity::High,
            keywords: r.keywords.iter().map(|k| k.to_ascii_lowercase().into()).collect(),
            regex: pattern.clone().into(),
            group,
            min_entropy: r.entropy.unwrap_or(0.0),
            path: r.path.as_deref().map(|p| compile(&what, p)).transpose()?,
            allow,
            prefix: "".into(),
            check: "".into(),
        };
        // A rule with a built-in's id replaces it.
        specs.retain(|s| s.id != spec.id);
        specs.push(spec);
    }
    let mut global = Vec::new();
    for (i, a) in cfg.allowlist.iter().chain(&cfg.allowlists).enumerate() {
        let list = allowlist(a, &format!("allowlist {}", i + 1), &mut notes)?;
        if a.target_rules.is_empty() {
            global.push(list);
        } else {
            for id in &a.target_rules {
                if let Some(s) = specs.iter_mut().find(|s| s.id == our_id(id)) {
                    s.allow.push(list.clone());
                }
            }
        }
    }
    let scanner = Scanner::from_specs(specs, global);
    let scanner = if extend.use_default.unwrap_or(false) {
        // The generic rule of gitleaks is our contextual detection of names and values.
        let generic = ["generic-secret-assignment", "generic-password", "generic-key-assignment"];
        let off: Vec<&str> =
            if disabled.contains(&"generic-secret-assignment") { generic.to_vec() } else { Vec::new() };
        let off: Vec<&str> = off.into_iter().chain(disabled.iter().copied()).collect();
        scanner.with_context(&off)
    } else {
        scanner
    };
    Ok((scanner, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: &str = r#"
title = "team rules"
[extend]
useDefault = true
disabledRules = ["generic-api-key"]

[[rules]]
id = "acme-token"
description = "ACME internal token"
regex = '''acme_(?:live|test)_([a-z0-9]{24})'''
secretGroup = 1
entropy = 3.0
keywords = ["acme_"]
[[rules.allowlists]]
regexTarget = "line"
regexes = ['''EXAMPLE''']

[[rules]]
id = "only-in-config"
regex = '''cfgsecret=([A-Za-z0-9]{12,})'''
path = '''\.cfg$'''

[[rules]]
id = "files-named-credentials"
path = '''credentials\.json$'''

[allowlist]
stopwords = ["notarealkey"]
paths = ['''testdata/''']
"#;

    #[test]
    fn loads_rules_allowlists_and_extends_the_defaults() {
        let (s, notes) = scanner_from_gitleaks(CFG).unwrap();
        assert!(notes.iter().any(|n| n.contains("path-only")), "{notes:?}");
        let hit = |t: &str, p: Option<&str>| s.scan_in(t, p).into_iter().map(|f| f.rule).collect::<Vec<_>>();
        assert_eq!(hit("x = acme_live_k3j9x2m8q7w1z5v4b6n0p2r8", None), ["acme-token"]);
        assert!(hit("x = acme_live_k3j9x2m8q7w1z5v4b6n0p2r8 # EXAMPLE", None).is_empty(), "rule allowlist on the line");
        assert_eq!(hit("ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A", None), ["github-pat"], "defaults kept");
        assert!(hit("password = \"Xk9#mP2$vL7!qR4w\"", None).is_empty(), "generic disabled via its gitleaks id");
        assert_eq!(hit("cfgsecret=Zq8vN2kP4mX7rT1w", Some("app.cfg")), ["only-in-config"]);
        assert!(hit("cfgsecret=Zq8vN2kP4mX7rT1w", Some("app.txt")).is_empty(), "rule path");
        assert!(
            hit("ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A", Some("testdata/x.txt")).is_empty(),
            "global path allowlist"
        );
        assert!(hit("cfgsecret=notarealkey12345", Some("a.cfg")).is_empty(), "global stopword");
    }

    #[test]
    fn without_extend_only_the_config_rules_apply() {
        let (s, _) = scanner_from_gitleaks("[[rules]]\nid = \"x\"\nregex = '''xx_([0-9]{6})'''\n").unwrap();
        assert!(s.scan("ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A").is_empty());
        assert_eq!(s.scan("xx_908172").len(), 1);
    }

    #[test]
    fn bad_configs_are_errors() {
        assert!(
            scanner_from_gitleaks("[[rules]]\nid = \"x\"\nregex = '''(unclosed'''\n").unwrap_err().contains("rule `x`")
        );
        assert!(scanner_from_gitleaks("[[rules]]\nid = 3\n").is_err());
        assert!(scanner_from_gitleaks("[allowlist]\nregexTarget = \"file\"\nregexes = ['''a''']\n").is_err());
    }
}
