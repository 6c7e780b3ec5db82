//! The registry dependencies a manifest or lockfile names: Cargo.toml, Cargo.lock, package.json,
//! package-lock.json, yarn.lock, pnpm-lock.yaml, requirements*.txt, pyproject.toml, poetry.lock,
//! uv.lock, Pipfile.lock and go.mod. Path, git, URL and workspace
//! dependencies have no registry version to look up and are left out. Text that is not the file
//! it claims to be is an error (the caller cannot check it, which is never "no advisories").

use super::Ecosystem;
use std::path::Path;

/// Files larger than this are not read (bounds the parsers; real lockfiles are far smaller).
pub const MAX_FILE_BYTES: usize = 32 << 20;

/// One dependency as a manifest, lockfile or command names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dep {
    /// Its ecosystem.
    pub eco: Ecosystem,
    /// The package name as written.
    pub name: String,
    /// The requirement or exact version as written; `None` when none is given (the registry's
    /// newest release will be used).
    pub req: Option<String>,
    /// Whether `req` is an exact version (lockfiles, `go.mod`, `==`), not a range.
    pub exact: bool,
}

impl Dep {
    fn new(eco: Ecosystem, name: &str, req: Option<&str>, exact: bool) -> Self {
        Dep { eco, name: name.trim().to_string(), req: req.map(|r| r.trim().to_string()), exact }
    }
}

/// The kinds of files read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `Cargo.toml`.
    CargoToml,
    /// `Cargo.lock`.
    CargoLock,
    /// `package.json`.
    PackageJson,
    /// `package-lock.json` (and `npm-shrinkwrap.json`).
    PackageLock,
    /// `requirements*.txt`.
    Requirements,
    /// `pyproject.toml`.
    Pyproject,
    /// `go.mod`.
    GoMod,
    /// `poetry.lock` and `uv.lock` (TOML, `[[package]]` with `name` and `version`).
    PyLock,
    /// `Pipfile.lock` (JSON, `default` and `develop`).
    PipfileLock,
    /// `yarn.lock` (classic v1 and Berry).
    YarnLock,
    /// `pnpm-lock.yaml` (lockfile versions 5 to 9).
    PnpmLock,
}

impl Kind {
    /// The kind of a file, by its name.
    pub fn of(path: &Path) -> Option<Kind> {
        let name = path.file_name()?.to_str()?;
        Some(match name {
            "Cargo.toml" => Kind::CargoToml,
            "Cargo.lock" => Kind::CargoLock,
            "package.json" => Kind::PackageJson,
            "package-lock.json" | "npm-shrinkwrap.json" => Kind::PackageLock,
            "pyproject.toml" => Kind::Pyproject,
            "go.mod" => Kind::GoMod,
            "poetry.lock" | "uv.lock" => Kind::PyLock,
            "Pipfile.lock" => Kind::PipfileLock,
            "yarn.lock" => Kind::YarnLock,
            "pnpm-lock.yaml" => Kind::PnpmLock,
            n if n.starts_with("requirements") && n.ends_with(".txt") => Kind::Requirements,
            _ => return None,
        })
    }

    /// Whether the file pins exact versions (a lockfile).
    pub fn is_lockfile(self) -> bool {
        matches!(
            self,
            Kind::CargoLock
                | Kind::PackageLock
                | Kind::GoMod
                | Kind::PyLock
                | Kind::PipfileLock
                | Kind::YarnLock
                | Kind::PnpmLock
        )
    }

    /// Reads the dependencies of a file of this kind.
    pub fn read(self, text: &str) -> Result<Vec<Dep>, String> {
        if text.len() > MAX_FILE_BYTES {
            return Err(format!("the file is larger than {} MiB", MAX_FILE_BYTES >> 20));
        }
        match self {
            Kind::CargoToml => cargo_toml(text),
            Kind::CargoLock => cargo_lock(text),
            Kind::PackageJson => package_json(text),
            Kind::PackageLock => package_lock(text),
            Kind::Requirements => requirements(text),
            Kind::Pyproject => pyproject(text),
            Kind::GoMod => go_mod(text),
            Kind::PyLock => py_lock(text),
            Kind::PipfileLock => pipfile_lock(text),
            Kind::YarnLock => yarn_lock(text),
            Kind::PnpmLock => pnpm_lock(text),
        }
    }
}

