//! In-process cost of deciding: `cargo bench -p loopguard-core --bench gate`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use divan::{Bencher, black_box};
use loopguard_core::{Context, Gate, Policy, ToolCall};
use serde_json::json;

fn main() {
    divan::main();
}

fn setup() -> (tempfile::TempDir, Context) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("src")).unwrap();
    let ctx = Context::new(d.path()).with_home(Some(std::path::Path::new("/home/dev")));
    (d, ctx)
}

#[divan::bench(args = [
    "git status",
    "cargo test -p core 2>&1 | tail -n 20",
    "rm -rf /",
    "sudo env FOO=1 bash -c 'git push --force origin main'",
    "echo hi > out.txt && git add -A && git commit -m \"fix rm -rf detection\"",
])]
fn evaluate_bash(b: Bencher, cmd: &str) {
    let (d, ctx) = setup();
    let policy = Policy::builtin();
    let gate = Gate::new(&policy);
    let call = ToolCall::new(
        "Bash",
        loopguard_core::Action::Shell { command: cmd.to_string() },
        json!({ "command": cmd }),
        d.path(),
    );
    b.bench_local(|| black_box(gate.evaluate(black_box(&call), &ctx)));
}

#[divan::bench]
fn evaluate_write(b: Bencher) {
    let (d, ctx) = setup();
    let policy = Policy::builtin();
    let gate = Gate::new(&policy);
    let path = d.path().join("src/a/b/c/lib.rs").display().to_string();
    let action =
        loopguard_core::Action::WriteFile { path: path.clone(), change: loopguard_core::Change::Whole("x".into()) };
    let call = ToolCall::new("Write", action, json!({ "file_path": path, "content": "x" }), d.path());
    b.bench_local(|| black_box(gate.evaluate(black_box(&call), &ctx)));
}

/// Loading the built-in policy happens once per hook process.
#[divan::bench]
fn load_builtin_policy() -> Policy {
    Policy::builtin()
}

/// Compiling the `[paths]` globs happens once per hook process that checks a path.
#[divan::bench]
fn build_path_rules(b: Bencher) {
    let policy = Policy::builtin();
    b.bench_local(|| loopguard_core::checks::path_rules::PathRules::new(black_box(policy.path_lists())));
}
