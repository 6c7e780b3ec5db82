//! Versions and requirements of each ecosystem the advisory gate knows.
//!
//! - crates.io: SemVer (the `semver` crate); requirements are Cargo's (`1.2` = `^1.2`).
//! - npm: SemVer versions (`v` and `=` prefixes tolerated); requirements are node-semver ranges
//!   (`^`, `~`, x-ranges, hyphen ranges, `||`). Only the *lowest version a range admits* is
//!   needed here, which is a small, bounded computation: it is written here rather than pulling
//!   in a whole range-matching crate.
//! - PyPI: PEP 440 (the `pep440_rs` crate, the implementation `uv` uses); Poetry's `^` and `~`
//!   constraints are read for their lower bound.
//! - Go: SemVer with a `v` prefix and `+incompatible` suffixes.
//!
//! A dependency written as a range is checked at its *floor*, the lowest version it admits: if
//! that version is affected, the requirement lets a resolver pick a vulnerable release (and
//! `--minimal-versions`, an old lockfile or a registry mirror will), so the remedy is to raise
//! the floor to the fixed version.

use std::fmt;
use std::str::FromStr;

/// Input longer than this is not a version or a requirement (bounds the parsers).
pub const MAX_LEN: usize = 256;

/// The package ecosystems the gate checks (OSV ecosystem names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ecosystem {
    /// Rust crates (`crates.io`).
    Crates,
    /// npm packages (`npm`).
    Npm,
    /// Python packages (`PyPI`).
    PyPI,
    /// Go modules (`Go`).
    Go,
}

impl Ecosystem {
    /// Every ecosystem.
    pub const ALL: [Ecosystem; 4] = [Ecosystem::Crates, Ecosystem::Npm, Ecosystem::PyPI, Ecosystem::Go];

    /// The OSV ecosystem name.
    pub fn osv_name(self) -> &'static str {
        match self {
            Ecosystem::Crates => "crates.io",
            Ecosystem::Npm => "npm",
            Ecosystem::PyPI => "PyPI",
            Ecosystem::Go => "Go",
        }
    }

    /// From an OSV ecosystem name (`PyPI:...`-style suffixes ignored).
    pub fn from_osv(s: &str) -> Option<Self> {
        let base = s.split(':').next().unwrap_or(s);
        Self::ALL.into_iter().find(|e| e.osv_name() == base)
    }

    /// The name as the registry compares it: PyPI names are case-insensitive with `-`, `_` and
    /// `.` equivalent (PEP 503); the others are compared as written.
    pub fn normalize(self, name: &str) -> String {
        match self {
            Ecosystem::PyPI => {
                let mut out = String::with_capacity(name.len());
                let mut sep = false;
                for c in name.trim().chars() {
                    if matches!(c, '-' | '_' | '.') {
                        sep = true;
                    } else {
                        if sep && !out.is_empty() {
                            out.push('-');
                        }
                        sep = false;
                        out.push(c.to_ascii_lowercase());
                    }
                }
                out
            }
            _ => name.trim().to_string(),
        }
    }

    /// Parses a version of this ecosystem (`0`, OSV's "from the beginning", included).
    pub fn parse(self, v: &str) -> Option<Ver> {
        let v = v.trim();
        if v.is_empty() || v.len() > MAX_LEN {
            return None;
        }
        match self {
            Ecosystem::PyPI => pep440_rs::Version::from_str(v).ok().map(Ver::Py),
            Ecosystem::Crates | Ecosystem::Npm | Ecosystem::Go => {
                let v = match self {
                    Ecosystem::Npm => v.trim_start_matches('=').trim_start_matches('v'),
                    Ecosystem::Go => v.strip_prefix('v').unwrap_or(v).trim_end_matches("+incompatible"),
                    _ => v,
                };
                if v == "0" {
                    return Some(Ver::Sem(semver::Version::new(0, 0, 0)));
                }
                semver::Version::parse(v).ok().map(Ver::Sem)
            }
        }
    }

    /// The lowest version a requirement admits, as written in this ecosystem's manifests and
    /// commands (`None`: the requirement names no lower bound, e.g. `*`, `latest`, `<2`).
    pub fn floor(self, req: &str) -> Option<Ver> {
        let req = req.trim();
        if req.is_empty() || req.len() > MAX_LEN {
            return None;
        }
        match self {
            Ecosystem::Crates => cargo_floor(req).map(Ver::Sem),
            Ecosystem::Npm => npm_floor(req).map(Ver::Sem),
            Ecosystem::PyPI => pep440_floor(req).map(Ver::Py),
            Ecosystem::Go => self.parse(req),
        }
    }
}

impl fmt::Display for Ecosystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.osv_name())
    }
}

