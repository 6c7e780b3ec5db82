//! Code the analysis cannot see into. A shell plus interpreters is Turing-complete, so the
//! analysis allows only what it understands; everything here returns *why* a command runs code
//! it does not understand, and the gate asks about it (normal mode) or lets it run only inside
//! the kernel sandbox (unattended), never silently.
//!
//! Two kinds of knowledge live here, as tables:
//! - programs that run commands as a feature (launchers, `awk system()`, `sed e`, `tar
//!   --to-command`, git configuration that names programs, …) and environment variables that make
//!   a later program run code ([`feature_exec`], [`code_env`]);
//! - a positive rule for interpreter code ([`check_code`]): code that only computes and prints
//!   (a short allow-list of modules and builtins per language) is understood; anything that reaches
//!   process, file-write/delete or network APIs, or builds names dynamically, is not.

use super::unwrap::{Command, Head};

/// The languages whose code the positive rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// POSIX shells (analysed by the shell analysis itself, not here).
    Shell,
    /// Python 2/3.
    Python,
    /// JavaScript (node, bun, deno).
    Js,
    /// Perl.
    Perl,
    /// Ruby.
    Ruby,
    /// PHP.
    Php,
    /// Anything else (lua, R, tcl, …): never understood.
    Other,
}

impl Lang {
    /// The language of an interpreter program, or of a `#!` line's program.
    pub fn of_program(p: &str) -> Option<Lang> {
        let p = p.rsplit('/').next().unwrap_or(p);
        Some(match p {
            _ if super::unwrap::SHELLS.contains(&p) => Lang::Shell,
            "python" | "python2" | "python3" | "pypy" | "pypy3" => Lang::Python,
            _ if p.starts_with("python3.") || p.starts_with("python2.") => Lang::Python,
            "node" | "nodejs" | "bun" | "deno" => Lang::Js,
            "perl" | "perl5" => Lang::Perl,
            "ruby" | "irb" => Lang::Ruby,
            "php" => Lang::Php,
            "lua" | "luajit" | "Rscript" | "R" | "tclsh" | "wish" | "expect" | "julia" | "pwsh" | "powershell"
            | "osascript" | "groovy" | "jshell" | "scala" | "guile" | "racket" | "sbcl" | "ghci" | "runghc"
            | "elixir" | "erl" | "escript" | "swift" | "kotlin" | "kotlinc" | "awk" | "gawk" | "mawk" | "nawk"
            | "gdb" | "sqlite3" => Lang::Other,
            _ => return None,
        })
    }

    /// The language a script's `#!` line names (`#!/usr/bin/env python3`, `#!/bin/sh -e`).
    pub fn of_shebang(text: &str) -> Option<Lang> {
        let line = text.strip_prefix("#!")?.lines().next()?.trim();
        let mut words = line.split_whitespace();
        let first = words.next()?;
        let prog =
            if first.ends_with("/env") { words.find(|w| !w.starts_with('-') && !w.contains('='))? } else { first };
        Lang::of_program(prog)
    }
}

/// Top-level Python modules whose whole API only computes (no process, file-write or network
/// access). `os.path` is allowed only as `from os.path import …` (`import os.path` binds `os`).
const PY_MODULES: &[&str] = &[
    "json",
    "sys",
    "math",
    "cmath",
    "re",
    "datetime",
    "time",
    "collections",
    "itertools",
    "functools",
    "string",
    "textwrap",
    "statistics",
    "decimal",
    "fractions",
    "random",
    "secrets",
    "hashlib",
    "hmac",
    "base64",
    "binascii",
    "struct",
    "uuid",
    "csv",
    "pprint",
    "enum",
    "dataclasses",
    "operator",
    "copy",
    "heapq",
    "bisect",
    "array",
    "calendar",
    "unicodedata",
    "html",
    "ipaddress",
    "shlex",
    "difflib",
    "colorsys",
    "abc",
    "numbers",
    "zlib",
    "keyword",
    "__future__",
];

/// Double-underscore names that carry metadata or define a class's ordinary behaviour, not a
/// way into the interpreter's internals (`__globals__`, `__builtins__`, `__subclasses__`,
/// `__dict__`, `__code__`, `__reduce__` and the rest stay outside this list).
const PY_PLAIN_DUNDERS: &[&str] = &[
    "__version__",
    "__all__",
    "__author__",
    "__package__",
    "__qualname__",
    "__module__",
    "__slots__",
    "__init__",
    "__repr__",
    "__str__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__len__",
    "__iter__",
    "__next__",
    "__contains__",
    "__getitem__",
    "__setitem__",
    "__enter__",
    "__exit__",
    "__add__",
    "__sub__",
    "__mul__",
    "__bool__",
    "__post_init__",
];

/// Python modules that exist to run code, load native code or spawn terminals.
const PY_EVASIVE: &[&str] = &[
    "pydoc",
    "webbrowser",
    "operator",
    "pkgutil",
    "smtplib",
    "cProfile",
    "profile",
    "pdb",
    "trace",
    "timeit",
    "site",
    "asyncio",
    "typing",
    "argparse",
    "fileinput",
    "pty",
    "ctypes",
    "importlib",
    "pickle",
    "marshal",
    "code",
    "codeop",
    "runpy",
    "builtins",
    "imp",
    "cffi",
    "commands",
    "posix",
];

/// Python builtins that reach beyond computing: code evaluation, attribute access by name,
/// the interpreter's namespaces, files, the debugger and the pager.
const PY_BUILTINS: &[&str] =
    &["eval", "exec", "compile", "getattr", "setattr", "delattr", "globals", "locals", "vars", "breakpoint", "help"];

/// Node modules that only compute.
const JS_MODULES: &[&str] =
    &["path", "util", "url", "querystring", "assert", "events", "string_decoder", "buffer", "crypto", "os", "punycode"];

/// JavaScript names that reach process, files, network or evaluation.
const JS_NAMES: &[&str] = &[
    "eval",
    "Function",
    "import",
    "globalThis",
    "global",
    "constructor",
    "__proto__",
    "__defineGetter__",
    "fetch",
    "XMLHttpRequest",
    "WebSocket",
    "Deno",
    "Bun",
    "module",
    "Reflect",
    "Proxy",
    "WebAssembly",
    "Worker",
    "EventSource",
    "navigator",
    "localStorage",
    "Atomics",
];

/// What of `process` a computation may use.
const JS_PROCESS: &[&str] = &[
    "argv",
    "stdout",
    "stderr",
    "stdin",
    "exit",
    "exitCode",
    "version",
    "versions",
    "platform",
    "arch",
    "cwd",
    "hrtime",
    "uptime",
    "memoryUsage",
    "pid",
    "nextTick",
];

/// Perl names that reach process, files, network or evaluation.
const PERL_NAMES: &[&str] = &[
    "system",
    "exec",
    "qx",
    "fork",
    "kill",
    "unlink",
    "rmdir",
    "mkdir",
    "rename",
    "chmod",
    "chown",
    "utime",
    "truncate",
    "symlink",
    "link",
    "open",
    "sysopen",
    "opendir",
    "eval",
    "do",
    "require",
    "syscall",
    "socket",
    "connect",
    "dbmopen",
    "pipe",
    "readpipe",
    "glob",
    "chdir",
    "chroot",
    "setpgrp",
    "exit_group",
];

/// Perl pragmas and modules a computation may `use`.
const PERL_MODULES: &[&str] = &["strict", "warnings", "utf8", "List::Util", "Data::Dumper", "JSON::PP", "feature"];

/// Ruby names that reach process, files, network or evaluation.
const RUBY_NAMES: &[&str] = &[
    "system",
    "exec",
    "spawn",
    "fork",
    "open",
    "eval",
    "instance_eval",
    "class_eval",
    "module_eval",
    "instance_exec",
    "send",
    "public_send",
    "__send__",
    "method",
    "define_method",
    "const_get",
    "load",
    "syscall",
    "IO",
    "File",
    "FileUtils",
    "Dir",
    "Process",
    "Kernel",
    "Socket",
    "TCPSocket",
    "UDPSocket",
    "Net",
    "URI",
    "ObjectSpace",
    "binding",
    "Open3",
    "PTY",
    "trap",
    "at_exit",
    "Pathname",
    "Tempfile",
    "Object",
    "BasicObject",
    "Module",
    "Class",
];

/// Ruby libraries a computation may `require`.
const RUBY_MODULES: &[&str] = &["json", "set", "date", "time", "digest", "securerandom", "bigdecimal", "prime"];

/// PHP functions that reach process, files, network or evaluation.
const PHP_NAMES: &[&str] = &[
    "shell_exec",
    "exec",
    "system",
    "passthru",
    "popen",
    "proc_open",
    "pcntl_exec",
    "pcntl_fork",
    "file_put_contents",
    "file_get_contents",
    "fopen",
    "fwrite",
    "fputs",
    "unlink",
    "rmdir",
    "mkdir",
    "rename",
    "copy",
    "touch",
    "chmod",
    "chown",
    "symlink",
    "link",
    "eval",
    "assert",
    "create_function",
    "include",
    "include_once",
    "require",
    "require_once",
    "call_user_func",
    "call_user_func_array",
    "array_map",
    "array_walk",
    "usort",
    "preg_replace_callback",
    "mail",
    "curl_exec",
    "curl_init",
    "fsockopen",
    "stream_socket_client",
    "socket_create",
    "file",
    "readfile",
    "highlight_file",
    "show_source",
    "parse_ini_file",
    "putenv",
    "dl",
    "ini_set",
    "extract",
    "parse_str",
    "ReflectionFunction",
    "new",
    "glob",
    "opendir",
    "scandir",
];

/// Whether a library loaded from an interpreter's options only computes (the same allow-lists
/// as `use`/`require` in the code).
pub fn library_is_plain(lang: Lang, lib: &str) -> bool {
    match lang {
        Lang::Perl => PERL_MODULES.contains(&lib),
        Lang::Ruby => RUBY_MODULES.contains(&lib),
        Lang::Js => JS_MODULES.contains(&lib.trim_start_matches("node:")),
        _ => false,
    }
}

/// Why a command's code is not understood, and how: `evasive` when the code reaches a shell or
/// interpreter through a channel ordinary work does not use (a launcher, an exec option, code
/// on stdin, names built at run time, a script written a moment earlier): asked about in every
/// mode. Otherwise it is the workspace's own code or a tool's (a script file, a package runner,
/// interpreter code that uses real APIs): asked about in normal mode, run confined unattended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opaque {
    /// In words, for the reason.
    pub why: String,
    /// Reached through a channel ordinary work does not use.
    pub evasive: bool,
}

impl Opaque {
    /// Evasive.
    pub fn ev(why: impl Into<String>) -> Opaque {
        Opaque { why: why.into(), evasive: true }
    }

    /// The workspace's or a tool's own code.
    pub fn ws(why: impl Into<String>) -> Opaque {
        Opaque { why: why.into(), evasive: false }
    }
}

/// Why interpreter code is not understood, or the files it reads (and, marked `true`, the
/// literal paths it writes: the caller checks them as write targets) (literal paths given to a
/// read-only `open`, checked by the caller like any other read).
pub fn check_code(lang: Lang, code: &str) -> Result<Vec<(String, bool)>, Opaque> {
    let mark = |v: Vec<String>| -> Vec<(String, bool)> {
        v.into_iter()
            .map(|p| match p.strip_prefix('\u{1}') {
                Some(w) => (w.to_string(), true),
                None => (p, false),
            })
            .collect()
    };
    check_code_marked(lang, code).map(mark)
}

fn check_code_marked(lang: Lang, code: &str) -> Result<Vec<String>, Opaque> {
    if lang != Lang::Shell
        && lang != Lang::Other
        && let Some(o) = dynamic_process_or_delete(code)
    {
        return Err(o);
    }
    match lang {
        Lang::Shell => Ok(Vec::new()),
        Lang::Python => python(code),
        Lang::Js => js(code),
        Lang::Perl => perl(code),
        Lang::Ruby => ruby(code),
        Lang::Php => php(code),
        Lang::Other => Err(Opaque::ev("its language is not one loopguard reads")),
    }
}

/// Calls that run a process.
const PROCESS_CALLS: &[&str] = &[
    "system",
    "popen",
    "spawn",
    "spawnSync",
    "spawnl",
    "spawnlp",
    "spawnle",
    "spawnv",
    "spawnvp",
    "spawnve",
    "execl",
    "execlp",
    "execle",
    "execv",
    "execvp",
    "execvpe",
    "execSync",
    "execFile",
    "execFileSync",
    "fork",
    "Popen",
    "check_call",
    "check_output",
    "getoutput",
    "getstatusoutput",
    "shell_exec",
    "passthru",
    "proc_open",
    "pcntl_exec",
    "callCommand",
    "readProcess",
    "createProcess",
    "capture2",
    "capture3",
    "popen3",
    "exec",
    "subprocess.run",
    "create_subprocess_shell",
    "create_subprocess_exec",
    "posix_spawn",
    "posix_spawnp",
    "subprocess.call",
    "run_command",
    "pty.spawn",
];

/// Calls that delete (unambiguous names, or `module.name`).
const DELETE_CALLS: &[&str] = &[
    "rmtree",
    "removedirs",
    "rmSync",
    "rmdirSync",
    "unlinkSync",
    "rm_rf",
    "rm_r",
    "remove_dir_all",
    "rimraf",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "fs.rm",
    "fs.unlink",
    "fs.rmdir",
    "File.delete",
    "FileUtils.rm",
    "Path.unlink",
    "unlink",
];

