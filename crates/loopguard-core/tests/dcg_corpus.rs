//! The peer dcg's own test corpus (tests/corpora/dcg/corpus.tsv, 1,046 commands it blocks and
//! 1,168 it allows) through the whole gate, every built-in pack on, unattended with the kernel
//! sandbox in use. Every row where loopguard decides otherwise must be listed, with its reason,
//! in tests/corpora/dcg/on-purpose.tsv; a listed row that no longer disagrees fails too. The
//! figures and the list are docs/packs-corpus.md (regenerated with `LOOPGUARD_BLESS=1`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use loopguard_core::Verdict;
use loopguard_core::packs::BUILTIN_PACKS;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::path::Path;

/// Why loopguard allows what dcg blocks, by reason id.
const ALLOWED_BECAUSE: &[(&str, &str)] = &[
    (
        "workspace-change",
        "Deleting or syncing inside the workspace is the agent's job; git history and the breaker's revert cover it (paths outside the workspace are judged, and wipes of the workspace itself are denied).",
    ),
    (
        "temp-clean-up",
        "Unattended, deleting below the system temp directory is allowed (the kernel sandbox confines the rest), unless the workspace lives there.",
    ),
    (
        "not-a-real-command",
        "The command does not exist in the real tool (or is a fragment of library code, not a command); the real destructive commands of the tool are in its pack.",
    ),
    (
        "no-effect",
        "The command does nothing destructive as written: heredoc data printed, a flag git does not accept, a command with no operand, a line break splitting the flag off.",
    ),
    (
        "low-stakes",
        "Recoverable or local housekeeping (cancel a CI run, drop a CI cache, forget a known-hosts entry or an agent identity): medium risk at most, confirmed in normal mode.",
    ),
    ("reinstallable", "Removing a package from the local environment; reinstalling brings it back."),
    ("cache-only", "Deletes a local cache only; the backups themselves are untouched."),
    ("keeps-work", "`git reset --merge` refuses to discard uncommitted changes."),
    (
        "one-container",
        "Stopping or removing one named container is routine; dcg blocks it only by the container's name.",
    ),
    ("read-only", "Only reads (a zone transfer query; `glab repo archive` downloads a copy of the code)."),
    ("strict-git", "From dcg's opt-in strict git pack: `git push master` pushes to a remote named master."),
    (
        "opaque-remote-api",
        "Code (JavaScript, a socket) that calls a service's API: normal mode asks about code the analysis cannot see into; unattended it runs confined, and the kernel cannot stop a remote API call — the two-layer limit, documented in docs/shell-analysis.md.",
    ),
];

/// Why loopguard blocks what dcg allows, by loopguard's first reason code.
const BLOCKED_BECAUSE: &[(&str, &str)] = &[
    (
        "autonomy-exceeded",
        "The call changes remote state (uploads, deploys, queue writes, pushes to a protected branch): it needs autonomy `operate` or `merge`, above the default `pr`. Normal mode asks.",
    ),
    (
        "ssrf-internal-address",
        "Internal addresses: loopback services other than a development server read with GET, `.local` names, and anything sent to them.",
    ),
    ("path-outside-workspace", "Writes or deletes outside the workspace (and its extra roots)."),
    (
        "shell-dynamic-command",
        "A program or an `rm` target only known at run time (`$TMPDIR/…`, `$(…)` as the program).",
    ),
    (
        "shell-hidden-code",
        "Code the analysis cannot read (a missing script, an unknown program given a command line the gate would deny, a program option naming a world-writable directory).",
    ),
    ("network-remote-write", "An HTTP request that writes to a remote host (POST, PUT, PATCH) is asked about."),
    ("exfil-upload", "Uploading files to another host is asked about."),
    (
        "shell-unparsable",
        "An extraction artifact: the row is a multi-line command cut at its first line (an unbalanced quote).",
    ),
    ("shell-remote-exec", "A command run on another machine over ssh is asked about."),
    ("destructive-git-push-force", "`--force-with-lease` still overwrites remote history."),
    ("credential-read", "Prints a secret into the agent's context."),
    (
        "shell-opaque-code",
        "A container build runs the project's code and downloads (base images): code nobody read in a line that gets the network is asked about even unattended, and the sandbox leaves no daemon socket to build with.",
    ),
];

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match (c, c == '\\') {
            (_, true) => match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('\\') => out.push('\\'),
                Some(o) => {
                    out.push('\\');
                    out.push(o);
                }
                None => out.push('\\'),
            },
            _ => out.push(c),
        }
    }
    out
}

fn data(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpora/dcg").join(name)).unwrap()
}