/// One `[[package]]` entry of a TOML lockfile: name, version and source, as written.
struct TomlPackage {
    name: Option<String>,
    version: Option<String>,
    source: Option<toml::Value>,
}

/// The `[[package]]` entries of a TOML lockfile (Cargo.lock, poetry.lock, uv.lock).
fn toml_packages(text: &str, what: &str) -> Result<Vec<TomlPackage>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| format!("not a {what}: {e}"))?;
    let Some(toml::Value::Array(pkgs)) = doc.get("package") else {
        return Ok(Vec::new());
    };
    Ok(pkgs
        .iter()
        .map(|p| {
            let s = |k: &str| p.get(k).and_then(|v| v.as_str()).map(str::to_string);
            TomlPackage { name: s("name"), version: s("version"), source: p.get("source").cloned() }
        })
        .collect())
}

/// Registry packages pinned by a Cargo.lock.
pub fn cargo_lock(text: &str) -> Result<Vec<Dep>, String> {
    let mut out = Vec::new();
    for p in toml_packages(text, "Cargo.lock")? {
        let (Some(name), Some(version)) = (&p.name, &p.version) else {
            return Err("a [[package]] entry lacks name or version".into());
        };
        let registry = p
            .source
            .as_ref()
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.starts_with("registry+") || s.starts_with("sparse+"));
        if registry {
            out.push(Dep::new(Ecosystem::Crates, name, Some(version), true));
        }
    }
    Ok(out)
}

/// Requirements of a Cargo.toml: `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`,
/// their `[target.*]` forms and `[workspace.dependencies]`. Renamed dependencies are looked up by
/// their `package`; path, git, other-registry and `workspace = true` entries are left out.
pub fn cargo_toml(text: &str) -> Result<Vec<Dep>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| format!("not a Cargo.toml: {e}"))?;
    let mut tables: Vec<&toml::Table> = Vec::new();
    fn sections(t: &toml::Table) -> Vec<&toml::Table> {
        ["dependencies", "dev-dependencies", "build-dependencies", "dev_dependencies", "build_dependencies"]
            .iter()
            .filter_map(|k| t.get(*k).and_then(|v| v.as_table()))
            .collect()
    }
    tables.extend(sections(&doc));
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table()) {
        for t in targets.values().filter_map(|t| t.as_table()) {
            tables.extend(sections(t));
        }
    }
    if let Some(ws) = doc.get("workspace").and_then(|w| w.as_table()) {
        tables.extend(ws.get("dependencies").and_then(|d| d.as_table()));
    }
    let mut out = Vec::new();
    for t in tables {
        for (key, v) in t {
            match v {
                toml::Value::String(req) => out.push(Dep::new(Ecosystem::Crates, key, Some(req), false)),
                toml::Value::Table(d) => {
                    if ["path", "git", "registry", "workspace"].iter().any(|k| d.contains_key(*k)) {
                        continue;
                    }
                    let name = d.get("package").and_then(|p| p.as_str()).unwrap_or(key);
                    out.push(Dep::new(Ecosystem::Crates, name, d.get("version").and_then(|r| r.as_str()), false));
                }
                _ => return Err(format!("dependency `{key}` is neither a version nor a table")),
            }
        }
    }
    Ok(out)
}

/// An npm dependency spec (`^1.2.3`, `npm:real@^1`, `latest`) as (package name, requirement);
/// `None` for specs that are not registry packages (git, URLs, files, links, workspaces,
/// GitHub shorthands).
pub fn npm_spec<'a>(name: &'a str, spec: &'a str) -> Option<(&'a str, Option<&'a str>)> {
    let spec = spec.trim();
    if let Some(alias) = spec.strip_prefix("npm:") {
        let (n, r) = split_npm_at(alias);
        return Some((n, r));
    }
    let not_registry = ["git", "http:", "https:", "file:", "link:", "workspace:", "github:", "portal:", "patch:"];
    if not_registry.iter().any(|p| spec.starts_with(p)) || spec.contains("://") || spec.contains('/') {
        return None;
    }
    Some((name, (!spec.is_empty()).then_some(spec)))
}