/// Names that reach the network.
const NETWORK_NAMES: &[&str] = &[
    "socket",
    "HTTPConnection",
    "HTTPSConnection",
    "http import",
    "Addrinfo",
    "node:http",
    "node:tls",
    "node:dgram",
    "'https'",
    "\"https\"",
    "'http'",
    "\"http\"",
    "'tls'",
    "\"tls\"",
    "'undici'",
    "\"undici\"",
    "urlopen",
    "urllib",
    "requests",
    "httpx",
    "http.client",
    "create_connection",
    "fetch",
    "XMLHttpRequest",
    "WebSocket",
    "net.connect",
    "net.createConnection",
    "dgram",
    "TCPSocket",
    "Net::HTTP",
    "LWP",
    "IO::Socket",
    "fsockopen",
    "curl_exec",
    "stream_socket_client",
    "aiohttp",
    "paramiko",
    "('net')",
    "(\"net\")",
    "('node:net')",
    "('dgram')",
    "('http')",
    "('https')",
    "('tls')",
    "(\"http\")",
    "(\"https\")",
    "(\"tls\")",
    "(\"dgram\")",
];

/// Process and delete calls whose command or path is not a literal (so what runs or goes is
/// built at run time), process functions taken as values (`f = os.system`, `import system as
/// s`), and code that both reaches the network and runs processes (a reverse shell's shape).
pub fn dynamic_process_or_delete(code: &str) -> Option<Opaque> {
    // Functions looked up by a name built at run time, and native calls around the language.
    for (needle, why) in [
        ("attrgetter(", "it looks up a function by a name given as data (`operator.attrgetter`)"),
        ("methodcaller(", "it calls a method by a name given as data (`operator.methodcaller`)"),
        ("__getattribute__", "it looks up attributes by name at run time"),
        ("Fiddle", "it calls native functions directly (Fiddle)"),
        ("ctypes", "it calls native functions directly (ctypes)"),
        ("cffi", "it calls native functions directly (cffi)"),
        ("ffi-napi", "it calls native functions directly (ffi-napi)"),
        ("DynaLoader", "it loads native code directly (DynaLoader)"),
        ("FFI::", "it calls native functions directly (FFI)"),
        ("process.binding", "it reaches node's internal bindings"),
    ] {
        if code.contains(needle) {
            return Some(Opaque::ev(why));
        }
    }
    // Modules whose purpose is running processes: using them is running one, by whatever name.
    let mut runs_process =
        ["subprocess", "child_process", "pty.spawn", "Open3", "IPC::Open", "IPC::Run", "proc_open", "Process.spawn"]
            .iter()
            .any(|m| code.contains(m));
    if let Some(o) = process_calls(code, &mut runs_process) {
        return Some(o);
    }
    if let Some(o) = computed_path_calls(code) {
        return Some(o);
    }
    let network = NETWORK_NAMES.iter().any(|n| code.contains(n));
    if runs_process && network {
        return Some(Opaque::ev("it both reaches the network and runs processes"));
    }
    let local_data = [
        "open(",
        "readFile",
        "process.env",
        "os.environ",
        "getenv",
        "ENV[",
        "$ENV{",
        "read_text",
        "File.read",
        "read_bytes",
        "FileIO",
        "ARGF",
        "ARGV",
        "fileinput",
        "createReadStream",
        "readdir",
    ];
    // `open(` as a word (`open(…)`, `io.open(…)`), not the tail of `urlopen(`.
    let found = |d: &str| {
        code.match_indices(d).any(|(at, _)| {
            !d.starts_with(|c: char| c.is_ascii_alphabetic())
                || !code[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    if network && local_data.iter().any(|d| found(d)) {
        return Some(Opaque::ev("it reads local files or the environment and reaches the network"));
    }
    None
}

/// Process calls whose command is built at run time, or process functions taken as values;
/// sets `runs_process` when any process call is found.
fn process_calls(code: &str, runs_process: &mut bool) -> Option<Opaque> {
    for name in PROCESS_CALLS {
        for (at, _) in code.match_indices(name) {
            let before = code[..at].chars().next_back();
            let after = &code[at + name.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                || after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            {
                continue; // part of a longer name
            }
            // `exec` alone is too common a word (Python's builtin is caught elsewhere); only
            // `os.exec…`/`child_process.exec` forms count.
            if *name == "exec" && before != Some('.') {
                continue;
            }
            *runs_process = true;
            let t = after.trim_start();
            if t.starts_with('(') {
                if !args_all_literal(t) {
                    return Some(Opaque::ev(format!("it runs a command built at run time (`{name}`)")));
                }
            } else if !t.starts_with("==")
                && (t.starts_with(['=', ',', ')', ';', '\n', '}', '.'])
                    || t.is_empty()
                    || code[..at].trim_end().ends_with("import")
                    || code[..at].trim_end().ends_with(" as")
                    || code[..at].trim_end().ends_with('{'))
            {
                // Taken as a value or imported by name: called later under another name.
                return Some(Opaque::ev(format!("it takes `{name}` as a value, to run commands under another name")));
            }
        }
    }
    None
}

/// Write and delete calls on paths built at run time, or such functions passed around as values.
fn computed_path_calls(code: &str) -> Option<Opaque> {
    for name in DELETE_CALLS.iter().chain(WRITE_CALLS) {
        for (at, _) in code.match_indices(name) {
            let before = code[..at].chars().next_back();
            let after = &code[at + name.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            // `map(os.remove, …)`: a delete or write function taken as a value runs on paths the
            // code computes.
            if name.contains('.') && after.trim_start().starts_with([',', ')']) {
                return Some(Opaque::ev(format!("it passes `{name}` around as a value, to run on computed paths")));
            }
            if !after.trim_start().starts_with('(') {
                continue;
            }
            if *name == "unlink" && before != Some('.') && !code[..at].ends_with("os.") {
                continue;
            }
            if !first_arg_literal(after.trim_start()) {
                return Some(Opaque::ev(format!("it writes or deletes a path built at run time (`{name}`)")));
            }
        }
    }
    None
}

/// URLs spelled literally in code (`'http://…'`, `"https://…"`): up to the first quote, space or
/// bracket.
pub fn literal_urls(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for scheme in ["http://", "https://"] {
        for (at, _) in code.match_indices(scheme) {
            let url: String = code[at..]
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, '\'' | '"' | '`' | ')' | '(' | '<' | '>' | ','))
                .collect();
            out.push(url);
            if out.len() >= 32 {
                return out;
            }
        }
    }
    out
}

/// Literal paths that code opens for writing or passes to a write call (`open('x', 'w')`,
/// `writeFileSync('x', …)`, `File.write('x', …)`, `file_put_contents('x', …)`).
pub fn literal_writes(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for name in WRITE_CALLS.iter().chain(&["open"]) {
        for (at, _) in code.match_indices(name) {
            if code[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            if ["copy", "move", "rename", "replace", "symlink", "link"].iter().any(|x| name.contains(x)) {
                continue; // the first argument is the source
            }
            let Some((path, after)) = first_literal_arg(&code[at + name.len()..]) else { continue };
            let writes = *name != "open" || {
                let mode: String =
                    after.trim_start().strip_prefix(',').unwrap_or("").trim_start().chars().take(5).collect();
                mode.starts_with(['\'', '"']) && mode[1..].starts_with(['w', 'a', 'x']) || mode.contains('+')
            };
            if writes {
                out.push(path);
            }
        }
    }
    out.truncate(32);
    out
}

/// Calls that write a file: their first argument is the path.
const WRITE_CALLS: &[&str] = &[
    "os.rename",
    "os.replace",
    "shutil.move",
    "shutil.copy",
    "shutil.copyfile",
    "os.symlink",
    "os.link",
    "writeFileSync",
    "appendFileSync",
    "writeFile",
    "appendFile",
    "createWriteStream",
    "file_put_contents",
    "File.write",
    "IO.write",
    "File.open",
    "fopen",
];

/// A string literal without interpolation (`"$HOME"`, `"#{x}"`, `f"{x}"`, `` `${x}` `` are built
/// at run time).
fn plain_literal(r: &str) -> Option<usize> {
    let q = r.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let body = &r[1..];
    let end = body.find(q)?;
    let lit = &body[..end];
    (q == '\'' || !(lit.contains('$') || lit.contains("#{") || lit.contains('@'))).then_some(end + 2)
}

/// Whether the first argument after `(` is a plain string literal.
fn first_arg_literal(t: &str) -> bool {
    t.strip_prefix('(').is_some_and(|r| plain_literal(r.trim_start()).is_some())
}

/// Whether every argument of the call starting at `(` is a plain literal, a list of them, or a
/// keyword argument with a constant value (`shell=True`, `check: true`).
fn args_all_literal(t: &str) -> bool {
    let Some(mut r) = t.strip_prefix('(') else { return false };
    let mut depth = 0usize;
    loop {
        r = r.trim_start();
        if r.is_empty() {
            return false;
        }
        if let Some(n) = plain_literal(r) {
            r = &r[n..];
            continue;
        }
        let c = r.chars().next().unwrap_or(')');
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.saturating_sub(1),
            ')' if depth == 0 => return true,
            ',' => {}
            _ => {
                // `name=CONST` / `name: CONST`
                let ident: String = r.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if ident.is_empty() {
                    return false;
                }
                let rest = r[ident.len()..].trim_start();
                let Some(v) = rest.strip_prefix('=').or_else(|| rest.strip_prefix(':')) else { return false };
                let v = v.trim_start();
                let konst: String =
                    v.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.').collect();
                if let Some(n) = plain_literal(v) {
                    r = &v[n..];
                    continue;
                }
                if !matches!(konst.as_str(), "True" | "False" | "None" | "true" | "false" | "null" | "undefined")
                    && !konst.chars().all(|c| c.is_ascii_digit() || c == '.')
                    || konst.is_empty()
                {
                    return false;
                }
                r = &v[konst.len()..];
                continue;
            }
        }
        r = &r[c.len_utf8()..];
    }
}

/// One identifier in code: its text, the character before it (`.` for an attribute) and the
/// code after it.
struct Ident<'a> {
    name: &'a str,
    before: Option<char>,
    rest: &'a str,
}

/// Identifiers outside string literals. `code_strings` lists quote characters whose contents
/// are code anyway (interpolation: ruby/perl/php `"…"`, JS template literals, Python f-strings
/// are handled by their prefix). `$` and `@` start identifiers in perl/php.
fn idents<'a>(code: &'a str, code_strings: &[char], sigils: bool) -> Vec<Ident<'a>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut before: Option<char> = None;
    while i < b.len() {
        let c = b[i] as char;
        if c == '"' || c == '\'' || c == '`' {
            // f"…" / rb'…': a Python prefix right before the quote.
            let fstring = out.last().is_some_and(|id: &Ident<'_>| {
                let n = id.name.to_ascii_lowercase();
                (n == "f" || n == "rf" || n == "fr") && id.rest.starts_with(c)
            });
            let triple = i + 2 < b.len() && b[i + 1] == b[i] && b[i + 2] == b[i];
            let (open, close): (usize, &[u8]) = if triple { (3, &b[i..i + 3]) } else { (1, &b[i..i + 1]) };
            let start = i + open;
            let mut j = start;
            while j < b.len() && !b[j..].starts_with(close) {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if fstring || code_strings.contains(&c) {
                let inner = &code[start.min(code.len())..j.min(code.len())];
                out.extend(idents(inner, &[], sigils));
            }
            i = (j + open).min(b.len());
            before = Some(c);
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' || (sigils && (c == '$' || c == '@')) {
            let start = i;
            i += 1;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_' || (sigils && b[i] == b':')) {
                i += 1;
            }
            out.push(Ident { name: &code[start..i], before, rest: &code[i..] });
            before = None;
            continue;
        }
        if !c.is_whitespace() {
            before = Some(c);
        }
        i += 1;
    }
    out
}

fn next_char(s: &str) -> Option<char> {
    s.trim_start().chars().next()
}

/// The first string literal right after `(` in `rest` (`open('a.txt')` → `a.txt`), with the
/// text after it.
fn first_literal_arg(rest: &str) -> Option<(String, &str)> {
    let r = rest.trim_start().strip_prefix('(')?.trim_start();
    let q = r.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let body = &r[1..];
    let end = body.find(q)?;
    let lit = &body[..end];
    (!lit.contains('\\')).then(|| (lit.to_string(), &body[end + 1..]))
}

/// Python code without its `#` comments (outside string literals), so a quote in a comment
/// cannot open a string that hides the code after it.
fn strip_py_comments(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut quote: Option<char> = None;
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '#') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                        break;
                    }
                }
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), d) if d == q => quote = None,
            (Some(_), '\\') => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

