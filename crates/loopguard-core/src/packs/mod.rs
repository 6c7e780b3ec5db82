//! Destructive-operation packs: what the gate knows about programs, as data.
//!
//! A pack is a TOML file (one per family of programs: a cloud CLI, Kubernetes, backups…) of
//! rules. A rule names a command shape — leading subcommand words, flags that must or must not be
//! present, arguments, a pattern over the text the command carries (SQL, a request body) — and what
//! such a command does: its effect (delete, overwrite, remote write, publish, credential change,
//! availability), its severity and the autonomy level it needs, with the words told to the agent.
//! Every rule carries `match` and `not_match` examples; built-in packs are checked against them by
//! the tests, packs a policy adds are checked when the policy loads.
//!
//! The built-in packs are compiled in (`crates/loopguard-core/packs/*.toml`); the policy enables,
//! disables and adds packs (`[packs]`, docs/policy.md). Matching is indexed by program name, so a
//! command costs one hash lookup unless some pack knows its program.

pub(crate) mod builtin;
mod matcher;
#[cfg(test)]
mod tests;

use crate::checks::shell::unwrap::Command;
use crate::{AutonomyLevel, RiskLevel};
pub use matcher::Operands;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

pub use builtin::{BUILTIN_PACKS, BuiltinPack};

/// Pack files larger than this are refused.
pub const MAX_PACK_BYTES: usize = 512 * 1024;
/// At most this many rules in one pack.
pub const MAX_RULES: usize = 1000;

/// What a matched operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// Deletes data or resources.
    Delete,
    /// Replaces data or state with other content.
    Overwrite,
    /// Changes something on a remote service.
    RemoteWrite,
    /// Publishes to others (a registry, a release, an image).
    Publish,
    /// Creates, changes or removes credentials, keys, users or permissions.
    CredentialChange,
    /// Stops, disables or starves a service or the machine.
    Availability,
}

impl Effect {
    /// The stable name used in pack files.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Delete => "delete",
            Effect::Overwrite => "overwrite",
            Effect::RemoteWrite => "remote-write",
            Effect::Publish => "publish",
            Effect::CredentialChange => "credential-change",
            Effect::Availability => "availability",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [
            Effect::Delete,
            Effect::Overwrite,
            Effect::RemoteWrite,
            Effect::Publish,
            Effect::CredentialChange,
            Effect::Availability,
        ]
        .into_iter()
        .find(|e| e.as_str() == s)
    }
}

/// Where a pack came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackOrigin {
    /// Compiled in.
    Builtin,
    /// A file named by a policy layer.
    File(std::path::PathBuf),
}

/// One pack: a family of programs and the rules over them.
#[derive(Debug, Clone)]
pub struct Pack {
    /// Kebab-case id, unique; rule codes start with it.
    pub id: String,
    /// The family it belongs to (cloud, kubernetes, databases…), for listing.
    pub family: String,
    /// A short title.
    pub title: String,
    /// What the pack covers.
    pub description: String,
    /// Whether the pack is on when no policy says otherwise.
    pub default_enabled: bool,
    /// The programs its rules look at.
    pub programs: Vec<String>,
    /// The rules.
    pub rules: Vec<PackRule>,
    /// Where it came from.
    pub origin: PackOrigin,
    pub(crate) value_options: Vec<String>,
}

