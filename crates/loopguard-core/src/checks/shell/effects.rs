//! What one command does: the files it reads, writes and deletes, the network it reaches, the
//! destructive operations it performs, and the autonomy level it needs. Table-driven per
//! program; a program not listed here needs `implement` and has no known targets (its
//! redirections and the rest of the line are still checked).

use super::args::{PLAIN, Spec, parse};
use super::unwrap::{Command, Head};
use crate::reasons::*;
use crate::{AutonomyLevel, RiskLevel};

pub use super::effects_types::{DestructiveOperation, Effects, Target};
pub use super::programs::{FETCHERS, is_interpreter};

/// Programs that only look.
const OBSERVE: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "wc",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "stat",
    "file",
    "jq",
    "yq",
    "tree",
    "du",
    "df",
    "pwd",
    "echo",
    "printf",
    "which",
    "type",
    "whereis",
    "whoami",
    "id",
    "date",
    "uname",
    "hostname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "test",
    "[",
    "true",
    "false",
    "sleep",
    "seq",
    "nl",
    "od",
    "hexdump",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "ps",
    "free",
    "uptime",
    "man",
    "column",
    "paste",
    "fold",
    "fmt",
    "tac",
    "rev",
    "strings",
    "look",
    "locale",
    "nproc",
    "lscpu",
    "lsblk",
    "printenv",
    "env",
    "tput",
    "getconf",
    "fd",
    "fdfind",
    "bat",
    "exa",
    "eza",
    "delta",
    "zcat",
    "xxd",
    "base64",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "read",
    "wait",
    "jobs",
    "exit",
    "return",
    "set",
    "shopt",
    "export",
    "unset",
    "local",
    "declare",
    "typeset",
    "alias",
    "hash",
    "history",
    "ulimit",
    "umask",
    "trap",
    "shift",
    ":",
    "let",
    "getopts",
    "source",
    ".",
    "awk",
    "gawk",
    "mawk",
    "sed",
    "find",
];

/// Whether a head is a decoder whose output could be hidden code.
pub fn is_decoder(h: &Head) -> bool {
    let has = |f: &[&str]| {
        h.args.iter().any(|a| {
            f.contains(&a.as_str())
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && f.iter().any(|x| x.len() == 2 && a[1..].contains(&x[1..])))
        })
    };
    match h.program.as_str() {
        "base64" | "base32" | "basenc" => has(&["-d", "--decode", "-D"]),
        "xxd" => has(&["-r", "--revert"]),
        "openssl" => has(&["-d", "-base64", "-a"]) && h.args.iter().any(|a| a == "enc" || a == "base64"),
        "uudecode" | "gunzip" | "zcat" | "xzcat" | "bzcat" | "zstdcat" | "rev" => true,
        "gzip" | "xz" | "bzip2" | "zstd" => has(&["-d", "--decompress"]),
        "printf" => h.args.first().is_some_and(|f| f.contains("\\x") || f.contains("\\0")),
        "echo" => h.args.iter().any(|a| a == "-e") && h.args.iter().any(|a| a.contains("\\x")),
        _ => false,
    }
}

/// Whether a head fetches from the network.
pub fn is_fetcher(h: &Head) -> bool {
    FETCHERS.contains(&h.program.as_str())
}