fn python(code: &str) -> Result<Vec<String>, Opaque> {
    let stripped = strip_py_comments(code);
    let code = stripped.as_str();
    // A process module imported under another name, or its functions imported by name: the
    // calls no longer look like process calls.
    for line in code.lines() {
        let l = line.trim();
        let from_proc = ["subprocess", "os", "pty", "commands", "asyncio"]
            .iter()
            .any(|m| l.starts_with(&format!("from {m} import")))
            && !l.starts_with("from os import path")
            && !l.starts_with("from os.path import");
        let aliased = l.starts_with("import ")
            && ["subprocess", "os", "pty", "shutil", "socket"].iter().any(|m| l.contains(&format!("{m} as ")));
        if from_proc || aliased {
            let safe = l.starts_with("from os import")
                && l["from os import".len()..]
                    .split(',')
                    .all(|n| OS_SAFE.contains(&n.split_whitespace().next().unwrap_or("")));
            if !safe {
                return Err(Opaque::ev(format!("it imports process functions under other names (`{l}`)")));
            }
        }
    }
    let sys_path_changed = [
        "sys.path.insert",
        "sys.path.append",
        "sys.path.extend",
        "sys.path[",
        "sys.path =",
        "sys.path=",
        "sys.path +=",
    ]
    .iter()
    .any(|m| code.contains(m));
    if sys_path_changed
        || code.contains("chdir")
        || code.contains("read_bytes")
        || code.contains("read_text") && code.contains("http")
    {
        return Err(Opaque::ev("it changes where modules or relative paths are found, or sends file contents"));
    }
    let mut first: Option<Opaque> = None;
    let ids = idents(code, &[], false);
    let mut reads = Vec::new();
    let mut k = 0;
    while k < ids.len() {
        let id = &ids[k];
        let name = id.name;
        let attr = id.before == Some('.');
        if name.starts_with("__")
            && name.ends_with("__")
            && !matches!(name, "__name__" | "__main__" | "__file__" | "__doc__" | "__future__")
            && !PY_PLAIN_DUNDERS.contains(&name)
        {
            return Err(Opaque::ev(format!("it reaches the interpreter's internals (`{name}`)")));
        }
        if attr && name == "modules" {
            return Err(Opaque::ev("it reaches loaded modules by name (`sys.modules`)"));
        }
        if !attr && (name == "import" || name == "from") {
            // `import a, b.c as d` / `from a.b import c`
            let line = id.rest.split(['\n', ';']).next().unwrap_or("");
            let modules: Vec<&str> = if name == "from" {
                line.split_whitespace().next().into_iter().collect()
            } else {
                line.split(',').filter_map(|m| m.split_whitespace().next()).collect()
            };
            for m in modules {
                let top = m.split('.').next().unwrap_or(m);
                let ok = PY_MODULES.contains(&top)
                    || (name == "from" && m == "os.path")
                    || (top == "urllib" && m == "urllib.parse" && name == "from")
                    || (top == "os" && os_use_is_safe(&ids, line))
                    || (top == "pathlib" && pathlib_use_is_safe(&ids));
                if top == "pathlib"
                    && let Some(m) = pathlib_writes(&ids)
                {
                    return Err(Opaque::ev(format!(
                        "it changes files through `pathlib` (`{m}`) at paths built at run time"
                    )));
                }
                if !ok {
                    // Importing a module is ordinary code, whatever the module can do: it runs
                    // confined like any code the analysis cannot follow (`pickle`, `typing` and
                    // `importlib` are everyday imports in a quick check).
                    let what = if PY_EVASIVE.contains(&top) {
                        "runs code or processes by name"
                    } else {
                        "can reach files, processes or the network"
                    };
                    first.get_or_insert(Opaque::ws(format!("it imports `{m}`, which {what}")));
                }
            }
            // Skip the rest of the statement (the imported names).
            let end = code.len() - id.rest.len() + line.len();
            while k + 1 < ids.len() && code.len() - ids[k + 1].rest.len() <= end {
                k += 1;
            }
            k += 1;
            continue;
        }
        if !attr && PY_BUILTINS.contains(&name) && next_char(id.rest) == Some('(') {
            return Err(Opaque::ev(format!("it calls `{name}`, which evaluates code or reaches names dynamically")));
        }
        if !attr && name == "open" {
            match first_literal_arg(id.rest) {
                Some((path, after)) => {
                    let after = after.trim_start();
                    let mode_ok = after.starts_with(')')
                        || ["'r'", "\"r\"", "'rb'", "\"rb\"", "'rt'", "\"rt\""]
                            .iter()
                            .any(|m| after.strip_prefix(',').is_some_and(|a| a.trim_start().starts_with(m)));
                    if !mode_ok {
                        // A literal path opened for writing: checked as a write target.
                        reads.push(format!("\u{1}{path}"));
                        {
                            first.get_or_insert(Opaque::ws(
                                "it opens a file for writing (or with a mode the analysis cannot read)",
                            ));
                        }
                    }
                    if mode_ok {
                        reads.push(path);
                    }
                }
                None => {
                    // A name known only at run time: reading it is the workspace's business
                    // (confined, credentials hidden); writing it could be anywhere.
                    let args: String = id.rest.chars().take_while(|c| *c != '\n').collect();
                    if ["'w", "\"w", "'a", "\"a", "'x", "\"x", "+'", "+\""].iter().any(|m| args.contains(m)) {
                        return Err(Opaque::ev("it opens for writing a file whose name is only known at run time"));
                    }
                    first.get_or_insert(Opaque::ws("it opens a file whose name is only known at run time"));
                }
            }
        }
        k += 1;
    }
    match first {
        Some(o) => Err(o),
        None => Ok(reads),
    }
}

/// What of `os` a computation may use: where it is, what is around it — nothing that runs,
/// writes, deletes or changes anything.
const OS_SAFE: &[&str] = &[
    "getcwd",
    "getcwdb",
    "path",
    "sep",
    "linesep",
    "pathsep",
    "name",
    "environ",
    "getenv",
    "listdir",
    "scandir",
    "walk",
    "stat",
    "lstat",
    "getpid",
    "getppid",
    "cpu_count",
    "getuid",
    "getgid",
    "uname",
    "get_terminal_size",
    "fspath",
    "fsencode",
    "fsdecode",
    "curdir",
    "pardir",
    "extsep",
    "devnull",
    "access",
    "R_OK",
    "W_OK",
    "X_OK",
    "F_OK",
    "isatty",
    "strerror",
    "getlogin",
    "urandom",
    "times",
];

/// Path methods that write, delete, or read contents (reads go through `open`, whose literal
/// paths are checked).
const PATH_UNSAFE: &[&str] = &[
    "write_text",
    "write_bytes",
    "unlink",
    "mkdir",
    "rmdir",
    "rename",
    "replace",
    "touch",
    "chmod",
    "lchmod",
    "symlink_to",
    "hardlink_to",
    "link_to",
    "open",
    "read_text",
    "read_bytes",
];

