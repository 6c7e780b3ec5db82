//! `loopguard advisories import <dir>` and `loopguard advisories check [Cargo.lock]`: an offline
//! OSV store under the state home (`advisories/<ecosystem>/<package>.jsonl`, one record per line,
//! plus `meta.json` with the import time and the data's own date), so a check reads only the
//! files of the packages it looks up.

use loopguard_core::advisories::{AdvisoryStore, OsvRecord, lockfile};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Data older than this adds a warning to every result.
pub const MAX_AGE_SECS: i64 = 30 * 24 * 3600;

fn dir(state_home: &Path) -> PathBuf {
    state_home.join("advisories")
}

fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

/// Imports every `*.json` OSV record under `src` (recursively). Returns (records, packages).
pub fn import(state_home: &Path, src: &Path) -> Result<(usize, usize), String> {
    let mut by_file: std::collections::BTreeMap<PathBuf, Vec<String>> = Default::default();
    let mut records = 0;
    let mut newest = String::new();
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
            let r: OsvRecord =
                serde_json::from_str(&text).map_err(|e| format!("{}: not an OSV record: {e}", p.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            if let Some(m) = v.get("modified").and_then(|m| m.as_str())
                && m > newest.as_str()
            {
                newest = m.to_string();
            }
            let line = serde_json::to_string(&v).map_err(|e| e.to_string())?;
            let mut seen = std::collections::BTreeSet::new();
            for a in &r.affected {
                let f = dir(state_home)
                    .join(file_name(&a.package.ecosystem))
                    .join(format!("{}.jsonl", file_name(&a.package.name)));
                if seen.insert(f.clone()) {
                    by_file.entry(f).or_default().push(line.clone());
                }
            }
            records += 1;
        }
    }
    if records == 0 {
        return Err(format!("no OSV records (*.json) under {}", src.display()));
    }
    // Replace the whole store: write to a fresh directory, then swap it in.
    let tmp = state_home.join(format!("advisories.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for (f, lines) in &by_file {
        let rel = f.strip_prefix(dir(state_home)).map_err(|e| e.to_string())?;
        let dest = tmp.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap_or(&tmp)).map_err(|e| e.to_string())?;
        std::fs::write(&dest, lines.join("\n") + "\n").map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    let meta = json!({
        "imported_at": crate::effects::now(), "source": src.display().to_string(),
        "records": records, "packages": by_file.len(), "data_date": newest,
    });
    std::fs::write(tmp.join("meta.json"), meta.to_string()).map_err(|e| e.to_string())?;
    let old = state_home.join(format!("advisories.old{}", std::process::id()));
    let _ = std::fs::rename(dir(state_home), &old);
    std::fs::rename(&tmp, dir(state_home)).map_err(|e| format!("cannot install the advisory store: {e}"))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok((records, by_file.len()))
}

/// The store's metadata; `Err` when there is no store (never "no advisories").
pub fn meta(state_home: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(dir(state_home).join("meta.json")).map_err(|_| {
        "no advisory data: run `loopguard advisories import <dir>` first (missing data is never \"no advisories\")"
            .to_string()
    })?;
    serde_json::from_str(&text).map_err(|e| format!("the advisory store's meta.json is unreadable: {e}"))
}

/// Loads the records of the given crates.io packages.
pub fn load_crates(state_home: &Path, names: &[&str]) -> Result<AdvisoryStore, String> {
    let mut store = AdvisoryStore::default();
    for n in names {
        let f = dir(state_home).join("crates.io").join(format!("{}.jsonl", file_name(n)));
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        for line in text.lines().filter(|l| !l.is_empty()) {
            store.add_json(line).map_err(|e| format!("{}: {e}", f.display()))?;
        }
    }
    Ok(store)
}

/// Checks a Cargo.lock. Returns the report text and whether anything was found.
pub fn check_lockfile(state_home: &Path, lock: &Path, json_out: bool) -> Result<(String, bool), String> {
    let meta = meta(state_home)?;
    let text = std::fs::read_to_string(lock).map_err(|e| format!("{}: {e}", lock.display()))?;
    let pkgs = lockfile::cargo_lock(&text)?;
    let names: Vec<&str> = pkgs.iter().map(|p| p.name.as_str()).collect();
    let store = load_crates(state_home, &names)?;
    let mut findings = Vec::new();
    for p in &pkgs {
        for h in store.check_crate(&p.name, &p.version)? {
            findings.push(json!({
                "package": p.name, "version": p.version, "advisory": h.id, "aliases": h.aliases,
                "summary": h.summary, "cvss": h.cvss, "fixed": h.fixed,
            }));
        }
    }
    let age = crate::effects::now() - meta["imported_at"].as_i64().unwrap_or(0);
    let stale = (age > MAX_AGE_SECS).then(|| format!("the advisory data was imported {} days ago", age / 86400));
    if json_out {
        let v =
            json!({ "findings": findings, "packages": pkgs.len(), "data_date": meta["data_date"], "warning": stale });
        return Ok((format!("{v:#}\n"), !findings.is_empty()));
    }
    let mut out = String::new();
    if let Some(w) = &stale {
        out.push_str(&format!("warning: {w}\n"));
    }
    for f in &findings {
        out.push_str(&format!(
            "{} {} — {} ({}): {}{}\n",
            f["package"].as_str().unwrap_or(""),
            f["version"].as_str().unwrap_or(""),
            f["advisory"].as_str().unwrap_or(""),
            f["cvss"].as_f64().map_or("no CVSS".to_string(), |c| format!("CVSS {c}")),
            f["summary"].as_str().unwrap_or(""),
            f["fixed"].as_str().map(|x| format!("; use {x} or later")).unwrap_or_default()
        ));
    }
    out.push_str(&format!(
        "{} advisories in {} locked packages (data of {})\n",
        findings.len(),
        pkgs.len(),
        meta["data_date"].as_str().unwrap_or("unknown date")
    ));
    Ok((out, !findings.is_empty()))
}

/// The crates.io packages (name, version) a call would add or change: `cargo add NAME@VERSION`
/// (`cargo install` too), a Write of a Cargo.lock (against the file on disk), an Edit of one
/// (the edit applied to the file on disk). Versions not named (`cargo add serde`) are not known
/// before cargo resolves them and are not returned.
pub fn crate_changes(tool: &str, input: &serde_json::Value, cwd: &Path) -> Vec<(String, String)> {
    let s = |k: &str| input.get(k).and_then(serde_json::Value::as_str);
    match tool {
        "Bash" => {
            let Some(cmd) = s("command") else { return Vec::new() };
            let mut out = Vec::new();
            for seg in cmd.split(['&', ';', '|', '\n']) {
                let words: Vec<&str> = seg.split_whitespace().collect();
                let Some(pos) = words.windows(2).position(|w| w[0] == "cargo" && matches!(w[1], "add" | "install"))
                else {
                    continue;
                };
                let mut rest = words[pos + 2..].iter().peekable();
                let mut pinned = None;
                while let Some(w) = rest.next() {
                    if *w == "--version" || *w == "--vers" {
                        pinned = rest.next().map(|v| v.trim_start_matches('=').to_string());
                        continue;
                    }
                    if w.starts_with('-') {
                        continue;
                    }
                    if let Some((n, v)) = w.split_once('@') {
                        out.push((n.to_string(), v.trim_start_matches('=').to_string()));
                    } else if let Some(v) = pinned.take() {
                        out.push((w.to_string(), v));
                    }
                }
            }
            out
        }
        "Write" | "Edit" | "MultiEdit" => {
            let Some(path) = s("file_path") else { return Vec::new() };
            if !path.ends_with("Cargo.lock") {
                return Vec::new();
            }
            let p = cwd.join(path);
            let old = std::fs::read_to_string(&p).unwrap_or_default();
            let new = match tool {
                "Write" => s("content").unwrap_or_default().to_string(),
                "Edit" => match (s("old_string"), s("new_string")) {
                    (Some(a), Some(b)) => old.replacen(a, b, 1),
                    _ => return Vec::new(),
                },
                _ => {
                    let mut t = old.clone();
                    for e in input.get("edits").and_then(|e| e.as_array()).into_iter().flatten() {
                        if let (Some(a), Some(b)) =
                            (e.get("old_string").and_then(|v| v.as_str()), e.get("new_string").and_then(|v| v.as_str()))
                        {
                            t = t.replacen(a, b, 1);
                        }
                    }
                    t
                }
            };
            let before: std::collections::HashSet<(String, String)> =
                lockfile::cargo_lock(&old).unwrap_or_default().into_iter().map(|l| (l.name, l.version)).collect();
            lockfile::cargo_lock(&new)
                .unwrap_or_default()
                .into_iter()
                .map(|l| (l.name, l.version))
                .filter(|x| !before.contains(x))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Advisory findings for the packages a call adds or changes: ask, or deny from CVSS 9.0.
/// Without advisory data, nothing is claimed (the audit records that the data is missing).
pub fn findings(state_home: &Path, changes: &[(String, String)]) -> Result<Vec<loopguard_core::Finding>, String> {
    use loopguard_core::{Finding, RiskLevel, Verdict};
    // No changes, or no data at all: nothing to claim (the audit and `advisories check` say the
    // data is missing). Data that exists but does not read is an error (the caller asks).
    if changes.is_empty() || !dir(state_home).join("meta.json").exists() {
        return Ok(Vec::new());
    }
    meta(state_home)?;
    let names: Vec<&str> = changes.iter().map(|(n, _)| n.as_str()).collect();
    let store = load_crates(state_home, &names)?;
    let mut out = Vec::new();
    for (name, version) in changes {
        for h in store.check_crate(name, version)? {
            let critical = h.cvss.is_some_and(|c| c >= 9.0);
            out.push(
                Finding::new(
                    loopguard_core::reasons::VULNERABLE_DEPENDENCY,
                    if critical { Verdict::Deny } else { Verdict::Ask },
                    if critical { RiskLevel::Critical } else { RiskLevel::High },
                    format!(
                        "`{name}` {version} has advisory {}{}: {}",
                        h.id,
                        h.cvss.map(|c| format!(" (CVSS {c})")).unwrap_or_default(),
                        h.summary
                    ),
                )
                .with_remedy(match &h.fixed {
                    Some(f) => format!("use `{name}` {f} or later."),
                    None => format!("no fixed release of `{name}` is known: choose another crate or ask the human."),
                }),
            );
        }
    }
    Ok(out)
}
