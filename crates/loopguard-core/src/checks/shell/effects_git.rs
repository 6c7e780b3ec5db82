//! git: destructive subcommands, what push needs (PR, Merge for protected branches, Release for
//! tags), what reads only.

use super::effects_types::Effects;
use super::unwrap::Command;
use crate::reasons::*;
use crate::{AutonomyLevel, RiskLevel};

/// Branches whose update is a merge-level act.
pub const PROTECTED_BRANCHES: &[&str] =
    &["main", "master", "trunk", "production", "prod", "stable", "release", "develop"];

/// Whether a branch name is protected (`release/*` and `hotfix/*` too).
pub fn is_protected(branch: &str) -> bool {
    let b = branch.trim_start_matches("refs/heads/");
    PROTECTED_BRANCHES.contains(&b) || b.starts_with("release/") || b.starts_with("releases/")
}

fn short_flag(args: &[String], letter: char) -> bool {
    args.iter().any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letter))
}

fn has(args: &[String], names: &[&str]) -> bool {
    args.iter().any(|a| names.iter().any(|n| a == n || (n.starts_with("--") && a.starts_with(&format!("{n}=")))))
}

/// Effects of a git command line.
pub fn git(c: &Command, e: &mut Effects, current_branch: &dyn Fn() -> Option<String>) {
    let Some((sub, rest)) = c.git_subcommand() else {
        e.level = AutonomyLevel::Observe;
        return;
    };
    let observe = |e: &mut Effects| e.level = AutonomyLevel::Observe;
    match sub {
        "status" | "log" | "diff" | "show" | "blame" | "rev-parse" | "ls-files" | "ls-tree" | "describe"
        | "shortlog" | "grep" | "cat-file" | "rev-list" | "merge-base" | "name-rev" | "whatchanged"
        | "count-objects" | "help" | "version" | "check-ignore" | "for-each-ref" | "show-ref" | "var"
        | "range-diff" | "cherry" => observe(e),
        "config" if has(&rest, &["--get", "--get-all", "--list", "-l", "--get-regexp"]) || rest.len() <= 1 => {
            observe(e)
        }
        "remote" if rest.is_empty() || has(&rest, &["-v", "--verbose", "show", "get-url"]) => observe(e),
        "branch" => {
            let deleting = has(&rest, &["--delete", "-D"])
                || short_flag(&rest, 'D')
                || (short_flag(&rest, 'd') && (short_flag(&rest, 'f') || has(&rest, &["--force"])));
            if deleting {
                e.op(
                    DESTRUCTIVE_GIT_BRANCH_DELETE,
                    RiskLevel::High,
                    "`git branch -D` deletes a branch even if its commits are not merged anywhere.",
                );
            } else if (short_flag(&rest, 'f') || has(&rest, &["--force"])) && rest.iter().any(|a| !a.starts_with('-')) {
                // `git branch -f NAME [START]` moves an existing branch: its commits that nothing
                // else reaches are left to the reflog.
                e.op(
                    DESTRUCTIVE_GIT_BRANCH_DELETE,
                    RiskLevel::High,
                    "`git branch -f` moves an existing branch, dropping its commits that no other branch has.",
                );
            } else if rest.iter().all(|a| a.starts_with('-')) {
                observe(e);
            }
        }
        "tag" if rest.is_empty() || has(&rest, &["-l", "--list", "--contains", "--points-at"]) => observe(e),
        "stash" => match rest.first().map(String::as_str) {
            Some("list" | "show") => observe(e),
            Some("drop" | "clear") => {
                e.op(DESTRUCTIVE_GIT_STASH_DROP, RiskLevel::High, "`git stash drop`/`clear` throws stashed work away.")
            }
            _ => {}
        },
        "reflog" => {
            if rest.first().is_some_and(|a| a == "expire" || a == "delete") {
                e.op(
                    DESTRUCTIVE_GIT_HISTORY_REWRITE,
                    RiskLevel::Critical,
                    "`git reflog expire`/`delete` removes the record that lets lost commits be recovered.",
                );
            } else {
                observe(e);
            }
        }
        "reset" if rest.iter().any(|a| a == "--hard") => {
            e.op(
                DESTRUCTIVE_GIT_RESET_HARD,
                RiskLevel::Critical,
                "`git reset --hard` throws away uncommitted changes for good.",
            );
        }
        "clean" => {
            let dry = has(&rest, &["-n", "--dry-run"]) || short_flag(&rest, 'n');
            if !dry && (short_flag(&rest, 'f') || has(&rest, &["--force"])) {
                e.op(
                    DESTRUCTIVE_GIT_CLEAN,
                    RiskLevel::Critical,
                    "`git clean -f` deletes untracked files, which git cannot bring back.",
                );
            } else {
                observe(e);
            }
        }
        "checkout" => {
            // `checkout TREE PATH…` (no `--`) overwrites those paths too; `:/` is the whole tree.
            let ops: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
            let discards = has(&rest, &["--", "-f", "--force", ".", ":/"])
                || rest.iter().any(|a| a == "-p" || a == "--patch")
                || short_flag(&rest, 'f')
                || ops.len() >= 2;
            if discards && !rest.iter().any(|a| a == "-b" || a == "-B") {
                e.op(
                    DESTRUCTIVE_GIT_DISCARD,
                    RiskLevel::High,
                    "`git checkout -- <paths>` / `checkout .` / `checkout -f` discards uncommitted changes.",
                );
            }
        }
        "restore" => {
            let staged_only = has(&rest, &["--staged", "-S"]) && !has(&rest, &["--worktree", "-W"]);
            if !staged_only {
                e.op(
                    DESTRUCTIVE_GIT_DISCARD,
                    RiskLevel::High,
                    "`git restore <paths>` discards uncommitted changes in the working tree.",
                );
            }
        }
        "switch" if has(&rest, &["--discard-changes", "-f", "--force"]) => {
            e.op(
                DESTRUCTIVE_GIT_DISCARD,
                RiskLevel::High,
                "`git switch --discard-changes` throws uncommitted changes away.",
            );
        }
        "read-tree" if has(&rest, &["--reset", "-u"]) && has(&rest, &["-u"]) => {
            e.op(DESTRUCTIVE_GIT_DISCARD, RiskLevel::High, "`git read-tree -u --reset` overwrites the working tree.");
        }
        "checkout-index" if has(&rest, &["-f", "--force"]) || short_flag(&rest, 'f') => {
            e.op(DESTRUCTIVE_GIT_DISCARD, RiskLevel::High, "`git checkout-index -f` overwrites working-tree files.");
        }
        "prune" if rest.iter().any(|a| a.starts_with("--expire")) => {
            e.op(
                DESTRUCTIVE_GIT_HISTORY_REWRITE,
                RiskLevel::Critical,
                "`git prune --expire` deletes unreachable commits without the usual grace period.",
            );
        }
        "symbolic-ref" | "replace" => {
            e.op(
                DESTRUCTIVE_GIT_HISTORY_REWRITE,
                RiskLevel::High,
                format!("`git {sub}` moves or replaces refs directly, which can orphan commits."),
            );
        }
        "filter-branch" | "filter-repo" => {
            e.op(
                DESTRUCTIVE_GIT_HISTORY_REWRITE,
                RiskLevel::Critical,
                format!("`git {sub}` rewrites the repository's whole history."),
            );
        }
        "gc" if rest
            .iter()
            .any(|a| a.starts_with("--prune=now") || a == "--prune=all" || a.starts_with("--prune=0")) =>
        {
            e.op(
                DESTRUCTIVE_GIT_HISTORY_REWRITE,
                RiskLevel::Critical,
                "`git gc --prune=now` deletes unreachable commits at once (no grace period).",
            );
        }
        "update-ref" if has(&rest, &["-d", "--stdin"]) => {
            e.op(DESTRUCTIVE_GIT_HISTORY_REWRITE, RiskLevel::Critical, "`git update-ref -d` deletes a ref directly.");
        }
        "update-ref" => {
            e.op(
                DESTRUCTIVE_GIT_HISTORY_REWRITE,
                RiskLevel::High,
                "`git update-ref` moves a ref directly, which can orphan commits.",
            );
        }
        "merge" | "pull" => {
            if current_branch().is_some_and(|b| is_protected(&b)) {
                e.level = AutonomyLevel::Merge;
            }
            if sub == "pull" {
                e.network.push("git remote".into());
            }
        }
        "push" => push(&rest, e, current_branch),
        "clone" => {
            let ops: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
            if let Some(url) = ops.first() {
                e.network.push((*url).clone());
                let dest = ops.get(1).map(|d| d.to_string()).unwrap_or_else(|| {
                    url.trim_end_matches('/')
                        .rsplit(['/', ':'])
                        .next()
                        .unwrap_or("repo")
                        .trim_end_matches(".git")
                        .to_string()
                });
                e.write_text(&dest);
            }
        }
        "fetch" | "ls-remote" => e.network.push("git remote".into()),
        "add" | "stage" | "commit" => {
            let base = c
                .args
                .iter()
                .position(|w| w.text == "-C")
                .and_then(|i| c.args.get(i + 1))
                .map_or(".", |w| w.text.as_str())
                .to_string();
            let mut skip = false;
            let mut files = Vec::new();
            for a in &rest {
                if skip {
                    skip = false;
                    continue;
                }
                if matches!(
                    a.as_str(),
                    "-m" | "--message"
                        | "-F"
                        | "--file"
                        | "-C"
                        | "-c"
                        | "--author"
                        | "--date"
                        | "--fixup"
                        | "--squash"
                        | "--pathspec-from-file"
                        | "-t"
                        | "--template"
                ) {
                    skip = true;
                } else if !a.starts_with('-') {
                    files.push(a.clone());
                }
            }
            let all_flag = rest.iter().any(|a| {
                matches!(a.as_str(), "-A" | "--all" | "-u" | "--update")
                    || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('a') && sub == "commit")
            });
            if all_flag || files.iter().any(|f| f == "." || f == ":/" || f == "*") {
                e.stages_all = Some(base.clone());
            }
            for f in files.into_iter().filter(|f| f != "." && f != ":/") {
                let path = if base == "." { f } else { format!("{}/{f}", base.trim_end_matches('/')) };
                e.stages.push(super::effects_types::Target { path, dynamic: false, broad: None });
            }
        }
        _ => {}
    }
    repository_writes(c, sub, &rest, e);
}

