//! `loopguard advisories import <dir|zip>` and `loopguard advisories check [file]`, and the hook's
//! dependency advisory gate. The offline OSV store lives under the state home
//! (`advisories/<ecosystem>/<package>.jsonl`, one record per line, plus `meta.json` with the
//! import time and the data's own date), so a check reads only the files of the packages it
//! looks up.

use loopguard_core::advisories::manifest::{Dep, Kind};
use loopguard_core::advisories::{AdvisoryStore, Ecosystem, Hit, OsvRecord, detect};
use loopguard_core::policy::AdvisoryConfig;
use loopguard_core::{Finding, RiskLevel, Verdict};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One record larger than this is not an advisory (bounds a zip entry's expansion).
const MAX_RECORD_BYTES: u64 = 8 << 20;

fn dir(state_home: &Path) -> PathBuf {
    state_home.join("advisories")
}

fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

fn package_file(state_home: &Path, eco: Ecosystem, name: &str) -> PathBuf {
    dir(state_home).join(eco.osv_name()).join(format!("{}.jsonl", file_name(&eco.normalize(name))))
}

#[derive(Default)]
struct Import {
    by_file: BTreeMap<PathBuf, Vec<String>>,
    records: usize,
    skipped: usize,
    newest: String,
}

impl Import {
    fn add(&mut self, state_home: &Path, text: &str, origin: &str) -> Result<(), String> {
        let r: OsvRecord = serde_json::from_str(text).map_err(|e| format!("{origin}: not an OSV record: {e}"))?;
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
        let mut files = std::collections::BTreeSet::new();
        for a in &r.affected {
            if let Some(eco) = Ecosystem::from_osv(&a.package.ecosystem) {
                files.insert(package_file(state_home, eco, &a.package.name));
            }
        }
        if files.is_empty() {
            // Ecosystems the gate does not check (Debian, Maven, …): not stored.
            self.skipped += 1;
            return Ok(());
        }
        if let Some(m) = v.get("modified").and_then(|m| m.as_str())
            && m > self.newest.as_str()
        {
            self.newest = m.to_string();
        }
        let line = serde_json::to_string(&v).map_err(|e| e.to_string())?;
        for f in files {
            self.by_file.entry(f).or_default().push(line.clone());
        }
        self.records += 1;
        Ok(())
    }
}

/// Imports every OSV record (`*.json`) of a directory (recursively) or a zip archive (osv.dev's
/// `all.zip`), replacing the store. Returns (records, packages, records of other ecosystems).
pub fn import(state_home: &Path, src: &Path) -> Result<(usize, usize, usize), String> {
    let mut imp = Import::default();
    if src.is_file() {
        let f = std::fs::File::open(src).map_err(|e| format!("{}: {e}", src.display()))?;
        let mut zip = zip::ZipArchive::new(f).map_err(|e| format!("{}: not a zip archive: {e}", src.display()))?;
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i).map_err(|e| format!("{}: entry {i}: {e}", src.display()))?;
            let name = entry.name().map_err(|e| format!("{}: entry {i}: {e}", src.display()))?.to_string();
            if !entry.is_file() || !name.ends_with(".json") {
                continue;
            }
            let origin = format!("{}:{name}", src.display());
            if entry.size() > MAX_RECORD_BYTES {
                return Err(format!("{origin}: larger than {} MiB, not an advisory", MAX_RECORD_BYTES >> 20));
            }
            let mut text = String::new();
            (&mut entry).take(MAX_RECORD_BYTES + 1).read_to_string(&mut text).map_err(|e| format!("{origin}: {e}"))?;
            imp.add(state_home, &text, &origin)?;
        }
    } else {
        let mut stack = vec![src.to_path_buf()];
        while let Some(d) = stack.pop() {
            let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
            for e in entries {
                let p = e.map_err(|e| format!("{}: {e}", d.display()))?.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if p.extension().is_none_or(|x| x != "json") {
                    continue;
                }
                let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                imp.add(state_home, &text, &p.display().to_string())?;
            }
        }
    }
    if imp.records == 0 {
        return Err(format!(
            "no OSV records for crates.io, npm, PyPI or Go in {} ({} records of other ecosystems)",
            src.display(),
            imp.skipped
        ));
    }
    // Replace the whole store: write to a fresh directory, then swap it in.
    let tmp = state_home.join(format!("advisories.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for (f, lines) in &imp.by_file {
        let rel = f.strip_prefix(dir(state_home)).map_err(|e| e.to_string())?;
        let dest = tmp.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap_or(&tmp)).map_err(|e| e.to_string())?;
        std::fs::write(&dest, lines.join("\n") + "\n").map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    let meta = json!({
        "imported_at": crate::effects::now(), "source": src.display().to_string(),
        "records": imp.records, "packages": imp.by_file.len(), "data_date": imp.newest,
    });
    std::fs::write(tmp.join("meta.json"), meta.to_string()).map_err(|e| e.to_string())?;
    let old = state_home.join(format!("advisories.old{}", std::process::id()));
    let _ = std::fs::rename(dir(state_home), &old);
    std::fs::rename(&tmp, dir(state_home)).map_err(|e| format!("cannot install the advisory store: {e}"))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok((imp.records, imp.by_file.len(), imp.skipped))
}