#[test]
fn dcg_corpus_disagreements_are_all_on_purpose() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Deleting below the system temp directory is allowed unattended unless the workspace lives
    // there, and a home there is world-writable: with a checkout under /tmp, rows naming temp
    // paths or the home decide otherwise. They are left out then (the list and the figures are
    // for a workspace outside the temp directories).
    let in_temp = [std::env::temp_dir(), "/tmp".into(), "/var/tmp".into()].iter().any(|d| root.path().starts_with(d));
    let location_dependent =
        |raw: &str| in_temp && ["/tmp", "~", "$HOME", "TMPDIR", "/home/"].iter().any(|p| raw.contains(p));
    let home = root.path().join("home/dev");
    let ws = home.join("work/project");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let git = std::process::Command::new("git").args(["init", "-q", "-b", "feature/work"]).current_dir(&ws).status();
    assert!(git.unwrap().success());
    let ids: Vec<String> = BUILTIN_PACKS.iter().map(|b| format!("\"{}\"", b.id)).collect();
    let user = format!("[packs]\nenable = [{}]\n", ids.join(", "));
    let decider = common::Decider::new();
    let params = common::Params {
        home: Some(home.clone()),
        confinement: true,
        policy: Some(("user.toml".into(), user)),
        ..common::Params::new(&ws)
    };

    let listed: HashMap<(String, String), (String, String)> = data("on-purpose.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.splitn(4, '\t').collect();
            ((c[0].to_string(), c[3].to_string()), (c[1].to_string(), c[2].to_string()))
        })
        .collect();
    let reasons: HashMap<&str, &str> = ALLOWED_BECAUSE.iter().chain(BLOCKED_BECAUSE).copied().collect();
    let mut problems = Vec::new();
    let (mut block_rows, mut blocked, mut allow_rows, mut passed) = (0usize, 0usize, 0usize, 0usize);
    let mut seen = std::collections::HashSet::new();
    let mut by_reason: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for line in data("corpus.tsv").lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let c: Vec<&str> = line.splitn(4, '\t').collect();
        let (expect, raw) = (c[0], c[3]);
        if location_dependent(raw) {
            continue;
        }
        let command = unescape(raw);
        let d = decider.decide(
            &params,
            "Bash",
            loopguard_core::Action::Shell { command: command.clone() },
            serde_json::json!({ "command": command }),
        );
        let block = d.verdict != Verdict::Allow;
        let code = d.first_code().to_string();
        let disagreement = match (expect, block) {
            ("block", b) => {
                block_rows += 1;
                blocked += usize::from(b);
                (!b).then_some("allowed")
            }
            (_, b) => {
                allow_rows += 1;
                passed += usize::from(!b);
                b.then_some("blocked")
            }
        };
        if let Some(dir) = disagreement {
            let key = (dir.to_string(), raw.to_string());
            seen.insert(key.clone());
            match listed.get(&key) {
                None => {
                    problems.push(format!("not listed: {dir}\t{}\t{raw}", if dir == "blocked" { &code } else { "?" }))
                }
                Some((reason, _)) if dir == "blocked" && *reason != code => {
                    problems.push(format!("listed as blocked by {reason}, now by {code}: {raw}"))
                }
                Some((reason, _)) if !reasons.contains_key(reason.as_str()) => {
                    problems.push(format!("reason `{reason}` is not explained: {raw}"))
                }
                Some((reason, _)) => {
                    by_reason.entry((dir.to_string(), reason.clone())).or_default().push(raw.to_string())
                }
            }
        }
    }
    for key in listed.keys().filter(|k| !seen.contains(*k) && !location_dependent(&k.1)) {
        problems.push(format!("listed but no longer disagrees: {}\t{}", key.0, key.1));
    }
    let set_aside_allow = by_reason.iter().filter(|((d, _), _)| d == "blocked").map(|(_, v)| v.len()).sum::<usize>();
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    let allow_rate = pct(passed, allow_rows - set_aside_allow);
    let summary = format!(
        "block rows blocked {blocked}/{block_rows} ({:.1}%); allow rows passed {passed}/{allow_rows} ({:.1}%), \
         {:.1}% of the {} left after setting aside the {set_aside_allow} loopguard blocks on purpose",
        pct(blocked, block_rows),
        pct(passed, allow_rows),
        allow_rate,
        allow_rows - set_aside_allow
    );
    println!("{summary}");

    let mut doc = String::from("# dcg's corpus through loopguard\n\n");
    doc.push_str(
        "<!-- Generated by crates/loopguard-core/tests/dcg_corpus.rs (`LOOPGUARD_BLESS=1 cargo test -p loopguard-core \
         --test dcg_corpus`). Do not edit by hand. -->\n\n",
    );
    let _ = writeln!(
        doc,
        "The peer project dcg (destructive_command_guard) ships a test corpus of commands it blocks and \
         commands it allows; `tests/corpora/dcg/extract.py` extracts it from dcg's repository (the commit is in \
         the header of `corpus.tsv`). Every row goes through loopguard's whole gate with every built-in pack on, \
         unattended, with the kernel sandbox in use. Block = ask or deny.\n\n**{summary}.**\n\n\
         Every row where loopguard decides otherwise is below, by reason. A test fails when a new disagreement \
         appears or a listed one goes away."
    );
    for (dir, title, table) in [
        ("blocked", "dcg allows, loopguard blocks", BLOCKED_BECAUSE),
        ("allowed", "dcg blocks, loopguard allows", ALLOWED_BECAUSE),
    ] {
        let _ = writeln!(doc, "\n## {title}\n");
        for (reason, why) in table {
            let Some(rows) = by_reason.get(&(dir.to_string(), reason.to_string())) else { continue };
            let _ = writeln!(doc, "### `{reason}` ({})\n\n{why}\n", rows.len());
            for r in rows {
                let _ = writeln!(doc, "- `{}`", r.replace('`', "'").replace('|', "\\|"));
            }
            doc.push('\n');
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/packs-corpus.md");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    if in_temp {
        println!("the checkout is under a temp directory: rows naming temp paths or the home were left out");
        return;
    }
    if std::env::var_os("LOOPGUARD_BLESS").is_some() {
        std::fs::write(&path, &doc).unwrap();
    }
    assert!(allow_rate >= 98.0, "{summary}");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == doc,
        "docs/packs-corpus.md is stale: run `LOOPGUARD_BLESS=1 cargo test -p loopguard-core --test dcg_corpus`"
    );
}
