//! Program classes the whole shell analysis shares (the unwrapping of wrappers, the effects
//! tables, the opaque-code checks).

/// Interpreters that take inline code.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "perl",
    "perl5",
    "ruby",
    "irb",
    "node",
    "nodejs",
    "php",
    "bun",
    "deno",
    "lua",
    "luajit",
    "Rscript",
    "pwsh",
    "powershell",
    "nu",
    "xonsh",
    "elvish",
    "julia",
    "tclsh",
    "wish",
    "guile",
    "racket",
    "sbcl",
    "groovy",
    "scala",
    "jshell",
    "ts-node",
    "tsx",
    "osascript",
    "raku",
    "perl6",
    "ghci",
    "runghc",
    "elixir",
    "escript",
    "erl",
    "dc",
    "R",
    "ghc",
];

/// Whether a program is a language interpreter.
pub fn is_interpreter(p: &str) -> bool {
    INTERPRETERS.contains(&p) || p.starts_with("python3.") || p.starts_with("python2.")
}

/// Programs that never need the network (for the sandbox's network default).
pub(crate) const OFFLINE_PROGRAMS: &[&str] = &[
    "",
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "sed",
    "awk",
    "gawk",
    "cut",
    "sort",
    "uniq",
    "wc",
    "echo",
    "printf",
    "true",
    "false",
    "test",
    "[",
    "[[",
    "mkdir",
    "rm",
    "rmdir",
    "cp",
    "mv",
    "ln",
    "touch",
    "chmod",
    "find",
    "xargs",
    "tr",
    "tee",
    "diff",
    "cmp",
    "comm",
    "file",
    "stat",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "pwd",
    "cd",
    "pushd",
    "popd",
    "date",
    "sleep",
    "jq",
    "yq",
    "less",
    "more",
    "column",
    "paste",
    "join",
    "fold",
    "fmt",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "base64",
    "sha256sum",
    "sha1sum",
    "md5sum",
    "cksum",
    "tar",
    "gzip",
    "gunzip",
    "zcat",
    "bzip2",
    "xz",
    "unxz",
    "zip",
    "unzip",
    "du",
    "df",
    "tree",
    "env",
    "printenv",
    "export",
    "set",
    "unset",
    "source",
    ".",
    "type",
    "which",
    "command",
    "hash",
    "history",
    "alias",
    "seq",
    "expr",
    "bc",
    "rev",
    "tac",
    "split",
    "csplit",
    "shuf",
    "truncate",
    "install",
    "patch",
    "iconv",
    "locale",
    "uname",
    "id",
    "whoami",
    "hostname",
    "nproc",
    "free",
    "uptime",
    "ps",
    "kill",
    "time",
    "timeout",
    "nice",
    "wait",
    "read",
    "exit",
    "return",
    "shift",
    "local",
    "declare",
    "typeset",
    "readonly",
    "let",
    "eval",
    "exec",
    "trap",
    "shopt",
    "ulimit",
    "umask",
    "getopts",
    "mktemp",
    "sync",
    "tput",
    "clear",
    "stty",
    "cargo-fmt",
    "rustfmt",
    "gofmt",
    "black",
    "isort",
    "ruff",
    "prettier",
    "eslint",
    "shellcheck",
    "clang-format",
];

/// Programs whose job is the network.
pub(crate) const NETWORK_TOOLS: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "telnet", "ftp", "mail", "mailx",
    "sendmail", "http", "https", "aria2c",
];

/// Programs that fetch from the network.
pub const FETCHERS: &[&str] =
    &["curl", "wget", "fetch", "http", "https", "aria2c", "lwp-request", "GET", "nc", "ncat", "netcat", "socat"];

/// Shells: `-c` takes a script string; with no script operand they read stdin.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "posh", "oksh", "loksh", "osh",
    "rbash", "pdksh", "ksh93",
];

/// Programs the analysis has rules for or knows as ordinary tools: where an argv runner's
/// command starts.
pub(crate) fn known_program(p: &str) -> bool {
    // Words that are common option values too are not taken as a program.
    !matches!(p, "" | "." | "[" | "[[" | "test" | "true" | "false" | "time" | "date" | "file" | "type" | "set" | "read")
        && OFFLINE_PROGRAMS.contains(&p)
        || (!p.is_empty() && NETWORK_TOOLS.contains(&p))
        || FETCHERS.contains(&p)
        || SHELLS.contains(&p)
        || is_interpreter(p)
        || matches!(
            p,
            "git"
                | "dd"
                | "mkfs"
                | "shred"
                | "chown"
                | "rsync"
                | "docker"
                | "podman"
                | "kubectl"
                | "terraform"
                | "make"
                | "cargo"
                | "npm"
                | "node"
                | "go"
                | "sudo"
                | "env"
                | "nohup"
                | "setsid"
                | "xargs"
                | "psql"
                | "mysql"
                | "redis-cli"
                | "mongosh"
                | "aws"
                | "gcloud"
                | "az"
                | "helm"
                | "pkill"
                | "killall"
                | "systemctl"
                | "reboot"
                | "shutdown"
                | "iptables"
                | "crontab"
                | "at"
                | "wipefs"
                | "fdisk"
                | "parted"
                | "mount"
                | "umount"
                | "ln"
                | "unlink"
                | "sed"
                | "perl"
                | "python3"
                | "python"
        )
        // Programs a built-in pack knows (`npx prisma migrate reset`, `op run -- restic forget`);
        // not the SQL words of `sql-in-shell` (`poetry update` runs no program called update).
        || crate::packs::builtin::BUILTIN_PACKS.iter().any(|b| b.id != "sql-in-shell" && b.programs.contains(&p))
}
