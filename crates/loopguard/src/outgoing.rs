//! Secrets in what a command would send out: the staged changes of `git commit`, the commits
//! `git push` would publish, the files `gh` and HTTP clients would upload. The tool input itself
//! is scanned by the gate (`secret-in-arguments`); this looks at what the command *reads* and
//! ships, which only the hook can see (it runs git and reads files).
//!
//! git runs here with everything that could execute the repository's own code switched off:
//! no hooks, no fsmonitor, no external diff or textconv, and every configured clean/smudge
//! filter emptied. A finding names the file, line and kind, never the value.

use loopguard_core::checks::shell::{self, Command};
use loopguard_secrets::{Scanner, SecretFinding, Severity, files::FileFinding};
use std::path::{Path, PathBuf};

/// What one command would send, ready to scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// A unified diff (`git diff -U0` / `git log -p` output): its added lines are scanned.
    Diff {
        /// What it is ("the staged changes").
        what: String,
        /// The diff text.
        diff: String,
    },
    /// A file that would be uploaded.
    File {
        /// The file.
        path: PathBuf,
        /// Its contents (read when the payload was found, bounded).
        text: String,
    },
    /// Something that could not be read: reported, since what cannot be checked is not allowed
    /// silently.
    Unreadable {
        /// What could not be read.
        what: String,
        /// Why.
        why: String,
    },
}

/// Largest file or diff read (bytes); a larger one is asked about, not scanned in part.
const MAX_BYTES: usize = 4 << 20;

/// Most commits a push is checked for; more is asked about.
const MAX_COMMITS: usize = 500;

/// The payloads of every command in `command` that would send something.
pub fn payloads(command: &str, cwd: &Path, home: Option<&Path>) -> Vec<Payload> {
    let home_s = home.and_then(Path::to_str);
    let Ok(segments) = shell::split_with_home(command, home_s) else { return Vec::new() };
    let Ok(cmds) = shell::commands(&segments, home_s) else { return Vec::new() };
    let mut out = Vec::new();
    for c in &cmds {
        match c.program.as_str() {
            "git" => git_payloads(c, cwd, &mut out),
            "gh" => gh_payloads(c, cwd, &mut out),
            "curl" | "wget" | "wget2" | "http" | "https" | "xh" | "xhs" | "curlie" => http_payloads(c, cwd, &mut out),
            _ => {}
        }
    }
    out
}

fn words(c: &Command) -> Vec<&str> {
    c.args.iter().map(|w| w.text.as_str()).collect()
}

/// `git [-C dir] [-c k=v] commit|push …`.
fn git_payloads(c: &Command, cwd: &Path, out: &mut Vec<Payload>) {
    let w = words(c);
    let mut repo = cwd.to_path_buf();
    let mut i = 0;
    while i < w.len() && w[i].starts_with('-') {
        match w[i] {
            "-C" => {
                if let Some(d) = w.get(i + 1) {
                    repo = cwd.join(d);
                }
                i += 2;
            }
            "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            _ => i += 1,
        }
    }
    let Some(&sub) = w.get(i) else { return };
    let rest = &w[i + 1..];
    match sub {
        "commit" => {
            let all = rest.iter().any(|a| {
                *a == "--all"
                    || *a == "--include"
                    || *a == "--only"
                    || (a.starts_with('-')
                        && !a.starts_with("--")
                        && a[1..].chars().take_while(|c| *c != 'm').any(|c| matches!(c, 'a' | 'i' | 'o')))
            });
            let paths = commit_pathspecs(rest);
            if all || !paths.is_empty() {
                // What would be committed includes working-tree changes of tracked files.
                let mut args = vec!["diff", "HEAD"];
                if !paths.is_empty() {
                    args.push("--");
                    args.extend(paths.iter().copied());
                }
                out.push(run_diff(&repo, "the changes to commit", &args));
            } else {
                out.push(run_diff(&repo, "the staged changes", &["diff", "--cached"]));
            }
        }
        "push" => {
            let operands: Vec<&str> = rest.iter().copied().filter(|a| !a.starts_with('-')).collect();
            let everything = rest.iter().any(|a| matches!(*a, "--all" | "--mirror" | "--branches"));
            let tags = rest.iter().any(|a| matches!(*a, "--tags" | "--mirror" | "--follow-tags"));
            let mut revs: Vec<String> = Vec::new();
            if everything {
                revs.push("--branches".into());
            }
            if tags {
                revs.push("--tags".into());
            }
            for spec in operands.iter().skip(1) {
                let src = spec.trim_start_matches('+').split(':').next().unwrap_or("");
                if !src.is_empty() {
                    revs.push(src.to_string());
                }
            }
            if revs.is_empty() {
                revs.push("HEAD".into());
            }
            let limit = (MAX_COMMITS + 1).to_string();
            let mut args: Vec<&str> = vec!["log", "-p", "--format=commit %H", "-n", &limit];
            args.extend(revs.iter().map(String::as_str));
            args.extend(["--not", "--remotes"]);
            out.push(run_diff(&repo, "the commits to push (not yet on a remote)", &args));
        }
        _ => {}
    }
}