/// What a git command writes on disk: the repository's `.git`, and for commands that rewrite
/// the working tree, the work tree itself (which files exactly is only known to git).
fn repository_writes(c: &Command, sub: &str, rest: &[String], e: &mut Effects) {
    if e.level == AutonomyLevel::Observe || sub == "clone" {
        return;
    }
    let base = c
        .args
        .iter()
        .position(|w| w.text == "-C")
        .and_then(|i| c.args.get(i + 1))
        .map_or_else(|| ".".to_string(), |w| w.text.clone());
    let join = |p: &str| if base == "." { p.to_string() } else { format!("{}/{p}", base.trim_end_matches('/')) };
    match sub {
        "init" => {
            let dir = rest.iter().find(|a| !a.starts_with('-')).map_or_else(|| base.clone(), |d| join(d));
            e.write_text(&dir);
        }
        "mv" => {
            let ops: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
            if let Some((dest, srcs)) = ops.split_last() {
                for s in srcs {
                    e.deletes.push(super::effects_types::Target { path: join(s), dynamic: false, broad: None });
                }
                e.write_text(&join(dest));
            }
            e.write_text(&join(".git"));
        }
        "rm" => {
            let cached = rest.iter().any(|a| a == "--cached");
            // Without force git refuses to remove a file whose changes are not committed; with
            // it (`-f`, `-rf`, `--force`) those changes are gone.
            let force = rest
                .iter()
                .take_while(|a| *a != "--")
                .any(|a| a == "--force" || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('f')));
            if force && !cached {
                e.op(
                    DESTRUCTIVE_GIT_DISCARD,
                    RiskLevel::High,
                    "`git rm -f` removes files together with their uncommitted changes.",
                );
            }
            for f in rest.iter().filter(|a| !a.starts_with('-')) {
                if !cached {
                    e.deletes.push(super::effects_types::Target { path: join(f), dynamic: false, broad: None });
                }
            }
            e.write_text(&join(".git"));
        }
        "checkout" | "switch" | "restore" | "reset" | "stash" | "merge" | "pull" | "rebase" | "cherry-pick"
        | "revert" | "apply" | "am" | "clean" | "worktree" | "submodule" | "sparse-checkout" | "bisect" => {
            // The work tree changes in ways only git knows.
            e.write_text(&base);
        }
        _ => e.write_text(&join(".git")),
    }
}

