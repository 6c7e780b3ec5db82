//! `loopguard scan`: secrets in files, stdin or a git diff, as human text, JSON or SARIF 2.1.0,
//! with a baseline of accepted fingerprints. Exit 1 when anything new is found.

use loopguard_secrets::files::{FileFinding, ScanStats, scan_diff, scan_paths, scan_text};
use loopguard_secrets::{BUILTIN_RULES, Scanner};
use serde_json::json;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where to look.
#[derive(Debug, Clone)]
pub enum Source {
    /// Files and directories (walked; `-` is stdin).
    Paths(Vec<PathBuf>),
    /// `git diff RANGE`: added lines only.
    GitDiff(String),
    /// `git diff --cached`: what is staged.
    Staged,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `path:line: [rule] description (severity)`.
    Human,
    /// One JSON document.
    Json,
    /// SARIF 2.1.0.
    Sarif,
}

/// A scan's result.
#[derive(Debug)]
pub struct Report {
    /// New findings (not in the baseline).
    pub findings: Vec<FileFinding>,
    /// Findings the baseline accepted.
    pub baselined: usize,
    /// What was scanned.
    pub stats: ScanStats,
}

fn git(args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new("git").args(args).output().map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    String::from_utf8(out.stdout).map_err(|_| "git diff is not UTF-8".to_string())
}

/// Reads a baseline file: `{"fingerprints": [...]}`.
pub fn read_baseline(path: &Path) -> Result<BTreeSet<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("baseline {} is not JSON: {e}", path.display()))?;
    let list = v["fingerprints"]
        .as_array()
        .ok_or_else(|| format!("baseline {} has no \"fingerprints\" array", path.display()))?;
    Ok(list.iter().filter_map(|f| f.as_str().map(String::from)).collect())
}

/// The scanner to use: a gitleaks config (`--config`, else `.gitleaks.toml` in the current
/// directory) or the built-in rules. Notes about unsupported parts go to stderr.
pub fn scanner(config: Option<&Path>) -> Result<&'static Scanner, String> {
    let path = match config {
        Some(p) => Some(p.to_path_buf()),
        None => Some(PathBuf::from(".gitleaks.toml")).filter(|p| p.exists()),
    };
    let Some(path) = path else { return Ok(Scanner::builtin_bulk()) };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (s, notes) =
        loopguard_secrets::gitleaks::scanner_from_gitleaks(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    for n in notes {
        eprintln!("loopguard: {}: {n}", path.display());
    }
    // One per process: leaking it keeps the API's 'static shape.
    Ok(Box::leak(Box::new(s)))
}

