//! Every rule against its true- and false-positive fixtures; all failures reported at once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use loopguard_secrets::{BUILTIN_RULES, CONTEXT_KINDS, Scanner, ruleset};
use std::path::Path;

#[test]
fn every_rule_meets_its_fixtures() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules.tsv")).unwrap();
    let s = Scanner::builtin();
    let mut failures = Vec::new();
    let mut tp_rules = std::collections::BTreeSet::new();
    let mut fp_rules = std::collections::BTreeSet::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.starts_with('#') && !l.is_empty()) {
        let mut cols = line.splitn(3, '\t');
        let (Some(rule), Some(kind), Some(sample)) = (cols.next(), cols.next(), cols.next()) else {
            failures.push(format!("line {}: malformed", n + 1));
            continue;
        };
        // `\n` in a row is a newline, except in rows with quotes (JSON strings keep it escaped).
        let sample = if !sample.contains('"') { sample.replace("\\n", "\n") } else { sample.to_string() };
        let found = s.scan(&sample);
        let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
        match kind {
            "tp" => {
                tp_rules.insert(rule.to_string());
                if !rules.contains(&rule) {
                    failures.push(format!(
                        "line {}: {rule} missed `{}` (found {rules:?})",
                        n + 1,
                        sample.escape_debug()
                    ));
                }
                let redacted = s.redact(&sample);
                for f in &found {
                    if redacted.contains(&sample[f.span.clone()]) {
                        failures.push(format!("line {}: redaction left `{}`", n + 1, &sample[f.span.clone()]));
                    }
                }
                if s.redact(&redacted) != redacted {
                    failures.push(format!("line {}: redaction is not idempotent: `{redacted}`", n + 1));
                }
            }
            "fp" => {
                fp_rules.insert(rule.to_string());
                if !found.is_empty() {
                    failures.push(format!(
                        "line {}: `{}` should be quiet but {rules:?} fired",
                        n + 1,
                        sample.escape_debug()
                    ));
                }
            }
            other => failures.push(format!("line {}: kind {other}", n + 1)),
        }
    }
    for k in CONTEXT_KINDS.iter().filter(|k| !BUILTIN_RULES.iter().any(|r| r.id == k.id)) {
        if !tp_rules.contains(k.id) || !fp_rules.contains(k.id) {
            failures.push(format!("contextual kind {} lacks a true-positive or a false-positive row", k.id));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_rule_file_meets_its_examples() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut failures = Vec::new();
    let mut ids = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let rules = ruleset::parse_rule_file(&std::fs::read_to_string(&p).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        failures.extend(
            ruleset::check_examples(&rules, Scanner::builtin()).into_iter().map(|f| format!("{}: {f}", p.display())),
        );
        ids.extend(rules.into_iter().map(|r| r.spec.id));
    }
    let built: Vec<&str> = BUILTIN_RULES.iter().map(|r| r.id).collect();
    ids.sort();
    let mut sorted = built.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "the rule files and the built table differ");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_builtin_regex_compiles() {
    // A rule whose regex does not compile would be silently skipped by the scanner, which
    // compiles the ASCII form.
    for r in BUILTIN_RULES {
        if let Err(e) = regex::Regex::new(&loopguard_secrets::asciify(r.regex)) {
            panic!("rule {} does not compile: {e}", r.id);
        }
    }
}

#[test]
fn asciified_regexes_compile_and_keep_their_meaning_on_ascii() {
    use loopguard_secrets::asciify;
    assert_eq!(asciify(r"\b(ghp_\w{36})\b"), r"(?-u:\b)(ghp_[0-9A-Za-z_]{36})(?-u:\b)");
    assert_eq!(asciify(r"[\w.\-]{0,30}\d"), r"[0-9A-Za-z_.\-]{0,30}[0-9]");
    assert_eq!(asciify(r"\\w[\]\w]"), r"\\w[\]0-9A-Za-z_]");
    assert_eq!(asciify(r"[^\w]"), r"[^0-9A-Za-z_]");
}

/// docs/secret-rules.md is generated from the rules; `LOOPGUARD_BLESS=1 cargo test -p
/// loopguard-secrets --test rules` rewrites it.
#[test]
fn the_rule_catalogue_is_in_sync() {
    use std::fmt::Write;
    let mut md = String::from(
        "# Secret rules\n\n<!-- generated by crates/loopguard-secrets/tests/rules.rs from rules/*.toml and src/context.rs; \
         LOOPGUARD_BLESS=1 cargo test -p loopguard-secrets --test rules -->\n\n",
    );
    let _ = writeln!(
        md,
        "{} rules with a pattern (files in `crates/loopguard-secrets/rules/`, format in docs/secrets.md) and {} \
         contextual kinds (`src/context.rs`). Severity: critical denies a call that carries it, high asks, \
         lesser findings add up against `[secrets] ask_score`; every finding is redacted from tool output.\n",
        BUILTIN_RULES.len(),
        CONTEXT_KINDS.len()
    );
    md.push_str("## Contextual kinds\n\n| id | severity | what |\n|---|---|---|\n");
    for k in CONTEXT_KINDS {
        let _ = writeln!(md, "| `{}` | {:?} | {} |", k.id, k.severity, k.description);
    }
    md.push_str("\n## Rules\n\n| id | severity | keywords | what |\n|---|---|---|---|\n");
    let mut rules: Vec<_> = BUILTIN_RULES.iter().collect();
    rules.sort_by_key(|r| r.id);
    for r in rules {
        let kws: Vec<String> = r.keywords.iter().map(|k| format!("`{}`", k.replace('|', "\\|"))).collect();
        let _ = writeln!(
            md,
            "| `{}` | {:?} | {} | {} |",
            r.id,
            r.severity,
            kws.join(" "),
            r.description.replace('|', "\\|")
        );
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/secret-rules.md");
    if std::env::var_os("LOOPGUARD_BLESS").is_some() {
        std::fs::write(&path, &md).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == md,
        "docs/secret-rules.md is stale: LOOPGUARD_BLESS=1 cargo test -p loopguard-secrets --test rules"
    );
}
