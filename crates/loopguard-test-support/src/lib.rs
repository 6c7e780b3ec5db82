//! Test scaffolding shared by loopguard's crates (a dev-dependency only).
//!
//! - [`tsv`]: the fixture tables (`tests/fixtures/**/*.tsv`): one reader for every table, so a
//!   row's file and line are reported the same way everywhere.
//! - [`Failures`]: collect every failing row, then fail once with all of them (a table test
//!   that stopped at its first failure would hide the others).
//!
//! The `Sandbox` the binary's integration tests run the real `loopguard` in stays with those
//! tests (crates/loopguard/tests/common): it needs `CARGO_BIN_EXE_loopguard`, which only a test of
//! that crate sees, and no other crate runs the binary.

pub mod tsv;

/// Failing rows of a table test, reported together.
#[derive(Debug, Default)]
pub struct Failures(Vec<String>);

impl Failures {
    /// No failures yet.
    pub fn new() -> Self {
        Failures(Vec::new())
    }

    /// Records one failure.
    pub fn push(&mut self, message: impl Into<String>) {
        self.0.push(message.into());
    }

    /// Records a failure at a row.
    pub fn at(&mut self, row: &tsv::Row, message: impl std::fmt::Display) {
        self.0.push(format!("{}: {message}", row.at()));
    }

    /// How many were recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none were recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Fails the test with every recorded failure (of `rows` checked), if there is any.
    #[allow(clippy::panic)] // a test helper: failing is its job
    pub fn check(self, rows: usize) {
        if !self.0.is_empty() {
            panic!("{} of {rows} rows failed:\n{}", self.0.len(), self.0.join("\n"));
        }
    }
}
