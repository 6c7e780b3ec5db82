//! The auto-merge prohibition's classifier: is a change small and safe enough that an agent may
//! merge it on its own? Eligible only for documentation typo fixes, formatting or lint changes in
//! test files, import reordering, and configuration under allowlisted documentation paths. Never
//! for behaviour changes, dependency bumps, lockfiles or denylisted paths. Pure: the caller reads
//! the diff (`loopguard merge-check` runs git).

use serde::Serialize;

/// One changed file, as the diff shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Path relative to the repository root.
    pub path: String,
    /// `A`dded, `M`odified, `D`eleted (renames are a deletion and an addition).
    pub status: char,
    /// Lines removed (without the leading `-`).
    pub removed: Vec<String>,
    /// Lines added (without the leading `+`).
    pub added: Vec<String>,
    /// The change disappears when whitespace is ignored.
    pub whitespace_only: bool,
    /// The path is on the policy's denylist (the caller checks it).
    pub denylisted: bool,
}

/// Why a file is eligible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Small in-line corrections in documentation.
    DocTypo,
    /// Whitespace-only changes in test files.
    TestFormatting,
    /// The same import lines in another order.
    ImportOrder,
    /// Configuration under an allowlisted documentation path.
    DocsConfig,
}

/// The verdict on one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileVerdict {
    /// The file.
    pub path: String,
    /// Its category when eligible.
    pub category: Option<Category>,
    /// Why, in words.
    pub reason: String,
}

/// The verdict on a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MergeReport {
    /// Every file is eligible (and there is at least one).
    pub eligible: bool,
    /// Per file.
    pub files: Vec<FileVerdict>,
}

/// Lockfiles: never eligible.
pub const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "go.sum",
    "Gemfile.lock",
    "composer.lock",
    "mix.lock",
    "pubspec.lock",
    "Podfile.lock",
    "flake.lock",
];

/// Dependency manifests: a change to one is a dependency change.
pub const MANIFESTS: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Pipfile",
    "go.mod",
    "Gemfile",
    "composer.json",
    "build.gradle",
    "build.gradle.kts",
    "pom.xml",
    "mix.exs",
    "pubspec.yaml",
];

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_doc(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".md", ".rst", ".txt", ".adoc", ".markdown"].iter().any(|e| lower.ends_with(e))
}

fn is_test(path: &str) -> bool {
    let name = file_name(path);
    path.split('/').any(|c| matches!(c, "test" | "tests" | "__tests__" | "spec" | "testdata"))
        || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
}

fn is_config(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".toml", ".yml", ".yaml", ".json", ".ini", ".cfg"].iter().any(|e| lower.ends_with(e))
}

fn is_import(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("use ")
        || t.starts_with("pub use ")
        || t.starts_with("import ")
        || (t.starts_with("from ") && t.contains(" import "))
        || t.starts_with("#include")
        || (t.contains("require(") && (t.starts_with("const ") || t.starts_with("let ") || t.starts_with("var ")))
}

