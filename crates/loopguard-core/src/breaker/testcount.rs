//! Passing and failing test counts from test-runner output seen in tool results: cargo test,
//! cargo nextest, pytest, go test (-v), jest, vitest and JUnit XML reports. Pure text scanning
//! with regexes; the first format that matches decides (their summary lines do not overlap).

use regex::Regex;
use std::sync::OnceLock;

/// The counts of one test run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TestRun {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed (errors included).
    pub failed: u64,
    /// Which runner's format was recognised.
    pub format: &'static str,
}

/// Longest text scanned: the tail of the output, where summaries are.
const MAX_SCAN: usize = 1 << 20;

struct Patterns {
    cargo: Regex,
    nextest: Regex,
    pytest: Regex,
    go: Regex,
    jest: Regex,
    vitest: Regex,
    junit_suites: Regex,
    junit_suite: Regex,
    attr: Regex,
}

/// Whether the test-summary patterns compile in this build (`loopguard selftest` asks: if they
/// did not, no test run would ever be recognised).
pub fn patterns_compile() -> bool {
    patterns().is_some()
}

fn patterns() -> Option<&'static Patterns> {
    static P: OnceLock<Option<Patterns>> = OnceLock::new();
    // The patterns are constants and a test compiles them; if one ever failed, no output would be
    // recognised, which the breaker treats as "no test run seen".
    P.get_or_init(|| {
        Some(Patterns {
            cargo: Regex::new(r"test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed").ok()?,
            nextest: Regex::new(
                r"(?m)^\s*Summary \[[^\]]*\]\s+(\d+) tests? run: (\d+) passed(?:[^,\n]*)?(?:, (\d+) failed)?",
            )
            .ok()?,
            pytest: Regex::new(r"(?m)^=+ (.*?\b(?:passed|failed|error|errors)\b.*?) in [\d.]+s").ok()?,
            go: Regex::new(r"(?m)^\s*--- (PASS|FAIL): ").ok()?,
            jest: Regex::new(r"(?m)^Tests:\s+(.*?)(\d+) total").ok()?,
            vitest: Regex::new(r"(?m)^\s*Tests\s+(.*?)\((\d+)\)\s*$").ok()?,
            junit_suites: Regex::new(r"<testsuites\b([^>]*)>").ok()?,
            junit_suite: Regex::new(r"<testsuite\b([^>]*)>").ok()?,
            attr: Regex::new(r#"\b(tests|failures|errors|skipped|disabled)="(\d+)""#).ok()?,
        })
    })
    .as_ref()
}

fn count_of(text: &str, word: &str) -> u64 {
    // "3 failed, 10 passed" → count before `word`.
    let mut total = 0u64;
    let words: Vec<&str> = text.split([',', '|']).collect();
    for part in words {
        let mut it = part.split_whitespace();
        if let (Some(n), Some(w)) = (it.next(), it.next())
            && w.trim_end_matches(',').starts_with(word)
            && let Ok(n) = n.parse::<u64>()
        {
            total = total.saturating_add(n);
        }
    }
    total
}

/// Parses test output. `None` when no known summary is present.
pub fn parse(output: &str) -> Option<TestRun> {
    let text = if output.len() > MAX_SCAN {
        let mut start = output.len() - MAX_SCAN;
        while !output.is_char_boundary(start) {
            start += 1;
        }
        &output[start..]
    } else {
        output
    };
    let p = patterns()?;
    let num = |m: Option<regex::Match<'_>>| m.and_then(|m| m.as_str().parse::<u64>().ok()).unwrap_or(0);

    if let Some(c) = p.nextest.captures_iter(text).last() {
        return Some(TestRun { passed: num(c.get(2)), failed: num(c.get(3)), format: "cargo-nextest" });
    }
    let cargo: Vec<_> = p.cargo.captures_iter(text).collect();
    if !cargo.is_empty() {
        let passed = cargo.iter().map(|c| num(c.get(1))).fold(0u64, u64::saturating_add);
        let failed = cargo.iter().map(|c| num(c.get(2))).fold(0u64, u64::saturating_add);
        return Some(TestRun { passed, failed, format: "cargo-test" });
    }
    if let Some(c) = p.jest.captures_iter(text).last() {
        let s = c.get(1).map_or("", |m| m.as_str());
        return Some(TestRun { passed: count_of(s, "passed"), failed: count_of(s, "failed"), format: "jest" });
    }
    if let Some(c) = p.vitest.captures_iter(text).last() {
        let s = c.get(1).map_or("", |m| m.as_str());
        if s.contains("passed") || s.contains("failed") {
            return Some(TestRun { passed: count_of(s, "passed"), failed: count_of(s, "failed"), format: "vitest" });
        }
    }
    if let Some(c) = p.pytest.captures_iter(text).last() {
        let s = c.get(1).map_or("", |m| m.as_str());
        let failed = count_of(s, "failed").saturating_add(count_of(s, "error"));
        return Some(TestRun { passed: count_of(s, "passed"), failed, format: "pytest" });
    }
    let junit = junit(text, p);
    if junit.is_some() {
        return junit;
    }
    let (mut passed, mut failed) = (0u64, 0u64);
    for c in p.go.captures_iter(text) {
        if c.get(1).is_some_and(|m| m.as_str() == "PASS") {
            passed = passed.saturating_add(1);
        } else {
            failed = failed.saturating_add(1);
        }
    }
    (passed.saturating_add(failed) > 0).then_some(TestRun { passed, failed, format: "go-test" })
}

