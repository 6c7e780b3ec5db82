//! What a hook process pays to scan one tool output with a fresh scanner, step by step.
//! `cargo run --release -p loopguard-secrets --example cold`

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use loopguard_secrets::{BUILTIN_RULES, Scanner};
use std::time::Instant;

fn main() {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 10 * 1024 {
        text.push_str(&format!("   Compiling crate-{i} v0.1.{i} (/home/dev/project/crates/crate-{i})\n"));
        i += 1;
    }
    text.push_str("export GITHUB_TOKEN=ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A\n");
    for kind in ["nfa", "bulk-dfa"] {
        let t0 = Instant::now();
        let s = Scanner::new(BUILTIN_RULES.to_vec()).with_context(&[]);
        let s = if kind == "nfa" { s } else { s.bulk() };
        let t1 = Instant::now();
        let _ = s.scan("x");
        let first_short = t1.elapsed();
        let t2 = Instant::now();
        let n = s.scan(&text).len();
        let first_long = t2.elapsed();
        let t3 = Instant::now();
        let _ = s.scan(&text);
        let second = t3.elapsed();
        println!(
            "{kind}: new {:?}, short scan {:?}, first 10 KB scan {:?} ({n} found), second {:?}",
            t1 - t0,
            first_short,
            first_long,
            second
        );
    }
}
