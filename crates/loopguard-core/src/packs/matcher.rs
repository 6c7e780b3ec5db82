//! The command shapes pack rules describe, and matching them against an unwrapped command.
//!
//! Written by hand: the shape language is small (words, flags, argument globs, one regex over the
//! command's text) and must cost almost nothing per command; regexes use the `regex` crate.

use crate::checks::shell::unwrap::Command;
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
    /// For each argument: it is the value of an option the pack knows takes one.
    consumed: Vec<bool>,
    /// The arguments joined, then the stdin text: built on first use by a `text` rule.
    text: std::cell::OnceCell<String>,
    /// The command's structure for `not_text`: the arguments joined without the values of known
    /// value options, an argument holding white space replaced by `…` (an exemption never reads
    /// free text: `--exclude ' help'` must not look like help).
    structure: std::cell::OnceCell<String>,
}

impl<'c> Operands<'c> {
    /// Splits a command's arguments for a pack whose `value_options` take a value.
    pub fn of(c: &'c Command, value_options: &[String]) -> Operands<'c> {
        let mut words = Vec::new();
        let mut consumed = vec![false; c.args.len()];
        let mut args = c.args.iter().map(|w| (w.text.as_str(), w.dynamic)).enumerate().peekable();
        let mut after_unknown_option = false;
        while let Some((_, (t, dynamic))) = args.next() {
            if t == "--" {
                words.extend(args.by_ref().map(|(_, (w, d))| (w, false, d)));
                break;
            }
            if t.len() > 1 && t.starts_with('-') {
                let name = t.split('=').next().unwrap_or(t);
                let known = value_options.iter().any(|o| o == name);
                if known && !t.contains('=') {
                    if let Some((k, _)) = args.next() {
                        consumed[k] = true;
                    }
                    after_unknown_option = false;
                } else {
                    after_unknown_option = !t.contains('=') && !known;
                }
                continue;
            }
            words.push((t, after_unknown_option, dynamic));
            after_unknown_option = false;
        }
        Operands {
            words,
            args: c.args.iter().map(|w| w.text.as_str()).collect(),
            consumed,
            text: std::cell::OnceCell::new(),
            structure: std::cell::OnceCell::new(),
        }
    }

    /// Whether some word only known at run time could stand for a flag or an argument: not the
    /// value of an option the pack knows takes one (`--profile "$P"`), nor an attached value
    /// (`-chdir="$DIR"`), nor a word whose written start is no flag (`"s3://$BUCKET/"`).
    pub fn free_dynamic(&self, c: &Command) -> bool {
        self.runtime_words(c).any(|w| {
            let written = literal_prefix(&w.text);
            written.is_empty() || written.starts_with('-')
        })
    }

    /// The words only known at run time that are not the value of a known option (`--profile
    /// "$P"`) nor attached to one (`-chdir="$DIR"`).
    fn runtime_words<'w>(&'w self, c: &'w Command) -> impl Iterator<Item = &'w crate::checks::shell::lex::Word> + 'w {
        c.args.iter().enumerate().filter_map(move |(i, w)| {
            (w.dynamic
                && !self.consumed.get(i).copied().unwrap_or(false)
                && !(w.text.starts_with('-') && w.text.contains('=')))
            .then_some(w)
        })
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

    /// Whether a word only known at run time, written as `prefix…`, could be one of these
    /// (`"forg$E"` could be `forget`; `"s3://$B/"` is no subcommand).
    fn could_start(&self, prefix: &str) -> bool {
        self.0.iter().any(|p| p.contains('*') || p.starts_with(prefix))
    }
}

/// The part of a word written before the first expansion (`s3://` of `s3://$B/`).
fn literal_prefix(text: &str) -> &str {
    text.split(['$', '`']).next().unwrap_or("")
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
            // Go-style long flags with one dash (`-recurse`, `-purge`).
            _ if s.starts_with('-') && s.len() > 2 && !s.contains('=') => Ok(FlagPat::Long(s.to_string())),
            _ => Err(format!("flag `{s}` is not a letter, `--long`, `-long` or `-o=value`")),
        }
    }

    /// Whether the flag is present among the options (values of options the pack knows are
    /// not options).
    fn present(&self, args: &[&str], consumed: &[bool]) -> bool {
        let opts = || {
            args.iter()
                .enumerate()
                .take_while(|(_, a)| **a != "--")
                .filter(|(i, a)| a.len() > 1 && a.starts_with('-') && !consumed.get(*i).copied().unwrap_or(false))
        };
        match self {
            FlagPat::Letter(c) => opts().any(|(_, o)| !o.starts_with("--") && o[1..].contains(*c)),
            FlagPat::Long(name) => {
                opts().any(|(_, o)| *o == name || o.strip_prefix(name.as_str()).is_some_and(|r| r.starts_with('=')))
            }
            FlagPat::Value(name, want) => {
                opts().any(|(i, o)| self.value_at(args, i, o, name).is_some_and(|v| glob(want, &v)))
            }
        }
    }

    /// The value an occurrence of option `name` at `i` carries, lower-cased.
    fn value_at(&self, args: &[&str], i: usize, o: &str, name: &str) -> Option<String> {
        let v = if o == name {
            args.get(i + 1).copied()
        } else if let Some(rest) = o.strip_prefix(name) {
            match rest.strip_prefix('=') {
                Some(v) => Some(v),
                // `-XDELETE`: a short option's value attached.
                None if !name.starts_with("--") && !rest.is_empty() => Some(rest),
                None => None,
            }
        } else if let Some(letter) = name.strip_prefix('-').filter(|l| l.len() == 1 && !o.starts_with("--")) {
            // Inside a cluster of flags: `-iXDELETE`, `-iX DELETE`.
            let body = &o[1..];
            body.find(letter).filter(|&k| body[..k].chars().all(|ch| ch.is_ascii_alphabetic())).map(|k| {
                let rest = &body[k + 1..];
                if rest.is_empty() {
                    args.get(i + 1).copied().unwrap_or("")
                } else {
                    rest.strip_prefix('=').unwrap_or(rest)
                }
            })
        } else {
            None
        };
        v.map(str::to_ascii_lowercase)
    }

    /// Whether the flag exempts a command (`without`): strictly. The last occurrence decides
    /// (`--dry-run --dry-run=none` runs for real), a false value does not count
    /// (`--dry-run=false`), a letter counts only in a plain cluster of letters (`-n`, not
    /// `-uroot`), and a token right after an option that may take it as its value does not
    /// count (`--keep-tag --dry-run`: the tag is "--dry-run").
    fn exempts(&self, args: &[&str], consumed: &[bool], booleans: &[&FlagPat]) -> bool {
        let end = args.iter().position(|a| *a == "--").unwrap_or(args.len());
        // A flag the rule itself names (`--recursive`, `-d`) takes no value.
        let boolean = |prev: &str| {
            booleans.iter().any(|f| match f {
                FlagPat::Long(n) => prev == n,
                FlagPat::Letter(_) => !prev.starts_with("--") && prev[1..].chars().all(|ch| ch.is_ascii_alphabetic()),
                FlagPat::Value(..) => false,
            })
        };
        let may_be_value = |i: usize| {
            i > 0 && {
                let prev = args[i - 1];
                prev.len() > 1
                    && prev.starts_with('-')
                    && !prev[1..].bytes().all(|b| b.is_ascii_digit())
                    && !prev.contains('=')
                    && !consumed[i - 1]
                    && !boolean(prev)
            }
        };
        let candidates = (0..end).filter(|&i| {
            let a = args[i];
            a.len() > 1 && a.starts_with('-') && !consumed[i] && !may_be_value(i)
        });
        let falsy = |v: &str| matches!(v, "false" | "0" | "no" | "off" | "none" | "never");
        match self {
            FlagPat::Letter(c) => candidates.into_iter().any(|i| {
                let a = args[i];
                !a.starts_with("--") && a[1..].chars().all(|ch| ch.is_ascii_alphabetic()) && a[1..].contains(*c)
            }),
            FlagPat::Long(name) => {
                let last = (0..end).rev().find(|&i| {
                    args[i] == name || args[i].strip_prefix(name.as_str()).is_some_and(|r| r.starts_with('='))
                });
                last.is_some_and(|i| {
                    candidates.clone().any(|k| k == i)
                        && args[i].split_once('=').is_none_or(|(_, v)| !falsy(&v.to_ascii_lowercase()))
                })
            }
            FlagPat::Value(name, want) => {
                let last = (0..end).rev().find_map(|i| self.value_at(args, i, args[i], name).map(|v| (i, v)));
                last.is_some_and(|(i, v)| candidates.clone().any(|k| k == i) && glob(want, &v))
            }
        }
    }
}

