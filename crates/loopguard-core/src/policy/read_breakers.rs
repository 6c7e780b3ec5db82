//! Reading `[breaker]`, `[[breakers]]`, `[prices]` and `[break_glass]` (see docs/breakers.md).

use super::model::At;
use super::model::LayerKind;
use super::reader::Reader;
use crate::breaker::profiles::Profile;
use crate::breaker::usage::Price;
use crate::breaker::{BreakerRule, ResetRule, Trigger, TripAction};
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The breaker settings of one layer, as written.
#[derive(Debug, Default)]
pub(crate) struct BreakerLayer {
    pub profile: Option<At<Profile>>,
    pub hysteresis: Option<f64>,
    pub webhook_url: Option<String>,
    pub rules: Vec<At<BreakerRule>>,
    pub prices: Vec<(String, Price)>,
    pub bg_default: Option<u64>,
    pub bg_max: Option<u64>,
    pub dual_control: Vec<String>,
    pub grants: Vec<crate::permissions::PermissionGrant>,
    pub env_allow: Vec<String>,
    /// `[exec] secrets_for`: commands whose sandbox keeps the workspace's secret files readable.
    pub secrets_for: Vec<String>,
    /// `[exec] network_for`: commands whose sandbox keeps the network.
    pub network_for: Vec<String>,
    pub wrap_bash: Option<bool>,
    /// `[exec] journal`: pre-images of what writing calls may destroy, for `loopguard undo`.
    pub journal: Option<bool>,
    pub canary_env: Vec<String>,
    pub canary_file: Option<bool>,
    pub unenforced_ask: Option<bool>,
    pub adv_max_age_days: Option<u64>,
    pub adv_deny_cvss: Option<f64>,
    pub adv_action: Option<crate::Verdict>,
    pub adv_missing: Option<crate::Verdict>,
    pub preview_in_hook: Option<bool>,
    pub dashboard_remote_bind: Option<bool>,
    pub fleet: Option<crate::policy::model::FleetSettings>,
}

/// A duration such as "90s", "15m", "1h 30m" (jiff's friendly format; hours are the largest unit).
pub fn parse_duration(s: &str) -> Option<u64> {
    let d: jiff::SignedDuration = s.parse().ok()?;
    u64::try_from(d.as_secs()).ok()
}