/// `os` used only through [`OS_SAFE`] attributes (`from os import getcwd`, `os.getcwd()`).
fn os_use_is_safe(ids: &[Ident<'_>], import_line: &str) -> bool {
    if let Some(names) = import_line.split_once(" import ").map(|(_, n)| n) {
        return names.split(',').all(|n| OS_SAFE.contains(&n.split_whitespace().next().unwrap_or("")));
    }
    ids.iter().filter(|i| i.name == "os" && i.before != Some('.')).skip(1).all(|i| {
        i.rest.strip_prefix('.').is_some_and(|r| {
            let attr: String = r.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            OS_SAFE.contains(&attr.as_str())
        })
    })
}

/// `pathlib` used without any method that writes, deletes or reads contents.
fn pathlib_use_is_safe(ids: &[Ident<'_>]) -> bool {
    !ids.iter().any(|i| i.before == Some('.') && PATH_UNSAFE.contains(&i.name))
}

/// `pathlib` writing or deleting (the path is an expression: built at run time).
fn pathlib_writes(ids: &[Ident<'_>]) -> Option<&'static str> {
    ids.iter()
        .find(|i| {
            i.before == Some('.')
                && PATH_UNSAFE.contains(&i.name)
                && !matches!(i.name, "read_text" | "read_bytes" | "open")
        })
        .and_then(|i| PATH_UNSAFE.iter().find(|n| **n == i.name).copied())
}

/// `fs` methods that only look (metadata, listings).
const FS_LOOK: &[&str] = &[
    "existsSync",
    "statSync",
    "lstatSync",
    "readdirSync",
    "realpathSync",
    "accessSync",
    "exists",
    "stat",
    "lstat",
    "readdir",
    "realpath",
    "access",
    "constants",
    "promises",
];

fn js(code: &str) -> Result<Vec<String>, Opaque> {
    for m in [
        "'vm'",
        "\"vm\"",
        "'node:vm'",
        "'worker_threads'",
        "'module'",
        "'inspector'",
        "'v8'",
        "chdir",
        "createReadStream",
    ] {
        if code.contains(m) {
            return Err(Opaque::ev(format!(
                "it uses {m}, which runs code, moves the working directory or streams files"
            )));
        }
    }
    let mut first: Option<Opaque> = None;
    let ids = idents(code, &['`'], false);
    let mut reads = Vec::new();
    for id in &ids {
        let name = id.name;
        let attr = id.before == Some('.');
        if !attr && name == "require" {
            match first_literal_arg(id.rest) {
                Some((m, _)) if JS_MODULES.contains(&m.trim_start_matches("node:")) => continue,
                Some((m, _)) if matches!(m.trim_start_matches("node:"), "fs" | "fs/promises") => {
                    // Only looking and literal reads; every other fs method writes or deletes.
                    for a in ids.iter().filter(|a| a.before == Some('.')) {
                        if matches!(a.name, "readFileSync" | "readFile") {
                            match first_literal_arg(a.rest) {
                                Some((path, _)) => reads.push(path),
                                None => {
                                    first.get_or_insert(Opaque::ws(
                                        "it reads a file whose name is only known at run time",
                                    ));
                                }
                            }
                        } else if a.name.ends_with("Sync") && !FS_LOOK.contains(&a.name)
                            || [
                                "writeFile",
                                "appendFile",
                                "rm",
                                "rmdir",
                                "unlink",
                                "mkdir",
                                "rename",
                                "copyFile",
                                "cp",
                                "symlink",
                                "link",
                                "chmod",
                                "chown",
                                "truncate",
                                "createWriteStream",
                                "open",
                                "write",
                                "utimes",
                                "mkdtemp",
                                "opendir",
                            ]
                            .contains(&a.name)
                        {
                            first.get_or_insert(Opaque::ws(format!("it calls `fs.{}`, which changes files", a.name)));
                        }
                    }
                    continue;
                }
                Some((m, _)) if m.ends_with(".json") && (m.starts_with("./") || m.starts_with("../")) => {
                    reads.push(m);
                    continue;
                }
                Some((m, _)) => {
                    first.get_or_insert(Opaque::ws(format!(
                        "it loads `{m}`, which can reach files, processes or the network"
                    )));
                }
                None => return Err(Opaque::ev("it loads a module whose name is only known at run time")),
            }
        }
        if !attr && name == "process" {
            let member = id.rest.trim_start().strip_prefix('.').map(|r| {
                let r = r.trim_start();
                &r[..r.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(r.len())]
            });
            match member {
                Some(m) if JS_PROCESS.contains(&m) => continue,
                _ => {
                    first.get_or_insert(Opaque::ws("it reaches `process` beyond its arguments and output"));
                }
            }
        }
        if JS_NAMES.contains(&name) {
            let o = if matches!(name, "fetch" | "XMLHttpRequest" | "WebSocket" | "EventSource") {
                Opaque::ws(format!("it uses `{name}`, which reaches the network"))
            } else {
                Opaque::ev(format!("it uses `{name}`, which evaluates code or reaches the system"))
            };
            if o.evasive {
                return Err(o);
            }
            first.get_or_insert(o);
        }
        if (name == "setTimeout" || name == "setInterval")
            && id.rest.trim_start().strip_prefix('(').is_some_and(|r| r.trim_start().starts_with(['\'', '"', '`']))
        {
            return Err(Opaque::ev(format!("`{name}` with a string evaluates it as code")));
        }
    }
    // Computed member access (`x['con' + 'structor']`) builds names at run time.
    for (i, c) in code.char_indices() {
        if c == '['
            && i > 0
            && code[..i].trim_end().ends_with(|p: char| p.is_ascii_alphanumeric() || p == '_' || p == ')' || p == ']')
        {
            let inner: String = code[i + 1..].chars().take_while(|c| *c != ']').collect();
            let inner = inner.trim();
            if !inner.is_empty() && !inner.chars().all(|c| c.is_ascii_digit() || c == '-') && !is_plain_ident(inner) {
                return Err(Opaque::ev("it reaches a property whose name is built at run time"));
            }
        }
    }
    match first {
        Some(o) => Err(o),
        None => Ok(reads),
    }
}

fn is_plain_ident(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn perl(code: &str) -> Result<Vec<String>, Opaque> {
    if code.contains("qx")
        && code.split("qx").skip(1).any(|r| r.starts_with(|c: char| !c.is_ascii_alphanumeric() && c != '_'))
    {
        return Err(Opaque::ev("it runs a shell command (`qx`)"));
    }
    let mut first: Option<Opaque> = None;
    if code.contains('`') {
        return Err(Opaque::ev("it runs a shell command (backticks)"));
    }
    if perl_subst_eval(code) {
        return Err(Opaque::ev("a substitution evaluates its replacement as code (`s///e`)"));
    }
    let ids = idents(code, &['"'], true);
    for (k, id) in ids.iter().enumerate() {
        let name = id.name;
        if name.starts_with('$') || name.starts_with('@') {
            continue;
        }
        if name == "use" || name == "no" {
            let m = ids.get(k + 1).map_or("", |n| n.name);
            if !PERL_MODULES.contains(&m) {
                {
                    first.get_or_insert(Opaque::ws(format!("it loads `{m}`")));
                }
            }
            continue;
        }
        let name = name.rsplit("::").next().unwrap_or(name);
        if PERL_NAMES.contains(&name) && id.before != Some('>') && (id.before != Some('{') || id.name.contains("::")) {
            return Err(Opaque::ev(format!("it calls `{name}`, which evaluates code or reaches files or processes")));
        }
        if id.before == Some('&') {
            return Err(Opaque::ev("it calls a subroutine by reference"));
        }
    }
    match first {
        Some(o) => Err(o),
        None => Ok(Vec::new()),
    }
}

/// `s/a/b/e`, `s{a}{b}ee`, … : a substitution with the `e` flag.
fn perl_subst_eval(code: &str) -> bool {
    let b = code.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        let prev_ok = i == 0 || !(b[i - 1] as char).is_ascii_alphanumeric() && b[i - 1] != b'_' && b[i - 1] != b'$';
        if b[i] == b's' && prev_ok && !(b[i + 1] as char).is_ascii_alphanumeric() && !b[i + 1].is_ascii_whitespace() {
            let open = b[i + 1];
            let close = match open {
                b'{' => b'}',
                b'(' => b')',
                b'[' => b']',
                b'<' => b'>',
                o => o,
            };
            let parts = if open == close { 2 } else { 3 };
            let mut j = i + 2;
            let mut seen = 0;
            while j < b.len() && seen < parts {
                if b[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if b[j] == close || (open != close && b[j] == open) {
                    seen += 1;
                }
                j += 1;
            }
            if seen == parts {
                let flags: String = code[j.min(code.len())..].chars().take_while(|c| c.is_ascii_alphabetic()).collect();
                if flags.contains('e') {
                    return true;
                }
            }
        }
        i += 1;
    }
    false
}

fn ruby(code: &str) -> Result<Vec<String>, Opaque> {
    let mut first: Option<Opaque> = None;
    if code.contains('`') || code.contains("%x") {
        return Err(Opaque::ev("it runs a shell command (backticks or %x)"));
    }
    let ids = idents(code, &['"'], false);
    for id in &ids {
        let name = id.name;
        if name == "require" || name == "require_relative" {
            match first_literal_arg(id.rest)
                .or_else(|| first_literal_arg(&format!("({}", id.rest.trim_start())).map(|(m, _)| (m, "")))
            {
                Some((m, _)) if name == "require" && RUBY_MODULES.contains(&m.as_str()) => continue,
                Some((m, _)) => {
                    first.get_or_insert(Opaque::ws(format!("it loads `{m}`")));
                }
                None => return Err(Opaque::ev("it loads code whose name is only known at run time")),
            }
        }
        // `:system` is a symbol (data) — but `::Kernel`, `Kernel::exec` name the constant.
        let symbol = id.before == Some(':') && !code[..code.len() - id.rest.len() - name.len()].ends_with("::");
        if RUBY_NAMES.contains(&name) && !symbol {
            return Err(Opaque::ev(format!(
                "it uses `{name}`, which evaluates code or reaches files, processes or the network"
            )));
        }
    }
    match first {
        Some(o) => Err(o),
        None => Ok(Vec::new()),
    }
}

fn php(code: &str) -> Result<Vec<String>, Opaque> {
    if code.contains('`') {
        return Err(Opaque::ev("it runs a shell command (backticks)"));
    }
    // A function named in a string is called by name (`array_filter($a, 'exec')`).
    for q in ['\'', '"'] {
        for lit in code.split(q).skip(1).step_by(2) {
            if PHP_NAMES.iter().any(|n| n.eq_ignore_ascii_case(lit.trim()))
                || lit.trim().eq_ignore_ascii_case("error_log")
            {
                return Err(Opaque::ev(format!("it names `{}` in a string, to call it by name", lit.trim())));
            }
        }
    }
    if code.to_ascii_lowercase().contains("error_log") {
        return Err(Opaque::ev("it calls `error_log`, which can append to any file"));
    }
    let ids = idents(code, &['"'], true);
    for id in &ids {
        let name = id.name;
        if name.starts_with('$') {
            if next_char(id.rest) == Some('(') {
                return Err(Opaque::ev("it calls a function whose name is a variable"));
            }
            continue;
        }
        if PHP_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name)) && id.before != Some('>') {
            return Err(Opaque::ev(format!(
                "it calls `{name}`, which evaluates code or reaches files, processes or the network"
            )));
        }
    }
    Ok(Vec::new())
}

/// Environment variables that make a later program run code or load a library.
pub const CODE_ENV: &[&str] = &[
    "PYTHONUSERBASE",
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "OPENSSL_MODULES",
    "PSQLRC",
    "PSQL_EDITOR",
    "CURL_HOME",
    "WGETRC",
    "BUNDLE_GEMFILE",
    "npm_config_userconfig",
    "npm_config_globalconfig",
    "NPM_CONFIG_USERCONFIG",
    "CARGO_HOME",
    "CARGO_BUILD_RUSTC",
    "GOENV",
    "MANOPT",
    "CDPATH",
    "HISTFILE",
    "BASH_ALIASES",
    "BASH_CMDS",
    "GLOBIGNORE",
    "SSL_CERT_FILE",
    "GIT_SSL_CAINFO",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "BASH_ENV",
    "ENV",
    "PS4",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "PAGER",
    "MANPAGER",
    "GIT_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "SYSTEMD_EDITOR",
    "SUDO_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONINSPECT",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PERL5DB",
    "RUBYOPT",
    "RUBYLIB",
    "LESSOPEN",
    "LESSCLOSE",
    "LESSKEY",
    "BROWSER",
    "MAKEFILES",
    "MAKEFLAGS",
    "HOME",
    "XDG_CONFIG_HOME",
    "GNUPGHOME",
    "npm_config_script_shell",
    "NPM_CONFIG_SCRIPT_SHELL",
    "npm_config_node_options",
    "SUDO_ASKPASS",
    "RUSTFLAGS_WRAPPER",
    "PYTHONWARNINGS",
    "PERL5SHELL",
    "TERMINAL",
    "DYLD_INSERT_LIBRARIES",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "GCONV_PATH",
    "HOSTALIASES",
    "TAR_OPTIONS",
    "ZDOTDIR",
    "INPUTRC",
    "GIT_DIR",
    "GIT_WORK_TREE",
];

/// Whether an assignment `NAME=value` sets one of [`CODE_ENV`] (`GIT_CONFIG_KEY_n`/`VALUE_n`
/// too). `PS4`/`PROMPT_COMMAND` matter only with code in them, but any value is treated alike.
pub fn code_env(assignment: &str) -> Option<&str> {
    let (name, value) = assignment.split_once('=')?;
    let listed = CODE_ENV.contains(&name)
        || name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
        || name.starts_with("BASH_FUNC_")
        || (name.starts_with("CARGO_TARGET_") && (name.ends_with("_RUNNER") || name.ends_with("_LINKER")))
        || name.starts_with("YARN_")
        || name.starts_with("BASH_ALIASES[")
        || name.starts_with("BASH_CMDS[")
        || (name == "RUSTFLAGS" && (value.contains("linker") || value.contains("-Z") || value.contains("plugin")))
        || (name == "NODE_OPTIONS" && value.contains("openssl-config"))
        || (matches!(name, "PS0" | "PS1" | "PS2" | "PS3") && (value.contains("$(") || value.contains('`')))
        || (name == "PATH" && !path_is_ordinary(value))
        || (name == "GOFLAGS" && (value.contains("toolexec") || value.contains("-exec")))
        || (matches!(
            name,
            "CC" | "CXX"
                | "LD"
                | "AR"
                | "CPP"
                | "FC"
                | "AS"
                | "RUSTC"
                | "RUSTC_WRAPPER"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "CARGO_BUILD_RUSTC_WRAPPER"
                | "RUSTC_LINKER"
                | "RUSTDOC"
        ) && !value.chars().all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c)));
    (listed && !harmless_value(name, value)).then_some(name)
}

/// A `PATH` whose additions are ordinary places for programs: system directories, the usual
/// per-user tool directories, or directories of the workspace.
fn path_is_ordinary(value: &str) -> bool {
    value.split(':').all(|e| {
        matches!(e, "$PATH" | "${PATH}")
            || [
                "$VIRTUAL_ENV",
                "${VIRTUAL_ENV}",
                "$CONDA_PREFIX",
                "$CARGO_HOME",
                "$GOPATH",
                "$GOBIN",
                "$HOME/.",
                "${HOME}/.",
                "$PNPM_HOME",
                "$BUN_INSTALL",
                "$DENO_INSTALL",
                "$NVM_BIN",
                "$PWD/",
                "${PWD}/",
            ]
            .iter()
            .any(|p| e.starts_with(p) && !e.contains(".."))
            || (!e.is_empty()
                && e != "."
                && e != "./"
                && !e.starts_with('/')
                && !e.starts_with('~')
                && !e.starts_with('$')
                && !e.split('/').any(|c| c == ".."))
            || ["/usr/", "/bin", "/sbin", "/opt/", "/nix/", "/snap/"].iter().any(|p| e.starts_with(p))
            || [
                "/.cargo/bin",
                "/.local/bin",
                "/go/bin",
                "node_modules/.bin",
                "/.venv/bin",
                "/venv/bin",
                "/.pyenv/",
                "/.rbenv/",
                "/.nvm/",
                "/.bun/bin",
                "/.deno/bin",
                "/.volta/bin",
            ]
            .iter()
            .any(|p| e.contains(p))
    })
}

/// Values of program-naming variables and git keys that run nothing an agent could abuse: the
/// usual pagers without options that run commands, editors that do nothing, and node/python
/// settings that load no code from elsewhere.
pub fn harmless_value(name: &str, value: &str) -> bool {
    let v = value.trim();
    let n = name.to_ascii_lowercase();
    let pager = matches!(n.as_str(), "pager" | "git_pager" | "manpager" | "core.pager") || n.starts_with("pager.");
    let editor = matches!(
        n.as_str(),
        "editor" | "visual" | "git_editor" | "git_sequence_editor" | "core.editor" | "sequence.editor"
    );
    if pager {
        let prog = v.split_whitespace().next().unwrap_or("");
        return v.is_empty()
            || (matches!(prog, "cat" | "less" | "more" | "head" | "tail" | "bat" | "most")
                && v.split_whitespace().skip(1).all(|a| {
                    a.starts_with('-')
                        && !a.contains(['|', '!', '$', '`', ';', '/', '='])
                        && !a.starts_with("--lesskey")
                        && !a.starts_with("-k")
                }));
    }
    if editor {
        return matches!(v, "true" | ":" | "cat" | "vi" | "vim" | "nvim" | "nano" | "emacs" | "code --wait" | "false");
    }
    match name {
        "NODE_OPTIONS" => ![
            "--require",
            "-r",
            "--import",
            "--loader",
            "--experimental-loader",
            "--inspect",
            "-e",
            "--eval",
            "-p",
            "--print",
            "--env-file",
            "--experimental-policy",
            "--openssl-config",
            "--openssl-shared-config",
            "--snapshot-blob",
        ]
        .iter()
        .any(|o| {
            v.split_whitespace()
                .any(|w| w == *o || w.starts_with(&format!("{o}=")) || (o.len() > 2 && w.starts_with(o)))
        }),
        "PYTHONPATH" | "NODE_PATH" | "PERL5LIB" | "PERLLIB" | "RUBYLIB" => v.split(':').all(|e| {
            !e.is_empty()
                && !e.starts_with('/')
                && !e.starts_with('~')
                && !e.split('/').any(|c| c == "..")
                && !e.contains('$')
        }),
        _ => false,
    }
}

/// git configuration keys that change what `git push` sends or where: refspecs, the mirror
/// switch, destinations and their rewrites, which remote and which branches a bare push uses.
pub fn git_push_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    let last = k.rsplit('.').next().unwrap_or("");
    (k.starts_with("remote.") && matches!(last, "push" | "mirror" | "url" | "pushurl"))
        || (k.starts_with("url.") && matches!(last, "insteadof" | "pushinsteadof"))
        || (k.starts_with("branch.") && matches!(last, "pushremote" | "remote"))
        || k == "push.default"
        || k == "remote.pushdefault"
}

/// git configuration keys whose value is a program git runs (or a place it runs programs from).
pub fn git_exec_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    let more = (k.starts_with("gpg.") && (k.ends_with(".program") || k.ends_with("keycommand")))
        || k == "interactive.difffilter"
        || (k.starts_with("submodule.") && k.ends_with(".update"))
        || (k.starts_with("trailer.") && (k.ends_with(".command") || k.ends_with(".cmd")))
        || (k.starts_with("man.") && (k.ends_with(".cmd") || k.ends_with(".path")))
        || (k.starts_with("browser.") && (k.ends_with(".cmd") || k.ends_with(".path")))
        || (k.contains("tool.") && (k.ends_with(".path") || k.ends_with(".cmd")))
        || matches!(
            k.as_str(),
            "diff.guitool"
                | "merge.guitool"
                | "core.hookspath"
                | "sendemail.sendmailcmd"
                | "sendemail.tocmd"
                | "sendemail.cccmd"
        );
    if more {
        return true;
    }
    let exact = [
        "core.fsmonitor",
        "core.pager",
        "core.sshcommand",
        "core.editor",
        "core.hookspath",
        "core.askpass",
        "core.gitproxy",
        "core.alternaterefscommand",
        "diff.external",
        "sequence.editor",
        "gpg.program",
        "gpg.ssh.program",
        "gpg.x509.program",
        "credential.helper",
        "uploadpack.packobjectshook",
        "web.browser",
        "merge.tool",
        "diff.tool",
        "include.path",
        "remote.origin.uploadpack",
        "remote.origin.receivepack",
        "protocol.allow",
        "init.templatedir",
        "sendemail.smtpserver",
        "http.proxy",
    ];
    exact.contains(&k.as_str())
        || k.starts_with("alias.")
        || k.starts_with("pager.")
        || k.starts_with("includeif.")
        || (k.starts_with("filter.") && (k.ends_with(".clean") || k.ends_with(".smudge") || k.ends_with(".process")))
        || (k.starts_with("diff.") && (k.ends_with(".textconv") || k.ends_with(".command")))
        || (k.starts_with("merge.") && k.ends_with(".driver"))
        || (k.starts_with("mergetool.") && k.ends_with(".cmd"))
        || (k.starts_with("difftool.") && k.ends_with(".cmd"))
        || (k.starts_with("credential.") && k.ends_with(".helper"))
        || (k.starts_with("remote.")
            && (k.ends_with(".uploadpack") || k.ends_with(".receivepack") || k.ends_with(".proxy")))
        || (k.starts_with("url.") && k.ends_with(".insteadof"))
        || k.starts_with("protocol.")
        || k == "http.sslverify"
        || k.ends_with(".pushinsteadof")
        || k.ends_with(".pushurl")
        || k == "core.worktree"
        || k == "core.bare"
        || k.starts_with("core.sshcommand")
}

