use crate::AuditError;
use crate::event::{AuditEvent, GENESIS_HASH};
use std::io::BufRead;
use std::path::Path;

/// The first thing wrong with a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line number (0 when the problem is the head anchor or a missing file).
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

/// What `verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Valid events read before the first problem (all of them when there is none).
    pub events: u64,
    /// Hash of the last valid event.
    pub head_hash: Option<String>,
    /// The first problem, if any.
    pub problem: Option<Problem>,
}

impl VerifyReport {
    /// Whether the log verified.
    pub fn is_ok(&self) -> bool {
        self.problem.is_none()
    }
}

fn head_anchor(head: &Path) -> Result<Option<(u64, String)>, String> {
    let text = match std::fs::read_to_string(head) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("head anchor unreadable: {e}")),
    };
    let mut parts = text.trim_end().splitn(2, ' ');
    match (parts.next().and_then(|s| s.parse().ok()), parts.next()) {
        (Some(seq), Some(hash)) if hash.len() == 64 => Ok(Some((seq, hash.to_string()))),
        _ => Err("head anchor is malformed".into()),
    }
}

pub(crate) fn verify(path: &Path, head: &Path) -> Result<VerifyReport, AuditError> {
    let anchor = head_anchor(head);
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let problem = match anchor {
                Ok(None) => None,
                _ => Some(Problem {
                    line: 0,
                    message: "the log file is missing but its head anchor exists (log deleted)".into(),
                }),
            };
            return Ok(VerifyReport { events: 0, head_hash: None, problem });
        }
        Err(e) => return Err(e.into()),
    };
    let mut reader = std::io::BufReader::new(file);
    let mut prev_hash = GENESIS_HASH.to_string();
    let mut before_last = GENESIS_HASH.to_string();
    let mut count = 0u64;
    let mut buf = Vec::new();
    let mut lineno = 0u64;
    let fail = |line: u64, count: u64, prev: &str, message: String| VerifyReport {
        events: count,
        head_hash: (count > 0).then(|| prev.to_string()),
        problem: Some(Problem { line, message }),
    };
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        lineno += 1;
        if buf.last() != Some(&b'\n') {
            return Ok(fail(lineno, count, &prev_hash, "the last line is incomplete (truncated mid-line)".into()));
        }
        let Ok(line) = std::str::from_utf8(&buf[..buf.len() - 1]) else {
            return Ok(fail(lineno, count, &prev_hash, "not UTF-8".into()));
        };
        let ev = match AuditEvent::parse_line(line) {
            Ok(ev) => ev,
            Err(why) => return Ok(fail(lineno, count, &prev_hash, why)),
        };
        if ev.seq != count + 1 {
            return Ok(fail(
                lineno,
                count,
                &prev_hash,
                format!(
                    "sequence number {} where {} was expected (a line was deleted, inserted or moved)",
                    ev.seq,
                    count + 1
                ),
            ));
        }
        if ev.prev_hash != prev_hash {
            return Ok(fail(
                lineno,
                count,
                &prev_hash,
                "prev_hash does not match the previous line (the chain is broken)".into(),
            ));
        }
        before_last = std::mem::replace(&mut prev_hash, ev.hash);
        count += 1;
    }
    let head_hash = (count > 0).then(|| prev_hash.clone());
    let problem = anchor_problem(anchor, count, &prev_hash, &before_last);
    Ok(VerifyReport { events: count, head_hash, problem })
}

/// What the head anchor says about a log whose chain checked out to `count` events ending in
/// `last` (`before_last`: the hash before it): nothing, cut-off lines, a missing or foreign anchor.
/// An anchor one event behind is a writer that died between its line and the anchor, not tampering.
fn anchor_problem(
    anchor: Result<Option<(u64, String)>, String>,
    count: u64,
    last: &str,
    before_last: &str,
) -> Option<Problem> {
    match anchor {
        Err(message) => Some(Problem { line: 0, message }),
        Ok(None) if count > 0 => Some(Problem { line: 0, message: "the head anchor is missing".into() }),
        Ok(None) => None,
        Ok(Some((seq, hash))) => {
            if seq == count && hash == last {
                None
            } else if seq > count {
                Some(Problem {
                    line: count + 1,
                    message: format!(
                        "the log ends at event {count} but the head anchor records event {seq} (lines were cut off the end)"
                    ),
                })
            } else if seq + 1 == count && hash == before_last {
                // A writer died between appending its line and updating the head: the line is
                // chained correctly, so this is a lagging anchor, not tampering.
                None
            } else {
                Some(Problem {
                    line: 0,
                    message: format!("the head anchor (event {seq}) does not match the log's last event {count}"),
                })
            }
        }
    }
}
