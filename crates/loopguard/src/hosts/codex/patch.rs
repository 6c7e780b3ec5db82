//! Codex's `apply_patch` format, read into the files it changes. The format (as Codex's tool
//! describes it to the model):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        then every line `+text`
//! *** Delete File: path
//! *** Update File: path     optionally `*** Move to: new path`, then hunks: `@@ …` headers and
//!                           lines ` context`, `-removed`, `+added`; `*** End of File` may close one
//! *** End Patch
//! ```
//!
//! Anything else is an error: the gate denies a patch it cannot read rather than guess which
//! files it touches.

use loopguard_core::{Change, Edit, FileChange};

/// The largest number of files one patch may change before it is refused unread.
const MAX_FILES: usize = 1000;

/// The files a patch changes, in order; a moved file appears as its old path (deleted) and its
/// new path, whose change is the source's content with the hunks applied — which only the file
/// on disk can tell: see [`Patch::moves`].
pub fn parse(patch: &str) -> Result<Vec<FileChange>, String> {
    parse_with_moves(patch).map(|p| p.files)
}

/// A patch read: its files, and for each moved file the index of its destination in `files`
/// (whose change holds the hunks only) and its source path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The files, in order.
    pub files: Vec<FileChange>,
    /// (index of the destination in `files`, source path) of every move.
    pub moves: Vec<(usize, String)>,
}

/// [`parse`], keeping which files were moved.
pub fn parse_with_moves(patch: &str) -> Result<Patch, String> {
    let mut lines = patch.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).peekable();
    while lines.peek().is_some_and(|l| l.trim().is_empty()) {
        lines.next();
    }
    if lines.next().map(str::trim) != Some("*** Begin Patch") {
        return Err("the patch does not start with `*** Begin Patch`".into());
    }
    let mut files = Vec::new();
    let mut moves = Vec::new();
    let mut ended = false;
    while let Some(line) = lines.next() {
        if ended {
            if line.trim().is_empty() {
                continue;
            }
            return Err("text after `*** End Patch`".into());
        }
        if line.trim() == "*** End Patch" {
            ended = true;
        } else if let Some(path) = header(line, "*** Add File: ")? {
            let mut content = String::new();
            while let Some(l) = lines.next_if(|l| !l.starts_with("*** ")) {
                let added = l.strip_prefix('+').ok_or_else(|| format!("a line of added file `{path}` lacks `+`"))?;
                content.push_str(added);
                content.push('\n');
            }
            files.push(FileChange { path, change: Change::Whole(content) });
        } else if let Some(path) = header(line, "*** Delete File: ")? {
            files.push(FileChange { path, change: Change::Delete });
        } else if let Some(path) = header(line, "*** Update File: ")? {
            let moved = match lines.next_if(|l| l.starts_with("*** Move to: ")) {
                Some(l) => header(l, "*** Move to: ")?,
                None => None,
            };
            let edits = hunks(&mut lines, &path)?;
            match moved {
                Some(to) => {
                    files.push(FileChange { path: path.clone(), change: Change::Delete });
                    moves.push((files.len(), path));
                    files.push(FileChange { path: to, change: Change::Edits(edits) });
                }
                None => files.push(FileChange { path, change: Change::Edits(edits) }),
            }
        } else {
            return Err(format!("unexpected line in the patch: `{}`", line.chars().take(60).collect::<String>()));
        }
        if files.len() > MAX_FILES {
            return Err(format!("the patch changes more than {MAX_FILES} files"));
        }
    }
    if !ended {
        return Err("the patch does not end with `*** End Patch`".into());
    }
    if files.is_empty() {
        return Err("the patch changes no file".into());
    }
    Ok(Patch { files, moves })
}

/// The hunks of an `*** Update File:` section, each as the text it replaces (context and removed
/// lines) and the text it becomes (context and added lines).
fn hunks<'a>(lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>, path: &str) -> Result<Vec<Edit>, String> {
    let mut edits = Vec::new();
    let mut hunk = (String::new(), String::new());
    let flush = |hunk: &mut (String, String), edits: &mut Vec<Edit>| {
        if !hunk.0.is_empty() || !hunk.1.is_empty() {
            let (old, new) = std::mem::take(hunk);
            edits.push(Edit { old, new, all: false });
        }
    };
    while let Some(l) = lines.next_if(|l| !l.starts_with("*** ") || l.trim() == "*** End of File") {
        if l.starts_with("@@") || l.trim() == "*** End of File" {
            flush(&mut hunk, &mut edits);
            continue;
        }
        let (tag, text) = l.split_at(l.chars().next().map_or(0, char::len_utf8));
        let (old, new) = match tag {
            " " | "" => (true, true),
            "-" => (true, false),
            "+" => (false, true),
            _ => return Err(format!("a line of the update of `{path}` starts with neither ` `, `-` nor `+`")),
        };
        for (keep, side) in [(old, &mut hunk.0), (new, &mut hunk.1)] {
            if keep {
                side.push_str(text);
                side.push('\n');
            }
        }
    }
    flush(&mut hunk, &mut edits);
    Ok(edits)
}

/// The path after a header, or `None` when `line` is another line.
fn header(line: &str, prefix: &str) -> Result<Option<String>, String> {
    match line.strip_prefix(prefix) {
        Some(p) if p.trim().is_empty() => Err(format!("`{}` names no file", prefix.trim())),
        Some(p) => Ok(Some(p.trim().to_string())),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_file_change() {
        let p = "*** Begin Patch\n*** Add File: new.txt\n+created\n*** Update File: notes.md\n@@\n line one\n-line two\n+line 2\n*** Delete File: old.txt\n*** Update File: a.rs\n*** Move to: b.rs\n@@ fn main\n-x\n+y\n*** End of File\n*** End Patch\n";
        let files = parse(p).unwrap();
        let got: Vec<(&str, &Change)> = files.iter().map(|f| (f.path.as_str(), &f.change)).collect();
        assert_eq!(
            got,
            vec![
                ("new.txt", &Change::Whole("created\n".into())),
                (
                    "notes.md",
                    &Change::Edits(vec![Edit {
                        old: "line one\nline two\n".into(),
                        new: "line one\nline 2\n".into(),
                        all: false
                    }])
                ),
                ("old.txt", &Change::Delete),
                ("a.rs", &Change::Delete),
                ("b.rs", &Change::Edits(vec![Edit { old: "x\n".into(), new: "y\n".into(), all: false }])),
            ]
        );
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for bad in [
            "",
            "rm -rf /",
            "*** Begin Patch\n*** Add File: a\n+x\n",
            "*** Begin Patch\n*** Add File: a\nx\n*** End Patch",
            "*** Begin Patch\n*** Add File: \n+x\n*** End Patch",
            "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch",
            "*** Begin Patch\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n?x\n*** End Patch",
            "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Delete File: b\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