/// The effects of one command.
pub fn of(c: &Command, current_branch: &dyn Fn() -> Option<String>) -> Effects {
    let mut e = Effects::default();
    let p = c.program.as_str();
    if OBSERVE.contains(&p) {
        e.level = AutonomyLevel::Observe;
    }
    match p {
        "" => e.level = AutonomyLevel::Observe,
        "rm" | "unlink" => {
            let a = parse(&c.args, PLAIN);
            let broad = (a.has(&["-r", "-R", "--recursive", "-f", "--force"]) || p == "unlink").then_some("rm");
            for w in &a.operands {
                e.delete(w, broad);
            }
        }
        "rmdir" => {
            for w in &parse(&c.args, PLAIN).operands {
                e.delete(w, Some("rm"));
            }
        }
        "shred" => {
            let a = parse(&c.args, Spec { short: "nsx", long: &["--iterations", "--size", "--random-source"] });
            for w in &a.operands {
                e.write(w);
                if a.has(&["-u", "--remove"]) {
                    e.delete(w, Some("rm"));
                }
            }
        }
        "cp" | "install" | "ln" | "mv" => copy_like(c, p, &mut e),
        "tee" => {
            for w in &parse(&c.args, PLAIN).operands {
                e.write(w);
            }
        }
        "touch" | "mkdir" | "truncate" | "mkfifo" | "mknod" => {
            let a = parse(&c.args, Spec { short: "mrdtsAB", long: &["--mode", "--reference", "--date", "--size"] });
            for w in &a.operands {
                e.write(w);
            }
        }
        "dd" => {
            for w in &c.args {
                if let Some(of) = w.text.strip_prefix("of=") {
                    e.writes.push(Target { path: of.to_string(), dynamic: w.dynamic, broad: None });
                    if of.starts_with("/dev/") && !matches!(of, "/dev/null" | "/dev/stdout" | "/dev/stderr") {
                        e.op(DESTRUCTIVE_DD_DEVICE, RiskLevel::Critical, format!("`dd of={of}` overwrites a device."));
                    }
                } else if let Some(i) = w.text.strip_prefix("if=") {
                    e.read_text(i);
                }
            }
        }
        "chmod" | "chown" | "chgrp" => {
            let a = parse(&c.args, Spec { short: "", long: &["--reference"] });
            let recursive = a.has(&["-R", "--recursive"]);
            for w in a.operands.iter().skip(1) {
                e.writes.push(Target {
                    path: w.text.clone(),
                    dynamic: w.dynamic,
                    broad: recursive.then_some(DESTRUCTIVE_CHMOD_RECURSIVE),
                });
            }
        }
        "sed" => {
            let a = parse(&c.args, Spec { short: "efl", long: &["--expression", "--file", "--line-length"] });
            let script_given = a.has(&["-e", "--expression", "-f", "--file"]);
            let files = a.operands.iter().skip(usize::from(!script_given));
            if a.opts.iter().any(|o| o.name == "-i" || o.name.starts_with("--in-place")) {
                e.level = AutonomyLevel::Implement;
                for w in files {
                    e.write(w);
                }
            } else {
                for w in files {
                    e.read(w);
                }
            }
        }
        "cat" | "head" | "tail" | "less" | "more" | "xxd" | "base64" | "strings" | "od" | "hexdump" | "bat" | "nl"
        | "tac" | "wc" | "md5sum" | "sha256sum" | "sha1sum" => {
            let a = parse(&c.args, Spec { short: "nc", long: &["--lines", "--bytes"] });
            for w in &a.operands {
                e.read(w);
            }
        }
        "grep" | "egrep" | "fgrep" | "rg" => {
            let a = parse(
                &c.args,
                Spec { short: "efmABCg", long: &["--regexp", "--file", "--max-count", "--glob", "--type"] },
            );
            let pattern_given = a.has(&["-e", "--regexp", "-f", "--file"]);
            for w in a.operands.iter().skip(usize::from(!pattern_given)) {
                e.read(w);
            }
        }
        "find" => {
            let roots: Vec<&super::Word> = c
                .args
                .iter()
                .take_while(|w| !w.text.starts_with('-') && !matches!(w.text.as_str(), "(" | "!"))
                .collect();
            let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
            if texts.contains(&"-delete") {
                e.level = AutonomyLevel::Implement;
                // With predicates, what goes is some paths below each root; without, everything.
                let filtered = texts.iter().any(|t| {
                    matches!(
                        *t,
                        "-name"
                            | "-iname"
                            | "-path"
                            | "-ipath"
                            | "-regex"
                            | "-iregex"
                            | "-type"
                            | "-newer"
                            | "-mtime"
                            | "-mmin"
                            | "-atime"
                            | "-size"
                            | "-empty"
                            | "-user"
                            | "-perm"
                            | "-wholename"
                            | "-lname"
                    )
                });
                let roots: Vec<(String, bool)> = if roots.is_empty() {
                    vec![(".".into(), false)]
                } else {
                    roots.iter().map(|r| (r.text.clone(), r.dynamic)).collect()
                };
                for (r, dynamic) in roots {
                    let path = if filtered { format!("{}/…", r.trim_end_matches('/')) } else { r };
                    e.deletes.push(Target { path, dynamic, broad: Some(DESTRUCTIVE_FIND_DELETE) });
                }
            }
            if texts.iter().any(|t| matches!(*t, "-exec" | "-execdir" | "-ok" | "-okdir")) {
                e.level = AutonomyLevel::Implement;
            }
            for (i, t) in texts.iter().enumerate() {
                if matches!(*t, "-fprint" | "-fprint0" | "-fprintf" | "-fls")
                    && let Some(w) = c.args.get(i + 1)
                {
                    e.write(w);
                }
            }
        }
        "tar" | "bsdtar" => tar(c, &mut e),
        "unzip" => {
            let a = parse(&c.args, Spec { short: "dx", long: &[] });
            match a.values(&["-d"]).next() {
                Some(d) => e.write_text(d),
                None if !a.has(&["-l", "-t", "-p", "-Z"]) => e.write_text("."),
                None => e.level = AutonomyLevel::Observe,
            }
        }
        "patch" => {
            let a =
                parse(&c.args, Spec { short: "dioprBDFVYz", long: &["--directory", "--input", "--output", "--strip"] });
            match (a.values(&["-o", "--output"]).next(), a.values(&["-d", "--directory"]).next()) {
                (Some(o), _) => e.write_text(o),
                (None, Some(d)) => e.write_text(d),
                (None, None) => e.write_text(a.operands.first().map_or(".", |w| w.text.as_str())),
            }
        }
        "rsync" => rsync(c, &mut e),
        "git" => super::effects_git::git(c, &mut e, current_branch),
        "curl" | "wget" | "nc" | "ncat" | "netcat" | "socat" | "ssh" | "scp" | "sftp" | "telnet" | "ftp" | "http"
        | "https" | "xh" | "xhs" | "curlie" | "wget2" | "lwp-request" | "GET" | "HEAD" | "POST" | "PUT" | "DELETE" => {
            super::effects_net::net(c, &mut e)
        }
        "env" | "printenv" | "echo" | "printf" => secret_vars(c, &mut e),
        "alias" => {
            // `alias ls='rm -rf /'`: whatever later uses the name runs the value.
            for w in &c.args {
                if let Some((_, value)) = w.text.split_once('=') {
                    e.local_scripts.push(value.to_string());
                }
            }
        }
        _ if is_interpreter(p) => interpreter(c, &mut e),
        // A command run inside a pod or a container is analysed like one sent over ssh (the
        // packs judge the `exec` itself).
        "kubectl" | "oc" | "kubecolor" | "docker" | "podman" | "nerdctl" => {
            if let Some(inner) = exec_command(c) {
                e.remote_script = Some(inner);
            }
            super::effects_ops::ops(c, &mut e)
        }
        _ => super::effects_ops::ops(c, &mut e),
    }
    e
}