/// The store's metadata; `Err` when there is no store (never "no advisories").
pub fn meta(state_home: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(dir(state_home).join("meta.json")).map_err(|_| {
        "no advisory data: run `loopguard advisories import <dir|zip>` first (missing data is never \"no advisories\")"
            .to_string()
    })?;
    serde_json::from_str(&text).map_err(|e| format!("the advisory store's meta.json is unreadable: {e}"))
}

/// The warning stale data adds to every result, if it is older than the policy allows.
pub fn staleness(meta: &serde_json::Value, cfg: &AdvisoryConfig) -> Option<String> {
    let age = crate::effects::now() - meta["imported_at"].as_i64().unwrap_or(0);
    let max = i64::try_from(cfg.max_age_days.saturating_mul(86400)).unwrap_or(i64::MAX);
    (age > max).then(|| {
        format!(
            "the advisory data was imported {} days ago (policy maximum {} days): re-import it",
            age / 86400,
            cfg.max_age_days
        )
    })
}

/// Loads the records of the given packages.
pub fn load(state_home: &Path, deps: &[Dep]) -> Result<AdvisoryStore, String> {
    let mut store = AdvisoryStore::default();
    let files: std::collections::BTreeSet<PathBuf> =
        deps.iter().map(|d| package_file(state_home, d.eco, &d.name)).collect();
    for f in files {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{}: {e}", f.display())),
        };
        for line in text.lines().filter(|l| !l.is_empty()) {
            store.add_json(line).map_err(|e| format!("{}: {e}", f.display()))?;
        }
    }
    Ok(store)
}

/// How a dependency was checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    /// At this exact version.
    Exact(String),
    /// At the lowest version its requirement admits.
    Floor(String),
    /// Without a version: only advisories with no fix count.
    Newest,
}

/// One advisory hit on one dependency.
#[derive(Debug, Clone)]
pub struct Found {
    /// The dependency.
    pub dep: Dep,
    /// How it was checked.
    pub checked: Checked,
    /// The advisory.
    pub hit: Hit,
}

/// Looks every dependency up. `Err` when a version or a range cannot be read.
pub fn lookup(store: &AdvisoryStore, deps: &[Dep]) -> Result<Vec<Found>, String> {
    let mut out = Vec::new();
    for d in deps {
        // Exact: a lockfile's or go.mod's version, `==` pins, and bare versions outside Cargo
        // (where `1.2.3` means `^1.2.3`).
        let exact = |r: &str| d.exact || (d.eco != Ecosystem::Crates && d.eco.parse(r).is_some());
        let version = match &d.req {
            Some(r) if exact(r) => Some(
                d.eco
                    .parse(r)
                    .or_else(|| d.eco.floor(r))
                    .map(|v| (Checked::Exact(v.to_string()), v))
                    .ok_or_else(|| format!("`{r}` is not a {} version (package `{}`)", d.eco, d.name))?,
            ),
            Some(r) => d.eco.floor(r).map(|v| (Checked::Floor(v.to_string()), v)),
            None => None,
        };
        match version {
            Some((checked, v)) => {
                for hit in store.check(d.eco, &d.name, &v)? {
                    out.push(Found { dep: d.clone(), checked: checked.clone(), hit });
                }
            }
            None => {
                for hit in store.unfixed(d.eco, &d.name) {
                    out.push(Found { dep: d.clone(), checked: Checked::Newest, hit });
                }
            }
        }
    }
    Ok(out)
}

impl Found {
    /// One sentence: what is affected, by what.
    pub fn message(&self) -> String {
        let (d, h) = (&self.dep, &self.hit);
        let cvss = h.cvss.map(|c| format!(", CVSS {c}")).unwrap_or_default();
        let what = match &self.checked {
            Checked::Exact(v) => format!("`{}` {v} ({})", d.name, d.eco),
            Checked::Floor(v) => {
                format!("`{}` `{}` ({}) admits {v}, which", d.name, d.req.as_deref().unwrap_or(""), d.eco)
            }
            Checked::Newest => {
                format!("every release of `{}` ({}) since the advisory, with no fix known,", d.name, d.eco)
            }
        };
        let verb = if matches!(self.checked, Checked::Newest) { "is affected by" } else { "has" };
        let summary = h.summary.trim().trim_end_matches('.');
        format!("{what} {verb} advisory {}{cvss}: {summary}.", h.id)
    }

