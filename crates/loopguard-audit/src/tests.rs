use super::*;
use sha2::{Digest, Sha256};

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

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn append_some(log: &AuditLog, n: usize) {
    for _ in 0..n {
        log.append(NewEvent::new("sess", EventKind::PostToolUse)).unwrap();
    }
}

#[test]
fn merkle_root_matches_rfc6962_vectors() {
    // The empty tree and a single empty leaf (RFC 6962 §2.1; certificate-transparency test data).
    assert_eq!(hex(&merkle_root(&[])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_eq!(hex(&merkle_root(&[vec![]])), "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
    // Split at the largest power of two below n: [a b c] = H(1 || H(1 || a b) || c).
    let leaf = |x: &[u8]| {
        let mut h = Sha256::new();
        h.update([0u8]);
        h.update(x);
        h.finalize().to_vec()
    };
    let node = |l: &[u8], r: &[u8]| {
        let mut h = Sha256::new();
        h.update([1u8]);
        h.update(l);
        h.update(r);
        h.finalize().to_vec()
    };
    let (a, b, c) = (leaf(b"a"), leaf(b"b"), leaf(b"c"));
    let want = node(&node(&a, &b), &c);
    assert_eq!(merkle_root(&[b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]).to_vec(), want);
}

#[test]
fn checkpoints_sign_and_verify_and_are_announced_in_the_log() {
    let (_d, log) = log_with(5);
    let k = key(7);
    let cp = log.checkpoint(&k, "sess").unwrap();
    assert_eq!((cp.n, cp.size), (1, 5));
    append_some(&log, 3);
    let cp2 = log.checkpoint(&k, "sess").unwrap();
    assert_eq!((cp2.n, cp2.size), (2, 9), "the first announcement is event 6");
    assert_eq!(log.verify_checkpoints(Some(&k.verifying_key())), Ok(2));
    assert!(log.verify().unwrap().is_ok());
    let last = log.tail(1).unwrap().remove(0);
    assert_eq!(last.kind, EventKind::Checkpoint);
    assert_eq!(last.details.unwrap()["hash"], cp2.hash());
    // Another key's view: not valid.
    let err = log.verify_checkpoints(Some(&key(8).verifying_key())).unwrap_err();
    assert!(err.contains("signature is not valid"), "{err}");
    assert!(log.verify_checkpoints(None).unwrap_err().contains("no trusted public key"));
}

#[test]
fn a_tampered_log_is_never_checkpointed() {
    let (_d, log) = log_with(4);
    let mut l = lines(&log);
    l[1] = l[1].replace("\"deny\"", "\"allow\"");
    write_lines(&log, &l);
    assert!(log.checkpoint(&key(1), "s").unwrap_err().contains("does not verify"));
    assert!(log.checkpoints().unwrap().is_empty());
}

#[test]
fn a_whole_log_replaced_by_a_fresh_valid_chain_is_detected() {
    let (_d, log) = log_with(4);
    let k = key(3);
    log.checkpoint(&k, "s").unwrap();
    // A forger writes a brand-new, internally valid chain of the same length and head anchor.
    let (_d2, fresh) = log_with(6);
    std::fs::copy(fresh.path(), log.path()).unwrap();
    std::fs::copy(fresh.head_path(), log.head_path()).unwrap();
    assert!(log.verify().unwrap().is_ok(), "the chain alone cannot tell");
    let err = log.verify_checkpoints(Some(&k.verifying_key())).unwrap_err();
    assert!(err.contains("not the ones signed") || err.contains("announces"), "{err}");
}

#[test]
fn a_log_that_shrank_below_a_checkpoint_is_detected_even_with_a_rewritten_head() {
    let (_d, log) = log_with(6);
    let k = key(4);
    log.checkpoint(&k, "s").unwrap();
    // Cut back to 3 events and rewrite the head anchor to match: the chain verifies again.
    let l = lines(&log);
    write_lines(&log, &l[..3]);
    let third = log.tail(1).unwrap().remove(0);
    std::fs::write(log.head_path(), format!("{:020} {}\n", 3, third.hash)).unwrap();
    assert!(log.verify().unwrap().is_ok());
    let err = log.verify_checkpoints(Some(&k.verifying_key())).unwrap_err();
    assert!(err.contains("the log shrank"), "{err}");
}

#[test]
fn rolled_back_reordered_and_forged_checkpoints_are_detected() {
    let (_d, log) = log_with(3);
    let k = key(5);
    let vk = k.verifying_key();
    log.checkpoint(&k, "s").unwrap();
    append_some(&log, 2);
    log.checkpoint(&k, "s").unwrap();
    let original = std::fs::read_to_string(log.checkpoints_path()).unwrap();
    let cps: Vec<&str> = original.lines().collect();
    // Rollback: the newest checkpoint removed.
    std::fs::write(log.checkpoints_path(), format!("{}\n", cps[0])).unwrap();
    assert!(log.verify_checkpoints(Some(&vk)).unwrap_err().contains("rolled back"));
    // Reordered.
    std::fs::write(log.checkpoints_path(), format!("{}\n{}\n", cps[1], cps[0])).unwrap();
    assert!(log.verify_checkpoints(Some(&vk)).is_err());
    // Forged: a covered size edited (the signature no longer matches).
    let forged = cps[1].replace("\"size\":6", "\"size\":5");
    assert_ne!(forged, cps[1]);
    std::fs::write(log.checkpoints_path(), format!("{}\n{forged}\n", cps[0])).unwrap();
    assert!(log.verify_checkpoints(Some(&vk)).unwrap_err().contains("signature is not valid"));
    // Deleted altogether: the log's announcements still name them.
    std::fs::remove_file(log.checkpoints_path()).unwrap();
    assert!(log.verify_checkpoints(Some(&vk)).unwrap_err().contains("rolled back"));
    std::fs::write(log.checkpoints_path(), &original).unwrap();
    assert_eq!(log.verify_checkpoints(Some(&vk)), Ok(2));
}

#[test]
fn a_checkpoint_reads_only_the_new_events_and_never_launders_an_older_tamper() {
    let (_d, log) = log_with(4);
    let k = key(9);
    let vk = k.verifying_key();
    let first = log.checkpoint(&k, "s").unwrap();
    assert_eq!(
        first.offset,
        std::fs::metadata(log.path()).unwrap().len() - lines(&log).last().unwrap().len() as u64 - 1
    );
    // The older part is edited (and its chain repaired by hand is not even needed): the next
    // checkpoint only reads the new events, and still commits to the original tree.
    append_some(&log, 3);
    let mut l = lines(&log);
    l[0] = l[0].replace("\"i\":0", "\"i\":9");
    write_lines(&log, &l);
    let second = log.checkpoint(&k, "s").unwrap();
    assert_eq!(second.size, 8, "4 events, the first announcement, 3 more");
    assert_eq!(log.verify().unwrap().problem.map(|p| p.line), Some(1), "audit verify names the edited line");
    let err = log.verify_checkpoints(Some(&vk)).unwrap_err();
    assert!(err.contains("checkpoint 1"), "the edited prefix is not what was signed: {err}");
    // A tail that does not chain is refused.
    let (_d2, log2) = log_with(3);
    log2.checkpoint(&k, "s").unwrap();
    append_some(&log2, 2);
    let mut l = lines(&log2);
    let last = l.len() - 1;
    l[last] = l[last].replace("post-tool-use", "pre-tool-use");
    write_lines(&log2, &l);
    assert!(log2.checkpoint(&k, "s").unwrap_err().contains("does not verify"));
    // A log that shrank below the last checkpoint is refused.
    let l = lines(&log2);
    write_lines(&log2, &l[..2]);
    assert!(log2.checkpoint(&k, "s").unwrap_err().contains("shrank"));
}

#[test]
fn concurrent_checkpoints_of_one_log_stay_one_chain() {
    let (_d, log) = log_with(2);
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let log = log.clone();
            std::thread::spawn(move || {
                append_some(&log, 3);
                log.checkpoint(&key(11), &format!("t{i}")).unwrap()
            })
        })
        .collect();
    let mut ns: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap().n).collect();
    ns.sort();
    assert_eq!(ns, [1, 2, 3, 4, 5, 6]);
    assert_eq!(log.verify_checkpoints(Some(&key(11).verifying_key())), Ok(6));
    assert!(log.verify().unwrap().is_ok());
}