/// One rule of a pack.
#[derive(Debug, Clone)]
pub struct PackRule {
    /// Kebab-case id, unique in its pack.
    pub id: String,
    /// The reason code: `<pack id>-<rule id>`.
    pub code: String,
    /// What it does, when it is an operation to guard (none for rules that only set the level).
    pub effect: Option<Effect>,
    /// How bad: critical is denied by default (asked in normal mode where a human may approve
    /// it), high is asked, medium raises the call's risk (asked in normal mode).
    pub severity: Option<RiskLevel>,
    /// The autonomy level the command needs (`observe` marks a command that only reads).
    pub level: Option<AutonomyLevel>,
    /// Told to the agent.
    pub message: String,
    /// What would make it pass.
    pub remedy: Option<String>,
    /// Command lines the rule must match.
    pub examples_match: Vec<String>,
    /// Command lines the rule must not match.
    pub examples_not_match: Vec<String>,
    pub(crate) shape: matcher::Shape,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPack {
    id: String,
    family: String,
    title: String,
    description: String,
    #[serde(default = "yes")]
    enabled: bool,
    programs: Vec<String>,
    #[serde(default)]
    value_options: Vec<String>,
    #[serde(default)]
    rules: Vec<RawRule>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    /// Built-in packs only: a built-in reason code to report instead of `<pack>-<rule>` (the code
    /// the shell analysis used before the knowledge moved into packs, so policies keep working).
    code: Option<String>,
    #[serde(default)]
    programs: Vec<String>,
    #[serde(default)]
    words: Vec<String>,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    any_flags: Vec<String>,
    #[serde(default)]
    without: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    any_args: Vec<String>,
    text: Option<String>,
    not_text: Option<String>,
    effect: Option<String>,
    severity: Option<String>,
    level: Option<String>,
    message: String,
    remedy: Option<String>,
    #[serde(default, rename = "match")]
    examples_match: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
}

/// A pack file that cannot be used, with every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackError {
    /// The file (or built-in file name).
    pub file: String,
    /// What is wrong, one entry per problem.
    pub problems: Vec<String>,
}

impl std::fmt::Display for PackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pack {}: {}", self.file, self.problems.join("; "))
    }
}

impl Pack {
    /// Reads a pack file. `builtin` packs may mark commands as read-only (`level = "observe"`);
    /// packs a policy adds may only add restrictions.
    pub fn parse(file: &str, text: &str, origin: PackOrigin) -> Result<Pack, PackError> {
        let fail = |problems: Vec<String>| PackError { file: file.to_string(), problems };
        if text.len() > MAX_PACK_BYTES {
            return Err(fail(vec![format!("larger than {MAX_PACK_BYTES} bytes")]));
        }
        let raw: RawPack = toml::from_str(text).map_err(|e| fail(vec![e.to_string().trim().to_string()]))?;
        let mut problems = Vec::new();
        if !crate::reasons::is_kebab_case(&raw.id) {
            problems.push(format!("id `{}` is not kebab-case", raw.id));
        }
        if raw.programs.is_empty() {
            problems.push("`programs` is empty".to_string());
        }
        for p in &raw.programs {
            if p.is_empty() || p.contains('/') || p.chars().any(char::is_whitespace) {
                problems.push(format!("program `{p}` must be a base name"));
            }
        }
        if raw.rules.len() > MAX_RULES {
            problems.push(format!("more than {MAX_RULES} rules"));
        }
        let mut rules: Vec<PackRule> = Vec::new();
        for r in raw.rules {
            match rule(&raw.id, &raw.programs, r, origin == PackOrigin::Builtin) {
                Ok(rule) if rules.iter().any(|x| x.id == rule.id) => {
                    problems.push(format!("rule id `{}` is used twice", rule.id))
                }
                Ok(rule) => rules.push(rule),
                Err(mut p) => problems.append(&mut p),
            }
        }
        if !problems.is_empty() {
            return Err(fail(problems));
        }
        Ok(Pack {
            id: raw.id,
            family: raw.family,
            title: raw.title,
            description: raw.description,
            default_enabled: raw.enabled,
            programs: raw.programs,
            rules,
            origin,
            value_options: raw.value_options,
        })
    }

