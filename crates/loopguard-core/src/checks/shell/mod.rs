//! Shell command analysis for the spine's first check set: unwrapping wrappers to the program
//! that really runs, then rm of protected targets, destructive git, redirection targets and the
//! policy's `[[commands]]` rules. The full analysis (issue 3) grows from here.

mod lex;
mod unwrap;

pub use lex::{
    MAX_COMMAND_BYTES, MAX_DEPTH, Redirect, RedirectKind, Segment, ShellError, Word,
    split_with_home,
};
pub use unwrap::{Command, commands};

use crate::checks::paths::{PathValidator, resolve};
use crate::policy::CommandRule;
use crate::reasons::*;
use crate::{AutonomyLevel, Context, Finding, RiskLevel, Verdict};
use std::path::Path;

/// Splits a command line with no home directory known.
pub fn split(cmd: &str) -> Result<Vec<Segment>, ShellError> {
    split_with_home(cmd, None)
}

/// What the analysis found in one command line.
#[derive(Debug, Default)]
pub struct ShellReport {
    /// Findings, in the order found.
    pub findings: Vec<Finding>,
    /// The highest autonomy level any command in it needs.
    pub required: Option<AutonomyLevel>,
}

/// Whether a `[[commands]]` rule matches any command of a command line.
pub fn rule_matches_command_line(rule: &CommandRule, cmd: &str) -> Result<bool, ShellError> {
    let cmds = commands(&split(cmd)?, None)?;
    Ok(cmds.iter().any(|c| command_rule_matches(rule, c)))
}