    /// What to do instead.
    pub fn remedy(&self) -> String {
        match (&self.hit.fixed, &self.checked) {
            (Some(f), Checked::Floor(_)) => format!("require `{}` {f} or later.", self.dep.name),
            (Some(f), _) => format!("use `{}` {f} or later.", self.dep.name),
            (None, _) => {
                format!("no fixed release of `{}` is known: choose another package or ask the human.", self.dep.name)
            }
        }
    }
}

/// The files `advisories check` reads when none is named: every known manifest and lockfile in
/// `cwd` (a lockfile and its manifest both, as they can disagree).
pub fn default_files(cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for n in [
        "Cargo.lock",
        "Cargo.toml",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "package.json",
        "poetry.lock",
        "uv.lock",
        "Pipfile.lock",
        "pyproject.toml",
        "go.mod",
    ] {
        let p = cwd.join(n);
        if p.is_file() {
            out.push(p);
        }
    }
    if let Ok(entries) = std::fs::read_dir(cwd) {
        let mut reqs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && Kind::of(p) == Some(Kind::Requirements))
            .collect();
        reqs.sort();
        out.extend(reqs);
    }
    out
}

/// What `advisories check` found: the command prints it as JSON or renders it for a human.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckReport {
    /// Every advisory that applies.
    pub findings: Vec<CheckFinding>,
    /// Dependencies checked.
    pub dependencies: usize,
    /// The advisory data's date.
    pub data_date: serde_json::Value,
    /// Stale or missing data.
    pub warning: Option<String>,
}

/// One advisory for one dependency.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckFinding {
    /// The manifest or lockfile.
    pub file: String,
    /// The OSV ecosystem.
    pub ecosystem: &'static str,
    /// The package.
    pub package: String,
    /// The requirement as written.
    pub requirement: Option<String>,
    /// The version checked (none: the newest).
    pub checked: Option<String>,
    /// The advisory id.
    pub advisory: String,
    /// Other ids of the advisory (CVE, GHSA).
    pub aliases: serde_json::Value,
    /// What it is about.
    pub summary: serde_json::Value,
    /// Its CVSS score.
    pub cvss: serde_json::Value,
    /// The first fixed version.
    pub fixed: serde_json::Value,
    /// What it means and what to do, for a human.
    #[serde(skip)]
    line: String,
}

impl CheckReport {
    /// Whether any advisory applies.
    pub fn found(&self) -> bool {
        !self.findings.is_empty()
    }

    /// For a human.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(w) = &self.warning {
            out.push_str(&format!("warning: {w}\n"));
        }
        for f in &self.findings {
            out.push_str(&f.line);
        }
        out.push_str(&format!(
            "{} advisories in {} dependencies (data of {})\n",
            self.findings.len(),
            self.dependencies,
            self.data_date.as_str().filter(|d| !d.is_empty()).unwrap_or("unknown date")
        ));
        out
    }
}

/// Checks manifests and lockfiles.
pub fn check_files(state_home: &Path, files: &[PathBuf], cfg: &AdvisoryConfig) -> Result<CheckReport, String> {
    let meta = meta(state_home)?;
    if files.is_empty() {
        return Err("no manifest or lockfile here: name one (Cargo.lock, package-lock.json, requirements.txt, pyproject.toml, go.mod, …)".into());
    }
    let mut findings = Vec::new();
    let mut counted = 0;
    for f in files {
        let kind = Kind::of(f).ok_or_else(|| {
            format!("{}: not a manifest or lockfile loopguard reads (Cargo.toml, Cargo.lock, package.json, package-lock.json, yarn.lock, pnpm-lock.yaml, requirements*.txt, pyproject.toml, poetry.lock, uv.lock, Pipfile.lock, go.mod)", f.display())
        })?;
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let deps = kind.read(&text).map_err(|e| format!("{}: {e}", f.display()))?;
        counted += deps.len();
        let store = load(state_home, &deps)?;
        let found = lookup(&store, &deps).map_err(|e| format!("{}: {e}", f.display()))?;
        findings.extend(found.into_iter().map(|x| CheckFinding {
            file: f.display().to_string(),
            ecosystem: x.dep.eco.osv_name(),
            package: x.dep.name.clone(),
            requirement: x.dep.req.clone(),
            checked: match &x.checked {
                Checked::Exact(v) | Checked::Floor(v) => Some(v.clone()),
                Checked::Newest => None,
            },
            advisory: x.hit.id.clone(),
            aliases: json!(x.hit.aliases),
            summary: json!(x.hit.summary),
            cvss: json!(x.hit.cvss),
            fixed: json!(x.hit.fixed),
            line: format!("{}: {}; {}\n", f.display(), x.message(), x.remedy()),
        }));
    }
    Ok(CheckReport {
        findings,
        dependencies: counted,
        data_date: meta["data_date"].clone(),
        warning: staleness(&meta, cfg),
    })
}

