//! Redaction removes every finding, is idempotent, and never breaks the JSON it redacts.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use loopguard_secrets::{Scanner, redact_json};
use proptest::prelude::*;

fn secret() -> impl Strategy<Value = String> {
    // Low-entropy draws (all one letter) are rightly not secrets: keep to mixed characters.
    prop_oneof![
        "[A-Za-z0-9]{36}".prop_filter("mixed", |s| mixed(s)).prop_map(|s| format!("ghp_{s}")),
        "[A-Z2-7]{16}".prop_filter("mixed", |s| mixed(s)).prop_map(|s| format!("AKIA{s}")),
        "[A-Za-z0-9]{24}".prop_filter("mixed", |s| mixed(s)).prop_map(|s| format!("sk_live_{s}")),
        "[A-Za-z0-9]{16}".prop_filter("mixed", |s| mixed(s)).prop_map(|s| format!("postgres://app:{s}@db:5432/x")),
        "[A-Za-z0-9]{20}".prop_filter("mixed", |s| mixed(s)).prop_map(|s| format!("password = \"{s}9!\"")),
        // Secret only by context: a bearer token, an AWS secret key next to its name, a hex API key.
        "[A-Za-z0-9]{32}"
            .prop_filter("mixed", |s| mixed(s) && s.chars().any(|c| c.is_ascii_digit()))
            .prop_map(|s| format!("Authorization: Bearer {s}")),
        "[A-Za-z0-9/+]{40}"
            .prop_filter("mixed", |s| mixed(s) && s.chars().any(|c| c.is_ascii_digit()))
            .prop_map(|s| format!("AWS_SECRET_ACCESS_KEY={s}")),
        "[0-9a-f]{32}".prop_filter("mixed", |s| mixed_hex(s)).prop_map(|s| format!("api_key: \"{s}\"")),
    ]
}

fn mixed_hex(s: &str) -> bool {
    let distinct: std::collections::HashSet<char> = s.chars().collect();
    distinct.len() >= 10 && s.chars().any(|c| c.is_ascii_digit()) && s.chars().any(|c| c.is_ascii_alphabetic())
}

fn mixed(s: &str) -> bool {
    let distinct: std::collections::HashSet<char> = s.chars().collect();
    distinct.len() * 4 >= s.len() * 3
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn redaction_removes_every_finding_and_is_idempotent(prefix in "[ -~\n]{0,80}", s in secret(), suffix in "[ -~\n]{0,80}") {
        let scanner = Scanner::builtin();
        let text = format!("{prefix} {s}\n{suffix}");
        let found = scanner.scan(&text);
        let once = scanner.redact(&text);
        for f in &found {
            prop_assert!(!once.contains(&text[f.span.clone()]), "left {:?} in {once:?}", &text[f.span.clone()]);
        }
        prop_assert!(scanner.scan(&once).is_empty(), "findings after redaction in {once:?}");
        prop_assert_eq!(scanner.redact(&once), once.clone());
    }

    #[test]
    fn planted_secrets_are_found(prefix in "[a-z ]{0,40}", s in secret()) {
        let scanner = Scanner::builtin();
        let text = format!("{prefix} {s}");
        prop_assert!(!scanner.scan(&text).is_empty(), "missed in {text:?}");
    }

    #[test]
    fn scanning_never_panics(text in "\\PC{0,400}") {
        let scanner = Scanner::builtin();
        let _ = scanner.redact(&text);
    }

    #[test]
    fn json_redaction_keeps_the_shape(s in secret(), n in 0usize..5) {
        let scanner = Scanner::builtin();
        let v = serde_json::json!({ "stdout": format!("out {s}"), "stderr": "", "interrupted": false, "n": n, "nested": [{ "k": s.clone() }] });
        let (r, count) = redact_json(&v, scanner);
        prop_assert!(count >= 1);
        prop_assert_eq!(r["interrupted"].clone(), serde_json::json!(false));
        prop_assert_eq!(r["n"].clone(), serde_json::json!(n));
        prop_assert!(r["stdout"].is_string() && r["nested"][0]["k"].is_string());
        prop_assert!(!r.to_string().contains(&s));
    }
}

#[test]
fn safe_text_redacts_secrets_and_home() {
    let home = std::path::Path::new("/home/alice");
    let t = format!("wrote /home/alice/project/.env with ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    assert_eq!(loopguard_secrets::safe_text(&t, Some(home)), "wrote ~/project/.env with ghp_…[REDACTED:github-pat]");
    assert_eq!(loopguard_secrets::redact_path("/home/alice", Some(home)), "~");
    assert_eq!(
        loopguard_secrets::redact_path("/home/alicex/a and /home/alice, ok", Some(home)),
        "/home/alicex/a and ~, ok"
    );
}

/// A fuzzer find: the same key twice on a line, the second time inside a longer low-entropy
/// run that no rule matches. Once found, a value is redacted everywhere in the text.
#[test]
fn a_secret_found_once_is_redacted_everywhere() {
    let s = Scanner::builtin();
    let text = "x=?sk_test_FiWWWWtokenWWWWNNNNNN^N and again sk_test_FiWWWWtokenWWWWNNNNNNNNWWWWWWWKK";
    let found = s.scan(text);
    assert!(!found.is_empty());
    let out = s.redact(text);
    for f in &found {
        assert!(!out.contains(&text[f.span.clone()]), "{out}");
    }
    assert_eq!(s.redact(&out), out);
}

#[test]
fn the_kept_prefix_only_names_a_token_kind() {
    // A fuzzer find: a URL password that was just `rk_test_` was "redacted" to its own prefix.
    let s = Scanner::builtin();
    let out = s.redact("redis://u:rk_test_@cache/0");
    assert!(!out.contains(":rk_test_"), "{out}");
    let out = s.redact("DATABASE_URL=postgres://app:AKIAQ7RZ2M5K3W6X4N2Pxx@db/app");
    assert!(!out.contains("AKIA"), "a password's start is not a kind: {out}");
    assert!(s.redact("ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A").starts_with("ghp_…[REDACTED"));
}

#[test]
fn summary_weighs_findings_by_severity() {
    let s = Scanner::builtin();
    let none = loopguard_secrets::Summary::of(&s.scan("nothing secret here"));
    assert_eq!((none.score, none.risk_score, none.has_critical, none.has_high), (0, 0, false, false));
    // One high (Google API key, 10) and one critical (GitHub PAT, 40).
    let text = format!(
        "key=AIza{} token=ghp_{}",
        "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    );
    let found = s.scan(&text);
    let ids: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(ids, ["gcp-api-key", "github-pat"]);
    let sum = loopguard_secrets::Summary::of(&found);
    assert_eq!((sum.score, sum.risk_score, sum.has_critical, sum.has_high), (50, 40, true, true));
}