fn copy_like(c: &Command, p: &str, e: &mut Effects) {
    let a = parse(
        &c.args,
        Spec { short: "tSmogb", long: &["--target-directory", "--suffix", "--mode", "--owner", "--group", "--backup"] },
    );
    let target = a.values(&["-t", "--target-directory"]).next().map(str::to_string);
    let (sources, dest): (Vec<&&super::Word>, Option<String>) = match target {
        Some(t) => (a.operands.iter().collect(), Some(t)),
        None if p == "install" && a.has(&["-d", "--directory"]) => {
            for w in &a.operands {
                e.write(w);
            }
            return;
        }
        None => match a.operands.split_last() {
            Some((last, rest)) if !rest.is_empty() => (rest.iter().collect(), Some(last.text.clone())),
            Some((last, _)) if p == "ln" => (vec![], Some(last.text.rsplit('/').next().unwrap_or(".").to_string())),
            _ => (Vec::new(), None),
        },
    };
    let dest_dynamic = a.operands.last().is_some_and(|w| w.dynamic);
    // `ln -s TARGET LINK`: later paths through LINK lead to TARGET.
    if p == "ln"
        && a.has(&["-s", "--symbolic"])
        && sources.len() == 1
        && !dest_dynamic
        && let (Some(d), Some(src)) = (&dest, sources.first())
    {
        e.links.push((d.clone(), src.text.clone()));
    }
    if let Some(d) = dest {
        e.writes.push(Target { path: d, dynamic: dest_dynamic, broad: None });
    }
    for s in sources {
        if p == "mv" {
            e.delete(s, None);
        } else if p != "ln" {
            e.read(s);
        }
    }
}

