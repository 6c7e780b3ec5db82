//! The layered policy: built-in default < user file < project file (tighten only).
//!
//! Reading and validating are two steps: each layer is read with spans and every problem is
//! collected ([`diag::PolicyError`] holds them all); then the layers are merged, and the project
//! layer is checked to only tighten. A file that exists but fails either step makes
//! [`Policy::load`] fail, and the hook then denies every call with the diagnostics as the reason.

/// Policy diagnostics (file:line:col) and their rendering.
pub mod diag;
pub mod model;
mod read;
mod read_breakers;
mod reader;
pub use read_breakers::parse_duration;

use crate::breaker::BreakerRule;
use crate::breaker::profiles::Profile;
use crate::breaker::usage::Price;
use crate::checks::shell;
use crate::{AutonomyLevel, Verdict};
pub use diag::{Diagnostic, PolicyError};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use model::At;
pub use model::{CommandRule, FleetSettings, LayerKind, PathLists};
use read::{Layer, read_layer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The built-in policy text (layer 0).
pub const BUILTIN_TOML: &str = include_str!("default-policy.toml");

/// Policy files larger than this are refused.
pub const MAX_POLICY_BYTES: u64 = 1024 * 1024;

/// A tool entry of the `[tools]` table after merging.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ToolEntry {
    pattern: String,
    verdict: Verdict,
    origin: LayerKind,
}

/// Where a layer came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySource {
    /// Which layer.
    pub kind: LayerKind,
    /// The file (`<built-in>` for layer 0).
    pub path: PathBuf,
}

/// The effective policy.
#[derive(Debug, Clone)]
pub struct Policy {
    unknown_tool: Verdict,
    autonomy: AutonomyLevel,
    extra_roots: Vec<PathBuf>,
    tools: Vec<ToolEntry>,
    /// Globs other than a plain `prefix*`, compiled on first use: most policies have none, and
    /// building a GlobSet costs more than the rest of a decision.
    tool_globs: std::sync::OnceLock<(GlobSet, Vec<usize>)>,
    rules: BTreeMap<String, Verdict>,
    commands: Vec<CommandRule>,
    sources: Vec<PolicySource>,
    paths: PathLists,
    /// Weighted score of non-critical secrets in a call's arguments from which a human is asked.
    secrets_ask_score: u32,
    /// The compiled path rules, built on first use.
    path_rules: std::sync::OnceLock<crate::checks::path_rules::PathRules>,
    breaker: BreakerConfig,
    /// `[[breakers]]` of the user layer (replacing the profile's rules of the same trigger) and
    /// of the project layer (added).
    user_breakers: Vec<BreakerRule>,
    project_breakers: Vec<BreakerRule>,
    grants: Vec<crate::permissions::PermissionGrant>,
    exec_env_allow: Vec<String>,
    exec_secrets_for: Vec<String>,
    exec_network_for: Vec<String>,
    exec_wrap_bash: bool,
    exec_journal: bool,
    exec_canary_env: Vec<String>,
    exec_canary_file: bool,
    exec_unenforced_ask: bool,
    advisories: AdvisoryConfig,
    preview_in_hook: bool,
    /// `[dashboard] allow_remote_bind` (user layer only): the dashboard may listen beyond loopback.
    dashboard_remote_bind: bool,
    /// `[fleet]` (user layer only): the fleet this host belongs to.
    fleet: Option<FleetSettings>,
    /// Pack switches (`[packs] enable/disable`, later layers win) and packs added by files.
    pack_switches: std::collections::HashMap<String, bool>,
    /// Rule codes whose decision a user or project layer set (not only the built-in policy).
    rules_set_by_file: std::collections::HashSet<String>,
    custom_packs: Vec<crate::packs::Pack>,
    packs: crate::packs::PackSet,
}

/// The dependency advisory gate's settings (`[advisories]`, docs/advisories.md). A project policy
/// can only tighten them: the stricter of its value and the user's wins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdvisoryConfig {
    /// Data imported longer ago than this adds a warning to every result (`max_age_days`).
    pub max_age_days: u64,
    /// Findings with a CVSS base score at or above this are denied (`deny_cvss`).
    pub deny_cvss: f64,
    /// The verdict for other findings (`action`: "ask" or "deny").
    pub action: crate::Verdict,
    /// What a dependency change gets when no advisory data was imported (`missing`: "allow",
    /// "ask" or "deny"; with "allow" the audit still records that nothing was checked).
    pub missing: crate::Verdict,
}

impl Default for AdvisoryConfig {
    fn default() -> Self {
        AdvisoryConfig { max_age_days: 30, deny_cvss: 9.0, action: crate::Verdict::Ask, missing: crate::Verdict::Allow }
    }
}

