use crate::context;
use crate::rules::{BUILTIN_RULES, Rule, Severity};
use crate::values::is_placeholder;
pub use crate::values::shannon;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::Regex;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::ops::Range;
use std::sync::OnceLock;

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecretFinding {
    /// The rule that found it.
    pub rule: String,
    /// What it is.
    pub description: String,
    /// How bad.
    pub severity: Severity,
    /// Byte range of the secret itself.
    pub span: Range<usize>,
    /// 1-based line of the secret's start.
    pub line: usize,
    /// Shannon entropy of the secret, bits per char.
    pub entropy: f32,
    /// First 16 hex digits of SHA-256 of the secret: the same secret has the same fingerprint
    /// wherever it appears (never its position).
    pub fingerprint: String,
}

/// Weighted severity of a set of findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Sum of severity weights.
    pub score: u32,
    /// The highest single weight (what one finding alone risks).
    pub risk_score: u32,
    /// Any critical finding.
    pub has_critical: bool,
    /// Any high finding.
    pub has_high: bool,
}

impl Summary {
    /// Summarises findings.
    pub fn of(findings: &[SecretFinding]) -> Self {
        Summary {
            score: findings.iter().map(|f| f.severity.weight()).sum(),
            risk_score: findings.iter().map(|f| f.severity.weight()).max().unwrap_or(0),
            has_critical: findings.iter().any(|f| f.severity == Severity::Critical),
            has_high: findings.iter().any(|f| f.severity == Severity::High),
        }
    }
}

/// A compiled rule set. Regexes compile on first use: most texts hit no keyword at all.
#[derive(Debug)]
pub struct Scanner {
    rules: Vec<RuleSpec>,
    /// Rules without keywords: they run on every text.
    always: Vec<usize>,
    /// Allowlists that apply to every rule.
    global_allow: Vec<Allowlist>,
    /// Lowercase keywords, index-aligned with `keyword_rule`.
    keywords: Vec<Text>,
    /// Built on first use for a text long enough to need it (building costs ~0.2 ms).
    prefilter: OnceLock<Option<(AhoCorasick, Vec<usize>)>>,
    /// Per keyword, name keywords that may overlap its end (see `overlaps`).
    overlaps: Vec<OnceLock<Vec<(usize, usize)>>>,
    /// The keywords by their first two bytes: the prefilter of a hook's first long texts.
    bigrams: OnceLock<Bigrams>,
    /// Bytes of long texts scanned through `bigrams` so far.
    indexed: std::sync::atomic::AtomicUsize,
    /// Per first byte, the keywords that start with it (for short texts).
    firsts: OnceLock<Vec<Vec<usize>>>,
    /// Per keyword, the rules whose keywords it contains.
    contained: Vec<OnceLock<Vec<usize>>>,
    /// Many texts will be scanned: always use a DFA prefilter.
    bulk: bool,
    /// Keyword pattern index → rule index.
    keyword_rule: Vec<usize>,
    /// Per rule: its regex may span lines (runs on a wide window instead of the hit's line).
    multiline: Vec<bool>,
    regexes: Vec<OnceLock<Option<regex::bytes::Regex>>>,
    /// The contextual kinds this scanner reports (ids of [`context::KINDS`]); none: no
    /// contextual detection. Its keywords map to pseudo rule indices: `rules.len()` for a whole
    /// line, `rules.len() + 1` for the name around the hit.
    context: Vec<&'static str>,
}

/// ASCII lowercase of every byte (others unchanged).
const LOWER: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).to_ascii_lowercase();
        i += 1;
    }
    t
};

/// The two-byte keyword index: a bit per two-byte prefix (8 KiB, stays in L1), and the
/// keywords sorted by prefix for the positions whose bit is set.
#[derive(Debug)]
struct Bigrams {
    bits: Vec<u64>,
    starts: Vec<(u16, u32)>,
}

impl Bigrams {
    fn new(keywords: &[Text]) -> Self {
        let mut bits = vec![0u64; 1024];
        let mut starts = Vec::with_capacity(keywords.len());
        for (i, k) in keywords.iter().enumerate() {
            let kb = k.as_bytes();
            if kb.len() < 2 {
                continue;
            }
            let key = (u16::from(LOWER[kb[0] as usize]) << 8) | u16::from(LOWER[kb[1] as usize]);
            bits[usize::from(key >> 6)] |= 1u64 << (key & 63);
            starts.push((key, i as u32));
        }
        starts.sort_unstable();
        Bigrams { bits, starts }
    }
}

/// Texts longer than this are scanned in full but never with a window larger than this around a hit.
const WIDE_WINDOW: usize = 8 * 1024;

