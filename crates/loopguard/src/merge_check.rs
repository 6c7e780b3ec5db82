//! `loopguard merge-check <base>..<head>`: whether a change is eligible for an automatic merge
//! (see `loopguard_core::merge`). Reads the diff with git; prints its reasons, or JSON.

use loopguard_core::Policy;
use loopguard_core::merge::{FileChange, MergeReport, classify};
use std::path::Path;

fn git(repo: &Path, args: &[&str]) -> Result<std::process::Output, String> {
    // Nothing of the repository runs (hooks, fsmonitor, filters): see `safe_git`.
    crate::git::safe_git(repo).args(args).output().map_err(|e| format!("cannot run git: {e}"))
}

fn git_ok(repo: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = git(repo, args)?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// The files a range changes, with their lines.
pub fn changes(repo: &Path, range: &str, policy: &Policy, home: Option<&Path>) -> Result<Vec<FileChange>, String> {
    if !range.contains("..") || range.starts_with('-') {
        return Err(format!("expected a range like main..HEAD, found `{range}`"));
    }
    let names = git_ok(repo, &["diff", "--no-renames", "--name-status", "-z", range, "--"])?;
    let fields: Vec<&[u8]> = names.split(|b| *b == 0).filter(|f| !f.is_empty()).collect();
    let mut out = Vec::new();
    for pair in fields.chunks(2) {
        let [status, path] = pair else { return Err("unexpected `git diff --name-status` output".into()) };
        let path = String::from_utf8_lossy(path).into_owned();
        let status = status.first().map_or('?', |b| *b as char);
        let diff = git_ok(
            repo,
            &["diff", "--no-renames", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", range, "--", &path],
        )?;
        let (mut removed, mut added) = (Vec::new(), Vec::new());
        for line in String::from_utf8_lossy(&diff).lines() {
            if line.starts_with("---") || line.starts_with("+++") {
                continue;
            }
            if let Some(l) = line.strip_prefix('-') {
                removed.push(l.to_string());
            } else if let Some(l) = line.strip_prefix('+') {
                added.push(l.to_string());
            }
        }
        // Whitespace-only: the same text once every whitespace character is gone (git's `-w`
        // still sees a line split as a change).
        let squash = |v: &[String]| v.concat().chars().filter(|c| !c.is_whitespace()).collect::<String>();
        let whitespace_only = squash(&removed) == squash(&added);
        let denylisted = policy.path_rules().denylisted(&repo.join(&path), repo, home).is_some();
        out.push(FileChange { path, status, removed, added, whitespace_only, denylisted });
    }
    Ok(out)
}

/// Runs the check.
pub fn run(repo: &Path, range: &str, policy: &Policy, home: Option<&Path>) -> Result<MergeReport, String> {
    let files = changes(repo, range, policy, home)?;
    Ok(classify(&files, &["docs/**".to_string()]))
}

/// The report for people.
pub fn render(r: &MergeReport) -> String {
    let mut out = String::new();
    for f in &r.files {
        let mark = if f.category.is_some() { "ok " } else { "NO " };
        out.push_str(&format!("{mark} {}: {}\n", f.path, f.reason));
    }
    out.push_str(if r.eligible {
        "eligible for an automatic merge\n"
    } else if r.files.is_empty() {
        "not eligible: the range changes nothing\n"
    } else {
        "not eligible for an automatic merge: a human reviews and merges it\n"
    });
    out
}

/// The range a merge-level shell command would merge, when it is simple enough to tell:
/// `git merge <ref>` → `HEAD..<ref>`, `git push <remote> <src>:<dst>|<branch>` → `<remote>/<dst>..<src>`.
/// Anything else (wrappers, compound commands, `gh pr merge`) → `None`: the caller fails closed.
pub fn merge_range(command: &str) -> Option<String> {
    if command.chars().any(|c| ";&|$`<>()\"'\\\n*?".contains(c)) {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    match words.as_slice() {
        ["git", "merge", rest @ ..] => {
            let refs: Vec<&&str> = rest.iter().filter(|w| !w.starts_with('-')).collect();
            match refs.as_slice() {
                [r] => Some(format!("HEAD..{r}")),
                _ => None,
            }
        }
        ["git", "push", rest @ ..] => {
            let args: Vec<&&str> = rest.iter().filter(|w| !w.starts_with('-')).collect();
            match args.as_slice() {
                [remote, spec] => {
                    let (src, dst) = spec.split_once(':').unwrap_or((spec, spec));
                    let src = if src.is_empty() { "HEAD" } else { src };
                    Some(format!("{remote}/{dst}..{src}"))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_ranges_of_simple_commands_only() {
        assert_eq!(merge_range("git merge feature/x").as_deref(), Some("HEAD..feature/x"));
        assert_eq!(merge_range("git merge --no-ff topic").as_deref(), Some("HEAD..topic"));
        assert_eq!(merge_range("git push origin main").as_deref(), Some("origin/main..main"));
        assert_eq!(merge_range("git push origin HEAD:main").as_deref(), Some("origin/main..HEAD"));
        for c in
            ["gh pr merge 12", "git merge a b", "git push", "git merge $(x)", "cd x && git merge y", "sudo git merge y"]
        {
            assert_eq!(merge_range(c), None, "{c}");
        }
    }
}
