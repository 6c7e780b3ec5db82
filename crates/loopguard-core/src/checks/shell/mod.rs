//! Shell command analysis: split a command line into the commands that really run (through
//! compound commands, substitutions, wrappers and nested shells), work out what each one does
//! ([`effects`]), and turn that into findings: destructive operations, targets outside the
//! workspace, credential reads, exfiltration and downloaded code, and the autonomy level needed.

mod args;
pub mod effects;
mod effects_git;
mod effects_net;
mod effects_ops;
mod effects_types;
mod fetch;
pub(crate) mod lex;
pub mod opaque;
mod programs;
pub(crate) mod unwrap;

pub use effects::{DestructiveOperation, Effects, Target};
pub use effects_git::is_protected;
pub use lex::{MAX_COMMAND_BYTES, MAX_DEPTH, Redirect, RedirectKind, Segment, ShellError, Word, split_with_home};
pub(crate) use programs::{NETWORK_TOOLS, OFFLINE_PROGRAMS};
pub use unwrap::{Command, Head, commands};

use crate::checks::paths::{Access, PathValidator, resolve, resolve_under};
use crate::policy::model::CommandRule;
use crate::reasons::*;
use crate::{AutonomyLevel, Context, Finding, RiskLevel, Verdict};
use std::cell::OnceCell;
use std::path::{Path, PathBuf};

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
    /// Every file the command line is predicted to create, change or delete (resolved; targets
    /// known only at run time are not in it — they are findings instead).
    pub predicted_writes: Vec<PathBuf>,
    /// Some command in it reaches the network (a network tool, a fetcher, a remote target).
    pub network: bool,
    /// Some command reaches beyond this machine: a target that is not plainly loopback, or a
    /// network tool whose targets are unknown. `network` without `remote`: loopback only.
    pub remote: bool,
    /// Every command in it is one the analysis knows works offline (coreutils, text tools,
    /// local git…): the sandbox may run it without the network. False for anything else
    /// (builds and package managers fetch; unknown programs may).
    pub offline: bool,
    /// Some command's job is to download: a package install, a fetch of a remote repository, a
    /// package runner (see `fetch.rs`). With [`ShellReport::network`], the only reasons the
    /// sandbox runs a command line with the network.
    pub fetches: bool,
}

/// The command an interpreter's script file makes, named as the script (`python3 manage.py
/// flush` → `manage.py flush`), for the packs; `None` for inline code, stdin, a module (`-m`) or
/// a program that is no interpreter.
fn script_as_program(c: &Command) -> Option<Command> {
    let lang = opaque::Lang::of_program(&c.program)?;
    let i = if lang == opaque::Lang::Shell {
        let w = unwrap::shell_script_file(c)?;
        c.args.iter().position(|a| std::ptr::eq(a, w))?
    } else {
        if effects::inline_code_index(c).is_some() {
            return None;
        }
        effects::interpreter_code_arg(c)?
    };
    let w = c.args.get(i).filter(|w| !w.dynamic && !unwrap::is_stdin_path(&w.text))?;
    let name = Path::new(&w.text).file_name()?.to_str()?.to_string();
    Some(Command { program: name, program_path: w.text.clone(), args: c.args[i + 1..].to_vec(), ..c.clone() })
}

/// Files a build, test or package tool reads its recipes from: written in the same line, or
/// downloaded, they make the tool run code the analysis did not read.
const RECIPE_FILES: &[&str] = &[
    "Makefile",
    "makefile",
    "GNUmakefile",
    "package.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "config.toml",
    "config",
    "build.rs",
    "conftest.py",
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "Cargo.toml",
    "CMakeLists.txt",
    "Justfile",
    "justfile",
    "Taskfile.yml",
    "Rakefile",
    "Gemfile",
    "noxfile.py",
    "tox.ini",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    ".pre-commit-config.yaml",
    "go.mod",
    "deno.json",
    "bunfig.toml",
    ".envrc",
    "Dockerfile",
    "docker-compose.yml",
    "compose.yaml",
    "pytest.ini",
    "sitecustomize.py",
    "usercustomize.py",
];

/// Test runners that run the code they are pointed at.
const TEST_TOOLS: &[&str] =
    &["pytest", "py.test", "jest", "vitest", "mocha", "tox", "nox", "phpunit", "rspec", "ctest"];

/// Files that tools run or load later by themselves (hooks, CI, tool and editor configuration,
/// wrappers): a write to one with content the analysis cannot read is hidden code.
const RUNS_LATER_FILES: &[&str] = &[
    ".pylintrc",
    "pylintrc",
    ".pdbrc",
    ".irbrc",
    ".pryrc",
    "rust-toolchain",
    "rust-toolchain.toml",
    "gradlew",
    "mvnw",
    ".mise.toml",
    "mise.toml",
    ".tool-versions",
    ".gitlab-ci.yml",
    "lefthook.yml",
    ".lefthook.yml",
    ".lintstagedrc",
    ".lintstagedrc.json",
    "lint-staged.config.js",
    ".gdbinit",
    ".lldbinit",
    ".bazelrc",
    "gradle-wrapper.properties",
    "gradle.properties",
    "Procfile",
    "devbox.json",
    "Jenkinsfile",
    ".babelrc",
    "babel.config.js",
    ".exrc",
    ".vimrc",
    ".nvimrc",
    "shell.nix",
    "default.nix",
    "flake.nix",
    "eslint.config.js",
    "eslint.config.mjs",
    ".eslintrc.js",
    ".eslintrc.cjs",
    "vite.config.js",
    "vite.config.ts",
    "webpack.config.js",
    "jest.config.js",
    "vitest.config.ts",
    "vitest.config.js",
    "prettier.config.js",
    ".prettierrc.js",
    "postcss.config.js",
    "tailwind.config.js",
    "next.config.js",
    "nuxt.config.ts",
    "svelte.config.js",
    "astro.config.mjs",
    ".pnpmfile.cjs",
    "meson.build",
    "settings.gradle",
    "settings.gradle.kts",
    "Taskfile.yaml",
    "justfile",
    ".justfile",
    "Earthfile",
    "Tiltfile",
    "skaffold.yaml",
    "buildspec.yml",
    "azure-pipelines.yml",
    ".travis.yml",
    "bitbucket-pipelines.yml",
    "cloudbuild.yaml",
    ".drone.yml",
    "appveyor.yml",
    "Brewfile",
    "Vagrantfile",
    "Dangerfile",
    "Fastfile",
    "composer.json",
    "Gemfile",
    "Rakefile",
    "Guardfile",
    "Berksfile",
    ".envrc",
    ".env.local",
    "direnvrc",
];

/// Whether `text` starts with a `#!` line naming a shell (directly or through `env`).
fn shell_shebang(text: &str) -> bool {
    let Some(line) = text.lines().next().and_then(|l| l.strip_prefix("#!")) else { return false };
    let mut words = line.split_whitespace().map(|w| w.rsplit('/').next().unwrap_or(w));
    let mut program = words.next().unwrap_or("");
    if program == "env" {
        program = words.find(|w| !w.starts_with('-') && !w.contains('=')).unwrap_or("");
    }
    matches!(program, "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "busybox" | "fish")
}

/// Extensions of code in a language other than shell. (Configuration — YAML, JSON, TOML — is
/// not here: workflows, `package.json` scripts and task files carry shell commands.)
const NON_SHELL_EXTENSIONS: &[&str] =
    &["py", "js", "mjs", "cjs", "ts", "rb", "pl", "pm", "php", "lua", "ps1", "gradle", "kts", "cmake"];

/// Whether a path is one tools run or load later by themselves.
fn runs_later_path(path: &Path, workspace: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let rel = path.strip_prefix(workspace).ok().and_then(|r| r.to_str()).unwrap_or("");
    RECIPE_FILES.contains(&name)
        || RUNS_LATER_FILES.contains(&name)
        || name.ends_with(".mk")
        || name.ends_with(".pth")
        || name.starts_with(".eslintrc")
        || name.starts_with(".babelrc")
        || name.starts_with("lint-staged")
        || [
            ".husky/",
            ".git/",
            ".github/",
            ".gitlab/",
            ".circleci/",
            ".vscode/",
            ".idea/",
            ".cargo/",
            ".devcontainer/",
            ".mvn/",
            "gradle/",
            ".claude/",
            ".cursor/",
            ".codex/",
            ".gemini/",
            "node_modules/.bin/",
            ".venv/bin/",
            "venv/bin/",
            "bin/",
            ".bin/",
            ".buildkite/",
            ".config/",
        ]
        .iter()
        .any(|d| rel.starts_with(d))
        || rel.contains("/site-packages/")
}

/// Build tools: what they produce may be run later in the same line.
const BUILD_TOOLS: &[&str] = &[
    "cargo", "make", "gmake", "go", "gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "javac", "mvn", "gradle",
    "npm", "yarn", "pnpm", "bun", "tsc", "cmake", "ninja", "meson", "dotnet", "swift", "swiftc", "zig", "ghc", "stack",
    "cabal", "dune", "sbt", "bazel", "buck2",
];

/// Whether a network target names this machine's loopback plainly (`localhost`, `127.0.0.1`,
/// `[::1]`, with or without a scheme and port): a confined call reaching only such targets needs
/// the sandbox session's loopback, where the session's own servers listen, not the network.
fn plain_loopback(target: &str) -> bool {
    let url = if target.contains("://") { target.to_string() } else { format!("http://{target}") };
    url::Url::parse(&url).is_ok_and(|u| matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")))
}

/// A plain GET to the developer's own service on loopback at a non-privileged port (`curl
/// localhost:3000/health`): allowed. Never metadata, link-local or other internal ranges, never
/// a request that sends data.
fn local_dev_get(c: &Command, target: &str, method: Option<&str>) -> bool {
    if !matches!(c.program.as_str(), "curl" | "wget" | "http" | "https" | "xh") {
        return false;
    }
    // The method the client sends, computed from every way of setting it (`-X GET` reads).
    if !matches!(method, Some("GET" | "HEAD")) {
        return false;
    }
    let url = if target.contains("://") { target.to_string() } else { format!("http://{target}") };
    let Ok(u) = url::Url::parse(&url) else { return false };
    // Written plainly (`localhost`, `127.0.0.1`, `[::1]`): a hex or decimal spelling of loopback
    // is not how a developer names their own service.
    let plain = ["//localhost:", "//127.0.0.1:", "//[::1]:"].iter().any(|h| url.contains(h));
    // Daemons that listen on loopback and act on plain requests (Docker, etcd, Kubernetes,
    // Vault, Consul, Nomad) are not the developer's service.
    const DAEMONS: &[u16] = &[2375, 2376, 2377, 2379, 2380, 4243, 4646, 6443, 8200, 8500, 8501, 10250, 10255, 10256];
    plain && u.port().is_some_and(|p| p >= 1024 && !DAEMONS.contains(&p)) && matches!(u.scheme(), "http" | "https")
}

/// Whether a command needs no network: an offline program, or local git.
fn offline_command(c: &Command) -> bool {
    if c.program == "git" {
        return !c.git_subcommand().is_some_and(|(sub, _)| {
            matches!(
                sub,
                "fetch"
                    | "pull"
                    | "push"
                    | "clone"
                    | "ls-remote"
                    | "submodule"
                    | "remote"
                    | "send-email"
                    | "request-pull"
                    | "archive"
            )
        });
    }
    OFFLINE_PROGRAMS.contains(&c.program.as_str())
}

/// Whether argument `k` is a file name known only at run time. For HTTP clients only the words
/// that name files count (`-d @$F`, `-T "$F"`, `-K $CFG`, `-i $LIST`, `field@$F`): a URL, a
/// header or a user known at run time reads no local file (`curl -H "Authorization: Bearer
/// $TOKEN" "$API/health"`).
fn dynamic_file_word(c: &Command, k: usize, w: &Word) -> bool {
    let http = matches!(c.program.as_str(), "curl" | "wget" | "wget2" | "http" | "https" | "xh" | "xhs" | "curlie");
    if !w.dynamic {
        return false;
    }
    if w.text.starts_with('-') {
        // An option with its file attached: `-d@$F`, `--upload-file=$F`, `-T$F`, `-K$CFG`.
        return http
            && (w.text.contains('@')
                || ["--upload-file=", "--config=", "--input-file=", "--post-file=", "--body-file=", "-T", "-K"]
                    .iter()
                    .any(|o| w.text.starts_with(o)));
    }
    if !http {
        return true;
    }
    let prev = k.checked_sub(1).and_then(|p| c.args.get(p)).map_or("", |p| p.text.as_str());
    w.text.contains('@')
        || w.text.starts_with('<')
        || matches!(
            prev,
            "-T" | "--upload-file"
                | "-K"
                | "--config"
                | "-i"
                | "--input-file"
                | "--post-file"
                | "--body-file"
                | "-d"
                | "--data"
                | "--data-binary"
                | "--data-urlencode"
                | "-F"
                | "--form"
        ) && (w.text.starts_with('@')
            || matches!(
                prev,
                "-T" | "--upload-file" | "-K" | "--config" | "-i" | "--input-file" | "--post-file" | "--body-file"
            ))
}

/// A command that only asks for help or the version (`fly --version`, `gh help pr`,
/// `kubectl delete --help`): CLIs print and exit. `help` counts only as the first word (a trailing
/// `help` may be a name: `kubectl delete pod help`), `-h`/`-v` only alone (elsewhere they often
/// mean a host or verbose), `--help` only last with no other option.
fn asks_for_help(c: &Command) -> bool {
    let args: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    // Clients whose words after the first are data for a server (`redis-cli del k --help`).
    let passes_words_on = matches!(c.program.as_str(), "redis-cli" | "valkey-cli" | "keydb-cli" | "mongosh" | "mongo");
    if c.args.iter().any(|w| w.dynamic) || c.stdin_text.is_some() {
        return false;
    }
    match args.as_slice() {
        [one] => matches!(*one, "--help" | "-h" | "--version" | "-V" | "-v" | "version" | "help"),
        _ if passes_words_on => false,
        ["help", ..] => true,
        [rest @ .., "--help"] => rest.len() <= 4 && rest.iter().all(|a| !a.starts_with('-')),
        _ => false,
    }
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
            opts.iter().any(|o| *o == flag || o.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
        } else {
            opts.iter().any(|o| !o.starts_with("--") && o.starts_with('-') && o[1..].contains(flag))
        }
    };
    let trim = |s: &str| -> String {
        let t = s.trim_end_matches('/');
        if t.is_empty() { s.to_string() } else { t.to_string() }
    };
    rule.flags.iter().all(|f| has_flag(f)) && rule.args.iter().all(|a| positional.iter().any(|p| trim(p) == trim(a)))
}

/// What the analysis knows besides the shell itself: the policy's `[[commands]]` rules and its
/// enabled packs.
#[derive(Debug, Clone, Copy)]
pub struct Knowledge<'a> {
    /// `[[commands]]` rules of every layer.
    pub commands: &'a [CommandRule],
    /// The enabled packs.
    pub packs: &'a crate::packs::PackSet,
}

impl Knowledge<'static> {
    /// No command rules, the built-in packs with their defaults.
    pub fn builtin() -> Self {
        Knowledge { commands: &[], packs: crate::packs::PackSet::builtin() }
    }
}

/// Analyses a command line for the gate.
pub fn analyze(cmd: &str, cwd: &Path, ctx: &Context, rules: Knowledge<'_>, paths: &PathValidator) -> ShellReport {
    analyze_at(cmd, cwd, ctx, rules, paths, 0)
}

fn analyze_at(
    cmd: &str,
    cwd: &Path,
    ctx: &Context,
    rules: Knowledge<'_>,
    paths: &PathValidator,
    depth: usize,
) -> ShellReport {
    let mut report = ShellReport::default();
    let home = ctx.home.as_deref().and_then(Path::to_str);
    let cmds = match split_with_home(cmd, home)
        .and_then(|segs| if depth > MAX_DEPTH { Err(ShellError::TooDeep) } else { commands(&segs, home) })
    {
        Ok(c) => c,
        Err(e) => {
            let code = if matches!(e, ShellError::TooLarge(_)) { SHELL_TOO_LARGE } else { SHELL_UNPARSABLE };
            report.findings.push(
                Finding::new(code, Verdict::Deny, RiskLevel::High, format!("The command cannot be analysed: {e}."))
                    .with_remedy("split it into smaller, plainly quoted commands."),
            );
            return report;
        }
    };
    let mut a = Analysis::new(rules, cwd, ctx, paths);
    // A quoted array subscript holding a command substitution (`x='a[$(cmd)]'; echo $((x))`):
    // bash evaluates it as arithmetic later, running the command.
    if arithmetic_injection(cmd) {
        a.hidden("An array subscript holds a command substitution, which bash runs when the text is evaluated as arithmetic.".to_string(), "run the command plainly, so the gate can decide it.");
    }
    // `env -C DIR` anywhere: relative paths in the line may be relative to DIR.
    if cmds.iter().any(|c| c.wrappers.iter().any(|w| w == "env -C")) {
        a.cwd_known = false;
    }
    a.functions = defined_functions(cmd);
    if is_fork_bomb(cmd) {
        a.findings.push(op_finding(
            DESTRUCTIVE_FORK_BOMB,
            RiskLevel::Critical,
            "The command defines a function that pipes into itself in the background: a fork bomb.".into(),
        ));
    }
    for c in &cmds {
        a.step(c, rules, depth);
    }
    a.bulk_exfiltration(&cmds, cwd);
    a.path_plant(&cmds, cwd);
    report.offline = !a.network
        && cmds.iter().all(offline_command)
        && !a.findings.iter().any(|f| f.code == SHELL_OPAQUE_CODE || f.code == SHELL_HIDDEN_CODE);
    if !report.offline
        && let Some(port) = crate::checks::ssrf::guarded_port_in(cmd, &ctx.guarded_ports)
    {
        a.findings.push(crate::checks::ssrf::guarded_port_finding("The command", port));
    }
    // An upload of local data names the request better than its method does.
    if a.findings.iter().any(|f| f.code == EXFIL_UPLOAD || f.code == EXFIL_PIPE) {
        a.findings.retain(|f| f.code != NETWORK_REMOTE_WRITE);
    }
    // The same finding from two routes (a program's own reads and the any-program rule) once.
    let mut seen = std::collections::HashSet::new();
    a.findings.retain(|f| seen.insert((f.code.clone(), f.message.clone())));
    report.findings = a.findings;
    report.required = Some(a.required);
    report.predicted_writes = a.predicted;
    report.network = a.network;
    report.remote = a.remote;
    report.fetches = a.fetches;
    report
}

