use super::*;

fn log_with(n: usize) -> (tempfile::TempDir, AuditLog) {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::new(dir.path().join("audit").join("ws.jsonl"));
    for i in 0..n {
        let mut ev = NewEvent::new("sess", EventKind::PreToolUse);
        ev.tool = Some("Bash".into());
        ev.decision = Some(if i % 2 == 0 { "allow" } else { "deny" }.into());
        ev.reasons = if i % 2 == 0 { vec![] } else { vec!["destructive-rm-root".into()] };
        ev.details = Some(serde_json::json!({"i": i}));
        log.append(ev).unwrap();
    }
    (dir, log)
}

fn lines(log: &AuditLog) -> Vec<String> {
    std::fs::read_to_string(log.path()).unwrap().lines().map(String::from).collect()
}

fn write_lines(log: &AuditLog, lines: &[String]) {
    let mut text = lines.join("\n");
    if !lines.is_empty() {
        text.push('\n');
    }
    std::fs::write(log.path(), text).unwrap();
}

fn first_bad(log: &AuditLog) -> Option<u64> {
    log.verify().unwrap().problem.map(|p| p.line)
}

#[test]
fn a_fresh_chain_verifies() {
    let (_d, log) = log_with(5);
    let r = log.verify().unwrap();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.events, 5);
    let evs = log.tail(2).unwrap();
    assert_eq!(evs.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
    assert_eq!(evs[0].prev_hash, log.tail(3).unwrap()[0].hash);
}

#[test]
fn an_empty_or_missing_log_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::new(dir.path().join("none.jsonl"));
    assert!(log.verify().unwrap().is_ok());
}

#[test]
fn detects_an_edited_field() {
    let (_d, log) = log_with(5);
    let mut l = lines(&log);
    assert!(l[1].contains("\"decision\":\"deny\""));
    l[1] = l[1].replace("\"decision\":\"deny\"", "\"decision\":\"allow\"");
    write_lines(&log, &l);
    assert_eq!(first_bad(&log), Some(2));
}

#[test]
fn detects_an_edit_with_a_recomputed_hash() {
    let (_d, log) = log_with(5);
    let mut l = lines(&log);
    let mut ev: AuditEvent = serde_json::from_str(&l[1]).unwrap();
    ev.decision = Some("allow".into());
    ev.reasons.clear();
    ev.hash = ev.compute_hash();
    l[1] = ev.to_line();
    write_lines(&log, &l);
    // Line 2 is self-consistent now, so the break shows at line 3.
    assert_eq!(first_bad(&log), Some(3));
}

#[test]
fn detects_reformatting() {
    let (_d, log) = log_with(3);
    let mut l = lines(&log);
    l[0] = l[0].replacen(',', ", ", 1);
    write_lines(&log, &l);
    assert_eq!(first_bad(&log), Some(1));
}

#[test]
fn detects_a_deleted_line() {
    let (_d, log) = log_with(5);
    let mut l = lines(&log);
    l.remove(2);
    write_lines(&log, &l);
    assert_eq!(first_bad(&log), Some(3));
}

#[test]
fn detects_an_inserted_line() {
    let (_d, log) = log_with(5);
    let mut l = lines(&log);
    let dup = l[1].clone();
    l.insert(2, dup);
    write_lines(&log, &l);
    assert_eq!(first_bad(&log), Some(3));
}

#[test]
fn detects_reordered_lines() {
    let (_d, log) = log_with(5);
    let mut l = lines(&log);
    l.swap(1, 3);
    write_lines(&log, &l);
    assert_eq!(first_bad(&log), Some(2));
}

#[test]
fn detects_lines_cut_off_the_end() {
    let (_d, log) = log_with(5);
    let mut l = lines(&log);
    l.truncate(3);
    write_lines(&log, &l);
    let r = log.verify().unwrap();
    assert_eq!(r.problem.as_ref().map(|p| p.line), Some(4), "{r:?}");
    assert!(r.problem.unwrap().message.contains("cut off"));
}

#[test]
fn detects_truncation_mid_line() {
    let (_d, log) = log_with(3);
    let text = std::fs::read(log.path()).unwrap();
    std::fs::write(log.path(), &text[..text.len() - 10]).unwrap();
    assert_eq!(first_bad(&log), Some(3));
    // And nothing more can be chained to a torn tail.
    assert!(matches!(log.append(NewEvent::new("s", EventKind::Stop)), Err(AuditError::BrokenTail(_))));
}

#[test]
fn detects_a_deleted_log_or_head() {
    let (_d, log) = log_with(2);
    std::fs::remove_file(log.head_path()).unwrap();
    assert_eq!(first_bad(&log), Some(0));
    let (_d2, log2) = log_with(2);
    std::fs::remove_file(log2.path()).unwrap();
    assert!(log2.verify().unwrap().problem.unwrap().message.contains("missing"));
}

#[test]
fn tolerates_a_head_that_lags_by_one_event() {
    let (_d, log) = log_with(3);
    let head = std::fs::read_to_string(log.head_path()).unwrap();
    log.append(NewEvent::new("s", EventKind::Stop)).unwrap();
    std::fs::write(log.head_path(), head).unwrap();
    assert!(log.verify().unwrap().is_ok());
    // But not one that lags with a hash from elsewhere.
    std::fs::write(log.head_path(), format!("3 {}\n", "a".repeat(64))).unwrap();
    assert!(!log.verify().unwrap().is_ok());
}

#[test]
fn concurrent_appenders_never_fork_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let log = AuditLog::new(path);
                for _ in 0..100 {
                    log.append(NewEvent::new(format!("t{t}"), EventKind::PreToolUse)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let r = AuditLog::new(&path).verify().unwrap();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.events, 800);
}

#[test]
fn files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (d, log) = log_with(1);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(log.path()), 0o600);
    assert_eq!(mode(log.head_path()), 0o600);
    assert_eq!(mode(&d.path().join("audit")), 0o700);
}