/// The dependencies a call adds or changes: package-manager commands in shell calls, and whole
/// writes and edits of manifests and lockfiles (the edit applied to the file on disk, compared
/// with it). `None` when the call changes no dependency; `Err` when it edits a manifest into
/// something that does not read.
pub fn dependency_changes(action: &loopguard_core::Action, cwd: &Path) -> Option<Result<Vec<Dep>, String>> {
    use loopguard_core::{Action, Change};
    match action {
        Action::Shell { command } => {
            let deps = detect::from_command_line(command);
            (!deps.is_empty()).then_some(Ok(deps))
        }
        Action::WriteFile { .. } | Action::Patch { .. } => {
            let mut deps = Vec::new();
            for (path, change) in action.file_changes() {
                let path = cwd.join(path);
                if Kind::of(&path).is_none() || !matches!(change, Change::Whole(_) | Change::Edits(_)) {
                    continue;
                }
                let old = std::fs::read_to_string(&path).unwrap_or_default();
                let Some(new) = change.apply(&old) else { continue };
                match detect::from_edit(&path, &old, &new) {
                    Some(Ok(d)) => deps.extend(d),
                    Some(Err(e)) => return Some(Err(format!("{}: {e}", path.display()))),
                    None => {}
                }
            }
            (!deps.is_empty()).then_some(Ok(deps))
        }
        _ => None,
    }
}

/// What the gate found for a call's dependency changes.
#[derive(Debug, Default)]
pub struct GateReport {
    /// Findings to add to the decision.
    pub findings: Vec<Finding>,
    /// A note for the audit record and the human (missing or stale data, what was checked).
    pub note: Option<String>,
}

/// Advisory findings for the packages a call adds or changes: `action` (ask by default), deny
/// from `deny_cvss`. Without advisory data: the policy's `missing` verdict (allow by default,
/// with a note). Data that exists but does not read is an error (the caller asks).
pub fn gate(state_home: &Path, deps: &[Dep], cfg: &AdvisoryConfig) -> Result<GateReport, String> {
    if deps.is_empty() {
        return Ok(GateReport::default());
    }
    let names = deps.iter().map(|d| format!("`{}`", d.name)).collect::<Vec<_>>().join(", ");
    if !dir(state_home).join("meta.json").exists() {
        let note =
            format!("no advisory data is imported, so the dependencies this call changes ({names}) were not checked");
        let mut r = GateReport { findings: Vec::new(), note: Some(note.clone()) };
        if cfg.missing != Verdict::Allow {
            r.findings.push(
                Finding::new(
                    loopguard_core::reasons::ADVISORY_DATA_MISSING,
                    cfg.missing,
                    RiskLevel::Medium,
                    format!("{note}."),
                )
                .with_remedy("ask the human to import advisory data (`loopguard advisories import`)."),
            );
        }
        return Ok(r);
    }
    let meta = meta(state_home)?;
    let stale = staleness(&meta, cfg);
    let store = load(state_home, deps)?;
    let found = lookup(&store, deps)?;
    let mut findings = Vec::new();
    for f in &found {
        let critical = f.hit.cvss.is_some_and(|c| c >= cfg.deny_cvss);
        let verdict = if critical { Verdict::Deny } else { cfg.action };
        let mut msg = f.message();
        if let Some(w) = &stale {
            msg.push_str(&format!(" (warning: {w})"));
        }
        findings.push(
            Finding::new(
                loopguard_core::reasons::VULNERABLE_DEPENDENCY,
                verdict,
                if critical { RiskLevel::Critical } else { RiskLevel::High },
                msg,
            )
            .with_remedy(f.remedy()),
        );
    }
    let note = match (&stale, found.is_empty()) {
        (Some(w), _) => Some(format!("checked {names} against advisory data that is out of date: {w}")),
        (None, true) => None,
        (None, false) => Some(format!("{} advisories in {names}", found.len())),
    };
    Ok(GateReport { findings, note })
}
