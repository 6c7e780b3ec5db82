//! The command shapes pack rules describe, and matching them against an unwrapped command.
//!
//! Written by hand: the shape language is small (words, flags, argument globs, one regex over the
//! command's text) and must cost almost nothing per command; regexes use the `regex` crate.

use crate::checks::shell::Command;
use regex::Regex;

/// Patterns longer than this are refused (a word pattern may list many alternatives).
const MAX_PATTERN: usize = 4096;

/// The operands of a command for one pack: words that are not options, each marked when it
/// follows an option the pack does not know (it may be that option's value).
#[derive(Debug)]
pub struct Operands<'c> {
    /// (text, may be an unknown option's value, only known at run time)
    words: Vec<(&'c str, bool, bool)>,
    /// Every argument's text.
    args: Vec<&'c str>,
    /// The arguments joined, then the stdin text: built on first use by a `text` rule.
    text: std::cell::OnceCell<String>,
}

impl<'c> Operands<'c> {
    /// Splits a command's arguments for a pack whose `value_options` take a value.
    pub fn of(c: &'c Command, value_options: &[String]) -> Operands<'c> {
        let mut words = Vec::new();
        let mut args = c.args.iter().map(|w| (w.text.as_str(), w.dynamic)).peekable();
        let mut after_unknown_option = false;
        while let Some((t, dynamic)) = args.next() {
            if t == "--" {
                words.extend(args.by_ref().map(|(w, d)| (w, false, d)));
                break;
            }
            if t.len() > 1 && t.starts_with('-') {
                let name = t.split('=').next().unwrap_or(t);
                let known = value_options.iter().any(|o| o == name);
                if known && !t.contains('=') {
                    args.next();
                    after_unknown_option = false;
                } else {
                    after_unknown_option = !t.contains('=') && !known;
                }
                continue;
            }
            words.push((t, after_unknown_option, dynamic));
            after_unknown_option = false;
        }
        Operands { words, args: c.args.iter().map(|w| w.text.as_str()).collect(), text: std::cell::OnceCell::new() }
    }

    /// The operand texts.
    pub fn texts(&self) -> impl Iterator<Item = &'c str> + '_ {
        self.words.iter().map(|(w, _, _)| *w)
    }
}

/// One alternative-set word pattern: `delete|rm`, `delete-*`, `*`.
#[derive(Debug, Clone)]
struct WordPat(Vec<String>);

impl WordPat {
    fn new(s: &str) -> Result<Self, String> {
        if s.is_empty() || s.len() > MAX_PATTERN || s.split('|').any(str::is_empty) {
            return Err(format!("word pattern `{s}` is empty or too long"));
        }
        Ok(WordPat(s.split('|').map(String::from).collect()))
    }
    fn matches(&self, w: &str) -> bool {
        self.0.iter().any(|p| glob(p, w))
    }
}

/// A flag that must (or must not) be present.
#[derive(Debug, Clone)]
enum FlagPat {
    /// `r`: a short flag alone or in a cluster (`-r`, `-rf`).
    Letter(char),
    /// `--force`: the long flag, with or without `=value`.
    Long(String),
    /// `--method=DELETE`, `-X=DELETE`: the option with a value matching the glob (any case),
    /// attached (`--method=DELETE`, `-XDELETE`) or as the next word.
    Value(String, String),
}

impl FlagPat {
    fn new(s: &str) -> Result<Self, String> {
        if s.len() > MAX_PATTERN {
            return Err(format!("flag `{s}` is too long"));
        }
        if let Some((name, value)) = s.split_once('=')
            && name.starts_with('-')
            && name.len() >= 2
            && !value.is_empty()
        {
            return Ok(FlagPat::Value(name.to_string(), value.to_ascii_lowercase()));
        }
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphanumeric() => Ok(FlagPat::Letter(c)),
            _ if s.starts_with("--") && s.len() > 2 && !s.contains('=') => Ok(FlagPat::Long(s.to_string())),
            _ => Err(format!("flag `{s}` is not a letter, `--long` or `-o=value`")),
        }
    }

    fn present(&self, args: &[&str]) -> bool {
        let opts = || {
            args.iter().enumerate().take_while(|(_, a)| **a != "--").filter(|(_, a)| a.len() > 1 && a.starts_with('-'))
        };
        match self {
            FlagPat::Letter(c) => opts().any(|(_, o)| !o.starts_with("--") && o[1..].contains(*c)),
            FlagPat::Long(name) => {
                opts().any(|(_, o)| *o == name || o.strip_prefix(name.as_str()).is_some_and(|r| r.starts_with('=')))
            }
            FlagPat::Value(name, want) => opts().any(|(i, o)| {
                let value = if *o == name {
                    args.get(i + 1).copied()
                } else if let Some(rest) = o.strip_prefix(name.as_str()) {
                    match rest.strip_prefix('=') {
                        Some(v) => Some(v),
                        // `-XDELETE`: a short option's value attached.
                        None if !name.starts_with("--") && !rest.is_empty() => Some(rest),
                        None => None,
                    }
                } else {
                    None
                };
                value.is_some_and(|v| glob(want, &v.to_ascii_lowercase()))
            }),
        }
    }
}

