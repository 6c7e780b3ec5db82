//! PathValidator cost: `cargo bench -p loopguard-core --bench paths`.
//! Goal (issue 4): validating a 5-deep path with symlink resolution ≤ 5 µs.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use divan::{Bencher, black_box};
use loopguard_core::Policy;
use loopguard_core::checks::paths::PathValidator;
use std::os::unix::fs::symlink;

fn main() {
    divan::main();
}

/// ws/l1 → ws/a, a/l2 → a/b: `l1/l2/c/d/e.txt` crosses two links, 5 components deep.
fn farm() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path();
    std::fs::create_dir_all(ws.join("a/b/c/d")).unwrap();
    symlink(ws.join("a"), ws.join("l1")).unwrap();
    symlink(ws.join("a/b"), ws.join("a/l2")).unwrap();
    d
}

#[divan::bench]
fn write_5_deep_through_symlinks(b: Bencher) {
    let d = farm();
    let policy = Policy::builtin();
    let rules = policy.path_rules();
    let v = PathValidator::new([d.path()]).with_rules(rules, None, &[]);
    b.bench_local(|| black_box(v.check_write(black_box("l1/l2/c/d/e.txt"), d.path(), "write")));
}

#[divan::bench]
fn write_5_deep_plain(b: Bencher) {
    let d = farm();
    let policy = Policy::builtin();
    let v = PathValidator::new([d.path()]).with_rules(policy.path_rules(), None, &[]);
    b.bench_local(|| black_box(v.check_write(black_box("a/b/c/d/e.txt"), d.path(), "write")));
}

#[divan::bench]
fn write_denylisted(b: Bencher) {
    let d = farm();
    let policy = Policy::builtin();
    let v = PathValidator::new([d.path()]).with_rules(policy.path_rules(), None, &[]);
    let _ = v.check_write("a/secrets/x", d.path(), "write");
    b.bench_local(|| black_box(v.check_write(black_box("a/secrets/x"), d.path(), "write")));
}