fn tar(c: &Command, e: &mut Effects) {
    // The first word may be a bundle of letters without a dash (`tar xzf a.tgz`).
    let first = c.args.first().map(|w| w.text.as_str()).unwrap_or("");
    let bundle = !first.starts_with('-') && first.chars().all(|ch| ch.is_ascii_alphabetic());
    let letters = |ch: char| {
        (bundle && first.contains(ch))
            || c.args.iter().any(|w| w.text.starts_with('-') && !w.text.starts_with("--") && w.text[1..].contains(ch))
    };
    let long = |name: &str| c.args.iter().any(|w| w.text == name);
    // `-f F`, `--file F`, and short bundles ending in f (`-czf F`).
    let value_after = |flag: &[&str]| {
        let bundled_f =
            |t: &str| flag.contains(&"-f") && t.starts_with('-') && !t.starts_with("--") && t.ends_with('f');
        c.args
            .iter()
            .position(|w| flag.contains(&w.text.as_str()) || bundled_f(&w.text))
            .and_then(|i| c.args.get(i + 1))
            .map(|w| w.text.clone())
    };
    let dir = value_after(&["-C", "--directory"])
        .or_else(|| c.args.iter().find_map(|w| w.text.strip_prefix("--directory=").map(String::from)));
    if letters('x') || long("--extract") || long("--get") {
        e.write_text(dir.as_deref().unwrap_or("."));
    } else if letters('c') || letters('r') || letters('u') || long("--create") || long("--append") {
        let file = value_after(&["-f", "--file"]).or_else(|| {
            // `tar czf out.tgz …`: the bundle's f takes the next word.
            if bundle && first.contains('f') { c.args.get(1).map(|w| w.text.clone()) } else { None }
        });
        // Everything else that is not an option (or an option's value) goes into the archive.
        let skip_first = usize::from(bundle) + usize::from(bundle && first.contains('f'));
        let mut skip_next = false;
        for w in c.args.iter().skip(skip_first) {
            if skip_next {
                skip_next = false;
                continue;
            }
            if matches!(w.text.as_str(), "-f" | "--file" | "-C" | "--directory" | "-T" | "-X" | "--exclude") {
                skip_next = true;
            } else if !w.text.starts_with('-') && Some(&w.text) != file.as_ref() {
                e.read(w);
            }
        }
        if let Some(f) = file.filter(|f| f != "-") {
            e.write_text(&f);
        }
    } else {
        e.level = AutonomyLevel::Observe;
    }
}

fn rsync(c: &Command, e: &mut Effects) {
    let a = parse(
        &c.args,
        Spec {
            short: "e",
            long: &["--rsh", "--exclude", "--include", "--filter", "--chmod", "--chown", "--rsync-path"],
        },
    );
    let dry_run = c.args.iter().any(|w| {
        let t = w.text.as_str();
        t == "--dry-run" || (t.starts_with('-') && !t.starts_with("--") && t.contains('n'))
    });
    let deletes_extra = !dry_run && a.opts.iter().any(|o| o.name.starts_with("--delete") || o.name == "--del");
    let removes_sources = !dry_run && a.opts.iter().any(|o| o.name == "--remove-source-files");
    let ops = a.operands.clone();
    if let Some((dest, srcs)) = ops.split_last() {
        for s in srcs {
            if s.text.contains(':') {
                e.network.push(s.text.clone());
            } else {
                e.read(s);
                if removes_sources {
                    e.delete(s, Some(DESTRUCTIVE_RSYNC_DELETE));
                }
            }
        }
        if dest.text.contains(':') && !dest.text.starts_with('/') {
            e.network.push(dest.text.clone());
            if deletes_extra {
                e.op(
                    DESTRUCTIVE_RSYNC_DELETE,
                    RiskLevel::High,
                    format!(
                        "`rsync --delete` to `{}` deletes the files there that the source does not have.",
                        dest.text
                    ),
                );
            }
        } else if dry_run {
            // `rsync -n`: lists what it would do, writes nothing.
            e.level = AutonomyLevel::Observe;
        } else {
            e.write(dest);
            if deletes_extra {
                e.delete(dest, Some(DESTRUCTIVE_RSYNC_DELETE));
            }
        }
    }
}

