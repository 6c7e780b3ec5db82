//! From segments to the programs that really run: assignment prefixes, wrappers (sudo, env,
//! timeout, xargs, …) and nested shells (`sh -c`, `eval`, `watch`, `su -c`, a shell fed a
//! heredoc or here-string, `find -exec`) are unwrapped. Each command also learns what feeds it:
//! the programs upstream in its pipeline, and the programs whose output makes each argument.

use super::lex::{MAX_DEPTH, Redirect, RedirectKind, Segment, ShellError, Word, split_with_home};
pub use super::programs::SHELLS;
use super::programs::is_interpreter;

/// A program and its arguments, wrappers stripped, nothing recursed into: enough to tell what
/// produces a pipe's input or a substitution's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Base name of the program.
    pub program: String,
    /// Argument texts.
    pub args: Vec<String>,
}

/// One program invocation after unwrapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The program's base name (`/usr/bin/rm` → `rm`); empty for a segment with no program.
    pub program: String,
    /// The program as written (`./build.sh`, `/usr/bin/rm`).
    pub program_path: String,
    /// Its arguments.
    pub args: Vec<Word>,
    /// The program name is only known at run time.
    pub dynamic_program: bool,
    /// More operands arrive at run time (`xargs`, `find -exec … {}`).
    pub dynamic_operands: bool,
    /// The wrappers it was found inside, outermost first.
    pub wrappers: Vec<String>,
    /// The redirections of its segment.
    pub redirects: Vec<Redirect>,
    /// Programs whose output is piped into this one, nearest first.
    pub stdin_from: Vec<Head>,
    /// For each argument, the programs whose output makes it (`$( )`, backticks, `<( )`).
    pub arg_sources: Vec<Vec<Head>>,
    /// Text fed to its stdin by a heredoc or here-string, if any.
    pub stdin_text: Option<String>,
    /// Environment assignments in force for it: `NAME=value` prefixes and `env NAME=value`
    /// (as written, quotes removed).
    pub assigns: Vec<String>,
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

    /// For git: the subcommand and the words after it, skipping git's global options. Long
    /// options abbreviated the way git's option parser accepts (`--har`, `--forc`, `--delet`)
    /// are written out; `-c clean.requireForce=false` counts as `clean -f`.
    pub fn git_subcommand(&self) -> Option<(&str, Vec<String>)> {
        let mut i = 0;
        let mut clean_forced = false;
        let mut config: Vec<(String, String)> = Vec::new();
        while let Some(a) = self.args.get(i) {
            let t = a.text.as_str();
            match t {
                "-c" => {
                    let kv = self.args.get(i + 1).map(|w| w.text.clone()).unwrap_or_default();
                    if let Some(v) = kv.to_ascii_lowercase().strip_prefix("clean.requireforce=") {
                        clean_forced = matches!(v, "false" | "0" | "no" | "off");
                    }
                    let (k, v) = kv.split_once('=').unwrap_or((&kv, "true"));
                    config.push((k.to_string(), v.to_string()));
                    i += 2
                }
                // The value comes from the environment: unknown here.
                _ if t.starts_with("--config-env=") => {
                    let k = t["--config-env=".len()..].split_once('=').map_or("", |(k, _)| k);
                    config.push((k.to_string(), "$CONFIG_ENV".to_string()));
                    i += 1
                }
                "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
                _ if t.starts_with('-') => i += 1,
                _ => {
                    let mut rest: Vec<String> = self.args[i + 1..].iter().map(|w| git_long_option(&w.text)).collect();
                    if clean_forced && t == "clean" {
                        rest.push("-f".into());
                    }
                    if t == "push" {
                        push_config(&config, &mut rest);
                    }
                    return Some((t, rest));
                }
            }
        }
        None
    }

    /// Every program feeding this command: pipe sources and argument sources.
    pub fn sources(&self) -> impl Iterator<Item = &Head> {
        self.stdin_from.iter().chain(self.arg_sources.iter().flatten())
    }
}

/// The program's name as the tables know it: the base name, with a Debian alternative's suffix
/// taken off (`nc.traditional`, `nc.openbsd`, `netcat.traditional` → `nc`/`netcat`).
fn program_name(path: &str) -> String {
    let b = basename(path);
    match b.split_once('.') {
        Some((n, "traditional" | "openbsd" | "nmap" | "real" | "orig" | "distrib")) => n.to_string(),
        _ => b.to_string(),
    }
}

/// git's long options that matter to the analysis, for expanding unique abbreviations.
const GIT_LONG: &[&str] = &[
    "--hard",
    "--force",
    "--force-with-lease",
    "--force-if-includes",
    "--delete",
    "--mirror",
    "--prune",
    "--prune-tags",
    "--discard-changes",
    "--orphan",
    "--exec",
    "--upload-pack",
    "--receive-pack",
    "--extcmd",
    "--open-files-in-pager",
    "--global",
    "--system",
    "--no-verify",
    "--all",
    "--tags",
    "--keep",
    "--merge",
    "--soft",
    "--mixed",
    "--expire",
    "--staged",
    "--worktree",
    "--source",
    "--patch",
    "--dry-run",
    "--reset",
    "--ours",
    "--theirs",
    "--recursive",
];