/// Levenshtein distance over chars, bounded: stops counting past `max`.
fn edit_distance(a: &str, b: &str, max: usize) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > max {
        return max + 1;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        if cur.iter().min().is_some_and(|m| *m > max) {
            return max + 1;
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Whether every changed line is a small correction of its counterpart: the same number of lines
/// removed and added, pairwise at most `max` characters apart.
fn small_corrections(removed: &[String], added: &[String], max: usize) -> bool {
    !removed.is_empty()
        && removed.len() == added.len()
        && removed.iter().zip(added).all(|(r, a)| {
            let d = edit_distance(r, a, max);
            d > 0 && d <= max
        })
}

fn verdict(f: &FileChange, docs_config_allow: &[globset::GlobMatcher]) -> FileVerdict {
    let no = |reason: String| FileVerdict { path: f.path.clone(), category: None, reason };
    let yes =
        |c: Category, reason: &str| FileVerdict { path: f.path.clone(), category: Some(c), reason: reason.into() };
    let name = file_name(&f.path);
    if f.denylisted {
        return no("the path is on the denylist".into());
    }
    if LOCKFILES.contains(&name) {
        return no(format!("`{name}` is a lockfile: dependency changes are never merged automatically"));
    }
    if MANIFESTS.contains(&name) || (name.starts_with("requirements") && name.ends_with(".txt")) {
        return no(format!("`{name}` declares dependencies: a dependency change is never merged automatically"));
    }
    if f.status != 'M' {
        return no(format!(
            "the file is {} (only edits of existing files can be eligible)",
            match f.status {
                'A' => "added",
                'D' => "deleted",
                _ => "renamed or changed in type",
            }
        ));
    }
    if f.removed.is_empty() && f.added.is_empty() {
        return no("no line changes (a mode change?)".into());
    }
    if is_doc(&f.path) {
        return if small_corrections(&f.removed, &f.added, 3) {
            yes(Category::DocTypo, "documentation: each changed line differs by at most 3 characters")
        } else {
            no("documentation change larger than a typo fix".into())
        };
    }
    if is_config(&f.path) && docs_config_allow.iter().any(|g| g.is_match(&f.path)) {
        return yes(Category::DocsConfig, "configuration under an allowlisted documentation path");
    }
    let mut removed = f.removed.clone();
    let mut added = f.added.clone();
    removed.sort();
    added.sort();
    if removed == added && removed.iter().all(|l| is_import(l)) {
        return yes(Category::ImportOrder, "the same import lines in another order");
    }
    if is_test(&f.path) && f.whitespace_only {
        return yes(Category::TestFormatting, "test file: whitespace and formatting only");
    }
    no("changes behaviour (code or configuration outside the eligible kinds)".into())
}

/// Classifies a change. `docs_config_allow` are globs of paths where configuration changes are
/// eligible (default `docs/**`).
pub fn classify(files: &[FileChange], docs_config_allow: &[String]) -> MergeReport {
    let globs: Vec<globset::GlobMatcher> = docs_config_allow
        .iter()
        .filter_map(|g| globset::GlobBuilder::new(g).literal_separator(true).build().ok())
        .map(|g| g.compile_matcher())
        .collect();
    let files: Vec<FileVerdict> = files.iter().map(|f| verdict(f, &globs)).collect();
    MergeReport { eligible: !files.is_empty() && files.iter().all(|f| f.category.is_some()), files }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, removed: &[&str], added: &[&str]) -> FileChange {
        FileChange {
            path: path.into(),
            status: 'M',
            removed: removed.iter().map(|s| s.to_string()).collect(),
            added: added.iter().map(|s| s.to_string()).collect(),
            whitespace_only: false,
            denylisted: false,
        }
    }

    fn one(f: FileChange) -> FileVerdict {
        classify(&[f], &["docs/**".into()]).files.remove(0)
    }

    #[test]
    fn eligible_kinds() {
        assert_eq!(one(change("README.md", &["Teh gate"], &["The gate"])).category, Some(Category::DocTypo));
        assert_eq!(
            one(change("src/lib.rs", &["use b::B;", "use a::A;"], &["use a::A;", "use b::B;"])).category,
            Some(Category::ImportOrder)
        );
        let mut fmt = change("tests/it.rs", &["fn x(){}"], &["fn x() {}"]);
        fmt.whitespace_only = true;
        assert_eq!(one(fmt).category, Some(Category::TestFormatting));
        assert_eq!(one(change("docs/site.yml", &["a: 1"], &["a: 2"])).category, Some(Category::DocsConfig));
    }

    #[test]
    fn never_eligible() {
        for f in [
            change("Cargo.lock", &["version = \"1.0.0\""], &["version = \"1.0.1\""]),
            change("package.json", &["\"a\": \"1\""], &["\"a\": \"2\""]),
            change("requirements-dev.txt", &["a==1"], &["a==2"]),
            change("README.md", &["This is fine."], &["This is now a completely different paragraph."]),
            change("src/lib.rs", &["x + 1"], &["x - 1"]),
            change("src/lib.rs", &["use a::A;"], &["use a::B;"]),
            change("config/app.yml", &["a: 1"], &["a: 2"]),
        ] {
            let v = one(f.clone());
            assert_eq!(v.category, None, "{f:?} → {v:?}");
        }
        let mut whitespace_in_src = change("src/lib.rs", &["fn x(){}"], &["fn x() {}"]);
        whitespace_in_src.whitespace_only = true;
        assert_eq!(one(whitespace_in_src).category, None, "formatting counts only in test files");
        let mut deny = change("docs/a.md", &["teh"], &["the"]);
        deny.denylisted = true;
        assert_eq!(one(deny).category, None);
        let mut added = change("docs/new.md", &[], &["hello"]);
        added.status = 'A';
        assert_eq!(one(added).category, None);
        assert!(!classify(&[], &[]).eligible, "an empty change is not eligible");
    }

    #[test]
    fn one_ineligible_file_makes_the_change_ineligible() {
        let r = classify(
            &[change("README.md", &["teh"], &["the"]), change("src/main.rs", &["a"], &["b"])],
            &["docs/**".into()],
        );
        assert!(!r.eligible);
        assert_eq!(r.files.iter().filter(|f| f.category.is_some()).count(), 1);
    }

    #[test]
    fn edit_distance_is_bounded() {
        assert_eq!(edit_distance("kitten", "sitting", 5), 3);
        assert_eq!(edit_distance("a", "abcdefgh", 3), 4);
    }
}
