//! The generic half of reading a policy layer: values with their spans ([`At`]) and the
//! [`Reader`] that collects every problem, with its readers for strings, tables and verdicts.
//! The per-section readers (`read`, `read_breakers`) extend it and depend on this leaf, not on
//! each other.

use super::diag::Diagnostic;
use super::model::{At, LayerKind};
use crate::Verdict;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

pub(crate) struct Reader<'a> {
    pub(crate) file: &'a Path,
    pub(crate) src: &'a str,
    pub(crate) kind: LayerKind,
    pub(crate) diags: Vec<Diagnostic>,
}

impl Reader<'_> {
    pub(crate) fn err(&mut self, span: Range<usize>, code: &'static str, msg: impl Into<String>) {
        self.diags.push(Diagnostic::at(self.file, self.src, span, code, msg));
    }

    pub(crate) fn unknown_key(&mut self, key: &Spanned<std::borrow::Cow<'_, str>>, table: &str, known: &[&str]) {
        self.err(
            key.span(),
            "policy-unknown-key",
            format!("unknown key `{}` in {table}; expected one of: {}", key.get_ref(), known.join(", ")),
        );
    }

    pub(crate) fn table<'v, 'i>(&mut self, v: &'v Spanned<DeValue<'i>>, what: &str) -> Option<&'v DeTable<'i>> {
        match v.get_ref() {
            DeValue::Table(t) => Some(t),
            other => {
                self.err(v.span(), "policy-type", format!("{what} must be a table, found {}", other.type_str()));
                None
            }
        }
    }

    pub(crate) fn string(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<At<String>> {
        match v.get_ref() {
            DeValue::String(s) => Some(At { value: s.to_string(), span: v.span() }),
            other => {
                self.err(v.span(), "policy-type", format!("{what} must be a string, found {}", other.type_str()));
                None
            }
        }
    }

    pub(crate) fn strings(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Vec<At<String>> {
        match v.get_ref() {
            DeValue::Array(a) => a.iter().filter_map(|e| self.string(e, what)).collect(),
            other => {
                self.err(
                    v.span(),
                    "policy-type",
                    format!("{what} must be an array of strings, found {}", other.type_str()),
                );
                Vec::new()
            }
        }
    }

    pub(crate) fn verdict(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<At<Verdict>> {
        let s = self.string(v, what)?;
        match Verdict::parse(&s.value) {
            Some(value) => Some(At { value, span: s.span }),
            None => {
                self.err(
                    s.span,
                    "policy-value",
                    format!("{what} must be \"allow\", \"ask\" or \"deny\", found \"{}\"", s.value),
                );
                None
            }
        }
    }
}
