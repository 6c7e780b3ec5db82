//! Fixture tables: tab-separated rows, `#` comments and blank lines skipped. A field may use
//! `\n` for a newline and `\\` for a backslash; the last field keeps its tabs (it is usually a
//! command or a text).

use std::path::{Path, PathBuf};

/// One row of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The file it came from.
    pub file: PathBuf,
    /// Its line (1-based).
    pub line: usize,
    /// Its fields, unescaped.
    pub fields: Vec<String>,
}

impl Row {
    /// `file:line`, for failure messages.
    pub fn at(&self) -> String {
        let name =
            self.file.file_name().map_or_else(|| self.file.display().to_string(), |n| n.to_string_lossy().into());
        format!("{name}:{}", self.line)
    }

    /// Field `i`, or `""` when the row is shorter.
    pub fn get(&self, i: usize) -> &str {
        self.fields.get(i).map_or("", String::as_str)
    }
}

/// A table that could not be read, or a row with too few fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError(pub String);

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `\n` → newline, `\\` → backslash; anything else is kept as written.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match (c, it.peek()) {
            ('\\', Some('n')) => {
                it.next();
                out.push('\n');
            }
            ('\\', Some('\\')) => {
                it.next();
                out.push('\\');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Parses a table's text: each row split into at most `fields` fields (the last keeps its tabs),
/// each field unescaped; a row with fewer is an error naming its line.
pub fn parse(file: &Path, text: &str, fields: usize) -> Result<Vec<Row>, TableError> {
    parse_with(file, text, fields, unescape)
}

/// [`parse`] with the fields kept exactly as written (a table whose samples carry escapes of
/// their own, such as JSON strings).
pub fn parse_raw(file: &Path, text: &str, fields: usize) -> Result<Vec<Row>, TableError> {
    parse_with(file, text, fields, str::to_string)
}

fn parse_with(file: &Path, text: &str, fields: usize, field: fn(&str) -> String) -> Result<Vec<Row>, TableError> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<String> = line.splitn(fields, '\t').map(field).collect();
        if cols.len() < fields {
            return Err(TableError(format!(
                "{}:{}: malformed row: {} field(s), {fields} expected",
                file.display(),
                n + 1,
                cols.len()
            )));
        }
        rows.push(Row { file: file.to_path_buf(), line: n + 1, fields: cols });
    }
    Ok(rows)
}

/// Reads a table file (see [`parse`]).
pub fn read(file: &Path, fields: usize) -> Result<Vec<Row>, TableError> {
    let text = std::fs::read_to_string(file).map_err(|e| TableError(format!("{}: {e}", file.display())))?;
    parse(file, &text, fields)
}

/// Reads a table file keeping its fields as written (see [`parse_raw`]).
pub fn read_raw(file: &Path, fields: usize) -> Result<Vec<Row>, TableError> {
    let text = std::fs::read_to_string(file).map_err(|e| TableError(format!("{}: {e}", file.display())))?;
    parse_raw(file, &text, fields)
}

/// Every `*.tsv` file of a directory, sorted by name.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, TableError> {
    let entries = std::fs::read_dir(dir).map_err(|e| TableError(format!("{}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_skip_comments_keep_tabs_in_the_last_field_and_unescape() {
        let text = "# a comment\n\ndeny\tcode\techo a\tb \\n c\nallow\t-\tls\n";
        let rows = parse(Path::new("/x/t.tsv"), text, 3).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].fields, ["deny", "code", "echo a\tb \n c"]);
        assert_eq!((rows[0].line, rows[1].line), (3, 4));
        assert_eq!(rows[1].at(), "t.tsv:4");
        assert_eq!(rows[1].get(7), "");
    }

    #[test]
    fn a_short_row_is_an_error_with_its_line() {
        let e = parse(Path::new("t.tsv"), "a\tb\n", 3).unwrap_err();
        assert!(e.0.contains("t.tsv:1"), "{e}");
    }

    #[test]
    fn unescape_keeps_what_it_does_not_know() {
        assert_eq!(unescape(r"a\\b\nc\t"), "a\\b\nc\\t");
    }
}