impl Reader<'_> {
    fn user_only(&mut self, span: Range<usize>, what: &str) -> bool {
        if self.kind == LayerKind::Project {
            self.err(span, "policy-loosens", format!("{what} may only be set in the user policy"));
            false
        } else {
            true
        }
    }

    fn number(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<f64> {
        let n = match v.get_ref() {
            DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
            DeValue::Float(f) => f.as_str().replace('_', "").parse::<f64>().ok(),
            other => {
                self.err(v.span(), "policy-type", format!("{what} must be a number, found {}", other.type_str()));
                return None;
            }
        };
        match n {
            Some(n) if n.is_finite() && n >= 0.0 => Some(n),
            _ => {
                self.err(v.span(), "policy-value", format!("{what} must be a number from 0 up"));
                None
            }
        }
    }

    fn duration(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<u64> {
        let s = self.string(v, what)?;
        let d = parse_duration(&s.value);
        if d.is_none() {
            self.err(
                s.span,
                "policy-value",
                format!("{what} must be a duration like \"90s\", \"15m\" or \"2h\", found \"{}\"", s.value),
            );
        }
        d
    }

    fn boolean(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<bool> {
        match v.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            other => {
                self.err(v.span(), "policy-type", format!("{what} must be a boolean, found {}", other.type_str()));
                None
            }
        }
    }

    pub(crate) fn breaker(&mut self, t: &DeTable<'_>, out: &mut BreakerLayer) {
        const KNOWN: &[&str] = &["profile", "hysteresis", "webhook_url"];
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "profile" => {
                    if let Some(s) = self.string(v, "breaker.profile") {
                        match Profile::parse(&s.value) {
                            Some(p) => out.profile = Some(At { value: p, span: s.span }),
                            None => self.err(
                                s.span,
                                "policy-value",
                                format!("breaker.profile must be \"interactive\" or \"loop\", found \"{}\"", s.value),
                            ),
                        }
                    }
                }
                "hysteresis" => {
                    if let Some(h) = self.number(v, "breaker.hysteresis")
                        && self.user_only(v.span(), "breaker.hysteresis")
                    {
                        if h < 1.0 {
                            out.hysteresis = Some(h);
                        } else {
                            self.err(
                                v.span(),
                                "policy-value",
                                "breaker.hysteresis must be below 1 (a fraction of the threshold)",
                            );
                        }
                    }
                }
                "webhook_url" => {
                    if let Some(s) = self.string(v, "breaker.webhook_url")
                        && self.user_only(v.span(), "breaker.webhook_url")
                    {
                        match url::Url::parse(&s.value) {
                            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
                                out.webhook_url = Some(s.value)
                            }
                            _ => self.err(
                                s.span,
                                "policy-value",
                                format!("breaker.webhook_url must be an http(s) URL, found \"{}\"", s.value),
                            ),
                        }
                    }
                }
                _ => self.unknown_key(k, "[breaker]", KNOWN),
            }
        }
    }

    pub(crate) fn breakers(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        let DeValue::Array(items) = v.get_ref() else {
            self.err(v.span(), "policy-type", "breakers must be an array of tables ([[breakers]])");
            return;
        };
        for item in items.iter() {
            if let Some(t) = self.table(item, "[[breakers]] entry")
                && let Some(rule) = self.breaker_rule(t, item.span())
            {
                out.rules.push(At { value: rule, span: item.span() });
            }
        }
    }

    fn breaker_rule(&mut self, t: &DeTable<'_>, span: Range<usize>) -> Option<BreakerRule> {
        const KNOWN: &[&str] =
            &["trigger", "threshold", "window", "action", "cooldown", "reset", "min_volume", "revert"];
        let (mut trigger, mut threshold, mut action) = (None, None, None);
        let (mut window, mut cooldown, mut reset, mut min_volume, mut revert) = (None, None, None, None, None);
        let seen = |key: &str| t.iter().any(|(k, _)| k.get_ref().as_ref() == key);
        let (has_trigger, has_threshold, has_action) = (seen("trigger"), seen("threshold"), seen("action"));
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "trigger" => {
                    if let Some(s) = self.string(v, "breakers.trigger") {
                        trigger = Trigger::parse(&s.value);
                        if trigger.is_none() {
                            let names: Vec<&str> = Trigger::ALL.iter().map(|t| t.as_str()).collect();
                            self.err(
                                s.span,
                                "policy-value",
                                format!("breakers.trigger must be one of {}, found \"{}\"", names.join(", "), s.value),
                            );
                        }
                    }
                }
                "threshold" => threshold = self.number(v, "breakers.threshold"),
                "action" => {
                    if let Some(s) = self.string(v, "breakers.action") {
                        action = TripAction::parse(&s.value);
                        if action.is_none() {
                            self.err(s.span, "policy-value", format!("breakers.action must be require_approval, pr_only, read_only or stop, found \"{}\"", s.value));
                        }
                    }
                }
                "window" => window = self.duration(v, "breakers.window"),
                "cooldown" => cooldown = self.duration(v, "breakers.cooldown"),
                "reset" => {
                    if let Some(s) = self.string(v, "breakers.reset") {
                        reset = match s.value.as_str() {
                            "auto" => Some(ResetRule::Auto),
                            "manual" => Some(ResetRule::Manual),
                            _ => {
                                self.err(
                                    s.span,
                                    "policy-value",
                                    format!("breakers.reset must be \"auto\" or \"manual\", found \"{}\"", s.value),
                                );
                                None
                            }
                        }
                    }
                }
                "min_volume" => min_volume = self.number(v, "breakers.min_volume").map(|n| n as u64),
                "revert" => revert = self.boolean(v, "breakers.revert"),
                _ => self.unknown_key(k, "[[breakers]]", KNOWN),
            }
        }
        for (name, present) in [("trigger", has_trigger), ("threshold", has_threshold), ("action", has_action)] {
            if !present {
                self.err(span.clone(), "policy-value", format!("[[breakers]] entry is missing `{name}`"));
            }
        }
        let mut rule = BreakerRule::new(trigger?, threshold?, action?);
        if rule.trigger == Trigger::SpendVelocity && window == Some(0) {
            self.err(span.clone(), "policy-value", "breakers.window must be longer than 0 s");
        }
        rule.window = window.or(rule.window);
        rule.cooldown = cooldown.unwrap_or(rule.cooldown);
        rule.reset = reset.unwrap_or(rule.reset);
        rule.min_volume = min_volume.unwrap_or(rule.min_volume);
        rule.revert = revert.unwrap_or(rule.revert) && rule.action == TripAction::Stop;
        Some(rule)
    }

    pub(crate) fn grants(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        let DeValue::Array(items) = v.get_ref() else {
            self.err(v.span(), "policy-type", "grants must be an array of tables ([[grants]])");
            return;
        };
        if !self.user_only(v.span(), "[[grants]]") {
            return;
        }
        for item in items.iter() {
            let Some(t) = self.table(item, "[[grants]] entry") else { continue };
            let (mut tool, mut resource, mut reason, mut expires) = (None, None, None, None);
            for (k, v) in t.iter() {
                match k.get_ref().as_ref() {
                    "tool" => tool = self.string(v, "grants.tool"),
                    "resource" => resource = self.string(v, "grants.resource"),
                    "reason" => reason = self.string(v, "grants.reason"),
                    "expires" => {
                        if let Some(s) = self.string(v, "grants.expires") {
                            match s.value.parse::<jiff::Timestamp>() {
                                Ok(ts) => expires = Some(ts.as_second()),
                                Err(_) => self.err(s.span, "policy-value", format!("grants.expires must be an RFC 3339 time like 2027-01-31T00:00:00Z, found \"{}\"", s.value)),
                            }
                        }
                    }
                    _ => self.unknown_key(k, "[[grants]]", &["tool", "resource", "reason", "expires"]),
                }
            }
            let (Some(tool), Some(reason)) = (tool, reason) else {
                self.err(item.span(), "policy-value", "[[grants]] entry needs `tool` and `reason`");
                continue;
            };
            for (what, g) in [("tool", Some(&tool)), ("resource", resource.as_ref())] {
                if let Some(g) = g
                    && let Err(e) = globset::Glob::new(&g.value)
                {
                    self.err(
                        g.span.clone(),
                        "policy-value",
                        format!("grants.{what} `{}` is not a valid glob: {e}", g.value),
                    );
                }
            }
            let id = -(i64::try_from(out.grants.len()).unwrap_or(0) + 1);
            out.grants.push(crate::permissions::PermissionGrant {
                id,
                tool: tool.value,
                resource: resource.map(|r| r.value),
                scope: crate::permissions::GrantScope::User,
                expires_at: expires,
                created_at: 0,
                created_by: "policy".into(),
                reason: reason.value,
            });
        }
    }

    pub(crate) fn exec(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        let Some(t) = self.table(v, "[exec]") else { return };
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "env_allow" => {
                    if self.user_only(v.span(), "exec.env_allow") {
                        out.env_allow.extend(self.strings(v, "exec.env_allow").into_iter().map(|s| s.value));
                    }
                }
                "secrets_for" => {
                    if self.user_only(v.span(), "exec.secrets_for") {
                        out.secrets_for.extend(self.strings(v, "exec.secrets_for").into_iter().map(|s| s.value));
                    }
                }
                "network_for" => {
                    if self.user_only(v.span(), "exec.network_for") {
                        out.network_for.extend(self.strings(v, "exec.network_for").into_iter().map(|s| s.value));
                    }
                }
                "wrap_bash" => {
                    if let Some(b) = self.boolean(v, "exec.wrap_bash") {
                        // Turning the sandbox on only tightens; turning it off is the user's call.
                        if b || self.user_only(v.span(), "exec.wrap_bash = false") {
                            out.wrap_bash = Some(b);
                        }
                    }
                }
                "journal" => {
                    if let Some(b) = self.boolean(v, "exec.journal")
                        && (b || self.user_only(v.span(), "exec.journal = false"))
                    {
                        out.journal = Some(b);
                    }
                }
                // Canaries only add tripwires: any layer may ask for them.
                "canary_env" => out.canary_env.extend(self.strings(v, "exec.canary_env").into_iter().map(|s| s.value)),
                "canary_file" => {
                    if let Some(b) = self.boolean(v, "exec.canary_file")
                        && (b || self.user_only(v.span(), "exec.canary_file = false"))
                    {
                        out.canary_file = Some(b);
                    }
                }
                "unenforced" => {
                    if let Some(s) = self.string(v, "exec.unenforced") {
                        match s.value.as_str() {
                            "deny" => out.unenforced_ask = Some(false),
                            "ask" if self.user_only(s.span.clone(), "exec.unenforced = \"ask\"") => {
                                out.unenforced_ask = Some(true)
                            }
                            "ask" => {}
                            _ => self.err(
                                s.span,
                                "policy-value",
                                format!("exec.unenforced must be \"deny\" or \"ask\", found \"{}\"", s.value),
                            ),
                        }
                    }
                }
                _ => self.unknown_key(
                    k,
                    "[exec]",
                    &[
                        "env_allow",
                        "secrets_for",
                        "network_for",
                        "wrap_bash",
                        "journal",
                        "canary_env",
                        "canary_file",
                        "unenforced",
                    ],
                ),
            }
        }
    }

    pub(crate) fn advisories(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        let Some(t) = self.table(v, "[advisories]") else { return };
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "max_age_days" => {
                    if let Some(n) = self.number(v, "advisories.max_age_days") {
                        out.adv_max_age_days = Some(n as u64);
                    }
                }
                "deny_cvss" => {
                    // Above 10, no score denies (the `action` applies to every finding).
                    if let Some(n) = self.number(v, "advisories.deny_cvss") {
                        out.adv_deny_cvss = Some(n);
                    }
                }
                "action" => {
                    if let Some(a) = self.verdict(v, "advisories.action") {
                        if a.value == crate::Verdict::Allow {
                            self.err(a.span, "policy-value", "advisories.action must be \"ask\" or \"deny\"");
                        } else {
                            out.adv_action = Some(a.value);
                        }
                    }
                }
                "missing" => out.adv_missing = self.verdict(v, "advisories.missing").map(|a| a.value),
                _ => self.unknown_key(k, "[advisories]", &["max_age_days", "deny_cvss", "action", "missing"]),
            }
        }
    }

    pub(crate) fn preview(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        let Some(t) = self.table(v, "[preview]") else { return };
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "in_hook" => {
                    // Turning the human's preview off hides information: the user's call only.
                    if let Some(b) = self.boolean(v, "preview.in_hook")
                        && (b || self.user_only(v.span(), "preview.in_hook = false"))
                    {
                        out.preview_in_hook = Some(b);
                    }
                }
                _ => self.unknown_key(k, "[preview]", &["in_hook"]),
            }
        }
    }

    pub(crate) fn dashboard(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        let Some(t) = self.table(v, "[dashboard]") else { return };
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "allow_remote_bind" => {
                    // Who may reach the human's controls over the network: the user's call only.
                    if let Some(b) = self.boolean(v, "dashboard.allow_remote_bind")
                        && self.user_only(v.span(), "dashboard.allow_remote_bind")
                    {
                        out.dashboard_remote_bind = Some(b);
                    }
                }
                _ => self.unknown_key(k, "[dashboard]", &["allow_remote_bind"]),
            }
        }
    }

    pub(crate) fn fleet(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        const KNOWN: &[&str] = &[
            "database_url",
            "name",
            "host",
            "group",
            "heartbeat",
            "operator_keys",
            "reservation_usd",
            "reservation_tokens",
            "lease",
            "ca_file",
        ];
        let Some(t) = self.table(v, "[fleet]") else { return };
        // Which fleet a host obeys and whose word lifts a stop: the user's call only — not even
        // an approved project policy's.
        if self.kind != LayerKind::User {
            self.err(v.span(), "policy-loosens", "[fleet] may only be set in the user policy");
            return;
        }
        let mut f = crate::policy::model::FleetSettings::default();
        let mut url = None;
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "database_url" => url = self.string(v, "fleet.database_url").map(|s| s.value),
                "name" => f.name = self.string(v, "fleet.name").map_or(f.name, |s| s.value),
                "host" => f.host = self.string(v, "fleet.host").map(|s| s.value),
                "group" => f.group = self.string(v, "fleet.group").map(|s| s.value),
                "ca_file" => f.ca_file = self.string(v, "fleet.ca_file").map(|s| s.value),
                "heartbeat" => f.heartbeat = self.duration(v, "fleet.heartbeat").unwrap_or(f.heartbeat).max(1),
                "reservation_usd" => match self.number(v, "fleet.reservation_usd") {
                    Some(n) if (0.01..=1e9).contains(&n) => f.reservation_micro_usd = (n * 1e6).round() as i64,
                    Some(_) => self.err(v.span(), "policy-value", "fleet.reservation_usd must be from 0.01 to 10^9"),
                    None => {}
                },
                "reservation_tokens" => match self.number(v, "fleet.reservation_tokens") {
                    Some(n) if (1.0..=1e12).contains(&n) => f.reservation_tokens = n as u64,
                    Some(_) => self.err(v.span(), "policy-value", "fleet.reservation_tokens must be from 1 to 10^12"),
                    None => {}
                },
                // A lease shorter than a minute would lapse at every slow heartbeat.
                "lease" => f.lease = self.duration(v, "fleet.lease").unwrap_or(f.lease).max(60),
                "operator_keys" => {
                    for k in self.strings(v, "fleet.operator_keys") {
                        if k.value.len() == 64 && k.value.bytes().all(|b| b.is_ascii_hexdigit()) {
                            f.operator_keys.push(k.value.to_ascii_lowercase());
                        } else {
                            self.err(
                                k.span,
                                "policy-value",
                                "fleet.operator_keys entries are Ed25519 public keys, 64 hex digits",
                            );
                        }
                    }
                }
                _ => self.unknown_key(k, "[fleet]", KNOWN),
            }
        }
        match url {
            Some(u) => {
                f.database_url = u;
                out.fleet = Some(f);
            }
            None => self.err(v.span(), "policy-value", "[fleet] needs database_url"),
        }
    }

    pub(crate) fn prices(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        let Some(t) = self.table(v, "[prices]") else { return };
        if !self.user_only(v.span(), "[prices]") {
            return;
        }
        for (model, entry) in t.iter() {
            let Some(e) = self.table(entry, &format!("prices.\"{}\"", model.get_ref())) else { continue };
            let mut p = [None; 4];
            for (k, v) in e.iter() {
                let i = match k.get_ref().as_ref() {
                    "input" => 0,
                    "output" => 1,
                    "cache_write" => 2,
                    "cache_read" => 3,
                    _ => {
                        self.unknown_key(k, "a [prices] entry", &["input", "output", "cache_write", "cache_read"]);
                        continue;
                    }
                };
                p[i] = self.number(v, &format!("prices.\"{}\".{}", model.get_ref(), k.get_ref()));
            }
            match (p[0], p[1]) {
                (Some(input), Some(output)) => out.prices.push((
                    model.get_ref().to_string(),
                    Price {
                        input,
                        output,
                        cache_write: p[2].unwrap_or(input * 1.25),
                        cache_read: p[3].unwrap_or(input * 0.1),
                    },
                )),
                _ => self.err(
                    entry.span(),
                    "policy-value",
                    format!("prices.\"{}\" needs `input` and `output` (USD per million tokens)", model.get_ref()),
                ),
            }
        }
    }

    pub(crate) fn break_glass(&mut self, v: &Spanned<DeValue<'_>>, out: &mut BreakerLayer) {
        const KNOWN: &[&str] = &["default", "max", "dual_control"];
        let Some(t) = self.table(v, "[break_glass]") else { return };
        for (k, v) in t.iter() {
            match k.get_ref().as_ref() {
                "default" => {
                    if self.user_only(v.span(), "break_glass.default") {
                        out.bg_default = self.duration(v, "break_glass.default");
                    }
                }
                "max" => {
                    if self.user_only(v.span(), "break_glass.max") {
                        out.bg_max = self.duration(v, "break_glass.max");
                    }
                }
                // A project may demand dual control for more scopes (that only tightens).
                "dual_control" => {
                    for s in self.strings(v, "break_glass.dual_control") {
                        if s.value.starts_with("rule:") || s.value.starts_with("path:") {
                            out.dual_control.push(s.value);
                        } else {
                            self.err(
                                s.span,
                                "policy-value",
                                format!(
                                    "break_glass.dual_control entries are \"rule:CODE\" or \"path:GLOB\", found \"{}\"",
                                    s.value
                                ),
                            );
                        }
                    }
                }
                _ => self.unknown_key(k, "[break_glass]", KNOWN),
            }
        }
    }
}
