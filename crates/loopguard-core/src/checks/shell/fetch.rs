//! Which commands need the network because downloading is their job: a package install, a fetch
//! of a remote repository, a registry query. (A package runner — `npx`, `uvx` — needs it only for
//! a package the workspace has not installed: the shell analysis knows which, and says so.) The
//! sandbox gives the network to a command line only when the analysis names such a need (or sees
//! a network tool or a remote target itself); builds, tests and scripts run without it.
//!
//! The rule per ecosystem: where a fetch step exists that runs no project code (`cargo fetch`,
//! `go mod download`, `mvn dependency:go-offline`), the build itself (`cargo build`, `go test`,
//! `mvn package`) is not a network need — the agent fetches first, and the build, which runs the
//! project's own code (build scripts, tests), runs offline. Where the ecosystem has no such step
//! (Gradle evaluates the project's build scripts on every run), the build is a network need.

use super::programs::is_interpreter;
use super::unwrap::Command;

/// `(program, subcommands that download)`; an empty list: every use downloads.
const FETCHING: &[(&str, &[&str])] = &[
    (
        "npm",
        &[
            "install",
            "i",
            "in",
            "ins",
            "inst",
            "insta",
            "instal",
            "isnt",
            "isntall",
            "add",
            "ci",
            "clean-install",
            "install-clean",
            "install-ci-test",
            "install-test",
            "it",
            "cit",
            "update",
            "up",
            "upgrade",
            "udpate",
            "audit",
            "outdated",
            "view",
            "v",
            "info",
            "show",
            "search",
            "s",
            "se",
            "find",
            "publish",
            "unpublish",
            "deprecate",
            "dist-tag",
            "owner",
            "access",
            "login",
            "adduser",
            "logout",
            "whoami",
            "token",
            "ping",
            "exec",
            "x",
            "init",
            "create",
            "innit",
            "doctor",
            "fund",
            "repo",
            "docs",
            "bugs",
            "home",
        ],
    ),
    ("pipx", &["install", "run", "upgrade", "upgrade-all", "reinstall", "reinstall-all", "inject"]),
    (
        "yarn",
        &[
            "",
            "install",
            "add",
            "upgrade",
            "up",
            "upgrade-interactive",
            "dlx",
            "create",
            "npm",
            "info",
            "outdated",
            "audit",
            "publish",
            "login",
            "import",
        ],
    ),
    (
        "pnpm",
        &[
            "install",
            "i",
            "add",
            "update",
            "up",
            "upgrade",
            "dlx",
            "create",
            "fetch",
            "outdated",
            "audit",
            "publish",
            "import",
            "install-test",
            "it",
            "env",
            "self-update",
        ],
    ),
    ("bun", &["install", "i", "add", "a", "update", "upgrade", "x", "create", "c", "publish", "outdated", "pm"]),
    ("pip", &["install", "download", "index", "search", "wheel"]),
    ("pip3", &["install", "download", "index", "search", "wheel"]),
    ("uv", &["sync", "add", "lock", "pip", "tool", "python", "venv", "export", "tree", "self", "publish"]),
    ("poetry", &["install", "add", "update", "lock", "publish", "search", "show", "self", "source", "export"]),
    ("pipenv", &["install", "sync", "lock", "update", "upgrade", "check"]),
    ("pdm", &["install", "add", "update", "lock", "sync", "publish", "self", "outdated"]),
    ("hatch", &["env", "dep", "publish", "python"]),
    ("conda", &["install", "create", "update", "upgrade", "search", "env"]),
    ("mamba", &["install", "create", "update", "upgrade", "search", "env"]),
    ("micromamba", &["install", "create", "update", "search", "env"]),
    (
        "cargo",
        &[
            "fetch",
            "install",
            "update",
            "search",
            "publish",
            "login",
            "owner",
            "yank",
            "add",
            "generate-lockfile",
            "vendor",
            "binstall",
            "info",
            "audit",
            "outdated",
            "upgrade",
        ],
    ),
    ("rustup", &["install", "update", "toolchain", "target", "component", "self", "default", "check"]),
    ("go", &["get", "install", "mod", "work"]),
    ("gem", &["install", "update", "fetch", "search", "push", "sources", "outdated"]),
    ("bundle", &["install", "update", "add", "lock", "outdated", "package", "cache", "binstubs"]),
    ("bundler", &["install", "update", "add", "lock", "outdated", "package", "cache"]),
    (
        "composer",
        &[
            "install",
            "update",
            "require",
            "create-project",
            "global",
            "outdated",
            "search",
            "show",
            "self-update",
            "upgrade",
        ],
    ),
    ("dotnet", &["restore", "add", "tool", "new", "nuget", "workload"]),
    ("nuget", &[]),
    ("mix", &["deps.get", "deps.update", "hex.info", "archive.install", "local.hex", "local.rebar"]),
    ("swift", &["package"]),
    ("pub", &["get", "upgrade", "downgrade", "add", "global"]),
    ("dart", &["pub", "create"]),
    ("flutter", &["pub", "create", "upgrade", "precache"]),
    ("cabal", &["update", "install", "get"]),
    ("stack", &["setup", "update", "install", "upgrade"]),
    ("opam", &["install", "update", "upgrade", "init", "switch"]),
    ("conan", &["install", "create", "search", "download", "upload"]),
    ("vcpkg", &["install", "update", "upgrade"]),
    ("deno", &["install", "add", "cache", "upgrade", "outdated"]),
    (
        "mvn",
        &[
            "dependency:go-offline",
            "dependency:resolve",
            "dependency:resolve-plugins",
            "dependency:get",
            "deploy",
            "versions:display-dependency-updates",
        ],
    ),
    (
        "mvnw",
        &["dependency:go-offline", "dependency:resolve", "dependency:resolve-plugins", "dependency:get", "deploy"],
    ),
    // Gradle evaluates the project's build scripts on every run: no step fetches without them.
    ("gradle", &[]),
    ("gradlew", &[]),
    ("sbt", &["update", "publish", "publishLocal"]),
    ("apt", &["install", "update", "upgrade", "full-upgrade", "dist-upgrade", "download", "source"]),
    ("apt-get", &["install", "update", "upgrade", "dist-upgrade", "download", "source", "build-dep"]),
    ("dnf", &["install", "update", "upgrade", "download", "makecache"]),
    ("yum", &["install", "update", "upgrade", "makecache"]),
    ("apk", &["add", "update", "upgrade", "fetch"]),
    ("brew", &["install", "update", "upgrade", "fetch", "tap", "reinstall", "search", "info"]),
    ("nix", &["build", "develop", "shell", "run", "profile", "flake", "copy"]),
    ("docker", &["pull", "push", "build", "login", "search", "buildx"]),
    ("podman", &["pull", "push", "build", "login", "search"]),
    ("helm", &["repo", "install", "upgrade", "pull", "dependency", "push", "search"]),
    ("gh", &[]),
    ("glab", &[]),
    ("hub", &[]),
    ("huggingface-cli", &["download", "upload", "login"]),
    ("nvm", &["install", "ls-remote"]),
    ("fnm", &["install", "list-remote"]),
    ("pyenv", &["install", "update"]),
    ("asdf", &["install", "plugin"]),
    ("mise", &["install", "use", "upgrade", "plugins"]),
    ("corepack", &["enable", "prepare", "install", "use"]),
];