/// `name@req` / `@scope/name@req` → (name, req).
pub fn split_npm_at(s: &str) -> (&str, Option<&str>) {
    let at = if let Some(rest) = s.strip_prefix('@') { rest.find('@').map(|i| i + 1) } else { s.find('@') };
    match at {
        Some(i) => (&s[..i], Some(&s[i + 1..]).filter(|r| !r.is_empty())),
        None => (s, None),
    }
}

/// Requirements of a package.json (`dependencies`, `devDependencies`, `optionalDependencies`,
/// `peerDependencies`).
pub fn package_json(text: &str) -> Result<Vec<Dep>, String> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a package.json: {e}"))?;
    let mut out = Vec::new();
    for section in ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"] {
        let Some(deps) = doc.get(section) else { continue };
        let deps = deps.as_object().ok_or_else(|| format!("`{section}` is not an object"))?;
        for (name, spec) in deps {
            let spec = spec.as_str().ok_or_else(|| format!("the spec of `{name}` is not a string"))?;
            if let Some((n, r)) = npm_spec(name, spec) {
                out.push(Dep::new(Ecosystem::Npm, n, r, false));
            }
        }
    }
    Ok(out)
}

/// Packages pinned by a package-lock.json (lockfile versions 1 to 3).
pub fn package_lock(text: &str) -> Result<Vec<Dep>, String> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a package-lock.json: {e}"))?;
    let mut out = Vec::new();
    let registry = |e: &serde_json::Value| {
        !e.get("link").and_then(|l| l.as_bool()).unwrap_or(false)
            && e.get("resolved").and_then(|r| r.as_str()).is_none_or(|r| r.starts_with("http"))
    };
    if let Some(pkgs) = doc.get("packages").and_then(|p| p.as_object()) {
        for (path, e) in pkgs {
            let Some(idx) = path.rfind("node_modules/") else { continue };
            let name = e.get("name").and_then(|n| n.as_str()).unwrap_or(&path[idx + "node_modules/".len()..]);
            if let Some(v) = e.get("version").and_then(|v| v.as_str())
                && registry(e)
            {
                out.push(Dep::new(Ecosystem::Npm, name, Some(v), true));
            }
        }
        return Ok(out);
    }
    // Version 1: nested `dependencies` objects.
    fn walk(deps: &serde_json::Map<String, serde_json::Value>, out: &mut Vec<Dep>, depth: usize) -> Result<(), String> {
        if depth > 64 {
            return Err("package-lock.json nests deeper than 64 levels".into());
        }
        for (name, e) in deps {
            if let Some(v) = e.get("version").and_then(|v| v.as_str())
                && Ecosystem::Npm.parse(v).is_some()
            {
                out.push(Dep::new(Ecosystem::Npm, name, Some(v), true));
            }
            if let Some(d) = e.get("dependencies").and_then(|d| d.as_object()) {
                walk(d, out, depth + 1)?;
            }
        }
        Ok(())
    }
    if let Some(d) = doc.get("dependencies").and_then(|d| d.as_object()) {
        walk(d, &mut out, 0)?;
    }
    Ok(out)
}

/// A PEP 508 requirement (`name[extra]>=1.2; python_version < "3.9"`) → (name, specifier).
/// `None` for URL requirements (`name @ https://…`) and text that names no package.
pub fn pep508(line: &str) -> Option<(&str, Option<&str>)> {
    let line = line.split(';').next().unwrap_or(line).trim();
    let end = line.find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c))).unwrap_or(line.len());
    let (name, mut rest) = line.split_at(end);
    if name.is_empty() {
        return None;
    }
    rest = rest.trim_start();
    if rest.starts_with('[') {
        rest = rest.split_once(']').map_or("", |(_, r)| r).trim_start();
    }
    if rest.starts_with('@') {
        return None;
    }
    Some((name, (!rest.is_empty()).then_some(rest)))
}

