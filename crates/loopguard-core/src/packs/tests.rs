#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use super::*;

#[test]
fn every_builtin_pack_parses_and_holds_its_examples() {
    assert!(builtin_errors().is_empty(), "{:?}", builtin_errors());
    let mut problems = Vec::new();
    for p in builtin() {
        for e in p.check_examples() {
            problems.push(format!("{}: {e}", p.id));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn builtin_packs_are_many_distinct_and_exemplified() {
    let packs = builtin();
    assert_eq!(packs.len(), BUILTIN_PACKS.len());
    let mut ids = std::collections::HashSet::new();
    let mut codes = std::collections::HashSet::new();
    for p in &packs {
        assert!(ids.insert(p.id.clone()), "pack id {} twice", p.id);
        assert!(!p.rules.is_empty(), "{} has no rules", p.id);
        let matches: usize = p.rules.iter().map(|r| r.examples_match.len()).sum();
        let not: usize = p.rules.iter().map(|r| r.examples_not_match.len()).sum();
        assert!(matches >= 3 && not >= 3, "{}: {matches} match / {not} not_match examples (3 each at least)", p.id);
        for r in &p.rules {
            if crate::reasons::is_builtin(&r.code) {
                // A migrated rule keeps the code the analysis reported before.
                assert!(crate::reasons::CONFIGURABLE_RULES.contains(&r.code.as_str()), "{}", r.code);
                continue;
            }
            assert!(codes.insert(r.code.clone()), "code {} twice", r.code);
            assert!(crate::reasons::is_kebab_case(&r.code), "{} is not kebab-case", r.code);
            assert!(is_builtin_code(&r.code));
        }
    }
    assert!(packs.len() >= 40, "only {} packs", packs.len());
}

fn pack(text: &str) -> Result<Pack, PackError> {
    Pack::parse("test.toml", text, PackOrigin::File("test.toml".into()))
}

const HEAD: &str = "id = \"t\"\nfamily = \"f\"\ntitle = \"T\"\ndescription = \"d\"\nprograms = [\"tool\"]\nvalue_options = [\"--profile\"]\n";

fn one(rule: &str) -> Pack {
    pack(&format!("{HEAD}[[rules]]\nid = \"r\"\neffect = \"delete\"\nseverity = \"high\"\nmessage = \"m\"\nmatch = [\"tool x\"]\n{rule}"))
        .unwrap()
}

fn hits(p: &Pack, line: &str) -> bool {
    p.rule_matches_line(&p.rules[0], line).unwrap()
}

#[test]
fn words_skip_known_option_values_and_possible_values_of_unknown_options() {
    let p = one("words = [\"s3\", \"rm|rb\"]");
    assert!(hits(&p, "tool s3 rm s3://b/k"));
    assert!(hits(&p, "tool --profile prod s3 rb s3://b"));
    // `--color on`: `on` may be the value of an option the pack does not know.
    assert!(hits(&p, "tool --color on s3 rm s3://b/k"));
    assert!(hits(&p, "sudo tool s3 rm x"));
    assert!(!hits(&p, "tool s3 ls s3://b"));
    assert!(!hits(&p, "tool ec2 s3 rm"));
    assert!(!hits(&p, "tool s3"));
}

#[test]
fn flags_letters_long_and_values() {
    let p = one("flags = [\"r\", \"--force\"]\nwithout = [\"--dry-run\"]");
    assert!(hits(&p, "tool -rf --force x"));
    assert!(hits(&p, "tool -r --force=true x"));
    assert!(!hits(&p, "tool -r x"));
    assert!(!hits(&p, "tool -r --force --dry-run x"));
    let p = one("any_flags = [\"-X=DELETE\", \"--method=del*\"]");
    assert!(hits(&p, "tool -X DELETE u"));
    assert!(hits(&p, "tool -XDELETE u"));
    assert!(hits(&p, "tool --method=delete u"));
    assert!(hits(&p, "tool --method Delete u"));
    assert!(!hits(&p, "tool -X GET u"));
    assert!(!hits(&p, "tool u"));
}

#[test]
fn args_globs_and_text_patterns() {
    let p = one("args = [\"s3://*\"]\ntext = 'drop\\s+table'\nnot_text = '--if-exists|if exists'");
    assert!(hits(&p, "tool s3://b \"DROP TABLE t\""));
    assert!(!hits(&p, "tool s3://b --if-exists \"DROP TABLE t\""));
    // An exemption reads the command's structure, never free text inside an argument.
    assert!(hits(&p, "tool s3://b \"DROP TABLE IF EXISTS t\""));
    assert!(!hits(&p, "tool gs://b \"drop table t\""));
    let p = one("text = 'flushall'");
    assert!(hits(&p, "tool <<'EOF'\nFLUSHALL\nEOF"));
}

#[test]
fn word_matching_is_linear_in_the_operands() {
    let p = one("words = [\"a\", \"b\", \"c\", \"d\"]");
    let line = format!("tool {} a b c", "-x v ".repeat(5000));
    assert!(!hits(&p, &line));
    assert!(hits(&p, &format!("{line} d")));
}

#[test]
fn bad_packs_are_refused_with_every_problem() {
    let err = pack("id = \"Bad Id\"\nfamily = \"f\"\ntitle = \"T\"\ndescription = \"d\"\nprograms = []\n").unwrap_err();
    assert!(err.problems.iter().any(|p| p.contains("kebab-case")), "{err}");
    assert!(err.problems.iter().any(|p| p.contains("`programs` is empty")), "{err}");
    let err = pack(&format!(
        "{HEAD}[[rules]]\nid = \"r\"\neffect = \"explode\"\nseverity = \"huge\"\nmessage = \"\"\nwords = [\"\"]\n"
    ))
    .unwrap_err();
    let all = err.to_string();
    for want in ["effect `explode`", "severity `huge`", "`message` is empty", "`match` example", "word pattern"] {
        assert!(all.contains(want), "{want} missing from {all}");
    }
    // A policy's pack may not mark anything read-only.
    let err = pack(&format!("{HEAD}[[rules]]\nid = \"r\"\nlevel = \"observe\"\nmessage = \"m\"\nmatch = [\"tool\"]\n"))
        .unwrap_err();
    assert!(err.to_string().contains("built-in packs"), "{err}");
    assert!(pack(&format!("{HEAD}unknown = 1\n")).is_err());
    assert!(
        pack(&format!(
            "{HEAD}[[rules]]\nid = \"r\"\nlevel = \"operate\"\nmessage = \"m\"\nmatch = [\"tool\"]\ntext = '('\n"
        ))
        .is_err()
    );
    assert!(pack(&"#".repeat(MAX_PACK_BYTES + 1)).is_err());
}

#[test]
fn examples_that_do_not_hold_are_reported() {
    let p = one("words = [\"rm\"]\nnot_match = [\"tool rm\"]");
    let problems = p.check_examples();
    assert_eq!(problems.len(), 2, "{problems:?}");
}

#[test]
fn the_index_only_looks_at_packs_of_the_program() {
    let set = PackSet::builtin();
    let cmds =
        crate::checks::shell::commands(&crate::checks::shell::split_with_home("ls -la", None).unwrap(), None).unwrap();
    let found = set.lookup(&cmds[0]);
    assert!(found.hits.is_empty() && found.broken.is_empty());
}

#[test]
fn switches_enable_and_disable_packs() {
    let (pack, rule) =
        builtin().into_iter().find_map(|p| p.rules.iter().find(|r| r.code.starts_with(&p.id)).map(|r| (p, r))).unwrap();
    let id = pack.id.clone();
    let off = PackSet::new(Vec::new(), &HashMap::from([(id.clone(), false)]));
    assert!(off.all().iter().any(|(p, on)| p.id == id && !on));
    let code = &rule.code;
    assert!(!off.has_code(code));
    let on = PackSet::new(Vec::new(), &HashMap::from([(id.clone(), true)]));
    assert!(on.has_code(code));
}

#[test]
fn docs_packs_md_is_generated_from_the_pack_files() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/packs.md");
    let want = markdown();
    if std::env::var_os("LOOPGUARD_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/packs.md is stale: run `LOOPGUARD_BLESS=1 cargo test -p loopguard-core packs` and commit it"
    );
}

#[test]
fn words_only_known_at_run_time_could_match() {
    let p = one("words = [\"forget\"]\nflags = [\"--prune\"]");
    let could = |line: &str| {
        let cmds =
            crate::checks::shell::commands(&crate::checks::shell::split_with_home(line, None).unwrap(), None).unwrap();
        let c = cmds.iter().find(|c| c.program == "tool").unwrap();
        p.rules[0].could_match_command(&p, c)
    };
    assert!(could("tool \"$(cat sub.txt)\" --prune"));
    assert!(could("tool forget $FLAGS"));
    assert!(could("tool $SUB $FLAGS"));
    assert!(!could("tool snapshots $FLAGS"));
    assert!(!could("tool forget --prune"), "literal commands match or not; nothing is possible");
    assert!(!could("tool forget --dry-run"), "no run-time words");
    // A word partly written: it could complete to the subcommand, or it could not.
    assert!(could("tool \"forg$E\" --prune"));
    assert!(!could("tool \"s3://$B/\" --prune"));
    // Run-time options before the subcommand.
    assert!(could("tool $OPTS forget --prune"));
}
