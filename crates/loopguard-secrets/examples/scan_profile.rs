//! Where the scanner's time goes on a large real tree (the cargo registry's `.rs` files, up to
//! 64 MB): throughput with every rule, without contextual detection, and per rule file (the
//! file's rules alone, then each of them alone where `--rules` is given). For finding the rule
//! that costs throughput; the numbers that count are the bench's (`benches/scan.rs`).
//! `cargo run --release -p loopguard-secrets --example scan_profile [-- --rules FILE.toml]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::print_stderr)]

use loopguard_secrets::{RuleSpec, Scanner, ruleset};
use std::time::Instant;

fn corpus() -> Vec<String> {
    let home = std::env::var("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo"));
    let mut stack = vec![home.join("registry/src")];
    let (mut out, mut total) = (Vec::new(), 0usize);
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && total < 64 << 20
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                total += t.len();
                out.push(t);
            }
        }
    }
    out
}

fn rate(name: &str, s: &Scanner, texts: &[String]) {
    let bytes: usize = texts.iter().map(String::len).sum();
    let c0 = Instant::now();
    let n = s.compile_all();
    let compile = c0.elapsed();
    let t0 = Instant::now();
    let mut found = 0;
    for t in texts {
        found += s.scan(t).len();
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{name:<40} {:>8.1} MB/s  {found} findings  ({n} regexes compiled in {compile:.1?})",
        bytes as f64 / secs / 1e6
    );
}

fn main() {
    let texts = corpus();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let load = |p: &std::path::Path| ruleset::parse_rule_file(&std::fs::read_to_string(p).unwrap()).unwrap();
    let all: Vec<RuleSpec> = files.iter().flat_map(|f| load(f)).map(|r| r.spec).collect();
    let bulk = |specs: Vec<RuleSpec>, ctx: bool| {
        let s = Scanner::from_specs(specs, Vec::new()).bulk();
        if ctx { s.with_context(&[]) } else { s }
    };
    // The prefilter alone: the keyword automaton over every text.
    let mut kws: Vec<String> = all.iter().flat_map(|r| r.keywords.iter().map(|k| k.to_string())).collect();
    kws.sort();
    kws.dedup();
    let ac = aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(&kws)
        .unwrap();
    let bytes: usize = texts.iter().map(String::len).sum();
    let t0 = Instant::now();
    let hits: usize = texts.iter().map(|t| ac.find_iter(t).count()).sum();
    println!(
        "{:<40} {:>8.1} MB/s  {hits} hits of {} keywords",
        "keyword automaton alone",
        bytes as f64 / t0.elapsed().as_secs_f64() / 1e6,
        kws.len()
    );
    rate("all rules + context", &bulk(all.clone(), true), &texts);
    if std::env::args().any(|a| a == "--all-only") {
        return;
    }
    rate("all rules, no context", &bulk(all.clone(), false), &texts);
    rate("context only", &bulk(Vec::new(), true), &texts);
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        rate(&name, &bulk(load(f).into_iter().map(|r| r.spec).collect(), false), &texts);
    }
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--show") {
        // Every finding with its line, for reading by eye.
        let s = bulk(all.clone(), true);
        for t in &texts {
            for f in s.scan(t) {
                let line = t.lines().nth(f.line - 1).unwrap_or_default();
                println!("{}\t{}", f.rule, line.trim().chars().take(160).collect::<String>());
            }
        }
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--rules") {
        for r in load(std::path::Path::new(&args[i + 1])) {
            let id = r.spec.id.clone();
            rate(&id, &bulk(vec![r.spec], false), &texts);
        }
    }
}
