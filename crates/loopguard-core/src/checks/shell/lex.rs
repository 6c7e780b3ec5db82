//! A bounded shell lexer: splits a command line into simple-command segments (words and
//! redirections) across `;` `&&` `||` `|` `&` newlines, subshells and groups, and lifts the
//! commands inside `$( )`, backticks and process substitutions out as segments of their own.
//!
//! This is the spine's interim lexer; the full grammar-based analysis replaces it (issue 3). It
//! is written by hand because it must track exactly which text is data and which is code, and it
//! fails closed: anything it cannot close (quotes, substitutions) is an error, never a guess.

use std::fmt;

/// Longest command line analysed; longer input is denied, never skipped.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Deepest nesting of substitutions and `sh -c` strings analysed.
pub const MAX_DEPTH: usize = 16;

/// Why a command line could not be split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellError {
    /// Longer than [`MAX_COMMAND_BYTES`].
    TooLarge(usize),
    /// A quote, substitution or group that is never closed.
    Unclosed(&'static str),
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShellError::TooLarge(n) => {
                write!(f, "command is {n} bytes, over the {MAX_COMMAND_BYTES}-byte analysis limit")
            }
            ShellError::Unclosed(what) => write!(f, "unclosed {what}"),
            ShellError::TooDeep => write!(f, "nested deeper than {MAX_DEPTH} levels"),
        }
    }
}

impl std::error::Error for ShellError {}

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    /// The text, with quotes removed and `~`/`$HOME` expanded when the home is known.
    pub text: String,
    /// Part of the word is only known at run time (a variable, substitution, glob of `$…`).
    pub dynamic: bool,
    /// Part of the word was quoted (so globs and keywords in it are literal).
    pub quoted: bool,
    /// The segments (indices into the split's output) lifted out of substitutions inside this
    /// word: what runs to produce its value.
    pub subst: Option<(usize, usize)>,
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `>`, `>|`, `&>`, `n>`: creates or truncates the target.
    Write,
    /// `>>`, `&>>`: appends to the target.
    Append,
    /// `<`: reads the target.
    Read,
    /// `<>`: opens the target for reading and writing.
    ReadWrite,
    /// `n>&m`, `<&m`: duplicates a descriptor (target is a descriptor, `-` or a file for `>&file`).
    Dup,
    /// `<<`, `<<-`: the target text is the heredoc body.
    HereDoc,
    /// `<<<`: the target is a string fed to stdin.
    HereString,
}

/// One redirection of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// What it does.
    pub kind: RedirectKind,
    /// The file, descriptor or text.
    pub target: Word,
    /// For heredocs: whether the delimiter was quoted (body is then literal data).
    pub literal_body: bool,
}

/// One simple command: its words and redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Segment {
    /// Words in order, keywords and group braces removed from the front.
    pub words: Vec<Word>,
    /// Redirections in order.
    pub redirects: Vec<Redirect>,
    /// 0 for the top level, +1 inside each substitution.
    pub depth: usize,
    /// The segment whose output is piped into this one's input (`a | b`: b's is a).
    pub pipe_from: Option<usize>,
}

/// Splits `cmd` into segments. `home` expands `~` and `$HOME`.
pub fn split_with_home(cmd: &str, home: Option<&str>) -> Result<Vec<Segment>, ShellError> {
    if cmd.len() > MAX_COMMAND_BYTES {
        return Err(ShellError::TooLarge(cmd.len()));
    }
    let mut out = Vec::new();
    lex(cmd, home, 0, &mut out)?;
    Ok(out)
}

/// Words that start a construct whose own words are data.
const DATA_KEYWORDS: &[&str] = &["for", "select", "case", "[["];

const KEYWORDS: &[&str] = &["{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"];

struct Lexer<'a> {
    chars: Vec<char>,
    pos: usize,
    home: Option<&'a str>,
    depth: usize,
    out: &'a mut Vec<Segment>,
    seg: Segment,
    /// Heredocs waiting for their bodies at the next newline: (index of redirect in seg or in
    /// finished segment, delimiter, strip tabs).
    pending: Vec<(usize, usize, String, bool)>,
    /// The segment a `|` just ended: it feeds the next one.
    pipe_src: Option<usize>,
    /// Open `case` statements, and whether a pattern list is expected next.
    cases: usize,
    expect_pattern: bool,
    /// Where the last word ended (to see `name=(…)` array literals).
    last_word_end: usize,
}

