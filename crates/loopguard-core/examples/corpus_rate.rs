//! Measures the gate on a command corpus: `corpus_rate TSV [--mode unattended|normal] [--list]`.
//!
//! Rows are `expect<TAB>pack<TAB>source<TAB>command` (`expect` = block|allow; `\n`, `\t`, `\\`
//! escaped). Every command goes through the whole gate with every built-in pack on, in a scratch
//! git workspace, unattended with the kernel sandbox in use (as `gate_cases` runs) unless
//! `--mode normal`. Block = ask or deny. Prints the block rate on `block` rows, the pass rate on
//! `allow` rows, and with `--list` every row that went the other way with its first reason code.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a measuring tool

use loopguard_core::packs::BUILTIN_PACKS;
use loopguard_core::{Context, ExecutionMode, Gate, Policy, ToolCall, Verdict};

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('\\') => out.push('\\'),
                Some(o) => {
                    out.push('\\');
                    out.push(o);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = args.first().expect("usage: corpus_rate TSV [--mode unattended|normal] [--list]");
    let normal = args.windows(2).any(|w| w[0] == "--mode" && w[1] == "normal");
    let list = args.iter().any(|a| a == "--list");
    let text = std::fs::read_to_string(file).unwrap();
    // Not under /tmp: deleting below the system temp directory is allowed unattended, unless the
    // workspace lives there (as gate_cases does).
    std::fs::create_dir_all("target").unwrap();
    let root = tempfile::tempdir_in("target").unwrap();
    let home = root.path().join("home/dev");
    let ws = home.join("work/project");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let ok = std::process::Command::new("git").args(["init", "-q", "-b", "feature/work"]).current_dir(&ws).status();
    assert!(ok.unwrap().success());
    let on = BUILTIN_PACKS.iter().map(|b| (b.id.to_string(), true)).collect::<Vec<_>>();
    let switches = on.iter().map(|(id, _)| format!("\"{id}\"")).collect::<Vec<_>>().join(", ");
    let user = format!("[packs]\nenable = [{switches}]\n");
    let policy = Policy::from_layers(&[(loopguard_core::policy::LayerKind::User, "user.toml".into(), user)]).unwrap();
    let gate = Gate::new(&policy);
    let mode = if normal { ExecutionMode::Normal } else { ExecutionMode::Unattended };
    let ctx = Context::new(&ws).with_home(Some(&home)).with_mode(mode).with_confinement(true);
    let (mut block_rows, mut blocked, mut allow_rows, mut passed) = (0, 0, 0, 0);
    let mut by_code: std::collections::BTreeMap<String, usize> = Default::default();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let cols: Vec<&str> = line.splitn(4, '\t').collect();
        let [expect, pack, source, raw] = cols[..] else { continue };
        let cmd = unescape(raw);
        let call = ToolCall::new(
            "Bash",
            loopguard_core::Action::Shell { command: cmd.to_string() },
            serde_json::json!({ "command": cmd }),
            &ws,
        );
        let d = gate.evaluate(&call, &ctx);
        let block = d.verdict() != Verdict::Allow;
        let code = d.reasons().first().map_or("-".to_string(), |r| r.code.clone());
        match expect {
            "block" => {
                block_rows += 1;
                blocked += usize::from(block);
                if !block && list {
                    println!("MISSED\t{pack}\t{source}\t{raw}");
                }
            }
            "allow" => {
                allow_rows += 1;
                passed += usize::from(!block);
                if block {
                    *by_code.entry(code.clone()).or_default() += 1;
                    if list {
                        let why = d.reasons().first().map_or(String::new(), |r| r.message.clone());
                        println!("BLOCKED\t{code}\t{pack}\t{source}\t{raw}\t{}", why.replace('\n', " "));
                    }
                }
            }
            _ => {}
        }
    }
    let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    println!(
        "mode {}: block rows blocked {blocked}/{block_rows} ({:.1}%); allow rows passed {passed}/{allow_rows} ({:.1}%)",
        mode.as_str(),
        pct(blocked, block_rows),
        pct(passed, allow_rows)
    );
    for (code, n) in by_code {
        println!("  allow rows blocked by {code}: {n}");
    }
}
