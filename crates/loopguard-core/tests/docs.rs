//! The documentation is part of the contract: the policy example must load, every key and rule
//! must be documented, and every reason code must be in docs/reason-codes.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use loopguard_core::policy::{BUILTIN_TOML, LayerKind};
use loopguard_core::reasons::CONFIGURABLE_RULES;
use loopguard_core::{Policy, REASON_CODES};
use std::path::{Path, PathBuf};

fn doc(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs").join(name)).unwrap()
}

fn block_after(text: &str, marker: &str) -> String {
    let rest = &text[text.find(marker).unwrap_or_else(|| panic!("{marker} missing"))..];
    let start = rest.find("```toml\n").unwrap() + "```toml\n".len();
    let end = rest[start..].find("```").unwrap();
    rest[start..start + end].to_string()
}

#[test]
fn documented_policy_example_loads_as_a_user_policy() {
    let example = block_after(&doc("policy.md"), "<!-- example: user -->");
    let p = Policy::from_layers(&[(LayerKind::User, PathBuf::from("docs/policy.md"), example)])
        .unwrap_or_else(|e| panic!("the documented example does not load:\n{e}"));
    assert_eq!(p.commands().len(), 2);
    assert_eq!(p.tool_verdict("mcp__docs__search"), Some(loopguard_core::Verdict::Allow));
}

#[test]
fn every_key_and_configurable_rule_is_documented() {
    let text = doc("policy.md");
    for key in [
        "version",
        "[gate]",
        "unknown_tool",
        "autonomy",
        "[workspace]",
        "[paths]",
        "denylist",
        "secret_read",
        "secret_read_except",
        "migration_session",
        "[secrets]",
        "ask_score",
        "extra_roots",
        "[tools]",
        "[rules]",
        "[[commands]]",
        "`code`",
        "`program`",
        "`flags`",
        "`args`",
        "`decision`",
        "`message`",
        "`match`",
        "`not_match`",
        "[packs]",
        "`enable`",
        "`disable`",
        "`files`",
    ] {
        assert!(text.contains(key), "docs/policy.md does not mention {key}");
    }
    let codes = doc("reason-codes.md");
    for rule in CONFIGURABLE_RULES {
        assert!(
            codes.contains(&format!("| `{rule}` | yes |")),
            "docs/reason-codes.md does not mark {rule} configurable"
        );
    }
    // Every rule the built-in file sets is in the policy.md table.
    for line in BUILTIN_TOML.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase()) && l.contains(" = \""))
    {
        let key = line.split(' ').next().unwrap();
        if CONFIGURABLE_RULES.contains(&key) {
            assert!(text.contains(&format!("| `{key}` |")), "docs/policy.md does not list {key}");
        }
    }
}

#[test]
fn every_reason_code_is_documented() {
    let text = doc("reason-codes.md");
    for c in REASON_CODES {
        assert!(text.contains(&format!("| `{}` |", c.code)), "docs/reason-codes.md lacks {}", c.code);
        assert!(loopguard_core::reasons::is_kebab_case(c.code), "{} is not kebab-case", c.code);
    }
}

#[test]
fn the_documented_profiles_are_the_shipped_ones() {
    use loopguard_core::breaker::profiles::Profile;
    let text = doc("breakers.md");
    let start = text.find("<!-- profiles:").unwrap();
    let end = text.find("<!-- /profiles -->").unwrap();
    let rows: Vec<&str> =
        text[start..end].lines().filter(|l| l.starts_with("| loop") || l.starts_with("| interactive")).collect();
    let mut want = Vec::new();
    for p in [Profile::Loop, Profile::Interactive] {
        for r in p.rules() {
            want.push(format!(
                "| {} | {} | {} | {} | {} | {} s | {} |",
                p.as_str(),
                r.trigger.as_str(),
                r.threshold,
                r.action.as_str(),
                r.reset.as_str(),
                r.cooldown,
                if r.revert { "yes" } else { "no" }
            ));
        }
    }
    assert_eq!(rows, want);
    let policy = doc("policy.md");
    for key in ["[breaker]", "[[breakers]]", "[prices]", "[break_glass]"] {
        assert!(policy.contains(key), "docs/policy.md does not mention {key}");
    }
}
