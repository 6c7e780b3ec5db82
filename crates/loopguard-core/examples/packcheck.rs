//! Checks pack files outside the build: `packcheck FILE.toml… [--corpus TSV]`.
//!
//! Parses each file as a built-in pack, checks every rule against its examples, and with
//! `--corpus` (rows `expect<TAB>pack<TAB>source<TAB>command`, `expect` = block|allow) lists, for
//! the programs these packs cover, the `block` rows no rule matches and the `allow` rows some
//! severity rule matches. For pack authors; the gate's full decision also uses the shell analysis.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a developer tool

use loopguard_core::checks::shell::{commands, split_with_home};
use loopguard_core::packs::{Pack, PackOrigin};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let corpus = args.iter().position(|a| a == "--corpus").and_then(|i| args.get(i + 1)).cloned();
    let mut packs = Vec::new();
    let mut bad = 0;
    for f in args.iter().filter(|a| a.ends_with(".toml")) {
        let text = std::fs::read_to_string(f).unwrap();
        match Pack::parse(f, &text, PackOrigin::Builtin) {
            Ok(p) => {
                let problems = p.check_examples();
                let m: usize = p.rules.iter().map(|r| r.examples_match.len()).sum();
                let n: usize = p.rules.iter().map(|r| r.examples_not_match.len()).sum();
                println!(
                    "{f}: {} rules, {m} match / {n} not_match examples, {} problems",
                    p.rules.len(),
                    problems.len()
                );
                for e in &problems {
                    println!("  {e}");
                }
                bad += problems.len();
                packs.push(p);
            }
            Err(e) => {
                println!("{e}");
                bad += 1;
            }
        }
    }
    if let Some(c) = corpus {
        let text = std::fs::read_to_string(c).unwrap();
        let (mut missed, mut false_alarm, mut covered) = (0, 0, 0);
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let cols: Vec<&str> = line.splitn(4, '\t').collect();
            let [expect, _, source, cmd] = cols[..] else { continue };
            let cmd = cmd.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\");
            let Ok(cmds) = split_with_home(&cmd, None).and_then(|s| commands(&s, None)) else { continue };
            let ours: Vec<_> = cmds.iter().filter(|c| packs.iter().any(|p| p.programs.contains(&c.program))).collect();
            if ours.is_empty() {
                continue;
            }
            covered += 1;
            let hit = ours.iter().any(|c| {
                packs.iter().any(|p| {
                    p.programs.contains(&c.program)
                        && p.rules.iter().any(|r| r.severity.is_some() && r.matches_command(p, c))
                })
            });
            match (expect, hit) {
                ("block", false) => {
                    missed += 1;
                    println!("MISSED  {source}\t{cmd}");
                }
                ("allow", true) => {
                    false_alarm += 1;
                    println!("FALSE   {source}\t{cmd}");
                }
                _ => {}
            }
        }
        println!(
            "corpus rows using these programs: {covered}; block rows missed: {missed}; allow rows matched: {false_alarm}"
        );
    }
    std::process::exit(i32::from(bad > 0));
}