/// Whether a `[[commands]]` rule matches one command.
pub fn command_rule_matches(rule: &CommandRule, c: &Command) -> bool {
    if c.program != rule.program {
        return false;
    }
    let (opts, positional) = c.options_and_operands();
    let has_flag = |flag: &str| {
        if flag.starts_with("--") {
            opts.iter()
                .any(|o| *o == flag || o.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
        } else {
            opts.iter()
                .any(|o| !o.starts_with("--") && o.starts_with('-') && o[1..].contains(flag))
        }
    };
    let trim = |s: &str| -> String {
        let t = s.trim_end_matches('/');
        if t.is_empty() {
            s.to_string()
        } else {
            t.to_string()
        }
    };
    rule.flags.iter().all(|f| has_flag(f))
        && rule
            .args
            .iter()
            .all(|a| positional.iter().any(|p| trim(p) == trim(a)))
}

/// Analyses a command line for the gate.
pub fn analyze(
    cmd: &str,
    cwd: &Path,
    ctx: &Context,
    rules: &[CommandRule],
    paths: &PathValidator,
) -> ShellReport {
    let mut report = ShellReport::default();
    let home = ctx.home.as_deref().and_then(Path::to_str);
    let segments = match split_with_home(cmd, home) {
        Ok(s) => s,
        Err(e) => {
            let code = if matches!(e, ShellError::TooLarge(_)) {
                SHELL_TOO_LARGE
            } else {
                SHELL_UNPARSABLE
            };
            report.findings.push(
                Finding::new(
                    code,
                    Verdict::Deny,
                    RiskLevel::High,
                    format!("The command cannot be analysed: {e}."),
                )
                .with_remedy("split it into smaller, plainly quoted commands."),
            );
            return report;
        }
    };
    let cmds = match commands(&segments, home) {
        Ok(c) => c,
        Err(e) => {
            report.findings.push(Finding::new(
                SHELL_UNPARSABLE,
                Verdict::Deny,
                RiskLevel::High,
                format!("A nested shell command cannot be analysed: {e}."),
            ));
            return report;
        }
    };
    let mut required = AutonomyLevel::Implement;
    for c in &cmds {
        check_redirects(&c.redirects, cwd, paths, &mut report.findings);
        if c.dynamic_program {
            report.findings.push(
                Finding::new(
                    SHELL_DYNAMIC,
                    Verdict::Ask,
                    RiskLevel::High,
                    format!("The program `{}` is only known at run time, so the gate cannot see what runs.", c.program),
                )
                .with_remedy("name the program literally."),
            );
        }
        match c.program.as_str() {
            "rm" => check_rm(c, cwd, ctx, paths, &mut report.findings),
            "git" => {
                if let Some(level) = check_git(c, &mut report.findings) {
                    required = required.max(level);
                }
            }
            _ => {}
        }
        for rule in rules.iter().filter(|r| command_rule_matches(r, c)) {
            report.findings.push(
                Finding::new(
                    rule.code(),
                    rule.verdict,
                    RiskLevel::High,
                    rule.message.clone(),
                )
                .with_remedy(format!(
                    "this is the policy rule `{}` ({} layer); a narrower command may pass.",
                    rule.code(),
                    rule.origin.as_str()
                )),
            );
        }
    }
    report.required = Some(required);
    report
}

fn check_redirects(
    redirects: &[Redirect],
    cwd: &Path,
    paths: &PathValidator,
    out: &mut Vec<Finding>,
) {
    for r in redirects {
        let writes = match r.kind {
            RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite => true,
            // `>&file` (not a descriptor number or `-`) writes stdout and stderr to a file.
            RedirectKind::Dup => !r
                .target
                .text
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-'),
            _ => false,
        };
        if !writes {
            continue;
        }
        if r.target.dynamic {
            out.push(
                Finding::new(
                    SHELL_DYNAMIC,
                    Verdict::Ask,
                    RiskLevel::High,
                    format!(
                        "The redirection target `{}` is only known at run time.",
                        r.target.text
                    ),
                )
                .with_remedy("redirect to a literal path inside the workspace."),
            );
        } else if let Some(f) = paths.check_write(&r.target.text, cwd, "Redirection target") {
            out.push(f);
        }
    }
}

/// Classifies rm targets: recursive or forced removal of `/`, home, a parent of the workspace or
/// the workspace itself is destructive; any target outside the write roots is a path finding.
fn check_rm(c: &Command, cwd: &Path, ctx: &Context, paths: &PathValidator, out: &mut Vec<Finding>) {
    let (opts, _) = c.options_and_operands();
    let flag = |short: char, long: &str| {
        opts.iter()
            .any(|o| *o == long || (!o.starts_with("--") && o[1..].contains(short)))
    };
    let recursive = flag('r', "--recursive") || flag('R', "--recursive");
    let force = flag('f', "--force");
    let workspace =
        resolve(&ctx.workspace, Path::new("/")).unwrap_or_else(|_| ctx.workspace.clone());
    let home = ctx
        .home
        .as_deref()
        .and_then(|h| resolve(h, Path::new("/")).ok());
    for (word, dynamic) in c.operand_words() {
        if dynamic {
            if recursive || force {
                out.push(
                    Finding::new(
                        SHELL_DYNAMIC,
                        Verdict::Ask,
                        RiskLevel::High,
                        format!(
                            "`rm` target `{word}` is only known at run time; it could be anything."
                        ),
                    )
                    .with_remedy("name the directory to remove literally."),
                );
            }
            continue;
        }
        if (recursive || force)
            && let Some(f) = classify_rm_target(word, cwd, &workspace, home.as_deref())
        {
            out.push(f);
            continue;
        }
        if let Some(f) = paths.check_write(strip_glob(word), cwd, "rm target") {
            out.push(f);
        }
    }
}

/// `dir/*`, `dir/.*`, `*` → the directory whose contents go.
fn strip_glob(word: &str) -> &str {
    let trimmed = word.trim_end_matches("/*").trim_end_matches("/.*");
    match trimmed {
        "*" | ".*" | "" if word.starts_with('/') => "/",
        "*" | ".*" | "" => ".",
        t => t,
    }
}

fn classify_rm_target(
    word: &str,
    cwd: &Path,
    workspace: &Path,
    home: Option<&Path>,
) -> Option<Finding> {
    let target = resolve(Path::new(strip_glob(word)), cwd).ok()?;
    let hit = |code: &str, what: &str| {
        Some(
            Finding::new(code, Verdict::Deny, RiskLevel::Critical, format!("`rm` of `{word}` would delete {what}."))
                .with_remedy("remove only the specific build output or files you mean, by their paths inside the workspace."),
        )
    };
    if target == Path::new("/") {
        return hit(DESTRUCTIVE_RM_ROOT, "the whole filesystem");
    }
    if home.is_some_and(|h| h.starts_with(&target)) {
        return hit(DESTRUCTIVE_RM_HOME, "the home directory");
    }
    if target == workspace {
        return hit(DESTRUCTIVE_RM_WORKSPACE, "the whole workspace");
    }
    if workspace.starts_with(&target) {
        return hit(DESTRUCTIVE_RM_PARENT, "a parent of the workspace");
    }
    None
}

/// Destructive git subcommands; returns the level the command needs when it is higher than
/// Implement.
fn check_git(c: &Command, out: &mut Vec<Finding>) -> Option<AutonomyLevel> {
    let (sub, rest) = c.git_subcommand()?;
    match sub {
        "push" => {
            let force = rest.iter().any(|a| {
                matches!(a.as_str(), "--force" | "--mirror" | "--force-if-includes")
                    || a.starts_with("--force-with-lease")
                    || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('f'))
                    || (a.starts_with('+') && a.len() > 1)
            });
            if force {
                out.push(
                    Finding::new(
                        DESTRUCTIVE_GIT_PUSH_FORCE,
                        Verdict::Deny,
                        RiskLevel::Critical,
                        "`git push` with force (or a +refspec, or --mirror) overwrites history on the remote.",
                    )
                    .with_remedy("push without force; if history must be rewritten, ask the human to do it."),
                );
            }
            Some(AutonomyLevel::Pr)
        }
        "reset" => {
            if rest.iter().any(|a| a == "--hard") {
                out.push(
                    Finding::new(
                        DESTRUCTIVE_GIT_RESET_HARD,
                        Verdict::Deny,
                        RiskLevel::Critical,
                        "`git reset --hard` throws away uncommitted changes for good.",
                    )
                    .with_remedy("commit or `git stash` the work first, or use `git reset --soft`/`--mixed`."),
                );
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