impl<'a> Analysis<'a> {
    /// A fresh analysis of a command line run in `cwd`.
    fn new(rules: Knowledge<'a>, cwd: &'a Path, ctx: &'a Context, paths: &'a PathValidator<'a>) -> Self {
        Analysis {
            rules,
            start: cwd,
            cwd_start: OnceCell::new(),
            cwd_moved: None,
            cwd_known: true,
            predicted: Vec::new(),
            links: Vec::new(),
            ctx,
            paths,
            workspace: OnceCell::new(),
            home: OnceCell::new(),
            branch: OnceCell::new(),
            fetched: Vec::new(),
            findings: Vec::new(),
            required: AutonomyLevel::Observe,
            network: false,
            remote: false,
            fetches: false,
            aliases: Vec::new(),
            functions: Vec::new(),
            built: false,
            written_text: Vec::new(),
            downloaded: false,
            recipe_written: None,
            dynamic_read: false,
        }
    }

    /// One command of the line: its effects, what it runs nested, code it hands an interpreter,
    /// recipes it writes, and the policy's `[[commands]]` rules.
    fn step(&mut self, c: &Command, rules: Knowledge<'_>, depth: usize) {
        let effects = self.command(c);
        if depth < MAX_DEPTH {
            self.nested(&effects, rules, depth);
        }
        self.opaque(c, rules, depth);
        self.note_recipe_writes(c, &effects);
        self.downloaded |= programs::FETCHERS.contains(&c.program.as_str())
            || (c.program == "git"
                && c.git_subcommand().is_some_and(|(s, _)| matches!(s, "clone" | "pull" | "fetch" | "submodule")));
        if depth < 2 {
            self.embedded(c, rules, depth);
        }
        self.built |= BUILD_TOOLS.contains(&c.program.as_str())
            && !c
                .args
                .iter()
                .any(|w| matches!(w.text.as_str(), "--version" | "-V" | "-v" | "--help" | "-h" | "version"));
        for rule in rules.commands.iter().filter(|r| command_rule_matches(r, c)) {
            self.findings.push(
                Finding::new(rule.code(), rule.verdict, RiskLevel::High, rule.message.clone()).with_remedy(format!(
                    "this is the policy rule `{}` ({} layer); a narrower command may pass.",
                    rule.code(),
                    rule.origin.as_str()
                )),
            );
        }
    }

    /// The whole workspace read in bulk (archives, recursive greps, syncs, bundles), or a file
    /// read whose name is only known at run time, in a line that reaches the network.
    fn bulk_exfiltration(&mut self, cmds: &[Command], cwd: &Path) {
        // Uploaders that reach the network by themselves.
        let uploader = cmds.iter().any(|c| {
            matches!(c.program.as_str(), "rclone" | "gsutil" | "croc" | "azcopy" | "s3cmd" | "wormhole")
                || (c.program == "openssl" && c.args.iter().any(|w| w.text == "s_client"))
        });
        if self.network || uploader {
            let bulk = cmds.iter().find(|c| {
                let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
                let whole = |t: &&str| {
                    matches!(*t, "." | "./" | "*" | "-")
                        || resolve_under(cwd, Path::new(t)).is_ok_and(|q| self.workspace().starts_with(&q))
                };
                match c.program.as_str() {
                    // Copiers: the last operand is where things go, not what is read.
                    "rsync" | "scp" | "rclone" | "gsutil" | "s3cmd" | "azcopy" => {
                        let ops: Vec<&&str> = texts.iter().filter(|t| !t.starts_with('-')).collect();
                        ops.iter().take(ops.len().saturating_sub(1)).any(|t| whole(t))
                    }
                    "tar" | "zip" | "7z" | "7za" | "croc" | "cpio" => {
                        texts.iter().filter(|t| !t.starts_with('-')).any(whole)
                    }
                    "grep" | "egrep" | "rg" | "ag" => {
                        texts
                            .iter()
                            .any(|t| t.starts_with('-') && (t.contains('r') || t.contains('R') || t.contains('u')))
                            || c.program == "rg"
                    }
                    "git" => {
                        c.git_subcommand().is_some_and(|(s, _)| matches!(s, "bundle" | "archive" | "format-patch"))
                    }
                    "find" => texts.iter().any(|t| matches!(*t, "-exec" | "-execdir")),
                    _ => false,
                }
            });
            if let Some(b) = bulk {
                self.findings.push(op_finding(
                EXFIL_PIPE,
                RiskLevel::High,
                format!(
                    "`{}` reads files in bulk in a command line that reaches the network: the workspace could go out.",
                    b.program
                ),
            ));
            }
            if self.dynamic_read {
                self.findings.push(op_finding(
                    EXFIL_PIPE,
                    RiskLevel::High,
                    "A file whose name is only known at run time is read in a command line that reaches the network."
                        .into(),
                ));
            }
        }
    }

    /// A program file written into a directory that a PATH change in the same line puts first:
    /// the next command of that name is the file just written.
    fn path_plant(&mut self, cmds: &[Command], cwd: &Path) {
        let path_dirs: Vec<PathBuf> = cmds
            .iter()
            .flat_map(|c| {
                c.assigns
                    .iter()
                    .chain(c.args.iter().map(|w| &w.text).filter(|_| c.program == "export"))
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .filter_map(|a| a.strip_prefix("PATH=").map(str::to_string))
            .flat_map(|v| v.split(':').map(str::to_string).collect::<Vec<_>>())
            .filter(|e| !e.starts_with('$') && !e.is_empty())
            .filter_map(|e| resolve_under(cwd, Path::new(&e)).ok())
            .collect();
        if !path_dirs.is_empty()
            && self.predicted.iter().any(|w| path_dirs.iter().any(|d| w.parent() == Some(d.as_path())))
        {
            self.hidden(
            "The command writes a file into a directory it puts on PATH: a later command of that name runs the file."
                .to_string(),
            "run the file by its path, so the gate can read it.",
        );
        }
    }
}

/// Critical operations are denied by default, high ones asked, the rest allowed (the policy's
/// `[rules]` can change each).
fn op_finding(code: &str, risk: RiskLevel, message: String) -> Finding {
    let verdict = match risk {
        RiskLevel::Critical => Verdict::Deny,
        RiskLevel::High => Verdict::Ask,
        _ => Verdict::Allow,
    };
    let generic = match verdict {
        Verdict::Deny => "leave this to the human, or narrow the command to what the task needs.",
        _ => "a human must confirm this, or narrow the command.",
    };
    Finding::new(code, verdict, risk, message).with_remedy(remedy_for(code).unwrap_or(generic))
}

/// What would make a call with this finding pass, in terms the agent can act on.
fn remedy_for(code: &str) -> Option<&'static str> {
    Some(match code {
        DESTRUCTIVE_GIT_RESET_HARD => "commit or `git stash` the work first, or use `git reset --soft`/`--mixed`.",
        DESTRUCTIVE_GIT_PUSH_FORCE => "push without force; if history must be rewritten, ask the human to do it.",
        DESTRUCTIVE_GIT_PUSH_DELETE => "leave deleting remote branches and tags to the human.",
        DESTRUCTIVE_GIT_CLEAN => "list what would go with `git clean -n`, then remove the specific files by name.",
        DESTRUCTIVE_GIT_DISCARD => {
            "commit or `git stash` first, so nothing is lost; or undo your own edit with an edit."
        }
        DESTRUCTIVE_GIT_BRANCH_DELETE => "use `git branch -d`, which refuses to delete unmerged work.",
        DESTRUCTIVE_GIT_STASH_DROP => "keep the stash; it costs nothing.",
        DESTRUCTIVE_GIT_HISTORY_REWRITE => "leave history rewriting to the human.",
        CREDENTIAL_READ => "work from a template such as `.env.example`, or ask the human for the one value needed.",
        EXFIL_UPLOAD | EXFIL_PIPE => "do not send local files, credentials or the environment to remote hosts.",
        EXFIL_REVERSE_SHELL => "nothing legitimate needs this here.",
        SHELL_REMOTE_CODE => {
            "download the script into the workspace, read it, and run it as a separate step a human can review."
        }
        SHELL_OBFUSCATED_EXEC => "run the decoded commands as plain text, so they can be checked.",
        SHELL_REMOTE_EXEC => "run the command locally, or ask the human to run it on the remote machine.",
        DESTRUCTIVE_INFRA | DESTRUCTIVE_DB => "leave destroying infrastructure and data to the human.",
        DESTRUCTIVE_FORGE_DELETE => "leave deletions on the forge or registry to the human.",
        _ => return None,
    })
}

/// Where a broad target sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Broad {
    Root,
    Home,
    Workspace,
    Parent,
}

struct Analysis<'a> {
    /// Command rules and packs.
    rules: Knowledge<'a>,
    /// The directory commands run in: follows `cd` through the command line. (Conservatively, a
    /// `cd` inside a subshell is taken to last; that can only ask for more, never less.)
    start: &'a Path,
    /// The starting directory, resolved on first use (most command lines touch no path).
    cwd_start: OnceCell<PathBuf>,
    /// Where `cd` moved to (resolved).
    cwd_moved: Option<PathBuf>,
    /// False after a `cd` to a place known only at run time: relative targets are then unknown.
    cwd_known: bool,
    /// Resolved write and delete targets, for previews and for the differential test.
    predicted: Vec<PathBuf>,
    /// Symbolic links this command line creates (resolved link path → resolved target): paths
    /// through them are followed as the kernel will once the link exists.
    links: Vec<(PathBuf, PathBuf)>,
    ctx: &'a Context,
    paths: &'a PathValidator<'a>,
    /// Resolved on first use: most command lines never need them.
    workspace: OnceCell<PathBuf>,
    home: OnceCell<Option<PathBuf>>,
    branch: OnceCell<Option<String>>,
    /// Files that a fetcher in this command line wrote: running them runs downloaded code.
    fetched: Vec<PathBuf>,
    /// Files this line writes with literal text (`printf '…' > f`): their content is known.
    written_text: Vec<(PathBuf, String)>,
    /// Something in the line downloads (a fetcher, `git clone`): builds after it run fetched code.
    downloaded: bool,
    /// A recipe file (Makefile, package.json, .npmrc, …) written in the line by something other
    /// than a build tool, with content the analysis does not know.
    recipe_written: Option<PathBuf>,
    findings: Vec<Finding>,
    required: AutonomyLevel,
    network: bool,
    /// Some target beyond loopback (see [`ShellReport::remote`]).
    remote: bool,
    /// Some command's job is to download (see [`ShellReport::fetches`]).
    fetches: bool,
    /// Aliases defined earlier in the line (`shopt -s expand_aliases` makes later lines use them).
    aliases: Vec<(String, String)>,
    /// A build tool ran earlier in the line (its outputs may be run next).
    built: bool,
    /// Some file is read whose name is only known at run time.
    dynamic_read: bool,
    /// Shell functions the line defines, with their bodies when they could be read.
    functions: Vec<(String, Option<String>)>,
}