/// Whether downloading is this command's job (see the module's documentation). `python -m pip
/// install …` is read as `pip install …`.
pub(crate) fn fetches(c: &Command) -> bool {
    if c.program == "git" {
        return c.git_subcommand().is_some_and(|(sub, args)| {
            matches!(sub, "fetch" | "pull" | "push" | "clone" | "ls-remote" | "send-email" | "request-pull" | "archive")
                || matches!(sub, "submodule" | "remote")
                    && args.iter().any(|a| matches!(a.as_str(), "update" | "add" | "sync" | "prune" | "show"))
                || sub == "lfs" && args.iter().any(|a| matches!(a.as_str(), "fetch" | "pull" | "push" | "install"))
        });
    }
    let words: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let program = c.program.as_str();
    let (program, words) = match words.as_slice() {
        ["-m", module, rest @ ..] if is_interpreter(program) => (*module, rest.to_vec()),
        _ => (program.strip_suffix(".exe").unwrap_or(program), words),
    };
    // A program named by a path (`./tools/gh`, `bin/npx`) is a file of the workspace's, not the
    // tool the table means: it gets no network for the name it borrows.
    if c.program_path.contains('/') {
        return false;
    }
    let Some((_, subs)) = FETCHING.iter().find(|(p, _)| *p == program) else { return false };
    // Told not to download: `npm ci --offline`, `cargo fetch --frozen`, `pip install --no-index`,
    // `mvn -o`, `bundle install --local`.
    let offline = words.iter().any(|w| match *w {
        "--offline" => true,
        "--frozen" => program == "cargo",
        "--no-index" => matches!(program, "pip" | "pip3" | "uv"),
        "-o" => matches!(program, "mvn" | "mvnw"),
        "--local" => matches!(program, "bundle" | "bundler"),
        _ => false,
    });
    if offline {
        return false;
    }
    if subs.is_empty() {
        return true;
    }
    // The first word that is not an option names what the command does; none is "" (a bare
    // `yarn` installs). Maven runs every goal it is given: each must be a download.
    let mut operands = words.iter().filter(|w| !w.starts_with('-'));
    if program == "mvn" || program == "mvnw" {
        let goals: Vec<&&str> = operands.collect();
        return !goals.is_empty() && goals.iter().all(|w| subs.contains(w));
    }
    subs.contains(&operands.next().copied().unwrap_or(""))
}