/// Whether a path lies in a world-writable directory (`/tmp`, `/var/tmp`, `/dev/shm`), where
/// anyone could have planted what it names.
pub fn world_writable(v: &str) -> bool {
    let v = v.trim_start_matches(['\'', '"']);
    ["/tmp/", "/var/tmp/", "/dev/shm/"].iter().any(|d| v.starts_with(d))
        || matches!(v, "/tmp" | "/var/tmp" | "/dev/shm")
}

/// Package runners: they run a package's code, found locally (`node_modules/.bin`) or downloaded.
/// Returns why, and the local program to look for when the runner may use an installed one
/// (`None`: it always downloads, like `pnpm dlx`, `uvx`, `npx --yes`, `npm create`).
pub fn package_runner(c: &Command) -> Option<(String, Option<String>)> {
    let (opts, ops) = c.options_and_operands();
    let first = ops.first().copied().unwrap_or("");
    let yes = opts.iter().any(|o| matches!(*o, "-y" | "--yes" | "-p" | "--package") || o.starts_with("--package="));
    let pkg = |at: usize| {
        ops.get(at).map(|p| {
            let p = p.strip_prefix('@').map_or(*p, |_| *p);
            // `name@version`, `@scope/name@version`: the bin is the name's last part.
            let no_ver = match p.rfind('@') {
                Some(i) if i > 0 => &p[..i],
                _ => p,
            };
            no_ver.rsplit('/').next().unwrap_or(no_ver).to_string()
        })
    };
    let p = c.program.as_str();
    let (local, at) = match p {
        "npx" | "bunx" | "pnpx" => (!yes, 0),
        "npm" if matches!(first, "exec" | "x") => (!yes, 1),
        "pnpm" | "yarn" if first == "exec" => (true, 1),
        "bun" if first == "x" => (!yes, 1),
        "pnpm" | "yarn" | "npm" | "bun" if matches!(first, "dlx" | "create") => (false, 1),
        "npm" if first == "init" && ops.len() > 1 => (false, 1),
        "npm" if first == "exec" => (false, 1),
        "uvx" => (false, 0),
        "pipx" if first == "run" => (false, 1),
        "uv" if first == "tool" && ops.get(1) == Some(&"run") => (false, 2),
        "deno"
            if first == "run"
                && ops.get(1).is_some_and(|u| u.contains("://") || u.starts_with("npm:") || u.starts_with("jsr:")) =>
        {
            (false, 1)
        }
        "go" if first == "run" && ops.get(1).is_some_and(|p| p.contains('@')) => (false, 1),
        "cargo" if first == "install" => (false, 1),
        _ => return None,
    };
    let why = if local {
        format!("`{p}` runs a package's code that the analysis cannot read")
    } else {
        format!("`{p}` downloads a package and runs its code")
    };
    Some((why, if local { pkg(at) } else { None }))
}

// A program, library or configuration named in a world-writable directory, through an
// option or the environment: someone else's code (`-u /tmp/x.vim`, `-I /tmp/x.so`,
// `OPENSSL_CONF=/tmp/x`). Output options and temp-directory variables are not code.
const OUTPUTS: &[&str] = &[
    "-o",
    "--output",
    "--out",
    "--out-dir",
    "--output-dir",
    "--outdir",
    "--target-dir",
    "--log-file",
    "--logfile",
    "--cache-dir",
    "--tmpdir",
    "--tmp",
    "--temp",
    "--workdir",
    "-O",
    "--dest",
    "--destination",
    "--directory",
    "--root",
    "--prefix-out",
    "--junitxml",
    "--basetemp",
    "--cov-report",
    "--report",
    "--results",
];

/// Programs none of whose options names code: file tools, and programs that only read data (an
/// option's value is a file to read). Not `sort` (`--compress-program`), `rg` (`--pre`) or `less`
/// (its key files).
const NO_CODE_OPTIONS: &[&str] = &[
    "cp", "mv", "ln", "ls", "rm", "mkdir", "touch", "tar", "unzip", "zip", "rsync", "scp", "find", "chmod", "chown",
    "cd", "echo", "printf", "mktemp", "curl", "wget", "git", "test", "[", "install", "dd", "truncate", "du", "stat",
    "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "cut", "tr", "nl", "od", "xxd", "hexdump", "strings",
    "file", "cmp", "jq", "tee",
];

/// Why a command runs code the analysis cannot see through a program's own feature (launchers,
/// exec options, configuration that names programs) or the environment, if it does. Shells,
/// interpreters and script files are the caller's: they need the file system.
pub fn feature_exec(c: &Command, assigns: &[String]) -> Option<Opaque> {
    let p = c.program.as_str();
    if !NO_CODE_OPTIONS.contains(&p) {
        let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
        for (k, t) in texts.iter().enumerate() {
            let (opt, value) = match t.split_once('=') {
                Some((o, v)) if o.starts_with('-') => (o, v),
                _ if t.starts_with('-') => (*t, texts.get(k + 1).copied().unwrap_or("")),
                _ => continue,
            };
            let value = value.rsplit_once('=').map_or(value, |(_, v)| v);
            if world_writable(value) && !OUTPUTS.contains(&opt) {
                return Some(Opaque::ev(format!("`{p} {opt}` names `{value}`, in a world-writable directory")));
            }
        }
    }
    for a in assigns {
        if let Some((name, value)) = a.split_once('=')
            && world_writable(value)
            && !(name.ends_with("DIR")
                || name.ends_with("TMP")
                || name.ends_with("TEMP")
                || name.contains("OUT")
                || name.contains("LOG"))
        {
            return Some(Opaque::ev(format!("`{name}` names `{value}`, in a world-writable directory")));
        }
    }
    if matches!(p, "docker" | "podman" | "nerdctl") {
        let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
        let sub = texts.iter().find(|t| !t.starts_with('-')).copied().unwrap_or("");
        if matches!(sub, "build" | "buildx" | "compose") && !texts.iter().any(|t| t.starts_with("--privileged")) {
            return Some(Opaque::ws(format!("`{p} {sub}` runs the project's container build")));
        }
    }
    channel(c, assigns).map(Opaque::ev)
}