/// `echo $GITHUB_TOKEN`, `printenv AWS_SECRET_ACCESS_KEY`: the value flows into the transcript.
fn secret_vars(c: &Command, e: &mut Effects) {
    let secret_name = |n: &str| {
        let u = n.to_ascii_uppercase();
        [
            "KEY",
            "SECRET",
            "TOKEN",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "PRIVATE",
            "AUTH",
            "COOKIE",
            "SESSION",
            "DATABASE_URL",
            "_DSN",
            "CONNECTION_STRING",
            "CONN_STR",
            "WEBHOOK",
            "REDIS_URL",
            "MONGO_URL",
            "MONGODB_URI",
            "AMQP_URL",
        ]
        .iter()
        .any(|k| u.contains(k))
            && !matches!(u.as_str(), "SSH_AUTH_SOCK" | "KEYBOARD" | "GPG_AGENT_INFO")
    };
    for w in &c.args {
        let named = if c.program == "printenv" { Some(w.text.as_str()) } else { None };
        let referenced = w.text.split('$').skip(1).map(|r| {
            r.trim_start_matches('{').split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_')).next().unwrap_or("")
        });
        if w.text.contains("${!") {
            e.op(
                CREDENTIAL_READ,
                RiskLevel::High,
                format!(
                    "`{} {}` prints a variable whose name is only known at run time (`${{!…}}`) into the agent's context.",
                    c.program, w.text
                ),
            );
        } else if named.into_iter().chain(referenced).any(|n| !n.is_empty() && secret_name(n)) {
            e.op(
                CREDENTIAL_READ,
                RiskLevel::High,
                format!("`{} {}` prints a secret-looking variable into the agent's context.", c.program, w.text),
            );
        }
    }
}

/// The index of the argument holding the code an interpreter runs: the inline code after
/// `-c`/`-e`/…, else the script file operand.
pub fn interpreter_code_arg(c: &Command) -> Option<usize> {
    let flags = inline_flags(&c.program);
    for (i, w) in c.args.iter().enumerate() {
        let t = w.text.as_str();
        if takes_code(t, flags) {
            return (i + 1 < c.args.len()).then_some(i + 1);
        }
        if !t.starts_with('-') {
            return Some(i);
        }
        if matches!(t, "-m" | "-M") {
            return None;
        }
    }
    None
}

/// The index of an interpreter's inline code (the word after `-c`, `-e`, `-r`, …), if any.
pub fn inline_code_index(c: &Command) -> Option<usize> {
    let flags = inline_flags(&c.program);
    let i = c.args.iter().position(|w| takes_code(&w.text, flags))?;
    (i + 1 < c.args.len()).then_some(i + 1)
}

/// Whether an interpreter runs its stdin (no inline code, no script file, or the file `-`).
pub fn interpreter_reads_stdin(c: &Command) -> bool {
    match interpreter_code_arg(c) {
        None => !c.args.iter().any(|a| a.text == "-m"),
        Some(i) => {
            c.args.get(i).is_some_and(|w| w.text == "-")
                && !c.args.iter().take(i).any(|a| takes_code(&a.text, inline_flags(&c.program)))
        }
    }
}

fn inline_flags(p: &str) -> &'static [&'static str] {
    match p {
        "perl" => &["-e", "-E"],
        "node" | "nodejs" | "bun" => &["-e", "--eval", "-p", "--print"],
        "php" => &["-r"],
        "lua" | "luajit" | "Rscript" | "R" | "ghc" | "julia" | "racket" | "groovy" | "scala" | "raku" | "perl6"
        | "elixir" | "erl" | "dc" | "ruby" | "irb" | "ghci" => &["-e", "--eval"],
        "pwsh" | "powershell" => &["-c", "-Command", "-command", "-EncodedCommand", "-enc", "-e", "-ec"],
        "nu" | "xonsh" | "elvish" | "guile" => &["-c"],
        "sbcl" => &["--eval"],
        "ts-node" | "tsx" => &["-e", "--eval", "-p", "--print"],
        "osascript" => &["-e"],
        "deno" => &["eval"],
        _ => &["-c"],
    }
}