fn py_dep(name: &str, spec: Option<&str>) -> Dep {
    let exact = spec.is_some_and(|s| {
        let s = s.trim();
        (s.starts_with("==") || s.starts_with("===")) && !s.contains(',') && !s.contains('*')
    });
    Dep::new(Ecosystem::PyPI, name, spec, exact)
}

/// Requirements of a pip requirements file. Options (`-r`, `-e`, `--hash`, …), URLs and local
/// paths are left out; `\` continuations are joined.
pub fn requirements(text: &str) -> Result<Vec<Dep>, String> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out = Vec::new();
    for (n, raw) in joined.lines().enumerate() {
        let line = match raw.find(" #") {
            Some(i) => &raw[..i],
            None if raw.trim_start().starts_with('#') => "",
            None => raw,
        };
        // Per-requirement options (`--hash=…`) follow the requirement.
        let line = line.split(" -").next().unwrap_or(line).trim();
        if line.is_empty() || line.starts_with('-') || line.starts_with('.') || line.starts_with('/') {
            continue;
        }
        if line.contains("://") {
            continue;
        }
        let Some((name, spec)) = pep508(line) else {
            return Err(format!("line {}: `{line}` is not a requirement", n + 1));
        };
        if let Some(s) = spec
            && pep440_rs::VersionSpecifiers::from_str(s.trim_start_matches('(').trim_end_matches(')')).is_err()
        {
            return Err(format!("line {}: `{s}` is not a version specifier", n + 1));
        }
        out.push(py_dep(name, spec));
    }
    Ok(out)
}

use std::str::FromStr;