impl Analysis<'_> {
    fn cwd(&self) -> &Path {
        match &self.cwd_moved {
            Some(c) => c,
            None => self
                .cwd_start
                .get_or_init(|| resolve(self.start, Path::new("/")).unwrap_or_else(|_| self.start.to_path_buf())),
        }
    }

    fn workspace(&self) -> &Path {
        self.workspace
            .get_or_init(|| resolve(&self.ctx.workspace, Path::new("/")).unwrap_or_else(|_| self.ctx.workspace.clone()))
    }

    fn home(&self) -> Option<&Path> {
        self.home.get_or_init(|| self.ctx.home.as_deref().and_then(|h| resolve(h, Path::new("/")).ok())).as_deref()
    }

    fn current_branch(&self) -> Option<String> {
        self.branch.get_or_init(|| read_current_branch(self.cwd())).clone()
    }

    fn dynamic(&mut self, what: String, remedy: &str) {
        self.findings.push(Finding::new(SHELL_DYNAMIC, Verdict::Ask, RiskLevel::High, what).with_remedy(remedy));
    }

    /// `p` of `t` removes the workspace's contents or its `.git`.
    fn wipes_workspace(&mut self, p: &str, t: &str) {
        self.findings.push(
            Finding::new(
                DESTRUCTIVE_RM_WORKSPACE,
                Verdict::Deny,
                RiskLevel::Critical,
                format!("`{p}` of `{t}` would remove the workspace's contents or its history (`.git`)."),
            )
            .with_remedy("name only the specific files you mean, by their paths inside the workspace."),
        );
    }

    /// Code reached through a channel ordinary work does not use: asked in every mode.
    fn hidden(&mut self, what: String, remedy: &str) {
        self.findings.push(Finding::new(SHELL_HIDDEN_CODE, Verdict::Ask, RiskLevel::High, what).with_remedy(remedy));
    }

    fn broad(&self, raw: &str) -> Option<Broad> {
        // `find ROOT -exec rm {} ;`: `{}` is some path below ROOT. Below the workspace that is
        // ordinary work; below `/`, home or a parent it is as broad as ROOT itself.
        if let Some(parent) = raw.strip_suffix("/…") {
            return self.broad(if parent.is_empty() { "/" } else { parent }).filter(|b| *b != Broad::Workspace);
        }
        let target = resolve_under(self.cwd(), Path::new(strip_glob(raw))).ok()?;
        if target == Path::new("/") {
            Some(Broad::Root)
        } else if self.home().is_some_and(|h| h.starts_with(&target)) {
            Some(Broad::Home)
        } else if target == self.workspace() {
            Some(Broad::Workspace)
        } else if self.workspace().starts_with(&target) {
            Some(Broad::Parent)
        } else {
            None
        }
    }

    /// What the enabled packs know about the command: their findings, and the autonomy level it
    /// needs. The first matching rule that only sets a level decides it (`observe`: the command
    /// only reads); rules with an effect add findings and raise the level.
    fn apply_packs(&mut self, c: &Command, e: &mut Effects) {
        let found = self.rules.packs.lookup(c);
        if found.hits.is_empty() && found.possible.is_empty() && found.broken.is_empty() {
            return;
        }
        // A help request only reads, but what would destroy is still judged with it (a program
        // may pass `--help` on as data: `redis-cli del k --help` deletes).
        let help = asks_for_help(c) && !found.hits.is_empty();
        for broken in &found.broken {
            self.findings.push(
                Finding::new(
                    INTERNAL_ERROR,
                    Verdict::Deny,
                    RiskLevel::High,
                    format!("loopguard's built-in knowledge of `{}` is broken ({broken}).", c.program),
                )
                .with_remedy("report this to the people who maintain loopguard; the command cannot be judged."),
            );
        }
        let mut level_set = help;
        if help {
            e.level = AutonomyLevel::Observe;
        }
        for hit in &found.hits {
            let r = hit.rule;
            match (r.severity, r.level) {
                (None, Some(l)) if !level_set => {
                    level_set = true;
                    e.level = if l == AutonomyLevel::Observe { AutonomyLevel::Observe } else { e.level.max(l) };
                }
                (None, _) => {}
                (Some(risk), l) => {
                    if let Some(l) = l {
                        e.level = e.level.max(l);
                    }
                    let verdict = match risk {
                        RiskLevel::Critical => Verdict::Deny,
                        RiskLevel::High => Verdict::Ask,
                        _ => Verdict::Allow,
                    };
                    let remedy = r.remedy.clone().unwrap_or_else(|| match verdict {
                        Verdict::Deny => {
                            "leave this to the human, or narrow the command to what the task needs.".into()
                        }
                        _ => "a human must confirm this, or narrow the command.".into(),
                    });
                    self.findings
                        .push(Finding::new(r.code.clone(), verdict, risk, r.message.clone()).with_remedy(remedy));
                }
            }
        }
        // A destructive shape hidden behind words only known at run time.
        if !found.hits.iter().any(|h| h.rule.severity.is_some())
            && let Some(h) = found.possible.first()
        {
            self.dynamic(
                format!(
                    "`{}` gets words only known at run time, and with some of them it would be `{}`: {}",
                    c.program, h.rule.code, h.rule.message
                ),
                "write the subcommand and its options literally, so the gate can decide.",
            );
        }
        // An effect raised the level over an `observe` rule: the effect wins.
        if found.hits.iter().any(|h| h.rule.severity.is_some()) {
            for h in &found.hits {
                if let Some(l) = h.rule.level.filter(|l| *l > AutonomyLevel::Observe) {
                    e.level = e.level.max(l);
                }
            }
        }
    }

    /// An HTTP client's request to a public host: a read is medium risk (confirmed in normal
    /// mode, like WebFetch), a DELETE destroys something remote, any other method writes there.
    /// Requests to internal addresses are the SSRF check's.
    fn http_request(&mut self, program: &str, method: &str, targets: &[String]) {
        let Some(host) = targets.iter().find(|t| {
            let t = t.trim();
            !t.is_empty() && !t.starts_with('-') && crate::checks::ssrf::check_target(t).is_none()
        }) else {
            return;
        };
        let (code, verdict, risk, what) = match method {
            "GET" | "HEAD" | "OPTIONS" => {
                (NETWORK_REMOTE_FETCH, Verdict::Allow, RiskLevel::Medium, "reads from a remote host")
            }
            "DELETE" => {
                (NETWORK_REMOTE_DELETE, Verdict::Deny, RiskLevel::Critical, "deletes something on a remote host")
            }
            _ => (NETWORK_REMOTE_WRITE, Verdict::Ask, RiskLevel::High, "changes something on a remote host"),
        };
        let remedy = match verdict {
            Verdict::Allow => "a present human confirms network reads in normal mode; WebFetch works the same way.",
            Verdict::Deny => "leave deleting remote resources to the human, or ask them to approve this call.",
            _ => "a human must confirm requests that change remote state; a GET that only reads may pass.",
        };
        self.findings.push(
            Finding::new(code, verdict, risk, format!("`{program}` sends {method} to `{host}`: it {what}."))
                .with_remedy(remedy),
        );
    }

    /// A database client fed SQL from a file (`psql -f drop.sql`, `mysql db < dump.sql`): the
    /// file is read (1 MiB at most) and its SQL judged like SQL on the command line. The level
    /// stays `operate` either way: only findings are added.
    fn sql_from_file(&mut self, c: &Command, e: &mut Effects) {
        if !effects_ops::is_db_client(&c.program) || c.stdin_text.is_some() {
            return;
        }
        let redirected = c.redirects.iter().find(|r| r.kind == RedirectKind::Read).map(|r| r.target.text.as_str());
        let Some(file) = effects_ops::sql_file(c).or(redirected) else { return };
        let Ok(path) = resolve_under(self.cwd(), Path::new(file)) else { return };
        let known = self.written_text.iter().find(|(p, _)| *p == path).map(|(_, t)| t.clone());
        let text = known.or_else(|| {
            use std::io::Read;
            let mut buf = Vec::new();
            let f = std::fs::File::open(&path).ok()?;
            f.take(1 << 20).read_to_end(&mut buf).ok()?;
            Some(String::from_utf8_lossy(&buf).into_owned())
        });
        if let Some(text) = text {
            let mut from_file = Effects::default();
            effects_ops::sql_text(&c.program, &text, &mut from_file);
            for o in from_file.ops {
                e.ops.push(effects::DestructiveOperation {
                    message: format!("{} (from `{file}`).", o.message.trim_end_matches('.')),
                    ..o
                });
            }
        }
    }

    fn command(&mut self, c: &Command) -> Effects {
        self.before_effects(c);
        let branch = || self.current_branch();
        let mut e = effects::of(c, &branch);
        self.apply_packs(c, &mut e);
        // A script its interpreter runs (`python manage.py flush`, `php artisan db:wipe`) is
        // what the packs know by the script's name (`./manage.py flush`).
        if let Some(s) = script_as_program(c) {
            self.apply_packs(&s, &mut e);
        }
        self.sql_from_file(c, &mut e);
        self.required = self.required.max(e.level);
        let tool = NETWORK_TOOLS.contains(&c.program.as_str()) || programs::FETCHERS.contains(&c.program.as_str());
        self.network |= !e.network.is_empty() || tool;
        // Beyond this machine: a target that is not plainly loopback, or a network tool whose
        // targets the analysis could not read.
        self.remote |= if e.network.is_empty() { tool } else { !e.network.iter().all(|t| plain_loopback(t)) };
        self.fetches |= fetch::fetches(c);
        let program = c.program.clone();
        self.apply_effects(c, &program, &e);
        self.any_reader(c);
        if reads_dynamic_file(c) {
            self.dynamic_read = true;
        }
        for t in &e.stages {
            let found = self.paths.check_under(&t.path, self.cwd(), "`git add` of", Access::Stage);
            self.findings.extend(found);
        }
        if let Some(base) = &e.stages_all {
            self.stage_all(base);
        }
        for o in &e.ops {
            self.findings.push(op_finding(o.code, o.risk, o.message.clone()));
        }
        for t in &e.network {
            if let Some(i) = crate::checks::ssrf::check_target(t)
                && !local_dev_get(c, t, e.http_method.as_deref())
            {
                self.findings.push(crate::checks::ssrf::finding(&format!("`{program}`"), t, &i));
            }
        }
        if let Some(method) = &e.http_method {
            self.http_request(&program, method, &e.network);
        }
        if matches!(program.as_str(), "curl" | "http" | "https" | "xh" | "wget") {
            self.proxy_options(c, &program);
        }
        self.exfiltration(c);
        if matches!(
            program.as_str(),
            "dig" | "nslookup" | "host" | "drill" | "ping" | "ping6" | "traceroute" | "getent" | "resolvectl"
        ) && c.args.iter().any(|w| w.dynamic && w.subst.is_some())
        {
            self.findings.push(op_finding(
                EXFIL_PIPE,
                RiskLevel::High,
                format!("`{program}` looks up a name built from a command's output: a DNS query can carry data out."),
            ));
        }
        self.downloaded_code(c);
        if programs::FETCHERS.contains(&program.as_str()) {
            self.note_fetched(c, &e);
        }
        if e.inline_code.is_some() {
            self.findings.push(Finding::new(
                SHELL_INLINE_CODE,
                Verdict::Allow,
                RiskLevel::Medium,
                format!("`{program}` runs inline code."),
            ));
        }
        e
    }

    /// What a command changes before its effects are read: the directory (`cd`, `env -C`),
    /// structural checks, output options, aliases, redirections and inserted text.
    fn before_effects(&mut self, c: &Command) {
        if matches!(c.program.as_str(), "cd" | "pushd") {
            self.change_dir(c);
        }
        if c.wrappers.iter().any(|w| w == "env -C") {
            // `env -C DIR CMD`: CMD's relative paths are relative to DIR (taken as unknown).
            self.cwd_known = false;
        }
        self.structural(c);
        self.output_options(c);
        if matches!(c.program.as_str(), "popd" | "cd" if c.program == "popd" || c.args.iter().any(|a| a.text == "-")) {
            self.cwd_known = false;
        }
        if let Some(expanded) = self.alias_call(c) {
            let r = analyze_at(
                &expanded,
                self.cwd(),
                self.ctx,
                Knowledge { commands: &[], packs: self.rules.packs },
                self.paths,
                1,
            );
            self.absorb(r);
        }
        if c.program == "alias" {
            for w in &c.args {
                if let Some((name, value)) = w.text.split_once('=') {
                    self.aliases.push((name.to_string(), value.to_string()));
                }
            }
        }
        self.redirects(c);
        for (file, text) in opaque::inserted_text(c) {
            if let Ok(p) = resolve_under(self.cwd(), Path::new(&file)) {
                self.later_code(&p, &text);
            }
        }
        if c.dynamic_program {
            self.dynamic(
                format!("The program `{}` is only known at run time, so the gate cannot see what runs.", c.program),
                "name the program literally.",
            );
        }
    }

    /// A command's effects on the paths it deletes, writes and links, and on what it gets from
    /// xargs at run time.
    fn apply_effects(&mut self, c: &Command, program: &str, e: &Effects) {
        for t in &e.deletes {
            self.target(program, t, true);
        }
        for t in &e.writes {
            self.target(program, t, false);
        }
        for (link, target) in &e.links {
            if let Ok(l) = self.resolve_here(link) {
                let base = l.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
                if let Ok(t) = resolve_under(&base, Path::new(target)) {
                    self.links.push((l, t));
                }
            }
        }
        if c.dynamic_operands
            && e.deletes.is_empty()
            && matches!(program, "rm" | "rmdir" | "shred" | "unlink" | "chmod" | "chown")
        {
            self.dynamic(
                format!("`{program}` gets its targets at run time (from xargs), so they could be anything."),
                "name the files literally.",
            );
        }
        for t in &e.reads {
            self.read(program, &t.path, t.dynamic);
        }
    }

    /// Proxies, resolver overrides and UNIX sockets send a request somewhere its URL does not say.
    fn proxy_options(&mut self, c: &Command, program: &str) {
        let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
        for (k, t) in texts.iter().enumerate() {
            let opt = t.split('=').next().unwrap_or(t);
            let value = t.split_once('=').map_or(texts.get(k + 1).copied().unwrap_or(""), |(_, v)| v);
            if matches!(opt, "--unix-socket" | "--abstract-unix-socket") {
                self.findings.push(op_finding(
                    SSRF_INTERNAL,
                    RiskLevel::Critical,
                    format!(
                        "`{program} {opt}` talks to a local socket (`{value}`): daemons such as Docker listen there."
                    ),
                ));
            } else if matches!(
                opt,
                "--connect-to"
                    | "--resolve"
                    | "-x"
                    | "--proxy"
                    | "--preproxy"
                    | "--socks5"
                    | "--socks5-hostname"
                    | "--socks4"
                    | "--socks4a"
            ) || opt.starts_with("--proxy")
            {
                // `--resolve HOST:PORT:ADDR`, `--connect-to HOST:PORT:TARGET:PORT`: the third field.
                let target = if opt == "--resolve" || opt == "--connect-to" {
                    value
                        .splitn(3, ':')
                        .nth(2)
                        .map(|r| if opt == "--connect-to" { r.rsplit_once(':').map_or(r, |(h, _)| h) } else { r })
                        .unwrap_or("")
                        .to_string()
                } else {
                    value.to_string()
                };
                if let Some(i) =
                    crate::checks::ssrf::check_target(&target).or_else(|| crate::checks::ssrf::check_target(value))
                {
                    self.findings.push(crate::checks::ssrf::finding(&format!("`{program} {opt}`"), value, &i));
                }
            }
        }
    }

    /// Files a fetcher writes (its outputs, its redirections): running them runs downloaded code.
    fn note_fetched(&mut self, c: &Command, e: &Effects) {
        let written: Vec<PathBuf> = e
            .writes
            .iter()
            .map(|t| t.path.as_str())
            .chain(
                c.redirects
                    .iter()
                    .filter(|r| matches!(r.kind, RedirectKind::Write | RedirectKind::Append))
                    .map(|r| r.target.text.as_str()),
            )
            .filter_map(|p| resolve_under(self.cwd(), Path::new(p)).ok())
            .collect();
        self.fetched.extend(written);
    }

    /// Programs whose output file is named by an option or a second operand (`sort -o F`,
    /// `uniq IN OUT`, `iconv -o F`, `openssl … -out F`, `xxd -r IN OUT`): checked as writes.
    fn output_options(&mut self, c: &Command) {
        let p = c.program.clone();
        let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
        let mut outs: Vec<String> = Vec::new();
        for (k, t) in texts.iter().enumerate() {
            let next = texts.get(k + 1).map(|s| s.to_string());
            match (p.as_str(), *t) {
                ("sort" | "iconv" | "shuf" | "tsort" | "nl", "-o") | ("openssl", "-out") | ("sort", "--output") => {
                    outs.extend(next)
                }
                ("sort", t) if t.starts_with("--output=") => outs.push(t["--output=".len()..].to_string()),
                ("sort" | "iconv" | "shuf", t) if t.starts_with("-o") && t.len() > 2 => outs.push(t[2..].to_string()),
                _ => {}
            }
        }
        if matches!(p.as_str(), "uniq") || (p == "xxd" && texts.contains(&"-r")) {
            let ops: Vec<&str> = texts.iter().copied().filter(|t| !t.starts_with('-')).collect();
            if ops.len() >= 2 {
                outs.push(ops[1].to_string());
            }
        }
        let dynamic = c.args.iter().any(|w| w.dynamic);
        for o in outs {
            // The output holds the lines of a literal input (`sort -o hook - <<< '…'`).
            if let (Some(text), false) = (&c.stdin_text, dynamic)
                && let Ok(path) = resolve_under(self.cwd(), Path::new(&o))
            {
                let text = text.clone();
                self.later_code(&path, &text);
            }
            let t = effects::Target { path: o, dynamic, broad: None };
            self.target(&p, &t, false);
        }
    }

    /// Shapes that reach outside the workspace or destroy it in ways the per-program effects do
    /// not model: hard links to files outside (a write through the link changes the original),
    /// archives extracted with absolute member names, deleting `.git`, globs that sweep the
    /// whole workspace, tilde forms bash expands at run time.
    fn structural(&mut self, c: &Command) {
        let p = c.program.as_str();
        let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
        self.hard_links(p, &texts);
        if extracts_absolute(p, &texts) {
            self.hidden(format!("`{p}` extracts members with absolute names, which can land anywhere."), HIDDEN_REMEDY);
        }
        if matches!(p, "rm" | "rmdir" | "shred" | "unlink" | "mv" | "truncate") {
            self.wipes_git_or_root(p, &texts);
        }
        if p == "find" {
            self.find_deletes(&texts);
        }
        self.tilde_reads(p, &texts);
    }

    /// Hard links: `ln SRC DST` (no -s), `cp -l`, `cp --link` of a source outside the workspace.
    fn hard_links(&mut self, p: &str, texts: &[&str]) {
        let hard = (p == "ln" && !has_opt(texts, "-s") && !texts.contains(&"--symbolic"))
            || (p == "cp" && (has_opt(texts, "-l") || texts.contains(&"--link")));
        if hard {
            let ops: Vec<&str> = texts.iter().copied().filter(|t| !t.starts_with('-')).collect();
            if let Some(src) = ops.iter().take(ops.len().saturating_sub(1)).find(|t| self.outside(t)) {
                self.hidden(
                    format!(
                        "`{p}` hard-links `{src}`, outside the workspace: a write through the link changes the original."
                    ),
                    HIDDEN_REMEDY,
                );
            }
        }
    }

    /// Whether a path resolves outside the workspace.
    fn outside(&self, t: &str) -> bool {
        resolve_under(self.cwd(), Path::new(t)).map_or(true, |q| !q.starts_with(self.workspace()))
    }

    /// Deleting `.git` or anything in it, or globs that sweep the workspace root.
    fn wipes_git_or_root(&mut self, p: &str, texts: &[&str]) {
        let expanded: Vec<String> =
            texts.iter().filter(|t| !t.starts_with('-')).flat_map(|t| expand_braces(t)).collect();
        let root_entries = std::fs::read_dir(self.workspace()).map(|d| d.count()).unwrap_or(0);
        for t in &expanded {
            let git = self.workspace().join(".git");
            let in_git = resolve_under(self.cwd(), Path::new(strip_glob(t)))
                .is_ok_and(|q| q.starts_with(&git) && !q.starts_with(git.join("hooks")) && q != git.join("config"));
            let glob_hits =
                if t.contains(['*', '?', '[']) { expand_glob(self.cwd(), t.trim_end_matches('/')) } else { Vec::new() };
            // The glob's own directory must be the workspace root.
            let glob_dir =
                t.trim_end_matches('/').rsplit_once('/').map_or(".", |(d, _)| if d.is_empty() { "/" } else { d });
            let at_root = resolve_under(self.cwd(), Path::new(glob_dir)).is_ok_and(|d| d == self.workspace());
            let covers = at_root && root_entries >= 3 && glob_hits.len() * 2 >= root_entries;
            if in_git || covers || glob_hits.iter().any(|m| m.file_name().is_some_and(|n| n == ".git")) {
                self.wipes_workspace(p, t);
                break;
            }
        }
        for t in texts.iter().filter(|t| !t.starts_with('-')) {
            let sweeps = t.contains(['*', '?', '['])
                && (expand_glob(self.cwd(), t).iter().any(|m| m.file_name().is_some_and(|n| n == ".git"))
                    || t.trim_start_matches("./")
                        .chars()
                        .all(|ch| matches!(ch, '*' | '?' | '[' | ']' | '!' | '.' | '^')));
            let git = resolve_under(self.cwd(), Path::new(t)).is_ok_and(|q| q == self.workspace().join(".git"));
            if (sweeps && resolve_under(self.cwd(), Path::new(".")).is_ok_and(|d| d == self.workspace())) || git {
                self.wipes_workspace(p, t);
                break;
            }
        }
    }

    /// `find` deleting across the whole workspace or its `.git`.
    fn find_deletes(&mut self, texts: &[&str]) {
        if texts.contains(&"-delete")
            || texts.windows(2).any(|w| {
                matches!(w[0], "-exec" | "-execdir" | "-ok") && matches!(w[1], "rm" | "/bin/rm" | "shred" | "unlink")
            })
        {
            let root = texts.iter().take_while(|t| !t.starts_with('-')).copied().next().unwrap_or(".");
            let root_real = resolve_under(self.cwd(), Path::new(root));
            let name_pats: Vec<&str> = texts
                .windows(2)
                .filter(|w| {
                    matches!(w[0], "-name" | "-iname" | "-path" | "-ipath" | "-regex" | "-iregex" | "-wholename")
                })
                .map(|w| w[1])
                .collect();
            let narrowing = name_pats.iter().any(|pat| {
                pat.chars().any(|ch| !matches!(ch, '*' | '.' | '?' | '\\' | '^' | '$')) && !pat.contains(".git")
            });
            let targets_git = name_pats.iter().any(|pat| *pat == ".git" || pat.ends_with("/.git"))
                || root_real.as_ref().is_ok_and(|q| q.starts_with(self.workspace().join(".git")));
            let any_filter = texts.iter().any(|t| {
                matches!(
                    *t,
                    "-type"
                        | "-size"
                        | "-mindepth"
                        | "-maxdepth"
                        | "-newer"
                        | "-mtime"
                        | "-regex"
                        | "-name"
                        | "-iname"
                        | "-path"
                )
            });
            let at_root = root_real.as_ref().is_ok_and(|q| q == self.workspace());
            if targets_git || (at_root && any_filter && !narrowing) {
                self.findings.push(op_finding(
                    DESTRUCTIVE_RM_WORKSPACE,
                    RiskLevel::Critical,
                    "`find` deletes across the whole workspace (or its `.git`): its filters do not narrow what goes."
                        .into(),
                ));
            }
        }
        if texts.contains(&"-delete") {
            let root = texts.iter().take_while(|t| !t.starts_with('-')).copied().next().unwrap_or(".");
            let filtered = texts.windows(2).any(|w| {
                matches!(
                    w[0],
                    "-name" | "-iname" | "-path" | "-ipath" | "-regex" | "-newer" | "-type" | "-mtime" | "-empty"
                ) && w[1] != "*"
            });
            let star = texts.windows(2).any(|w| matches!(w[0], "-name" | "-iname" | "-path" | "-ipath") && w[1] == "*");
            if star && !filtered && resolve_under(self.cwd(), Path::new(root)).is_ok_and(|d| d == self.workspace()) {
                self.findings.push(op_finding(
                    DESTRUCTIVE_RM_WORKSPACE,
                    RiskLevel::Critical,
                    "`find … -delete` over the workspace root with no filter deletes the whole workspace.".into(),
                ));
            }
        }
    }

    /// A read through a tilde form bash expands at run time (`~root/.ssh/id_rsa`, `~-/.env`).
    fn tilde_reads(&mut self, p: &str, texts: &[&str]) {
        for t in texts.iter().filter(|t| t.starts_with('~') && !t.starts_with("~/") && **t != "~") {
            let rest = t.split_once('/').map_or("", |(_, r)| r);
            let guess = self.home().map(|h| h.join(rest)).unwrap_or_default();
            if self.paths.may_be_secret(&guess) || self.paths.may_be_secret(&self.workspace().join(rest)) {
                self.dynamic(
                    format!(
                        "`{p}` reaches `{t}`, which bash expands at run time to a place that may hold credentials."
                    ),
                    "name the file by its full path.",
                );
                break;
            }
        }
    }

    /// A call of a function the line defines, with arguments: its body is analysed with the
    /// arguments in place of `$1`…`$9`, `$@` and `$*`; a body that cannot be found is not
    /// understood.
    fn function_call(&mut self, c: &Command, rules: Knowledge<'_>, depth: usize) -> Option<opaque::Opaque> {
        let (_, body) = self.functions.iter().find(|(n, _)| *n == c.program_path)?;
        if c.args.is_empty() {
            return None;
        }
        let Some(body) = body.clone() else {
            return Some(opaque::Opaque::ev(format!(
                "it calls `{}`, a function this command line defines, with arguments",
                c.program
            )));
        };
        let quoted: Vec<String> = c.args.iter().map(|w| sh_quote(&w.text)).collect();
        let mut text = body
            .replace("\"$@\"", &quoted.join(" "))
            .replace("$@", &quoted.join(" "))
            .replace("\"$*\"", &sh_quote(&quoted.join(" ")))
            .replace("$*", &quoted.join(" "));
        for (k, q) in quoted.iter().enumerate().take(9).rev() {
            text = text.replace(&format!("\"${}\"", k + 1), q).replace(&format!("${}", k + 1), q);
        }
        if depth < MAX_DEPTH {
            let r = analyze_at(&text, self.cwd(), self.ctx, rules, self.paths, depth + 1);
            self.absorb(r);
        }
        None
    }

    /// A command whose name is an alias defined earlier in the line, expanded.
    fn alias_call(&self, c: &Command) -> Option<String> {
        let (_, value) = self.aliases.iter().rev().find(|(n, _)| *n == c.program_path)?;
        let args: Vec<String> = c.args.iter().map(|w| sh_quote(&w.text)).collect();
        Some(format!("{value} {}", args.join(" ")))
    }

    /// `cd DIR`: later relative paths are relative to DIR. `cd` alone goes home; `cd -` and a
    /// DIR known only at run time make the directory unknown.
    fn change_dir(&mut self, c: &Command) {
        let operand = c.args.iter().find(|w| !w.text.starts_with('-') || w.text == "-");
        match operand {
            None => match self.home().map(Path::to_path_buf) {
                Some(h) => self.cwd_moved = Some(h),
                None => self.cwd_known = false,
            },
            Some(w) if w.dynamic || w.text == "-" => self.cwd_known = false,
            Some(w) => match resolve_under(self.cwd(), Path::new(&w.text)) {
                Ok(p) => self.cwd_moved = Some(p),
                Err(_) => self.cwd_known = false,
            },
        }
    }

    /// Resolves `raw` from the current directory, following links made earlier in the line.
    fn resolve_here(&self, raw: &str) -> Result<PathBuf, crate::checks::paths::PathError> {
        let mut p = resolve_under(self.cwd(), Path::new(raw))?;
        for _ in 0..MAX_DEPTH {
            let Some((link, target)) = self.links.iter().find(|(l, _)| p.starts_with(l)) else { break };
            let rest = p.strip_prefix(link).unwrap_or(Path::new(""));
            let next = resolve(&target.join(rest), Path::new("/"))?;
            if next == p {
                break;
            }
            p = next;
        }
        Ok(p)
    }

    /// Whether a path is relative to a directory only known at run time — or starts with a tilde
    /// form the lexer does not expand (`~-`, `~+`, `~user`): bash does, at run time.
    fn unknown_base(&self, p: &str) -> bool {
        (!self.cwd_known && !p.starts_with('/')) || p.starts_with('~')
    }

    /// A write or delete target: dynamic targets are asked about, broad ones are destructive,
    /// everything else must stay inside the workspace.
    fn target(&mut self, program: &str, t: &Target, delete: bool) {
        if self.unknown_base(&t.path) {
            self.dynamic(
                format!(
                    "`{program}` target `{}` is relative to a directory only known at run time (after `cd`).",
                    t.path
                ),
                "use paths relative to the workspace, or absolute paths.",
            );
            return;
        }
        if !t.dynamic {
            let raw = t.path.strip_suffix("/…").unwrap_or(&t.path);
            if let Ok(p) = resolve_under(self.cwd(), Path::new(strip_glob(raw))) {
                self.predicted.push(p);
            }
        }
        if t.dynamic {
            // A target built at run time could be anything, `~/.bashrc` included.
            let verb = if delete { "deletes" } else { "writes" };
            self.dynamic(
                format!("`{program}` {verb} `{}`, a path only known at run time; it could be anything.", t.path),
                "name the path literally, inside the workspace.",
            );
            return;
        }
        if let Some(family) = t.broad
            && let Some(b) = self.broad(&t.path)
        {
            let (code, what) = match (family, b) {
                ("rm", Broad::Root) => (DESTRUCTIVE_RM_ROOT, "the whole filesystem"),
                ("rm", Broad::Home) => (DESTRUCTIVE_RM_HOME, "the home directory"),
                ("rm", Broad::Workspace) => (DESTRUCTIVE_RM_WORKSPACE, "the whole workspace"),
                ("rm", Broad::Parent) => (DESTRUCTIVE_RM_PARENT, "a parent of the workspace"),
                (code, Broad::Root) => (code, "the whole filesystem"),
                (code, Broad::Home) => (code, "the home directory"),
                (code, Broad::Workspace) => (code, "the whole workspace"),
                (code, Broad::Parent) => (code, "a parent of the workspace"),
            };
            let verb = if family == "rm" || delete { "delete" } else { "change" };
            self.findings.push(
                Finding::new(
                    code,
                    Verdict::Deny,
                    RiskLevel::Critical,
                    format!("`{program}` of `{}` would {verb} {what}.", t.path),
                )
                .with_remedy("name only the specific files you mean, by their paths inside the workspace."),
            );
            return;
        }
        let what = if delete { format!("`{program}` deletes") } else { format!("`{program}` writes") };
        let raw = if delete { strip_glob(&t.path) } else { t.path.as_str() };
        let access = if delete { Access::Delete } else { Access::Write };
        let mut found = self.paths.check_resolved(raw, self.resolve_here(raw), &what, access);
        // Unattended, cleaning up below the system temp directory (outside the workspace) is
        // ordinary work: only the outside-the-workspace finding goes; denylist and
        // self-protection stand.
        if delete
            && self.ctx.mode == crate::ExecutionMode::Unattended
            && let Ok(real) = self.resolve_here(raw)
            && !real.starts_with(self.workspace())
            && [std::env::temp_dir(), PathBuf::from("/tmp"), PathBuf::from("/var/tmp")]
                .iter()
                // (A workspace that itself lives in the temp directory makes it no scratch area:
                // its neighbours may be other projects.)
                .any(|d| {
                    real.starts_with(d)
                        && real.components().count() > d.components().count()
                        && !self.workspace().starts_with(d)
                })
        {
            found.retain(|f| f.code != PATH_OUTSIDE_WORKSPACE);
        }
        self.findings.extend(found);
    }

    /// Recipe files this command writes (for the build tools after it in the line), and files
    /// that run later written with content the analysis cannot read.
    fn note_recipe_writes(&mut self, c: &Command, e: &Effects) {
        let program = c.program.as_str();
        if !BUILD_TOOLS.contains(&program)
            && !matches!(program, "git" | "mkdir" | "touch" | "rm" | "rmdir" | "chmod" | "chown")
        {
            self.unread_runs_later(program, c, e);
        }
        self.replaced_from_outside(program, c, e);
        if !BUILD_TOOLS.contains(&program) {
            self.note_recipe_target(c, e);
        }
        if matches!(program, "npm" | "pnpm" | "yarn") {
            self.npm_recipe_set(c);
        }
    }

    /// A file a tool runs or loads later (hooks, CI, tool configuration, wrappers), written with
    /// content the analysis cannot read.
    fn unread_runs_later(&mut self, program: &str, c: &Command, e: &Effects) {
        let mut targets: Vec<&str> = e.writes.iter().filter(|t| !t.dynamic).map(|t| t.path.as_str()).collect();
        targets.extend(
            c.redirects
                .iter()
                .filter(|r| matches!(r.kind, RedirectKind::Write | RedirectKind::Append) && !r.target.dynamic)
                .map(|r| r.target.text.as_str()),
        );
        for t in targets {
            let Ok(p) = self.resolve_here(t) else { continue };
            // Manifests are mostly data that tools rewrite (`jq … package.json`): a build run
            // after such a write in the same line is caught by `build_after_download`.
            let manifest = p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                matches!(
                    n,
                    "package.json"
                        | "Cargo.toml"
                        | "pyproject.toml"
                        | "go.mod"
                        | "composer.json"
                        | "pom.xml"
                        | "setup.cfg"
                        | "deno.json"
                        | "Gemfile"
                        | "build.gradle"
                        | "build.gradle.kts"
                )
            });
            if manifest
                || !p.starts_with(self.workspace())
                || !runs_later_path(&p, self.workspace())
                || self.written_text.iter().any(|(q, _)| *q == p)
            {
                continue;
            }
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or(t).to_string();
            self.hidden(format!("`{program}` writes `{name}`, which a tool runs or loads later, with content the analysis cannot read."), "write hooks, CI, tool configuration and wrappers with plain literal text (or the Write tool), so the gate can read them.");
            break;
        }
    }

    /// An existing script or manifest of the workspace replaced by content from elsewhere.
    fn replaced_from_outside(&mut self, program: &str, c: &Command, e: &Effects) {
        // A download, or a copy from outside the workspace.
        let from_outside = match program {
            "curl" | "wget" | "aria2c" | "http" | "https" | "xh" => true,
            "cp" | "mv" | "install" | "rsync" | "ln" => {
                c.args.iter().filter(|w| !w.text.starts_with('-')).rev().skip(1).any(|w| {
                    w.dynamic
                        || resolve_under(self.cwd(), Path::new(&w.text)).is_ok_and(|q| !q.starts_with(self.workspace()))
                })
            }
            _ => false,
        };
        if from_outside {
            for t in e.writes.iter().filter(|t| !t.dynamic) {
                let Ok(p) = resolve_under(self.cwd(), Path::new(&t.path)) else { continue };
                let manifest = p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    matches!(
                        n,
                        "package.json" | "pyproject.toml" | "setup.cfg" | "Cargo.toml" | "composer.json" | "Gemfile"
                    )
                });
                if p.starts_with(self.workspace()) && p.is_file() && (manifest || self.runs_later_file(&p)) {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
                    self.hidden(format!("`{program}` replaces `{name}`, which runs later, with content from outside the workspace the analysis cannot read."), "fetch or copy to a new file and show it to the human before it replaces a script or manifest.");
                    return;
                }
            }
        }
    }

    /// A build recipe (Makefile, package.json scripts…) this command writes, for the build that
    /// may run after it.
    fn note_recipe_target(&mut self, c: &Command, e: &Effects) {
        let targets = e.writes.iter().map(|t| t.path.as_str()).chain(
            c.redirects
                .iter()
                .filter(|r| matches!(r.kind, RedirectKind::Write | RedirectKind::Append))
                .map(|r| r.target.text.as_str()),
        );
        for t in targets.collect::<Vec<_>>() {
            let Ok(p) = resolve_under(self.cwd(), Path::new(t)) else { continue };
            let recipe =
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| RECIPE_FILES.contains(&n) || n.ends_with(".mk"));
            if recipe && !self.written_text.iter().any(|(q, _)| *q == p) {
                self.recipe_written = Some(p);
            }
        }
    }

    /// `npm pkg set scripts.x=…`, `npm config set …`: recipes and programs changed.
    fn npm_recipe_set(&mut self, c: &Command) {
        // `npm pkg set scripts.x=…`, `npm config set …`: recipes and programs changed.
        let ops: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
        if ops.windows(3).any(|w| matches!(w, ["pkg", "set", k] if k.starts_with("scripts") || k.starts_with("bin") || k.starts_with("config")))
            || ops.windows(2).any(|w| matches!(w, ["config", "set"] | ["set-script", _]))
        {
            self.recipe_written = Some(self.cwd().join("package.json"));
        }
    }

    const METADATA_ONLY: &'static [&'static str] = &[
        "",
        "ls",
        "stat",
        "test",
        "[",
        "[[",
        "du",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "echo",
        "printf",
        "touch",
        "rm",
        "rmdir",
        "unlink",
        "shred",
        "chmod",
        "chown",
        "chgrp",
        "mkdir",
        "find",
        "lsattr",
        "chattr",
        "getfacl",
        "setfacl",
        "namei",
        "which",
        "type",
        "command",
        "wc",
        "mv",
        "cd",
        "pushd",
        "export",
        "unset",
        "trap",
        "alias",
        "ssh-keygen",
        "ssh",
        "ssh-add",
        "mosh",
        "autossh",
    ];

    /// Secret reads by any program, not a list of readers: an operand (or an option's `=value`,
    /// an `@file`, the path of a git `REV:path`) naming a secret path is a credential read for
    /// every program except those that only look at names and metadata.
    fn any_reader(&mut self, c: &Command) {
        let p = c.program.as_str();
        if Self::METADATA_ONLY.contains(&p) {
            return;
        }
        if p == "git"
            && !c.git_subcommand().is_some_and(|(sub, _)| {
                matches!(
                    sub,
                    "show"
                        | "cat-file"
                        | "diff"
                        | "log"
                        | "blame"
                        | "grep"
                        | "archive"
                        | "format-patch"
                        | "whatchanged"
                        | "annotate"
                        | "difftool"
                )
            })
        {
            return;
        }
        if matches!(p, "sed" | "gsed") {
            for f in opaque::sed_reads(c) {
                self.read(p, &f, false);
            }
        }
        let mut seen = 0;
        for w in c.args.iter().filter(|w| !w.dynamic) {
            let t = w.text.as_str();
            let mut candidates: Vec<&str> = Vec::new();
            if let Some((_, v)) = t.split_once('=').filter(|_| t.starts_with('-')) {
                candidates.push(v);
            } else if !t.starts_with('-') {
                candidates.push(t.strip_prefix('@').unwrap_or(t));
            }
            if let Some((_, path)) = t.rsplit_once(':').filter(|_| !t.contains("://")) {
                candidates.push(path);
            }
            if let Some((_, path)) = t.split_once('@').filter(|(a, _)| !a.is_empty() && !t.contains("://")) {
                candidates.push(path);
            }
            for cand in candidates.into_iter().filter(|c| !c.is_empty() && !c.contains('\n')) {
                seen += 1;
                if seen > 64 {
                    return;
                }
                let lexical = crate::checks::paths::lexical_join(self.cwd(), strip_glob(cand));
                if self.paths.may_be_secret(&lexical) || cand.contains(['*', '?', '[']) {
                    self.read(p, cand, false);
                }
            }
        }
    }

    /// `git add -A` and friends stage every changed file: ask git which files those are, and check
    /// each against the denylist. If git cannot tell, a human must confirm.
    fn stage_all(&mut self, base: &str) {
        if !self.paths.has_denylist() {
            return;
        }
        let Ok(dir) = resolve_under(self.cwd(), Path::new(base)) else { return };
        match self.ctx.worktree.0.as_ref().and_then(|w| w.changed_files(&dir)) {
            Some(files) => {
                for f in files {
                    let found = self.paths.check_under(&f, &dir, "`git add` (all changes) of", Access::Stage);
                    self.findings.extend(found);
                }
            }
            None => self.findings.push(
                Finding::new(SHELL_DYNAMIC, Verdict::Ask, RiskLevel::High, format!("`git add` stages every change in `{base}`, and git could not list them to check against the denylist."))
                    .with_remedy("stage the files you changed by name."),
            ),
        }
    }

    fn read(&mut self, program: &str, raw: &str, dynamic: bool) {
        if dynamic {
            self.dynamic_read = true;
            // A read whose place is known only at run time but whose name is a secret's
            // (`cat "$OLDPWD/.env"`, `cat $D/id_rsa`): asked.
            let tail = raw.rsplit_once('/').map_or(raw, |(_, t)| t);
            if !tail.contains('$') && !tail.is_empty() && self.paths.may_be_secret(&self.workspace().join(tail)) {
                self.dynamic(
                    format!("`{program}` reads `{raw}`, a file named like a secret in a place known only at run time."),
                    "name the file by its path, so the gate can check it.",
                );
            }
            return;
        }
        // A glob reads what it matches now (`cat .e?v` is `cat .env`).
        if raw.contains(['*', '?', '[']) && !raw.ends_with("/*") {
            for m in expand_glob(self.cwd(), raw) {
                if let Some(f) = self.paths.check_read(raw, &m, &format!("`{program}` of")) {
                    self.findings.push(f);
                    return;
                }
            }
        }
        if let Ok(real) = self.resolve_here(strip_glob(raw))
            && let Some(f) = self.paths.check_read(raw, &real, &format!("`{program}` of"))
        {
            self.findings.push(f);
        }
    }

    fn redirects(&mut self, c: &Command) {
        self.note_written_text(c);
        for r in &c.redirects {
            self.redirect(c, r);
        }
    }

    /// What a command's write redirections leave in their files: known text (echo, printf, a
    /// heredoc into cat), or unknown content (a later run of the file is then not understood).
    fn note_written_text(&mut self, c: &Command) {
        // `printf '…' > f` / `echo … >> f` / a heredoc into `cat > f`: the file's new content is known.
        let literal = if matches!(c.program.as_str(), "echo" | "printf") && !c.args.iter().any(|w| w.dynamic) {
            opaque::literal_text(&Head {
                program: c.program.clone(),
                args: c.args.iter().map(|w| w.text.clone()).collect(),
            })
        } else if matches!(c.program.as_str(), "cat" | "tee") && c.args.iter().all(|w| w.text.starts_with('-')) {
            c.stdin_text.clone()
        } else {
            opaque::decoded_text(c)
        };
        for r in c.redirects.iter().filter(|r| matches!(r.kind, RedirectKind::Write | RedirectKind::Append)) {
            if r.target.dynamic {
                continue;
            }
            if let Ok(p) = resolve_under(self.cwd(), Path::new(&r.target.text)) {
                let known = literal.clone().unwrap_or_default();
                let append = r.kind == RedirectKind::Append;
                match self.written_text.iter_mut().find(|(q, _)| *q == p) {
                    Some((_, t)) if append => t.push_str(&known),
                    Some((_, t)) => *t = known.clone(),
                    None => self.written_text.push((p.clone(), known.clone())),
                }
                if literal.is_none() {
                    // Content not known: mark it so (a script run from it is not understood).
                    self.written_text.retain(|(q, _)| *q != p);
                    // echo/printf of words with no expansion print what their arguments say; an
                    // escape or conversion the analysis does not compute, into a file that runs
                    // later, hides what it writes.
                    // A program whose output is a function of literal input (echo/printf words,
                    // a heredoc or here-string through tr, base64, a decoder, an interpreter)
                    // that the analysis does not compute, into a file that runs later, hides what
                    // it writes. sed's own inserted text is read instead.
                    let literal_input = c.stdin_text.is_some()
                        || (matches!(c.program.as_str(), "echo" | "printf")
                            && !c.args.iter().any(|w| w.dynamic || w.text.contains('$') || w.text.contains('`')));
                    match opaque::sed_output_text(c) {
                        Some(text) => self.later_code(&p, &text),
                        None if literal_input => self.unread_later_write(&p),
                        None => {}
                    }
                } else {
                    self.later_code(&p, &known);
                }
            }
        }
    }

    /// One redirection: a raw network connection, a read, or a write to check.
    fn redirect(&mut self, c: &Command, r: &Redirect) {
        let t = &r.target.text;
        if t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/") {
            self.findings.push(op_finding(
                EXFIL_REVERSE_SHELL,
                RiskLevel::Critical,
                format!("A redirection to `{t}` opens a raw network connection from the shell."),
            ));
            return;
        }
        let writes = match r.kind {
            RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite => true,
            // `>&file` (not a descriptor number or `-`) writes stdout and stderr to a file.
            RedirectKind::Dup => !t.chars().all(|c| c.is_ascii_digit() || c == '-'),
            RedirectKind::Read => {
                let prog = if c.program.is_empty() { "<" } else { c.program.as_str() };
                self.read(prog, t, r.target.dynamic);
                false
            }
            _ => false,
        };
        if !writes {
            return;
        }
        self.required = self.required.max(AutonomyLevel::Implement);
        if !r.target.dynamic
            && !self.unknown_base(t)
            && !t.starts_with("/dev/")
            && let Ok(p) = resolve_under(self.cwd(), Path::new(t))
        {
            self.predicted.push(p);
        }
        if r.target.dynamic || self.unknown_base(t) || t.starts_with('~') {
            self.dynamic(
                format!("The redirection target `{t}` is only known at run time."),
                "redirect to a literal path inside the workspace.",
            );
        } else {
            let found = self.paths.check_resolved(t, self.resolve_here(t), "Redirection target", Access::Write);
            self.findings.extend(found);
        }
    }

    /// The environment or a credential flowing into a network tool.
    fn exfiltration(&mut self, c: &Command) {
        if !NETWORK_TOOLS.contains(&c.program.as_str()) {
            return;
        }
        let leak = c.sources().find(|h| dumps_env(h) || self.reads_secret(h)).map(|h| h.program.clone());
        if leak.is_none()
            && let Some(h) = c
                .stdin_from
                .iter()
                .find(|h| effects::is_interpreter(&h.program) || programs::SHELLS.contains(&h.program.as_str()))
        {
            self.hidden(
                format!(
                    "The output of code `{}` runs flows into `{}`, which sends it over the network.",
                    h.program, c.program
                ),
                "send only data you produced with plain commands the gate can read.",
            );
        }
        // Any file piped into a tool that sends its stdin is an upload, as `curl -d @file` is.
        if leak.is_none()
            && sends_stdin(c)
            && let Some((h, f)) = c.stdin_from.iter().find_map(piped_file)
        {
            self.findings.push(op_finding(
                EXFIL_UPLOAD,
                RiskLevel::High,
                format!("`{} {f}` flows into `{}`, which sends it to a remote host.", h.program, c.program),
            ));
        }
        if let Some(src) = leak {
            self.findings.push(op_finding(
                EXFIL_PIPE,
                RiskLevel::Critical,
                format!("`{src}` output (the environment or a credential) flows into `{}`, which sends it over the network.", c.program),
            ));
        }
    }

    /// A command that prints a secret file the path rules protect.
    fn reads_secret(&self, h: &Head) -> bool {
        matches!(
            h.program.as_str(),
            "cat" | "head" | "tail" | "base64" | "xxd" | "gzip" | "tar" | "zip" | "openssl" | "gpg"
        ) && h.args.iter().filter(|a| !a.starts_with('-')).any(|a| {
            resolve_under(self.cwd(), Path::new(strip_glob(a)))
                .is_ok_and(|p| self.paths.check_read(a, &p, "").is_some())
        })
    }

    /// Code that arrives from the network or out of a decoder and is executed.
    fn downloaded_code(&mut self, c: &Command) {
        let p = c.program.as_str();
        let is_shell = programs::SHELLS.contains(&p);
        let is_interp = effects::is_interpreter(p);
        let is_eval = matches!(p, "eval" | "source" | ".");
        if !(is_shell || is_interp || is_eval) {
            // Running a file a fetcher just wrote (`curl -o x.sh … && ./x.sh`).
            if !self.fetched.is_empty()
                && c.program_path.contains('/')
                && let Ok(real) = resolve_under(self.cwd(), Path::new(&c.program_path))
                && self.fetched.contains(&real)
            {
                self.remote_code(p, "runs a file downloaded earlier in the same command");
            }
            return;
        }
        let reads_stdin = if is_shell {
            unwrap::shell_reads_stdin(c)
        } else if is_interp {
            effects::interpreter_reads_stdin(c)
        } else {
            false
        };
        let code_args: Vec<usize> = if is_eval {
            (0..c.args.len()).collect()
        } else if is_shell {
            let script = unwrap::shell_script_arg(c).or_else(|| unwrap::shell_script_file(c));
            script.and_then(|w| c.args.iter().position(|a| std::ptr::eq(a, w))).into_iter().collect()
        } else {
            effects::interpreter_code_arg(c).into_iter().collect()
        };
        let mut sources: Vec<&Head> = code_args.iter().filter_map(|&i| c.arg_sources.get(i)).flatten().collect();
        if reads_stdin {
            sources.extend(c.stdin_from.iter());
        }
        if sources.iter().any(|h| effects::is_fetcher(h)) {
            self.remote_code(p, "executes code fetched from the network");
        } else if sources.iter().any(|h| effects::is_decoder(h)) {
            self.findings.push(op_finding(
                SHELL_OBFUSCATED_EXEC,
                RiskLevel::Critical,
                format!("`{p}` executes decoded or decompressed data: the code it runs is hidden from review."),
            ));
        }
        // A script file that a fetcher in this command line wrote.
        for &i in &code_args {
            if !self.fetched.is_empty()
                && let Some(w) = c.args.get(i)
                && let Ok(real) = resolve_under(self.cwd(), Path::new(&w.text))
                && self.fetched.contains(&real)
            {
                self.remote_code(p, "runs a file downloaded earlier in the same command");
            }
        }
    }

    /// Code this command runs that the analysis cannot see into (see [`opaque`]): a finding
    /// the gate asks about, or lets run only confined.
    fn opaque(&mut self, c: &Command, rules: Knowledge<'_>, depth: usize) {
        let function_call = self.function_call(c, rules, depth);
        let why = function_call
            .or_else(|| self.package_runner(c))
            .or_else(|| self.foreign_recipes(c))
            .or_else(|| self.build_after_download(c))
            .or_else(|| opaque::feature_exec(c, &c.assigns))
            .or_else(|| self.code_channel(c, rules, depth));
        if let Some(o) = why {
            let program = if c.program.is_empty() { "the command" } else { c.program.as_str() };
            let (code, remedy) = if o.evasive {
                (
                    SHELL_HIDDEN_CODE,
                    "run the commands themselves, plainly, so the gate can read them; a human must confirm anything else.",
                )
            } else {
                (
                    SHELL_OPAQUE_CODE,
                    "run plain commands the gate can read (a literal `bash -c '…'`, code that only computes and prints); unattended, it runs only inside loopguard's sandbox.",
                )
            };
            self.findings.push(
                Finding::new(
                    code,
                    Verdict::Ask,
                    RiskLevel::High,
                    format!("`{program}` runs code the analysis cannot see into: {}.", o.why),
                )
                .with_remedy(remedy),
            );
        }
    }

    const SKIP: &'static [&'static str] = &[
        "gh",
        "git",
        "logger",
        "notify-send",
        "sed",
        "gsed",
        "jq",
        "yq",
        "curl",
        "wget",
        "http",
        "https",
        "mail",
        "mailx",
        "sendmail",
        "ssh",
        "scp",
        "sftp",
        "mosh",
        "hub",
        "glab",
        "jira",
        "slack",
        "say",
        "cowsay",
        "figlet",
        "tput",
        "date",
        "expr",
        "bc",
        "dc",
        "loopguard",
        "kubectl",
        "helm",
        "aws",
        "gcloud",
        "az",
        "terraform",
        "tofu",
        "npm",
        "pnpm",
        "yarn",
        "cargo",
        "make",
        "go",
        "python3",
        "python",
        "node",
        "docker",
        "podman",
        "xargs",
        "find",
        // Encoders, hashes and text filters: they transform their input, never run it.
        "base64",
        "base32",
        "basenc",
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "sum",
        "xxd",
        "od",
        "hexdump",
        "uniq",
        "nl",
        "fold",
        "fmt",
        "column",
        "rev",
        "tac",
        "iconv",
        "strings",
        "comm",
        "paste",
        "expand",
        "unexpand",
        "shuf",
    ];

    // Exec primitives of the mini-languages programs embed (m4 `esyscmd`, awk-likes
    // `system(`, Clojure `shell`, Lua `os.execute`): whatever string they are given runs.
    const EXEC_PRIMITIVES: &'static [&'static str] = &[
        "esyscmd",
        "syscmd",
        "system(",
        "os.execute",
        "process/shell",
        "popen(",
        "(shell ",
        "shell-command",
        "run-program",
        "io.popen",
        "exec(",
    ];

    /// Commands carried inside another program's arguments or stdin text, where the analysis
    /// does not know the program runs them (`split --filter='rm -rf ~'`, `gdb --ex='shell …'`,
    /// `ed f <<< '!rm -rf ~'`, `sqlite3 … '.shell …'`): every suffix of such a string, from
    /// each word on, is analysed as a command; one the gate would deny makes the call hidden
    /// code (asked: the string may only be data). Programs whose strings are data (messages,
    /// patterns, payloads) and shells/interpreters (analysed as code already) are skipped.
    fn embedded(&mut self, c: &Command, rules: Knowledge<'_>, depth: usize) {
        let p = c.program.as_str();
        if unwrap::DATA_PROGRAMS_PUB.contains(&p)
            || Self::SKIP.contains(&p)
            || programs::SHELLS.contains(&p)
            || effects::is_interpreter(p)
            || p.is_empty()
        {
            return;
        }
        let mut texts: Vec<&str> = c
            .args
            .iter()
            .filter(|w| !w.dynamic)
            .map(|w| {
                w.text.as_str().split_once('=').filter(|(o, _)| o.starts_with('-')).map_or(w.text.as_str(), |(_, v)| v)
            })
            .filter(|t| (t.contains(' ') || t.contains('(')) && t.len() <= 1024)
            .collect();
        let piped = c.stdin_from.first().and_then(opaque::literal_text);
        texts.extend(c.stdin_text.as_deref());
        texts.extend(piped.as_deref());
        if let Some(prim) = Self::EXEC_PRIMITIVES.iter().find(|prim| texts.iter().any(|t| t.contains(**prim))) {
            self.hidden(
                format!("`{p}` is given code that runs commands (`{prim}`)."),
                "run the command itself, plainly, so the gate can decide it.",
            );
            return;
        }
        let mut budget = 32;
        for text in texts {
            for line in text.lines().take(16) {
                let cleaned: String = line
                    .chars()
                    .map(|ch| {
                        if matches!(ch, '{' | '}' | '(' | ')' | '[' | ']' | '"' | '\'' | '`' | '!' | ',') {
                            ' '
                        } else {
                            ch
                        }
                    })
                    .collect();
                let words: Vec<usize> = std::iter::once(0)
                    .chain(cleaned.char_indices().filter(|(i, ch)| *i > 0 && ch.is_whitespace()).map(|(i, _)| i + 1))
                    .filter(|i| *i < cleaned.len())
                    .collect();
                for start in words.into_iter().take(12) {
                    let suffix = cleaned[start..].trim();
                    if suffix.is_empty() || !suffix.contains(' ') {
                        continue;
                    }
                    budget -= 1;
                    if budget == 0 {
                        return;
                    }
                    let r = analyze_at(suffix, self.cwd(), self.ctx, rules, self.paths, depth + 2);
                    // (A glob in data — `SELECT * FROM t` — is no evidence of a secret read.)
                    let glob = suffix.contains(['*', '?']);
                    if let Some(f) = r.findings.iter().find(|f| {
                        f.verdict == Verdict::Deny
                            && f.code != SHELL_UNPARSABLE
                            && f.code != SHELL_TOO_LARGE
                            && !(glob && f.code == CREDENTIAL_READ)
                    }) {
                        self.hidden(
                            format!(
                                "`{p}` is given a command the gate would deny (`{}`: {}).",
                                suffix.chars().take(80).collect::<String>(),
                                f.message.trim_end_matches('.')
                            ),
                            "run that command plainly, so the gate can decide it; a human must confirm anything else.",
                        );
                        return;
                    }
                }
            }
        }
    }

    /// A package runner: the workspace's own installed tool (`node_modules/.bin/NAME` exists) is
    /// the workspace's code; anything it would download is not.
    fn package_runner(&mut self, c: &Command) -> Option<opaque::Opaque> {
        let (why, local) = opaque::package_runner(c)?;
        let installed = local.filter(|n| !n.is_empty() && !n.contains("..")).is_some_and(|n| {
            self.cwd()
                .ancestors()
                .take_while(|d| d.starts_with(self.workspace()))
                .any(|d| d.join("node_modules/.bin").join(&n).exists())
        });
        Some(if installed {
            opaque::Opaque::ws(why)
        } else {
            // It downloads what it runs: the network is its need (once a human allows it).
            self.fetches = true;
            opaque::Opaque::ev(format!("{why}, and it is not installed in the workspace"))
        })
    }

    /// Where a shell's or an interpreter's code comes from, and whether it is understood.
    fn code_channel(&mut self, c: &Command, rules: Knowledge<'_>, depth: usize) -> Option<opaque::Opaque> {
        let p = c.program.as_str();
        if matches!(p, "source" | ".") {
            let w = c.args.first()?;
            return self.script_file(w, Some(opaque::Lang::Shell), rules, depth);
        }
        if shell_like(c, p) {
            return self.stdin_code(c, opaque::Lang::Shell, rules, depth).or_else(|| {
                (c.stdin_text.is_some() || !c.stdin_from.is_empty())
                    .then(|| opaque::Opaque::ev(format!("`{p}` starts a shell that reads its commands from stdin")))
            });
        }
        if let std::ops::ControlFlow::Break(answer) = stdin_repl(c, p) {
            return answer;
        }
        if programs::SHELLS.contains(&p)
            && c.redirects.iter().any(|r| {
                r.kind == RedirectKind::Dup
                    && r.target.text.chars().all(|ch| ch.is_ascii_digit())
                    && r.target.text != "1"
                    && r.target.text != "2"
            })
        {
            return Some(opaque::Opaque::ev(format!(
                "`{p}` reads its commands from a duplicated descriptor (a pipe or socket)"
            )));
        }
        let is_shell = programs::SHELLS.contains(&p);
        if !is_shell && !effects::is_interpreter(p) {
            return self.path_program(c, rules, depth);
        }
        let lang = opaque::Lang::of_program(p).unwrap_or(opaque::Lang::Other);
        if is_shell {
            return self.shell_channel(c, lang, rules, depth);
        }
        // bun and deno are tools first: only `run`/`serve` of a file runs a script.
        if matches!(p, "bun" | "deno")
            && effects::inline_code_index(c).is_none()
            && let std::ops::ControlFlow::Break(answer) = self.bun_deno(c, lang, rules, depth)
        {
            return answer;
        }
        // Interpreters. Libraries loaded from the options come first.
        if let Some(lib) = effects::interpreter_libraries(c).into_iter().find(|l| !opaque::library_is_plain(lang, l)) {
            return Some(opaque::Opaque::ev(format!("it loads the library `{lib}` from its options")));
        }
        if let Some(k) =
            c.args.iter().position(|a| a.text == "-m").filter(|_| effects::interpreter_code_arg(c).is_none())
        {
            return self.python_module(c, p, k, rules, depth);
        }
        if let Some(o) = self.foreign_libraries(c, p) {
            return Some(o);
        }
        if lang == opaque::Lang::Python
            && let Some(o) = self.shadowed_module(c)
        {
            return Some(o);
        }
        let inline = effects::inline_code_index(c);
        match (inline, effects::interpreter_code_arg(c)) {
            (Some(i), _) => {
                let w = c.args.get(i)?;
                if w.dynamic {
                    return Some(opaque::Opaque::ev("its inline code is only known at run time"));
                }
                self.plain_code(p, lang, &w.text, "its inline code", None)
            }
            (None, Some(i)) => {
                let w = c.args.get(i)?;
                if unwrap::is_stdin_path(&w.text) {
                    self.stdin_code(c, lang, rules, depth)
                } else {
                    self.script_file(w, Some(lang), rules, depth)
                }
            }
            (None, None) if c.dynamic_operands => Some(opaque::Opaque::ev("it runs scripts named at run time")),
            (None, None) => self.stdin_code(c, lang, rules, depth),
        }
    }

    /// A shell's channel: a startup file, its `-c` script (analysed when it was unwrapped), a
    /// script file (and what arrives on its stdin), or stdin.
    fn shell_channel(
        &mut self,
        c: &Command,
        lang: opaque::Lang,
        rules: Knowledge<'_>,
        depth: usize,
    ) -> Option<opaque::Opaque> {
        if let Some(f) = unwrap::shell_startup_file(c) {
            return Some(opaque::Opaque::ev(format!("it reads the startup file `{}`", f.text)));
        }
        if let Some(script) = unwrap::shell_script_arg(c) {
            // The script itself was unwrapped and analysed; a script built at run time was not.
            return (script.dynamic || script.subst.is_some())
                .then(|| opaque::Opaque::ev("its `-c` script is only known at run time"));
        }
        if c.args.iter().any(|a| {
            a.text.len() > 1 && a.text.starts_with('-') && !a.text.starts_with("--") && a.text[1..].contains('n')
        }) {
            return None; // `-n`: read and check the script, run nothing.
        }
        match unwrap::shell_script_file(c) {
            Some(w) if unwrap::is_stdin_path(&w.text) => self.stdin_code(c, lang, rules, depth),
            Some(w) => {
                // What arrives on stdin may be handed to a shell by the script (`sh` inside it).
                if let Some(text) = c.stdin_text.clone().or_else(|| c.stdin_from.first().and_then(opaque::literal_text))
                    && depth < MAX_DEPTH
                {
                    let r = analyze_at(&text, self.cwd(), self.ctx, rules, self.paths, depth + 1);
                    self.absorb(r);
                } else if !c.stdin_from.is_empty() {
                    return Some(opaque::Opaque::ev("a script runs with code-like input arriving on its stdin"));
                }
                self.script_file(w, Some(lang), rules, depth)
            }
            None if c.dynamic_operands => Some(opaque::Opaque::ev("it runs scripts named at run time")),
            None => self.stdin_code(c, lang, rules, depth),
        }
    }

    /// bun and deno: `run`/`serve` of a file runs a script; other subcommands run none; `eval`
    /// and no subcommand go on as an interpreter.
    fn bun_deno(
        &mut self,
        c: &Command,
        lang: opaque::Lang,
        rules: Knowledge<'_>,
        depth: usize,
    ) -> std::ops::ControlFlow<Option<opaque::Opaque>> {
        use std::ops::ControlFlow;
        let ops: Vec<&Word> = c.args.iter().filter(|a| !a.text.starts_with('-')).collect();
        match ops.first().map(|w| w.text.as_str()) {
            Some("run" | "serve") => {
                let file = ops.get(1).filter(|w| {
                    w.text.contains('/')
                        || [".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx"].iter().any(|x| w.text.ends_with(x))
                });
                ControlFlow::Break(file.and_then(|w| self.script_file(w, Some(lang), rules, depth)))
            }
            Some("eval" | "-e") | None => ControlFlow::Continue(()),
            Some(_) => ControlFlow::Break(None),
        }
    }

    /// `python3 -m MODULE`: an installed module, like running a program — unless the module
    /// evaluates its arguments, serves files, or is found in a directory outside the workspace
    /// or written in this line.
    fn python_module(
        &mut self,
        c: &Command,
        p: &str,
        k: usize,
        rules: Knowledge<'_>,
        depth: usize,
    ) -> Option<opaque::Opaque> {
        // `python3 -m MODULE`: an installed module, like running a program — unless the module
        // evaluates its arguments, serves files, or is found in a directory outside the
        // workspace or written in this line.
        let module = c.args.get(k + 1).map_or("", |w| w.text.as_str());
        let top = module.split('.').next().unwrap_or(module);
        if top == "timeit" {
            // Its arguments (and `-s` setup) are Python statements: read them as such.
            let snippets: Vec<&Word> =
                c.args.iter().skip(k + 2).filter(|w| !w.text.starts_with('-') || w.text.contains(' ')).collect();
            if snippets.iter().any(|w| w.dynamic) {
                return Some(opaque::Opaque::ev("`python -m timeit` runs code built at run time"));
            }
            let code = snippets.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join("\n");
            return self.plain_code(p, opaque::Lang::Python, &code, "its timed code", Some((rules, depth)));
        }
        if matches!(
            top,
            "IPython"
                | "code"
                | "runpy"
                | "pdb"
                | "cProfile"
                | "profile"
                | "trace"
                | "doctest"
                | "site"
                | "pydoc"
                | "idlelib"
                | "webbrowser"
                | "smtpd"
                | "xmlrpc"
        ) {
            return Some(opaque::Opaque::ev(format!(
                "`python -m {module}` runs code or serves files from its arguments"
            )));
        }
        if !self.cwd_known || !self.cwd().starts_with(self.workspace()) {
            return Some(opaque::Opaque::ev(format!(
                "`python -m {module}` finds `{module}` in a directory outside the workspace"
            )));
        }
        let local = self.cwd().join(format!("{top}.py"));
        if self.predicted.contains(&local) || self.predicted.contains(&self.cwd().join(top)) {
            return Some(opaque::Opaque::ev(format!(
                "`python -m {module}` runs `{top}`, written earlier in this command line"
            )));
        }
        for w in c.args.iter().skip(k + 2).filter(|w| !w.text.starts_with('-')) {
            let t = w.text.as_str();
            if t.contains("://") || t.starts_with("git+") {
                return Some(opaque::Opaque::ev(format!("`python -m {module}` installs or runs code from `{t}`")));
            }
            if (t.starts_with('/') || t.starts_with('~') || t.starts_with(".."))
                && resolve_under(self.cwd(), Path::new(t)).map_or(true, |q| !q.starts_with(self.workspace()))
            {
                return Some(opaque::Opaque::ev(format!("`python -m {module}` is given `{t}`, outside the workspace")));
            }
        }
        local.exists().then(|| opaque::Opaque::ws(format!("`python -m {module}` runs the workspace's `{top}.py`")))
    }

    /// Library search paths outside the workspace (`perl -I/tmp/x`, `ruby -I …`), perl's
    /// debugger modules and code extraction (`-d:Mod`, `-x`).
    fn foreign_libraries(&self, c: &Command, p: &str) -> Option<opaque::Opaque> {
        for (k, w) in c.args.iter().enumerate() {
            let t = w.text.as_str();
            let dir = if t == "-I" {
                c.args.get(k + 1).map(|n| n.text.as_str())
            } else {
                t.strip_prefix("-I").filter(|d| !d.is_empty())
            };
            if let Some(d) = dir
                && resolve_under(self.cwd(), Path::new(d)).map_or(true, |q| !q.starts_with(self.workspace()))
            {
                return Some(opaque::Opaque::ev(format!("it loads libraries from `{d}`, outside the workspace")));
            }
            if matches!(p, "perl" | "perl5") && (t.starts_with("-d") || t.starts_with("-x")) {
                return Some(opaque::Opaque::ev(format!("`perl {t}` runs a debugger module or extracts code")));
            }
        }
        None
    }

    /// A module the inline Python imports that a file in the working directory (there, or
    /// written in this line) shadows.
    fn shadowed_module(&self, c: &Command) -> Option<opaque::Opaque> {
        let code = effects::inline_code_index(c).and_then(|i| c.args.get(i)).map(|w| w.text.clone())?;
        for line in code.lines() {
            let l = line.trim();
            let names: Vec<&str> = if let Some(r) = l.strip_prefix("import ") {
                r.split(',').filter_map(|m| m.split_whitespace().next()).collect()
            } else if let Some(r) = l.strip_prefix("from ") {
                r.split_whitespace().next().into_iter().collect()
            } else {
                continue;
            };
            for m in names
                .iter()
                .map(|m| m.split('.').next().unwrap_or(m))
                .flat_map(|m| m.split(';'))
                .filter(|m| !m.is_empty())
            {
                let f = self.cwd().join(format!("{m}.py"));
                if f.exists() || self.predicted.contains(&f) {
                    return Some(opaque::Opaque::ev(format!("`{m}` is shadowed by `{m}.py` in the working directory")));
                }
            }
        }
        None
    }

    /// Interpreter code checked by the positive rule; its literal reads are checked as reads.
    /// Code that did not come as inline code (stdin, a script file) also has its shell-outs
    /// analysed here, as inline code's are by [`Self::nested`].
    fn plain_code(
        &mut self,
        program: &str,
        lang: opaque::Lang,
        code: &str,
        what: &str,
        shell_outs: Option<(Knowledge<'_>, usize)>,
    ) -> Option<opaque::Opaque> {
        if let Some((rules, depth)) = shell_outs.filter(|(_, d)| *d < MAX_DEPTH) {
            for script in inline_shell_commands(code) {
                let r = analyze_at(&script, self.cwd(), self.ctx, rules, self.paths, depth + 1);
                self.absorb(r);
            }
        }
        // Code that writes a file that runs later may put any of its text there.
        for p in opaque::literal_writes(code) {
            if let Ok(path) = self.resolve_here(&p) {
                self.later_code(&path, code);
            }
        }
        // A URL spelled in the code is a request the code may make: internal ones are refused
        // whatever the code does with them.
        for url in opaque::literal_urls(code) {
            if let Ok(Some(i)) = crate::checks::ssrf::check_url(&url) {
                self.findings.push(crate::checks::ssrf::finding(&format!("`{program}` code"), &url, &i));
            }
        }
        match opaque::check_code(lang, code) {
            Ok(paths) => {
                for (p, write) in paths {
                    if write {
                        let found = self.paths.check_resolved(
                            &p,
                            self.resolve_here(&p),
                            &format!("`{program}` writes"),
                            Access::Write,
                        );
                        self.findings.extend(found);
                    } else {
                        self.read(program, &p, false);
                    }
                }
                None
            }
            Err(o) => {
                // Literal write targets are checked even when the code is not understood.
                for p in opaque::literal_writes(code) {
                    let found = self.paths.check_resolved(
                        &p,
                        self.resolve_here(&p),
                        &format!("`{program}` writes"),
                        Access::Write,
                    );
                    self.findings.extend(found);
                }
                Some(opaque::Opaque { why: format!("{what} is not plain computation ({})", o.why), ..o })
            }
        }
    }

    /// Code a shell or interpreter reads from stdin: a heredoc or here-string and `echo`/`printf`
    /// of literal text are read; anything else piped or redirected in is not.
    fn stdin_code(
        &mut self,
        c: &Command,
        lang: opaque::Lang,
        rules: Knowledge<'_>,
        depth: usize,
    ) -> Option<opaque::Opaque> {
        let text = match (&c.stdin_text, c.stdin_from.first()) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(h)) => match opaque::literal_text(h) {
                Some(t) => Some(t),
                None => return Some(opaque::Opaque::ev(format!("its code arrives on stdin from `{}`", h.program))),
            },
            (None, None) => None,
        };
        if let Some(text) = text {
            if lang == opaque::Lang::Shell {
                // A heredoc was already unwrapped; literal piped text is analysed here.
                if c.stdin_text.is_none() && depth < MAX_DEPTH {
                    let r = analyze_at(&text, self.cwd(), self.ctx, rules, self.paths, depth + 1);
                    self.absorb(r);
                }
                return None;
            }
            return self.plain_code(&c.program, lang, &text, "the code on its stdin", Some((rules, depth)));
        }
        if let Some(r) = c.redirects.iter().rev().find(|r| r.kind == RedirectKind::Read) {
            return self.script_file(&r.target, Some(lang), rules, depth);
        }
        None
    }

    /// A build, test or package tool run after the line downloaded something, or wrote one of
    /// its recipe files with content the analysis does not know.
    fn build_after_download(&self, c: &Command) -> Option<opaque::Opaque> {
        let p = c.program.as_str();
        if !BUILD_TOOLS.contains(&p)
            && !TEST_TOOLS.contains(&p)
            && !matches!(
                p,
                "pip"
                    | "pip3"
                    | "uv"
                    | "poetry"
                    | "bundle"
                    | "rake"
                    | "just"
                    | "task"
                    | "composer"
                    | "pre-commit"
                    | "direnv"
            )
        {
            return None;
        }
        if self.downloaded {
            return Some(opaque::Opaque::ev(format!("`{p}` runs after this command line downloaded code or recipes")));
        }
        self.recipe_written.as_ref().map(|r| {
            opaque::Opaque::ev(format!("`{p}` runs recipes from `{}`, which this command line wrote", r.display()))
        })
    }

    /// Build tools reading their recipes from outside the workspace (`make -C /tmp/x`, `make -f
    /// /tmp/evil.mk`, `ninja -f …`, `cmake -P …`, `just -f …`): someone else's code.
    fn foreign_recipes(&self, c: &Command) -> Option<opaque::Opaque> {
        let p = c.program.as_str();
        if !(BUILD_TOOLS.contains(&p) || TEST_TOOLS.contains(&p) || RECIPE_TOOLS.contains(&p)) {
            return None;
        }
        let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
        if texts.iter().any(|t| {
            t.starts_with("SHELL=")
                || t.starts_with("SHELL:=")
                || t.starts_with(".SHELLFLAGS")
                || t.starts_with("exec:")
        }) {
            return Some(opaque::Opaque::ev(format!("`{p}` is told to run another program (`SHELL=`, `exec:`)")));
        }
        (0..texts.len()).find_map(|i| self.foreign_operand(c, p, &texts, i))
    }

    /// Word `i` of a build or install tool: code from a remote source, or a path outside the
    /// workspace where it may find recipes or code to run.
    fn foreign_operand(&self, c: &Command, p: &str, texts: &[&str], i: usize) -> Option<opaque::Opaque> {
        let t = texts[i];
        // An npm registry is where packages come from, not a package (`npm view x --registry
        // URL`); what is installed is named by the other words. (pip's index options stay:
        // a package index of one's own choosing is how a look-alike package gets in.)
        let prev = i.checked_sub(1).map_or("", |k| texts[k]);
        let registry = |o: &str| o == "--registry" && matches!(p, "npm" | "pnpm" | "yarn" | "bun");
        if registry(prev) || t.split_once('=').is_some_and(|(o, _)| registry(o)) {
            return None;
        }
        // Any path the tool is given — an operand, an option's value — outside the workspace:
        // recipes, manifests, init scripts, tests or packages someone else wrote.
        let value = match t.split_once('=') {
            Some((o, v)) if o.starts_with('-') => v.split_once('=').map_or(v, |(_, x)| x),
            _ if !t.starts_with('-') => t,
            _ => return None,
        };
        let remote = value.contains("://")
            || value.starts_with("git+")
            || value.starts_with("github:")
            || value.starts_with("gitlab:");
        if remote && REMOTE_INSTALLERS.contains(&p) {
            return Some(opaque::Opaque::ev(format!("`{p}` installs or runs code from `{value}`")));
        }
        if !(value.starts_with('/') || value.starts_with('~') || value.starts_with(".."))
            || value.starts_with("/dev/null")
        {
            return None;
        }
        let outside = match resolve_under(self.cwd(), Path::new(value)) {
            Ok(q) => !q.starts_with(self.workspace()),
            Err(_) => true,
        };
        if outside || c.args.get(i).is_some_and(|w| w.dynamic) {
            return Some(opaque::Opaque::ev(format!(
                "`{p}` is given `{value}`, outside the workspace, where it may find recipes or code to run"
            )));
        }
        None
    }

    /// A program run by path (`./x`, `scripts/x`, `/tmp/x`): outside the system's program
    /// directories it is a script (or a build output) of the workspace or worse.
    fn path_program(&mut self, c: &Command, rules: Knowledge<'_>, depth: usize) -> Option<opaque::Opaque> {
        if !c.program_path.contains('/') {
            return None;
        }
        const SYSTEM: &[&str] = &["/usr/", "/bin/", "/sbin/", "/lib", "/opt/", "/nix/", "/snap/", "/etc/"];
        let normal = crate::checks::paths::lexical_join(Path::new("/"), &c.program_path);
        if c.program_path.starts_with('/') && SYSTEM.iter().any(|d| normal.starts_with(d.trim_end_matches('/'))) {
            return None;
        }
        let w = Word { text: c.program_path.clone(), dynamic: c.dynamic_program, quoted: false, subst: None };
        self.script_file(&w, None, rules, depth)
    }

    /// A script file run by a shell, an interpreter, `source` or by path: read and analysed as
    /// what it is when it lies in the workspace, is small and was not written earlier in this
    /// command line; anything else is not understood.
    fn script_file(
        &mut self,
        w: &Word,
        lang: Option<opaque::Lang>,
        rules: Knowledge<'_>,
        depth: usize,
    ) -> Option<opaque::Opaque> {
        const MAX_SCRIPT: u64 = 64 * 1024;
        let name = &w.text;
        if w.dynamic {
            return Some(opaque::Opaque::ev(format!("it runs `{name}`, a script only known at run time")));
        }
        if self.unknown_base(name) {
            return Some(opaque::Opaque::ev(format!(
                "it runs `{name}`, relative to a directory only known at run time"
            )));
        }
        let Ok(path) = self.resolve_here(name) else {
            return Some(opaque::Opaque::ev(format!("the script `{name}` cannot be resolved")));
        };
        if let Some((_, text)) = self.written_text.iter().find(|(q, _)| *q == path).cloned() {
            // Written a moment ago with literal text: analyse that text, as it will run. A script
            // written and run in one line is ordinary work (`cat > t.py <<EOF … EOF && python3
            // t.py`): what the analysis cannot follow in it runs confined like the workspace's own.
            let lang = lang.or_else(|| opaque::Lang::of_shebang(&text)).unwrap_or(opaque::Lang::Shell);
            return self.known_script(name, &text, lang, rules, depth);
        }
        if self.fetched.contains(&path) {
            return Some(opaque::Opaque::ev(format!("it runs `{name}`, downloaded earlier in this command line")));
        }
        if self.predicted.contains(&path) {
            return Some(opaque::Opaque::ws(format!("it runs `{name}`, written earlier in this command line")));
        }
        if path.starts_with("/dev/") || path.starts_with("/proc/") {
            return Some(opaque::Opaque::ev(format!("it runs `{name}`, which is not a file the analysis can read")));
        }
        if !path.starts_with(self.workspace()) {
            return Some(opaque::Opaque::ev(format!("it runs `{name}`, a script outside the workspace")));
        }
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= MAX_SCRIPT => {}
            Ok(m) if m.is_file() => {
                return Some(opaque::Opaque::ws(format!(
                    "the script `{name}` is larger than {} KiB",
                    MAX_SCRIPT / 1024
                )));
            }
            Ok(_) => return Some(opaque::Opaque::ev(format!("`{name}` is not a file"))),
            // Missing now: a build earlier in the line makes it (`cargo build && ./target/debug/app`:
            // the workspace's own program); anything else that creates it (an archive, a
            // download, a checkout) is not something the analysis saw.
            Err(_) if self.built && self.build_output(&path) => {
                return Some(opaque::Opaque::ws(format!("`{name}` is built by this command line, then run")));
            }
            Err(_) => return Some(opaque::Opaque::ev(format!("the script `{name}` does not exist or cannot be read"))),
        }
        let Ok(bytes) = std::fs::read(&path) else {
            return Some(opaque::Opaque::ws(format!("the script `{name}` cannot be read")));
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return Some(opaque::Opaque::ws(format!("`{name}` is a compiled program, which the analysis cannot read")));
        };
        if text.contains('\0') {
            return Some(opaque::Opaque::ws(format!("`{name}` is a compiled program, which the analysis cannot read")));
        }
        let lang = match lang {
            Some(l) => l,
            // Run by path: the `#!` line decides; without one the kernel's caller runs it with sh.
            None => opaque::Lang::of_shebang(&text).unwrap_or(opaque::Lang::Shell),
        };
        self.known_script(name, &text, lang, rules, depth)
    }

    /// A script whose text is known, run as `lang`.
    fn known_script(
        &mut self,
        name: &str,
        text: &str,
        lang: opaque::Lang,
        rules: Knowledge<'_>,
        depth: usize,
    ) -> Option<opaque::Opaque> {
        if lang == opaque::Lang::Other {
            return Some(opaque::Opaque::ws(format!(
                "the script `{name}` is in a language the analysis does not read"
            )));
        }
        if lang != opaque::Lang::Shell {
            // The script is the workspace's own or was just written with text the analysis read:
            // what its code does at run time (a command built from values, a dynamic import) is
            // not a channel around the gate but ordinary code the gate cannot follow, and it
            // runs confined like the rest of the workspace's code (issue: scripts written earlier
            // are no reason to stop). Where the script lives is judged by the caller.
            return self
                .plain_code(name, lang, text, &format!("the script `{name}`"), Some((rules, depth)))
                .map(|o| opaque::Opaque { evasive: false, ..o });
        }
        if depth >= MAX_DEPTH {
            return Some(opaque::Opaque::ev(format!("the script `{name}` nests too deeply")));
        }
        let r = analyze_at(text, self.cwd(), self.ctx, rules, self.paths, depth + 1);
        // Denies stand; what would be asked about inside a script is not understood as a whole.
        let asks: Vec<String> = r
            .findings
            .iter()
            .filter(|f| f.verdict == Verdict::Ask)
            .map(|f| f.message.trim_end_matches('.').to_string())
            .collect();
        let mut r = r;
        r.findings.retain(|f| f.verdict != Verdict::Ask);
        self.absorb(r);
        asks.first()
            .map(|m| opaque::Opaque::ws(format!("the script `{name}` does what the analysis would ask about ({m})")))
    }

    /// Whether a path lies in a build tool's usual output directory of the workspace.
    fn build_output(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(self.workspace()) else { return false };
        rel.components().next().and_then(|c| c.as_os_str().to_str()).is_some_and(|first| {
            matches!(
                first,
                "target"
                    | "build"
                    | "dist"
                    | "out"
                    | "bin"
                    | "_build"
                    | ".build"
                    | "node_modules"
                    | "release"
                    | "debug"
            ) || first.starts_with("cmake-build-")
        })
    }

    /// A file this line writes with known text that runs later (a script, a recipe, a hook, a
    /// test fixture, a package manifest): a command inside it that the gate would deny makes the
    /// call hidden code — persistence and booby-traps look like this.
    /// Whether a file runs later: a recipe, hook or configuration a tool runs by itself, or a
    /// script by its extension.
    fn runs_later_file(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        runs_later_path(path, self.workspace())
            || [
                ".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".cmake", ".gradle",
                ".kts", ".ps1", ".lua",
            ]
            .iter()
            .any(|e| name.ends_with(e))
    }

    /// echo/printf text the analysis cannot compute (an escape or a conversion it does not
    /// know), written into a file that runs later.
    fn unread_later_write(&mut self, path: &Path) {
        if !self.runs_later_file(path) {
            return;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        self.hidden(format!(
                    "The command writes into `{name}`, which runs later, text built from escapes or conversions the analysis does not compute."
                ), "write the text plainly (a heredoc or plain words).");
    }

    fn later_code(&mut self, path: &Path, text: &str) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let runs_later = self.runs_later_file(path);
        if !runs_later || text.is_empty() {
            return;
        }
        // Code in a language the positive rule reads, written into a file a tool runs by
        // itself (conftest.py, setup.py, eslint.config.js, …): evasive code is hidden code.
        let lang = match name.rsplit_once('.').map(|(_, e)| e) {
            Some("py") => Some(opaque::Lang::Python),
            Some("js" | "mjs" | "cjs") => Some(opaque::Lang::Js),
            Some("rb") => Some(opaque::Lang::Ruby),
            Some("pl" | "pm") => Some(opaque::Lang::Perl),
            Some("php") => Some(opaque::Lang::Php),
            _ => None,
        };
        if let Some(lang) = lang.filter(|_| runs_later_path(path, self.workspace()))
            && let Err(o) = opaque::check_code(lang, text)
            && o.evasive
        {
            self.hidden(
                format!("The command writes into `{name}`, which a tool runs by itself, code that {}.", o.why),
                "leave scripts, hooks, recipes and configuration that do this to the human.",
            );
            return;
        }
        // The text is read as what the file is: a shell script's (or a recipe's, a hook's) lines
        // are commands, so one that runs code the analysis cannot see into counts; in a file of
        // another language a suffix is only a string or a comment that might reach a shell, so
        // only what the gate would deny counts (`# start at (0, 0)` in Python runs no `at`).
        // The kernel picks the interpreter by the `#!` line, not the name: a `.py` that starts
        // `#!/bin/sh` is a shell script.
        let shell_text = [".sh", ".bash", ".zsh"].iter().any(|e| name.ends_with(e))
            || shell_shebang(text)
            || (runs_later_path(path, self.workspace())
                && !name.rsplit_once('.').is_some_and(|(_, e)| NON_SHELL_EXTENSIONS.contains(&e)));
        if let Some((suffix, message)) = self.deny_in_text(text, shell_text) {
            self.hidden(
                if suffix.is_empty() {
                    format!("The command writes into `{name}`, which runs later, {message}.")
                } else {
                    format!("The command writes into `{name}`, which runs later, `{suffix}` ({message}).")
                },
                "leave scripts, hooks, recipes and configuration that do this to the human.",
            );
        }
    }

    /// The first command inside `text` — any line, any suffix from a word on, with punctuation
    /// that code and configuration wrap commands in (`{}()[]"',!\`, `key =`) taken away — that
    /// the gate would deny (or, with `hidden`, that runs code the analysis cannot see into).
    /// Text too long to try whole is reported either way.
    fn deny_in_text(&self, text: &str, hidden: bool) -> Option<(String, String)> {
        // Every word start of every line is tried. Text too long to try whole is not understood:
        // reported as such (with `hidden`), never passed on a guess — padding must not hide a line.
        // ~40 µs a suffix in a release build: the budget bounds a huge write to ~0.2 s.
        let mut budget = 4096;
        for (n, line) in text.lines().enumerate() {
            if n >= 2048 {
                return Some((String::new(), "too many lines to check".to_string()));
            }
            let line = line.trim_start_matches('\t').trim();
            let line = line
                .split_once(['=', ':'])
                .filter(|(k, _)| !k.trim().contains(' ') && !k.trim().is_empty() && !k.contains('/'))
                .map_or(line, |(_, v)| v);
            let cleaned: String = line
                .chars()
                .map(|ch| {
                    if matches!(ch, '{' | '}' | '(' | ')' | '[' | ']' | '"' | '\'' | '`' | '!' | ',' | '\\') {
                        ' '
                    } else {
                        ch
                    }
                })
                .collect();
            let b = cleaned.as_bytes();
            let starts =
                (0..b.len()).filter(|&i| !b[i].is_ascii_whitespace() && (i == 0 || b[i - 1].is_ascii_whitespace()));
            for start in starts {
                let suffix = cleaned[start..].trim();
                // A suffix starts with a program name: not a URL, an option or a `key:`/`key=`.
                let first = suffix.split_whitespace().next().unwrap_or("");
                if first.is_empty() || first.contains([':', '=']) || first.starts_with('-') {
                    continue;
                }
                budget -= 1;
                if budget == 0 {
                    return Some((String::new(), "too much text to check".to_string()));
                }
                let r = analyze_at(
                    suffix,
                    self.cwd(),
                    self.ctx,
                    Knowledge { commands: &[], packs: self.rules.packs },
                    self.paths,
                    MAX_DEPTH - 3,
                );
                let glob = suffix.contains(['*', '?']);
                if let Some(f) = r.findings.iter().find(|f| {
                    (f.verdict == Verdict::Deny || (hidden && f.code == SHELL_HIDDEN_CODE))
                        && f.code != SHELL_UNPARSABLE
                        && f.code != SHELL_TOO_LARGE
                        && !(glob && f.code == CREDENTIAL_READ)
                }) {
                    return Some((suffix.chars().take(80).collect(), f.message.trim_end_matches('.').to_string()));
                }
            }
        }
        None
    }

    /// Merges a nested analysis into this one.
    fn absorb(&mut self, r: ShellReport) {
        self.network |= r.network;
        self.remote |= r.remote;
        self.fetches |= r.fetches;
        self.required = self.required.max(r.required.unwrap_or(AutonomyLevel::Implement));
        self.predicted.extend(r.predicted_writes);
        self.findings.extend(r.findings);
    }

    fn remote_code(&mut self, p: &str, how: &str) {
        self.findings.push(op_finding(
            SHELL_REMOTE_CODE,
            RiskLevel::Critical,
            format!("`{p}` {how}: code nobody reviewed runs with your privileges."),
        ));
    }

    /// Code inside a command that is not shell: interpreter inline code and ssh remote commands.
    fn nested(&mut self, e: &Effects, rules: Knowledge<'_>, depth: usize) {
        let inline = e.inline_code.as_deref().map(inline_shell_commands).unwrap_or_default();
        {
            for script in inline.iter().chain(&e.local_scripts) {
                let r = analyze_at(script, self.cwd(), self.ctx, rules, self.paths, depth + 1);
                self.network |= r.network;
                self.remote |= r.remote;
                self.fetches |= r.fetches;
                self.required = self.required.max(r.required.unwrap_or(AutonomyLevel::Implement));
                self.findings.extend(r.findings);
            }
        }
        if let Some(remote) = &e.remote_script {
            // Paths on another machine are not ours to confine, but what destroys is still
            // destructive there.
            let anywhere = PathValidator::new([Path::new("/")]);
            let r = analyze_at(remote, Path::new("/"), self.ctx, rules, &anywhere, depth + 1);
            self.findings.extend(
                r.findings.into_iter().filter(|f| f.code != PATH_OUTSIDE_WORKSPACE && f.code != CREDENTIAL_READ),
            );
        }
    }
}