impl Scanner {
    /// loopguard's built-in rules, compiled once per process.
    pub fn builtin() -> &'static Scanner {
        static S: OnceLock<Scanner> = OnceLock::new();
        S.get_or_init(|| Scanner::new(BUILTIN_RULES.to_vec()).with_context(&[]))
    }

    /// The built-in rules tuned for scanning many files: the prefilter is a DFA built up front
    /// (slower to build, faster to run) and used for every text.
    pub fn builtin_bulk() -> &'static Scanner {
        static S: OnceLock<Scanner> = OnceLock::new();
        S.get_or_init(|| Scanner::new(BUILTIN_RULES.to_vec()).with_context(&[]).bulk())
    }

    /// The same scanner tuned for many texts (a DFA prefilter, built up front).
    pub fn bulk(mut self) -> Self {
        self.bulk = true;
        self
    }

    /// A scanner over built-in style `rules`.
    pub fn new(rules: Vec<Rule>) -> Self {
        Scanner::from_specs(rules.iter().map(RuleSpec::from).collect(), Vec::new())
    }

    /// A scanner over rule specs (built-in or from a gitleaks config) and global allowlists.
    pub fn from_specs(rules: Vec<RuleSpec>, global_allow: Vec<Allowlist>) -> Self {
        let mut keywords = Vec::new();
        let mut keyword_rule = Vec::new();
        let mut always = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            if r.keywords.is_empty() {
                always.push(i);
            }
            for k in &r.keywords {
                keywords.push(if k.bytes().any(|b| b.is_ascii_uppercase()) {
                    Text::Owned(k.to_ascii_lowercase())
                } else {
                    k.clone()
                });
                keyword_rule.push(i);
            }
        }
        let regexes = rules.iter().map(|_| OnceLock::new()).collect();
        let n_keywords = keywords.len();
        let multiline = rules
            .iter()
            .map(|r| {
                r.regex.contains("[\\s\\S]")
                    || r.id == "private-key"
                    || r.regex.contains("(?s)")
                    || r.regex.contains("\\n")
            })
            .collect();
        Scanner {
            rules,
            always,
            global_allow,
            keywords,
            prefilter: OnceLock::new(),
            overlaps: (0..n_keywords).map(|_| OnceLock::new()).collect(),
            bigrams: OnceLock::new(),
            indexed: std::sync::atomic::AtomicUsize::new(0),
            firsts: OnceLock::new(),
            contained: (0..n_keywords).map(|_| OnceLock::new()).collect(),
            keyword_rule,
            multiline,
            regexes,
            bulk: false,
            context: Vec::new(),
        }
    }

    /// Adds contextual detection (secrets by name and syntax, see the `context` module), all
    /// kinds but `disabled`.
    pub fn with_context(mut self, disabled: &[&str]) -> Self {
        self.context = context::KINDS.iter().map(|k| k.id).filter(|id| !disabled.contains(id)).collect();
        if !self.context.is_empty() {
            let ctx = self.rules.len();
            for (list, index) in [(context::LINE_KEYWORDS, ctx), (context::NAME_KEYWORDS, ctx + 1)] {
                for k in list {
                    self.keywords.push(Text::Borrowed(k));
                    self.keyword_rule.push(index);
                    self.contained.push(OnceLock::new());
                    self.overlaps.push(OnceLock::new());
                }
            }
        }
        self
    }

    /// The other rules one of whose keywords occurs inside keyword `k`; computed on the
    /// keyword's first hit (all at once cost milliseconds a hook call should not pay).
    fn contained(&self, k: usize) -> &[usize] {
        let Some(cell) = self.contained.get(k) else { return &[] };
        cell.get_or_init(|| {
            let Some(kw) = self.keywords.get(k) else { return Vec::new() };
            let own = self.keyword_rule.get(k).copied();
            let mut rules: Vec<usize> = self
                .keywords
                .iter()
                .enumerate()
                .filter(|(j, other)| *j != k && other.len() < kw.len() && kw.contains(other.as_ref()))
                .filter_map(|(j, _)| self.keyword_rule.get(j).copied())
                .filter(|r| Some(*r) != own)
                .collect();
            rules.sort_unstable();
            rules.dedup();
            rules
        })
    }

    fn first_bytes(&self) -> &[Vec<usize>] {
        self.firsts.get_or_init(|| {
            let mut t = vec![Vec::new(); 256];
            for (i, k) in self.keywords.iter().enumerate() {
                if let Some(&b) = k.as_bytes().first() {
                    t[b as usize].push(i);
                }
            }
            t
        })
    }

    /// The keyword automaton over `keywords` whose index satisfies `pick`, with the map from
    /// its pattern ids back to keyword indices.
    fn build_automaton(&self, pick: impl Fn(usize) -> bool, dfa: bool) -> Option<(AhoCorasick, Vec<usize>)> {
        let ids: Vec<usize> = (0..self.keywords.len()).filter(|k| pick(*k)).collect();
        if ids.is_empty() {
            return None;
        }
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(if dfa { AhoCorasickKind::DFA } else { AhoCorasickKind::ContiguousNFA }))
            .build(ids.iter().filter_map(|k| self.keywords.get(*k)).map(|k| k.as_bytes()))
            .ok()?;
        Some((ac, ids))
    }

    fn automaton(&self) -> Option<&(AhoCorasick, Vec<usize>)> {
        self.prefilter.get_or_init(|| self.build_automaton(|_| true, self.bulk)).as_ref()
    }

    /// The name keywords that may start inside keyword `k` and run past its end (`key` after
    /// the `s` of `sk` in `accessKey`): the non-overlapping pass would hide them, so each hit of
    /// `k` checks for them in place. Offsets within the keyword; computed on first hit.
    fn overlaps(&self, k: usize) -> &[(usize, usize)] {
        let Some(cell) = self.overlaps.get(k) else { return &[] };
        cell.get_or_init(|| {
            let name = self.rules.len() + 1;
            let Some(kw) = self.keywords.get(k) else { return Vec::new() };
            let mut out = Vec::new();
            for (n, nw) in self.keywords.iter().enumerate() {
                if self.keyword_rule.get(n) != Some(&name) {
                    continue;
                }
                for off in 1..kw.len() {
                    let tail = &kw.as_bytes()[off..];
                    if nw.len() > tail.len() && nw.as_bytes().starts_with(tail) {
                        out.push((off, n));
                    }
                }
            }
            out
        })
    }

    /// (start of a keyword hit, rule index) for every keyword occurrence. Short texts (tool
    /// arguments) are searched keyword by keyword on a lowercase copy, which needs no automaton.
    fn hits(&self, text: &str) -> Vec<(usize, usize)> {
        const SHORT: usize = 4096;
        // A hook process scans a few texts: until the automaton would pay for its building
        // (~1.3 ms for every keyword), longer texts go through the two-byte index instead.
        const AUTOMATON_PAYS_AFTER: usize = 256 * 1024;
        if !self.bulk
            && text.len() > SHORT
            && self.prefilter.get().is_none()
            && self.indexed.fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed) < AUTOMATON_PAYS_AFTER
        {
            return self.bigram_hits(text);
        }
        let mut out = Vec::new();
        if text.len() <= SHORT && !self.bulk {
            // One pass: at each byte that starts some keyword, compare those keywords in place.
            let lower = text.to_ascii_lowercase();
            let bytes = lower.as_bytes();
            let firsts = self.first_bytes();
            for (at, b) in bytes.iter().enumerate() {
                for &k in &firsts[*b as usize] {
                    if let Some(kw) = self.keywords.get(k)
                        && bytes[at..].starts_with(kw.as_bytes())
                        && let Some(&ri) = self.keyword_rule.get(k)
                    {
                        out.push((at, ri));
                    }
                }
            }
        } else {
            // Non-overlapping search is much faster than overlapping; a keyword hidden inside a
            // longer one (`secret` in `aws_secret`, `sk` in `sk_live_`) still triggers its rules
            // through `contained`.
            let bytes = text.as_bytes();
            if let Some((ac, ids)) = self.automaton() {
                for m in ac.find_iter(text) {
                    let Some(&k) = ids.get(m.pattern().as_usize()) else { continue };
                    if let Some(&ri) = self.keyword_rule.get(k) {
                        out.push((m.start(), ri));
                    }
                    for &ri in self.contained(k) {
                        out.push((m.start(), ri));
                    }
                    for &(off, n) in self.overlaps(k) {
                        let at = m.start() + off;
                        let word = self.keywords.get(n).map_or("", |w| w.as_ref());
                        if bytes.len() >= at + word.len()
                            && bytes[at..at + word.len()].eq_ignore_ascii_case(word.as_bytes())
                            && let Some(&ri) = self.keyword_rule.get(n)
                        {
                            out.push((at, ri));
                        }
                    }
                }
            }
            out.sort_unstable();
            out.dedup();
        }
        out
    }

    /// Every keyword occurrence (overlapping), found through a table of the keywords' first two
    /// bytes: one bit test per position of the text, a comparison only where a keyword could
    /// start. Costs nothing to build; slower per byte than the automaton.
    fn bigram_hits(&self, text: &str) -> Vec<(usize, usize)> {
        let index = self.bigrams.get_or_init(|| Bigrams::new(&self.keywords));
        let b = text.as_bytes();
        let mut out = Vec::new();
        if b.len() < 2 {
            return out;
        }
        let mut key = u16::from(LOWER[b[0] as usize]);
        for at in 0..b.len() - 1 {
            key = (key << 8) | u16::from(LOWER[b[at + 1] as usize]);
            if index.bits[usize::from(key >> 6)] & (1u64 << (key & 63)) == 0 {
                continue;
            }
            let from = index.starts.partition_point(|(k, _)| *k < key);
            for &(k, kw) in &index.starts[from..] {
                if k != key {
                    break;
                }
                let Some(word) = self.keywords.get(kw as usize) else { continue };
                if b.len() - at >= word.len()
                    && b[at..at + word.len()].eq_ignore_ascii_case(word.as_bytes())
                    && let Some(&ri) = self.keyword_rule.get(kw as usize)
                {
                    out.push((at, ri));
                }
            }
        }
        out
    }

    /// Compiles every rule's regex now (a long scan would, over time): for measuring the scan
    /// alone. Returns how many compiled.
    pub fn compile_all(&self) -> usize {
        (0..self.rules.len()).filter(|i| self.regex(*i).is_some()).count()
    }

    /// A rule's regex, compiled on first use — without Unicode: secrets are ASCII, and a
    /// Unicode class (`[^\\s"]`, `.`, `\\w`) compiles into thousands of states (compiling was
    /// most of a large scan's time, and of a hook's). A pattern that needs Unicode (a non-ASCII
    /// literal in a class) compiles with it, in its ASCII form.
    fn regex(&self, i: usize) -> Option<&regex::bytes::Regex> {
        self.regexes
            .get(i)?
            .get_or_init(|| {
                let r = self.rules.get(i)?;
                regex::bytes::RegexBuilder::new(&r.regex)
                    .unicode(false)
                    .build()
                    .or_else(|_| regex::bytes::Regex::new(&asciify(&r.regex)))
                    .ok()
            })
            .as_ref()
    }

    /// Every secret in `text`, in order, without overlaps (the more severe wins).
    pub fn scan(&self, text: &str) -> Vec<SecretFinding> {
        self.scan_in(text, None)
    }

    /// [`Scanner::scan`] for the contents of a file: rules and allowlists with a `path` apply.
    pub fn scan_in(&self, text: &str, path: Option<&str>) -> Vec<SecretFinding> {
        if let Some(p) = path
            && self.global_allow.iter().any(|a| a.allows_path(p))
        {
            return Vec::new();
        }
        let ctx = self.rules.len();
        let (windows, name_hits) = self.keyword_windows(text);
        let mut found: Vec<SecretFinding> = Vec::new();
        for (ri, list) in windows.iter().enumerate() {
            if !list.is_empty() {
                self.rule_findings(text, ri, list, path, &mut found);
            }
        }
        if !self.context.is_empty() && (!name_hits.is_empty() || windows.get(ctx).is_some_and(|l| !l.is_empty())) {
            let lines = windows.get(ctx).map(Vec::as_slice).unwrap_or_default();
            self.scan_context(text, lines, &name_hits, path, &mut found);
        }
        // Values the text itself marks as examples (`# example`, a comment line saying so just
        // above) are documentation, not secrets — in reports of files (`loopguard scan`). Not in
        // the hook: there the text is the agent's, and a comment would smuggle a real key past
        // the gate; redacting an example costs nothing.
        if self.bulk {
            found.retain(|f| !marked_as_example(text, &f.span));
        }
        self.resolve_overlaps(text, found)
    }

    /// Per rule, the windows around its keyword hits, merged (the contextual detector's line
    /// windows at index `rules.len()`), and the hits of credential names.
    fn keyword_windows(&self, text: &str) -> (Vec<Vec<Range<usize>>>, Vec<usize>) {
        let ctx = self.rules.len();
        let mut windows: Vec<Vec<Range<usize>>> = vec![Vec::new(); self.rules.len() + 1];
        let mut name_hits = Vec::new();
        for &ri in &self.always {
            windows[ri].push(0..text.len());
        }
        for (at, ri) in self.hits(text) {
            if ri == ctx + 1 {
                name_hits.push(at);
                continue;
            }
            let w = self.window(text, at, ri);
            let list = &mut windows[ri];
            match list.last_mut() {
                Some(last) if w.start <= last.end => last.end = last.end.max(w.end),
                _ => list.push(w),
            }
        }
        (windows, name_hits)
    }

    /// The findings of rule `ri` in its windows of `text`.
    fn rule_findings(
        &self,
        text: &str,
        ri: usize,
        list: &[Range<usize>],
        path: Option<&str>,
        found: &mut Vec<SecretFinding>,
    ) {
        let Some(re) = self.regex(ri) else { return };
        let rule = &self.rules[ri];
        if let (Some(re_path), Some(p)) = (&rule.path, path)
            && !re_path.is_match(p)
        {
            return;
        }
        for w in list {
            let slice = &text[w.clone()];
            // Most windows hold no match: a DFA says so far faster than a capture search.
            if !re.is_match(slice.as_bytes()) {
                continue;
            }
            for caps in re.captures_iter(slice.as_bytes()) {
                let Some(m) = caps.get(rule.group) else { continue };
                // Byte-level matching may start or end inside a multi-byte character: such
                // a match is no ASCII secret.
                let Some(secret) = slice.get(m.start()..m.end()) else { continue };
                let entropy = shannon(secret);
                if rule.min_entropy > 0.0 && entropy < rule.min_entropy {
                    continue;
                }
                let whole = caps.get(0).and_then(|m| slice.get(m.start()..m.end())).unwrap_or(secret);
                if is_placeholder(secret) || !passes_check(&rule.check, secret, whole) {
                    continue;
                }
                let span = w.start + m.start()..w.start + m.end();
                let line = line_of(text, span.clone());
                if rule.allow.iter().chain(&self.global_allow).any(|a| a.allows(secret, whole, line, path)) {
                    continue;
                }
                found.push(SecretFinding {
                    rule: rule.id.to_string(),
                    description: rule.description.to_string(),
                    severity: rule.severity,
                    line: text[..span.start].matches('\n').count() + 1,
                    span,
                    entropy,
                    fingerprint: fingerprint(secret),
                });
            }
        }
    }

    /// Overlaps: keep the most severe (then the longest). A rule that knows the format names the
    /// finding over a contextual kind that found the same value, and takes the more severe of
    /// the two.
    fn resolve_overlaps(&self, text: &str, mut found: Vec<SecretFinding>) -> Vec<SecretFinding> {
        let contextual = |f: &SecretFinding| {
            context::KINDS.iter().any(|k| k.id == f.rule) && !self.rules.iter().any(|r| r.id == f.rule)
        };
        // Among rules, one that names the kind by the value's own prefix (`npm_`) is the most
        // specific.
        let specific = |f: &SecretFinding| !self.kind_prefix(&text[f.span.clone()], &f.rule).is_empty();
        found.sort_by(|a, b| {
            a.span
                .start
                .cmp(&b.span.start)
                .then(b.severity.cmp(&a.severity))
                .then(contextual(a).cmp(&contextual(b)))
                .then(specific(b).cmp(&specific(a)))
                .then(b.span.len().cmp(&a.span.len()))
        });
        let mut out: Vec<SecretFinding> = Vec::with_capacity(found.len());
        for f in found {
            match out.last_mut() {
                Some(last) if f.span.start < last.span.end => {
                    let severity = last.severity.max(f.severity);
                    if contextual(last) && !contextual(&f) {
                        *last = SecretFinding { severity, ..f };
                    } else if f.severity > last.severity && (!contextual(&f) || contextual(last)) {
                        *last = f;
                    } else {
                        last.severity = severity;
                    }
                }
                _ => out.push(f),
            }
        }
        out
    }

    /// The public prefix that names a token's kind (`ghp_`, `AKIA`, `sk-ant-`), kept only for
    /// the rule that owns it and only when plenty of the secret follows it.
    fn kind_prefix(&self, secret: &str, rule: &str) -> String {
        self.rules
            .iter()
            .find(|r| r.id == rule)
            .and_then(|r| {
                r.prefix.split('|').find(|p| !p.is_empty() && secret.starts_with(p) && secret.len() >= p.len() + 8)
            })
            .map_or_else(String::new, str::to_string)
    }

    /// The text to run a rule's regex on around a keyword hit: the hit's line (multi-line rules:
    /// a wide window).
    fn window(&self, text: &str, at: usize, ri: usize) -> Range<usize> {
        let multiline = self.multiline.get(ri).copied().unwrap_or(false);
        // Bounded both ways: a megabyte on one line (minified code) costs a window, not a pass.
        let lo = floor_char(text, at.saturating_sub(WIDE_WINDOW));
        let hi = floor_char(text, (at + WIDE_WINDOW).min(text.len()));
        let start = text[lo..at].rfind('\n').map_or(lo, |i| lo + i + 1);
        let end = if multiline { hi } else { text[at..hi].find('\n').map_or(hi, |i| at + i) };
        start..end.max(start)
    }

    /// Contextual findings on the lines around the context keywords' hits.
    fn scan_context(
        &self,
        text: &str,
        lines: &[Range<usize>],
        name_hits: &[usize],
        path: Option<&str>,
        found: &mut Vec<SecretFinding>,
    ) {
        let mut raw = Vec::new();
        let k8s = lines.iter().any(|w| {
            let l = text[w.clone()].as_bytes();
            [&b"kind: secret"[..], b"\"kind\": \"secret\""]
                .iter()
                .any(|k| l.windows(k.len()).any(|x| x.eq_ignore_ascii_case(k)))
        });
        if k8s {
            // First, so that a Secret's data value is reported as such (overlaps keep the first).
            let end = floor_char(text, text.len().min(1 << 20));
            context::k8s_secret_data(text, 0..end, &|plain| !self.scan(plain).is_empty(), &mut raw);
        }
        for w in lines {
            context::find(text, w.clone(), &mut raw);
        }
        // Each name hit once: a hit inside a name or value already looked at is skipped.
        let mut done = 0;
        for &at in name_hits {
            if at < done {
                continue;
            }
            let line_end = text[at..].find('\n').map_or(text.len(), |k| at + k);
            let line_end = floor_char(text, line_end.min(at + WIDE_WINDOW));
            done = context::find_at(text, at, line_end, &mut raw);
        }
        for f in raw {
            if !self.context.contains(&f.kind.id) || f.span.is_empty() {
                continue;
            }
            let secret = &text[f.span.clone()];
            let line = line_of(text, f.span.clone());
            if self.global_allow.iter().any(|a| a.allows(secret, secret, line, path)) {
                continue;
            }
            found.push(SecretFinding {
                rule: f.kind.id.to_string(),
                description: f.kind.description.to_string(),
                severity: f.kind.severity,
                line: text[..f.span.start].matches('\n').count() + 1,
                entropy: shannon(secret),
                fingerprint: fingerprint(secret),
                span: f.span,
            });
        }
    }

    /// `text` with every secret replaced by `prefix…[REDACTED:rule]` (the prefix only where it
    /// names the kind, like `ghp_`). Idempotent.
    pub fn redact(&self, text: &str) -> String {
        // To a fixed point: a replacement can, in odd text, complete a pattern it did not form
        // before. Only lines holding a replacement can change, so those are what is checked; a
        // full pass repeats only if they hold something.
        let mut cur = self.redact_once(text);
        if cur.len() == text.len() && cur == text {
            return cur;
        }
        for _ in 0..4 {
            let touched: String = cur.lines().filter(|l| l.contains("…[REDACTED:")).collect::<Vec<_>>().join("\n");
            if self.scan(&touched).is_empty() {
                break;
            }
            let next = self.redact_once(&cur);
            if next == cur {
                break;
            }
            cur = next;
        }
        cur
    }

    fn redact_once(&self, text: &str) -> String {
        let found = self.scan(text);
        if found.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for f in &found {
            out.push_str(&text[last..f.span.start]);
            let secret = &text[f.span.clone()];
            out.push_str(&self.kind_prefix(secret, &f.rule));
            out.push_str("…[REDACTED:");
            out.push_str(&f.rule);
            out.push(']');
            last = f.span.end;
        }
        out.push_str(&text[last..]);
        // A value found once is a secret everywhere in this text, even where its surroundings
        // kept a rule from matching (a longer run, low entropy around it).
        let mut seen: Vec<(&str, &str)> =
            found.iter().map(|f| (&text[f.span.clone()], f.rule.as_str())).filter(|(v, _)| v.len() >= 8).collect();
        seen.sort_by_key(|v| std::cmp::Reverse(v.0.len()));
        seen.dedup_by(|a, b| a.0 == b.0);
        for (value, rule) in seen {
            if out.contains(value) {
                out = out.replace(value, &format!("{}…[REDACTED:{rule}]", self.kind_prefix(value, rule)));
            }
        }
        out
    }
}

