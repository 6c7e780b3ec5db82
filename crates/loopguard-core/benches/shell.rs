//! Shell analysis cost: `cargo bench -p loopguard-core --bench shell`.
//! Goals (issue 3): typical commands ≤ 2 µs median; 1–64 KiB inputs and deep nesting decided in
//! ≤ 20 ms, with cost linear in size.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use divan::{Bencher, black_box};
use loopguard_core::Context;
use loopguard_core::checks::paths::PathValidator;
use loopguard_core::checks::shell::{Knowledge, analyze};
use std::path::Path;

fn main() {
    divan::main();
    packs_ratio();
}

/// Commands of programs the packs know, each with one (often more) packs consulted.
const PACKED: &[&str] = &[
    "kubectl get pods -n prod",
    "aws s3 ls s3://bucket/prefix/",
    "docker ps -a",
    "terraform plan -out tf.plan",
    "gh pr view 12",
    "npm publish --dry-run",
    "restic snapshots",
    "psql -c 'select 1'",
];

fn all_packs() -> loopguard_core::packs::PackSet {
    let on = loopguard_core::packs::BUILTIN_PACKS.iter().map(|b| (b.id.to_string(), true)).collect();
    loopguard_core::packs::PackSet::new(Vec::new(), &on)
}

#[divan::bench(args = PACKED)]
fn packed_all_packs_on(b: Bencher, cmd: &str) {
    let (d, ctx, v) = fixture();
    let packs = all_packs();
    let k = Knowledge { commands: &[], packs: &packs };
    b.bench_local(|| black_box(analyze(black_box(cmd), d.path(), &ctx, k, &v)));
}

/// The packs' cost against the analysis without them, measured in this run: median time per
/// command over TYPICAL and PACKED, all packs on vs none (the floor).
fn packs_ratio() {
    let (d, ctx, v) = fixture();
    let packs = all_packs();
    let none = loopguard_core::packs::PackSet::default();
    let median = |set: &loopguard_core::packs::PackSet| {
        let k = Knowledge { commands: &[], packs: set };
        let mut per_cmd = Vec::new();
        for cmd in TYPICAL.iter().chain(PACKED) {
            let mut runs: Vec<f64> = (0..301)
                .map(|_| {
                    let t = std::time::Instant::now();
                    black_box(analyze(black_box(cmd), d.path(), &ctx, k, &v));
                    t.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            runs.sort_by(f64::total_cmp);
            per_cmd.push(runs[runs.len() / 2]);
        }
        per_cmd.sort_by(f64::total_cmp);
        per_cmd[per_cmd.len() / 2]
    };
    // Warm up: the first use parses each pack a command needs.
    let _ = median(&packs);
    let (floor, with) = (median(&none), median(&packs));
    println!(
        "packs: median command {with:.2} µs with all {} packs on, {floor:.2} µs with none; ratio {:.2} (goal: ≤ 2 µs typical)",
        loopguard_core::packs::BUILTIN_PACKS.len(),
        with / floor
    );
}

const TYPICAL: &[&str] = &[
    "git status",
    "ls -la src/",
    "cargo test -p core 2>&1 | tail -n 20",
    "git add -A && git commit -m \"fix: handle empty input\"",
    "grep -rn 'TODO' src/ | head -20",
    "npm run build",
    "rm -rf build && mkdir -p build",
    "sudo env FOO=1 bash -c 'git push --force origin main'",
];

fn fixture() -> (tempfile::TempDir, Context, PathValidator<'static>) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("src")).unwrap();
    let ctx = Context::new(d.path()).with_home(Some(Path::new("/home/dev")));
    let v = PathValidator::new([d.path()]);
    (d, ctx, v)
}

#[divan::bench(args = TYPICAL)]
fn typical(b: Bencher, cmd: &str) {
    let (d, ctx, v) = fixture();
    b.bench_local(|| black_box(analyze(black_box(cmd), d.path(), &ctx, Knowledge::builtin(), &v)));
}

/// A realistic long command line of the given size: many compound segments with redirections,
/// pipes, quotes and substitutions.
fn long_input(kib: usize) -> String {
    let unit = "cd src && grep -n \"fn $(echo main)\" lib.rs | sort > out/list.txt; git diff --stat; ";
    let mut s = String::new();
    while s.len() + unit.len() <= kib * 1024 {
        s.push_str(unit);
    }
    s
}

#[divan::bench(args = [1, 4, 16, 64])]
fn size_kib(b: Bencher, kib: usize) {
    let (d, ctx, v) = fixture();
    let input = long_input(kib).chars().take(kib * 1024 - 1).collect::<String>();
    b.bench_local(|| black_box(analyze(black_box(&input), d.path(), &ctx, Knowledge::builtin(), &v)));
}

/// `$(` nested to the byte limit (refused past depth 16), and `(` nested likewise.
#[divan::bench(args = [1, 4, 16, 64])]
fn nested_subst_kib(b: Bencher, kib: usize) {
    let (d, ctx, v) = fixture();
    let n = kib * 1024 / 3;
    let input = format!("{}x{}", "$(".repeat(n), ")".repeat(n));
    b.bench_local(|| black_box(analyze(black_box(&input), d.path(), &ctx, Knowledge::builtin(), &v)));
}

#[divan::bench(args = [1, 4, 16, 64])]
fn nested_parens_kib(b: Bencher, kib: usize) {
    let (d, ctx, v) = fixture();
    let n = kib * 1024 / 2 - 4;
    let input = format!("{}ls{}", "(".repeat(n), ")".repeat(n));
    b.bench_local(|| black_box(analyze(black_box(&input), d.path(), &ctx, Knowledge::builtin(), &v)));
}