fn push(rest: &[String], e: &mut Effects, current_branch: &dyn Fn() -> Option<String>) {
    e.level = AutonomyLevel::Pr;
    e.network.push("git remote".into());
    let force = rest.iter().any(|a| {
        matches!(a.as_str(), "--force" | "--mirror" | "--force-if-includes")
            || a.starts_with("--force-with-lease")
            || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('f'))
            || (a.starts_with('+') && a.len() > 1)
    });
    if force {
        e.op(
            DESTRUCTIVE_GIT_PUSH_FORCE,
            RiskLevel::Critical,
            "`git push` with force (or a +refspec, or --mirror) overwrites history on the remote.",
        );
    }
    let operands: Vec<&String> = {
        let mut v = Vec::new();
        let mut skip = false;
        for a in rest {
            if skip {
                skip = false;
                continue;
            }
            if matches!(a.as_str(), "-o" | "--push-option" | "--repo" | "--receive-pack" | "--exec") {
                skip = true;
                continue;
            }
            if !a.starts_with('-') {
                v.push(a);
            }
        }
        v
    };
    let refspecs: Vec<&String> = operands.iter().skip(1).copied().collect();
    // A repository given as a URL (or `--repo=URL`) is not a configured remote: the history goes
    // wherever it points.
    let repo = operands
        .first()
        .map(|s| s.as_str())
        .into_iter()
        .chain(rest.iter().filter_map(|a| a.strip_prefix("--repo=")))
        .chain(rest.windows(2).filter(|w| w[0] == "--repo").map(|w| w[1].as_str()))
        .find(|r| r.contains("://") || (r.contains('@') && r.contains(':')));
    if let Some(url) = repo {
        e.network.push(url.to_string());
        e.op(
            EXFIL_UPLOAD,
            RiskLevel::High,
            format!("`git push {url}` sends the repository's history to a URL that is not a configured remote."),
        );
    }
    let deletes = rest.iter().any(|a| a == "--delete" || a == "-d" || a == "--prune")
        || refspecs.iter().any(|r| r.starts_with(':') && r.len() > 1);
    if deletes {
        e.op(
            DESTRUCTIVE_GIT_PUSH_DELETE,
            RiskLevel::Critical,
            "`git push --delete` / `:branch` deletes a branch or tag on the remote.",
        );
    }
    let tags = rest.iter().any(|a| a == "--tags" || a == "--follow-tags")
        || refspecs.iter().any(|r| r.contains("refs/tags/") || is_version_tag(r));
    if tags {
        e.level = e.level.max(AutonomyLevel::Release);
    }
    let targets: Vec<String> = if refspecs.is_empty() {
        current_branch().into_iter().collect()
    } else {
        refspecs.iter().map(|r| r.trim_start_matches('+').rsplit(':').next().unwrap_or(r).to_string()).collect()
    };
    let head_target = refspecs.iter().any(|r| r.trim_start_matches('+').split(':').next_back() == Some("HEAD"));
    let mut protected = targets.iter().any(|t| is_protected(t));
    if head_target {
        protected |= current_branch().is_some_and(|b| is_protected(&b));
    }
    // `--all`, `--mirror`, a glob refspec (`refs/heads/*:refs/heads/*`) or a name computed at run
    // time may reach a protected branch.
    if rest.iter().any(|a| a == "--all" || a == "--mirror" || a == "--branches")
        || refspecs.iter().any(|r| r.contains(['*', '$', '`']))
    {
        protected = true;
    }
    if protected {
        e.level = e.level.max(AutonomyLevel::Merge);
    }
}

/// `v1.2.3`, `1.2.3`, `v2`: pushing such a ref publishes a release.
fn is_version_tag(r: &str) -> bool {
    let t = r.rsplit(':').next().unwrap_or(r);
    let t = t.strip_prefix('v').unwrap_or(t);
    !t.is_empty()
        && t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '-' || c.is_ascii_alphanumeric())
        && t.contains('.')
}