/// Whether a comment on the value's line (after it) or a comment line right above says the
/// value is an example, a sample, a placeholder or not real.
fn marked_as_example(text: &str, span: &Range<usize>) -> bool {
    const WORDS: &[&str] = &[
        "example",
        "sample",
        "placeholder",
        "dummy",
        "fake",
        "not a real",
        "not real",
        "illustrat",
        "don't actually use",
        "do not use",
        "don't use",
        "bad password",
    ];
    let says = |c: &str| {
        let l = c.to_ascii_lowercase();
        WORDS.iter().any(|w| l.contains(w))
    };
    let line_end = text[span.end..].find('\n').map_or(text.len(), |i| span.end + i);
    let after = &text[span.end..line_end];
    // A comment starts after white space (`https://example.com` is no comment).
    let comment_after = [" #", "\t#", " //", "\t//", " /*", " <!--", " -- ", " ;"]
        .iter()
        .filter_map(|m| after.find(m).map(|i| &after[i..]))
        .any(says);
    if comment_after {
        return true;
    }
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    if line_start == 0 {
        return false;
    }
    // The nearest non-blank line above (within three): a comment saying so, or a lead-in like
    // `Example request:`.
    let mut end = line_start - 1;
    for _ in 0..3 {
        let prev_start = text[..end].rfind('\n').map_or(0, |i| i + 1);
        let prev = text[prev_start..end].trim_start_matches(['+', ' ', '\t']).trim_end();
        if !prev.is_empty() {
            let comment = ["#", "//", "/*", "<!--", "--", ";", "*"].iter().any(|m| prev.starts_with(m));
            return (comment || prev.ends_with(':')) && says(prev);
        }
        if prev_start == 0 {
            return false;
        }
        end = prev_start - 1;
    }
    false
}

