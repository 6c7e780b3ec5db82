//! The dependency advisory gate's data: OSV records (the format of the RustSec database's OSV
//! export and osv.dev's archives), indexed by ecosystem and package, and the question "is this
//! version of this package affected, and what is the fixed version?".
//!
//! This first part handles the crates.io ecosystem (SemVer, with the `semver` crate) and OSV's
//! `SEMVER` and `ECOSYSTEM` ranges with `introduced` / `fixed` / `last_affected` / `limit` events
//! plus explicit `versions` lists. npm and PyPI version semantics, and the gate's detection of
//! dependency changes, are the rest of issue 10.

pub mod lockfile;

use serde::Deserialize;
use std::collections::HashMap;

/// One OSV record (the fields the gate uses).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OsvRecord {
    /// e.g. `RUSTSEC-2016-0001`.
    pub id: String,
    /// Other ids (CVE, GHSA).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// One line.
    #[serde(default)]
    pub summary: String,
    /// Set when the advisory was withdrawn (it then affects nothing).
    #[serde(default)]
    pub withdrawn: Option<String>,
    /// CVSS vectors and the like.
    #[serde(default)]
    pub severity: Vec<OsvSeverity>,
    /// What it affects.
    #[serde(default)]
    pub affected: Vec<OsvAffected>,
}

/// A severity entry.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OsvSeverity {
    /// `CVSS_V3`, `CVSS_V4`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The vector.
    pub score: String,
}

/// One affected package.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OsvAffected {
    /// The package.
    pub package: OsvPackage,
    /// Version ranges.
    #[serde(default)]
    pub ranges: Vec<OsvRange>,
    /// Explicitly affected versions.
    #[serde(default)]
    pub versions: Vec<String>,
}

/// A package name in an ecosystem.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OsvPackage {
    /// `crates.io`, `npm`, `PyPI`, …
    pub ecosystem: String,
    /// The package name.
    pub name: String,
}

/// A range of affected versions.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OsvRange {
    /// `SEMVER`, `ECOSYSTEM` or `GIT`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Events in order.
    #[serde(default)]
    pub events: Vec<OsvEvent>,
}

/// One range event.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
pub struct OsvEvent {
    /// The first affected version (`0` = from the beginning).
    #[serde(default)]
    pub introduced: Option<String>,
    /// The first version no longer affected.
    #[serde(default)]
    pub fixed: Option<String>,
    /// The last affected version.
    #[serde(default)]
    pub last_affected: Option<String>,
    /// Versions at or after this are outside the range.
    #[serde(default)]
    pub limit: Option<String>,
}

/// A match: this advisory affects this version.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Advisory id.
    pub id: String,
    /// Aliases.
    pub aliases: Vec<String>,
    /// Summary.
    pub summary: String,
    /// CVSS base score when a CVSS 3 vector is given.
    pub cvss: Option<f64>,
    /// The smallest fixed version above the affected one, when known.
    pub fixed: Option<String>,
}

fn parse_semver(v: &str) -> Option<semver::Version> {
    let v = v.trim();
    if v == "0" {
        return Some(semver::Version::new(0, 0, 0));
    }
    semver::Version::parse(v).ok()
}

impl OsvRange {
    /// Whether `v` is in the range (crates.io semantics). `None` when the range cannot be read
    /// (the caller treats that as "cannot tell", never as "not affected").
    fn contains(&self, v: &semver::Version) -> Option<bool> {
        if !matches!(self.kind.as_str(), "SEMVER" | "ECOSYSTEM") {
            return None;
        }
        // Walk the events: each `introduced` opens, each `fixed`/`last_affected` closes.
        let mut affected = false;
        for e in &self.events {
            if let Some(i) = &e.introduced
                && parse_semver(i)? <= *v
            {
                affected = true;
            }
            if let Some(f) = &e.fixed
                && parse_semver(f)? <= *v
            {
                affected = false;
            }
            if let Some(l) = &e.last_affected
                && parse_semver(l)? < *v
            {
                affected = false;
            }
            if let Some(l) = &e.limit
                && parse_semver(l)? <= *v
            {
                return Some(false);
            }
        }
        Some(affected)
    }

    fn fixed_above(&self, v: &semver::Version) -> Option<semver::Version> {
        self.events.iter().filter_map(|e| e.fixed.as_deref().and_then(parse_semver)).filter(|f| f > v).min()
    }
}