    /// Checks every rule against its own examples, and compiles every pattern: the problems
    /// found (empty when all hold).
    pub fn check_examples(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for r in &self.rules {
            problems.extend(r.shape.compile_all().into_iter().map(|e| format!("rule `{}`: {e}", r.id)));
            for (examples, want) in [(&r.examples_match, true), (&r.examples_not_match, false)] {
                for ex in examples {
                    match self.rule_matches_line(r, ex) {
                        Ok(got) if got == want => {}
                        Ok(_) => problems.push(format!(
                            "rule `{}`: example `{ex}` {}",
                            r.id,
                            if want { "should match but does not" } else { "should not match but does" }
                        )),
                        Err(e) => problems.push(format!("rule `{}`: example `{ex}` does not parse: {e}", r.id)),
                    }
                }
            }
        }
        problems
    }

    /// Whether one rule of this pack matches any command of a command line.
    pub fn rule_matches_line(&self, r: &PackRule, line: &str) -> Result<bool, crate::checks::shell::lex::ShellError> {
        let cmds =
            crate::checks::shell::unwrap::commands(&crate::checks::shell::lex::split_with_home(line, None)?, None)?;
        Ok(cmds.iter().any(|c| {
            let ops = Operands::of(c, &self.value_options);
            r.shape.matches(c, &ops)
        }))
    }
}

impl PackRule {
    /// Whether this rule (of `pack`) matches one command.
    pub fn matches_command(&self, pack: &Pack, c: &Command) -> bool {
        self.shape.matches(c, &Operands::of(c, &pack.value_options))
    }

    /// Whether this rule could match the command once its run-time words are known.
    pub fn could_match_command(&self, pack: &Pack, c: &Command) -> bool {
        self.shape.could_match(c, &Operands::of(c, &pack.value_options))
    }
}

/// A rule's `effect`, `severity` and `level`, each checked (a bad value is reported to `problem`
/// and taken as absent).
fn rule_kind(
    r: &RawRule,
    problem: &mut dyn FnMut(String),
) -> (Option<Effect>, Option<RiskLevel>, Option<AutonomyLevel>) {
    let effect = r.effect.as_deref().map(|e| Effect::parse(e).ok_or(e));
    let severity = r.severity.as_deref().map(|s| match s {
        "critical" => Ok(RiskLevel::Critical),
        "high" => Ok(RiskLevel::High),
        "medium" => Ok(RiskLevel::Medium),
        other => Err(other),
    });
    let level = r.level.as_deref().map(|l| AutonomyLevel::parse(l).ok_or(l));
    let effect = match effect {
        Some(Err(e)) => {
            problem(format!(
                "effect `{e}` is not one of delete, overwrite, remote-write, publish, credential-change, availability"
            ));
            None
        }
        Some(Ok(e)) => Some(e),
        None => None,
    };
    let severity = match severity {
        Some(Err(s)) => {
            problem(format!("severity `{s}` is not one of critical, high, medium"));
            None
        }
        Some(Ok(s)) => Some(s),
        None => None,
    };
    let level = match level {
        Some(Err(l)) => {
            problem(format!("level `{l}` is not an autonomy level"));
            None
        }
        Some(Ok(l)) => Some(l),
        None => None,
    };
    (effect, severity, level)
}