/// The line holding `span`.
fn line_of(text: &str, span: Range<usize>) -> &str {
    let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[span.end..].find('\n').map_or(text.len(), |i| span.end + i);
    &text[start..end]
}

/// What an allowlist looks at with its regexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowTarget {
    /// The secret (capture group).
    Secret,
    /// The whole regex match.
    Match,
    /// The whole line.
    Line,
}

/// A gitleaks-style allowlist: regexes (on the secret, the match or the line), stopwords (in
/// the secret) and paths (regexes on the file path), combined with OR (any) or AND (all given).
#[derive(Debug, Clone)]
pub struct Allowlist {
    /// Regexes over `target`.
    pub regexes: Vec<Regex>,
    /// What the regexes look at.
    pub target: AllowTarget,
    /// Substrings of the secret that make it allowed (case-insensitive).
    pub stopwords: Vec<String>,
    /// Regexes over the file path.
    pub paths: Vec<Regex>,
    /// AND instead of OR.
    pub all: bool,
}

impl Allowlist {
    fn allows_path(&self, p: &str) -> bool {
        !self.paths.is_empty()
            && self.regexes.is_empty()
            && self.stopwords.is_empty()
            && self.paths.iter().any(|r| r.is_match(p))
    }

    fn allows(&self, secret: &str, whole: &str, line: &str, path: Option<&str>) -> bool {
        let target = match self.target {
            AllowTarget::Secret => secret,
            AllowTarget::Match => whole,
            AllowTarget::Line => line,
        };
        let lower = secret.to_ascii_lowercase();
        let mut checks: Vec<bool> = Vec::new();
        if !self.regexes.is_empty() {
            checks.push(self.regexes.iter().any(|r| r.is_match(target)));
        }
        if !self.stopwords.is_empty() {
            checks.push(self.stopwords.iter().any(|w| lower.contains(&w.to_ascii_lowercase())));
        }
        if !self.paths.is_empty() {
            checks.push(path.is_some_and(|p| self.paths.iter().any(|r| r.is_match(p))));
        }
        if checks.is_empty() {
            return false;
        }
        if self.all { checks.iter().all(|c| *c) } else { checks.iter().any(|c| *c) }
    }
}