/// `-c`, `-e`, and bundles such as perl's `-ne` / `-lpe` whose last letter takes the code (a
/// bundle is letters only: `-MLWP::Simple` is a module, not a bundle ending in `e`).
fn takes_code(t: &str, flags: &[&str]) -> bool {
    flags.contains(&t)
        || (t.starts_with('-')
            && !t.starts_with("--")
            && t.len() > 2
            && t.len() <= 6
            && t[1..].chars().all(|c| c.is_ascii_alphabetic())
            && !t[1..].starts_with(['M', 'm', 'r', 'I', 'x', 'V', 'W', 'X', 'C', 'd'])
            && flags.iter().any(|f| f.len() == 2 && t.ends_with(&f[1..])))
}

/// Libraries an interpreter loads from its options before the code (`perl -MMod`, `ruby -rlib`,
/// `node -r mod` / `--require` / `--import` / `--loader`): their names.
pub fn interpreter_libraries(c: &Command) -> Vec<String> {
    let mut out = Vec::new();
    let p = c.program.as_str();
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    for (i, t) in texts.iter().enumerate() {
        let next = texts.get(i + 1).map(|s| s.to_string());
        match p {
            "perl" | "perl5" => {
                if let Some(m) = t.strip_prefix("-M").or_else(|| t.strip_prefix("-m")) {
                    let m = m.trim_start_matches('-');
                    let m = m.split(['=', ' ']).next().unwrap_or(m);
                    if m.is_empty() { out.extend(next) } else { out.push(m.to_string()) }
                }
            }
            "ruby" | "irb" => {
                if *t == "-r" || *t == "--require" {
                    out.extend(next);
                } else if let Some(m) = t.strip_prefix("-r").filter(|m| !m.is_empty()) {
                    out.push(m.to_string());
                }
            }
            "node" | "nodejs" | "bun" | "deno" | "ts-node" | "tsx" => {
                if matches!(*t, "-r" | "--require" | "--import" | "--loader" | "--experimental-loader") {
                    out.extend(next);
                } else if let Some((o, v)) = t.split_once('=')
                    && matches!(o, "--require" | "--import" | "--loader" | "--experimental-loader")
                {
                    out.push(v.to_string());
                }
            }
            _ => {}
        }
        if *t == "--" || (!t.starts_with('-') && i > 0) {
            break;
        }
    }
    out
}

/// `python -c CODE`, `perl -e CODE`, `node -e CODE`, `ruby -e CODE`, `php -r CODE`.
fn interpreter(c: &Command, e: &mut Effects) {
    let p = c.program.as_str();
    let flags = inline_flags(p);
    let code = c.args.iter().position(|w| takes_code(&w.text, flags));
    // `perl -pi -e CODE files…`: edits the files in place.
    let in_place = (p == "perl" || p == "ruby")
        && c.args.iter().any(|w| w.text.starts_with('-') && !w.text.starts_with("--") && w.text[1..].contains('i'));
    if in_place && let Some(i) = code {
        for w in c.args.iter().skip(i + 2).filter(|w| !w.text.starts_with('-')) {
            e.write(w);
        }
    }
    e.inline_code = code.and_then(|i| c.args.get(i + 1)).map(|w| w.text.clone());
}

/// The command `kubectl exec POD -- CMD…` or `docker exec [opts] CONTAINER CMD…` runs inside the
/// pod or container, as one shell-quoted line.
fn exec_command(c: &Command) -> Option<String> {
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let exec = texts.iter().position(|t| *t == "exec")?;
    if texts.iter().position(|t| *t == "--").is_some_and(|dd| dd < exec) {
        return None;
    }
    let quote = |w: &str| format!("'{}'", w.replace('\'', "'\\''"));
    let inner: Vec<&str> = match c.program.as_str() {
        "kubectl" | "oc" | "kubecolor" => texts.iter().position(|t| *t == "--").map(|k| texts[k + 1..].to_vec())?,
        _ => {
            // Options of `docker exec` that take a value; the container is the first operand.
            const VALUED: &[&str] = &["-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"];
            let mut k = exec + 1;
            while let Some(t) = texts.get(k) {
                if VALUED.contains(t) {
                    k += 2;
                } else if t.starts_with('-') {
                    k += 1;
                } else {
                    break;
                }
            }
            texts.get(k + 1..)?.to_vec()
        }
    };
    (!inner.is_empty()).then(|| inner.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "))
}
