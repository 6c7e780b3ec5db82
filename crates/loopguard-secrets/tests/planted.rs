//! Recall and false alarms on a planted set (tests/corpora/planted, written by gen.py): real-format
//! secrets in env files, YAML, JSON, code, shell, Terraform, Dockerfiles, Kubernetes manifests,
//! Markdown, logs, diffs and tool-call payloads; and decoys that look random but are not secrets
//! (hashes, UUIDs, digests, lockfile integrity, base64 images, documentation example keys).
//! Bars: recall ≥ 97% (found *and* redacted), no decoy flagged.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)] // test code

use loopguard_secrets::Scanner;
use std::collections::BTreeMap;
use std::path::Path;

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn rows(name: &str) -> Vec<Vec<String>> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/planted").join(name);
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('\t').map(unescape).collect())
        .collect()
}

#[test]
fn planted_secrets_are_found_and_redacted_and_decoys_are_not() {
    let s = Scanner::builtin();
    let mut by_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    let planted = rows("planted.tsv");
    for r in &planted {
        let (kind, frame, secret, text) = (&r[0], &r[1], &r[2], &r[3]);
        let found = s.scan(text);
        let at: Vec<usize> = text.match_indices(secret.as_str()).map(|(i, _)| i).collect();
        assert!(!at.is_empty(), "row of {kind}: the secret is not in its text");
        let covered = at.iter().all(|&i| found.iter().any(|f| f.span.start < i + secret.len() && i < f.span.end));
        let redacted = !s.redact(text).contains(secret.as_str());
        let e = by_kind.entry(kind.clone()).or_default();
        e.0 += 1;
        if covered && redacted {
            e.1 += 1;
        } else {
            misses.push(format!("{kind}/{frame}: {}", text.escape_debug()));
        }
    }
    let hits: usize = by_kind.values().map(|v| v.1).sum();
    let recall = hits as f64 / planted.len() as f64;
    for (k, (n, h)) in &by_kind {
        eprintln!("{k:<26} {h:>3}/{n:<3}");
    }
    eprintln!("recall {hits}/{} = {:.1}%", planted.len(), recall * 100.0);
    for m in &misses {
        eprintln!("missed {m}");
    }
    let mut flagged = Vec::new();
    let decoys = rows("decoys.tsv");
    for r in &decoys {
        let found = s.scan(&r[1]);
        if !found.is_empty() {
            let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
            flagged.push(format!("{}: {rules:?} in {}", r[0], r[1].escape_debug()));
        }
    }
    eprintln!("decoys flagged {}/{}", flagged.len(), decoys.len());
    assert!(recall >= 0.97, "recall {:.1}% < 97%; missed:\n{}", recall * 100.0, misses.join("\n"));
    assert!(flagged.is_empty(), "decoys flagged:\n{}", flagged.join("\n"));
}

#[test]
fn values_marked_as_examples_are_quiet_in_reports_but_not_in_the_hook() {
    let key = ["ghp_", "R8mZq2VtLx7KcN4pWb9Hs3Jd6Fg1Ay5Eu0To"].concat();
    for text in [
        format!("GH_TOKEN={key}  # example"),
        format!("# Example: a token looks like this\nexport GITHUB_TOKEN={key}"),
        format!("token = \"{key}\" // sample value, not a real token"),
    ] {
        assert!(Scanner::builtin_bulk().scan(&text).is_empty(), "reported: {text}");
        assert!(!Scanner::builtin().scan(&text).is_empty(), "the hook must still see: {text}");
    }
    // A URL is no comment.
    let text = format!("curl -H 'X-Token: {key}' https://example.com");
    assert!(!Scanner::builtin_bulk().scan(&text).is_empty());
}

#[test]
fn a_name_keyword_overlapped_by_a_rule_keyword_is_still_seen_on_long_texts() {
    // `sk` (a rule keyword) starts inside `accessKey`, before `key`: the automaton's
    // non-overlapping pass must not hide the name.
    let filler = "line of filler text that is long enough for the automaton path\n".repeat(80);
    let text = format!("{filler}minio:\n  accessKey: u8jzPde0IgxLd6GncfBAepfJBd0K\n{filler}");
    for s in [Scanner::builtin(), Scanner::builtin_bulk()] {
        assert!(s.scan(&text).iter().any(|f| f.rule == "generic-secret-assignment"), "{:?}", s.scan(&text));
    }
}

#[test]
fn a_documented_value_glued_to_a_real_one_does_not_hide_it() {
    let s = Scanner::builtin();
    assert!(s.scan("DB_PASSWORD=abcdef.0123456789abcdef").is_empty(), "kubeadm's documented token alone");
    assert!(!s.scan("DB_PASSWORD=Zq8vN2kP4mXabcdef.0123456789abcdef").is_empty(), "glued onto a real password");
}