/// A rule as the scanner uses it (built-in or loaded).
#[derive(Debug, Clone)]
pub struct RuleSpec {
    /// Stable id.
    pub id: Text,
    /// What it finds.
    pub description: Text,
    /// How bad.
    pub severity: Severity,
    /// Prefilter keywords (lowercase); none: the rule runs on every text.
    pub keywords: Vec<Text>,
    /// The pattern.
    pub regex: Text,
    /// The capture group holding the secret.
    pub group: usize,
    /// Minimum entropy; 0 disables.
    pub min_entropy: f32,
    /// Only files whose path matches.
    pub path: Option<Regex>,
    /// Rule-level allowlists.
    pub allow: Vec<Allowlist>,
    /// Public prefixes naming the kind, `|`-separated (kept in front of a redaction).
    pub prefix: Text,
    /// Structural check of the secret (`jwt`), or empty.
    pub check: Text,
}

/// Text of a rule: borrowed from the built-in table (a hook process builds its scanner on every
/// call: 330 rules' worth of copies cost ~0.25 ms), owned when loaded from a file.
pub type Text = std::borrow::Cow<'static, str>;

impl From<&Rule> for RuleSpec {
    fn from(r: &Rule) -> Self {
        RuleSpec {
            id: Text::Borrowed(r.id),
            description: Text::Borrowed(r.description),
            severity: r.severity,
            keywords: r.keywords.iter().map(|k| Text::Borrowed(*k)).collect(),
            regex: Text::Borrowed(r.regex),
            group: r.group,
            min_entropy: r.min_entropy,
            path: None,
            allow: Vec::new(),
            prefix: Text::Borrowed(r.prefix),
            check: Text::Borrowed(r.check),
        }
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn fingerprint(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// A rule's regex with its word, digit and boundary classes made ASCII: `\\w` → `[0-9A-Za-z_]`,
/// `\\d` → `[0-9]`, `\\b` → `(?-u:\\b)`. Secrets are ASCII, and the Unicode forms cost: a Unicode
/// `\\w` compiles into thousands of states (most of a short hook's scan went to compiling), and
/// a Unicode `\\b` stops the fast DFA on any non-ASCII text.
pub fn asciify(re: &str) -> String {
    let mut out = String::with_capacity(re.len() + 16);
    let mut class = 0usize;
    let mut chars = re.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push(c);
                    break;
                };
                match (n, class > 0) {
                    ('w', true) => out.push_str("0-9A-Za-z_"),
                    ('w', false) => out.push_str("[0-9A-Za-z_]"),
                    ('W', false) => out.push_str("[^0-9A-Za-z_]"),
                    ('d', true) => out.push_str("0-9"),
                    ('d', false) => out.push_str("[0-9]"),
                    ('D', false) => out.push_str("[^0-9]"),
                    ('b', false) => out.push_str("(?-u:\\b)"),
                    ('B', false) => out.push_str("(?-u:\\B)"),
                    _ => {
                        out.push(c);
                        out.push(n);
                    }
                }
            }
            '[' => {
                // `[[:alpha:]]` and nested classes: count depth; `[]` and `[^]` open with a literal `]`.
                class += 1;
                out.push(c);
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if class > 0 => {
                class -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// A rule's structural check (`check` in its file) on a candidate secret and its whole match.
fn passes_check(check: &str, secret: &str, whole: &str) -> bool {
    match check {
        // A password in a URL of a documentation host is a real one only if it looks random.
        "url" => {
            let host =
                whole.rsplit('@').next().unwrap_or("").split([':', '/']).next().unwrap_or("").to_ascii_lowercase();
            let doc_host = ["example.com", "example.org", "example.net", "localhost"]
                .iter()
                .any(|h| host == *h || host.ends_with(&format!(".{h}")))
                || host.ends_with(".example")
                || host.ends_with(".test")
                || host.ends_with(".invalid");
            // Sentry DSNs carry a public key, meant to ship in client code.
            if host.ends_with("sentry.io") || host.contains(".sentry.") {
                return false;
            }
            let escapes = secret.matches('%').count();
            let template = secret.contains(['{', '}', '`']);
            let short_word = secret.len() < 8 && secret.chars().all(|c| c.is_ascii_alphabetic());
            (!doc_host || context::looks_random(secret)) && escapes < 2 && !template && !short_word
        }
        // Header and payload are base64url JSON objects; the header names an algorithm.
        "jwt" => {
            let mut parts = secret.split('.');
            let json = |p: Option<&str>| {
                p.and_then(crate::values::decode_base64)
                    .and_then(|d| serde_json::from_slice::<serde_json::Value>(&d).ok())
                    .filter(serde_json::Value::is_object)
            };
            json(parts.next()).is_some_and(|h| h.get("alg").is_some() || h.get("typ").is_some())
                && json(parts.next()).is_some_and(|p| p.get("role").and_then(|r| r.as_str()) != Some("anon"))
        }
        _ => true,
    }
}

/// Redacts every string in a JSON value (and every value under a secret-looking key), keeping
/// the structure exactly: the host needs its own response shape back.
pub fn redact_json(v: &serde_json::Value, scanner: &Scanner) -> (serde_json::Value, usize) {
    fn secret_key(k: &str) -> bool {
        // The detector's own name knowledge (`DB_PASSWORD`, `apiKey`, `client_secret`, not
        // `max_tokens` or `token_url`), and the header that carries credentials.
        let l = k.to_ascii_lowercase();
        crate::context::classify_name(k).is_some_and(|c| c != crate::context::NameClass::WeakKey)
            || l == "authorization"
            || l == "proxy-authorization"
    }
    fn walk(v: &serde_json::Value, s: &Scanner, n: &mut usize, under_secret_key: bool) -> serde_json::Value {
        match v {
            serde_json::Value::String(t) => {
                if under_secret_key && !t.is_empty() && !is_placeholder(t) && t.len() >= 6 {
                    *n += 1;
                    return serde_json::Value::String("…[REDACTED:secret-key-value]".into());
                }
                let r = s.redact(t);
                if r != *t {
                    *n += 1;
                }
                serde_json::Value::String(r)
            }
            serde_json::Value::Array(a) => {
                serde_json::Value::Array(a.iter().map(|x| walk(x, s, n, under_secret_key)).collect())
            }
            serde_json::Value::Object(o) => {
                serde_json::Value::Object(o.iter().map(|(k, x)| (k.clone(), walk(x, s, n, secret_key(k)))).collect())
            }
            other => other.clone(),
        }
    }
    let mut n = 0;
    let out = walk(v, scanner, &mut n, false);
    (out, n)
}

/// Replaces the home directory in `text` with `~` wherever it stands as a whole path prefix
/// (`/home/alice/x` → `~/x`; `/home/alicex` is left alone).
pub fn redact_path(text: &str, home: Option<&std::path::Path>) -> String {
    let Some(h) = home.and_then(|h| h.to_str()).map(|h| h.trim_end_matches('/')).filter(|h| h.len() > 1) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(h) {
        let after = &rest[i + h.len()..];
        let boundary = after.chars().next().is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')));
        out.push_str(&rest[..i]);
        out.push_str(if boundary { "~" } else { h });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The one way loopguard turns text into something it prints or writes: secrets redacted, the
/// home directory shortened to `~`.
pub fn safe_text(text: &str, home: Option<&std::path::Path>) -> String {
    redact_path(&Scanner::builtin().redact(text), home)
}