fn rule(pack: &str, programs: &[String], r: RawRule, builtin: bool) -> Result<PackRule, Vec<String>> {
    let mut problems = Vec::new();
    let at = |m: String| format!("rule `{}`: {m}", r.id);
    if !crate::reasons::is_kebab_case(&r.id) {
        problems.push(at("id is not kebab-case".into()));
    }
    let (effect, severity, level) = rule_kind(&r, &mut |m| problems.push(at(m)));
    if effect.is_some() != severity.is_some() && problems.is_empty() {
        problems.push(at("`effect` and `severity` go together".into()));
    }
    if effect.is_none() && level.is_none() && problems.is_empty() {
        problems.push(at("a rule needs an `effect` and `severity`, or a `level`".into()));
    }
    if level == Some(AutonomyLevel::Observe) && (effect.is_some() || !builtin) {
        problems.push(at("`level = \"observe\"` (read-only) is for built-in packs, on rules without an effect".into()));
    }
    if r.message.trim().is_empty() {
        problems.push(at("`message` is empty".into()));
    }
    if r.examples_match.is_empty() {
        problems.push(at("needs at least one `match` example".into()));
    }
    let rule_programs = if r.programs.is_empty() { programs.to_vec() } else { r.programs.clone() };
    if let Some(p) = rule_programs.iter().find(|p| !programs.contains(p)) {
        problems.push(at(format!("program `{p}` is not in the pack's `programs`")));
    }
    let shape = matcher::Shape::new(
        rule_programs,
        &r.words,
        &r.flags,
        &r.any_flags,
        &r.without,
        &r.args,
        &r.any_args,
        r.text.as_deref(),
        r.not_text.as_deref(),
        !builtin,
    );
    let shape = match shape {
        Ok(s) => Some(s),
        Err(e) => {
            problems.push(at(e));
            None
        }
    };
    if let Some(code) = &r.code
        && !(builtin && crate::reasons::CONFIGURABLE_RULES.contains(&code.as_str()))
    {
        problems.push(at(format!("`code = \"{code}\"`: only built-in packs may report a configurable built-in code")));
    }
    match shape {
        Some(mut shape) if problems.is_empty() => Ok(PackRule {
            code: r.code.clone().unwrap_or_else(|| format!("{pack}-{}", r.id)),
            id: r.id,
            effect,
            severity,
            level,
            message: r.message,
            remedy: r.remedy,
            examples_match: r.examples_match,
            examples_not_match: r.not_match,
            shape: {
                shape.strict_words = level == Some(AutonomyLevel::Observe);
                shape
            },
        }),
        _ => Err(problems),
    }
}

/// The built-in packs, each parsed on first use (a hook call parses only the packs of the
/// programs its command runs). A built-in pack that fails to parse is a bug the tests catch; at
/// run time a command of its programs is then denied ([`Lookup::broken`]).
static PARSED: LazyLock<Vec<OnceLock<Result<Pack, PackError>>>> =
    LazyLock::new(|| BUILTIN_PACKS.iter().map(|_| OnceLock::new()).collect());

/// The built-in pack at an index of [`BUILTIN_PACKS`], parsed.
pub fn builtin_pack(i: usize) -> Option<&'static Result<Pack, PackError>> {
    let b = BUILTIN_PACKS.get(i)?;
    Some(PARSED.get(i)?.get_or_init(|| Pack::parse(b.file, b.text, PackOrigin::Builtin)))
}

/// Every built-in pack, parsed (for listing, docs and tests).
pub fn builtin() -> Vec<&'static Pack> {
    (0..BUILTIN_PACKS.len()).filter_map(builtin_pack).filter_map(|r| r.as_ref().ok()).collect()
}

/// Problems with the built-in packs (empty unless the build is broken).
pub fn builtin_errors() -> Vec<&'static PackError> {
    (0..BUILTIN_PACKS.len()).filter_map(builtin_pack).filter_map(|r| r.as_ref().err()).collect()
}

/// Whether a code is a built-in pack rule's code (parses only packs whose id starts the code).
pub fn is_builtin_code(code: &str) -> bool {
    BUILTIN_PACKS.iter().enumerate().any(|(i, b)| {
        code.strip_prefix(b.id).is_some_and(|r| r.starts_with('-'))
            && builtin_pack(i).and_then(|r| r.as_ref().ok()).is_some_and(|p| p.rules.iter().any(|r| r.code == code))
    })
}

/// A rule that matched a command.
#[derive(Debug, Clone, Copy)]
pub struct Hit<'a> {
    /// The pack.
    pub pack: &'a Pack,
    /// The rule.
    pub rule: &'a PackRule,
}

/// What the enabled packs say about one command.
#[derive(Debug, Default)]
pub struct Lookup<'a> {
    /// The matching rules, in pack order then rule order.
    pub hits: Vec<Hit<'a>>,
    /// Rules with an effect that do not match but could, once the command's words that are only
    /// known at run time are known.
    pub possible: Vec<Hit<'a>>,
    /// Built-in packs of the command's program that could not be parsed.
    pub broken: Vec<&'a PackError>,
}