fn channel(c: &Command, assigns: &[String]) -> Option<String> {
    // Builtins that start nothing cannot be steered by the environment (`GIT_DIR=… echo …`).
    let starts_nothing =
        matches!(c.program.as_str(), "echo" | "printf" | "true" | "false" | ":" | "test" | "[" | "pwd");
    for a in assigns.iter().filter(|_| !starts_nothing) {
        if let Some(name) = code_env(a) {
            return Some(format!("`{name}` in the environment makes a program run code the analysis cannot see"));
        }
    }
    let p = c.program.as_str();
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let has = |o: &str| texts.iter().any(|t| *t == o || t.strip_prefix(o).is_some_and(|r| r.starts_with('=')));
    let has_prefix = |o: &str| texts.iter().any(|t| t.starts_with(o));
    let why = |s: &str| Some(format!("`{p}` {s}"));
    match p {
        "export" | "declare" | "typeset" | "readonly" | "local" | "env" | "setenv" => {
            for t in &texts {
                if let Some(name) = code_env(t) {
                    return Some(format!(
                        "`{name}` in the environment makes a later program run code the analysis cannot see"
                    ));
                }
            }
            None
        }
        "script" => (has("-c")
            || has("--command")
            || has_prefix("-qc")
            || texts.iter().any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('c')))
        .then(|| format!("`{p}` runs a command string")),
        "tmux" => texts
            .iter()
            .find(|t| {
                matches!(
                    **t,
                    "new"
                        | "new-session"
                        | "new-window"
                        | "neww"
                        | "split-window"
                        | "splitw"
                        | "send-keys"
                        | "send"
                        | "run-shell"
                        | "run"
                        | "respawn-pane"
                        | "respawn-window"
                        | "source-file"
                        | "source"
                        | "pipe-pane"
                        | "if-shell"
                        | "display-popup"
                        | "popup"
                        | "set-hook"
                        | "bind-key"
                        | "bind"
                        | "command-prompt"
                        | "confirm-before"
                        | "set-option"
                        | "set"
                        | "-c"
                        | "-f"
                )
            })
            .and_then(|_| why("starts a command in a session the analysis cannot follow")),
        "screen" => (!texts.iter().all(|t| matches!(*t, "-ls" | "-list" | "-v" | "--version")))
            .then(|| format!("`{p}` starts a command in a session the analysis cannot follow")),
        "at" | "batch" => (!texts.iter().any(|t| matches!(*t, "-l" | "-r" | "-d" | "-c" | "-V")))
            .then(|| format!("`{p}` runs commands later")),
        "crontab" => (!texts.iter().any(|t| matches!(*t, "-l" | "-r" | "-ri" | "-ir")))
            .then(|| format!("`{p}` installs commands that run later")),
        "systemd-run" | "run0" | "pkexec" | "machinectl" | "launchctl" | "nsenter" | "firejail" | "bwrap" | "proot" => {
            why("runs a command elsewhere")
        }
        "sftp" if texts.iter().any(|t| t.starts_with("-b")) => why("runs a batch of transfer commands"),
        "scp" | "sftp" | "rsync"
            if texts.iter().any(|t| {
                t.to_ascii_lowercase().contains("proxycommand") || t.to_ascii_lowercase().contains("localcommand")
            }) =>
        {
            why("runs a local command from its ssh options")
        }
        "ssh" => texts
            .iter()
            .enumerate()
            .find(|(i, t)| {
                let opt = if **t == "-o" {
                    texts.get(i + 1).copied().unwrap_or("")
                } else {
                    t.strip_prefix("-o").unwrap_or("")
                };
                let o = opt.to_ascii_lowercase();
                o.starts_with("proxycommand")
                    || o.starts_with("localcommand")
                    || o.starts_with("permitlocalcommand")
                    || o.starts_with("knownhostscommand")
                    || o.starts_with("match")
            })
            .and_then(|_| why("runs a local command from its options"))
            .or_else(|| has("-F").then(|| format!("`{p}` reads a configuration file that can run commands")))
            .or_else(|| {
                texts
                    .iter()
                    .find(|t| {
                        matches!(**t, "-R" | "-D" | "-w" | "-I")
                            || t.starts_with("-R")
                            || (t.starts_with('-') && !t.starts_with("--") && t.contains('R'))
                            || t.to_ascii_lowercase().contains("provider=")
                            || t.to_ascii_lowercase().contains("pkcs11")
                    })
                    .and_then(|t| why(&format!("opens a tunnel or loads a library from its options (`{t}`)")))
            }),
        "expect" | "unbuffer" => why("runs the commands of a script"),
        "docker" | "podman" | "nerdctl" => {
            let sub = texts.iter().find(|t| !t.starts_with('-')).copied().unwrap_or("");
            let runs = matches!(sub, "run" | "create" | "exec" | "start");
            let hosty = texts.iter().enumerate().any(|(i, t)| {
                matches!(
                    *t,
                    "--network=host" | "--net=host" | "--pid=host" | "--ipc=host" | "--userns=host" | "--uts=host"
                ) || t.starts_with("--device")
                    || t.starts_with("--restart")
                    || t.starts_with("--cap-add")
                    || t.starts_with("--security-opt")
                    || ((*t == "--network" || *t == "--net" || *t == "--pid") && texts.get(i + 1) == Some(&"host"))
            });
            if runs && hosty {
                return Some(format!(
                    "`{p} {sub}` runs a container with this machine's network, devices or privileges"
                ));
            }
            let host = texts.iter().enumerate().any(|(i, t)| {
                matches!(
                    *t,
                    "-v" | "--volume" | "--mount" | "--privileged" | "--pid=host" | "--net=host" | "--network=host"
                ) || t.starts_with("--volume=")
                    || t.starts_with("--mount=")
                    || t.starts_with("-v")
                    || (*t == "--pid" && texts.get(i + 1) == Some(&"host"))
            });
            (runs && (host || sub == "exec"))
                .then(|| format!("`{p} {sub}` runs a container with access to this machine"))
        }
        "xargs" => None,
        "parallel" | "sem" => (!texts.iter().any(|t| !t.starts_with('-')))
            .then(|| format!("`{p}` runs the commands that arrive on its stdin")),
        "gdb" | "lldb" | "cgdb" => texts
            .iter()
            .find(|t| {
                matches!(
                    **t,
                    "-ex"
                        | "-iex"
                        | "-x"
                        | "-ix"
                        | "--command"
                        | "--eval-command"
                        | "-batch"
                        | "-o"
                        | "-O"
                        | "-s"
                        | "--source"
                ) || t.starts_with("--eval-command=")
                    || t.starts_with("--command=")
            })
            .and_then(|t| why(&format!("runs debugger commands (`{t}`), which can run programs"))),
        "psql" | "mysql" | "mariadb" => texts
            .iter()
            .find(|t| {
                t.contains("\\!")
                    || t.to_ascii_lowercase().starts_with("system")
                    || t.contains("\\o |")
                    || t.contains("\\copy") && t.contains("program")
            })
            .or_else(|| texts.iter().find(|t| matches!(**t, "-f" | "--file" | "-i")))
            .and_then(|_| why("runs shell commands or a script from its arguments")),
        "gnuplot" | "octave" | "matlab" | "maxima" => why("runs a script that can run programs"),
        "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "zypper" | "rpm" => texts
            .iter()
            .find(|t| t.contains("Invoke") || t.contains("::="))
            .and_then(|t| why(&format!("runs commands from its options (`{t}`)")))
            .or_else(|| {
                texts
                    .iter()
                    .any(|t| t.ends_with(".deb") || t.ends_with(".rpm") || t.starts_with('/') || t.starts_with("./"))
                    .then(|| format!("`{p}` installs a package file with its maintainer scripts"))
            }),
        "go" => texts
            .iter()
            .find(|t| {
                t.starts_with("-toolexec") || **t == "-exec" || t.starts_with("-exec=") || t.starts_with("-overlay")
            })
            .and_then(|t| why(&format!("runs a program from its options (`{t}`)"))),
        "cargo" => texts
            .iter()
            .enumerate()
            .find(|(i, t)| {
                let v = if **t == "--config" {
                    texts.get(i + 1).copied().unwrap_or("")
                } else {
                    t.strip_prefix("--config=").unwrap_or("")
                };
                v.contains("wrapper")
                    || v.contains("runner")
                    || v.contains("linker")
                    || v.contains("rustc")
                    || v.contains("[alias]")
                    || v.contains("alias.")
            })
            .and_then(|_| why("runs a program named in `--config`")),
        "npm" | "pnpm" | "yarn" => texts
            .iter()
            .find(|t| t.starts_with("--script-shell") || t.starts_with("--node-options"))
            .and_then(|t| why(&format!("runs a program named in its options (`{t}`)"))),
        "rg" | "ripgrep" => texts
            .iter()
            .find(|t| **t == "--pre" || t.starts_with("--pre="))
            .and_then(|_| why("runs a preprocessor program on every file")),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(c),
        "sed" | "gsed" => sed(c),
        "tar" | "gtar" | "bsdtar" => texts
            .iter()
            .find(|t| {
                t.starts_with("--to-command")
                    || t.starts_with("--checkpoint-action")
                    || t.starts_with("--use-compress-program")
                    || t.starts_with("--rsh-command")
                    || t.starts_with("--info-script")
                    || t.starts_with("--new-volume-script")
                    || **t == "-I"
                    || **t == "-F"
                    || (t.starts_with('-')
                        && !t.starts_with("--")
                        && (t.contains('I') || t.contains('F'))
                        && t.len() <= 6)
            })
            .and_then(|t| why(&format!("runs a program from its options (`{t}`)"))),
        "rsync" => texts
            .iter()
            .enumerate()
            .find_map(|(i, t)| {
                let v = if *t == "-e" || *t == "--rsh" {
                    texts.get(i + 1).copied()
                } else {
                    t.strip_prefix("--rsh=").or_else(|| t.strip_prefix("-e").filter(|r| !r.is_empty()))
                };
                v.filter(|v| {
                    v.split_whitespace().next().is_none_or(|prog| prog.rsplit('/').next() != Some("ssh"))
                        || v.contains(['|', ';', '&', '$', '`'])
                })
            })
            .and_then(|v| why(&format!("runs `{v}` as its remote shell")))
            .or_else(|| has("--rsync-path").then(|| format!("`{p}` runs a program named in its options"))),
        "vim" | "vi" | "nvim" | "ex" | "view" | "vimdiff" | "gvim" | "emacs" | "nano" | "ed" => texts
            .iter()
            .find(|t| {
                matches!(**t, "-c" | "--cmd" | "-S" | "-s" | "--eval" | "-l" | "--load" | "-x" | "--script")
                    || t.starts_with('+')
                    || t.starts_with("--eval=")
            })
            .and_then(|t| why(&format!("runs editor commands (`{t}`), which can run programs"))),
        "less" | "more" | "most" | "man" => texts
            .iter()
            .find(|t| {
                t.starts_with("-P")
                    || t.starts_with("--pager")
                    || t.starts_with("+")
                    || t.starts_with("-H")
                    || t.starts_with("--html")
            })
            .and_then(|t| why(&format!("runs a program from its options (`{t}`)"))),
        "zip" => (has("-TT") || has("--unzip-command")).then(|| format!("`{p}` runs a program to test the archive")),
        "make" | "gmake" | "bmake" => texts
            .iter()
            .enumerate()
            .find(|(i, t)| {
                let file = if matches!(**t, "-f" | "--file" | "--makefile") {
                    texts.get(i + 1).copied()
                } else {
                    t.strip_prefix("--file=").or_else(|| t.strip_prefix("-f").filter(|r| !r.is_empty()))
                };
                file.is_some_and(|f| {
                    f == "-" || f.starts_with("/dev/") || f.starts_with("/proc/") || f.starts_with("/tmp/")
                }) || t.starts_with("--eval")
                    || **t == "-E"
                    || t.starts_with("SHELL=")
                    || t.starts_with(".SHELLFLAGS")
            })
            .and_then(|(_, t)| why(&format!("takes recipes from the command line or stdin (`{t}`)"))),
        "git" => git(c),
        "find" => texts
            .iter()
            .find(|t| matches!(**t, "-fprint" | "-fprint0" | "-fprintf" | "-fls"))
            .and_then(|t| why(&format!("writes a file (`{t}`)"))),
        "watch" | "entr" | "inotifywait" | "nodemon" => None,
        "socat" => texts
            .iter()
            .find(|t| {
                let u = t.to_ascii_uppercase();
                u.starts_with("EXEC:") || u.starts_with("SYSTEM:") || u.starts_with("SHELL:")
            })
            .and_then(|_| why("runs a program on a connection")),
        "strace" | "ltrace" | "valgrind" | "perf" => None,
        "tmate" | "ngrok" | "cloudflared" | "lt" | "localtunnel" | "bore" | "frpc" | "chisel" | "sshuttle" | "ttyd"
        | "gotty" | "code-server" | "rathole" | "pagekite" | "zrok" | "tailscale" | "ssh-tunnel" => {
            why("opens this machine to the network (a tunnel or a remote shell)")
        }
        "jupyter" | "jupyter-notebook" | "jupyter-lab" | "ipython"
            if texts.iter().any(|t| t.contains("--ip") || t.contains("execute") || t.contains("token=")) =>
        {
            why("serves or runs notebooks")
        }
        "mapfile" | "readarray" if texts.iter().any(|t| t.starts_with("-C")) => {
            why("runs a callback for the lines it reads")
        }
        "compgen" | "complete" if texts.iter().any(|t| t.starts_with("-C") || t.starts_with("-F")) => {
            why("runs a command or function to complete words")
        }
        "rclone" | "gsutil" | "croc" | "wormhole" | "s3cmd" | "azcopy" | "restic" | "rsync-upload" => None,
        "hash" if texts.iter().any(|t| t.starts_with("-p")) => why("binds a command name to another program"),
        "enable" if texts.iter().any(|t| t.starts_with("-f")) => why("loads a builtin from a shared library"),
        "history" if texts.iter().any(|t| matches!(*t, "-a" | "-w" | "-r" | "-n")) => {
            why("writes or reads a history file")
        }
        "rustup" if texts.windows(2).any(|w| w == ["toolchain", "link"]) => why("links a toolchain from elsewhere"),
        // Testing the configuration, printing the version or signalling the running master
        // serves nothing (`nginx -t`, `nginx -s reload`, `caddy validate`); the flags differ per
        // server (busybox `httpd -h DIR` serves DIR, `-v` is verbose there).
        "httpd" | "lighttpd" | "nginx" | "caddy" | "miniserve" | "darkhttpd"
            if !texts.iter().any(|t| {
                let only: &[&str] = match p {
                    "nginx" => &["-t", "-T", "-v", "-V", "-h", "-?", "-s"],
                    "httpd" => &["-t", "-V", "-M", "-S", "configtest"],
                    "lighttpd" => &["-t", "-tt", "-v", "-V"],
                    "caddy" => &[
                        "version",
                        "validate",
                        "fmt",
                        "adapt",
                        "stop",
                        "reload",
                        "list-modules",
                        "environ",
                        "--version",
                    ],
                    _ => &["--version", "-V"],
                };
                only.contains(t)
            }) =>
        {
            why("serves files over the network")
        }
        "xterm" | "urxvt" if texts.contains(&"-display") => why("opens a terminal on another display"),
        "gh" if texts
            .windows(2)
            .any(|w| w == ["extension", "install"] || w == ["alias", "set"] || w == ["ext", "install"]) =>
        {
            why("installs an extension or alias that runs code")
        }
        "code" | "codium" | "cursor" if texts.iter().any(|t| t.starts_with("--install-extension")) => {
            why("installs an editor extension")
        }
        "dpkg" if texts.iter().any(|t| matches!(*t, "-i" | "--install" | "--unpack")) => {
            why("installs a package file with its maintainer scripts")
        }
        "nix" | "nix-shell" | "nix-env"
            if texts.iter().any(|t| matches!(*t, "run" | "shell" | "develop" | "-p" | "--run" | "-i")) =>
        {
            why("builds and runs a package expression")
        }
        "curl"
            if texts.iter().enumerate().any(|(k, t)| {
                let opt = t.split('=').next().unwrap_or(t);
                matches!(
                    opt,
                    "-D" | "--dump-header"
                        | "--etag-save"
                        | "--output-dir"
                        | "-c"
                        | "--cookie-jar"
                        | "--trace"
                        | "--trace-ascii"
                        | "--stderr"
                        | "--libcurl"
                        | "--hsts"
                        | "--alt-svc"
                ) && {
                    let v = t.split_once('=').map_or(texts.get(k + 1).copied().unwrap_or(""), |(_, v)| v);
                    v.starts_with('/') || v.starts_with('~') || v.starts_with("..")
                }
            }) =>
        {
            why("writes a file outside the workspace from its options")
        }
        "busybox" | "toybox" => None,
        "trap" => None,
        "coproc" => why("runs a command as a coprocess"),
        "sqlite3" => texts
            .iter()
            .find(|t| {
                t.contains(".shell")
                    || t.contains(".system")
                    || t.contains(".load")
                    || t.contains(".output")
                    || t.contains(".once")
            })
            .and_then(|_| why("runs a program or writes a file from its dot-commands")),
        _ => None,
    }
}

/// awk programs that run commands (`system()`, `| "cmd"`, `"cmd" | getline`) or write files
/// (`print > "file"`); a program from a file (`-f`) is not read.
fn awk(c: &Command) -> Option<String> {
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let long =
        |t: &str, full: &str| t.starts_with("--") && t.len() > 3 && full.starts_with(t.split('=').next().unwrap_or(t));
    if texts.iter().any(|t| {
        long(t, "--file")
            || long(t, "--include")
            || long(t, "--load")
            || long(t, "--exec")
            || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(['f', 'i', 'l', 'E']))
    }) {
        return Some(format!("`{}` runs a program file or library the analysis does not read", c.program));
    }
    // Every program text: `-e`/`--source` ones, then the first operand.
    let sources: Vec<&str> = texts
        .iter()
        .enumerate()
        .filter_map(|(k, t)| {
            if *t == "-e" || *t == "--source" { texts.get(k + 1).copied() } else { t.strip_prefix("--source=") }
        })
        .collect();
    for src in &sources {
        if let Some(w) = awk_text(c, src) {
            return Some(w);
        }
    }
    if !sources.is_empty() {
        return None;
    }
    let mut i = 0;
    let mut prog = None;
    while i < texts.len() {
        let t = texts[i];
        if matches!(t, "-F" | "-v" | "--assign" | "--field-separator") {
            i += 2;
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            i += 1;
            continue;
        }
        prog = Some(t);
        break;
    }
    let prog = prog?;
    if c.args.get(i).is_some_and(|w| w.dynamic) {
        return Some(format!("`{}` runs a program built at run time", c.program));
    }
    awk_text(c, prog)
}

/// One awk program text.
fn awk_text(c: &Command, prog: &str) -> Option<String> {
    let squeezed: String = prog.split_whitespace().collect::<Vec<_>>().join(" ");
    if prog.contains('@')
        && prog.split('@').skip(1).any(|r| r.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'))
    {
        return Some(format!("`{}` calls a function whose name is built at run time", c.program));
    }
    if squeezed.contains("system") || squeezed.contains("getline") && squeezed.contains('|') {
        return Some(format!("`{}` runs commands from its program (`system`, `| getline`)", c.program));
    }
    // print/printf followed by `|` or `>` (a pipe to a command, or a file) before the statement ends.
    for (at, _) in prog.match_indices("print") {
        let stmt: String = prog[at..].chars().take_while(|c| !matches!(c, ';' | '}' | '\n')).collect();
        let mut in_str = false;
        let mut escaped = false;
        for ch in stmt.chars() {
            if escaped {
                escaped = false;
                continue;
            }
            match ch {
                '\\' if in_str => escaped = true,
                '"' => in_str = !in_str,
                '|' | '>' if !in_str => {
                    return Some(format!("`{}` sends output to a command or a file from its program", c.program));
                }
                _ => {}
            }
        }
    }
    if prog.contains("ENVIRON") && prog.contains("PROCINFO") {
        return Some(format!("`{}` reaches the process environment", c.program));
    }
    None
}

/// sed scripts that run commands (`e`, `s///e`) or write files (`w`, `W`, `s///w`).
fn sed(c: &Command) -> Option<String> {
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let mut scripts = Vec::new();
    let mut i = 0;
    let mut explicit = false;
    // GNU getopt takes any unambiguous prefix of a long option (`--expr`, `--fil`).
    let long = |t: &str, full: &str| t.len() > 3 && full.starts_with(t.split('=').next().unwrap_or(t));
    while i < texts.len() {
        let t = texts[i];
        if t == "-e" || (t.starts_with("--") && long(t, "--expression") && !t.contains('=')) {
            explicit = true;
            scripts.extend(texts.get(i + 1));
            i += 2;
            continue;
        }
        if t.starts_with("--") && long(t, "--expression") {
            explicit = true;
            scripts.extend(t.split_once('=').map(|(_, v)| v));
        } else if (t.starts_with("--") && long(t, "--file"))
            || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains('f'))
        {
            return Some(format!("`{}` runs a script file the analysis does not read", c.program));
        } else if t.starts_with('-') && !t.starts_with("--") && t.len() > 2 && t[1..].contains('e') {
            // `-ne 'script'`: the cluster ends in e, the script is the next word.
            explicit = true;
            scripts.extend(texts.get(i + 1));
            i += 2;
            continue;
        } else if !t.starts_with('-') && !explicit && scripts.is_empty() {
            scripts.push(t);
            explicit = true;
        }
        i += 1;
    }
    for s in scripts {
        if let Some(why) = sed_script(s) {
            return Some(format!("`{}` {why}", c.program));
        }
    }
    None
}

