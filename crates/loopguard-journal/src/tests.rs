use super::*;
use std::os::unix::fs::PermissionsExt;

/// Every path below `root` with its kind, mode and content hash: two trees are the same when
/// their snapshots are.
fn snapshot(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let m = p.symlink_metadata().unwrap();
        let rel = p.strip_prefix(root).unwrap().to_path_buf();
        let mode = m.permissions().mode() & 0o7777;
        if m.file_type().is_symlink() {
            out.push((rel, format!("link {}", fs::read_link(&p).unwrap().display())));
        } else if m.is_file() {
            out.push((rel, format!("file {mode:o} {}", hex(&Sha256::digest(fs::read(&p).unwrap())))));
        } else {
            out.push((rel, format!("dir {mode:o}")));
            for c in fs::read_dir(&p).unwrap() {
                stack.push(c.unwrap().path());
            }
        }
    }
    out.sort();
    out
}

struct World {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    journal: Journal,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    fs::create_dir_all(ws.join("src/deep")).unwrap();
    fs::write(ws.join("src/lib.rs"), "fn main() {}\n").unwrap();
    fs::write(ws.join("src/deep/data.bin"), [0u8, 1, 2, 255]).unwrap();
    fs::write(ws.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    fs::set_permissions(ws.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    symlink("lib.rs", ws.join("src/link.rs")).unwrap();
    fs::create_dir_all(ws.join("node_modules/pkg")).unwrap();
    fs::write(ws.join("node_modules/pkg/index.js"), "x").unwrap();
    let journal = Journal::open(tmp.path().join("state/journal/ws")).unwrap();
    World { _tmp: tmp, ws, journal }
}

fn meta(call: &str) -> StepMeta {
    StepMeta { at: 1, session: "s".into(), tool: "Bash".into(), call: call.into(), summary: call.into() }
}

impl World {
    fn record(&self, call: &str, targets: &[&str]) -> u64 {
        let t: Vec<PathBuf> = targets.iter().map(|t| self.ws.join(t)).collect();
        self.journal.record(meta(call), &t, std::slice::from_ref(&self.ws), &Limits::default()).unwrap()
    }
}

#[test]
fn a_deleted_tree_comes_back_byte_for_byte_with_modes_and_links() {
    let w = world();
    let before = snapshot(&w.ws);
    w.record("rm", &["src", "run.sh"]);
    fs::remove_dir_all(w.ws.join("src")).unwrap();
    fs::remove_file(w.ws.join("run.sh")).unwrap();
    assert!(w.journal.seal("rm").unwrap());
    let report = w.journal.undo(1, false, 2).unwrap();
    assert_eq!(report.steps, [1]);
    assert_eq!(snapshot(&w.ws), before);
}

#[test]
fn a_rewritten_file_and_what_a_step_created_are_put_back() {
    let w = world();
    let before = snapshot(&w.ws);
    w.record("w1", &["src/lib.rs", "new/dir/file.txt"]);
    fs::write(w.ws.join("src/lib.rs"), "changed").unwrap();
    fs::set_permissions(w.ws.join("src/lib.rs"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::create_dir_all(w.ws.join("new/dir")).unwrap();
    fs::write(w.ws.join("new/dir/file.txt"), "created").unwrap();
    assert!(w.journal.seal("w1").unwrap());
    // A result is sealed once; an unknown call has nothing to seal.
    assert!(!w.journal.seal("w1").unwrap());
    assert!(!w.journal.seal("never-recorded").unwrap());
    let report = w.journal.undo(1, false, 2).unwrap();
    assert_eq!(snapshot(&w.ws), before);
    // The created parent was widened to: the whole new tree goes.
    assert!(report.removed.contains(&w.ws.join("new")), "{report:?}");
}

#[test]
fn a_directory_gets_back_exactly_its_entries_and_a_moved_file_its_place() {
    let w = world();
    let before = snapshot(&w.ws);
    // `mv src/lib.rs src/deep/moved.rs` then a stray file written into src/deep by the same step.
    w.record("mv", &["src/lib.rs", "src/deep/moved.rs"]);
    fs::rename(w.ws.join("src/lib.rs"), w.ws.join("src/deep/moved.rs")).unwrap();
    w.journal.seal("mv").unwrap();
    w.record("rmdeep", &["src/deep"]);
    fs::write(w.ws.join("src/deep/stray"), "x").unwrap();
    w.journal.seal("rmdeep").unwrap();
    w.journal.undo(1, false, 2).unwrap();
    assert_eq!(snapshot(&w.ws), before);
}

#[test]
fn undo_refuses_when_someone_else_changed_the_file_since_and_changes_nothing() {
    let w = world();
    w.record("edit", &["src/lib.rs"]);
    fs::write(w.ws.join("src/lib.rs"), "the agent's edit").unwrap();
    w.journal.seal("edit").unwrap();
    fs::write(w.ws.join("src/lib.rs"), "the human's edit").unwrap();
    let err = w.journal.undo(1, false, 2).unwrap_err();
    assert!(matches!(&err, JournalError::Conflict(p) if p == &[w.ws.join("src/lib.rs")]), "{err}");
    assert_eq!(fs::read_to_string(w.ws.join("src/lib.rs")).unwrap(), "the human's edit");
    assert!(!w.journal.steps().unwrap()[0].undone);
    // --force restores the step's pre-image anyway.
    w.journal.undo(1, true, 3).unwrap();
    assert_eq!(fs::read_to_string(w.ws.join("src/lib.rs")).unwrap(), "fn main() {}\n");
}

#[test]
fn steps_are_undone_newest_first_once_each() {
    let w = world();
    w.record("a", &["src/lib.rs"]);
    fs::write(w.ws.join("src/lib.rs"), "one").unwrap();
    w.journal.seal("a").unwrap();
    w.record("b", &["src/lib.rs"]);
    fs::write(w.ws.join("src/lib.rs"), "two").unwrap();
    w.journal.seal("b").unwrap();
    // Only the last: back to "one".
    assert_eq!(w.journal.undo(2, false, 3).unwrap().steps, [2]);
    assert_eq!(fs::read_to_string(w.ws.join("src/lib.rs")).unwrap(), "one");
    assert!(matches!(w.journal.undo(2, false, 4), Err(JournalError::Nothing)));
    // Then the rest.
    assert_eq!(w.journal.undo(1, false, 5).unwrap().steps, [1]);
    assert_eq!(fs::read_to_string(w.ws.join("src/lib.rs")).unwrap(), "fn main() {}\n");
    let views = w.journal.steps().unwrap();
    assert!(views.iter().all(|v| v.undone));
}

#[test]
fn regenerable_output_is_not_kept_and_undo_says_so() {
    let w = world();
    w.record("rmnm", &["node_modules"]);
    fs::remove_dir_all(w.ws.join("node_modules")).unwrap();
    let views = w.journal.steps().unwrap();
    assert!(matches!(&views[0].step.entries[..], [Entry::Skipped { .. }]), "{:?}", views[0].step.entries);
    let report = w.journal.undo(1, false, 2).unwrap();
    assert_eq!(report.skipped, [w.ws.join("node_modules")]);
    assert!(!w.ws.join("node_modules").exists());
}

#[test]
fn a_pre_image_past_the_limits_is_refused_and_nothing_is_recorded() {
    let w = world();
    let limits = Limits { max_entries: 3, ..Limits::default() };
    let err = w.journal.record(meta("big"), &[w.ws.join("src")], std::slice::from_ref(&w.ws), &limits).unwrap_err();
    assert!(matches!(err, JournalError::TooLarge { .. }), "{err}");
    let limits = Limits { max_bytes: 4, ..Limits::default() };
    let err = w.journal.record(meta("big"), &[w.ws.join("src")], std::slice::from_ref(&w.ws), &limits).unwrap_err();
    assert!(matches!(err, JournalError::TooLarge { .. }), "{err}");
    assert!(w.journal.steps().unwrap().is_empty());
}

#[test]
fn a_damaged_object_stops_the_undo_before_anything_changes() {
    let w = world();
    w.record("two", &["run.sh", "src/lib.rs"]);
    fs::write(w.ws.join("run.sh"), "gone").unwrap();
    fs::write(w.ws.join("src/lib.rs"), "gone").unwrap();
    let views = w.journal.steps().unwrap();
    let Entry::File { sha256, .. } = &views[0].step.entries[1] else { panic!("{:?}", views[0].step.entries) };
    let obj = w.journal.object_path(sha256).unwrap();
    fs::write(&obj, "tampered").unwrap();
    let err = w.journal.undo(1, false, 2).unwrap_err();
    assert!(matches!(err, JournalError::Corrupt(_)), "{err}");
    assert_eq!(fs::read_to_string(w.ws.join("run.sh")).unwrap(), "gone");
}

#[test]
fn targets_outside_the_roots_are_not_kept() {
    let w = world();
    let outside = w.ws.parent().unwrap().join("elsewhere.txt");
    fs::write(&outside, "x").unwrap();
    let id = w.journal.record(meta("o"), &[outside], std::slice::from_ref(&w.ws), &Limits::default()).unwrap();
    let views = w.journal.steps().unwrap();
    assert_eq!(views[0].step.id, id);
    assert!(views[0].step.entries.is_empty());
}

#[test]
fn a_damaged_journal_line_is_a_clear_error() {
    let w = world();
    w.record("a", &["run.sh"]);
    let mut f = fs::OpenOptions::new().append(true).open(w.journal.dir().join("steps.jsonl")).unwrap();
    f.write_all(b"{not json\n").unwrap();
    let err = w.journal.steps().unwrap_err();
    assert!(err.to_string().contains("steps.jsonl:2"), "{err}");
}

#[test]
fn a_folder_swapped_for_a_link_since_the_step_stops_the_undo_even_forced() {
    let w = world();
    let outside = w.ws.parent().unwrap().join("outside");
    fs::create_dir_all(&outside).unwrap();
    w.record("edit", &["src/lib.rs", "src/new.rs"]);
    fs::write(w.ws.join("src/lib.rs"), "agent").unwrap();
    // The folder is replaced by a link to somewhere else, holding a file of the same name.
    fs::rename(w.ws.join("src"), w.ws.join("src.old")).unwrap();
    symlink(&outside, w.ws.join("src")).unwrap();
    fs::write(outside.join("new.rs"), "someone else's").unwrap();
    for force in [false, true] {
        let err = w.journal.undo(1, force, 2).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }
    assert_eq!(fs::read_to_string(outside.join("new.rs")).unwrap(), "someone else's");
    assert!(!outside.join("lib.rs").exists());
}