/// Runs a scan.
pub fn run(source: &Source, all: bool, baseline: &BTreeSet<String>, scanner: &Scanner) -> Result<Report, String> {
    let (found, stats) = match source {
        Source::Paths(paths) => {
            let (stdin, files): (Vec<&PathBuf>, Vec<&PathBuf>) = paths.iter().partition(|p| p.as_os_str() == "-");
            let mut found = Vec::new();
            let mut stats = ScanStats::default();
            if !stdin.is_empty() {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                    .map_err(|e| format!("cannot read stdin: {e}"))?;
                stats.files += 1;
                stats.bytes += text.len() as u64;
                found.extend(scan_text(scanner, Path::new("-"), &text));
            }
            let files: Vec<PathBuf> = files.into_iter().cloned().collect();
            for f in &files {
                if !f.exists() {
                    return Err(format!("{} does not exist", f.display()));
                }
            }
            if !files.is_empty() {
                let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
                bar.set_style(
                    indicatif::ProgressStyle::with_template("{spinner} scanning: {msg}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                );
                let progress = |n: u64, b: u64| {
                    if n.is_multiple_of(64) {
                        bar.set_message(format!("{n} files, {:.1} MB", b as f64 / 1e6));
                        bar.tick();
                    }
                };
                let (f, s) = scan_paths(scanner, &files, all, &progress);
                bar.finish_and_clear();
                found.extend(f);
                stats.files += s.files;
                stats.bytes += s.bytes;
                stats.skipped += s.skipped;
            }
            (found, stats)
        }
        Source::GitDiff(range) => {
            let diff = git(&["diff", "--no-color", "--no-ext-diff", "-U0", range])?;
            let stats = ScanStats { files: 0, bytes: diff.len() as u64, skipped: 0 };
            (scan_diff(scanner, &diff), stats)
        }
        Source::Staged => {
            let diff = git(&["diff", "--cached", "--no-color", "--no-ext-diff", "-U0"])?;
            let stats = ScanStats { files: 0, bytes: diff.len() as u64, skipped: 0 };
            (scan_diff(scanner, &diff), stats)
        }
    };
    let (baselined, findings): (Vec<FileFinding>, Vec<FileFinding>) =
        found.into_iter().partition(|f| baseline.contains(&f.finding.fingerprint));
    Ok(Report { findings, baselined: baselined.len(), stats })
}

/// The baseline file that accepts every current finding.
pub fn baseline_json(report: &Report) -> String {
    let fps: BTreeSet<&str> = report.findings.iter().map(|f| f.finding.fingerprint.as_str()).collect();
    format!("{}\n", serde_json::to_string_pretty(&json!({ "fingerprints": fps })).unwrap_or_default())
}

/// Renders a report. The secret itself is never printed.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Human => human(report),
        Format::Json => {
            let v = json!({
                "findings": report.findings.iter().map(|f| json!({
                    "path": f.path, "line": f.finding.line, "rule": f.finding.rule, "description": f.finding.description,
                    "severity": f.finding.severity, "entropy": f.finding.entropy, "fingerprint": f.finding.fingerprint,
                })).collect::<Vec<_>>(),
                "baselined": report.baselined,
                "stats": report.stats,
            });
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
        Format::Sarif => format!("{}\n", serde_json::to_string_pretty(&sarif(report)).unwrap_or_default()),
    }
}

/// One line per finding, then the totals.
fn human(report: &Report) -> String {
    let mut s = String::new();
    for f in &report.findings {
        s.push_str(&format!(
            "{}:{}: [{}] {} ({:?}, fingerprint {})\n",
            f.path.display(),
            f.finding.line,
            f.finding.rule,
            f.finding.description,
            f.finding.severity,
            f.finding.fingerprint
        ));
    }
    s.push_str(&format!(
        "{} finding(s){}; {} file(s), {:.1} MB scanned{}\n",
        report.findings.len(),
        if report.baselined > 0 {
            format!(" ({} more accepted by the baseline)", report.baselined)
        } else {
            String::new()
        },
        report.stats.files,
        report.stats.bytes as f64 / 1e6,
        if report.stats.skipped > 0 { format!(", {} skipped", report.stats.skipped) } else { String::new() },
    ));
    s
}

/// SARIF 2.1.0, for code-scanning dashboards.
fn sarif(report: &Report) -> serde_json::Value {
    // The built-in rules, plus any rule a finding came from (a gitleaks config's own).
    let mut ids: Vec<(&str, &str)> = BUILTIN_RULES.iter().map(|r| (r.id, r.description)).collect();
    for f in &report.findings {
        if !ids.iter().any(|(id, _)| *id == f.finding.rule) {
            ids.push((&f.finding.rule, &f.finding.description));
        }
    }
    let rules: Vec<_> = ids.iter().map(|(id, d)| json!({ "id": id, "shortDescription": { "text": d } })).collect();
    let results: Vec<_> = report
        .findings
        .iter()
        .map(|f| {
            let level = match f.finding.severity {
                loopguard_secrets::Severity::Critical | loopguard_secrets::Severity::High => "error",
                loopguard_secrets::Severity::Medium => "warning",
                loopguard_secrets::Severity::Low => "note",
            };
            json!({
                "ruleId": f.finding.rule,
                "level": level,
                "message": { "text": format!("{} ({:?})", f.finding.description, f.finding.severity) },
                "locations": [{ "physicalLocation": {
                    "artifactLocation": { "uri": f.path.to_string_lossy() },
                    "region": { "startLine": f.finding.line }
                }}],
                "partialFingerprints": { "loopguardSecret/v1": f.finding.fingerprint },
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": { "name": "loopguard", "version": env!("CARGO_PKG_VERSION"), "informationUri": "https://example.invalid/loopguard", "rules": rules } },
            "results": results,
        }]
    })
}