const EXEC: &[&str] = &[
    "system(",
    "getoutput(",
    "getstatusoutput(",
    "execvp(",
    "execlp(",
    "execl(",
    "execv(",
    "spawnlp(",
    "spawnvp(",
    "execFileSync(",
    "execFile(",
    "proc_open(",
    "pcntl_exec(",
    "os.system(",
    "subprocess.run(",
    "subprocess.call(",
    "subprocess.Popen(",
    "check_output(",
    "check_call(",
    "popen(",
    "exec(",
    "execSync(",
    "spawnSync(",
    "spawn(",
    "shell_exec(",
    "passthru(",
    "exec.Command(",
    "os.popen(",
    "Process.spawn(",
    "IO.popen(",
    "%x(",
    "Command::new(",
];

const DELETE: &[&str] = &[
    "rmtree(",
    "rmSync(",
    "rm_rf(",
    "remove_dir_all(",
    "rmdirSync(",
    "unlinkSync(",
    "unlink(",
    "os.remove(",
    "os.rmdir(",
    "File.delete(",
    "fs.rm(",
    "FileUtils.rm_r(",
    "Remove-Item",
    "rimraf(",
    "removedirs(",
    "rmdir(",
];

/// Shell commands hidden in inline interpreter code: strings passed to `system`, `exec`,
/// `subprocess`, `popen`, `execSync`, …; and paths passed to delete APIs (`rmtree`, `rmSync`,
/// `rm_rf`, `remove_dir_all`, `unlink`), as the `rm -rf` they amount to.
pub fn inline_shell_commands(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (markers, delete) in [(EXEC, false), (DELETE, true)] {
        for m in markers {
            let mut from = 0;
            while let Some(i) = code[from..].find(m) {
                let at = from + i + m.len();
                from = at;
                let args = &code[at..];
                let literals = string_literals(args);
                let Some(first) = literals.first() else {
                    continue;
                };
                if delete {
                    let quoted = match first.strip_prefix('~') {
                        Some("") => "~".to_string(),
                        Some(rest) => format!("~{}", sh_quote(rest)),
                        None => sh_quote(first),
                    };
                    out.push(format!("rm -rf -- {quoted}"));
                } else if args.trim_start().starts_with('[') || literals.len() > 1 {
                    // An argv list: ["rm", "-rf", "/"]; exec*p("sh", ["sh", "-c", …]) names the
                    // program, then repeats it as argv[0].
                    let skip = usize::from(literals.len() > 1 && literals.first() == literals.get(1));
                    out.push(literals.iter().skip(skip).map(|l| sh_quote(l)).collect::<Vec<_>>().join(" "));
                } else {
                    out.push(first.clone());
                }
            }
        }
    }
    // Backticks run a shell in perl, ruby and php.
    if code.contains('`') {
        for (i, part) in code.split('`').enumerate() {
            if i % 2 == 1 && !part.is_empty() {
                out.push(part.to_string());
            }
        }
    }
    out.truncate(64);
    out
}