/// Base score of a CVSS 3.x vector (the standard formula; `None` when it does not parse).
pub fn cvss3_base(vector: &str) -> Option<f64> {
    let mut m: HashMap<&str, &str> = HashMap::new();
    for part in vector.split('/').skip(1) {
        let (k, v) = part.split_once(':')?;
        m.insert(k, v);
    }
    let av = match *m.get("AV")? {
        "N" => 0.85,
        "A" => 0.62,
        "L" => 0.55,
        "P" => 0.2,
        _ => return None,
    };
    let ac = match *m.get("AC")? {
        "L" => 0.77,
        "H" => 0.44,
        _ => return None,
    };
    let scope_changed = *m.get("S")? == "C";
    let pr = match (*m.get("PR")?, scope_changed) {
        ("N", _) => 0.85,
        ("L", false) => 0.62,
        ("L", true) => 0.68,
        ("H", false) => 0.27,
        ("H", true) => 0.5,
        _ => return None,
    };
    let ui = match *m.get("UI")? {
        "N" => 0.85,
        "R" => 0.62,
        _ => return None,
    };
    let cia = |k: &str| match m.get(k) {
        Some(&"H") => Some(0.56),
        Some(&"L") => Some(0.22),
        Some(&"N") => Some(0.0),
        _ => None,
    };
    let (c, i, a) = (cia("C")?, cia("I")?, cia("A")?);
    let iss = 1.0 - (1.0 - c) * (1.0 - i) * (1.0 - a);
    let impact = if scope_changed { 7.52 * (iss - 0.029) - 3.25 * (iss - 0.02f64).powi(15) } else { 6.42 * iss };
    let exploit = 8.22 * av * ac * pr * ui;
    let roundup = |x: f64| (x * 10.0).ceil() / 10.0;
    Some(if impact <= 0.0 {
        0.0
    } else if scope_changed {
        roundup((1.08 * (impact + exploit)).min(10.0))
    } else {
        roundup((impact + exploit).min(10.0))
    })
}

/// Advisories indexed by (ecosystem, package).
#[derive(Debug, Default, Clone)]
pub struct AdvisoryStore {
    by_package: HashMap<(String, String), Vec<std::sync::Arc<OsvRecord>>>,
    /// How many records are loaded.
    pub records: usize,
}

impl AdvisoryStore {
    /// Adds a record (withdrawn ones are skipped).
    pub fn add(&mut self, r: OsvRecord) {
        if r.withdrawn.is_some() {
            return;
        }
        let r = std::sync::Arc::new(r);
        for a in &r.affected {
            let key = (a.package.ecosystem.clone(), a.package.name.clone());
            let list = self.by_package.entry(key).or_default();
            if !list.iter().any(|x| x.id == r.id) {
                list.push(r.clone());
            }
        }
        self.records += 1;
    }

    /// Parses and adds one OSV JSON document.
    pub fn add_json(&mut self, text: &str) -> Result<(), String> {
        let r: OsvRecord = serde_json::from_str(text).map_err(|e| format!("not an OSV record: {e}"))?;
        self.add(r);
        Ok(())
    }

    /// Advisories affecting `name` at `version` in the crates.io ecosystem. `Err` when the version
    /// or a range cannot be read (never reported as "no advisories").
    pub fn check_crate(&self, name: &str, version: &str) -> Result<Vec<Hit>, String> {
        let v = parse_semver(version).ok_or_else(|| format!("`{version}` is not a SemVer version"))?;
        let Some(list) = self.by_package.get(&("crates.io".to_string(), name.to_string())) else {
            return Ok(Vec::new());
        };
        let mut hits = Vec::new();
        for r in list {
            for a in r.affected.iter().filter(|a| a.package.ecosystem == "crates.io" && a.package.name == name) {
                let listed = a.versions.iter().any(|x| parse_semver(x).as_ref() == Some(&v));
                let mut in_range = false;
                for range in a.ranges.iter().filter(|r| r.kind != "GIT") {
                    match range.contains(&v) {
                        Some(true) => in_range = true,
                        Some(false) => {}
                        None => return Err(format!("{}: a version range of `{name}` cannot be read", r.id)),
                    }
                }
                if listed || in_range {
                    let fixed = a.ranges.iter().filter_map(|x| x.fixed_above(&v)).min().map(|f| f.to_string());
                    let cvss =
                        r.severity.iter().find(|s| s.kind.starts_with("CVSS_V3")).and_then(|s| cvss3_base(&s.score));
                    hits.push(Hit {
                        id: r.id.clone(),
                        aliases: r.aliases.clone(),
                        summary: r.summary.clone(),
                        cvss,
                        fixed,
                    });
                }
            }
        }
        hits.sort_by(|a, b| a.id.cmp(&b.id));
        hits.dedup_by(|a, b| a.id == b.id);
        Ok(hits)
    }
}

#[cfg(test)]
mod tests;