/// A git long option written out when it is a unique prefix of one of [`GIT_LONG`].
fn git_long_option(t: &str) -> String {
    if !t.starts_with("--") || t.len() < 4 {
        return t.to_string();
    }
    let (name, value) = t.split_once('=').map_or((t, None), |(n, v)| (n, Some(v)));
    if GIT_LONG.contains(&name) {
        return t.to_string();
    }
    let matches: Vec<&str> = GIT_LONG.iter().copied().filter(|o| o.starts_with(name)).collect();
    // Several matches where the shortest is a prefix of the others (`--forc`: `--force`,
    // `--force-with-lease`, …): a command that has only the short one (checkout, clean) takes
    // the abbreviation for it, and one that has several refuses it — reading it as the short
    // one is right or harmless.
    let shortest = matches.iter().copied().min_by_key(|o| o.len());
    let one = match (matches.as_slice(), shortest) {
        ([one], _) => Some(*one),
        (_, Some(s)) if matches.iter().all(|o| o.starts_with(s)) => Some(s),
        _ => None,
    };
    match (one, value) {
        (Some(one), Some(v)) => format!("{one}={v}"),
        (Some(one), None) => one.to_string(),
        _ => t.to_string(),
    }
}

/// A program's base name: after the last `/`, without a Windows `.exe` (under WSL `git.exe` is
/// the Windows git, and it resets the same files).
fn basename(s: &str) -> &str {
    let b = s.rsplit('/').next().unwrap_or(s);
    match b.len().checked_sub(4).filter(|&i| b.is_char_boundary(i)) {
        Some(i) if i > 0 && b[i..].eq_ignore_ascii_case(".exe") => &b[..i],
        _ => b,
    }
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

/// Programs that run the rest of their arguments as a command after options of their own
/// (`taskset -c 0 CMD…`, `op run -- CMD…`): the command starts after `--` if there is one, else
/// at the first word that names a program the analysis knows.
const ARGV_RUNNERS: &[&str] = &[
    "chrt",
    "taskset",
    "fakeroot",
    "strace",
    "ltrace",
    "valgrind",
    "perf",
    "systemd-inhibit",
    "numactl",
    "prlimit",
    "eatmydata",
    "direnv",
    "op",
    "microk8s",
    "lima",
    "k3s",
    "doppler",
    "infisical",
    "aws-vault",
    "xvfb-run",
    "cpulimit",
    "flatpak-spawn",
    "dbus-run-session",
    "ssh-agent",
    "ip",
    "chronic",
    "tsp",
    "dtach",
    "gnome-terminal",
    "konsole",
    "toolbox",
    "distrobox",
    "schroot",
    "firejail",
    "bwrap",
    "proot",
    "setpriv",
    "cgexec",
    "faketime",
    "caffeinate",
    "poetry",
    "pipenv",
    "uv",
    "bundle",
    "pdm",
    "hatch",
    "conda",
    "mamba",
    "micromamba",
    "mise",
    "asdf",
    "rtx",
    "devbox",
    "dotenv",
    "env-cmd",
    "cross-env",
    "with-contenv",
    "s6-setuidgid",
    "chpst",
    "setuidgid",
    "sem",
    "ts",
    "pkexec",
    "run0",
    "machinectl",
    "systemd-run",
    "gdb",
    "lldb",
    "heaptrack",
    "rr",
    "torify",
    "tsocks",
    "nocache",
    "trickle",
    "unbuffer",
    "script",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "npx",
    "bunx",
    "pnpx",
    "uvx",
    "pipx",
    "sg",
    "newgrp",
    "su",
    "watchexec",
    "expect",
    "stdbuf",
    "time",
    "hyperfine",
    "entr",
    "nodemon",
    "xterm",
    "urxvt",
    "alacritty",
    "kitty",
    "wezterm",
    "tilix",
    "terminator",
    "st",
    "foot",
    "sakura",
];

/// Programs that take whole shell command strings as arguments (`hyperfine 'CMD'`, `entr -s
/// 'CMD'`, `nodemon --exec 'CMD'`, `pueue add -- 'CMD'`, `xterm -e 'CMD'`, `parallel ::: 'CMD'`):
/// each such string is analysed as a script.
const STRING_RUNNERS: &[&str] = &[
    "hyperfine",
    "entr",
    "nodemon",
    "pueue",
    "xterm",
    "watchexec",
    "parallel",
    "sem",
    "tmux",
    "screen",
    "cargo",
    "sg",
    "ts",
    "tsp",
    "concurrently",
    "npm-run-all",
    "run-p",
    "run-s",
    "foreman",
    "honcho",
    "overmind",
    "just",
];

/// Programs whose arguments are data, never commands (no nested command is looked for in them).
pub const DATA_PROGRAMS_PUB: &[&str] = DATA_PROGRAMS;

const DATA_PROGRAMS: &[&str] = &[
    "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "git", "man", "which", "type", "whatis", "apropos",
    "help", "test", "[", "[[", "alias", "find", "xargs", "ssh", "scp", "sftp", "mosh", "declare", "export", "local",
    "readonly", "typeset", "unset", "jq", "yq", "sed", "awk", "gawk", "tee", "cat", "less", "more", "head", "tail",
    "wc", "sort", "cut", "tr", "diff", "touch", "mkdir", "ls", "stat", "file", "basename", "dirname", "realpath",
    "readlink", "command", "hash", "complete", "compgen", "read", "history", "fc",
];

/// Whether a word names a shell or an interpreter.
fn is_code_program(t: &str) -> bool {
    let b = basename(t);
    SHELLS.contains(&b) || is_interpreter(b)
}

/// Skips a wrapper's options. `with_value` lists the options that take a value: as the next
/// word (`-u root`), attached (`-uroot`, `--user=root`), or as the last letter of a cluster of
/// short options (`-Eu root`).
fn skip_options(words: &[Word], mut i: usize, with_value: &[&str]) -> usize {
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if with_value.contains(&t) {
            i += 2;
            continue;
        }
        if !t.starts_with("--") {
            // A cluster: the first letter that takes a value takes the rest of the word, or the
            // next word when it is the last letter.
            let letters: Vec<char> = t[1..].chars().collect();
            let valued = letters.iter().position(|c| with_value.contains(&format!("-{c}").as_str()));
            if valued == Some(letters.len() - 1) {
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    i
}

/// How a wrapper hands over to the program it runs.
enum Wrap {
    /// The program starts at this word index.
    At(usize),
    /// The wrapper runs a shell command string (its words from this index, joined).
    Script(usize),
    /// Nothing runs (`command -v x`).
    Nothing,
}

fn wrapper(words: &[Word], i: usize) -> Option<Wrap> {
    let w = |j: usize| words.get(j).map(|w| w.text.as_str());
    let prog = basename(w(i)?);
    Some(match prog {
        "sudo" | "doas" => {
            let j = skip_options(
                words,
                i + 1,
                &[
                    "-u",
                    "-g",
                    "-h",
                    "-p",
                    "-C",
                    "-D",
                    "-r",
                    "-t",
                    "-U",
                    "-T",
                    "-R",
                    "--user",
                    "--group",
                    "--host",
                    "--prompt",
                    "--chdir",
                    "--chroot",
                    "--role",
                    "--type",
                    "--other-user",
                    "--command-timeout",
                    "--close-from",
                ],
            );
            Wrap::At(j)
        }
        "env" => {
            if let Some(k) = (i + 1..words.len()).find(|&k| w(k) == Some("-S") || w(k) == Some("--split-string")) {
                return Some(Wrap::Script(k + 1));
            }
            let mut j = i + 1;
            loop {
                let k = skip_options(words, j, &["-u", "--unset", "-C", "--chdir", "-P", "--default-signal"]);
                // `env -` empties the environment (like -i); assignments follow.
                let k = if w(k) == Some("-") { k + 1 } else { k };
                // env takes anything with `=` before the program as an assignment.
                let mut m = k;
                while words
                    .get(m)
                    .is_some_and(|w| w.text.split_once('=').is_some_and(|(n, _)| !n.is_empty() && !n.contains('/')))
                {
                    m += 1;
                }
                if m == j {
                    break;
                }
                j = m;
            }
            Wrap::At(j)
        }
        "command" | "builtin" => {
            if matches!(w(i + 1), Some("-v" | "-V")) {
                return Some(Wrap::Nothing);
            }
            Wrap::At(skip_options(words, i + 1, &[]))
        }
        "exec" => Wrap::At(skip_options(words, i + 1, &["-a"])),
        "nohup" | "setsid" | "time" | "unbuffer" | "proxychains" | "proxychains4" | "torsocks" | "catchsegv" => {
            Wrap::At(skip_options(words, i + 1, &[]))
        }
        "nice" => Wrap::At(skip_options(words, i + 1, &["-n", "--adjustment"])),
        "ionice" => Wrap::At(skip_options(words, i + 1, &["-c", "-n", "-p", "--class", "--classdata"])),
        "stdbuf" => Wrap::At(skip_options(words, i + 1, &["-i", "-o", "-e"])),
        "timeout" => Wrap::At(skip_options(words, i + 1, &["-s", "--signal", "-k", "--kill-after"]) + 1),
        "chroot" => Wrap::At(skip_options(words, i + 1, &["--userspec", "--groups"]) + 1),
        "nsenter" | "unshare" => {
            Wrap::At(skip_options(words, i + 1, &["-t", "--target", "-S", "-G", "--setuid", "--setgid"]))
        }
        "runuser" => Wrap::At(skip_options(words, i + 1, &["-u", "-g", "-G", "--user", "--group"])),
        "busybox" | "toybox" => Wrap::At(i + 1),
        "setarch" | "linux32" | "linux64" | "i386" | "x86_64" | "arch" if words.len() > i + 1 => {
            // `setarch ARCH [opts] CMD`, `linux64 CMD`.
            let j = if prog == "setarch" { i + 2 } else { i + 1 };
            Wrap::At(skip_options(words, j, &["-B", "--32bit"]))
        }
        "parallel"
            if words.iter().skip(i + 1).any(|w| w.text.starts_with(":::"))
                || skip_options(words, i + 1, &["-j", "-n", "-N", "-a", "--arg-file", "-d", "-S", "--sshlogin"])
                    >= words.len() =>
        {
            return None;
        }
        "xargs" | "parallel" => Wrap::At(skip_options(
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
                "-j",
            ],
        )),
        "watch" => {
            Wrap::Script(skip_options(words, i + 1, &["-n", "--interval", "-d", "--differences", "-q", "--equexit"]))
        }
        "flock" => {
            let j = skip_options(words, i + 1, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
            match (w(j + 1), w(j)) {
                (Some("-c" | "--command"), _) => Wrap::Script(j + 2),
                (_, Some(_)) => Wrap::At(j + 1),
                _ => Wrap::Nothing,
            }
        }
        "su" => match (i + 1..words.len()).find(|&k| matches!(w(k), Some("-c" | "--command"))) {
            Some(k) => Wrap::Script(k + 1),
            None => return None,
        },
        // loopguard's own sandboxes run a command: it is analysed like any other (the sandbox
        // confines writes, not reads or what the command means).
        "loopguard" => match w(i + 1) {
            Some("exec") => Wrap::At(skip_options(words, i + 2, &["--profile", "--workspace"])),
            Some("preview") => match (i + 2..words.len()).find(|&k| w(k) == Some("--command")) {
                Some(k) => Wrap::Script(k + 1),
                None => return None,
            },
            _ => return None,
        },
        _ => return None,
    })
}

/// Unwraps every segment into the commands that run, recursing into nested shells.
pub fn commands(segments: &[Segment], home: Option<&str>) -> Result<Vec<Command>, ShellError> {
    let mut out = Vec::new();
    for i in 0..segments.len() {
        unwrap_segment(segments, i, home, segments[i].depth, &mut out)?;
    }
    Ok(out)
}

/// The program a segment runs, wrappers stripped (no recursion).
fn head(seg: &Segment) -> Option<Head> {
    let words = &seg.words;
    let mut i = 0;
    while words.get(i).is_some_and(is_assignment) {
        i += 1;
    }
    let mut last_wrapper = None;
    for _ in 0..MAX_DEPTH {
        match wrapper(words, i) {
            Some(Wrap::At(j)) => {
                last_wrapper = Some(i);
                i = j;
            }
            Some(Wrap::Script(_)) | Some(Wrap::Nothing) => break,
            None => break,
        }
    }
    // `env` alone, `sudo` alone: the wrapper is itself what runs.
    let i = if words.get(i).is_none() { last_wrapper? } else { i };
    let w = words.get(i)?;
    Some(Head { program: basename(&w.text).to_string(), args: words[i + 1..].iter().map(|w| w.text.clone()).collect() })
}

fn heads(segments: &[Segment], range: Option<(usize, usize)>) -> Vec<Head> {
    match range {
        Some((a, b)) => segments.get(a..b).into_iter().flatten().filter_map(head).collect(),
        None => Vec::new(),
    }
}

fn unwrap_segment(
    segments: &[Segment],
    idx: usize,
    home: Option<&str>,
    depth: usize,
    out: &mut Vec<Command>,
) -> Result<(), ShellError> {
    if depth > MAX_DEPTH {
        return Err(ShellError::TooDeep);
    }
    let Some(seg) = segments.get(idx) else {
        return Ok(());
    };
    let words = &seg.words;
    let b = Builder { segments, seg, stdin_from: pipe_heads(segments, seg), stdin_text: here_text(seg) };
    // `NAME=value` (also `NAME='v a l'`: quotes in the value keep it an assignment; a quoted
    // name would make it a program name, which is taken as an assignment too — the stricter
    // reading, since what follows is then analysed as the program).
    let mut i = 0;
    while words.get(i).is_some_and(is_assignment) {
        i += 1;
    }
    let mut wrappers = Vec::new();
    for _ in 0..MAX_DEPTH {
        match wrapper(words, i) {
            Some(Wrap::At(j)) => {
                let name = basename(&words[i].text).to_string();
                let chdir = name == "env"
                    && words.get(i + 1..j).unwrap_or_default().iter().any(|w| {
                        w.text == "-C"
                            || w.text.starts_with("--chdir")
                            || (w.text.starts_with("-C") && w.text.len() > 2)
                    });
                wrappers.push(if chdir { "env -C".to_string() } else { name });
                // An option that wants a value the line does not give ends the words.
                i = j.min(words.len());
            }
            Some(Wrap::Script(j)) => {
                let prog = words[i].text.clone();
                let script: Vec<&str> = words.get(j..).unwrap_or_default().iter().map(|w| w.text.as_str()).collect();
                run_script(&script.join(" "), home, depth, out)?;
                wrappers.push(basename(&prog).to_string());
                let mut cmd = b.make(&prog, words.get(i + 1..).unwrap_or_default(), words[i].dynamic, wrappers);
                cmd.assigns = assigns_before(words, i);
                out.push(cmd);
                return Ok(());
            }
            Some(Wrap::Nothing) => {
                wrappers.push(basename(&words[i].text).to_string());
                out.push(b.make("", &[], false, wrappers));
                return Ok(());
            }
            None => break,
        }
    }
    let Some(w) = words.get(i) else {
        out.push(wrappers_only(&b, words, i, wrappers));
        return Ok(());
    };
    // A wrapper's option the tables do not know may have taken a value (`time -f %e kubectl …`,
    // `stdbuf --output L docker …`): when the word found is no known program but one follows
    // within three words, that one is analysed too (stricter, never looser).
    if !wrappers.is_empty() && !super::programs::known_program(basename(&w.text)) {
        let next = (i + 1..words.len().min(i + 4))
            .find(|&k| !words[k].text.starts_with('-') && super::programs::known_program(basename(&words[k].text)));
        if let Some(k) = next {
            let mut alt = b.make(&words[k].text, &words[k + 1..], words[k].dynamic, wrappers.clone());
            alt.assigns = assigns_before(words, i);
            nested(&alt, home, depth, out)?;
            out.push(alt);
        }
    }
    // `{rm,-rf,~}`: brace expansion builds the command itself.
    let braced = !w.quoted && w.text.starts_with('{') && w.text.contains(',') && w.text.ends_with('}');
    let mut cmd = b.make(&w.text, &words[i + 1..], w.dynamic || braced, wrappers);
    cmd.assigns = assigns_before(words, i);
    nested(&cmd, home, depth, out)?;
    out.push(cmd);
    Ok(())
}

/// What a segment's commands are built from: the segment, the programs piped into it and the
/// here-document or here-string it reads.
struct Builder<'s> {
    segments: &'s [Segment],
    seg: &'s Segment,
    stdin_from: Vec<Head>,
    stdin_text: Option<String>,
}

impl Builder<'_> {
    /// A command of this segment: `program_path` with `args`, found inside `wrappers`.
    fn make(&self, program_path: &str, args: &[Word], dynamic_program: bool, wrappers: Vec<String>) -> Command {
        let xargs = wrappers.iter().any(|w| w == "xargs" || w == "parallel");
        // Under xargs/parallel, `{}` (the conventional -I string) is replaced at run time.
        let args: Vec<Word> = args
            .iter()
            .map(|a| if xargs && a.text.contains("{}") { Word { dynamic: true, ..a.clone() } } else { a.clone() })
            .collect();
        Command {
            program: program_name(program_path),
            program_path: program_path.to_string(),
            dynamic_operands: xargs,
            arg_sources: args.iter().map(|a| heads(self.segments, a.subst)).collect(),
            args,
            dynamic_program,
            wrappers,
            redirects: self.seg.redirects.clone(),
            stdin_from: self.stdin_from.clone(),
            stdin_text: self.stdin_text.clone(),
            assigns: Vec::new(),
        }
    }
}

/// The programs piped into a segment, nearest first.
fn pipe_heads(segments: &[Segment], seg: &Segment) -> Vec<Head> {
    let mut stdin_from = Vec::new();
    let mut src = seg.pipe_from;
    while let Some(j) = src {
        if stdin_from.len() > MAX_DEPTH {
            break;
        }
        let Some(s) = segments.get(j) else { break };
        stdin_from.extend(head(s));
        src = s.pipe_from;
    }
    stdin_from
}

/// The text a segment's last here-document or here-string feeds it.
fn here_text(seg: &Segment) -> Option<String> {
    seg.redirects
        .iter()
        .rev()
        .find(|r| matches!(r.kind, RedirectKind::HereDoc | RedirectKind::HereString))
        .map(|r| r.target.text.clone())
}

/// Assignments before the program (`words[..end]`), and those a wrapper (`env A=1 …`) consumed.
fn assigns_before(words: &[Word], end: usize) -> Vec<String> {
    words
        .get(..end)
        .unwrap_or_default()
        .iter()
        .filter(|w| {
            w.text.split_once('=').is_some_and(|(n, _)| !n.is_empty() && !n.contains('/') && !n.starts_with('-'))
        })
        .map(|w| w.text.clone())
        .collect()
}

/// A segment of only wrappers (`sudo -s`, `doas -s`, `env`): the last wrapper is what runs, with
/// its options. Only assignments or redirections: no program; the redirections still act, and
/// the assignments stay in force for the rest of the shell.
fn wrappers_only(b: &Builder<'_>, words: &[Word], i: usize, wrappers: Vec<String>) -> Command {
    if let Some(k) = (0..i).rev().find(|k| words.get(*k).is_some_and(|w| !is_assignment(w) && !w.text.starts_with('-')))
    {
        let mut cmd = b.make(&words[k].text, words.get(k + 1..i).unwrap_or_default(), words[k].dynamic, wrappers);
        cmd.assigns = assigns_before(words, k);
        return cmd;
    }
    let mut cmd = b.make("", &[], false, wrappers);
    cmd.assigns = assigns_before(words, i);
    cmd
}

fn run_script(script: &str, home: Option<&str>, depth: usize, out: &mut Vec<Command>) -> Result<(), ShellError> {
    if depth + 1 > MAX_DEPTH {
        return Err(ShellError::TooDeep);
    }
    let segs = split_with_home(script, home)?;
    for i in 0..segs.len() {
        unwrap_segment(&segs, i, home, depth + 1, out)?;
    }
    Ok(())
}

// A command inside the arguments: after `--` or at the first known program for the programs
// that run their argv, and — for any other program — wherever a shell or interpreter is named
// with its code (`anything … sh -c 'CMD'`). Analysed as what runs; too much is only stricter.
// Project runners run a command only after their run word (`uv run`, `poetry run`,
// `bundle exec`); their other subcommands are their own (`uv python list`).
const RUN_WORDS: &[(&str, &[&str])] = &[
    ("uv", &["run"]),
    ("poetry", &["run"]),
    ("pipenv", &["run"]),
    ("pdm", &["run"]),
    ("hatch", &["run"]),
    ("bundle", &["exec"]),
    ("conda", &["run"]),
    ("mamba", &["run"]),
    ("micromamba", &["run"]),
    ("mise", &["exec", "x"]),
    ("rtx", &["exec", "x"]),
    ("asdf", &["exec"]),
];

/// Code inside a command: `sh -c 'script'`, `eval …`, a shell reading a heredoc or
/// here-string, `find … -exec cmd {} ;`.
fn nested(cmd: &Command, home: Option<&str>, depth: usize, out: &mut Vec<Command>) -> Result<(), ShellError> {
    let program = cmd.program.as_str();
    if program == "eval" {
        let script: Vec<&str> = cmd.args.iter().map(|w| w.text.as_str()).collect();
        return run_script(&script.join(" "), home, depth, out);
    }
    if SHELLS.contains(&program) {
        if let Some(script) = shell_script_arg(cmd) {
            return run_script(&script.text, home, depth, out);
        }
        if shell_reads_stdin(cmd)
            && let Some(text) = &cmd.stdin_text
        {
            return run_script(text, home, depth, out);
        }
        return Ok(());
    }
    if program == "find" {
        return find_exec(cmd, home, depth, out);
    }
    if program == "trap" {
        // `trap 'CMD' SIGNAL…`: CMD runs when the signal (or EXIT) comes.
        if let Some(action) = cmd.args.iter().find(|a| !a.text.starts_with('-')).filter(|_| cmd.args.len() >= 2) {
            return run_script(&action.text, home, depth, out);
        }
    }
    if STRING_RUNNERS.contains(&program) {
        string_scripts(cmd, home, depth, out)?;
    }
    if DATA_PROGRAMS.contains(&program) || SHELLS.contains(&program) || is_interpreter(program) {
        return Ok(());
    }
    let after_run_word = RUN_WORDS.iter().find(|(p, _)| *p == program).map(|(_, words)| {
        cmd.args
            .iter()
            .position(|a| !a.text.starts_with('-') && a.text != "tool")
            .filter(|&k| words.contains(&cmd.args[k].text.as_str()))
    });
    if after_run_word == Some(None) {
        return Ok(());
    }
    let skip = after_run_word.flatten().map_or(0, |k| k + 1);
    let start = if ARGV_RUNNERS.contains(&program) {
        cmd.args.iter().position(|a| a.text == "--").map(|k| k + 1).or_else(|| {
            cmd.args
                .iter()
                .skip(skip)
                .position(|a| {
                    !a.text.starts_with('-')
                        && (is_code_program(&a.text)
                            || super::programs::known_program(basename(&a.text))
                            // A path names a program; a URI (`op://vault/item`) does not.
                            || (a.text.contains('/') && !a.text.contains("://")))
                })
                .map(|k| k + skip)
        })
    } else {
        cmd.args.iter().enumerate().find_map(|(k, a)| {
            let next = cmd.args.get(k + 1).map(|n| n.text.as_str()).unwrap_or("");
            // A shell or interpreter with its code flag, or a shell with a script path.
            let script_path = SHELLS.contains(&basename(&a.text)) && (next.contains('/') || next.ends_with(".sh"));
            (is_code_program(&a.text) && (next.starts_with('-') || next.is_empty() || next == "<<<" || script_path))
                .then_some(k)
        })
    };
    match start.filter(|k| *k < cmd.args.len()) {
        Some(k) => unwrap_inner(cmd, k, home, depth, out),
        None => Ok(()),
    }
}

/// The command an argv runner runs (its arguments from `k`), unwrapped in turn: it inherits the
/// runner's stdin and is marked as found inside it.
fn unwrap_inner(
    cmd: &Command,
    k: usize,
    home: Option<&str>,
    depth: usize,
    out: &mut Vec<Command>,
) -> Result<(), ShellError> {
    let seg = Segment { words: cmd.args[k..].to_vec(), redirects: cmd.redirects.clone(), ..Segment::default() };
    let mut inner = Vec::new();
    unwrap_segment(&[seg], 0, home, depth + 1, &mut inner)?;
    for mut c in inner {
        c.wrappers.insert(0, cmd.program.clone());
        if c.stdin_from.is_empty() {
            c.stdin_from = cmd.stdin_from.clone();
        }
        if c.stdin_text.is_none() {
            c.stdin_text = cmd.stdin_text.clone();
        }
        out.push(c);
    }
    Ok(())
}

/// The command strings a string runner takes, each run as a script.
fn string_scripts(cmd: &Command, home: Option<&str>, depth: usize, out: &mut Vec<Command>) -> Result<(), ShellError> {
    let texts: Vec<&str> = cmd.args.iter().map(|w| w.text.as_str()).collect();
    let program = cmd.program.as_str();
    let mut scripts: Vec<&str> = Vec::new();
    let value_of = |opts: &[&str]| -> Vec<&str> {
        let mut v = Vec::new();
        for (k, t) in texts.iter().enumerate() {
            if opts.contains(t) {
                v.extend(texts.get(k + 1).copied());
            } else if let Some((o, val)) = t.split_once('=')
                && opts.contains(&o)
            {
                v.push(val);
            }
        }
        v
    };
    match program {
        "hyperfine" => {
            scripts.extend(value_of(&["-p", "--prepare", "-s", "--setup", "-c", "--cleanup", "--conclude"]));
            scripts.extend(texts.iter().filter(|t| !t.starts_with('-')));
        }
        "entr" => scripts.extend(value_of(&["-s"])),
        "nodemon" => scripts.extend(value_of(&["-x", "--exec"])),
        "pueue" if texts.first() == Some(&"add") => {
            scripts.extend(texts.iter().skip(1).filter(|t| !t.starts_with('-')))
        }
        "xterm" => scripts.extend(value_of(&["-e"])),
        "watchexec" => scripts.extend(
            value_of(&["-s", "--shell", "--", "-r"])
                .into_iter()
                .chain(texts.iter().filter(|t| t.contains(' ')).copied()),
        ),
        "parallel" | "sem" => {
            if let Some(k) = texts.iter().position(|t| matches!(*t, ":::" | "::::" | ":::+")) {
                scripts.extend(texts[k + 1..].iter().filter(|t| !t.starts_with(":::")));
            }
            scripts.extend(texts.iter().filter(|t| t.contains(' ') && !t.starts_with('-')));
        }
        "tmux" | "screen" => scripts.extend(texts.iter().filter(|t| t.contains(' ') || t.contains(';'))),
        "cargo" if texts.first() == Some(&"watch") => scripts.extend(value_of(&["-s", "--shell"])),
        _ => scripts.extend(texts.iter().filter(|t| t.contains(' ') && !t.starts_with('-'))),
    }
    for s in scripts.into_iter().take(16) {
        run_script(s, home, depth, out)?;
    }
    Ok(())
}

/// Shell options that take a separate value.
const SHELL_VALUE_OPTIONS: &[&str] = &["-O", "+O", "-o", "+o", "--rcfile", "--init-file"];

/// A shell command line's options read the way the shell reads them (value options skipped,
/// `--` ends them): whether `-c` and `-s` were given, and the first operand.
fn shell_options(cmd: &Command) -> (bool, bool, Option<&Word>) {
    let (mut c_flag, mut s_flag) = (false, false);
    let mut i = 0;
    while let Some(a) = cmd.args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            return (c_flag, s_flag, cmd.args.get(i + 1));
        }
        if SHELL_VALUE_OPTIONS.contains(&t) {
            i += 2;
            continue;
        }
        if t.starts_with("--") {
            i += 1;
            continue;
        }
        if t.len() > 1 && (t.starts_with('-') || t.starts_with('+')) {
            if let Some(flags) = t.strip_prefix('-') {
                c_flag |= flags.contains('c');
                s_flag |= flags.contains('s');
            }
            i += 1;
            continue;
        }
        return (c_flag, s_flag, Some(a));
    }
    (c_flag, s_flag, None)
}

