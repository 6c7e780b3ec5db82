//! Reading one policy layer from TOML text, with spans, collecting every problem.

use super::diag::Diagnostic;
use super::model::At;
use super::model::{CommandRule, LayerKind};
use super::reader::Reader;
use crate::reasons::{CONFIGURABLE_RULES, is_builtin, is_kebab_case};
use crate::{AutonomyLevel, Verdict};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One layer as written, before merging.
#[derive(Debug, Default)]
pub(crate) struct Layer {
    pub unknown_tool: Option<At<Verdict>>,
    pub autonomy: Option<At<AutonomyLevel>>,
    pub extra_roots: Vec<At<PathBuf>>,
    pub tools: Vec<(At<String>, At<Verdict>)>,
    pub rules: Vec<(At<String>, At<Verdict>)>,
    pub commands: Vec<CommandRule>,
    /// `[paths]` lists: `None` when the layer does not set the key.
    pub denylist: Option<Vec<At<String>>>,
    pub secret_read: Option<Vec<At<String>>>,
    pub secret_read_except: Option<Vec<At<String>>>,
    pub migration_session: Option<At<bool>>,
    pub secrets_ask_score: Option<At<u32>>,
    pub breaker: super::read_breakers::BreakerLayer,
    /// `[packs]`: pack ids to switch on and off, and pack files to add.
    pub packs_enable: Vec<At<String>>,
    pub packs_disable: Vec<At<String>>,
    pub packs_files: Vec<At<String>>,
}