fn lex(src: &str, home: Option<&str>, depth: usize, out: &mut Vec<Segment>) -> Result<(), ShellError> {
    if depth > MAX_DEPTH {
        return Err(ShellError::TooDeep);
    }
    Lexer::new(src, home, depth, out).run()
}

fn is_meta(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>' | '\n' | ' ' | '\t')
}

impl<'a> Lexer<'a> {
    fn new(src: &str, home: Option<&'a str>, depth: usize, out: &'a mut Vec<Segment>) -> Self {
        Lexer {
            chars: src.chars().collect(),
            pos: 0,
            home,
            depth,
            out,
            seg: Segment { depth, ..Segment::default() },
            pending: Vec::new(),
            pipe_src: None,
            cases: 0,
            expect_pattern: false,
            last_word_end: usize::MAX,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    /// Ends the current segment. `pipe`: it was ended by `|`, so it feeds the next one.
    fn finish_segment(&mut self, pipe: bool) {
        let mut seg = std::mem::take(&mut self.seg);
        seg.depth = self.depth;
        // Reserved words and group braces at the front are syntax, not the program.
        while seg.words.first().is_some_and(|w| !w.quoted && KEYWORDS.contains(&w.text.as_str())) {
            seg.words.remove(0);
        }
        while seg.words.last().is_some_and(|w| !w.quoted && w.text == "}") {
            seg.words.pop();
        }
        // `function f {` / `function f() {`: the name is data, the body is code.
        if seg.words.first().is_some_and(|w| !w.quoted && w.text == "function") {
            let keep = seg.words.iter().position(|w| !w.quoted && w.text == "{").map_or(seg.words.len(), |i| i + 1);
            seg.words.drain(..keep);
        }
        // `for x in …`, `select …`, `case … in`, `[[ … ]]`: the words are data (any substitution
        // in them was already lifted out as a segment of its own).
        if seg.words.first().is_some_and(|w| !w.quoted && DATA_KEYWORDS.contains(&w.text.as_str())) {
            if seg.words.first().is_some_and(|w| w.text == "case") {
                self.cases += 1;
                self.expect_pattern = true;
            }
            seg.words.clear();
        }
        if !seg.words.is_empty() || !seg.redirects.is_empty() {
            let idx = self.out.len();
            for p in self.pending.iter_mut().filter(|p| p.0 == usize::MAX) {
                p.0 = idx;
            }
            seg.pipe_from = self.pipe_src.take();
            self.out.push(seg);
            if pipe {
                self.pipe_src = Some(idx);
            }
        } else {
            self.pending.retain(|p| p.0 != usize::MAX);
            if !pipe {
                self.pipe_src = None;
            }
        }
        self.seg = Segment { depth: self.depth, ..Segment::default() };
    }

    /// Inside `case`: skips a pattern list `pat | pat )` (patterns are data).
    fn case_patterns(&mut self) -> Result<(), ShellError> {
        self.expect_pattern = false;
        loop {
            match self.peek() {
                None => return Ok(()),
                Some(' ' | '\t' | '\r' | '\n' | '(' | '|') => self.pos += 1,
                Some(')') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(_) => {
                    let w = self.word()?;
                    if w.text.is_empty() && !w.quoted {
                        // A metacharacter we do not expect in a pattern: let the main loop see it.
                        return Ok(());
                    }
                    if !w.quoted && w.text == "esac" {
                        self.cases = self.cases.saturating_sub(1);
                        return Ok(());
                    }
                }
            }
        }
    }

    fn run(&mut self) -> Result<(), ShellError> {
        while let Some(c) = self.peek() {
            if self.expect_pattern && !matches!(c, ' ' | '\t' | '\r' | '\n') {
                self.case_patterns()?;
                continue;
            }
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '\n' => {
                    self.pos += 1;
                    self.finish_segment(false);
                    self.read_heredoc_bodies()?;
                }
                ';' => {
                    self.pos += 1;
                    // `;;`, `;&`, `;;&` end a case branch: a pattern list follows.
                    let branch_end = matches!(self.peek(), Some(';' | '&'));
                    while matches!(self.peek(), Some(';' | '&')) {
                        self.pos += 1;
                    }
                    self.finish_segment(false);
                    if branch_end && self.cases > 0 {
                        self.expect_pattern = true;
                    }
                }
                '|' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('|') => {
                            self.pos += 1;
                            self.finish_segment(false);
                        }
                        Some('&') => {
                            self.pos += 1;
                            self.finish_segment(true);
                        }
                        _ => self.finish_segment(true),
                    }
                }
                '(' if self.seg.words.is_empty() && self.peek_at(1) == Some('(') => {
                    // `(( … ))`: an arithmetic command; only substitutions inside it run.
                    self.pos += 2;
                    let inner = self.balanced(')', "arithmetic command")?;
                    if self.peek() == Some(')') {
                        self.pos += 1;
                    }
                    lex_substitutions_in(&inner, self.home, self.depth + 1, self.out)?;
                }
                '(' if self.pos == self.last_word_end
                    && self.seg.words.last().is_some_and(|w| !w.quoted && w.text.ends_with('=')) =>
                {
                    // `name=( … )`: an array literal is data; only substitutions inside it run.
                    self.pos += 1;
                    let inner = self.balanced(')', "array assignment")?;
                    lex_substitutions_in(&inner, self.home, self.depth + 1, self.out)?;
                    if let Some(w) = self.seg.words.last_mut() {
                        w.text.push('(');
                        w.text.push_str(&inner);
                        w.text.push(')');
                    }
                }
                '(' | ')' => {
                    self.pos += 1;
                    self.finish_segment(false);
                }
                '&' => {
                    if self.peek_at(1) == Some('>') {
                        self.redirect(None)?;
                    } else {
                        self.pos += 1;
                        if self.peek() == Some('&') {
                            self.pos += 1;
                        }
                        self.finish_segment(false);
                    }
                }
                '<' | '>' => {
                    if self.peek_at(1) == Some('(') {
                        let w = self.word()?;
                        self.push_word(w);
                    } else {
                        self.redirect(None)?;
                    }
                }
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                d if d.is_ascii_digit() && self.fd_redirect_ahead() => {
                    let mut fd = String::new();
                    while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                        fd.push(c);
                        self.pos += 1;
                    }
                    self.redirect(Some(fd))?;
                }
                _ => {
                    let w = self.word()?;
                    if self.cases > 0 && self.seg.words.is_empty() && !w.quoted && w.text == "esac" {
                        self.cases -= 1;
                        continue;
                    }
                    self.push_word(w);
                }
            }
        }
        self.finish_segment(false);
        if !self.pending.is_empty() {
            // bash accepts a heredoc cut off by end of input; its body is then empty.
            self.pending.clear();
        }
        Ok(())
    }

    fn push_word(&mut self, w: Word) {
        self.last_word_end = self.pos;
        self.seg.words.push(w);
        // `case WORD in`: the header is complete; pattern lists follow.
        let ws = &self.seg.words;
        if ws.len() == 3 && !ws[0].quoted && ws[0].text == "case" && !ws[2].quoted && ws[2].text == "in" {
            self.finish_segment(false);
        }
    }

    fn fd_redirect_ahead(&self) -> bool {
        let mut i = self.pos;
        while self.chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        matches!(self.chars.get(i), Some('<' | '>'))
    }

    fn redirect(&mut self, _fd: Option<String>) -> Result<(), ShellError> {
        let rest: String = self.chars[self.pos..self.chars.len().min(self.pos + 3)].iter().collect();
        let (kind, len) = if rest.starts_with("&>>") {
            (RedirectKind::Append, 3)
        } else if rest.starts_with("&>") {
            (RedirectKind::Write, 2)
        } else if rest.starts_with("<<<") {
            (RedirectKind::HereString, 3)
        } else if rest.starts_with("<<") {
            (RedirectKind::HereDoc, if rest.starts_with("<<-") { 3 } else { 2 })
        } else if rest.starts_with("<>") {
            (RedirectKind::ReadWrite, 2)
        } else if rest.starts_with(">>") {
            (RedirectKind::Append, 2)
        } else if rest.starts_with(">|") {
            (RedirectKind::Write, 2)
        } else if rest.starts_with(">&") || rest.starts_with("<&") {
            (RedirectKind::Dup, 2)
        } else if rest.starts_with('>') {
            (RedirectKind::Write, 1)
        } else {
            (RedirectKind::Read, 1)
        };
        let strip_tabs = rest.starts_with("<<-");
        self.pos += len;
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        if self.peek().is_none_or(|c| is_meta(c) && c != '<' && c != '>') {
            return Err(ShellError::Unclosed("redirection (no target)"));
        }
        let target = self.word()?;
        let literal_body = kind == RedirectKind::HereDoc && target.quoted;
        if kind == RedirectKind::HereDoc {
            self.pending.push((usize::MAX, self.seg.redirects.len(), target.text.clone(), strip_tabs));
        }
        self.seg.redirects.push(Redirect { kind, target, literal_body });
        Ok(())
    }

    fn read_heredoc_bodies(&mut self) -> Result<(), ShellError> {
        let pending = std::mem::take(&mut self.pending);
        for (seg_idx, redir_idx, delim, strip_tabs) in pending {
            let mut body = String::new();
            loop {
                if self.pos >= self.chars.len() {
                    break;
                }
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                let cmp = if strip_tabs { line.trim_start_matches('\t') } else { line.as_str() };
                if cmp == delim {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            let literal =
                self.out.get(seg_idx).and_then(|s| s.redirects.get(redir_idx)).is_some_and(|r| r.literal_body);
            if !literal {
                // An unquoted body expands substitutions: they run.
                lex_substitutions_in(&body, self.home, self.depth + 1, self.out)?;
            }
            if let Some(r) = self.out.get_mut(seg_idx).and_then(|s| s.redirects.get_mut(redir_idx)) {
                r.target = Word { text: body, dynamic: !literal, quoted: literal, subst: None };
            }
        }
        Ok(())
    }

    /// Reads one word, removing quotes and lifting substitutions out as segments.
    fn word(&mut self) -> Result<Word, ShellError> {
        let first_lifted = self.out.len();
        let w = self.word_inner()?;
        let last_lifted = self.out.len();
        Ok(if last_lifted > first_lifted { Word { subst: Some((first_lifted, last_lifted)), ..w } } else { w })
    }

    fn word_inner(&mut self) -> Result<Word, ShellError> {
        let mut w = Word::default();
        let at_start = self.pos;
        while let Some(c) = self.peek() {
            match c {
                '\'' => {
                    self.pos += 1;
                    w.quoted = true;
                    loop {
                        match self.peek() {
                            None => return Err(ShellError::Unclosed("single quote")),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(c) => {
                                w.text.push(c);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    w.quoted = true;
                    self.double_quoted(&mut w)?;
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(c) => {
                            w.text.push(c);
                            w.quoted = true;
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '$' => self.dollar(&mut w)?,
                '`' => self.backtick(&mut w)?,
                '<' | '>' if self.peek_at(1) == Some('(') && self.pos == at_start => {
                    // Process substitution: the command runs, the word is a /dev/fd path.
                    self.pos += 2;
                    let inner = self.balanced(')', "process substitution")?;
                    lex(&inner, self.home, self.depth + 1, self.out)?;
                    w.text.push_str("/dev/fd/?");
                    w.dynamic = true;
                }
                '~' if self.pos == at_start && self.peek_at(1).is_none_or(|c| c == '/' || is_meta(c)) => {
                    self.pos += 1;
                    match self.home {
                        Some(h) => w.text.push_str(h),
                        None => {
                            w.text.push('~');
                            w.dynamic = true;
                        }
                    }
                }
                c if is_meta(c) => break,
                c => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(w)
    }

    fn double_quoted(&mut self, w: &mut Word) -> Result<(), ShellError> {
        loop {
            match self.peek() {
                None => return Err(ShellError::Unclosed("double quote")),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(c @ ('$' | '`' | '"' | '\\')) => {
                            w.text.push(c);
                            self.pos += 1;
                        }
                        Some(_) => w.text.push('\\'),
                        None => return Err(ShellError::Unclosed("double quote")),
                    }
                }
                Some('$') => self.dollar(w)?,
                Some('`') => self.backtick(w)?,
                Some(c) => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn dollar(&mut self, w: &mut Word) -> Result<(), ShellError> {
        self.pos += 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.pos += 2;
                let inner = self.balanced(')', "arithmetic expansion")?;
                // `$(( … ))`: the inner text ends with the second `)`.
                if self.peek() == Some(')') {
                    self.pos += 1;
                }
                lex_substitutions_in(&inner, self.home, self.depth + 1, self.out)?;
                w.text.push_str("$((…))");
                w.dynamic = true;
            }
            Some('(') => {
                self.pos += 1;
                let inner = self.balanced(')', "command substitution")?;
                lex(&inner, self.home, self.depth + 1, self.out)?;
                w.text.push_str("$(…)");
                w.dynamic = true;
            }
            Some('{') => {
                self.pos += 1;
                let inner = self.balanced('}', "parameter expansion")?;
                if inner == "HOME" && self.home.is_some() {
                    w.text.push_str(self.home.unwrap_or_default());
                } else {
                    lex_substitutions_in(&inner, self.home, self.depth + 1, self.out)?;
                    w.text.push_str("${");
                    w.text.push_str(&inner);
                    w.text.push('}');
                    w.dynamic = true;
                }
            }
            Some('\'') => {
                self.pos += 1;
                w.quoted = true;
                self.ansi_c(w)?;
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let name: String = self.chars[start..self.pos].iter().collect();
                match self.home {
                    Some(h) if name == "HOME" => w.text.push_str(h),
                    _ => {
                        w.text.push('$');
                        w.text.push_str(&name);
                        w.dynamic = true;
                    }
                }
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 1;
                w.text.push('$');
                w.text.push(c);
                w.dynamic = true;
            }
            _ => w.text.push('$'),
        }
        Ok(())
    }

    /// `$'…'`: ANSI-C quoting. Decodes the escapes bash knows; the result is literal text.
    fn ansi_c(&mut self, w: &mut Word) -> Result<(), ShellError> {
        loop {
            let Some(c) = self.peek() else {
                return Err(ShellError::Unclosed("$'…' string"));
            };
            self.pos += 1;
            match c {
                '\'' => return Ok(()),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return Err(ShellError::Unclosed("$'…' string"));
                    };
                    self.pos += 1;
                    match e {
                        'n' => w.text.push('\n'),
                        't' => w.text.push('\t'),
                        'r' => w.text.push('\r'),
                        'a' => w.text.push('\x07'),
                        'b' => w.text.push('\x08'),
                        'e' | 'E' => w.text.push('\x1b'),
                        'f' => w.text.push('\x0c'),
                        'v' => w.text.push('\x0b'),
                        'x' => self.push_code(w, 16, 2),
                        'u' => self.push_code(w, 16, 4),
                        'U' => self.push_code(w, 16, 8),
                        '0'..='7' => {
                            self.pos -= 1;
                            self.push_code(w, 8, 3);
                        }
                        other => w.text.push(other),
                    }
                }
                c => w.text.push(c),
            }
        }
    }

    fn push_code(&mut self, w: &mut Word, radix: u32, max: usize) {
        let mut value: u32 = 0;
        let mut n = 0;
        while n < max {
            match self.peek().and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    value = value.saturating_mul(radix).saturating_add(d);
                    self.pos += 1;
                    n += 1;
                }
                None => break,
            }
        }
        match char::from_u32(value) {
            Some(c) if n > 0 => w.text.push(c),
            _ => w.dynamic = true,
        }
    }

    fn backtick(&mut self, w: &mut Word) -> Result<(), ShellError> {
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err(ShellError::Unclosed("backtick substitution")),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    inner.push(self.chars[self.pos + 1]);
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        lex(&inner, self.home, self.depth + 1, self.out)?;
        w.text.push_str("`…`");
        w.dynamic = true;
        Ok(())
    }

    /// Reads up to the matching `close`, honouring quotes and nesting; returns the inner text.
    fn balanced(&mut self, close: char, what: &'static str) -> Result<String, ShellError> {
        let open = if close == ')' { '(' } else { '{' };
        let start = self.pos;
        let mut level = 0usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match (quote, c) {
                (Some('\''), '\'') => quote = None,
                (Some('\''), _) => {}
                (_, '\\') => self.pos += 1,
                (Some('"'), '"') => quote = None,
                (None, '\'' | '"') => quote = Some(c),
                (None, '#') if self.pos < 2 || self.chars.get(self.pos - 2).is_some_and(|p| p.is_whitespace()) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                (_, c) if c == open => level += 1,
                (_, c) if c == close && (quote.is_none() || close == '}') => {
                    if level == 0 {
                        return Ok(self.chars[start..self.pos - 1].iter().collect());
                    }
                    level -= 1;
                }
                _ => {}
            }
            if level > MAX_COMMAND_BYTES {
                return Err(ShellError::TooDeep);
            }
        }
        Err(ShellError::Unclosed(what))
    }
}

/// Lifts the substitutions out of text that is otherwise data (an unquoted heredoc body, an
/// arithmetic expression, a parameter expansion): only `$( )` and backticks in it run.
fn lex_substitutions_in(
    text: &str,
    home: Option<&str>,
    depth: usize,
    out: &mut Vec<Segment>,
) -> Result<(), ShellError> {
    if depth > MAX_DEPTH {
        return Err(ShellError::TooDeep);
    }
    if !text.contains("$(") && !text.contains('`') {
        return Ok(());
    }
    let mut lx = Lexer::new(text, home, depth.saturating_sub(1), out);
    let mut scratch = Word::default();
    while let Some(c) = lx.peek() {
        match c {
            '\\' => lx.pos += 2,
            '$' if lx.peek_at(1) == Some('(') => lx.dollar(&mut scratch)?,
            '`' => lx.backtick(&mut scratch)?,
            _ => lx.pos += 1,
        }
    }
    Ok(())
}