/// A version of one ecosystem. Versions of different ecosystems are never compared.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ver {
    /// SemVer (crates.io, npm, Go).
    Sem(semver::Version),
    /// PEP 440 (PyPI).
    Py(pep440_rs::Version),
}

impl fmt::Display for Ver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ver::Sem(v) => v.fmt(f),
            Ver::Py(v) => v.fmt(f),
        }
    }
}

/// Lowest version a Cargo requirement admits (`1.2` → 1.2.0, `>=1.4, <2` → 1.4.0).
fn cargo_floor(req: &str) -> Option<semver::Version> {
    use semver::Op;
    let r = semver::VersionReq::parse(req).ok()?;
    r.comparators
        .iter()
        .filter(|c| matches!(c.op, Op::Exact | Op::GreaterEq | Op::Tilde | Op::Caret | Op::Wildcard))
        .map(|c| semver::Version {
            major: c.major,
            minor: c.minor.unwrap_or(0),
            patch: c.patch.unwrap_or(0),
            pre: c.pre.clone(),
            build: semver::BuildMetadata::EMPTY,
        })
        .max()
}

/// A partial SemVer version as ranges write it (`1`, `1.2`, `1.x`, `1.2.3-rc.1`); missing or
/// wildcard parts are 0. `None` for `*`/`x` alone or text that is not a version.
fn partial_semver(s: &str) -> Option<semver::Version> {
    let s = s.trim().trim_start_matches('v').trim_start_matches('=');
    let (core, pre) = match s.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (s, None),
    };
    let core = core.split('+').next().unwrap_or(core);
    let mut nums = [0u64; 3];
    let mut given = 0;
    for (i, part) in core.split('.').enumerate() {
        if i >= 3 {
            return None;
        }
        if matches!(part, "x" | "X" | "*") {
            break;
        }
        nums[i] = part.parse().ok()?;
        given = i + 1;
    }
    if given == 0 {
        return None;
    }
    let pre = match pre {
        Some(p) if given == 3 => semver::Prerelease::new(p).ok()?,
        Some(_) => return None,
        None => semver::Prerelease::EMPTY,
    };
    Some(semver::Version { major: nums[0], minor: nums[1], patch: nums[2], pre, build: semver::BuildMetadata::EMPTY })
}

/// Lowest version a node-semver range admits: the lowest over `||` alternatives, each the
/// highest of its lower bounds (`>=`, `^`, `~`, `=`, bare and x-range versions, the left side
/// of a hyphen range). `None` when an alternative has no lower bound (`*`, `<2`, `>1.2.3`) or
/// the range is not one (a tag, a URL).
fn npm_floor(range: &str) -> Option<semver::Version> {
    let mut lowest: Option<semver::Version> = None;
    for alt in range.split("||") {
        let alt = alt.trim();
        let floor = if let Some((lo, _)) = alt.split_once(" - ") {
            partial_semver(lo)?
        } else {
            // `>= 1.2.3` is `>=1.2.3`: glue operators to their versions.
            let mut words: Vec<String> = Vec::new();
            let mut pending = String::new();
            for w in alt.split_whitespace() {
                if w.chars().all(|c| "<>=~^".contains(c)) {
                    pending.push_str(w);
                } else {
                    words.push(format!("{pending}{w}"));
                    pending.clear();
                }
            }
            let mut best: Option<semver::Version> = None;
            for w in &words {
                let op_len = w.find(|c: char| !"<>=~^".contains(c)).unwrap_or(w.len());
                let (op, v) = w.split_at(op_len);
                match op {
                    "" | "=" | ">=" | "^" | "~" | "~>" => {
                        let v = partial_semver(v)?;
                        best = Some(best.map_or(v.clone(), |b| b.max(v)));
                    }
                    "<" | "<=" | ">" => {
                        // No lower bound from these (`>` excludes the version it names).
                        partial_semver(v)?;
                    }
                    _ => return None,
                }
            }
            best?
        };
        lowest = Some(lowest.map_or(floor.clone(), |l| l.min(floor)));
    }
    lowest
}