/// The pathspecs of `git commit` (operands not taken by an option).
fn commit_pathspecs<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    const WITH_VALUE: &[&str] = &[
        "-m",
        "--message",
        "-F",
        "--file",
        "-C",
        "--reuse-message",
        "-c",
        "--reedit-message",
        "--author",
        "--date",
        "-t",
        "--template",
        "--fixup",
        "--squash",
        "--cleanup",
        "-S",
        "--trailer",
        "--pathspec-from-file",
    ];
    let mut out = Vec::new();
    let mut i = 0;
    let mut dashdash = false;
    while i < rest.len() {
        let a = rest[i];
        if dashdash {
            out.push(a);
        } else if a == "--" {
            dashdash = true;
        } else if WITH_VALUE.contains(&a) {
            i += 1;
        } else if a.starts_with('-') {
            // `-am msg`: a cluster ending in m takes the next word.
            if !a.starts_with("--") && a.ends_with('m') && a.len() > 2 {
                i += 1;
            }
        } else {
            out.push(a);
        }
        i += 1;
    }
    out
}

/// `gh pr create --body-file F`, `gh issue create -F F`, `gh gist create FILES`, `gh release
/// create TAG FILES`, `gh api --input F`, `gh api -F key=@F`.
fn gh_payloads(c: &Command, cwd: &Path, out: &mut Vec<Payload>) {
    let w = words(c);
    let (group, verb) = (w.first().copied().unwrap_or(""), w.get(1).copied().unwrap_or(""));
    let mut i = 0;
    while i < w.len() {
        let a = w[i];
        let next = w.get(i + 1).copied();
        if let Some(v) = a.strip_prefix("--body-file=").or_else(|| a.strip_prefix("--input=")) {
            file(cwd, v, out);
        } else if matches!(a, "--body-file" | "--input") || (a == "-F" && group != "api") {
            if let Some(v) = next {
                file(cwd, v, out);
                i += 1;
            }
        } else if matches!(a, "-F" | "--field" | "-f" | "--raw-field") && group == "api" {
            if let Some(v) = next.and_then(|n| n.split_once("=@")).map(|(_, f)| f) {
                file(cwd, v, out);
            }
            i += 1;
        }
        i += 1;
    }
    let operands: Vec<&str> = w.iter().skip(2).copied().filter(|a| !a.starts_with('-')).collect();
    match (group, verb) {
        ("gist", "create" | "edit") => operands.iter().filter(|f| **f != "-").for_each(|f| file(cwd, f, out)),
        ("release", "create" | "upload") => {
            operands.iter().skip(1).for_each(|f| file(cwd, f.split('#').next().unwrap_or(f), out));
        }
        _ => {}
    }
}

/// Files an HTTP client would send: `curl -d @F`, `--data-binary @F`, `--data-urlencode n@F`,
/// `-F n=@F`, `-T F`, `--json @F`; wget `--post-file`/`--body-file`; HTTPie `@F` and `field@F`;
/// a file redirected into the client's stdin.
fn http_payloads(c: &Command, cwd: &Path, out: &mut Vec<Payload>) {
    let w = words(c);
    let httpie = matches!(c.program.as_str(), "http" | "https" | "xh" | "xhs");
    let mut i = 0;
    while i < w.len() {
        let a = w[i];
        let value = |long: &str| a.strip_prefix(long).and_then(|v| v.strip_prefix('='));
        let next = w.get(i + 1).copied();
        let data_opts = ["-d", "--data", "--data-binary", "--data-ascii", "--json", "--data-urlencode"];
        if data_opts.contains(&a) || (a.starts_with("-d") && a.len() > 2 && !a.starts_with("--")) {
            let v = if a.len() > 2 && !a.starts_with("--") { Some(&a[2..]) } else { next };
            if let Some(v) = v {
                let f = if a == "--data-urlencode" { v.split_once('@').map(|(_, f)| f) } else { v.strip_prefix('@') };
                if let Some(f) = f.filter(|f| *f != "-") {
                    file(cwd, f, out);
                }
            }
            i += usize::from(a.len() <= 2 || a.starts_with("--"));
        } else if let Some(v) = data_opts.iter().find_map(|o| value(o)) {
            if let Some(f) = v.strip_prefix('@') {
                file(cwd, f, out);
            }
        } else if matches!(a, "-F" | "--form") {
            if let Some(f) = next.and_then(|n| n.split_once("=@").or_else(|| n.split_once("=<"))).map(|(_, f)| f) {
                file(cwd, f.split(';').next().unwrap_or(f), out);
            }
            i += 1;
        } else if matches!(a, "-T" | "--upload-file") {
            if let Some(f) = next {
                file(cwd, f, out);
            }
            i += 1;
        } else if let Some(f) = value("--upload-file").or_else(|| value("--post-file")).or_else(|| value("--body-file"))
        {
            file(cwd, f, out);
        } else if matches!(a, "--post-file" | "--body-file") {
            if let Some(f) = next {
                file(cwd, f, out);
            }
            i += 1;
        } else if httpie && !a.starts_with('-') {
            // `field@file`, `field=@file`, `field:=@file`, or a bare `@file` body.
            if let Some(at) = a.find('@')
                && !a.contains("://")
                && a[..at].chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '=' | ':' | '.'))
            {
                file(cwd, &a[at + 1..], out);
            }
        }
        i += 1;
    }
    for r in &c.redirects {
        if r.kind == shell::RedirectKind::Read {
            file(cwd, &r.target.text, out);
        }
    }
}