impl Reader<'_> {
    fn root(&mut self, doc: &DeTable<'_>, layer: &mut Layer) {
        const KNOWN: &[&str] = &[
            "version",
            "gate",
            "workspace",
            "paths",
            "secrets",
            "tools",
            "rules",
            "commands",
            "breaker",
            "breakers",
            "prices",
            "break_glass",
            "grants",
            "exec",
            "advisories",
            "preview",
            "dashboard",
            "fleet",
            "packs",
        ];
        for (k, v) in doc.iter() {
            match k.get_ref().as_ref() {
                "version" => match v.get_ref() {
                    DeValue::Integer(i) if i.as_str() == "1" => {}
                    _ => self.err(v.span(), "policy-value", "version must be the integer 1"),
                },
                "gate" => {
                    if let Some(t) = self.table(v, "[gate]") {
                        self.gate(t, layer);
                    }
                }
                "workspace" => {
                    if let Some(t) = self.table(v, "[workspace]") {
                        self.workspace(t, layer);
                    }
                }
                "paths" => {
                    if let Some(t) = self.table(v, "[paths]") {
                        self.paths(t, layer);
                    }
                }
                "secrets" => {
                    if let Some(t) = self.table(v, "[secrets]") {
                        for (k, v) in t.iter() {
                            match k.get_ref().as_ref() {
                                "ask_score" => match v.get_ref() {
                                    DeValue::Integer(i) => match i.as_str().parse::<u32>() {
                                        Ok(n) if n >= 1 => {
                                            layer.secrets_ask_score = Some(At { value: n, span: v.span() })
                                        }
                                        _ => self.err(
                                            v.span(),
                                            "policy-value",
                                            "secrets.ask_score must be a whole number from 1 up",
                                        ),
                                    },
                                    other => self.err(
                                        v.span(),
                                        "policy-type",
                                        format!("secrets.ask_score must be an integer, found {}", other.type_str()),
                                    ),
                                },
                                _ => self.unknown_key(k, "[secrets]", &["ask_score"]),
                            }
                        }
                    }
                }
                "tools" => {
                    if let Some(t) = self.table(v, "[tools]") {
                        self.tools(t, layer);
                    }
                }
                "rules" => {
                    if let Some(t) = self.table(v, "[rules]") {
                        self.rules(t, layer);
                    }
                }
                "commands" => self.commands(v, layer),
                "breaker" => {
                    if let Some(t) = self.table(v, "[breaker]") {
                        self.breaker(t, &mut layer.breaker);
                    }
                }
                "breakers" => self.breakers(v, &mut layer.breaker),
                "prices" => self.prices(v, &mut layer.breaker),
                "break_glass" => self.break_glass(v, &mut layer.breaker),
                "grants" => self.grants(v, &mut layer.breaker),
                "exec" => self.exec(v, &mut layer.breaker),
                "advisories" => self.advisories(v, &mut layer.breaker),
                "preview" => self.preview(v, &mut layer.breaker),
                "dashboard" => self.dashboard(v, &mut layer.breaker),
                "fleet" => self.fleet(v, &mut layer.breaker),
                "packs" => {
                    if let Some(t) = self.table(v, "[packs]") {
                        self.packs(t, layer);
                    }
                }
                _ => self.unknown_key(k, "the top level", KNOWN),
            }
        }
    }

    fn gate(&mut self, t: &DeTable<'_>, layer: &mut Layer) {
        const KNOWN: &[&str] = &["unknown_tool", "autonomy"];
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "unknown_tool" => layer.unknown_tool = self.verdict(v, "gate.unknown_tool"),
                "autonomy" => {
                    if let Some(s) = self.string(v, "gate.autonomy") {
                        match AutonomyLevel::parse(&s.value) {
                            Some(value) => layer.autonomy = Some(At { value, span: s.span }),
                            None => {
                                let names: Vec<&str> = AutonomyLevel::ALL.iter().map(|l| l.as_str()).collect();
                                self.err(
                                    s.span,
                                    "policy-value",
                                    format!(
                                        "gate.autonomy must be one of {}, found \"{}\"",
                                        names.join(" < "),
                                        s.value
                                    ),
                                );
                            }
                        }
                    }
                }
                _ => self.unknown_key(k, "[gate]", KNOWN),
            }
        }
    }

    fn workspace(&mut self, t: &DeTable<'_>, layer: &mut Layer) {
        const KNOWN: &[&str] = &["extra_roots"];
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "extra_roots" => {
                    for s in self.strings(v, "workspace.extra_roots") {
                        let p = PathBuf::from(&s.value);
                        if !p.is_absolute() || s.value.contains('\0') {
                            self.err(
                                s.span,
                                "policy-value",
                                format!("workspace.extra_roots entries must be absolute paths, found \"{}\"", s.value),
                            );
                        } else if self.kind == LayerKind::Project {
                            self.err(
                                s.span,
                                "policy-loosens",
                                "a project policy may not add workspace roots (that widens where the agent may write); put extra_roots in the user policy",
                            );
                        } else {
                            layer.extra_roots.push(At { value: p, span: s.span });
                        }
                    }
                }
                _ => self.unknown_key(k, "[workspace]", KNOWN),
            }
        }
    }

    fn paths(&mut self, t: &DeTable<'_>, layer: &mut Layer) {
        const KNOWN: &[&str] = &["denylist", "secret_read", "secret_read_except", "migration_session"];
        for (k, v) in t.iter() {
            let key = k.get_ref().as_ref();
            match key {
                "denylist" | "secret_read" | "secret_read_except" => {
                    let list = self.strings(v, &format!("paths.{key}"));
                    // The built-in lists are valid (a test says so); validating costs a regex
                    // translation per pattern, on every hook call.
                    let builtin = self.kind == LayerKind::Builtin;
                    for p in list.iter().filter(|_| !builtin) {
                        if let Err(e) =
                            globset::GlobBuilder::new(p.value.trim_start_matches("~/")).literal_separator(true).build()
                        {
                            self.err(
                                p.span.clone(),
                                "policy-value",
                                format!("paths.{key} pattern `{}` is not a valid glob: {e}", p.value),
                            );
                        }
                    }
                    if key == "secret_read_except" && self.kind == LayerKind::Project {
                        self.err(v.span(), "policy-loosens", "a project policy may not add exceptions to the secret paths; put secret_read_except in the user policy");
                        continue;
                    }
                    let slot = match key {
                        "denylist" => &mut layer.denylist,
                        "secret_read" => &mut layer.secret_read,
                        _ => &mut layer.secret_read_except,
                    };
                    *slot = Some(list);
                }
                "migration_session" => match v.get_ref() {
                    DeValue::Boolean(b) => {
                        if *b && self.kind == LayerKind::Project {
                            self.err(
                                v.span(),
                                "policy-loosens",
                                "only the user policy may declare a human-supervised migration session",
                            );
                        } else {
                            layer.migration_session = Some(At { value: *b, span: v.span() });
                        }
                    }
                    other => self.err(
                        v.span(),
                        "policy-type",
                        format!("paths.migration_session must be a boolean, found {}", other.type_str()),
                    ),
                },
                _ => self.unknown_key(k, "[paths]", KNOWN),
            }
        }
    }

    fn packs(&mut self, t: &DeTable<'_>, layer: &mut Layer) {
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "enable" => layer.packs_enable = self.strings(v, "packs.enable"),
                "disable" => layer.packs_disable = self.strings(v, "packs.disable"),
                "files" => layer.packs_files = self.strings(v, "packs.files"),
                _ => self.unknown_key(k, "[packs]", &["enable", "disable", "files"]),
            }
        }
    }

    fn tools(&mut self, t: &DeTable<'_>, layer: &mut Layer) {
        for (k, v) in t.iter() {
            let name = k.get_ref().to_string();
            if let Err(e) = globset::Glob::new(&name) {
                self.err(k.span(), "policy-value", format!("tool pattern `{name}` is not a valid glob: {e}"));
                continue;
            }
            if let Some(verdict) = self.verdict(v, &format!("tools.\"{name}\"")) {
                layer.tools.push((At { value: name, span: k.span() }, verdict));
            }
        }
    }

    fn rules(&mut self, t: &DeTable<'_>, layer: &mut Layer) {
        for (k, v) in t.iter() {
            let code = k.get_ref().to_string();
            if !CONFIGURABLE_RULES.contains(&code.as_str()) && !crate::packs::is_builtin_code(&code) {
                let why = if is_builtin(&code) { "is not configurable" } else { "is not a known rule code" };
                self.err(
                    k.span(),
                    "policy-unknown-key",
                    format!("rule `{code}` {why}; configurable rules: {}", CONFIGURABLE_RULES.join(", ")),
                );
                continue;
            }
            if let Some(verdict) = self.verdict(v, &format!("rules.{code}")) {
                layer.rules.push((At { value: code, span: k.span() }, verdict));
            }
        }
    }

    fn commands(&mut self, v: &Spanned<DeValue<'_>>, layer: &mut Layer) {
        let DeValue::Array(items) = v.get_ref() else {
            self.err(v.span(), "policy-type", "commands must be an array of tables ([[commands]])");
            return;
        };
        for item in items.iter() {
            if let Some(t) = self.table(item, "[[commands]] entry")
                && let Some(rule) = self.command(t, item.span())
            {
                layer.commands.push(rule);
            }
        }
    }

    fn command(&mut self, t: &DeTable<'_>, span: Range<usize>) -> Option<CommandRule> {
        const KNOWN: &[&str] = &["code", "program", "flags", "args", "decision", "message", "match", "not_match"];
        let (mut code, mut program, mut decision, mut message) = (None, None, None, None);
        let (mut flags, mut args, mut matches, mut not_matches) = (vec![], vec![], vec![], vec![]);
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "code" => code = self.string(v, "commands.code"),
                "program" => program = self.string(v, "commands.program"),
                "decision" => decision = self.verdict(v, "commands.decision"),
                "message" => message = self.string(v, "commands.message"),
                "flags" => flags = self.strings(v, "commands.flags"),
                "args" => args = self.strings(v, "commands.args"),
                "match" => matches = self.strings(v, "commands.match"),
                "not_match" => not_matches = self.strings(v, "commands.not_match"),
                _ => self.unknown_key(k, "[[commands]]", KNOWN),
            }
        }
        let missing = |name: &str, present: bool, this: &mut Self| {
            if !present {
                this.err(span.clone(), "policy-value", format!("[[commands]] entry is missing `{name}`"));
            }
        };
        missing("code", code.is_some(), self);
        missing("program", program.is_some(), self);
        missing("decision", decision.is_some(), self);
        missing("message", message.is_some(), self);
        let (code, program, decision, message) = (code?, program?, decision?, message?);
        let mut ok = true;
        if !is_kebab_case(&code.value) || is_builtin(&code.value) {
            self.err(
                code.span.clone(),
                "policy-value",
                format!("commands.code `{}` must be kebab-case and not a built-in code", code.value),
            );
            ok = false;
        }
        if decision.value == Verdict::Allow {
            self.err(
                decision.span.clone(),
                "policy-value",
                "commands.decision must be \"ask\" or \"deny\": command rules only add restrictions",
            );
            ok = false;
        }
        if program.value.is_empty() || program.value.contains('/') {
            self.err(program.span.clone(), "policy-value", "commands.program must be a bare program name");
            ok = false;
        }
        ok.then(|| CommandRule {
            code,
            program: program.value,
            flags: flags.into_iter().map(|f| f.value).collect(),
            args: args.into_iter().map(|a| a.value).collect(),
            verdict: decision.value,
            message: message.value,
            examples_match: matches,
            examples_not_match: not_matches,
            origin: self.kind,
            file: self.file.to_path_buf(),
        })
    }
}

/// Reads one layer. Syntax errors, unknown keys and bad values all become diagnostics.
pub(crate) fn read_layer(kind: LayerKind, file: &Path, src: &str) -> (Layer, Vec<Diagnostic>) {
    let mut r = Reader { file, src, kind, diags: Vec::new() };
    let mut layer = Layer::default();
    let (doc, errors) = DeTable::parse_recoverable(src);
    for e in &errors {
        let span = e.span().unwrap_or(0..0);
        r.err(span, "policy-syntax", e.message().to_string());
    }
    if errors.is_empty() {
        r.root(doc.get_ref(), &mut layer);
    }
    (layer, r.diags)
}