/// The `-c` script of a shell command line, if it has one. Options may come before and after
/// `-c` (`bash -O extglob -c …`, `sh -c -- …`); the script is the first operand.
pub fn shell_script_arg(cmd: &Command) -> Option<&Word> {
    match shell_options(cmd) {
        (true, _, script) => script,
        _ => None,
    }
}

/// Whether a shell runs what arrives on stdin (no `-c`, no script file or the file is stdin
/// itself, or `-s`).
pub fn shell_reads_stdin(cmd: &Command) -> bool {
    shell_script_arg(cmd).is_none() && shell_script_file(cmd).is_none_or(|w| is_stdin_path(&w.text))
}

/// `-`, `/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`: the process's stdin as a file.
pub fn is_stdin_path(t: &str) -> bool {
    matches!(t, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// The script file a shell runs, if any (the first operand when there is no `-c` or `-s`).
pub fn shell_script_file(cmd: &Command) -> Option<&Word> {
    match shell_options(cmd) {
        (false, false, file) => file,
        _ => None,
    }
}

/// Whether a shell reads a startup file named on its command line (`--rcfile`, `--init-file`).
pub fn shell_startup_file(cmd: &Command) -> Option<&Word> {
    let i = cmd.args.iter().position(|a| a.text == "--rcfile" || a.text == "--init-file")?;
    cmd.args.get(i + 1)
}

/// `find ROOTS … -exec|-execdir|-ok|-okdir CMD … {} ;|+`: CMD runs on every path found under the
/// roots, so `{}` stands for a path below each root.
fn find_exec(cmd: &Command, home: Option<&str>, depth: usize, out: &mut Vec<Command>) -> Result<(), ShellError> {
    let texts: Vec<&str> = cmd.args.iter().map(|w| w.text.as_str()).collect();
    let roots: Vec<&str> =
        texts.iter().take_while(|t| !t.starts_with('-') && !matches!(**t, "(" | "!")).copied().collect();
    let roots = if roots.is_empty() { vec!["."] } else { roots };
    let mut i = 0;
    while i < texts.len() {
        if matches!(texts[i], "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = (i + 1..texts.len()).find(|&k| matches!(texts[k], ";" | "+")).unwrap_or(texts.len());
            let inner = &cmd.args[i + 1..end];
            if let Some(first) = inner.first() {
                for root in &roots {
                    let child = format!("{}/…", root.trim_end_matches('/'));
                    let args: Vec<Word> = inner[1..]
                        .iter()
                        .map(|w| {
                            if w.text.contains("{}") {
                                Word { text: w.text.replace("{}", &child), ..w.clone() }
                            } else {
                                w.clone()
                            }
                        })
                        .collect();
                    let mut sub = Command {
                        program: basename(&first.text).to_string(),
                        program_path: first.text.clone(),
                        args: args.clone(),
                        dynamic_program: first.dynamic || first.text.contains("{}"),
                        dynamic_operands: false,
                        wrappers: cmd.wrappers.iter().cloned().chain(std::iter::once("find".to_string())).collect(),
                        redirects: Vec::new(),
                        stdin_from: Vec::new(),
                        arg_sources: vec![Vec::new(); args.len()],
                        stdin_text: None,
                        assigns: Vec::new(),
                    };
                    // The nested command may itself be a wrapper or a shell.
                    let seg = Segment { words: inner.to_vec(), ..Segment::default() };
                    if wrapper(&seg.words, 0).is_some() || SHELLS.contains(&sub.program.as_str()) {
                        let segs = [Segment {
                            words: inner
                                .iter()
                                .map(|w| Word { text: w.text.replace("{}", &child), ..w.clone() })
                                .collect(),
                            ..Segment::default()
                        }];
                        unwrap_segment(&segs, 0, home, depth + 1, out)?;
                    } else {
                        nested(&sub, home, depth + 1, out)?;
                        sub.wrappers.dedup();
                        out.push(sub);
                    }
                }
            }
            i = end;
        }
        i += 1;
    }
    Ok(())
}

/// Configuration given on the command line (`-c`, `--config-env`) that changes what `git push`
/// sends or where, folded into the push's own arguments so the push is judged as it will run:
/// a `remote.<name>.push` refspec becomes a refspec (`+…` a force push), `remote.<name>.mirror`
/// `--mirror`, a `remote.<name>.url`/`pushurl` or a `url.<base>.insteadOf`/`pushInsteadOf`
/// `--repo=<url>` (a destination that is not a configured remote), `push.default=matching` or
/// `current`… `--all`-like reach (any branch).
fn push_config(config: &[(String, String)], rest: &mut Vec<String>) {
    for (key, value) in config {
        let lower = key.to_ascii_lowercase();
        let parts: Vec<&str> = lower.splitn(2, '.').collect();
        let (section, tail) = (parts.first().copied().unwrap_or(""), parts.get(1).copied().unwrap_or(""));
        let (sub, name) = tail.rsplit_once('.').unwrap_or(("", tail));
        match (section, name) {
            ("remote", "push") => {
                if !rest.iter().any(|a| !a.starts_with('-')) {
                    // The remote the refspec belongs to (its name as given, case kept).
                    let remote = key.get(7..7 + sub.len()).unwrap_or(sub);
                    rest.push(remote.to_string());
                }
                // A refspec from the environment may be a forced one.
                if value.contains('$') {
                    rest.push("--force".into());
                }
                rest.push(value.clone());
            }
            ("remote", "mirror") if !matches!(value.to_ascii_lowercase().as_str(), "false" | "0" | "no" | "off") => {
                rest.push("--mirror".into())
            }
            ("remote", "url" | "pushurl") | ("url", "insteadof" | "pushinsteadof") => {
                // insteadOf rewrites to the section's base URL; url/pushurl is the value.
                let url =
                    if section == "url" { key.get(4..4 + sub.len()).unwrap_or(sub).to_string() } else { value.clone() };
                let url = if url.contains("://") || (url.contains('@') && url.contains(':')) {
                    url
                } else {
                    format!("unknown://{url}")
                };
                rest.push(format!("--repo={url}"));
            }
            ("push", "default")
                if !matches!(value.to_ascii_lowercase().as_str(), "simple" | "upstream" | "nothing") =>
            {
                rest.push("--all".into())
            }
            _ => {}
        }
    }
}