fn file(cwd: &Path, f: &str, out: &mut Vec<Payload>) {
    if f.is_empty() {
        return;
    }
    let p = cwd.join(f);
    if !p.is_file() {
        return;
    }
    // What cannot be read whole is not let through unchecked: it is asked about.
    let what = format!("the file {}", p.display());
    match std::fs::metadata(&p).map(|m| m.len()) {
        Ok(n) if n > MAX_BYTES as u64 => {
            out.push(Payload::Unreadable { what, why: format!("{n} bytes, more than loopguard reads ({MAX_BYTES})") })
        }
        Ok(_) => match std::fs::read(&p) {
            Ok(bytes) => out.push(Payload::File { path: p, text: String::from_utf8_lossy(&bytes).into_owned() }),
            Err(e) => out.push(Payload::Unreadable { what, why: e.to_string() }),
        },
        Err(e) => out.push(Payload::Unreadable { what, why: e.to_string() }),
    }
}

fn git(repo: &Path, args: &[&str]) -> Result<std::process::Output, String> {
    crate::git::safe_git(repo).args(args).output().map_err(|e| format!("cannot run git: {e}"))
}

fn run_diff(repo: &Path, what: &str, args: &[&str]) -> Payload {
    let mut full: Vec<&str> = args.to_vec();
    // Right after the subcommand: options that keep git from running anything of the repo's.
    full.splice(1..1, ["--no-color", "--no-ext-diff", "--no-textconv", "-U0"]);
    match git(repo, &full) {
        Ok(o) if o.status.success() => {
            // Too much to read whole is asked about, not scanned in part.
            if o.stdout.len() > MAX_BYTES {
                return Payload::Unreadable {
                    what: what.to_string(),
                    why: format!("{} bytes of changes, more than loopguard reads ({MAX_BYTES})", o.stdout.len()),
                };
            }
            let diff = String::from_utf8_lossy(&o.stdout).into_owned();
            if diff.lines().filter(|l| l.starts_with("commit ")).count() > MAX_COMMITS {
                return Payload::Unreadable {
                    what: what.to_string(),
                    why: format!("more than {MAX_COMMITS} commits to check"),
                };
            }
            Payload::Diff { what: what.to_string(), diff }
        }
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            // Not a repository, or no commit yet: nothing git would send from here.
            if err.contains("not a git repository") {
                return Payload::Diff { what: what.to_string(), diff: String::new() };
            }
            if err.contains("ambiguous argument 'HEAD'")
                || err.contains("bad revision 'HEAD'")
                || err.contains("unknown revision")
            {
                // No commit yet: everything staged is what a first commit sends.
                return match git(repo, &["diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", "-U0"]) {
                    Ok(o) if o.status.success() => {
                        Payload::Diff { what: what.to_string(), diff: String::from_utf8_lossy(&o.stdout).into_owned() }
                    }
                    _ => Payload::Unreadable { what: what.to_string(), why: err.trim().to_string() },
                };
            }
            Payload::Unreadable { what: what.to_string(), why: err.trim().to_string() }
        }
        Err(e) => Payload::Unreadable { what: what.to_string(), why: e },
    }
}

/// Findings in one payload, each with where it is (`file:line`).
pub fn scan(p: &Payload, scanner: &Scanner) -> Vec<(String, SecretFinding)> {
    match p {
        Payload::Diff { diff, .. } => loopguard_secrets::files::scan_diff(scanner, diff)
            .into_iter()
            .map(|FileFinding { path, finding }| (format!("{}:{}", path.display(), finding.line), finding))
            .collect(),
        Payload::File { path, text } => {
            scanner.scan(text).into_iter().map(|f| (format!("{}:{}", path.display(), f.line), f)).collect()
        }
        Payload::Unreadable { .. } => Vec::new(),
    }
}

/// The description of what a payload is, for a reason.
pub fn what(p: &Payload) -> String {
    match p {
        Payload::Diff { what, .. } | Payload::Unreadable { what, .. } => what.clone(),
        Payload::File { path, .. } => format!("the file {}", path.display()),
    }
}

/// Whether a finding blocks by itself (the rest only add up).
pub fn blocks(f: &SecretFinding) -> bool {
    f.severity >= Severity::High
}