#[derive(Debug, Clone)]
enum Source {
    Builtin(usize),
    Custom(Box<Pack>),
}

/// The packs of a policy, each enabled or not, indexed by program name.
#[derive(Debug, Clone, Default)]
pub struct PackSet {
    entries: Vec<(Source, bool)>,
    /// Program name → entries, built on first lookup (a hook call that runs no shell command
    /// never builds it; built-in names are borrowed, not copied).
    index: OnceLock<HashMap<std::borrow::Cow<'static, str>, Vec<usize>>>,
}

impl PackSet {
    /// The built-in packs with their default switches.
    pub fn builtin() -> &'static PackSet {
        static SET: LazyLock<PackSet> = LazyLock::new(|| PackSet::new(Vec::new(), &HashMap::new()));
        &SET
    }

    /// The built-in packs and `custom` ones; `switches` (pack id → on) overrides each default.
    pub fn new(custom: Vec<Pack>, switches: &HashMap<String, bool>) -> PackSet {
        let mut entries: Vec<(Source, bool)> = BUILTIN_PACKS
            .iter()
            .enumerate()
            .map(|(i, b)| (Source::Builtin(i), switches.get(b.id).copied().unwrap_or(b.enabled)))
            .collect();
        for p in custom {
            let on = switches.get(&p.id).copied().unwrap_or(p.default_enabled);
            entries.push((Source::Custom(Box::new(p)), on));
        }
        PackSet { entries, index: OnceLock::new() }
    }

    fn index(&self) -> &HashMap<std::borrow::Cow<'static, str>, Vec<usize>> {
        self.index.get_or_init(|| {
            let mut index: HashMap<std::borrow::Cow<'static, str>, Vec<usize>> = HashMap::new();
            for (n, (source, _)) in self.entries.iter().enumerate().filter(|(_, (_, on))| *on) {
                match source {
                    Source::Builtin(i) => {
                        for p in BUILTIN_PACKS.get(*i).map_or(&[][..], |b| b.programs) {
                            index.entry(std::borrow::Cow::Borrowed(*p)).or_default().push(n);
                        }
                    }
                    Source::Custom(pack) => {
                        for p in &pack.programs {
                            index.entry(std::borrow::Cow::Owned(p.clone())).or_default().push(n);
                        }
                    }
                }
            }
            index
        })
    }

    fn pack(&self, n: usize) -> Option<Result<&Pack, &PackError>> {
        match &self.entries.get(n)?.0 {
            Source::Builtin(i) => builtin_pack(*i).map(|r| r.as_ref()),
            Source::Custom(p) => Some(Ok(p.as_ref())),
        }
    }

    /// Every pack with whether it is enabled (parses every built-in pack).
    pub fn all(&self) -> Vec<(&Pack, bool)> {
        (0..self.entries.len()).filter_map(|n| Some((self.pack(n)?.ok()?, self.entries[n].1))).collect()
    }

    /// Whether a pack id is known.
    pub fn knows(&self, id: &str) -> bool {
        self.entries.iter().any(|(s, _)| match s {
            Source::Builtin(i) => BUILTIN_PACKS.get(*i).is_some_and(|b| b.id == id),
            Source::Custom(p) => p.id == id,
        })
    }

    /// Whether a pack's own code (`<pack>-<rule>`) belongs to a rule of an enabled pack. Built-in
    /// reason codes that migrated rules report are not pack codes (and cost no parsing here).
    pub fn has_code(&self, code: &str) -> bool {
        if crate::reasons::is_builtin(code) {
            return false;
        }
        self.entries.iter().enumerate().filter(|(_, (_, on))| *on).any(|(n, (s, _))| {
            let id = match s {
                Source::Builtin(i) => BUILTIN_PACKS.get(*i).map_or("", |b| b.id),
                Source::Custom(p) => p.id.as_str(),
            };
            code.strip_prefix(id).is_some_and(|r| r.starts_with('-'))
                && self.pack(n).and_then(Result::ok).is_some_and(|p| p.rules.iter().any(|r| r.code == code))
        })
    }

    /// The rules of enabled packs that match one command.
    pub fn lookup<'s>(&'s self, c: &Command) -> Lookup<'s> {
        let mut out = Lookup::default();
        // Names are looked up in lower case too: `KUBECTL` runs kubectl where file names ignore
        // case (macOS, Windows drives under WSL).
        let lower;
        let index = self.index();
        let ids = match index.get(c.program.as_str()) {
            Some(ids) => ids,
            None if c.program.bytes().any(|b| b.is_ascii_uppercase()) => {
                lower = c.program.to_ascii_lowercase();
                match index.get(lower.as_str()) {
                    Some(ids) => ids,
                    None => return out,
                }
            }
            None => return out,
        };
        for &n in ids {
            match self.pack(n) {
                Some(Ok(pack)) => {
                    let ops = Operands::of(c, &pack.value_options);
                    for rule in &pack.rules {
                        if rule.shape.matches(c, &ops) {
                            out.hits.push(Hit { pack, rule });
                        } else if rule.severity.is_some() && rule.shape.could_match(c, &ops) {
                            out.possible.push(Hit { pack, rule });
                        }
                    }
                }
                Some(Err(e)) => out.broken.push(e),
                None => {}
            }
        }
        out
    }
}