/// The string literals at the start of an argument list, up to the closing parenthesis.
fn string_literals(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = args.chars().peekable();
    let mut depth = 0i32;
    while let Some(c) = chars.next() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' if depth == 0 => break,
            ')' | ']' => depth -= 1,
            '"' | '\'' => {
                let mut s = String::new();
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        if let Some(e) = chars.next() {
                            s.push(e);
                        }
                    } else if d == c {
                        break;
                    } else {
                        s.push(d);
                    }
                }
                out.push(s);
                if out.len() >= 32 {
                    break;
                }
            }
            _ => {}
        }
    }
    out
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Text that holds a command substitution inside an array subscript, in a line with a context that
/// evaluates text as arithmetic or as a variable reference (`$((x))`, `(( ))`, `let`, `[[ -eq ]]`,
/// `test -v`, `printf -v`, `declare -i|-n`, `${!x}`, `${s:x}`, `$[x]`, `read`): bash runs the
/// substitution. Spacing, split quoting and `\x24` spellings are folded first.
fn arithmetic_injection(cmd: &str) -> bool {
    let folded: String = cmd
        .replace("''", "")
        .replace("\\x24", "$")
        .replace("\\044", "$")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let subscript_subst = ["[$(", "[`", "[${", "+$(", "-$(", "*$(", ",$(", "($("].iter().any(|m| folded.contains(m))
        && folded.contains('[');
    let arithmetic = [
        "$((",
        "((",
        "let",
        "-eq",
        "-ne",
        "-lt",
        "-le",
        "-gt",
        "-ge",
        "-v",
        "printf-v",
        "declare-i",
        "declare-n",
        "local-n",
        "typeset-i",
        "${!",
        "$[",
        "read",
        "${",
    ]
    .iter()
    .any(|m| folded.contains(m));
    subscript_subst && arithmetic
}

