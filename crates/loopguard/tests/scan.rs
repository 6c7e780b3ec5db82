//! `loopguard scan` on a real git repository built in the test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::Sandbox;
use std::process::Command;

fn git(sb: &Sandbox, args: &[&str]) {
    let st = Command::new("git").args(args).current_dir(&sb.ws).env("HOME", &sb.home).status().unwrap();
    assert!(st.success(), "git {args:?}");
}

fn token(tail: char) -> String {
    format!("ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5{tail}")
}

fn repo() -> Sandbox {
    let sb = Sandbox::new();
    std::fs::remove_dir_all(sb.ws.join(".git")).unwrap();
    git(&sb, &["init", "-q", "-b", "main"]);
    git(&sb, &["config", "user.email", "t@t"]);
    git(&sb, &["config", "user.name", "t"]);
    sb.write("src/lib.rs", "pub fn f() {}\n");
    sb.write(".gitignore", "build/\n");
    git(&sb, &["add", "-A"]);
    git(&sb, &["commit", "-qm", "init"]);
    sb
}

fn scan(sb: &Sandbox, args: &[&str]) -> (i32, String) {
    let mut a = vec!["scan"];
    a.extend_from_slice(args);
    let out = sb.command(&a).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn finds_secrets_in_files_respecting_gitignore_and_inline_allows() {
    let sb = repo();
    sb.write(
        "src/config.rs",
        &format!("const T: &str = \"{}\";\nconst OK: &str = \"{}\"; // gitleaks:allow\n", token('A'), token('B')),
    );
    sb.write("build/out.txt", &format!("AKIA{}\n", "Q7RZ2M5K3W6X4N2P"));
    let (code, out) = scan(&sb, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("src/config.rs:1: [github-pat]"), "{out}");
    assert_eq!(out.matches("[github-pat]").count(), 1, "inline allow ignored: {out}");
    assert!(!out.contains("aws-access-key-id"), "gitignored file scanned: {out}");
    assert!(!out.contains(&token('A')), "the secret itself was printed");
    let (code, out) = scan(&sb, &["--all"]);
    assert_eq!(code, 1);
    assert!(out.contains("build/out.txt:1: [aws-access-key-id]"), "{out}");
}

#[test]
fn clean_trees_exit_zero() {
    let sb = repo();
    let (code, out) = scan(&sb, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("0 finding(s)"), "{out}");
}

#[test]
fn json_sarif_and_baseline() {
    let sb = repo();
    sb.write("a.env.txt", &format!("DATABASE_URL=postgres://app:{}@db/app\n", "Zq8vN2kP4mX7rT1w"));
    let (_, json) = scan(&sb, &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["findings"][0]["rule"], "url-credentials");
    assert_eq!(v["findings"][0]["fingerprint"].as_str().unwrap().len(), 16);
    let (_, sarif) = scan(&sb, &["--format", "sarif"]);
    let s: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    assert_eq!(s["version"], "2.1.0");
    assert_eq!(s["runs"][0]["results"][0]["ruleId"], "url-credentials");
    assert_eq!(s["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"], 1);
    let bl = sb.root.path().join("baseline.json");
    let (code, _) = scan(&sb, &["--write-baseline", bl.to_str().unwrap()]);
    assert_eq!(code, 1);
    let (code, out) = scan(&sb, &["--baseline", bl.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 more accepted by the baseline"), "{out}");
}

#[test]
fn staged_and_diff_ranges_scan_added_lines_only() {
    let sb = repo();
    sb.write("src/lib.rs", &format!("pub fn f() {{}}\nconst K: &str = \"{}\";\n", token('C')));
    let (code, out) = scan(&sb, &["--staged"]);
    assert_eq!(code, 0, "unstaged change reported: {out}");
    git(&sb, &["add", "src/lib.rs"]);
    let (code, out) = scan(&sb, &["--staged"]);
    assert_eq!(code, 1);
    assert!(out.contains("src/lib.rs:2: [github-pat]"), "{out}");
    git(&sb, &["commit", "-qm", "add key"]);
    let (code, out) = scan(&sb, &["--git-diff", "HEAD~1..HEAD"]);
    assert_eq!(code, 1);
    assert!(out.contains("src/lib.rs:2:"), "{out}");
    // Removing it is not a finding (only added lines count).
    sb.write("src/lib.rs", "pub fn f() {}\n");
    git(&sb, &["commit", "-qam", "remove key"]);
    let (code, out) = scan(&sb, &["--git-diff", "HEAD~1..HEAD"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn stdin_is_scanned() {
    let sb = repo();
    let mut child = sb
        .command(&["scan", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(format!("token={}\n", token('D')).as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("-:1: [github-pat]"));
}

#[test]
fn a_gitleaks_config_in_the_repository_is_used() {
    let sb = repo();
    sb.write(
        ".gitleaks.toml",
        "[extend]\nuseDefault = true\n\n[[rules]]\nid = \"acme-token\"\nregex = '''acme_live_([a-z0-9]{24})'''\nkeywords = [\"acme_live_\"]\n\n[allowlist]\npaths = ['''fixtures/''']\n",
    );
    sb.write("src/a.rs", "let t = \"acme_live_k3j9x2m8q7w1z5v4b6n0p2r8\";\n");
    sb.write("fixtures/b.rs", &format!("let t = \"{}\";\n", token('E')));
    let (code, out) = scan(&sb, &["--format", "sarif"]);
    assert_eq!(code, 1, "{out}");
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> =
        s["runs"][0]["results"].as_array().unwrap().iter().map(|r| r["ruleId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["acme-token"], "{out}");
    assert!(s["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap().iter().any(|r| r["id"] == "acme-token"));
    let bad = sb.root.path().join("bad.toml");
    std::fs::write(&bad, "[[rules]]\nid = \"x\"\nregex = '''(oops'''\n").unwrap();
    let out = sb.command(&["scan", "--config", bad.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rule `x`: invalid regex"));
}