/// What a rule matches.
#[derive(Debug, Clone)]
pub struct Shape {
    programs: Vec<String>,
    words: Vec<WordPat>,
    flags: Vec<FlagPat>,
    any_flags: Vec<FlagPat>,
    without: Vec<FlagPat>,
    args: Vec<WordPat>,
    any_args: Vec<WordPat>,
    text: Option<Regex>,
    not_text: Option<Regex>,
}

impl Shape {
    #[allow(clippy::too_many_arguments)] // one parameter per field of the pack rule
    pub(crate) fn new(
        programs: Vec<String>,
        words: &[String],
        flags: &[String],
        any_flags: &[String],
        without: &[String],
        args: &[String],
        any_args: &[String],
        text: Option<&str>,
        not_text: Option<&str>,
    ) -> Result<Shape, String> {
        let words_of = |v: &[String]| v.iter().map(|s| WordPat::new(s)).collect::<Result<Vec<_>, _>>();
        let flags_of = |v: &[String]| v.iter().map(|s| FlagPat::new(s)).collect::<Result<Vec<_>, _>>();
        let regex = |r: Option<&str>| -> Result<Option<Regex>, String> {
            r.map(|r| {
                regex::RegexBuilder::new(r)
                    .case_insensitive(true)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| format!("`{r}` is not a valid regex: {e}"))
            })
            .transpose()
        };
        if words.len() > 8 {
            return Err("at most 8 `words`".into());
        }
        Ok(Shape {
            programs,
            words: words_of(words)?,
            flags: flags_of(flags)?,
            any_flags: flags_of(any_flags)?,
            without: flags_of(without)?,
            args: words_of(args)?,
            any_args: words_of(any_args)?,
            text: regex(text)?,
            not_text: regex(not_text)?,
        })
    }

    /// Whether a command has this shape.
    pub fn matches(&self, c: &Command, ops: &Operands<'_>) -> bool {
        self.matches_as(c, ops, false)
    }

    /// Whether a command could have this shape once the words only known at run time are known:
    /// a dynamic operand may be any word, a dynamic argument any required flag or argument, and
    /// the text may be anything (`restic $(echo forget) --prune`, `aws s3 rm $OPTS s3://b`).
    pub fn could_match(&self, c: &Command, ops: &Operands<'_>) -> bool {
        c.args.iter().any(|w| w.dynamic) && self.matches_as(c, ops, true)
    }

    fn matches_as(&self, c: &Command, ops: &Operands<'_>, dynamic: bool) -> bool {
        if !self.programs.contains(&c.program) || !self.words_match(ops, dynamic) {
            return false;
        }
        let args = ops.args.as_slice();
        let any_dynamic = dynamic && c.args.iter().any(|w| w.dynamic);
        let flag = |f: &FlagPat| f.present(args) || any_dynamic;
        let arg = |p: &WordPat| ops.texts().any(|w| p.matches(w)) || any_dynamic;
        if !self.flags.iter().all(flag)
            || (!self.any_flags.is_empty() && !self.any_flags.iter().any(flag))
            || self.without.iter().any(|f| f.present(args))
            || !self.args.iter().all(arg)
            || (!self.any_args.is_empty() && !self.any_args.iter().any(arg))
        {
            return false;
        }
        if any_dynamic || (self.text.is_none() && self.not_text.is_none()) {
            return true;
        }
        let text = ops.text.get_or_init(|| {
            let mut text = args.join(" ");
            if let Some(s) = &c.stdin_text {
                text.push('\n');
                text.push_str(s);
            }
            text
        });
        self.text.as_ref().is_none_or(|r| r.is_match(text)) && !self.not_text.as_ref().is_some_and(|r| r.is_match(text))
    }

    /// The leading operands match `words`, where an operand that may be an unknown option's
    /// value may be skipped (`aws --color on s3 rm`). Linear: one pass over the operands.
    fn words_match(&self, ops: &Operands<'_>, dynamic: bool) -> bool {
        let m = self.words.len();
        if m == 0 {
            return true;
        }
        // At most 8 words (checked at load): the states fit on the stack.
        let mut reach = [false; 9];
        reach[0] = true;
        for (w, maybe_value, is_dynamic) in &ops.words {
            let mut next = [false; 9];
            for j in 0..=m {
                if reach[j] && (*maybe_value || (dynamic && *is_dynamic)) {
                    next[j] = true;
                }
                if j > 0 && reach[j - 1] && (self.words[j - 1].matches(w) || (dynamic && *is_dynamic)) {
                    next[j] = true;
                }
            }
            if next[m] {
                return true;
            }
            if !next[..=m].iter().any(|r| *r) {
                return false;
            }
            reach = next;
        }
        false
    }
}

/// `*` matches any run of characters; everything else itself.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|b| *b == b'*')
}