/// The shell functions a command line defines (`f() { …; }`, `function f { …; }`), with their
/// bodies when the braces can be matched.
fn defined_functions(cmd: &str) -> Vec<(String, Option<String>)> {
    let body_at = |from: usize| -> Option<String> {
        let rest = cmd.get(from..)?;
        let open = rest.find('{')?;
        if !rest[..open].trim().is_empty() && rest[..open].trim() != "()" {
            return None;
        }
        let mut depth = 0usize;
        for (i, ch) in rest[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(rest[open + 1..open + i].to_string());
                    }
                }
                _ => {}
            }
        }
        None
    };
    let mut out = Vec::new();
    if !cmd.contains("()") && !cmd.contains("function") {
        return out;
    }
    let b = cmd.as_bytes();
    for (at, _) in cmd.match_indices("()") {
        let name: String = cmd[..at]
            .trim_end()
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty() && cmd[at + 2..].trim_start().starts_with(['{', '(']) {
            out.push((name, body_at(at + 2)));
        }
    }
    for (at, _) in cmd.match_indices("function ") {
        if at == 0 || !b[at - 1].is_ascii_alphanumeric() {
            let after = cmd[at + 9..].trim_start();
            let name: String =
                after.chars().take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')).collect();
            if !name.is_empty() {
                let from = cmd.len() - after.len() + name.len();
                out.push((name, body_at(from)));
            }
        }
    }
    out
}