/// Lowest version a PEP 440 specifier set admits (`==1.2`, `>=1.4,<2`, `~=1.4.2`, `==1.*`).
/// Poetry constraints are accepted too: `^1.2` and `~1.2` (lower bound 1.2) and a bare version
/// (exactly it).
fn pep440_floor(spec: &str) -> Option<pep440_rs::Version> {
    use pep440_rs::Operator;
    let spec = spec.trim().trim_start_matches('(').trim_end_matches(')').trim();
    if let Some(rest) = spec.strip_prefix('^').or_else(|| spec.strip_prefix('~').filter(|r| !r.starts_with('='))) {
        return pep440_rs::Version::from_str(rest.trim()).ok();
    }
    if let Ok(v) = pep440_rs::Version::from_str(spec) {
        return Some(v);
    }
    let set = pep440_rs::VersionSpecifiers::from_str(spec).ok()?;
    set.iter()
        .filter(|s| {
            matches!(
                s.operator(),
                Operator::Equal
                    | Operator::EqualStar
                    | Operator::ExactEqual
                    | Operator::TildeEqual
                    | Operator::GreaterThanEqual
            )
        })
        .map(|s| s.version().clone())
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Ver {
        Ver::Sem(semver::Version::parse(v).unwrap())
    }
    fn p(v: &str) -> Ver {
        Ver::Py(pep440_rs::Version::from_str(v).unwrap())
    }

    #[test]
    fn cargo_requirements_floor() {
        let f = |r| Ecosystem::Crates.floor(r);
        assert_eq!(f("1.2"), Some(s("1.2.0")));
        assert_eq!(f("=0.8.3"), Some(s("0.8.3")));
        assert_eq!(f("~0.4"), Some(s("0.4.0")));
        assert_eq!(f(">=1.4, <2"), Some(s("1.4.0")));
        assert_eq!(f("1.*"), Some(s("1.0.0")));
        assert_eq!(f("1.0.0-rc.1"), Some(s("1.0.0-rc.1")));
        assert_eq!(f("*"), None);
        assert_eq!(f("<2"), None);
        assert_eq!(f("not a req"), None);
    }

    #[test]
    fn npm_ranges_floor() {
        let f = |r| Ecosystem::Npm.floor(r);
        assert_eq!(f("^4.17.20"), Some(s("4.17.20")));
        assert_eq!(f("~1.2"), Some(s("1.2.0")));
        assert_eq!(f("1.x"), Some(s("1.0.0")));
        assert_eq!(f("1.2.3 - 2.3.4"), Some(s("1.2.3")));
        assert_eq!(f(">= 1.2.3 < 2"), Some(s("1.2.3")));
        assert_eq!(f("^2.0.0 || ^1.5.0"), Some(s("1.5.0")));
        assert_eq!(f("v3.0.0"), Some(s("3.0.0")));
        assert_eq!(f("1.0.0-beta.2"), Some(s("1.0.0-beta.2")));
        assert_eq!(f("*"), None);
        assert_eq!(f("latest"), None);
        assert_eq!(f(">1.2.3"), None);
        assert_eq!(f("<2 || ^3"), None, "an alternative without a floor admits everything below");
        assert_eq!(f("git+https://example.invalid/x.git"), None);
    }

    #[test]
    fn pep440_specifiers_floor() {
        let f = |r| Ecosystem::PyPI.floor(r);
        assert_eq!(f("==2.25.0"), Some(p("2.25.0")));
        assert_eq!(f(">=1.4,<2"), Some(p("1.4")));
        assert_eq!(f("~=1.4.2"), Some(p("1.4.2")));
        assert_eq!(f("==1.*"), Some(p("1")));
        assert_eq!(f("^1.2"), Some(p("1.2")), "Poetry caret");
        assert_eq!(f("~1.2"), Some(p("1.2")), "Poetry tilde");
        assert_eq!(f("1.2.3"), Some(p("1.2.3")), "Poetry bare version");
        assert_eq!(f("<3"), None);
        assert_eq!(f("!=1.0"), None);
    }

    #[test]
    fn pep440_ordering_handles_pre_post_dev_and_epochs() {
        let e = Ecosystem::PyPI;
        let v = |x| e.parse(x).unwrap();
        assert!(v("1.0.dev1") < v("1.0a1"));
        assert!(v("1.0a1") < v("1.0rc1"));
        assert!(v("1.0rc1") < v("1.0"));
        assert!(v("1.0") < v("1.0.post1"));
        assert!(v("1!0.1") > v("2.0"));
        assert_eq!(v("1.0"), v("1.0.0"));
    }

    #[test]
    fn names_and_prefixes() {
        assert_eq!(Ecosystem::PyPI.normalize("Django_REST.framework"), "django-rest-framework");
        assert_eq!(Ecosystem::Npm.normalize("@types/node"), "@types/node");
        assert_eq!(Ecosystem::Go.parse("v1.2.3"), Some(s("1.2.3")));
        assert_eq!(Ecosystem::Go.parse("v2.0.0+incompatible"), Some(s("2.0.0")));
        assert_eq!(Ecosystem::Npm.parse("v1.0.0"), Some(s("1.0.0")));
        assert_eq!(Ecosystem::Crates.parse("0"), Some(s("0.0.0")));
        assert_eq!(Ecosystem::from_osv("PyPI"), Some(Ecosystem::PyPI));
        assert_eq!(Ecosystem::from_osv("Debian:11"), None);
        assert_eq!(Ecosystem::Crates.parse(&"1".repeat(300)), None, "bounded");
    }
}
