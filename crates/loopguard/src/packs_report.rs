//! `loopguard policy packs`: the packs of the effective policy, with their switches and rule
//! counts (human or JSON), or docs/packs.md (`--markdown`).

use loopguard_core::Policy;
use loopguard_core::packs::PackOrigin;
use serde::Serialize;

/// One pack as listed.
#[derive(Debug, Serialize)]
pub struct PackRow {
    /// The pack's id.
    pub id: String,
    /// Its family.
    pub family: String,
    /// Whether the policy has it on.
    pub enabled: bool,
    /// How many rules it has.
    pub rules: usize,
    /// The programs it covers.
    pub programs: Vec<String>,
    /// `built-in` or the file it came from.
    pub source: String,
}

/// The packs of a policy, built-in first, in id order within each source.
pub fn rows(policy: &Policy) -> Vec<PackRow> {
    let mut rows: Vec<PackRow> = policy
        .packs()
        .all()
        .into_iter()
        .map(|(p, enabled)| PackRow {
            id: p.id.clone(),
            family: p.family.clone(),
            enabled,
            rules: p.rules.len(),
            programs: p.programs.clone(),
            source: match &p.origin {
                PackOrigin::Builtin => "built-in".into(),
                PackOrigin::File(f) => f.display().to_string(),
            },
        })
        .collect();
    rows.sort_by(|a, b| (a.source != "built-in", &a.id).cmp(&(b.source != "built-in", &b.id)));
    rows
}

/// The listing as text: one line a pack, then the totals.
pub fn human(rows: &[PackRow]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let width = rows.iter().map(|r| r.id.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(out, "{:<width$}  {:<3}  {:>5}  {:<14}  programs", "pack", "on", "rules", "family");
    for r in rows {
        let on = if r.enabled { "yes" } else { "no" };
        let src = if r.source == "built-in" { String::new() } else { format!("  ({})", r.source) };
        let _ = writeln!(
            out,
            "{:<width$}  {:<3}  {:>5}  {:<14}  {}{src}",
            r.id,
            on,
            r.rules,
            r.family,
            r.programs.join(", ")
        );
    }
    let on: Vec<&PackRow> = rows.iter().filter(|r| r.enabled).collect();
    let _ =
        writeln!(out, "{} packs ({} on), {} rules on", rows.len(), on.len(), on.iter().map(|r| r.rules).sum::<usize>());
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_listing_counts_what_the_policy_has_on() {
        let first = loopguard_core::packs::BUILTIN_PACKS[0].id;
        let text = format!("[packs]\ndisable = [\"{first}\"]\n");
        let policy = Policy::from_layers(&[(loopguard_core::policy::LayerKind::User, "u.toml".into(), text)]).unwrap();
        let rows = rows(&policy);
        assert_eq!(rows.len(), loopguard_core::packs::BUILTIN_PACKS.len());
        let row = rows.iter().find(|r| r.id == first).unwrap();
        assert!(!row.enabled && row.rules > 0);
        let out = human(&rows);
        assert!(out.lines().any(|l| l.starts_with(first) && l.contains(" no ")), "{out}");
        let on = rows.iter().filter(|r| r.enabled).count();
        assert!(out.contains(&format!("({on} on)")), "{out}");
    }
}