/// `:(){ :|:& };:` and the same with any name.
fn is_fork_bomb(cmd: &str) -> bool {
    if !cmd.contains('(') || !cmd.contains('{') {
        return false;
    }
    let squeezed: String = cmd.chars().filter(|c| !c.is_whitespace()).collect();
    let mut from = 0;
    while let Some(i) = squeezed[from..].find("(){") {
        let at = from + i;
        let name: String = squeezed[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let body = &squeezed[at + 3..];
        if !name.is_empty()
            && (body.starts_with(&format!("{name}|{name}&"))
                || body.starts_with(&format!("{name}|{name};"))
                || body.starts_with(&format!("{name}&{name}&")))
        {
            return true;
        }
        from = at + 3;
    }
    false
}

/// The branch checked out in the repository around `cwd`, read from `.git/HEAD`.
fn read_current_branch(cwd: &Path) -> Option<String> {
    let top = cwd.ancestors().find(|d| d.join(".git").exists())?;
    let dot_git = top.join(".git");
    let git_dir = if dot_git.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let rel = text.trim().strip_prefix("gitdir:")?.trim().to_string();
        top.join(rel)
    } else {
        dot_git
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    head.trim().strip_prefix("ref: refs/heads/").map(String::from)
}

/// What a glob in the last component of `raw` matches now, relative to `cwd` (at most 256
/// entries looked at; dot files included, which only errs towards more findings).
fn expand_glob(cwd: &Path, raw: &str) -> Vec<PathBuf> {
    let (dir, pat) = match raw.rsplit_once('/') {
        Some((d, p)) => (if d.is_empty() { "/" } else { d }, p),
        None => (".", raw),
    };
    if dir.contains(['*', '?', '[']) || pat.is_empty() {
        return Vec::new();
    }
    let Ok(m) = globset::GlobBuilder::new(pat).literal_separator(true).build().map(|g| g.compile_matcher()) else {
        return Vec::new();
    };
    let Ok(base) = resolve_under(cwd, Path::new(dir)) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(&base) else { return Vec::new() };
    entries
        .take(256)
        .filter_map(Result::ok)
        .filter(|e| m.is_match(e.file_name()))
        .map(|e| base.join(e.file_name()))
        .take(16)
        .collect()
}

/// One level of brace expansion (`.gi{t,}` → `.git`, `.gi`; `{a,b}/c` → `a/c`, `b/c`), at most 32
/// words; a word without a `{…,…}` is itself.
fn expand_braces(t: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (t.find('{'), t.rfind('}')) else { return vec![t.to_string()] };
    if close < open || !t[open..close].contains(',') {
        return vec![t.to_string()];
    }
    let (pre, inner, post) = (&t[..open], &t[open + 1..close], &t[close + 1..]);
    inner.split(',').take(32).map(|alt| format!("{pre}{alt}{post}")).collect()
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

/// Whether a jq filter calls the `env` builtin (not a field `.env`, a string or a longer name).
fn jq_env_builtin(filter: &str) -> bool {
    let b = filter.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    filter.match_indices("env").any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| b[j]);
        let after = b.get(i + 3).copied();
        !before.is_some_and(|c| word(c) || c == b'.' || c == b'$' || c == b'"')
            && !after.is_some_and(|c| word(c) || c == b'"')
    })
}