fn junit(text: &str, p: &Patterns) -> Option<TestRun> {
    let attrs = |s: &str| {
        let mut a = [0u64; 4]; // tests, failures+errors, skipped, seen
        for c in p.attr.captures_iter(s) {
            let n: u64 = c.get(2).and_then(|m| m.as_str().parse().ok()).unwrap_or(0);
            match c.get(1).map_or("", |m| m.as_str()) {
                "tests" => {
                    a[0] = n;
                    a[3] = 1;
                }
                "failures" | "errors" => a[1] = a[1].saturating_add(n),
                _ => a[2] = a[2].saturating_add(n),
            }
        }
        a
    };
    // The <testsuites> totals when present, else the sum of the suites.
    if let Some(c) = p.junit_suites.captures(text) {
        let a = attrs(c.get(1).map_or("", |m| m.as_str()));
        if a[3] == 1 {
            return Some(TestRun {
                passed: a[0].saturating_sub(a[1].saturating_add(a[2])),
                failed: a[1],
                format: "junit-xml",
            });
        }
    }
    let (mut passed, mut failed, mut seen) = (0u64, 0u64, false);
    for c in p.junit_suite.captures_iter(text) {
        let a = attrs(c.get(1).map_or("", |m| m.as_str()));
        if a[3] == 1 {
            seen = true;
            passed = passed.saturating_add(a[0].saturating_sub(a[1].saturating_add(a[2])));
            failed = failed.saturating_add(a[1]);
        }
    }
    seen.then_some(TestRun { passed, failed, format: "junit-xml" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile() {
        let p = patterns().unwrap();
        assert!(p.cargo.is_match("test result: ok. 1 passed; 0 failed"));
    }

    fn run(out: &str) -> (u64, u64, &'static str) {
        let r = parse(out).unwrap_or_else(|| panic!("not recognised: {out}"));
        (r.passed, r.failed, r.format)
    }

    #[test]
    fn cargo_test_sums_every_binary() {
        let out = "running 3 tests\ntest a ... ok\n\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\nrunning 5 tests\ntest result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(run(out), (7, 1, "cargo-test"));
    }

    #[test]
    fn nextest() {
        assert_eq!(
            run(
                "    Starting 12 tests across 2 binaries\n     Summary [   0.123s] 12 tests run: 12 passed, 0 skipped\n"
            ),
            (12, 0, "cargo-nextest")
        );
        assert_eq!(
            run("     Summary [   1.002s] 12 tests run: 10 passed (1 slow), 2 failed, 0 skipped\n"),
            (10, 2, "cargo-nextest")
        );
    }

    #[test]
    fn pytest() {
        assert_eq!(run("....F\n=========== 1 failed, 4 passed, 2 skipped in 0.12s ===========\n"), (4, 1, "pytest"));
        assert_eq!(run("===== 5 passed in 0.01s =====\n"), (5, 0, "pytest"));
        assert_eq!(run("==== 2 passed, 1 error in 1.50s ====\n"), (2, 1, "pytest"));
    }

    #[test]
    fn go_test_verbose() {
        let out = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\n    --- PASS: TestB/sub (0.00s)\nFAIL\n";
        assert_eq!(run(out), (2, 1, "go-test"));
    }

    #[test]
    fn jest_and_vitest() {
        assert_eq!(
            run("Test Suites: 1 failed, 2 passed, 3 total\nTests:       1 failed, 5 passed, 6 total\n"),
            (5, 1, "jest")
        );
        assert_eq!(run(" Test Files  1 passed (1)\n      Tests  2 failed | 10 passed (12)\n"), (10, 2, "vitest"));
        assert_eq!(run("      Tests  7 passed (7)\n"), (7, 0, "vitest"));
    }

    #[test]
    fn junit_reports() {
        let xml = r#"<?xml version="1.0"?><testsuites tests="10" failures="1" errors="1" skipped="2"><testsuite name="a" tests="10"></testsuite></testsuites>"#;
        assert_eq!(run(xml), (6, 2, "junit-xml"));
        let xml = r#"<testsuite name="a" tests="3" failures="0"></testsuite><testsuite name="b" tests="4" failures="1" skipped="1"/>"#;
        assert_eq!(run(xml), (5, 1, "junit-xml"));
    }

    #[test]
    fn other_output_is_not_a_test_run() {
        for s in ["", "Compiling foo v0.1.0\nFinished", "1 passed", "tests passed: lots", "<testsuite name=\"x\">"] {
            assert_eq!(parse(s), None, "{s}");
        }
    }
}