/// The breaker settings after merging (docs/breakers.md).
#[derive(Debug, Clone, PartialEq)]
pub struct BreakerConfig {
    /// The profile the rules start from.
    pub profile: Profile,
    /// The effective rules.
    pub rules: Vec<BreakerRule>,
    /// Auto reset needs the metric below `threshold × (1 − hysteresis)`.
    pub hysteresis: f64,
    /// Where trip events are POSTed (HMAC-SHA256 signed), if anywhere.
    pub webhook_url: Option<String>,
    /// USD per million tokens, by model-name prefix.
    pub prices: Vec<(String, Price)>,
    /// Break-glass duration when none is given (seconds).
    pub break_glass_default: u64,
    /// The longest break-glass allowed (seconds).
    pub break_glass_max: u64,
    /// Break-glass scopes (`rule:CODE`, `path:GLOB`) that need two different operators.
    pub dual_control: Vec<String>,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            profile: Profile::Interactive,
            rules: Profile::Interactive.rules(),
            hysteresis: 0.2,
            webhook_url: None,
            prices: crate::breaker::usage::default_prices(),
            break_glass_default: 30 * 60,
            break_glass_max: 4 * 3600,
            dual_control: Vec::new(),
        }
    }
}

impl Policy {
    /// The built-in policy alone. Never fails: if the compiled-in text were ever broken (a test
    /// forbids it), the most restrictive policy is returned instead.
    pub fn builtin() -> Policy {
        Self::from_layers(&[]).unwrap_or_else(|_| Self::lockdown())
    }

    /// Loads built-in < user < project. Missing files are skipped; a file that exists but cannot
    /// be read, parsed or validated is an error carrying every diagnostic.
    pub fn load(user: Option<&Path>, project: Option<&Path>) -> Result<Policy, PolicyError> {
        Self::load_approved(user, project, None)
    }

    /// Like [`Policy::load`], with the SHA-256 (hex) of the project policy a human approved: a
    /// project file with exactly that content is read as an approved layer, which may loosen.
    pub fn load_approved(
        user: Option<&Path>,
        project: Option<&Path>,
        approved_project_sha256: Option<&str>,
    ) -> Result<Policy, PolicyError> {
        use sha2::Digest;
        let mut texts = Vec::new();
        let mut diags = Vec::new();
        for (kind, path) in [(LayerKind::User, user), (LayerKind::Project, project)] {
            let Some(path) = path else { continue };
            match read_text(path) {
                Ok(Some(text)) => {
                    let approved = kind == LayerKind::Project
                        && approved_project_sha256.is_some_and(|h| {
                            let digest = sha2::Sha256::digest(text.as_bytes());
                            h == digest.iter().map(|b| format!("{b:02x}")).collect::<String>()
                        });
                    texts.push((if approved { LayerKind::ApprovedProject } else { kind }, path.to_path_buf(), text))
                }
                Ok(None) => {}
                Err(message) => diags.push(Diagnostic {
                    file: path.to_path_buf(),
                    span: 0..0,
                    line: 1,
                    col: 1,
                    code: "policy-io",
                    message,
                }),
            }
        }
        if !diags.is_empty() {
            return Err(PolicyError { diagnostics: diags });
        }
        Self::from_layers(&texts)
    }