/// Tools besides the build and test tools that read recipes, manifests or code of their own.
const RECIPE_TOOLS: &[&str] = &[
    "just",
    "rake",
    "task",
    "tox",
    "nox",
    "pre-commit",
    "composer",
    "ant",
    "bundle",
    "samu",
    "scons",
    "bazel",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "pipx",
    "gem",
    "nix",
    "nix-shell",
    "jupyter",
    "java",
    "kotlinc",
    "tcc",
    "dotnet",
    "deno",
    "bun",
    "node",
    "Rscript",
];

/// Installers that fetch and run code from a URL or a repository they are given.
const REMOTE_INSTALLERS: &[&str] =
    &["pip", "pip3", "pipx", "uv", "npm", "pnpm", "yarn", "bun", "gem", "nix", "go", "cargo", "deno", "poetry"];

/// A plain reader, fetcher or archiver given a file whose name is only known at run time.
fn reads_dynamic_file(c: &Command) -> bool {
    !matches!(c.program.as_str(), "echo" | "printf" | "test" | "[" | "[[" | "cd" | "export" | "local" | "declare")
        && (c.dynamic_operands || c.args.iter().enumerate().any(|(k, w)| dynamic_file_word(c, k, w)))
        && (programs::FETCHERS.contains(&c.program.as_str())
            || matches!(
                c.program.as_str(),
                "cat"
                    | "head"
                    | "tail"
                    | "base64"
                    | "base32"
                    | "xxd"
                    | "od"
                    | "sort"
                    | "tar"
                    | "zip"
                    | "gzip"
                    | "nc"
                    | "curl"
                    | "wget"
            ))
}

/// `sudo -s`, `sudo -i`, `doas -s`, `su`/`runuser` without `-c`, `script` without `-c`: a shell
/// that reads its commands from stdin.
fn shell_like(c: &Command, p: &str) -> bool {
    match p {
        "sudo" | "doas" => {
            c.args.iter().any(|a| {
                matches!(a.text.as_str(), "-s" | "-i" | "--shell" | "--login")
                    || (a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && (a.text.contains('s') || a.text.contains('i')))
            }) && !c.args.iter().any(|a| !a.text.starts_with('-'))
        }
        "su" | "runuser" | "sudo-su" => !c.args.iter().any(|a| matches!(a.text.as_str(), "-c" | "--command")),
        "script" => !c.args.iter().any(|a| {
            a.text == "-c"
                || a.text == "--command"
                || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c'))
        }),
        _ => false,
    }
}

/// Programs that run the commands on their stdin (`ed`'s `!`, `sqlite3 .shell`, `psql \\!`,
/// `gdb shell`, `ftp !`): fed by anything but literal text, what they run is unknown. `Break`
/// answers for the channel; `Continue`: not such a program, or fed plainly.
fn stdin_repl(c: &Command, p: &str) -> std::ops::ControlFlow<Option<opaque::Opaque>> {
    use std::ops::ControlFlow;
    if !(matches!(
        p,
        "ed" | "red"
            | "ex"
            | "gdb"
            | "lldb"
            | "sqlite3"
            | "psql"
            | "mysql"
            | "mariadb"
            | "ftp"
            | "lftp"
            | "bc"
            | "nslookup"
            | "telnet"
            | "tclsh"
            | "expect"
            | "ghci"
            | "irb"
            | "gnuplot"
            | "octave"
    ) || (matches!(p, "vim" | "vi" | "nvim")
        && c.args.iter().any(|a| a.text.starts_with("-e") || a.text == "-s" || a.text == "-es")))
    {
        return ControlFlow::Continue(());
    }
    if let Some(h) = c.stdin_from.first()
        && opaque::literal_text(h).is_none()
    {
        return ControlFlow::Break(Some(opaque::Opaque::ev(format!(
            "`{p}` runs commands that arrive on its stdin from `{}`",
            h.program
        ))));
    }
    if c.redirects.iter().any(|r| r.kind == RedirectKind::Read && (r.target.dynamic || r.target.subst.is_some())) {
        return ControlFlow::Break(Some(opaque::Opaque::ev(format!(
            "`{p}` runs commands from a stream built at run time"
        ))));
    }
    if p == "sftp" || p == "ftp" {
        return ControlFlow::Break(None);
    }
    ControlFlow::Continue(())
}

const HIDDEN_REMEDY: &str = "leave this to the human, or do it inside the workspace.";

/// Whether a short option (or its letter inside a cluster: `-rf` has `-f`) is present.
fn has_opt(texts: &[&str], f: &str) -> bool {
    texts
        .iter()
        .any(|t| *t == f || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(f.trim_start_matches('-'))))
}

/// Archives extracted with absolute member names.
fn extracts_absolute(p: &str, texts: &[&str]) -> bool {
    match p {
        "tar" | "gtar" | "bsdtar" => texts.iter().any(|t| {
            *t == "--absolute-names"
                || (t.starts_with('-') && !t.starts_with("--") && t.contains('P'))
                || (!t.starts_with('-')
                    && texts.first() == Some(t)
                    && t.contains('P')
                    && t.chars().all(|ch| ch.is_ascii_alphabetic()))
        }),
        "cpio" => has_opt(texts, "-i") || texts.contains(&"--extract"),
        "unzip" => texts.iter().any(|t| *t == "-:" || (t.starts_with('-') && t.contains(':'))),
        "pax" => has_opt(texts, "-r"),
        _ => false,
    }
}

/// A command whose output is the environment (or part of it chosen at run time).
fn dumps_env(h: &Head) -> bool {
    // `${!name}` / `${!prefix*}`: a variable (or all whose names start so) chosen at run time.
    h.args.iter().any(|a| a.contains("${!"))
        || match h.program.as_str() {
            // `env` left with no command to run (the unwrapper took any command) prints
            // the environment, whatever options it has (`env -u PWD`).
            "env" => !h.args.iter().any(|a| a == "--help" || a == "--version"),
            "printenv" => h.args.iter().all(|a| a.starts_with('-')),
            "set" | "export" | "declare" | "typeset" | "compgen" => true,
            // BSD-style `ps e`/`auxe`/`auxeww`: every process's environment.
            "ps" => h.args.iter().any(|a| !a.starts_with('-') && a.contains('e')),
            // jq's `env` builtin and `$ENV`.
            "jq" | "gojq" | "jaq" => h.args.iter().any(|a| a.contains("$ENV") || jq_env_builtin(a)),
            "awk" | "gawk" | "mawk" | "nawk" | "busybox" => h.args.iter().any(|a| a.contains("ENVIRON")),
            _ => false,
        }
}

/// A network tool that sends its stdin.
fn sends_stdin(c: &Command) -> bool {
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    match c.program.as_str() {
        "nc" | "ncat" | "netcat" | "socat" | "telnet" | "ssh" => true,
        "curl" | "http" | "https" => {
            texts.iter().any(|t| t.contains("@-") || t.ends_with("=@-"))
                || texts.windows(2).any(|w| matches!(w[0], "-T" | "--upload-file") && w[1] == "-")
        }
        "wget" => texts.iter().any(|t| t.contains("/dev/stdin")),
        _ => false,
    }
}

/// A file a plain reader pipes onward (`cat FILE | …`), with the reader.
fn piped_file(h: &Head) -> Option<(&Head, String)> {
    matches!(
        h.program.as_str(),
        "cat"
            | "head"
            | "tail"
            | "tac"
            | "nl"
            | "base64"
            | "xxd"
            | "od"
            | "hexdump"
            | "strings"
            | "gzip"
            | "bzip2"
            | "xz"
            | "zstd"
            | "zip"
    )
    .then(|| h.args.iter().find(|a| !a.starts_with('-')).map(|f| (h, f.clone())))
    .flatten()
}

#[cfg(test)]
mod tests;
