use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// One problem in a policy file, located at file:line:col.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file (or `<built-in>`).
    pub file: PathBuf,
    /// Byte span in the file.
    pub span: Range<usize>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// Stable code: `policy-syntax`, `policy-unknown-key`, `policy-type`, `policy-value`,
    /// `policy-loosens`, `policy-example`, `policy-io`.
    pub code: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Diagnostic {
    pub(crate) fn at(
        file: &Path,
        src: &str,
        span: Range<usize>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        let (line, col) = line_col(src, span.start);
        Diagnostic { file: file.to_path_buf(), span, line, col, code, message: message.into() }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: error[{}]: {}", self.file.display(), self.line, self.col, self.code, self.message)
    }
}

/// 1-based line and column (in chars) of a byte offset; offsets past the end clamp to the end.
pub(crate) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// Every problem found while loading the policy layers. Loading reports all of them at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// The problems, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PolicyError {}

/// Renders diagnostics with source snippets (for `loopguard policy check`).
pub fn render(err: &PolicyError, sources: &[(PathBuf, String)]) -> String {
    use codespan_reporting::diagnostic::{Diagnostic as CsDiag, Label};
    use codespan_reporting::files::SimpleFiles;
    use codespan_reporting::term::{self, Config};

    let mut files = SimpleFiles::new();
    let ids: Vec<(PathBuf, usize)> =
        sources.iter().map(|(p, s)| (p.clone(), files.add(p.display().to_string(), s.clone()))).collect();
    let mut out = String::new();
    let config = Config::default();
    for d in &err.diagnostics {
        let Some((_, id)) = ids.iter().find(|(p, _)| *p == d.file) else {
            out.push_str(&d.to_string());
            out.push('\n');
            continue;
        };
        let diag = CsDiag::error()
            .with_code(d.code)
            .with_message(&d.message)
            .with_labels(vec![Label::primary(*id, d.span.clone())]);
        let mut buf = String::new();
        match term::emit_to_string(&mut buf, &config, &files, &diag) {
            Ok(()) => out.push_str(&buf),
            Err(_) => {
                out.push_str(&d.to_string());
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lines_and_chars() {
        let s = "a = 1\nbé = 2\n";
        assert_eq!(line_col(s, 0), (1, 1));
        assert_eq!(line_col(s, 6), (2, 1));
        assert_eq!(line_col(s, 9), (2, 3)); // after 'b' and 'é' (2 bytes)
        assert_eq!(line_col(s, 999), (3, 1));
    }
}
