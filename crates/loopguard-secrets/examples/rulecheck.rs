//! Checks rule files before they join the build: `rulecheck rules/x.toml …` loads the built-in
//! rules plus the files' rules (a file's rule replaces a built-in of the same id), then checks
//! every rule of the files against its examples. Exit 1 on any failure.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use loopguard_secrets::{BUILTIN_RULES, RuleSpec, Scanner, ruleset};

fn main() {
    let mut all = Vec::new();
    let mut bad = false;
    for path in std::env::args().skip(1) {
        match std::fs::read_to_string(&path).map_err(|e| e.to_string()).and_then(|t| ruleset::parse_rule_file(&t)) {
            Ok(rules) => all.extend(rules),
            Err(e) => {
                eprintln!("{path}: {e}");
                bad = true;
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for r in &all {
        if !seen.insert(r.spec.id.clone()) {
            eprintln!("duplicate id {}", r.spec.id);
            bad = true;
        }
    }
    let mut specs: Vec<RuleSpec> = BUILTIN_RULES.iter().filter(|b| !seen.contains(b.id)).map(RuleSpec::from).collect();
    specs.extend(all.iter().map(|r| r.spec.clone()));
    let scanner = Scanner::from_specs(specs, Vec::new()).with_context(&[]);
    let failures = ruleset::check_examples(&all, &scanner);
    for f in &failures {
        eprintln!("{f}");
    }
    println!("{} rules, {} failures", all.len(), failures.len());
    if bad || !failures.is_empty() {
        std::process::exit(1);
    }
}
