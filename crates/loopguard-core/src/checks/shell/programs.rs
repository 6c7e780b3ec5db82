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