/// Requirements of a pyproject.toml: `[project] dependencies`, `[project.optional-dependencies]`,
/// `[dependency-groups]`, and Poetry's `[tool.poetry.dependencies]`, `dev-dependencies` and
/// `group.*.dependencies` (the `python` entry is the interpreter, not a package).
pub fn pyproject(text: &str) -> Result<Vec<Dep>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| format!("not a pyproject.toml: {e}"))?;
    let mut out = Vec::new();
    let mut pep508_list = |v: &toml::Value, what: &str| -> Result<(), String> {
        let list = v.as_array().ok_or_else(|| format!("`{what}` is not an array"))?;
        for item in list {
            // `{include-group = "…"}` entries of dependency groups name no package.
            let Some(s) = item.as_str() else { continue };
            if s.contains("://") {
                continue;
            }
            let (name, spec) = pep508(s).ok_or_else(|| format!("`{s}` in `{what}` is not a requirement"))?;
            out.push(py_dep(name, spec));
        }
        Ok(())
    };
    if let Some(project) = doc.get("project").and_then(|p| p.as_table()) {
        if let Some(d) = project.get("dependencies") {
            pep508_list(d, "project.dependencies")?;
        }
        if let Some(opt) = project.get("optional-dependencies").and_then(|o| o.as_table()) {
            for (k, d) in opt {
                pep508_list(d, &format!("project.optional-dependencies.{k}"))?;
            }
        }
    }
    if let Some(groups) = doc.get("dependency-groups").and_then(|g| g.as_table()) {
        for (k, d) in groups {
            pep508_list(d, &format!("dependency-groups.{k}"))?;
        }
    }
    if let Some(poetry) = doc.get("tool").and_then(|t| t.get("poetry")).and_then(|p| p.as_table()) {
        let mut tables: Vec<&toml::Table> = ["dependencies", "dev-dependencies"]
            .iter()
            .filter_map(|k| poetry.get(*k).and_then(|d| d.as_table()))
            .collect();
        if let Some(groups) = poetry.get("group").and_then(|g| g.as_table()) {
            tables.extend(groups.values().filter_map(|g| g.get("dependencies").and_then(|d| d.as_table())));
        }
        for t in tables {
            for (name, v) in t.iter().filter(|(k, _)| k.as_str() != "python") {
                let entries: Vec<&toml::Value> = match v {
                    toml::Value::Array(a) => a.iter().collect(),
                    other => vec![other],
                };
                for e in entries {
                    match e {
                        toml::Value::String(c) => out.push(py_dep(name, Some(c))),
                        toml::Value::Table(d) => {
                            if ["path", "git", "url", "file"].iter().any(|k| d.contains_key(*k)) {
                                continue;
                            }
                            out.push(py_dep(name, d.get("version").and_then(|c| c.as_str())));
                        }
                        _ => return Err(format!("the constraint of `{name}` is neither a string nor a table")),
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Packages pinned by a poetry.lock or uv.lock (`[[package]]` entries; packages from a path, a
/// directory, git or a URL — `source.type`/`source` other than a registry — are left out).
pub fn py_lock(text: &str) -> Result<Vec<Dep>, String> {
    let mut out = Vec::new();
    for p in toml_packages(text, "poetry.lock or uv.lock")? {
        // uv.lock's own project (a `source = { editable = "." }` entry) may lack a version.
        let (Some(name), Some(version)) = (&p.name, &p.version) else { continue };
        let local = match &p.source {
            None => false,
            // poetry: `type` = directory | file | git | url, or legacy (a registry mirror).
            Some(src) if src.get("type").is_some() => {
                src.get("type").and_then(|t| t.as_str()).is_some_and(|t| t != "legacy")
            }
            // uv: `registry = …` for a registry, anything else is local or remote code.
            Some(src) => src.get("registry").is_none(),
        };
        if !local {
            out.push(Dep::new(Ecosystem::PyPI, name, Some(version), true));
        }
    }
    Ok(out)
}

/// Packages pinned by a Pipfile.lock (`"version": "==1.2.3"` in `default` and `develop`).
pub fn pipfile_lock(text: &str) -> Result<Vec<Dep>, String> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a Pipfile.lock: {e}"))?;
    let mut out = Vec::new();
    for section in ["default", "develop"] {
        let Some(deps) = doc.get(section).and_then(|d| d.as_object()) else { continue };
        for (name, e) in deps {
            if let Some(v) = e.get("version").and_then(|v| v.as_str()) {
                out.push(Dep::new(Ecosystem::PyPI, name, Some(v.trim_start_matches("==")), true));
            }
        }
    }
    Ok(out)
}

fn unquote(s: &str) -> &str {
    s.trim().trim_matches('"').trim_matches('\'')
}

/// Packages pinned by a yarn.lock: classic (`"name@range", name@range2:` then `  version "1.2.3"`)
/// and Berry (`"name@npm:range":` then `  version: 1.2.3`). Read line by line — the classic
/// format is not YAML, and only the entry headers and their versions are needed. Entries resolved
/// from git, files, links, portals or workspaces are left out.
pub fn yarn_lock(text: &str) -> Result<Vec<Dep>, String> {
    if !text.contains("# yarn lockfile v1") && !text.contains("__metadata:") {
        return Err("not a yarn.lock (neither `# yarn lockfile v1` nor `__metadata`)".into());
    }
    let mut out = Vec::new();
    let mut entry: Option<(String, Option<String>, bool)> = None; // (name, version, registry)
    let flush = |e: Option<(String, Option<String>, bool)>, out: &mut Vec<Dep>| {
        if let Some((name, Some(v), true)) = e
            && Ecosystem::Npm.parse(&v).is_some()
        {
            out.push(Dep::new(Ecosystem::Npm, &name, Some(&v), true));
        }
    };
    for line in text.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') {
            flush(entry.take(), &mut out);
            let header = line.trim_end().trim_end_matches(':');
            let first = unquote(header.split(", ").next().unwrap_or(header));
            if first == "__metadata" {
                continue;
            }
            let (name, range) = split_npm_at(first);
            let registry = range.is_none_or(|r| {
                !["git", "http", "file:", "link:", "portal:", "workspace:", "exec:"].iter().any(|p| r.starts_with(p))
                    && !r.contains("://")
            });
            entry = Some((name.to_string(), None, registry));
            continue;
        }
        let Some(e) = entry.as_mut() else { continue };
        let t = line.trim();
        if let Some(v) = t.strip_prefix("version:").or_else(|| t.strip_prefix("version ")) {
            e.1 = Some(unquote(v).to_string());
        } else if let Some(r) = t.strip_prefix("resolved ").or_else(|| t.strip_prefix("resolution:")) {
            let r = unquote(r);
            let local = ["@workspace:", "@link:", "@portal:", "@file:", "@exec:"].iter().any(|p| r.contains(p))
                || r.starts_with("file:")
                || r.starts_with("git");
            if local {
                e.2 = false;
            }
        }
    }
    flush(entry.take(), &mut out);
    Ok(out)
}

/// Packages pinned by a pnpm-lock.yaml: the keys of its `packages:` section (`name@1.2.3`,
/// `/name@1.2.3` in v6, `/name/1.2.3` in v5, peer suffixes `(peer@x)` dropped). Read line by
/// line rather than with a YAML library: only those keys are needed. Keys whose version is not
/// one (git, tarball and directory dependencies) are left out.
pub fn pnpm_lock(text: &str) -> Result<Vec<Dep>, String> {
    if !text.lines().any(|l| l.starts_with("lockfileVersion:")) {
        return Err("not a pnpm-lock.yaml (no `lockfileVersion`)".into());
    }
    let mut out = Vec::new();
    let mut in_packages = false;
    for line in text.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') {
            in_packages = line.trim_end() == "packages:";
            continue;
        }
        if !in_packages || line.starts_with("   ") || !line.trim_end().ends_with(':') {
            continue;
        }
        let key = unquote(line.trim().trim_end_matches(':'));
        let key = key.strip_prefix('/').unwrap_or(key);
        let key = key.split('(').next().unwrap_or(key);
        let (name, version) = match split_npm_at(key) {
            (n, Some(v)) => (n, v),
            // v5: `name/1.2.3` (`@scope/name/1.2.3`).
            (k, None) => match k.rsplit_once('/') {
                Some((n, v)) => (n, v),
                None => continue,
            },
        };
        if Ecosystem::Npm.parse(version).is_some() {
            out.push(Dep::new(Ecosystem::Npm, name, Some(version), true));
        }
    }
    Ok(out)
}

/// Modules a go.mod requires (single `require` lines and `require ( … )` blocks).
pub fn go_mod(text: &str) -> Result<Vec<Dep>, String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or(raw).trim();
        if line.is_empty() {
            continue;
        }
        let spec = if in_block {
            if line == ")" {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("require") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        let mut words = spec.split_whitespace();
        let (Some(module), Some(version)) = (words.next(), words.next()) else {
            return Err(format!("line {}: `{line}` is not `module version`", n + 1));
        };
        out.push(Dep::new(Ecosystem::Go, module.trim_matches('"'), Some(version), true));
    }
    if in_block {
        return Err("a `require (` block is not closed".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(v: &[Dep]) -> Vec<(String, Option<String>)> {
        v.iter().map(|d| (d.name.clone(), d.req.clone())).collect()
    }
    fn d(n: &str, r: Option<&str>) -> (String, Option<String>) {
        (n.to_string(), r.map(str::to_string))
    }

    #[test]
    fn cargo_lock_registry_packages() {
        let text = "version = 3\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n[[package]]\nname = \"local\"\nversion = \"0.1.0\"\n";
        assert_eq!(deps(&cargo_lock(text).unwrap()), [d("a", Some("1.0.0"))]);
        assert!(cargo_lock("not toml [").is_err());
    }

    #[test]
    fn cargo_toml_sections_renames_and_non_registry_entries() {
        let text = r#"
[package]
name = "x"
[dependencies]
serde = "1.0"
tokio = { version = "1.2", features = ["full"] }
local = { path = "../local" }
fromgit = { git = "https://example.invalid/x" }
shared = { workspace = true }
old_openssl = { package = "openssl", version = "0.8" }
[dev-dependencies]
proptest = "1"
[target.'cfg(unix)'.dependencies]
libc = "0.2"
[workspace.dependencies]
regex = "1.5"
"#;
        let mut got = deps(&cargo_toml(text).unwrap());
        got.sort();
        assert_eq!(
            got,
            [
                d("libc", Some("0.2")),
                d("openssl", Some("0.8")),
                d("proptest", Some("1")),
                d("regex", Some("1.5")),
                d("serde", Some("1.0")),
                d("tokio", Some("1.2")),
            ]
        );
    }

    #[test]
    fn npm_manifest_and_lockfiles() {
        let pj = r#"{"name":"app","dependencies":{"lodash":"^4.17.20","@scope/pkg":"~1.0.0","gh":"user/repo",
            "local":"file:../x","alias":"npm:minimist@1.2.0","tagged":"latest"},
            "devDependencies":{"jest":"29.0.0"}}"#;
        let mut got = deps(&package_json(pj).unwrap());
        got.sort();
        assert_eq!(
            got,
            [
                d("@scope/pkg", Some("~1.0.0")),
                d("jest", Some("29.0.0")),
                d("lodash", Some("^4.17.20")),
                d("minimist", Some("1.2.0")),
                d("tagged", Some("latest")),
            ]
        );
        let v3 = r#"{"lockfileVersion":3,"packages":{"":{"name":"app"},
            "node_modules/lodash":{"version":"4.17.20","resolved":"https://registry.npmjs.org/lodash/-/lodash-4.17.20.tgz"},
            "node_modules/a/node_modules/@scope/b":{"version":"1.0.0"},
            "node_modules/linked":{"resolved":"../linked","link":true},
            "node_modules/fromgit":{"version":"1.0.0","resolved":"git+ssh://git@example.invalid/x.git"}}}"#;
        let mut got = deps(&package_lock(v3).unwrap());
        got.sort();
        assert_eq!(got, [d("@scope/b", Some("1.0.0")), d("lodash", Some("4.17.20"))]);
        let v1 = r#"{"lockfileVersion":1,"dependencies":{"a":{"version":"1.0.0","dependencies":{"b":{"version":"2.0.0"}}},
            "g":{"version":"git+https://example.invalid/g.git#abc"}}}"#;
        let mut got = deps(&package_lock(v1).unwrap());
        got.sort();
        assert_eq!(got, [d("a", Some("1.0.0")), d("b", Some("2.0.0"))]);
        assert!(package_json("{").is_err());
        assert_eq!(split_npm_at("@types/node@^20"), ("@types/node", Some("^20")));
        assert_eq!(split_npm_at("@types/node"), ("@types/node", None));
    }

    #[test]
    fn python_requirements_and_pyproject() {
        let req = "# comment\nrequests==2.25.0 --hash=sha256:abc \\\n    --hash=sha256:def\nDjango[argon2]>=3.2,<4 ; python_version >= \"3.8\"\n-r other.txt\n-e ./local\nflask\nhttps://example.invalid/pkg.whl\npkg @ https://example.invalid/pkg.zip\n";
        let got = requirements(req).unwrap();
        assert_eq!(deps(&got), [d("requests", Some("==2.25.0")), d("Django", Some(">=3.2,<4")), d("flask", None)]);
        assert!(got[0].exact && !got[1].exact);
        assert!(requirements("requests=>2\n").is_err(), "a broken specifier is an error");
        let pp = r#"
[project]
dependencies = ["jinja2>=2.10", "pyyaml"]
[project.optional-dependencies]
test = ["pytest==7.0.0"]
[dependency-groups]
dev = ["ruff>=0.1", {include-group = "test"}]
[tool.poetry.dependencies]
python = "^3.9"
urllib3 = "^1.26.4"
aiohttp = { version = "3.8.1", extras = ["speedups"] }
mine = { path = "../mine" }
[tool.poetry.group.docs.dependencies]
sphinx = "~5.0"
"#;
        let mut got = deps(&pyproject(pp).unwrap());
        got.sort();
        assert_eq!(
            got,
            [
                d("aiohttp", Some("3.8.1")),
                d("jinja2", Some(">=2.10")),
                d("pytest", Some("==7.0.0")),
                d("pyyaml", None),
                d("ruff", Some(">=0.1")),
                d("sphinx", Some("~5.0")),
                d("urllib3", Some("^1.26.4")),
            ]
        );
    }

    #[test]
    fn go_mod_requires() {
        let text = "module example.com/m\n\ngo 1.21\n\nrequire golang.org/x/text v0.3.7\nrequire (\n\tgithub.com/gin-gonic/gin v1.7.0 // indirect\n\tgolang.org/x/net v0.0.0-20210226172049-e18ecbb05110\n)\nreplace x => y v1.0.0\n";
        assert_eq!(
            deps(&go_mod(text).unwrap()),
            [
                d("golang.org/x/text", Some("v0.3.7")),
                d("github.com/gin-gonic/gin", Some("v1.7.0")),
                d("golang.org/x/net", Some("v0.0.0-20210226172049-e18ecbb05110")),
            ]
        );
        assert!(go_mod("require (\n a v1\n").is_err());
    }

    #[test]
    fn poetry_uv_and_pipfile_locks() {
        let poetry = r#"
[[package]]
name = "requests"
version = "2.25.0"
description = ""
[[package]]
name = "mine"
version = "0.1.0"
[package.source]
type = "directory"
url = "../mine"
[[package]]
name = "mirrored"
version = "1.0.0"
[package.source]
type = "legacy"
url = "https://mirror.invalid/simple"
reference = "mirror"
"#;
        assert_eq!(deps(&py_lock(poetry).unwrap()), [d("requests", Some("2.25.0")), d("mirrored", Some("1.0.0"))]);
        let uv = r#"
version = 1
[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
[[package]]
name = "urllib3"
version = "1.26.4"
source = { registry = "https://pypi.org/simple" }
"#;
        assert_eq!(deps(&py_lock(uv).unwrap()), [d("urllib3", Some("1.26.4"))]);
        let pipfile = r#"{"_meta":{},"default":{"jinja2":{"version":"==2.10"}},"develop":{"pytest":{"version":"==7.0.0"},"local":{"path":"."}}}"#;
        assert_eq!(deps(&pipfile_lock(pipfile).unwrap()), [d("jinja2", Some("2.10")), d("pytest", Some("7.0.0"))]);
        assert!(py_lock("[[package]\n").is_err());
    }

    #[test]
    fn yarn_and_pnpm_locks_in_every_format() {
        let berry = r#"__metadata:
  version: 6

"lodash@npm:^4.17.20":
  version: 4.17.20
  resolution: "lodash@npm:4.17.20"

"app@workspace:.":
  version: 0.0.0-use.local
  resolution: "app@workspace:."
"#;
        assert_eq!(deps(&yarn_lock(berry).unwrap()), [d("lodash", Some("4.17.20"))]);
        let classic = "# yarn lockfile v1\n\n\"@scope/a@^1.0.0\", \"@scope/a@^1.1.0\":\n  version \"1.1.2\"\n  resolved \"https://registry.yarnpkg.com/@scope/a/-/a-1.1.2.tgz\"\n\nfromgit@git+https://example.invalid/x.git:\n  version \"1.0.0\"\n  resolved \"git+https://example.invalid/x.git#abc\"\n";
        assert_eq!(deps(&yarn_lock(classic).unwrap()), [d("@scope/a", Some("1.1.2"))]);
        assert!(yarn_lock("{}").is_err());
        let v6 = "lockfileVersion: '6.0'\n\npackages:\n\n  /minimist@0.0.8:\n    resolution: {integrity: sha512-x}\n    dev: false\n\n  /@babel/core@7.0.0(supports-color@5.0.0):\n    resolution: {integrity: sha512-y}\n";
        assert_eq!(deps(&pnpm_lock(v6).unwrap()), [d("minimist", Some("0.0.8")), d("@babel/core", Some("7.0.0"))]);
        let v5 = "lockfileVersion: 5.4\n\npackages:\n\n  /minimist/1.2.5:\n    resolution: {integrity: sha512-z}\n\n  /@scope/b/2.0.0:\n    dev: true\n";
        assert_eq!(deps(&pnpm_lock(v5).unwrap()), [d("minimist", Some("1.2.5")), d("@scope/b", Some("2.0.0"))]);
        assert!(pnpm_lock("packages:\n").is_err());
    }

    #[test]
    fn kinds_by_file_name() {
        assert_eq!(Kind::of(Path::new("a/Cargo.lock")), Some(Kind::CargoLock));
        assert_eq!(Kind::of(Path::new("requirements-dev.txt")), Some(Kind::Requirements));
        assert_eq!(Kind::of(Path::new("npm-shrinkwrap.json")), Some(Kind::PackageLock));
        assert_eq!(Kind::of(Path::new("README.md")), None);
    }
}