fn sed_script(script: &str) -> Option<&'static str> {
    let b = script.as_bytes();
    let mut i = 0;
    // Each command: [address[,address]][!]cmd…
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b';' || b[i] == b'{' || b[i] == b'}') {
            i += 1;
        }
        // Addresses: numbers, $, /re/, \cREc, ranges, steps.
        loop {
            if i >= b.len() {
                break;
            }
            match b[i] {
                b'0'..=b'9' | b'$' | b',' | b'~' | b'+' | b'!' | b' ' => i += 1,
                b'/' => {
                    i += 1;
                    while i < b.len() && b[i] != b'/' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                    while i < b.len() && (b[i] == b'I' || b[i] == b'M') {
                        i += 1;
                    }
                }
                b'\\' if i + 1 < b.len() => {
                    let d = b[i + 1];
                    i += 2;
                    while i < b.len() && b[i] != d {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                _ => break,
            }
        }
        if i >= b.len() {
            break;
        }
        let cmd = b[i];
        i += 1;
        match cmd {
            b'e' => return Some("runs a command from its script (`e`)"),
            b'w' | b'W' => return Some("writes a file from its script (`w`)"),
            b's' | b'y' if i < b.len() => {
                let d = b[i];
                i += 1;
                for _ in 0..2 {
                    while i < b.len() && b[i] != d {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                if cmd == b's' {
                    while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                        match b[i] {
                            b'e' => return Some("runs the result of a substitution as a command (`s///e`)"),
                            b'w' => return Some("writes a file from a substitution (`s///w`)"),
                            _ => i += 1,
                        }
                    }
                }
            }
            b'a' | b'i' | b'c' | b'r' | b'R' | b'b' | b't' | b'T' | b':' | b'l' | b'q' | b'Q' | b'L' => {
                // Text to the end of the line; a label or a branch target ends at `;` too (GNU).
                while i < b.len()
                    && b[i] != b'\n'
                    && !(matches!(cmd, b'b' | b't' | b'T' | b'q' | b'Q' | b'l' | b'L' | b':') && b[i] == b';')
                {
                    i += 1;
                }
            }
            _ => {}
        }
    }
    None
}

/// git: configuration given on the command line or written that names programs, and
/// subcommands that run commands.
fn git(c: &Command) -> Option<String> {
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let mut i = 0;
    while i < texts.len() {
        let t = texts[i];
        if t == "-c" {
            if let Some(kv) = texts.get(i + 1) {
                let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
                if git_exec_key(key) && !harmless_value(key, value) {
                    return Some(format!("`git -c {key}=…` makes git run a program the analysis cannot see"));
                }
            }
            i += 2;
            continue;
        }
        if t.starts_with("--config-env")
            || t == "--exec-path"
            || t.starts_with("--exec-path=")
            || t == "--upload-pack"
            || t.starts_with("--upload-pack=")
            || t.starts_with("--receive-pack")
        {
            return Some(format!("`git {t}` makes git run a program the analysis cannot see"));
        }
        if matches!(t, "--git-dir" | "--work-tree") {
            return Some(format!("`git {t}` uses another repository's configuration"));
        }
        if matches!(t, "-C" | "--namespace") {
            i += 2;
            continue;
        }
        if t.starts_with('-') {
            i += 1;
            continue;
        }
        break;
    }
    for t in &texts {
        if t.starts_with("ext::") || t.starts_with("fd::") || t.contains("::ext::") {
            return Some("git's `ext::` transport runs a command".into());
        }
        let opt = t.split('=').next().unwrap_or(t);
        let prefix_of = |full: &str| opt.len() >= 5 && full.starts_with(opt);
        if prefix_of("--upload-pack")
            || prefix_of("--receive-pack")
            || prefix_of("--open-files-in-pager")
            || prefix_of("--exec")
            || prefix_of("--extcmd")
            || (opt.starts_with("--ex") && opt.len() >= 4 && ("--exec".starts_with(opt) || "--extcmd".starts_with(opt)))
            || t.starts_with("-O") && t.len() > 2
        {
            return Some(format!("`git … {t}` makes git run a program"));
        }
        if (t.starts_with("--git-dir") || t.starts_with("--work-tree")) && t.contains('/') {
            return Some(format!("`git {t}` uses another repository's configuration"));
        }
    }
    let sub = texts.get(i).copied()?;
    let rest = texts.get(i + 1..).unwrap_or_default();
    if matches!(sub, "clone" | "fetch" | "ls-remote" | "pull" | "archive")
        && rest.iter().any(|t| *t == "-u" || *t == "--upload-pack" || *t == "--exec")
    {
        return Some(format!("`git {sub} -u` makes git run a program"));
    }
    if sub == "grep" && rest.iter().any(|t| *t == "-O" || *t == "--open-files-in-pager") {
        return Some("`git grep -O` runs a pager program".into());
    }
    let rest_has = |o: &str| rest.iter().any(|t| *t == o || t.starts_with(&format!("{o}=")));
    match sub {
        "rebase" if rest_has("-x") || rest_has("--exec") || rest.iter().any(|t| t.starts_with("-x")) => {
            Some("`git rebase --exec` runs a command for every commit".into())
        }
        "bisect" if rest.first() == Some(&"run") => Some("`git bisect run` runs a command".into()),
        "submodule" if rest.contains(&"foreach") => Some("`git submodule foreach` runs a command".into()),
        "filter-branch" | "filter-repo" => Some(format!("`git {sub}` runs filter commands")),
        "difftool" | "mergetool" if rest_has("-x") || rest_has("--extcmd") || rest_has("--tool") || rest_has("-t") => {
            Some(format!("`git {sub}` runs a tool named on the command line"))
        }
        "remote"
            if rest.contains(&"--push")
                || rest.first().is_some_and(|t| matches!(*t, "add" | "set-url"))
                    && rest
                        .iter()
                        .any(|t| t.contains("://") && !t.contains("github.com") && !t.contains("gitlab.com")) =>
        {
            Some("`git remote` points a push at another address".into())
        }
        "config"
            if rest.iter().any(|t| matches!(*t, "--global" | "--system" | "--file") || t.starts_with("--file="))
                && !rest.iter().any(|t| t.starts_with("--get") || matches!(*t, "-l" | "--list"))
                && rest.iter().filter(|t| !t.starts_with('-')).count() >= 2 =>
        {
            Some("`git config --global` changes configuration outside the workspace".into())
        }
        "daemon" => Some("`git daemon` serves repositories over the network".into()),
        "config" => {
            let ops: Vec<&str> = rest.iter().copied().filter(|t| !t.starts_with('-')).collect();
            let reads = rest.iter().any(|t| {
                matches!(
                    *t,
                    "--get"
                        | "--get-all"
                        | "--get-regexp"
                        | "-l"
                        | "--list"
                        | "--show-origin"
                        | "--unset"
                        | "--unset-all"
                        | "--remove-section"
                )
            }) || matches!(ops.first(), Some(&"get") | Some(&"list"));
            let key = if matches!(ops.first(), Some(&"set")) { ops.get(1) } else { ops.first() };
            if !reads && ops.len() >= 2 && key.is_some_and(|k| git_exec_key(k)) {
                return Some(format!("`git config {}` sets a program git will run", key.copied().unwrap_or("")));
            }
            if !reads && ops.len() >= 2 && key.is_some_and(|k| git_push_key(k)) {
                return Some(format!(
                    "`git config {}` changes what a later `git push` sends or where (a forced refspec, another destination)",
                    key.copied().unwrap_or("")
                ));
            }
            if rest.iter().any(|t| *t == "--file" || *t == "-f" || t.starts_with("--file=")) && !reads {
                return Some("`git config --file` writes configuration the analysis does not check".into());
            }
            None
        }
        "commit" | "tag" | "merge" if rest.iter().any(|t| *t == "-e" || *t == "--edit") => None,
        _ => None,
    }
}

/// A backslash escape other than `\n`, `\t` and `\\` (octal, hex, unicode…): the text printed is
/// not the text written, so it is not read as literal.
fn other_escape(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            if !matches!(b[i + 1], b'n' | b't' | b'\\') {
                return true;
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    false
}

/// Whether a pipe source is literal text: `echo`/`printf` of words that hold no expansion.
/// Returns the text it prints: `printf`'s `%s`, `%b` and `%%` (the format reused while arguments
/// remain, as the shell does) and the escapes every shell agrees on (`\n \t \r \\ \xHH` …;
/// `echo` only with `-e`). Anything else — another conversion, an octal or `\c` escape, an
/// expansion — is not literal (`None`).
pub fn literal_text(h: &Head) -> Option<String> {
    if h.args.iter().any(|a| a.contains('$') || a.contains('`')) {
        return None;
    }
    match h.program.as_str() {
        "echo" => {
            let escapes = h.args.iter().any(|a| a == "-e");
            let args: Vec<&str> =
                h.args.iter().map(String::as_str).filter(|a| !matches!(*a, "-n" | "-e" | "-E")).collect();
            if escapes {
                args.iter().map(|a| unescape(a)).collect::<Option<Vec<_>>>().map(|v| v.join(" "))
            } else {
                (!args.iter().any(|a| other_escape(a))).then(|| args.join(" ").replace("\\n", "\n"))
            }
        }
        "printf" => {
            let (fmt, args) = h.args.split_first()?;
            let fmt = if fmt == "--" { args.first()? } else { fmt };
            let args = if h.args[0] == "--" { &args[1..] } else { args };
            printf(fmt, args)
        }
        _ => None,
    }
}

/// The escapes every shell's `printf` format, `%b` and `echo -e` agree on; `None` for others.
fn unescape(t: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = t.chars().peekable();
    while let Some(ch) = chars.next() {
        out.push(if ch == '\\' { escape(&mut chars)? } else { ch });
    }
    Some(out)
}

/// The character an escape stands for, reading what follows a backslash.
fn escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    Some(match chars.next()? {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '\\' => '\\',
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'v' => '\u{b}',
        '"' => '"',
        '\'' => '\'',
        'x' => {
            let mut v = 0u32;
            let mut n = 0;
            while n < 2
                && let Some(d) = chars.peek().and_then(|c| c.to_digit(16))
            {
                v = v * 16 + d;
                chars.next();
                n += 1;
            }
            if n == 0 {
                return None;
            }
            char::from_u32(v)?
        }
        _ => return None,
    })
}

/// What `printf FORMAT ARGS…` prints, for `%s`, `%b` and `%%`; `None` for anything else. Escapes
/// and directives are read in one pass, as the shell does (`\x25s` prints `%s`).
fn printf(fmt: &str, args: &[String]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0;
    loop {
        let mut used = false;
        let mut chars = fmt.chars().peekable();
        while let Some(ch) = chars.next() {
            match ch {
                '\\' => out.push(escape(&mut chars)?),
                '%' => match chars.next() {
                    Some('%') => out.push('%'),
                    Some(conv @ ('s' | 'b')) => {
                        used = true;
                        let a = args.get(next).map_or("", String::as_str);
                        next += 1;
                        if conv == 'b' {
                            out.push_str(&unescape(a)?);
                        } else {
                            out.push_str(a);
                        }
                    }
                    _ => return None,
                },
                _ => out.push(ch),
            }
            if out.len() > 1 << 16 {
                return None;
            }
        }
        if !used || next >= args.len() {
            break;
        }
    }
    Some(out)
}

/// Text a command puts into files whose text the analysis can tell: `(file, text)` for `sed -i`
/// (the text its `a`/`i`/`c` commands insert and its `s` replacements) and `tee FILE…` fed
/// literal text. The text is for judging what a file that runs later would do; it is not the
/// whole new content.
pub fn inserted_text(c: &Command) -> Vec<(String, String)> {
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    match c.program.as_str() {
        "tee" => match &c.stdin_text {
            Some(t) => texts.iter().filter(|a| !a.starts_with('-')).map(|f| (f.to_string(), t.clone())).collect(),
            None => Vec::new(),
        },
        "sed" | "gsed" => {
            let in_place = texts.iter().any(|t| {
                t.starts_with("--in-place") || (t.starts_with('-') && !t.starts_with("--") && t[1..].starts_with('i'))
            }) || texts
                .iter()
                .any(|t| t.starts_with('-') && !t.starts_with("--") && t[1..].contains('i'));
            if !in_place {
                return Vec::new();
            }
            let (_, files) = sed_operands(&texts);
            match sed_output_text(c) {
                Some(text) => files.into_iter().map(|f| (f.to_string(), text.clone())).collect(),
                None => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// The text a sed script (not in place) inserts into what it prints: its `a`/`i`/`c` text and
/// `s` replacements, `None` when it inserts nothing.
pub fn sed_output_text(c: &Command) -> Option<String> {
    if !matches!(c.program.as_str(), "sed" | "gsed") {
        return None;
    }
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let (scripts, _) = sed_operands(&texts);
    let inserted: Vec<String> = scripts.iter().map(|s| sed_inserted(s)).filter(|t| !t.is_empty()).collect();
    (!inserted.is_empty()).then(|| inserted.join("\n"))
}

/// Files a sed script reads into its output (`r FILE`, `R FILE`).
pub fn sed_reads(c: &Command) -> Vec<String> {
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let (scripts, _) = sed_operands(&texts);
    let mut out = Vec::new();
    for script in scripts {
        for cmd in script.split(['\n', ';']) {
            let t = cmd
                .trim_start_matches(|ch: char| ch.is_ascii_digit() || matches!(ch, '$' | ',' | '~' | '+' | '!' | ' '));
            let t = match t.strip_prefix('/') {
                Some(r) => r.split_once('/').map_or("", |(_, rest)| rest).trim_start(),
                None => t,
            };
            if let Some(f) = t.strip_prefix(['r', 'R']).map(str::trim).filter(|f| !f.is_empty()) {
                out.push(f.to_string());
            }
        }
    }
    out
}

/// A sed command line's scripts and its file operands.
fn sed_operands<'a>(texts: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    let (mut scripts, mut files) = (Vec::new(), Vec::new());
    let mut explicit = false;
    let mut i = 0;
    while i < texts.len() {
        let t = texts[i];
        if t == "--" {
            files.extend(texts[i + 1..].iter().copied());
            break;
        }
        if t == "-e" || t == "--expression" {
            explicit = true;
            scripts.extend(texts.get(i + 1).copied());
            i += 2;
            continue;
        }
        if let Some(v) = t.strip_prefix("--expression=") {
            explicit = true;
            scripts.push(v);
        } else if t.starts_with('-')
            && !t.starts_with("--")
            && t.len() > 2
            && t.ends_with('e')
            && !t[1..].starts_with('i')
        {
            explicit = true;
            scripts.extend(texts.get(i + 1).copied());
            i += 2;
            continue;
        } else if t.starts_with('-') {
        } else if !explicit && scripts.is_empty() {
            scripts.push(t);
            explicit = true;
        } else {
            files.push(t);
        }
        i += 1;
    }
    (scripts, files)
}

/// The text a sed script inserts: what follows `a`, `i` and `c`, and the replacement of `s`.
fn sed_inserted(script: &str) -> String {
    let mut out = Vec::new();
    let lines: Vec<&str> = script.lines().collect();
    let mut continued = false;
    for line in lines {
        // The text of `a\`, `i\` or `c\` on the lines after it (GNU and POSIX form).
        if continued {
            continued = line.ends_with('\\');
            out.push(line.trim_end_matches('\\').trim().to_string());
            continue;
        }
        let b = line.as_bytes();
        let mut i = 0;
        // Skip an address (numbers, $, /re/, ranges) and `!`.
        while i < b.len() && matches!(b[i], b'0'..=b'9' | b'$' | b',' | b'~' | b'+' | b'!' | b' ') {
            i += 1;
        }
        if i < b.len() && b[i] == b'/' {
            i += 1;
            while i < b.len() && b[i] != b'/' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        }
        let Some(rest) = line.get(i.min(line.len())..) else { continue };
        let rest = rest.trim_start();
        let mut cs = rest.chars();
        match cs.next() {
            Some('a' | 'i' | 'c') => {
                let text = cs.as_str().trim();
                if text == "\\" {
                    continued = true;
                } else {
                    out.push(text.trim_start_matches('\\').trim().to_string());
                }
            }
            Some('s') => {
                if let Some(d) = cs.next() {
                    // Pattern, replacement, flags: split at unescaped delimiters.
                    let mut parts = vec![String::new()];
                    let mut it = cs;
                    while let Some(ch) = it.next() {
                        match ch {
                            '\\' => match it.next() {
                                Some(n) if n == d => parts.last_mut().into_iter().for_each(|p| p.push(n)),
                                Some(n) => parts.last_mut().into_iter().for_each(|p| {
                                    p.push('\\');
                                    p.push(n);
                                }),
                                None => {}
                            },
                            c if c == d => parts.push(String::new()),
                            c => parts.last_mut().into_iter().for_each(|p| p.push(c)),
                        }
                    }
                    if let Some(r) = parts.get(1) {
                        out.push(r.clone());
                    }
                }
            }
            _ => {}
        }
    }
    out.retain(|t| !t.is_empty());
    out.join("\n")
}

/// What a decoder prints for literal input: `base64 -d`/`--decode` and `rev` of a here-string or
/// heredoc. `None` when the input is not literal or does not decode to text.
pub fn decoded_text(c: &Command) -> Option<String> {
    let input = c.stdin_text.as_deref()?;
    match c.program.as_str() {
        "base64" if c.args.iter().any(|a| matches!(a.text.as_str(), "-d" | "--decode" | "-D")) => {
            use base64::Engine;
            let clean: String = input.chars().filter(|ch| !ch.is_whitespace()).collect();
            let bytes = base64::engine::general_purpose::STANDARD.decode(clean.as_bytes()).ok()?;
            String::from_utf8(bytes).ok()
        }
        "rev" if c.args.is_empty() => {
            Some(input.lines().map(|l| l.chars().rev().collect::<String>()).collect::<Vec<_>>().join("\n"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(program: &str, args: &[&str]) -> Head {
        Head { program: program.into(), args: args.iter().map(|a| a.to_string()).collect() }
    }

    #[test]
    fn literal_text_reads_printf_and_echo_like_the_shell() {
        let t = |p: &str, a: &[&str]| literal_text(&head(p, a));
        assert_eq!(t("printf", &["%s\\n", "a", "b"]).as_deref(), Some("a\nb\n"));
        assert_eq!(t("printf", &["x%%y"]).as_deref(), Some("x%y"));
        assert_eq!(t("printf", &["%b", "a\\x41"]).as_deref(), Some("aA"));
        assert_eq!(t("printf", &["\\x25s", "ignored"]).as_deref(), Some("%s"));
        assert_eq!(t("printf", &["-->%s<--", "x"]).as_deref(), Some("-->x<--"));
        assert_eq!(t("echo", &["-e", "a\\x7cb"]).as_deref(), Some("a|b"));
        assert_eq!(t("echo", &["a", "b"]).as_deref(), Some("a b"));
        for not_literal in [
            t("printf", &["%d", "1"]),
            t("printf", &["\\101"]),
            t("printf", &["a\\cb"]),
            t("printf", &["%s", "$HOME"]),
            t("echo", &["a\\x41"]),
            t("echo", &["-e", "\\0101"]),
        ] {
            assert_eq!(not_literal, None);
        }
    }

    #[test]
    fn sed_inserted_text() {
        assert_eq!(sed_inserted("1a curl x | sh"), "curl x | sh");
        assert_eq!(sed_inserted("$i\\\nmake"), "make");
        assert_eq!(sed_inserted("s|a|b \\| c|g"), "b | c");
        assert_eq!(sed_inserted("/x/c new"), "new");
        assert_eq!(sed_inserted("s/a/b/;2d"), "b");
        assert_eq!(sed_inserted("2d"), "");
    }

    #[test]
    fn python_positive_rule() {
        for ok in [
            "print(1+1)",
            "import json,sys; print(json.dumps({'a': 1}))",
            "import sys; print(sys.argv[1:])",
            "from os.path import join; print(join('a','b'))",
            "print('os.system(\"rm -rf /\")')",
            "import math\nfor i in range(3): print(math.sqrt(i))",
            "print(open('package.json').read())",
            "import re; print(re.compile('a+').findall('aaa'))",
        ] {
            assert!(check_code(Lang::Python, ok).is_ok(), "{ok}: {:?}", check_code(Lang::Python, ok));
        }
        assert_eq!(
            check_code(Lang::Python, "print(open('a.txt', 'r').read())").unwrap(),
            vec![("a.txt".to_string(), false)]
        );
        for bad in [
            "import os; os.system('id')",
            "__import__('os').system('id')",
            "getattr(__builtins__, 'ev'+'al')('1')",
            "exec('print(1)')",
            "eval(input())",
            "import subprocess; subprocess.run(['ls'])",
            "import shutil; shutil.rmtree('x')",
            "open('x', 'w').write('y')",
            "open(p).read()",
            "from pathlib import Path; Path('x').write_text('y')",
            "import urllib.request as u; u.urlopen('http://x')",
            "import socket",
            "import sys; sys.modules['os'].system('id')",
            "[c for c in ().__class__.__base__.__subclasses__()]",
            "print(f\"{__import__('os').getcwd()}\")",
            "import os.path; os.system('x')",
            "from os import system; system('x')",
            "import importlib; importlib.import_module('os')",
        ] {
            assert!(check_code(Lang::Python, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn js_perl_ruby_php_positive_rule() {
        for ok in [
            "console.log(2*21)",
            "const p=require('path'); console.log(p.join('a','b'))",
            "console.log(process.argv.slice(2))",
            "console.log(JSON.stringify({a:[1,2]}))",
            "const a=[1,2]; console.log(a[0])",
        ] {
            assert!(check_code(Lang::Js, ok).is_ok(), "{ok}: {:?}", check_code(Lang::Js, ok));
        }
        for bad in [
            "require('child_process').execSync('id')",
            "require('fs').writeFileSync('x','y')",
            "const m='child_'+'process'; require(m)",
            "process.binding('spawn_sync')",
            "eval('1')",
            "new Function('return 1')()",
            "[]['constructor']['constructor']('return process')()",
            "fetch('http://x')",
            "console.log(`${require('child_process').execSync('id')}`)",
            "setTimeout('alert(1)', 1)",
            "globalThis.process.mainModule.require('fs')",
            "import('fs').then(f => f.rmSync('x'))",
        ] {
            assert!(check_code(Lang::Js, bad).is_err(), "{bad}");
        }
        for ok in [
            "print \"hi\\n\"",
            "print join(',', map { $_ * 2 } (1,2,3))",
            "use strict; my $x = 1; print $x",
            "s/foo/bar/g; print",
        ] {
            assert!(check_code(Lang::Perl, ok).is_ok(), "{ok}: {:?}", check_code(Lang::Perl, ok));
        }
        for bad in [
            "system('id')",
            "print `id`",
            "exec 'sh'",
            "unlink 'x'",
            "open(F, '>x')",
            "s/x/system('id')/e",
            "use POSIX; POSIX::system('x')",
            "print \"@{[ system 'id' ]}\"",
            "s{a}{b}ee",
        ] {
            assert!(check_code(Lang::Perl, bad).is_err(), "{bad}");
        }
        for ok in ["puts 1+1", "require 'json'; puts JSON.generate({a: 1})", "puts [1,2].map { |x| x * 2 }.inspect"] {
            assert!(check_code(Lang::Ruby, ok).is_ok(), "{ok}: {:?}", check_code(Lang::Ruby, ok));
        }
        for bad in [
            "system('id')",
            "puts `id`",
            "File.write('x','y')",
            "require 'open3'",
            "puts \"#{system('id')}\"",
            "Kernel.send(:system, 'id')",
            "%x(id)",
            "IO.popen('id')",
        ] {
            assert!(check_code(Lang::Ruby, bad).is_err(), "{bad}");
        }
        for ok in ["echo 1+1;", "echo json_encode(['a' => 1]);", "$x = [1,2]; echo count($x);"] {
            assert!(check_code(Lang::Php, ok).is_ok(), "{ok}: {:?}", check_code(Lang::Php, ok));
        }
        for bad in [
            "system('id');",
            "echo shell_exec('id');",
            "$f='sys'.'tem'; $f('id');",
            "file_put_contents('x','y');",
            "echo `id`;",
            "eval('echo 1;');",
        ] {
            assert!(check_code(Lang::Php, bad).is_err(), "{bad}");
        }
        assert!(check_code(Lang::Other, "print(1)").is_err());
    }

    #[test]
    fn sed_scripts() {
        for (s, bad) in [
            ("s/a/b/g", false),
            ("1,5p", false),
            ("/foo/d", false),
            ("s/a/b/e", true),
            ("s|x|y|w out.txt", true),
            ("1e id", true),
            ("$!N;s/\\n/ /", false),
            ("w /tmp/x", true),
            ("/x/ { s/a/b/; e id\n}", true),
            ("y/abc/xyz/", false),
            ("s/e/w/", false),
            ("a\\\nappended e w", false),
        ] {
            assert_eq!(sed_script(s).is_some(), bad, "{s}");
        }
    }

    #[test]
    fn shebangs() {
        assert_eq!(Lang::of_shebang("#!/usr/bin/env python3\nprint(1)"), Some(Lang::Python));
        assert_eq!(Lang::of_shebang("#!/bin/bash -e\n"), Some(Lang::Shell));
        assert_eq!(Lang::of_shebang("#!/usr/bin/env -S node --flag\n"), Some(Lang::Js));
        assert_eq!(Lang::of_shebang("no shebang"), None);
        assert_eq!(Lang::of_shebang("#!/usr/bin/lua\n"), Some(Lang::Other));
    }

    #[test]
    fn git_keys() {
        for k in [
            "core.fsmonitor",
            "core.pager",
            "alias.x",
            "core.sshCommand",
            "filter.lfs.smudge",
            "diff.py.textconv",
            "credential.helper",
            "pager.log",
            "includeIf.gitdir:/x.path",
        ] {
            assert!(git_exec_key(k), "{k}");
        }
        for k in ["user.name", "color.ui", "core.autocrlf", "remote.origin.url", "commit.gpgsign"] {
            assert!(!git_exec_key(k), "{k}");
        }
    }
}
