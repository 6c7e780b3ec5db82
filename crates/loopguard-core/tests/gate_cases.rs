//! Runs every row of tests/fixtures/bash-cases.tsv through the gate and reports all failures.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use loopguard_core::{Context, Gate, Policy, ToolCall, Verdict};
use std::path::Path;

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.peek() {
                Some('n') => {
                    it.next();
                    out.push('\n');
                }
                Some('\\') => {
                    it.next();
                    out.push('\\');
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn bash_fixture_cases() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home").join("dev");
    let ws = home.join("work").join("project");
    let out = root.path().join("elsewhere");
    for d in [&ws, &home, &out] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let policy = Policy::builtin();
    let gate = Gate::new(&policy);
    let ctx = Context::new(&ws).with_home(Some(&home));
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bash-cases.tsv"),
    )
    .unwrap();
    let mut failures = Vec::new();
    let mut rows = 0;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut cols = line.splitn(3, '\t');
        let (Some(verdict), Some(code), Some(cmd)) = (cols.next(), cols.next(), cols.next()) else {
            failures.push(format!("line {}: malformed row", n + 1));
            continue;
        };
        rows += 1;
        let cmd = unescape(cmd)
            .replace("{ws}", ws.to_str().unwrap())
            .replace("{home}", home.to_str().unwrap())
            .replace("{out}", out.to_str().unwrap());
        let call = ToolCall::new("Bash", serde_json::json!({ "command": cmd }), &ws);
        let d = gate.evaluate(&call, &ctx);
        let want = Verdict::parse(verdict).unwrap();
        let got_code = d.reasons().first().map_or("-", |r| r.code.as_str());
        if d.verdict() != want || got_code != code {
            failures.push(format!(
                "line {}: `{}`: want {verdict} {code}, got {} {got_code} ({})",
                n + 1,
                cmd.escape_debug(),
                d.verdict().as_str(),
                d.explain().replace('\n', " ")
            ));
        }
    }
    assert!(rows >= 100, "only {rows} rows read");
    assert!(
        failures.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
