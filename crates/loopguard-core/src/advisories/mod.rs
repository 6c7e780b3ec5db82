//! The dependency advisory gate's data: OSV records (the format of the RustSec database's OSV
//! export and osv.dev's archives), indexed by ecosystem and package, and the question "is this
//! version of this package affected, and what is the fixed version?".
//!
//! Ecosystems: crates.io, npm, PyPI and Go ([`version`]), OSV `SEMVER` and `ECOSYSTEM` ranges
//! with `introduced` / `fixed` / `last_affected` / `limit` events plus explicit `versions` lists.
//! [`manifest`] reads the dependencies of manifests and lockfiles, [`detect`] the dependency
//! changes a tool call makes (package-manager commands, manifest edits).

pub mod detect;
pub mod manifest;
pub mod version;

pub use version::{Ecosystem, Ver};

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

impl OsvRange {
    /// Whether `v` is in the range. `None` when the range cannot be read (the caller treats
    /// that as "cannot tell", never as "not affected").
    fn contains(&self, eco: Ecosystem, v: &Ver) -> Option<bool> {
        if !matches!(self.kind.as_str(), "SEMVER" | "ECOSYSTEM") {
            return None;
        }
        // Walk the events: each `introduced` opens, each `fixed`/`last_affected` closes.
        let mut affected = false;
        for e in &self.events {
            // `0` is "from the very beginning", pre-releases of 0.0.0 (Go pseudo-versions) too.
            if let Some(i) = &e.introduced
                && (i.trim() == "0" || eco.parse(i)? <= *v)
            {
                affected = true;
            }
            if let Some(f) = &e.fixed
                && eco.parse(f)? <= *v
            {
                affected = false;
            }
            if let Some(l) = &e.last_affected
                && eco.parse(l)? < *v
            {
                affected = false;
            }
            if let Some(l) = &e.limit
                && eco.parse(l)? <= *v
            {
                return Some(false);
            }
        }
        Some(affected)
    }

    /// Whether the range is still open after its last event: every release from some version
    /// on is affected and no fix is known.
    fn open_ended(&self) -> bool {
        matches!(self.kind.as_str(), "SEMVER" | "ECOSYSTEM")
            && self.events.last().is_some_and(|e| e.introduced.is_some())
            && !self.events.iter().any(|e| e.limit.is_some())
    }

    fn fixed_above(&self, eco: Ecosystem, v: &Ver) -> Option<Ver> {
        self.events.iter().filter_map(|e| e.fixed.as_deref().and_then(|f| eco.parse(f))).filter(|f| f > v).min()
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

/// Advisories indexed by (ecosystem, normalised package name).
#[derive(Debug, Default, Clone)]
pub struct AdvisoryStore {
    by_package: HashMap<(Ecosystem, String), Vec<std::sync::Arc<OsvRecord>>>,
    /// How many records are loaded.
    pub records: usize,
}

impl AdvisoryStore {
    /// Adds a record (withdrawn ones are skipped; packages of other ecosystems are ignored).
    pub fn add(&mut self, r: OsvRecord) {
        if r.withdrawn.is_some() {
            return;
        }
        let r = std::sync::Arc::new(r);
        for a in &r.affected {
            let Some(eco) = Ecosystem::from_osv(&a.package.ecosystem) else { continue };
            let list = self.by_package.entry((eco, eco.normalize(&a.package.name))).or_default();
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

    /// The entries of `name` in `eco` with their records.
    fn entries<'a>(&'a self, eco: Ecosystem, name: &str) -> impl Iterator<Item = (&'a OsvRecord, &'a OsvAffected)> {
        let key = eco.normalize(name);
        self.by_package.get(&(eco, key.clone())).into_iter().flatten().flat_map(move |r| {
            let key = key.clone();
            r.affected
                .iter()
                .filter(move |a| {
                    Ecosystem::from_osv(&a.package.ecosystem) == Some(eco) && eco.normalize(&a.package.name) == key
                })
                .map(move |a| (r.as_ref(), a))
        })
    }

    fn hit(r: &OsvRecord, fixed: Option<String>) -> Hit {
        let cvss = r.severity.iter().find(|s| s.kind.starts_with("CVSS_V3")).and_then(|s| cvss3_base(&s.score));
        Hit { id: r.id.clone(), aliases: r.aliases.clone(), summary: r.summary.clone(), cvss, fixed }
    }

    /// Advisories affecting `name` at `version` in `eco`. `Err` when the version or a range
    /// cannot be read (never reported as "no advisories").
    pub fn check(&self, eco: Ecosystem, name: &str, version: &Ver) -> Result<Vec<Hit>, String> {
        let mut hits = Vec::new();
        for (r, a) in self.entries(eco, name) {
            let listed = a.versions.iter().any(|x| eco.parse(x).as_ref() == Some(version));
            let mut in_range = false;
            for range in a.ranges.iter().filter(|r| r.kind != "GIT") {
                match range.contains(eco, version) {
                    Some(true) => in_range = true,
                    Some(false) => {}
                    None => return Err(format!("{}: a version range of `{name}` cannot be read", r.id)),
                }
            }
            if listed || in_range {
                let fixed = a.ranges.iter().filter_map(|x| x.fixed_above(eco, version)).min().map(|f| f.to_string());
                hits.push(Self::hit(r, fixed));
            }
        }
        hits.sort_by(|a, b| a.id.cmp(&b.id));
        hits.dedup_by(|a, b| a.id == b.id);
        Ok(hits)
    }

    /// Advisories that affect the newest releases of `name` with no fix known: what a
    /// dependency added without a version (`cargo add serde`, `npm install left-pad`) gets
    /// whatever the registry's newest release is.
    pub fn unfixed(&self, eco: Ecosystem, name: &str) -> Vec<Hit> {
        let mut hits: Vec<Hit> = self
            .entries(eco, name)
            .filter(|(_, a)| a.ranges.iter().any(OsvRange::open_ended))
            .map(|(r, _)| Self::hit(r, None))
            .collect();
        hits.sort_by(|a, b| a.id.cmp(&b.id));
        hits.dedup_by(|a, b| a.id == b.id);
        hits
    }

    /// Advisories affecting crate `name` at `version` (crates.io; the version as text).
    pub fn check_crate(&self, name: &str, version: &str) -> Result<Vec<Hit>, String> {
        let v = Ecosystem::Crates.parse(version).ok_or_else(|| format!("`{version}` is not a SemVer version"))?;
        self.check(Ecosystem::Crates, name, &v)
    }
}

#[cfg(test)]
mod tests;
