//! Turns the rule files (`rules/*.toml`) into the static `BUILTIN_RULES` table, so the hook pays
//! nothing to load them: no TOML parse at run time, regexes compiled on first use. The examples
//! (`tp`/`fp`) become `BUILTIN_EXAMPLES`, which `loopguard selftest` checks in the binary as
//! built (the tests also read them from the files). A malformed rule fails the build.

use std::fmt::Write;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("&[\n");
    let mut examples = String::from("&[\n");
    let mut ids = std::collections::BTreeSet::new();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let Some(doc) = std::fs::read_to_string(f).ok().and_then(|t| t.parse::<toml::Table>().ok()) else {
            fail(&format!("{name}: not readable TOML"))
        };
        let Some(rules) = doc.get("rule").and_then(|v| v.as_array()) else { fail(&format!("{name}: no [[rule]]")) };
        for (i, r) in rules.iter().enumerate() {
            let Some(r) = r.as_table() else { fail(&format!("{name}: rule {i} is not a table")) };
            let s = |k: &str| r.get(k).and_then(|v| v.as_str());
            let (Some(id), Some(description), Some(severity), Some(regex)) =
                (s("id"), s("description"), s("severity"), s("regex"))
            else {
                fail(&format!("{name}: rule {i} needs id, description, severity and regex"))
            };
            if !ids.insert(id.to_string()) {
                fail(&format!("{name}: duplicate rule id {id}"));
            }
            let severity = match severity {
                "critical" => "Critical",
                "high" => "High",
                "medium" => "Medium",
                "low" => "Low",
                _ => fail(&format!("{name}: {id}: severity must be critical, high, medium or low")),
            };
            let keywords: Vec<String> = match r.get("keywords").and_then(|v| v.as_array()) {
                Some(a) => a.iter().filter_map(|k| k.as_str()).map(str::to_ascii_lowercase).collect(),
                None => fail(&format!("{name}: {id}: needs keywords")),
            };
            if keywords.is_empty() || keywords.iter().any(|k| k.len() < 2) {
                fail(&format!("{name}: {id}: keywords must be non-empty, each at least 2 bytes"));
            }
            let group = r.get("group").map_or(Some(1), |v| v.as_integer()).unwrap_or(-1);
            let entropy = match r.get("entropy") {
                None => 0.0,
                Some(v) => v.as_float().or_else(|| v.as_integer().map(|n| n as f64)).unwrap_or(-1.0),
            };
            if group < 0 || !(0.0..=8.0).contains(&entropy) {
                fail(&format!("{name}: {id}: group must be a non-negative integer, entropy 0..8"));
            }
            let list = |k: &str| -> Vec<String> {
                r.get(k)
                    .and_then(|v| v.as_array())
                    .map_or_else(Vec::new, |a| a.iter().filter_map(|x| x.as_str()).map(String::from).collect())
            };
            let _ = writeln!(examples, "    ({id:?}, &{:?}, &{:?}),", list("tp"), list("fp"));
            let prefix = s("prefix").unwrap_or("");
            let check = s("check").unwrap_or("");
            let _ = writeln!(
                out,
                "    Rule {{ id: {id:?}, description: {description:?}, severity: Severity::{severity}, keywords: &{keywords:?}, regex: {regex:?}, group: {group}, min_entropy: {entropy:?}, prefix: {prefix:?}, check: {check:?} }},"
            );
        }
    }
    out.push(']');
    examples.push(']');
    let out_dir = std::env::var("OUT_DIR").unwrap_or_default();
    for (file, text) in [("builtin_rules.rs", out), ("builtin_examples.rs", examples)] {
        let target = std::path::Path::new(&out_dir).join(file);
        if let Err(e) = std::fs::write(&target, text) {
            fail(&format!("cannot write {}: {e}", target.display()));
        }
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("loopguard-secrets build: rule file {msg}");
    std::process::exit(1)
}