/// docs/packs.md: every built-in pack and rule, generated from the pack files.
pub fn markdown() -> String {
    use std::fmt::Write;
    let mut packs: Vec<&Pack> = builtin();
    packs.sort_by(|a, b| (a.family.as_str(), a.id.as_str()).cmp(&(b.family.as_str(), b.id.as_str())));
    let rules: usize = packs.iter().map(|p| p.rules.len()).sum();
    let mut out = String::new();
    out.push_str("# Packs: what the gate knows about programs\n\n");
    out.push_str(
        "<!-- Generated from crates/loopguard-core/packs/*.toml by `loopguard policy packs --markdown`; \
         a test keeps it in sync. Do not edit by hand. -->\n\n",
    );
    let _ = writeln!(
        out,
        "{} built-in packs, {rules} rules. Each rule is a command shape with what it does. Severity `critical` \
         is denied unattended and asked in normal mode (a present human may approve it); `high` is asked; \
         `medium` raises the call's risk (asked in normal mode). `level` is the autonomy level the command \
         needs (`observe`: it only reads). The reason code of a rule is `<pack>-<rule>`; `[rules]` in the \
         policy can change its decision and `[packs]` turns packs on and off ([policy.md](policy.md)).\n",
        packs.len()
    );
    out.push_str("| pack | family | programs | rules | on by default |\n|---|---|---|---|---|\n");
    for p in &packs {
        let _ = writeln!(
            out,
            "| [`{}`](#{}) | {} | {} | {} | {} |",
            p.id,
            p.id,
            p.family,
            p.programs.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", "),
            p.rules.len(),
            if p.default_enabled { "yes" } else { "no" }
        );
    }
    for p in &packs {
        let _ = write!(out, "\n## {}\n\n{} — {}\n\n", p.id, p.title, p.description);
        out.push_str("| code | effect | severity | level | example | message |\n|---|---|---|---|---|---|\n");
        for r in &p.rules {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | `{}` | {} |",
                r.code,
                r.effect.map_or("—", Effect::as_str),
                r.severity.map_or("—", RiskLevel::as_str),
                r.level.map_or("—", AutonomyLevel::as_str),
                r.examples_match.first().map_or(String::new(), |e| e.replace('|', "\\|").replace('\n', " ")),
                r.message.replace('|', "\\|").replace('\n', " ")
            );
        }
    }
    out
}
