//! From segments to the programs that really run: assignment prefixes, wrappers (sudo, env,
//! timeout, xargs, …) and nested shells (`sh -c`, `eval`, a shell fed a heredoc) are unwrapped.

use super::lex::{MAX_DEPTH, Redirect, RedirectKind, Segment, ShellError, Word, split_with_home};

/// One program invocation after unwrapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The program's base name (`/usr/bin/rm` → `rm`).
    pub program: String,
    /// Its arguments.
    pub args: Vec<Word>,
    /// The program name is only known at run time.
    pub dynamic_program: bool,
    /// The wrappers it was found inside, outermost first.
    pub wrappers: Vec<String>,
    /// The redirections of its segment.
    pub redirects: Vec<Redirect>,
}

impl Command {
    /// Option words (before `--`) and operand words.
    pub fn options_and_operands(&self) -> (Vec<&str>, Vec<&str>) {
        let mut opts = Vec::new();
        let mut operands = Vec::new();
        let mut done = false;
        for a in &self.args {
            let t = a.text.as_str();
            if !done && t == "--" {
                done = true;
            } else if !done && t.len() > 1 && t.starts_with('-') {
                opts.push(t);
            } else {
                operands.push(t);
            }
        }
        (opts, operands)
    }

    /// Operand words with whether each is dynamic.
    pub fn operand_words(&self) -> Vec<(&str, bool)> {
        let mut done = false;
        let mut out = Vec::new();
        for a in &self.args {
            let t = a.text.as_str();
            if !done && t == "--" {
                done = true;
            } else if done || !(t.len() > 1 && t.starts_with('-')) {
                out.push((t, a.dynamic));
            }
        }
        out
    }

    /// For git: the subcommand and the words after it, skipping git's global options.
    pub fn git_subcommand(&self) -> Option<(&str, Vec<String>)> {
        let mut i = 0;
        while let Some(a) = self.args.get(i) {
            let t = a.text.as_str();
            match t {
                "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
                _ if t.starts_with('-') => i += 1,
                _ => {
                    let rest = self.args[i + 1..].iter().map(|w| w.text.clone()).collect();
                    return Some((t, rest));
                }
            }
        }
        None
    }
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn is_assignment(w: &Word) -> bool {
    match w.text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"];

/// Skips a wrapper's options. `with_value` lists the options that take a separate value.
fn skip_options(words: &[Word], mut i: usize, with_value: &[&str]) -> usize {
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        i += if with_value.contains(&t) { 2 } else { 1 };
    }
    i
}

/// Unwraps every segment into the commands that run, recursing into nested shells.
pub fn commands(segments: &[Segment], home: Option<&str>) -> Result<Vec<Command>, ShellError> {
    let mut out = Vec::new();
    for seg in segments {
        unwrap_segment(seg, home, seg.depth, &mut out)?;
    }
    Ok(out)
}

fn unwrap_segment(
    seg: &Segment,
    home: Option<&str>,
    depth: usize,
    out: &mut Vec<Command>,
) -> Result<(), ShellError> {
    if depth > MAX_DEPTH {
        return Err(ShellError::TooDeep);
    }
    let words = &seg.words;
    let mut i = 0;
    while words.get(i).is_some_and(|w| !w.quoted && is_assignment(w)) {
        i += 1;
    }
    let mut wrappers = Vec::new();
    let bare = |wrappers: Vec<String>, out: &mut Vec<Command>| {
        // No program (only assignments or redirections, or a lookup): its redirections still act.
        out.push(Command {
            program: String::new(),
            args: Vec::new(),
            dynamic_program: false,
            wrappers,
            redirects: seg.redirects.clone(),
        });
    };
    for _ in 0..MAX_DEPTH {
        let Some(w) = words.get(i) else {
            bare(wrappers, out);
            return Ok(());
        };
        let prog = basename(&w.text);
        let next = match prog {
            "sudo" | "doas" => skip_options(
                words,
                i + 1,
                &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
            ),
            "env" => {
                let mut j = skip_options(
                    words,
                    i + 1,
                    &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
                );
                while words.get(j).is_some_and(is_assignment) {
                    j += 1;
                }
                j
            }
            "command" | "builtin" => {
                if words
                    .get(i + 1)
                    .is_some_and(|a| a.text == "-v" || a.text == "-V")
                {
                    bare(wrappers, out); // a lookup: nothing runs
                    return Ok(());
                }
                skip_options(words, i + 1, &[])
            }
            "exec" => skip_options(words, i + 1, &["-a"]),
            "nohup" | "setsid" | "time" => skip_options(words, i + 1, &[]),
            "nice" => skip_options(words, i + 1, &["-n", "--adjustment"]),
            "ionice" => skip_options(words, i + 1, &["-c", "-n", "-p", "--class", "--classdata"]),
            "stdbuf" => skip_options(words, i + 1, &["-i", "-o", "-e"]),
            "timeout" => skip_options(words, i + 1, &["-s", "--signal", "-k", "--kill-after"]) + 1,
            "chroot" => skip_options(words, i + 1, &["--userspec", "--groups"]) + 1,
            "xargs" => skip_options(
                words,
                i + 1,
                &[
                    "-I",
                    "-i",
                    "-n",
                    "-P",
                    "-d",
                    "-L",
                    "-s",
                    "-E",
                    "-a",
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                ],
            ),
            _ => break,
        };
        wrappers.push(prog.to_string());
        i = next;
    }
    let Some(w) = words.get(i) else {
        bare(wrappers, out);
        return Ok(());
    };
    let cmd = Command {
        program: basename(&w.text).to_string(),
        args: words[i + 1..].to_vec(),
        dynamic_program: w.dynamic,
        wrappers,
        redirects: seg.redirects.clone(),
    };
    nested_shell(&cmd, seg, home, depth, out)?;
    out.push(cmd);
    Ok(())
}

/// `sh -c 'script'`, `eval …`, and a shell reading a heredoc or here-string: the script is
/// code, so it is analysed as commands too.
fn nested_shell(
    cmd: &Command,
    seg: &Segment,
    home: Option<&str>,
    depth: usize,
    out: &mut Vec<Command>,
) -> Result<(), ShellError> {
    let mut scripts: Vec<String> = Vec::new();
    if cmd.program == "eval" {
        scripts.push(
            cmd.args
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        );
    } else if SHELLS.contains(&cmd.program.as_str()) {
        let mut c_flag = false;
        let mut script_file = false;
        for a in &cmd.args {
            let t = a.text.as_str();
            if c_flag {
                scripts.push(t.to_string());
                break;
            }
            if t.starts_with('-') && !t.starts_with("--") && t[1..].contains('c') {
                c_flag = true;
            } else if !t.starts_with('-') && !t.starts_with('+') {
                script_file = true;
                break;
            }
        }
        if !c_flag && !script_file {
            for r in &seg.redirects {
                if matches!(r.kind, RedirectKind::HereDoc | RedirectKind::HereString) {
                    scripts.push(r.target.text.clone());
                }
            }
        }
    }
    for script in scripts {
        let segs = split_with_home(&script, home)?;
        for s in &segs {
            unwrap_segment(s, home, depth + 1, out)?;
        }
    }
    Ok(())
}