/// A regex compiled on first use: a hook call compiles only the patterns of rules whose words
/// and flags matched (compiling every pattern of a large pack costs milliseconds).
#[derive(Debug, Clone)]
pub(crate) struct LazyRe {
    src: String,
    re: std::sync::OnceLock<Option<Regex>>,
}

impl LazyRe {
    fn build(src: &str) -> Result<Regex, String> {
        regex::RegexBuilder::new(src)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("`{src}` is not a valid regex: {e}"))
    }

    /// Whether it matches; `None` when the pattern does not compile (the caller decides the
    /// stricter way; built-in patterns are compiled by the tests, others when the policy loads).
    fn is_match(&self, hay: &str) -> Option<bool> {
        self.re.get_or_init(|| Self::build(&self.src).ok()).as_ref().map(|r| r.is_match(hay))
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
    text: Option<LazyRe>,
    not_text: Option<LazyRe>,
    /// Operands that may be an unknown option's value are words, never skipped (rules that mark a
    /// command read-only must not reach their word by skipping one: with `--x get apply`, the
    /// read word `get` must be where it stands). The packs list their tools' value options.
    pub(crate) strict_words: bool,
}

/// How operands that may be an unknown option's value are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Maybe {
    /// Either way.
    Skippable,
    /// As words.
    Words,
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
        compile_now: bool,
    ) -> Result<Shape, String> {
        let words_of = |v: &[String]| v.iter().map(|s| WordPat::new(s)).collect::<Result<Vec<_>, _>>();
        let flags_of = |v: &[String]| v.iter().map(|s| FlagPat::new(s)).collect::<Result<Vec<_>, _>>();
        // Checked here (a pattern that does not compile is refused), compiled again on first use.
        let regex = |r: Option<&str>| -> Result<Option<LazyRe>, String> {
            r.map(|r| {
                if compile_now {
                    LazyRe::build(r)?;
                }
                Ok(LazyRe { src: r.to_string(), re: std::sync::OnceLock::new() })
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
            strict_words: false,
        })
    }

    /// Compiles every pattern now: the problems found.
    pub(crate) fn compile_all(&self) -> Vec<String> {
        [&self.text, &self.not_text].into_iter().flatten().filter_map(|r| LazyRe::build(&r.src).err()).collect()
    }

    /// Whether a command has this shape.
    pub fn matches(&self, c: &Command, ops: &Operands<'_>) -> bool {
        self.matches_as(c, ops, false)
    }

    /// Whether a command could have this shape once the words only known at run time are known:
    /// a dynamic operand may be any word, a dynamic argument any required flag or argument, and
    /// the text may be anything (`restic $(echo forget) --prune`, `aws s3 rm $OPTS s3://b`).
    pub fn could_match(&self, c: &Command, ops: &Operands<'_>) -> bool {
        ops.runtime_words(c).next().is_some() && self.matches_as(c, ops, true)
    }

    fn matches_as(&self, c: &Command, ops: &Operands<'_>, dynamic: bool) -> bool {
        // Exact, or in any case for a name written with capitals (`KUBECTL` where file names
        // ignore case); `truncate` is not `TRUNCATE`.
        let upper = c.program.bytes().any(|b| b.is_ascii_uppercase());
        if !self.programs.iter().any(|p| *p == c.program || (upper && p.eq_ignore_ascii_case(&c.program))) {
            return false;
        }
        let words = if self.strict_words {
            self.words_match(ops, dynamic, Maybe::Words)
        } else {
            self.words_match(ops, dynamic, Maybe::Skippable)
        };
        if !words {
            return false;
        }
        let args = ops.args.as_slice();
        let any_dynamic = dynamic && ops.free_dynamic(c);
        let consumed = ops.consumed.as_slice();
        let booleans: Vec<&FlagPat> = self.flags.iter().chain(&self.any_flags).collect();
        let flag = |f: &FlagPat| f.present(args, consumed) || any_dynamic;
        let arg = |p: &WordPat| ops.texts().any(|w| p.matches(w)) || any_dynamic;
        if !self.flags.iter().all(flag)
            || (!self.any_flags.is_empty() && !self.any_flags.iter().any(flag))
            || self.without.iter().any(|f| f.exempts(args, consumed, &booleans))
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
        let structure = || {
            ops.structure.get_or_init(|| {
                let kept = args
                    .iter()
                    .zip(consumed)
                    .filter(|(_, c)| !**c)
                    .map(|(a, _)| if a.chars().any(char::is_whitespace) { "…" } else { a });
                kept.collect::<Vec<_>>().join(" ")
            })
        };
        // A rule that marks a command read-only is excluded by the whole text (`… query
        // 'mutation {…}'` is no read) and included by the structure only (`--exclude ' --help '`
        // is no help request); any other rule is included by the whole text and exempted by the
        // structure only.
        let (include_by, exempt_by): (&str, &str) =
            if self.strict_words { (structure(), text) } else { (text, structure()) };
        // A pattern that does not compile (never for a built-in pack: the tests compile them all)
        // includes and does not exempt — except that it never marks a command read-only.
        let broken = !self.strict_words;
        self.text.as_ref().is_none_or(|r| r.is_match(include_by).unwrap_or(broken))
            && !self.not_text.as_ref().is_some_and(|r| r.is_match(exempt_by).unwrap_or(!broken))
    }

    /// The leading operands match `words`, where an operand that may be an unknown option's
    /// value may be skipped (`aws --color on s3 rm`). Linear: one pass over the operands.
    fn words_match(&self, ops: &Operands<'_>, dynamic: bool, maybe: Maybe) -> bool {
        let m = self.words.len();
        if m == 0 {
            return true;
        }
        // At most 8 words (checked at load): the states fit on the stack.
        let mut reach = [false; 9];
        reach[0] = true;
        for (w, maybe_value, is_dynamic) in &ops.words {
            let maybe_value = &(*maybe_value && maybe == Maybe::Skippable);
            let mut next = [false; 9];
            // A word known at run time may also be options (`$OPTS`), unless written otherwise.
            let written = literal_prefix(w);
            let may_be_options = dynamic && *is_dynamic && (written.is_empty() || written.starts_with('-'));
            for j in 0..=m {
                if reach[j] && (*maybe_value || may_be_options) {
                    next[j] = true;
                }
                if j > 0
                    && reach[j - 1]
                    && (self.words[j - 1].matches(w)
                        || (dynamic && *is_dynamic && self.words[j - 1].could_start(written)))
                {
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
