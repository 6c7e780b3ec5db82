//! The dependencies a tool call adds or changes: package-manager commands found by the shell
//! analysis (so `bash -c '…'`, `env`, `sudo`, compound commands are seen through), and edits of
//! manifests and lockfiles, compared old against new content so only what changes is looked up.

use super::Ecosystem;
use super::manifest::{Dep, Kind, npm_spec, pep508, split_npm_at};
use crate::checks::shell::{Command, commands, split};

/// The dependencies a command line adds, installs or runs. A command line that cannot be split
/// yields nothing here: the shell analysis already denies it.
pub fn from_command_line(cmd: &str) -> Vec<Dep> {
    let Ok(segs) = split(cmd) else { return Vec::new() };
    let Ok(cmds) = commands(&segs, None) else { return Vec::new() };
    let mut out = Vec::new();
    for c in &cmds {
        from_command(c, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// Options that take a value, per package manager (the value is not a package).
const CARGO_VALUE_OPTS: &[&str] = &[
    "-F",
    "--features",
    "--rename",
    "-p",
    "--package",
    "--manifest-path",
    "--target",
    "--root",
    "--index",
    "--bin",
    "--example",
    "--profile",
    "--target-dir",
    "--config",
    "-Z",
    "-j",
    "--jobs",
];
const NPM_VALUE_OPTS: &[&str] = &[
    "--registry",
    "--tag",
    "--prefix",
    "-w",
    "--workspace",
    "--omit",
    "--include",
    "--install-strategy",
    "-C",
    "--dir",
    "--filter",
    "--cache",
    "--userconfig",
    "-p",
    "--package",
];
const PIP_VALUE_OPTS: &[&str] = &[
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "-f",
    "--find-links",
    "--python-version",
    "--platform",
    "--upgrade-strategy",
    "--group",
    "-G",
    "-E",
    "--extras",
    "--extra",
    "--source",
    "--index",
    "--python",
    "-p",
    "--optional",
    "--rev",
    "--tag",
    "--branch",
    "--with",
    "--from",
    "--only-binary",
    "--no-binary",
    "--src",
];
const GO_VALUE_OPTS: &[&str] = &["-C", "-modfile", "-tags", "-o"];

/// The operands of a command after `skip` leading words, options and their values removed.
/// `None` when a value option says the packages are not registry ones (`--git`, `--path`).
fn operands<'a>(c: &'a Command, skip: usize, value_opts: &[&str]) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut words = c.args.iter().skip(skip).map(|w| w.text.as_str());
    let mut after_dashdash = false;
    while let Some(w) = words.next() {
        if after_dashdash {
            out.push(w);
            continue;
        }
        if w == "--" {
            after_dashdash = true;
            continue;
        }
        if w.starts_with('-') {
            let name = w.split('=').next().unwrap_or(w);
            if matches!(name, "--git" | "--path") {
                return None;
            }
            if !w.contains('=') && value_opts.contains(&name) {
                words.next();
            }
            continue;
        }
        out.push(w);
    }
    Some(out)
}

fn arg(c: &Command, i: usize) -> &str {
    c.args.get(i).map_or("", |w| w.text.as_str())
}

fn from_command(c: &Command, out: &mut Vec<Dep>) {
    let p = c.program.as_str();
    let (a0, a1) = (arg(c, 0), arg(c, 1));
    match p {
        "cargo" if matches!(a0, "add" | "install" | "binstall") => cargo_specs(c, a0, out),
        "npm" | "pnpm" | "yarn" | "bun" if matches!(a0, "install" | "i" | "add" | "in" | "isntall") => {
            npm_specs(c, 1, false, out);
        }
        // Package runners: the first operand is the package, the rest are its arguments.
        "npm" | "pnpm" | "yarn" | "bun" if matches!(a0, "dlx" | "x" | "exec") => npm_specs(c, 1, true, out),
        "npx" | "bunx" | "pnpx" => {
            // The package run is the first operand (or `-p`/`--package` values).
            let pkgs: Vec<&str> = c
                .args
                .windows(2)
                .filter(|w| matches!(w[0].text.as_str(), "-p" | "--package"))
                .map(|w| w[1].text.as_str())
                .collect();
            let first = operands(c, 0, NPM_VALUE_OPTS).and_then(|o| o.first().copied());
            for s in pkgs.into_iter().chain(first) {
                push_npm(s, out);
            }
        }
        "pip" | "pip3" if a0 == "install" => pip_specs(c, 1, false, out),
        _ if p.starts_with("python") && a0 == "-m" && matches!(a1, "pip" | "pip3") && arg(c, 2) == "install" => {
            pip_specs(c, 3, false, out);
        }
        "uv" if a0 == "pip" && a1 == "install" => pip_specs(c, 2, false, out),
        "uv" if a0 == "add" => pip_specs(c, 1, false, out),
        // Tool runners: the first operand is the package, the rest are its arguments.
        "uv" if a0 == "tool" && matches!(a1, "install" | "run") => pip_specs(c, 2, true, out),
        "uvx" => pip_specs(c, 0, true, out),
        "pipx" if matches!(a0, "install" | "run") => pip_specs(c, 1, true, out),
        "poetry" if a0 == "add" => poetry_specs(c, out),
        "go" if matches!(a0, "get" | "install" | "run") => go_specs(c, out),
        _ => {}
    }
}

/// `cargo add|install|binstall NAME[@REQ] [--version V]`: `cargo install` takes an exact
/// version, `cargo add` a requirement.
fn cargo_specs(c: &Command, a0: &str, out: &mut Vec<Dep>) {
    // `cargo install foo --version 1.2` / `--vers`.
    let pinned = c
        .args
        .windows(2)
        .find(|w| matches!(w[0].text.as_str(), "--version" | "--vers"))
        .map(|w| w[1].text.clone())
        .or_else(|| {
            c.args.iter().find_map(|w| {
                w.text.strip_prefix("--version=").or_else(|| w.text.strip_prefix("--vers=")).map(str::to_string)
            })
        });
    let mut opts: Vec<&str> = CARGO_VALUE_OPTS.to_vec();
    opts.extend(["--version", "--vers", "--registry", "--branch", "--tag", "--rev"]);
    let Some(specs) = operands(c, 1, &opts) else { return };
    for s in specs {
        let (name, req) = match s.split_once('@') {
            Some((n, r)) => (n, Some(r.to_string())),
            None => (s, pinned.clone()),
        };
        // `cargo install` takes an exact version; `cargo add` a requirement.
        let exact = a0 != "add";
        let req = req.map(|r| if exact { r.trim_start_matches('=').to_string() } else { r });
        out.push(Dep { eco: Ecosystem::Crates, name: name.to_string(), req, exact });
    }
}

/// `poetry add NAME@^1.2 | NAME==1.2 | NAME>=1.2`.
fn poetry_specs(c: &Command, out: &mut Vec<Dep>) {
    let Some(specs) = operands(c, 1, PIP_VALUE_OPTS) else { return };
    for s in specs {
        // Poetry: `name@^1.2`, `name==1.2`, `name>=1.2`.
        if let Some((n, r)) = s.split_once('@') {
            out.push(Dep { eco: Ecosystem::PyPI, name: n.to_string(), req: Some(r.to_string()), exact: false });
        } else {
            push_pep508(s, out);
        }
    }
}

/// `go get|install|run MODULE[@VERSION]` (a version the registry resolves — `@latest`, a
/// branch — is no version).
fn go_specs(c: &Command, out: &mut Vec<Dep>) {
    let Some(specs) = operands(c, 1, GO_VALUE_OPTS) else { return };
    for s in specs.into_iter().filter(|s| !s.starts_with('.') && !s.starts_with('/') && s.contains('.')) {
        let (module, v) = match s.split_once('@') {
            Some((m, v)) => (m, Some(v)),
            None => (s, None),
        };
        // `@latest`, `@upgrade`, `@patch`, branches: the registry decides.
        let v = v.filter(|v| Ecosystem::Go.parse(v).is_some());
        out.push(Dep { eco: Ecosystem::Go, name: module.to_string(), req: v.map(str::to_string), exact: true });
    }
}

fn push_npm(s: &str, out: &mut Vec<Dep>) {
    let (name, req) = split_npm_at(s);
    if let Some((n, r)) = npm_spec(name, req.unwrap_or(""))
        && !name.is_empty()
        && !name.contains(':')
        && (!name.contains('/') || name.starts_with('@'))
    {
        out.push(Dep { eco: Ecosystem::Npm, name: n.to_string(), req: r.map(str::to_string), exact: false });
    }
}

fn npm_specs(c: &Command, skip: usize, first_only: bool, out: &mut Vec<Dep>) {
    let Some(specs) = operands(c, skip, NPM_VALUE_OPTS) else { return };
    for s in specs.into_iter().take(if first_only { 1 } else { usize::MAX }) {
        if s.starts_with('.') || s.starts_with('/') || s.ends_with(".tgz") {
            continue;
        }
        push_npm(s, out);
    }
}

fn push_pep508(s: &str, out: &mut Vec<Dep>) {
    if s.contains("://") || s.starts_with('.') || s.starts_with('/') || s.ends_with(".whl") {
        return;
    }
    if let Some((name, spec)) = pep508(s) {
        let exact = spec.is_some_and(|x| x.trim().starts_with("==") && !x.contains(',') && !x.contains('*'));
        out.push(Dep { eco: Ecosystem::PyPI, name: name.to_string(), req: spec.map(str::to_string), exact });
    }
}

fn pip_specs(c: &Command, skip: usize, first_only: bool, out: &mut Vec<Dep>) {
    if let Some(specs) = operands(c, skip, PIP_VALUE_OPTS) {
        for s in specs.into_iter().take(if first_only { 1 } else { usize::MAX }) {
            push_pep508(s, out);
        }
    }
}

/// The dependencies an edit adds or changes: those of `new` not in `old` (same name and
/// requirement). `old` that does not read counts as empty (everything is checked); `new` that
/// does not read is an error (it cannot be checked). `None` for files that are not manifests.
pub fn from_edit(path: &std::path::Path, old: &str, new: &str) -> Option<Result<Vec<Dep>, String>> {
    let kind = Kind::of(path)?;
    let before = kind.read(old).unwrap_or_default();
    Some(kind.read(new).map(|after| {
        let mut changed: Vec<Dep> = after.into_iter().filter(|d| !before.contains(d)).collect();
        changed.sort();
        changed.dedup();
        changed
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn got(cmd: &str) -> Vec<(Ecosystem, String, Option<String>)> {
        from_command_line(cmd).into_iter().map(|d| (d.eco, d.name, d.req)).collect()
    }
    fn d(e: Ecosystem, n: &str, r: Option<&str>) -> (Ecosystem, String, Option<String>) {
        (e, n.to_string(), r.map(str::to_string))
    }
    use Ecosystem::*;

    #[test]
    fn cargo_commands() {
        assert_eq!(
            got("cargo add openssl@0.8.3 serde -F derive"),
            [d(Crates, "openssl", Some("0.8.3")), d(Crates, "serde", None)]
        );
        assert_eq!(got("cargo install ripgrep --version 13.0.0"), [d(Crates, "ripgrep", Some("13.0.0"))]);
        assert_eq!(got("cargo install --vers=1.0.0 foo"), [d(Crates, "foo", Some("1.0.0"))]);
        assert!(got("cargo add --git https://example.invalid/x foo").is_empty());
        assert!(got("cargo build").is_empty());
    }

    #[test]
    fn npm_family_commands() {
        assert_eq!(
            got("npm install lodash@4.17.20 @types/node@^20 -D --registry https://r.invalid ./local user/repo"),
            [d(Npm, "@types/node", Some("^20")), d(Npm, "lodash", Some("4.17.20"))]
        );
        assert_eq!(got("pnpm add minimist"), [d(Npm, "minimist", None)]);
        assert_eq!(got("yarn add left-pad@1.0.0"), [d(Npm, "left-pad", Some("1.0.0"))]);
        assert_eq!(got("npx cowsay@1.5.0 hello world"), [d(Npm, "cowsay", Some("1.5.0"))]);
        assert_eq!(got("pnpm dlx create-vite@4.0.0 my-app"), [d(Npm, "create-vite", Some("4.0.0"))]);
        assert!(got("npm install").is_empty(), "installing from the lockfile adds nothing");
        assert!(got("npm ci").is_empty());
    }

    #[test]
    fn python_commands() {
        assert_eq!(
            got("pip install requests==2.25.0 'flask>=2'"),
            [d(PyPI, "flask", Some(">=2")), d(PyPI, "requests", Some("==2.25.0"))]
        );
        assert_eq!(got("python3 -m pip install -r req.txt urllib3==1.26.4"), [d(PyPI, "urllib3", Some("==1.26.4"))]);
        assert_eq!(got("uv pip install jinja2==2.10"), [d(PyPI, "jinja2", Some("==2.10"))]);
        assert_eq!(got("uv add 'django>=3.2' --group dev"), [d(PyPI, "django", Some(">=3.2"))]);
        assert_eq!(got("poetry add aiohttp@^3.8.1"), [d(PyPI, "aiohttp", Some("^3.8.1"))]);
        assert_eq!(got("uvx black==22.1.0 --check ."), [d(PyPI, "black", Some("==22.1.0"))]);
        assert!(got("pip install -e .").is_empty());
    }

    #[test]
    fn go_commands_and_wrappers() {
        assert_eq!(got("go get golang.org/x/text@v0.3.7"), [d(Go, "golang.org/x/text", Some("v0.3.7"))]);
        assert_eq!(got("go get example.com/m@latest"), [d(Go, "example.com/m", None)]);
        assert!(got("go get ./...").is_empty());
        // Seen through wrappers and compound commands.
        assert_eq!(got("cd x && bash -c 'npm i minimist@0.0.8'"), [d(Npm, "minimist", Some("0.0.8"))]);
        assert_eq!(got("env FOO=1 cargo add time@0.1.0; echo done"), [d(Crates, "time", Some("0.1.0"))]);
    }

    #[test]
    fn edits_compare_old_and_new() {
        let p = std::path::Path::new("package.json");
        let old = r#"{"dependencies":{"a":"^1.0.0","b":"2.0.0"}}"#;
        let new = r#"{"dependencies":{"a":"^1.0.0","b":"2.1.0","c":"3.0.0"}}"#;
        let changed = from_edit(p, old, new).unwrap().unwrap();
        let names: Vec<_> = changed.iter().map(|d| (d.name.as_str(), d.req.as_deref())).collect();
        assert_eq!(names, [("b", Some("2.1.0")), ("c", Some("3.0.0"))]);
        assert!(from_edit(p, old, "{ broken").unwrap().is_err());
        assert!(from_edit(std::path::Path::new("src/main.rs"), "", "").is_none());
        // Old content that does not read: everything in the new one is checked.
        assert_eq!(from_edit(p, "garbage", new).unwrap().unwrap().len(), 3);
    }
}