    /// Builds a policy from layer texts (each with its kind and file name) over the built-in.
    pub fn from_layers(layers: &[(LayerKind, PathBuf, String)]) -> Result<Policy, PolicyError> {
        let builtin_path = PathBuf::from("<built-in>");
        let mut all = vec![(LayerKind::Builtin, builtin_path, BUILTIN_TOML.to_string())];
        all.extend(layers.iter().cloned());
        let mut policy = Policy::empty();
        let mut diags = Vec::new();
        for (kind, path, text) in &all {
            let (layer, mut d) = read_layer(*kind, path, text);
            diags.append(&mut d);
            policy.merge(*kind, path, text, layer, &mut diags);
            policy.sources.push(PolicySource { kind: *kind, path: path.clone() });
        }
        if let Err(e) = policy.compile_tools() {
            diags.push(Diagnostic {
                file: PathBuf::from("<merged>"),
                span: 0..0,
                line: 1,
                col: 1,
                code: "policy-value",
                message: e,
            });
        }
        for (_, path, text) in &all {
            policy.check_examples(path, text, &mut diags);
        }
        // Built-in packs are parsed when a command first needs them, not here (a hook call parses
        // only its programs' packs); one that fails to parse denies those commands
        // (`Analysis::apply_packs`), and the tests forbid it.
        policy.packs = crate::packs::PackSet::new(std::mem::take(&mut policy.custom_packs), &policy.pack_switches);
        if diags.is_empty() {
            Ok(policy)
        } else {
            // File order, then position: the order a person fixes them in.
            let order: Vec<PathBuf> = all.iter().map(|(_, p, _)| p.clone()).collect();
            let rank = |d: &Diagnostic| order.iter().position(|p| *p == d.file).unwrap_or(usize::MAX);
            diags.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.span.start.cmp(&b.span.start)));
            Err(PolicyError { diagnostics: diags })
        }
    }

    fn empty() -> Policy {
        Policy {
            unknown_tool: Verdict::Deny,
            autonomy: AutonomyLevel::Observe,
            extra_roots: Vec::new(),
            tools: Vec::new(),
            tool_globs: std::sync::OnceLock::new(),
            rules: BTreeMap::new(),
            commands: Vec::new(),
            sources: Vec::new(),
            paths: PathLists::default(),
            secrets_ask_score: 10,
            path_rules: std::sync::OnceLock::new(),
            breaker: BreakerConfig::default(),
            user_breakers: Vec::new(),
            project_breakers: Vec::new(),
            grants: Vec::new(),
            exec_env_allow: Vec::new(),
            exec_secrets_for: Vec::new(),
            exec_network_for: Vec::new(),
            exec_wrap_bash: true,
            exec_journal: true,
            exec_canary_env: Vec::new(),
            exec_canary_file: false,
            exec_unenforced_ask: false,
            advisories: AdvisoryConfig::default(),
            preview_in_hook: true,
            dashboard_remote_bind: false,
            fleet: None,
            pack_switches: std::collections::HashMap::new(),
            rules_set_by_file: std::collections::HashSet::new(),
            custom_packs: Vec::new(),
            packs: crate::packs::PackSet::default(),
        }
    }

    /// Denies everything: the answer when even the built-in policy cannot be read.
    fn lockdown() -> Policy {
        let mut p = Policy::empty();
        p.tools.push(ToolEntry { pattern: "*".into(), verdict: Verdict::Deny, origin: LayerKind::Builtin });
        let _ = p.compile_tools();
        p
    }

    fn merge(&mut self, kind: LayerKind, path: &Path, text: &str, layer: Layer, diags: &mut Vec<Diagnostic>) {
        self.merge_packs(kind, path, text, &layer, diags);
        let mut m = Merging { kind, path, text, diags };
        self.merge_gate(&mut m, layer.unknown_tool, layer.autonomy);
        self.extra_roots.extend(layer.extra_roots.into_iter().map(|r| r.value));
        self.merge_tools(&mut m, layer.tools);
        self.merge_rules(&mut m, layer.rules);
        self.merge_paths(&m, [layer.denylist, layer.secret_read, layer.secret_read_except]);
        if let Some(mig) = layer.migration_session {
            self.paths.migration_session = mig.value;
        }
        if let Some(a) = layer.secrets_ask_score {
            if m.tighten_only() && a.value > self.secrets_ask_score {
                m.loosens(
                    a.span,
                    format!("secrets.ask_score {} is higher (looser) than {}", a.value, self.secrets_ask_score),
                );
            } else {
                self.secrets_ask_score = a.value;
            }
        }
        self.merge_breakers(kind, path, text, layer.breaker, diags);
        for rule in layer.commands {
            if let Some(prev) = self.commands.iter().find(|c| c.code.value == rule.code.value) {
                diags.push(Diagnostic::at(
                    path,
                    text,
                    rule.code.span.clone(),
                    "policy-value",
                    format!("commands.code `{}` is already defined in {}", rule.code.value, prev.file.display()),
                ));
                continue;
            }
            self.commands.push(rule);
        }
    }

    /// `[gate]`: a project layer may only make `unknown_tool` stricter and `autonomy` lower.
    fn merge_gate(
        &mut self,
        m: &mut Merging<'_>,
        unknown_tool: Option<At<Verdict>>,
        autonomy: Option<At<AutonomyLevel>>,
    ) {
        if let Some(v) = unknown_tool {
            if m.tighten_only() && v.value < self.unknown_tool {
                let what = format!(
                    "gate.unknown_tool \"{}\" is looser than \"{}\"",
                    v.value.as_str(),
                    self.unknown_tool.as_str()
                );
                m.loosens(v.span, what);
            } else {
                self.unknown_tool = v.value;
            }
        }
        if let Some(v) = autonomy {
            if m.tighten_only() && v.value > self.autonomy {
                let what =
                    format!("gate.autonomy \"{}\" is higher than \"{}\"", v.value.as_str(), self.autonomy.as_str());
                m.loosens(v.span, what);
            } else {
                self.autonomy = v.value;
            }
        }
    }

    /// `[tools]`: a project layer's entries are floors, combined with (never replacing) the rest,
    /// and may not allow.
    fn merge_tools(&mut self, m: &mut Merging<'_>, tools: Vec<(At<String>, At<Verdict>)>) {
        for (name, verdict) in tools {
            if m.tighten_only() {
                if verdict.value == Verdict::Allow {
                    m.loosens(name.span, format!("tools.\"{}\" = \"allow\" can only loosen", name.value));
                    continue;
                }
                self.tools.push(ToolEntry { pattern: name.value, verdict: verdict.value, origin: m.kind });
            } else if let Some(e) = self.tools.iter_mut().find(|e| e.pattern == name.value) {
                e.verdict = verdict.value;
                e.origin = m.kind;
            } else {
                self.tools.push(ToolEntry { pattern: name.value, verdict: verdict.value, origin: m.kind });
            }
        }
    }

    /// `[rules]`: a code no layer set yet decides by its finding, which may be a deny, so a
    /// project layer may then only set `deny`.
    fn merge_rules(&mut self, m: &mut Merging<'_>, rules: Vec<(At<String>, At<Verdict>)>) {
        for (code, verdict) in rules {
            let floor = if m.tighten_only() { Verdict::Deny } else { Verdict::Allow };
            let current = self.rules.get(&code.value).copied().unwrap_or(floor);
            if m.tighten_only() && verdict.value < current {
                let what = format!(
                    "rules.{} \"{}\" is looser than \"{}\"",
                    code.value,
                    verdict.value.as_str(),
                    current.as_str()
                );
                m.loosens(code.span, what);
            } else {
                if m.kind != LayerKind::Builtin {
                    self.rules_set_by_file.insert(code.value.clone());
                }
                self.rules.insert(code.value, verdict.value);
            }
        }
    }

    /// `[paths]` lists (denylist, secret_read, secret_read_except): the user layer replaces the
    /// denylist and the exceptions, a project layer can only add to them; `secret_read` is only
    /// ever added to — the built-in secret paths are a floor (they are what the sandbox hides as
    /// well), and one file is let through only by naming it in `secret_read_except`.
    fn merge_paths(&mut self, m: &Merging<'_>, lists: [Option<Vec<At<String>>>; 3]) {
        let [deny, secret, except] = lists;
        for (mine, theirs, additive) in [
            (&mut self.paths.denylist, deny, false),
            (&mut self.paths.secret_read, secret, true),
            (&mut self.paths.secret_read_except, except, false),
        ] {
            let Some(list) = theirs else { continue };
            let values = list.into_iter().map(|a| a.value);
            if m.tighten_only() || additive {
                for v in values {
                    if !mine.contains(&v) {
                        mine.push(v);
                    }
                }
            } else {
                *mine = values.collect();
            }
        }
    }

    fn merge_breakers(
        &mut self,
        kind: LayerKind,
        path: &Path,
        text: &str,
        mut b: read_breakers::BreakerLayer,
        diags: &mut Vec<Diagnostic>,
    ) {
        self.merge_exec(&mut b);
        self.merge_advisories(kind, &mut b);
        let c = &mut self.breaker;
        if let Some(p) = b.profile {
            if kind == LayerKind::Project && p.value.strictness() < c.profile.strictness() {
                diags.push(Diagnostic::at(
                    path,
                    text,
                    p.span,
                    "policy-loosens",
                    format!(
                        "breaker.profile \"{}\" is looser than \"{}\"; a project policy may only tighten",
                        p.value.as_str(),
                        c.profile.as_str()
                    ),
                ));
            } else {
                c.profile = p.value;
            }
        }
        if let Some(h) = b.hysteresis {
            c.hysteresis = h;
        }
        if b.webhook_url.is_some() {
            c.webhook_url = b.webhook_url;
        }
        for (model, price) in b.prices {
            c.prices.retain(|(m, _)| *m != model);
            c.prices.push((model, price));
        }
        if let Some(d) = b.bg_default {
            c.break_glass_default = d;
        }
        if let Some(m) = b.bg_max {
            c.break_glass_max = m;
        }
        c.dual_control.extend(b.dual_control);
        let rules = b.rules.into_iter().map(|r| r.value);
        match kind {
            LayerKind::Project => self.project_breakers.extend(rules),
            _ => {
                let rules: Vec<BreakerRule> = rules.collect();
                self.user_breakers.retain(|u| !rules.iter().any(|r| r.trigger == u.trigger));
                self.user_breakers.extend(rules);
            }
        }
        let mut all: Vec<BreakerRule> = c
            .profile
            .rules()
            .into_iter()
            .filter(|r| !self.user_breakers.iter().any(|u| u.trigger == r.trigger))
            .collect();
        all.extend(self.user_breakers.iter().cloned());
        all.extend(self.project_breakers.iter().cloned());
        c.rules = all;
        c.break_glass_default = c.break_glass_default.min(c.break_glass_max);
    }

    /// `[[grants]]`, `[exec]` and `[preview]` of a layer.
    fn merge_exec(&mut self, b: &mut read_breakers::BreakerLayer) {
        self.grants.append(&mut b.grants);
        self.exec_env_allow.append(&mut b.env_allow);
        self.exec_secrets_for.append(&mut b.secrets_for);
        self.exec_network_for.append(&mut b.network_for);
        if let Some(w) = b.wrap_bash.take() {
            self.exec_wrap_bash = w;
        }
        if let Some(j) = b.journal.take() {
            self.exec_journal = j;
        }
        for n in std::mem::take(&mut b.canary_env) {
            if !self.exec_canary_env.contains(&n) {
                self.exec_canary_env.push(n);
            }
        }
        if let Some(f) = b.canary_file.take() {
            self.exec_canary_file = f;
        }
        if let Some(a) = b.unenforced_ask.take() {
            self.exec_unenforced_ask = a;
        }
        if let Some(p) = b.preview_in_hook.take() {
            self.preview_in_hook = p;
        }
        if let Some(r) = b.dashboard_remote_bind.take() {
            self.dashboard_remote_bind = r;
        }
        if let Some(f) = b.fleet.take() {
            self.fleet = Some(f);
        }
    }

    /// `[advisories]`: a project layer may only make it stricter.
    fn merge_advisories(&mut self, kind: LayerKind, b: &mut read_breakers::BreakerLayer) {
        let a = &mut self.advisories;
        let project = kind == LayerKind::Project;
        if let Some(v) = b.adv_max_age_days.take() {
            a.max_age_days = if project { a.max_age_days.min(v) } else { v };
        }
        if let Some(v) = b.adv_deny_cvss.take() {
            a.deny_cvss = if project { a.deny_cvss.min(v) } else { v };
        }
        if let Some(v) = b.adv_action.take() {
            a.action = if project { a.action.max(v) } else { v };
        }
        if let Some(v) = b.adv_missing.take() {
            a.missing = if project { a.missing.max(v) } else { v };
        }
    }

    /// Credential-looking environment variables `loopguard exec` keeps (`[exec] env_allow`).
    pub fn exec_env_allow(&self) -> &[String] {
        &self.exec_env_allow
    }

    /// Commands (the command line's first words) whose sandbox keeps the workspace's secret files
    /// readable (`[exec] secrets_for`, user layer only): a test runner that loads `.env`. Home
    /// credentials stay hidden for every command.
    pub fn exec_secrets_for(&self) -> &[String] {
        &self.exec_secrets_for
    }

    /// Commands (the command line's first words) whose sandbox keeps the network although the
    /// analysis names no need for it (`[exec] network_for`, user layer only): a build that
    /// downloads its dependencies itself, for a user who accepts that its code runs online.
    pub fn exec_network_for(&self) -> &[String] {
        &self.exec_network_for
    }

    /// Canary credentials `loopguard exec` plants: environment variable names
    /// (`[exec] canary_env`) and whether it also writes a canary credentials file
    /// (`[exec] canary_file`).
    pub fn exec_canaries(&self) -> (&[String], bool) {
        (&self.exec_canary_env, self.exec_canary_file)
    }

    /// Whether `loopguard exec` may, when the kernel cannot enforce Landlock, ask the human at the
    /// terminal to run unconfined (`[exec] unenforced = "ask"`); otherwise it refuses.
    pub fn exec_unenforced_ask(&self) -> bool {
        self.exec_unenforced_ask
    }

    /// Whether writing calls keep pre-images in the step journal for `loopguard undo`
    /// (`[exec] journal`, on by default; only the user layer can turn it off).
    pub fn exec_journal(&self) -> bool {
        self.exec_journal
    }

    /// Whether allowed Bash calls are rewritten to run under `loopguard exec` (`[exec] wrap_bash`).
    pub fn exec_wrap_bash(&self) -> bool {
        self.exec_wrap_bash
    }

    /// Whether a high-risk ask carries a simulated preview (`[preview] in_hook`, default true).
    pub fn preview_in_hook(&self) -> bool {
        self.preview_in_hook
    }

    /// The fleet this host belongs to (`[fleet]`, user policy only).
    pub fn fleet(&self) -> Option<&FleetSettings> {
        self.fleet.as_ref()
    }

    /// Whether `loopguard dashboard` may listen on an address beyond loopback
    /// (`[dashboard] allow_remote_bind`, user policy only, default false).
    pub fn dashboard_remote_bind(&self) -> bool {
        self.dashboard_remote_bind
    }

    /// The dependency advisory gate's settings (`[advisories]`).
    pub fn advisories(&self) -> &AdvisoryConfig {
        &self.advisories
    }

    /// Grants from the user policy (`[[grants]]`).
    pub fn grants(&self) -> &[crate::permissions::PermissionGrant] {
        &self.grants
    }

    /// The breaker settings.
    pub fn breaker(&self) -> &BreakerConfig {
        &self.breaker
    }

    /// Validates every tool glob (compiling the complex ones now, so errors surface at load).
    fn compile_tools(&mut self) -> Result<(), String> {
        self.tool_globs = std::sync::OnceLock::new();
        for e in self.tools.iter().filter(|e| tool_pattern(&e.pattern) == ToolPattern::Glob) {
            GlobBuilder::new(&e.pattern).build().map_err(|err| format!("tool pattern `{}`: {err}", e.pattern))?;
        }
        Ok(())
    }

    fn complex_globs(&self) -> &(GlobSet, Vec<usize>) {
        self.tool_globs.get_or_init(|| {
            let mut b = GlobSetBuilder::new();
            let mut index = Vec::new();
            for (i, e) in self.tools.iter().enumerate() {
                if tool_pattern(&e.pattern) == ToolPattern::Glob
                    && let Ok(g) = GlobBuilder::new(&e.pattern).build()
                {
                    b.add(g);
                    index.push(i);
                }
            }
            // Every glob was compiled once at load; an error here cannot happen, and an empty
            // set would only make a glob entry not match.
            (b.build().unwrap_or_else(|_| GlobSet::empty()), index)
        })
    }

    /// Whether a tool entry's pattern matches a tool name.
    fn tool_entries_matching<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a ToolEntry> + 'a {
        let mut globbed: Vec<usize> = Vec::new();
        if self.tools.iter().any(|e| tool_pattern(&e.pattern) == ToolPattern::Glob) {
            let (set, index) = self.complex_globs();
            globbed = set.matches(tool).into_iter().filter_map(|i| index.get(i).copied()).collect();
        }
        self.tools
            .iter()
            .enumerate()
            .filter(move |(i, e)| match tool_pattern(&e.pattern) {
                ToolPattern::Exact => false,
                ToolPattern::Prefix => tool.starts_with(&e.pattern[..e.pattern.len() - 1]),
                ToolPattern::Glob => globbed.contains(i),
            })
            .map(|(_, e)| e)
    }

    /// `[packs]` of one layer: pack files are read (relative to the policy file) and checked
    /// against their own examples; `enable` may come from any layer, `disable` only from the
    /// user's (or an approved project policy).
    fn merge_packs(&mut self, kind: LayerKind, path: &Path, text: &str, layer: &Layer, diags: &mut Vec<Diagnostic>) {
        use crate::packs::{Pack, PackOrigin};
        let diag = |diags: &mut Vec<Diagnostic>, span: std::ops::Range<usize>, code: &'static str, m: String| {
            diags.push(Diagnostic::at(path, text, span, code, m))
        };
        for f in &layer.packs_files {
            let file = path.parent().unwrap_or(Path::new(".")).join(&f.value);
            let body = match read_text(&file) {
                Ok(Some(b)) => b,
                Ok(None) => {
                    diag(diags, f.span.clone(), "policy-pack", format!("pack file {} does not exist", file.display()));
                    continue;
                }
                Err(e) => {
                    diag(diags, f.span.clone(), "policy-pack", e);
                    continue;
                }
            };
            match Pack::parse(&file.display().to_string(), &body, PackOrigin::File(file.clone())) {
                Ok(pack) => {
                    let problems = pack.check_examples();
                    let taken = crate::packs::BUILTIN_PACKS.iter().any(|b| b.id == pack.id)
                        || self.custom_packs.iter().any(|p| p.id == pack.id);
                    if taken {
                        diag(diags, f.span.clone(), "policy-pack", format!("pack id `{}` is already used", pack.id));
                    } else if let Some(code) =
                        pack.rules.iter().map(|r| r.code.as_str()).find(|c| crate::reasons::is_builtin(c))
                    {
                        diag(diags, f.span.clone(), "policy-pack", format!("rule code `{code}` is a built-in code"));
                    } else if !problems.is_empty() {
                        diag(
                            diags,
                            f.span.clone(),
                            "policy-example",
                            format!("pack {}: {}", file.display(), problems.join("; ")),
                        );
                    } else {
                        self.custom_packs.push(pack);
                    }
                }
                Err(e) => diag(diags, f.span.clone(), "policy-pack", e.to_string()),
            }
        }
        let known = |id: &str, custom: &[Pack]| {
            crate::packs::BUILTIN_PACKS.iter().any(|b| b.id == id) || custom.iter().any(|p| p.id == id)
        };
        for (list, on) in [(&layer.packs_enable, true), (&layer.packs_disable, false)] {
            for id in list {
                if !known(&id.value, &self.custom_packs) {
                    diag(diags, id.span.clone(), "policy-value", format!("no pack has the id `{}`", id.value));
                } else if !on && kind == LayerKind::Project {
                    diag(
                        diags,
                        id.span.clone(),
                        "policy-loosens",
                        format!(
                            "packs.disable \"{}\" can only loosen; a project policy may only tighten (put this in the user policy instead)",
                            id.value
                        ),
                    );
                } else {
                    self.pack_switches.insert(id.value.clone(), on);
                }
            }
        }
    }

    /// The packs, each enabled or not.
    pub fn packs(&self) -> &crate::packs::PackSet {
        &self.packs
    }

    /// Checks every `[[commands]]` rule written in this file against its own examples.
    fn check_examples(&self, path: &Path, text: &str, diags: &mut Vec<Diagnostic>) {
        for rule in self.commands.iter().filter(|c| c.file == path) {
            for (examples, want) in [(&rule.examples_match, true), (&rule.examples_not_match, false)] {
                for ex in examples {
                    let got = match shell::rule_matches_command_line(rule, &ex.value) {
                        Ok(m) => m,
                        Err(e) => {
                            diags.push(Diagnostic::at(
                                path,
                                text,
                                ex.span.clone(),
                                "policy-example",
                                format!("example `{}` does not parse: {e}", ex.value),
                            ));
                            continue;
                        }
                    };
                    if got != want {
                        let should = if want { "should match but does not" } else { "should not match but does" };
                        diags.push(Diagnostic::at(
                            path,
                            text,
                            ex.span.clone(),
                            "policy-example",
                            format!("rule `{}`: example `{}` {should}", rule.code.value, ex.value),
                        ));
                    }
                }
            }
        }
    }

    /// The base decision for a tool from `[tools]`: an exact entry wins over globs; among globs
    /// the strictest; project entries are floors over the result. `None` when nothing matches.
    pub fn tool_verdict(&self, tool: &str) -> Option<Verdict> {
        let base = |origin_ok: &dyn Fn(LayerKind) -> bool| -> Option<Verdict> {
            let exact = self
                .tools
                .iter()
                .filter(|e| origin_ok(e.origin) && tool_pattern(&e.pattern) == ToolPattern::Exact && e.pattern == tool)
                .map(|e| e.verdict)
                .max();
            if exact.is_some() {
                return exact;
            }
            // Among globs, the highest layer speaks (a user's `mcp__docs__*` overrides the
            // built-in `mcp__*`); within one layer, the strictest.
            let hits: Vec<&ToolEntry> = self.tool_entries_matching(tool).filter(|e| origin_ok(e.origin)).collect();
            let top = hits.iter().map(|e| e.origin).max()?;
            hits.iter().filter(|e| e.origin == top).map(|e| e.verdict).max()
        };
        let below = base(&|o| o != LayerKind::Project);
        let floor = base(&|o| o == LayerKind::Project);
        match (below, floor) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// The decision for tools loopguard does not know.
    pub fn unknown_tool(&self) -> Verdict {
        self.unknown_tool
    }

    /// The policy's autonomy level.
    pub fn autonomy(&self) -> AutonomyLevel {
        self.autonomy
    }

    /// Extra write roots besides the workspace.
    pub fn extra_roots(&self) -> &[PathBuf] {
        &self.extra_roots
    }

    /// The decision set for a built-in rule code, if any layer set one.
    pub fn rule_verdict(&self, code: &str) -> Option<Verdict> {
        self.rules.get(code).copied()
    }

    /// Whether a user or project policy file set this rule's decision (the built-in policy's own
    /// settings are defaults, not a human's choice).
    pub fn rule_set_by_file(&self, code: &str) -> bool {
        self.rules_set_by_file.contains(code)
    }

    /// The `[[commands]]` rules of every layer.
    pub fn commands(&self) -> &[CommandRule] {
        &self.commands
    }

    /// Weighted score (low 1, medium 3, high 10) of non-critical secrets in a call's arguments
    /// from which a human is asked. Any critical secret always denies.
    pub fn secrets_ask_score(&self) -> u32 {
        self.secrets_ask_score
    }

    /// The `[paths]` lists.
    pub fn path_lists(&self) -> &PathLists {
        &self.paths
    }

    /// The compiled path rules (built on first use).
    pub fn path_rules(&self) -> &crate::checks::path_rules::PathRules {
        self.path_rules.get_or_init(|| crate::checks::path_rules::PathRules::new(&self.paths))
    }

    /// The layers that made this policy, lowest first.
    pub fn sources(&self) -> &[PolicySource] {
        &self.sources
    }

    /// The effective policy as TOML, each value annotated with the layer it came from.
    pub fn to_effective_toml(&self) -> String {
        let mut out = String::from("# effective loopguard policy; layers: ");
        let names: Vec<String> =
            self.sources.iter().map(|s| format!("{} ({})", s.kind.as_str(), s.path.display())).collect();
        out.push_str(&names.join(" < "));
        out.push_str("\nversion = 1\n\n[gate]\n");
        out.push_str(&format!("unknown_tool = \"{}\"\n", self.unknown_tool.as_str()));
        out.push_str(&format!("autonomy = \"{}\"\n\n[workspace]\nextra_roots = [", self.autonomy.as_str()));
        let roots: Vec<String> = self.extra_roots.iter().map(|r| toml_str(&r.display().to_string())).collect();
        out.push_str(&roots.join(", "));
        out.push_str("]\n\n[paths]\n");
        let list = |v: &[String]| v.iter().map(|x| toml_str(x)).collect::<Vec<_>>().join(", ");
        out.push_str(&format!("denylist = [{}]\n", list(&self.paths.denylist)));
        out.push_str(&format!("secret_read = [{}]\n", list(&self.paths.secret_read)));
        out.push_str(&format!("secret_read_except = [{}]\n", list(&self.paths.secret_read_except)));
        out.push_str(&format!("migration_session = {}\n", self.paths.migration_session));
        out.push_str(&format!("\n[secrets]\nask_score = {}\n", self.secrets_ask_score));
        out.push_str("\n[tools]\n");
        for e in &self.tools {
            out.push_str(&format!("{} = \"{}\"  # {}\n", toml_str(&e.pattern), e.verdict.as_str(), e.origin.as_str()));
        }
        out.push_str("\n[rules]\n");
        for (code, v) in &self.rules {
            out.push_str(&format!("{code} = \"{}\"\n", v.as_str()));
        }
        let b = &self.breaker;
        out.push_str(&format!("\n[breaker]\nprofile = \"{}\"\nhysteresis = {}\n", b.profile.as_str(), b.hysteresis));
        if let Some(u) = &b.webhook_url {
            out.push_str(&format!("webhook_url = {}\n", toml_str(u)));
        }
        out.push_str(&format!(
            "\n[break_glass]\ndefault = \"{}s\"\nmax = \"{}s\"\ndual_control = [{}]\n",
            b.break_glass_default,
            b.break_glass_max,
            b.dual_control.iter().map(|d| toml_str(d)).collect::<Vec<_>>().join(", ")
        ));
        for r in &b.rules {
            out.push_str(&format!(
                "\n[[breakers]]\ntrigger = \"{}\"\nthreshold = {}\n{}action = \"{}\"\ncooldown = \"{}s\"\nreset = \"{}\"\nmin_volume = {}\nrevert = {}\n",
                r.trigger.as_str(),
                r.threshold,
                r.window.map(|w| format!("window = \"{w}s\"\n")).unwrap_or_default(),
                r.action.as_str(),
                r.cooldown,
                r.reset.as_str(),
                r.min_volume,
                r.revert
            ));
        }
        out.push_str("\n[prices]\n");
        let mut prices: Vec<_> = b.prices.iter().collect();
        prices.sort_by(|a, b| a.0.cmp(&b.0));
        for (model, p) in prices {
            out.push_str(&format!(
                "{} = {{ input = {}, output = {}, cache_write = {}, cache_read = {} }}\n",
                toml_str(model),
                p.input,
                p.output,
                p.cache_write,
                p.cache_read
            ));
        }
        let list = |v: &[String]| v.iter().map(|x| toml_str(x)).collect::<Vec<_>>().join(", ");
        out.push_str(&format!(
            "\n[exec]\nenv_allow = [{}]\nsecrets_for = [{}]\nnetwork_for = [{}]\nwrap_bash = {}\njournal = {}\ncanary_env = [{}]\ncanary_file = {}\nunenforced = \"{}\"\n",
            list(&self.exec_env_allow),
            list(&self.exec_secrets_for),
            list(&self.exec_network_for),
            self.exec_wrap_bash,
            self.exec_journal,
            list(&self.exec_canary_env),
            self.exec_canary_file,
            if self.exec_unenforced_ask { "ask" } else { "deny" }
        ));
        out.push_str(&format!("\n[preview]\nin_hook = {}\n", self.preview_in_hook));
        out.push_str(&format!("\n[dashboard]\nallow_remote_bind = {}\n", self.dashboard_remote_bind));
        if let Some(f) = &self.fleet {
            out.push_str(&fleet_toml(f));
        }
        let a = &self.advisories;
        out.push_str(&format!(
            "\n[advisories]\nmax_age_days = {}\ndeny_cvss = {:?}\naction = \"{}\"\nmissing = \"{}\"\n",
            a.max_age_days,
            a.deny_cvss,
            a.action.as_str(),
            a.missing.as_str()
        ));
        for g in &self.grants {
            out.push_str(&format!(
                "\n[[grants]]\ntool = {}\n{}reason = {}\n{}",
                toml_str(&g.tool),
                g.resource.as_deref().map(|r| format!("resource = {}\n", toml_str(r))).unwrap_or_default(),
                toml_str(&g.reason),
                g.expires_at
                    .and_then(|e| jiff::Timestamp::from_second(e).ok())
                    .map(|t| format!("expires = \"{t}\"\n"))
                    .unwrap_or_default()
            ));
        }
        for c in &self.commands {
            out.push_str(&format!(
                "\n[[commands]]  # {} ({})\ncode = {}\nprogram = {}\nflags = [{}]\nargs = [{}]\ndecision = \"{}\"\nmessage = {}\n",
                c.origin.as_str(),
                c.file.display(),
                toml_str(&c.code.value),
                toml_str(&c.program),
                c.flags.iter().map(|f| toml_str(f)).collect::<Vec<_>>().join(", "),
                c.args.iter().map(|a| toml_str(a)).collect::<Vec<_>>().join(", "),
                c.verdict.as_str(),
                toml_str(&c.message),
            ));
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToolPattern {
    /// No glob characters.
    Exact,
    /// Only a trailing `*`: a prefix match (tool names have no `/`, so this is exactly the glob).
    Prefix,
    /// Anything else: matched with globset.
    Glob,
}

fn tool_pattern(p: &str) -> ToolPattern {
    const META: [char; 5] = ['*', '?', '[', '{', '\\'];
    match p.strip_suffix('*') {
        _ if !p.contains(META) => ToolPattern::Exact,
        Some(prefix) if !prefix.contains(META) => ToolPattern::Prefix,
        _ => ToolPattern::Glob,
    }
}

/// A TOML basic string (JSON string escaping is a valid subset of TOML's).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Reads a policy file: `Ok(None)` when it does not exist; an error text when it exists but
/// cannot be read, is too large, or is not UTF-8.
fn read_text(path: &Path) -> Result<Option<String>, String> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read policy file: {e}")),
    };
    let mut bytes = Vec::new();
    file.take(MAX_POLICY_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read policy file: {e}"))?;
    if bytes.len() as u64 > MAX_POLICY_BYTES {
        return Err(format!("policy file is larger than {MAX_POLICY_BYTES} bytes"));
    }
    String::from_utf8(bytes).map(Some).map_err(|_| "policy file is not valid UTF-8".to_string())
}

/// One layer being merged: where it came from, and where its problems go.
struct Merging<'a> {
    kind: LayerKind,
    path: &'a Path,
    text: &'a str,
    diags: &'a mut Vec<Diagnostic>,
}

impl Merging<'_> {
    /// A project layer: it may only tighten.
    fn tighten_only(&self) -> bool {
        self.kind == LayerKind::Project
    }

    /// Reports a setting that would loosen the policy from a layer that may only tighten.
    fn loosens(&mut self, span: std::ops::Range<usize>, what: String) {
        self.diags.push(Diagnostic::at(
            self.path,
            self.text,
            span,
            "policy-loosens",
            format!("{what}; a project policy may only tighten (put this in the user policy instead)"),
        ));
    }
}

#[cfg(test)]
mod tests;

/// `[fleet]` as TOML, the database password masked.
fn fleet_toml(f: &FleetSettings) -> String {
    let keys = f.operator_keys.iter().map(|k| toml_str(k)).collect::<Vec<_>>().join(", ");
    let mut out = format!(
        "\n[fleet]\ndatabase_url = {}\nname = {}\nheartbeat = \"{}s\"\noperator_keys = [{keys}]\nreservation_usd = {}\nreservation_tokens = {}\nlease = \"{}s\"\n",
        toml_str(&f.redacted_url()),
        toml_str(&f.name),
        f.heartbeat,
        f.reservation_micro_usd as f64 / 1e6,
        f.reservation_tokens,
        f.lease
    );
    for (k, v) in [("host", &f.host), ("group", &f.group), ("ca_file", &f.ca_file)] {
        if let Some(v) = v {
            out.push_str(&format!("{k} = {}\n", toml_str(v)));
        }
    }
    out
}
