//! Invariants that must hold for every input, not just the listed cases.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use loopguard_core::checks::paths::resolve;
use loopguard_core::checks::shell::{MAX_COMMAND_BYTES, ShellError, commands, split};
use loopguard_core::{Context, Gate, Policy, ToolCall, Verdict};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

const BENIGN: &[&str] =
    &["ls -la", "git status", "echo 'rm -rf /'", "cargo test", "cd src", "true", "grep -r \"git push --force\" ."];
const DANGEROUS: &[&str] =
    &["rm -rf /", "git push --force", "git reset --hard", "rm -rf ~", "echo x > /etc/passwd", "rm -rf ..", "$CMD x"];
const JOINERS: &[&str] = &["; ", " && ", " || ", " | ", "\n", " & ", " ;\n "];

fn gate_verdict(cmd: &str, ws: &Path) -> Verdict {
    let policy = Policy::builtin();
    let ctx = Context::new(ws).with_worktree(common::worktree()).with_home(Some(Path::new("/home/prop")));
    Gate::new(&policy)
        .evaluate(
            &ToolCall::new(
                "Bash",
                loopguard_core::Action::Shell { command: cmd.to_string() },
                serde_json::json!({ "command": cmd }),
                ws,
            ),
            &ctx,
        )
        .verdict()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The lexer never panics and always decides: segments or an error, for any text.
    #[test]
    fn lexer_total_on_arbitrary_text(s in "[ -~\n\t]{0,200}") {
        if let Ok(segs) = split(&s) {
            let _ = commands(&segs, None);
        }
    }

    /// The same for shell-heavy text, where the interesting states are.
    #[test]
    fn lexer_total_on_shell_soup(parts in prop::collection::vec(prop::sample::select(vec![
        "$(", ")", "`", "'", "\"", "\\", "<<EOF\n", "EOF\n", "<<'X'\n", "X\n", "${", "}", "$'", "\\x72", ";", "&&", "|", ">", ">>", "2>&1", "<(", "rm", " -rf ", "/", "~", "bash -c ", "eval ", "sudo ", "#", "\n", " ",
    ]), 0..60)) {
        let s: String = parts.concat();
        if let Ok(segs) = split(&s) {
            let _ = commands(&segs, None);
        }
    }

    /// A benign prefix never launders a dangerous suffix, whatever joins them.
    #[test]
    fn benign_prefix_never_launders(a in prop::sample::select(BENIGN), d in prop::sample::select(DANGEROUS), j in prop::sample::select(JOINERS)) {
        let ws = tempfile::tempdir().unwrap();
        let alone = gate_verdict(d, ws.path());
        prop_assert!(alone > Verdict::Allow, "{d} alone is allowed");
        let joined = format!("{a}{j}{d}");
        prop_assert!(gate_verdict(&joined, ws.path()) >= alone, "{joined:?}");
        let reversed = format!("{d}{j}{a}");
        prop_assert!(gate_verdict(&reversed, ws.path()) >= alone, "{reversed:?}");
    }

    /// Resolution is idempotent, absolute, and free of `.`/`..`.
    #[test]
    fn resolve_is_idempotent(parts in prop::collection::vec(prop::sample::select(vec!["a", "b", ".", "..", "c.d", ""]), 0..12), absolute in any::<bool>()) {
        let p = parts.join("/");
        let base = Path::new("/nonexistent-prop-root/x/y");
        let path = if absolute { format!("/{p}") } else { p };
        let once = resolve(Path::new(&path), base).unwrap();
        prop_assert!(once.is_absolute());
        prop_assert!(!once.components().any(|c| matches!(c, std::path::Component::ParentDir | std::path::Component::CurDir)));
        prop_assert_eq!(resolve(&once, Path::new("/")).unwrap(), once);
    }

    /// With no symlinks involved, resolving never maps a path that leaves a directory back into it.
    #[test]
    fn resolve_never_maps_outside_inside(parts in prop::collection::vec(prop::sample::select(vec!["a", "..", ".", "b"]), 1..10)) {
        let ws = PathBuf::from("/nonexistent-prop-root/ws");
        let rel = parts.join("/");
        let got = resolve(Path::new(&rel), &ws).unwrap();
        // Lexical reference: walk the components by hand.
        let mut depth: i64 = 0;
        let mut left = false;
        for part in &parts {
            match *part {
                ".." => depth -= 1,
                "." => {}
                _ => depth += 1,
            }
            if depth < 0 { left = true; }
        }
        if !left {
            prop_assert!(got.starts_with(&ws), "{rel} → {}", got.display());
        }
        if depth < 0 {
            prop_assert!(!got.starts_with(&ws), "{rel} → {}", got.display());
        }
    }
}

#[test]
fn inputs_over_the_limit_are_refused_not_skipped() {
    let big = format!("echo ok; {}; rm -rf /", "x".repeat(MAX_COMMAND_BYTES));
    assert!(matches!(split(&big), Err(ShellError::TooLarge(_))));
    let ws = tempfile::tempdir().unwrap();
    assert_eq!(gate_verdict(&big, ws.path()), Verdict::Deny);
}
