//! Audit shipping: every local audit log copied, append-only, into `loopguard_audit`, each
//! line checked before it leaves (canonical form, its own hash, `seq` one more than the last,
//! `prev_hash` the last line's hash) and against what the fleet already holds (the line before
//! the first one sent is the one this host sent before). Inserting is idempotent: a retry after
//! a lost connection sends the same lines again and changes nothing; a line that differs from
//! what the fleet holds at its position is a problem, recorded and never overwritten.

use loopguard_audit::{AuditEvent, GENESIS_HASH};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Lines sent per log per round (a long backlog goes over several rounds).
const BATCH: usize = 500;

/// Where one log's shipping stands.
#[derive(Debug, Clone, Default)]
struct Cursor {
    /// Last line shipped (0: none) and its hash.
    seq: i64,
    hash: String,
    /// Bytes of the local file up to the end of that line.
    offset: u64,
    /// Why this log is no longer shipped.
    broken: Option<String>,
    /// Whether `offset` is known (after a restart it is found by reading the file once).
    placed: bool,
    /// Checkpoints of the log the fleet holds.
    checkpoints: i64,
}

/// Ships one host's logs.
pub struct Shipper {
    fleet: String,
    host: String,
    logs: HashMap<String, Cursor>,
    /// The state home's key: it signs each shipping cursor, so a database writer who rewrites
    /// a chain cannot make the cursor agree with it.
    key: Option<loopguard_audit::SigningKey>,
}

/// What a host says it has shipped, signed at every round: every log with its last line, that
/// line's hash, its checkpoints and the problem that stopped it, if one did. A database writer
/// cannot delete a log, roll a chain back, drop checkpoints or erase a recorded problem without
/// disagreeing with the newest manifest — and cannot make a fresh one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// Format tag.
    pub v: String,
    /// The fleet.
    pub fleet: String,
    /// The host.
    pub host: String,
    /// When it was signed (the host's clock, Unix seconds).
    pub at: i64,
    /// Every log.
    pub logs: Vec<ManifestLog>,
}

/// One log in a [`Manifest`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ManifestLog {
    /// The log's name.
    pub log: String,
    /// Lines shipped.
    pub seq: i64,
    /// The last one's hash.
    pub hash: String,
    /// Checkpoints shipped.
    pub checkpoints: i64,
    /// Why shipping it stopped.
    pub problem: Option<String>,
}

/// The format tag of a manifest.
pub const MANIFEST_V1: &str = "loopguard-fleet-manifest-v1";

/// The bytes a shipping cursor's signature covers.
pub fn cursor_bytes(fleet: &str, host: &str, log: &str, seq: i64, hash: &str) -> Vec<u8> {
    serde_json::to_vec(&("loopguard-fleet-ship-v1", fleet, host, log, seq, hash)).unwrap_or_default()
}

/// A line ready to go.
struct Line {
    seq: i64,
    hash: String,
    prev: String,
    text: String,
}

impl Shipper {
    /// A shipper for `host` in `fleet`, signing its cursors with `key`.
    pub fn new(fleet: &str, host: &str, key: Option<loopguard_audit::SigningKey>) -> Shipper {
        Shipper { fleet: fleet.into(), host: host.into(), logs: HashMap::new(), key }
    }

    /// Ships what is new in every log of the state home; returns how many lines went.
    pub fn ship(&mut self, client: &mut postgres::Client, state: &Path) -> Result<usize, postgres::Error> {
        let mut sent = 0;
        for (name, path) in logs(state) {
            if !self.logs.contains_key(&name) {
                let c = self.load(client, &name)?;
                self.logs.insert(name.clone(), c);
            }
            let Some(mut c) = self.logs.get(&name).cloned() else { continue };
            if c.broken.is_some() {
                continue;
            }
            if !c.placed {
                place(&mut c, &path);
                if let Some(p) = &c.broken {
                    self.record_problem(client, &name, p)?;
                }
            }
            if c.broken.is_none() {
                self.ship_checkpoints(client, &name, &path, &mut c)?;
                let (lines, end, problem) = read_new(&path, &c);
                if !lines.is_empty() {
                    self.send(client, &name, &mut c, &lines, end)?;
                    sent += lines.len();
                }
                if c.broken.is_none()
                    && let Some(p) = problem
                {
                    c.broken = Some(p.clone());
                    self.record_problem(client, &name, &p)?;
                }
            }
            self.logs.insert(name, c);
        }
        Ok(sent)
    }

    /// Signs and stores this host's manifest (after a round's shipping).
    pub fn publish(&self, client: &mut postgres::Client, at: i64) -> Result<(), postgres::Error> {
        let Some(key) = &self.key else { return Ok(()) };
        let mut logs: Vec<ManifestLog> = self
            .logs
            .iter()
            .map(|(log, c)| ManifestLog {
                log: log.clone(),
                seq: c.seq,
                hash: c.hash.clone(),
                checkpoints: c.checkpoints,
                problem: c.broken.clone(),
            })
            .collect();
        logs.sort_by(|a, b| a.log.cmp(&b.log));
        let m = Manifest { v: MANIFEST_V1.into(), fleet: self.fleet.clone(), host: self.host.clone(), at, logs };
        let body = serde_json::to_string(&m).unwrap_or_default();
        let sig = loopguard_audit::sign_bytes(key, body.as_bytes());
        let public = loopguard_audit::hex(key.verifying_key().as_bytes());
        client.execute(
            "INSERT INTO loopguard_manifest (fleet, host, at, body, key, sig) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (fleet, host) DO UPDATE SET at = EXCLUDED.at, body = EXCLUDED.body, key = EXCLUDED.key, sig = EXCLUDED.sig",
            &[&self.fleet, &self.host, &at, &body, &public, &sig],
        )?;
        Ok(())
    }

    fn load(&self, client: &mut postgres::Client, log: &str) -> Result<Cursor, postgres::Error> {
        let row = client.query_opt(
            "SELECT seq, hash, problem FROM loopguard_ship WHERE fleet = $1 AND host = $2 AND log = $3",
            &[&self.fleet, &self.host, &log],
        )?;
        let checkpoints: i64 = client
            .query_one(
                "SELECT coalesce(max(n), 0)::bigint FROM loopguard_checkpoint WHERE fleet = $1 AND host = $2 AND log = $3",
                &[&self.fleet, &self.host, &log],
            )?
            .get(0);
        Ok(match row {
            Some(r) => Cursor { seq: r.get(0), hash: r.get(1), broken: r.get(2), checkpoints, ..Cursor::default() },
            None => Cursor { hash: GENESIS_HASH.into(), placed: true, checkpoints, ..Cursor::default() },
        })
    }

    /// Sends the log's signed checkpoints the fleet does not hold yet (the file is append-only;
    /// a checkpoint that differs from the one the fleet holds under its number is a problem).
    fn ship_checkpoints(
        &self,
        client: &mut postgres::Client,
        log: &str,
        path: &Path,
        c: &mut Cursor,
    ) -> Result<(), postgres::Error> {
        let mut cp_path = path.as_os_str().to_owned();
        cp_path.push(".checkpoints");
        let Ok(text) = std::fs::read_to_string(PathBuf::from(cp_path)) else { return Ok(()) };
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() as i64 <= c.checkpoints {
            return Ok(());
        }
        let ns: Vec<i64> = (1..=lines.len() as i64).collect();
        let mut tx = client.transaction()?;
        tx.execute(
            "INSERT INTO loopguard_checkpoint (fleet, host, log, n, line)
             SELECT $1, $2, $3, n, l FROM unnest($4::bigint[], $5::text[]) AS t(n, l)
             ON CONFLICT (fleet, host, log, n) DO NOTHING",
            &[&self.fleet, &self.host, &log, &ns, &lines],
        )?;
        let differ: i64 = tx
            .query_one(
                "SELECT count(*) FROM loopguard_checkpoint a JOIN unnest($4::bigint[], $5::text[]) AS t(n, l) ON a.n = t.n
                 WHERE a.fleet = $1 AND a.host = $2 AND a.log = $3 AND a.line <> t.l",
                &[&self.fleet, &self.host, &log, &ns, &lines],
            )?
            .get(0);
        if differ > 0 {
            drop(tx);
            let p = format!("{differ} checkpoint(s) differ from what the fleet already holds");
            c.broken = Some(p.clone());
            return self.record_problem(client, log, &p);
        }
        tx.commit()?;
        c.checkpoints = lines.len() as i64;
        Ok(())
    }

    fn record_problem(&self, client: &mut postgres::Client, log: &str, problem: &str) -> Result<(), postgres::Error> {
        client.execute(
            "INSERT INTO loopguard_ship (fleet, host, log, seq, hash, problem) VALUES ($1, $2, $3, 0, '', $4)
             ON CONFLICT (fleet, host, log) DO UPDATE SET problem = EXCLUDED.problem",
            &[&self.fleet, &self.host, &log, &problem],
        )?;
        Ok(())
    }

    /// One transaction: the lines (existing ones left alone, but compared), then the cursor.
    fn send(
        &self,
        client: &mut postgres::Client,
        log: &str,
        c: &mut Cursor,
        lines: &[Line],
        end: u64,
    ) -> Result<(), postgres::Error> {
        let mut tx = client.transaction()?;
        if let Some(first) = lines.first()
            && first.seq > 1
        {
            let before: Option<String> = tx
                .query_opt(
                    "SELECT hash FROM loopguard_audit WHERE fleet = $1 AND host = $2 AND log = $3 AND seq = $4",
                    &[&self.fleet, &self.host, &log, &(first.seq - 1)],
                )?
                .map(|r| r.get(0));
            if before.as_deref() != Some(first.prev.as_str()) {
                let p = match before {
                    Some(_) => format!("line {} does not follow the line {} the fleet holds", first.seq, first.seq - 1),
                    None => format!("the fleet lacks line {} this host shipped before (deleted there?)", first.seq - 1),
                };
                drop(tx);
                c.broken = Some(p.clone());
                return self.record_problem(client, log, &p);
            }
        }
        let seqs: Vec<i64> = lines.iter().map(|l| l.seq).collect();
        let hashes: Vec<&str> = lines.iter().map(|l| l.hash.as_str()).collect();
        let prevs: Vec<&str> = lines.iter().map(|l| l.prev.as_str()).collect();
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        let inserted = tx.execute(
            "INSERT INTO loopguard_audit (fleet, host, log, seq, hash, prev_hash, line, received_at)
             SELECT $1, $2, $3, s, h, p, l, extract(epoch from now())::bigint
             FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[]) AS t(s, h, p, l)
             ON CONFLICT (fleet, host, log, seq) DO NOTHING",
            &[&self.fleet, &self.host, &log, &seqs, &hashes, &prevs, &texts],
        )?;
        if inserted < lines.len() as u64 {
            // Some were there already (a retry): they must be these very lines.
            let differ: i64 = tx
                .query_one(
                    "SELECT count(*) FROM loopguard_audit a JOIN unnest($4::bigint[], $5::text[]) AS t(s, h) ON a.seq = t.s
                     WHERE a.fleet = $1 AND a.host = $2 AND a.log = $3 AND a.hash <> t.h",
                    &[&self.fleet, &self.host, &log, &seqs, &hashes],
                )?
                .get(0);
            if differ > 0 {
                let p = format!("{differ} line(s) differ from what the fleet already holds at their positions");
                drop(tx);
                c.broken = Some(p.clone());
                return self.record_problem(client, log, &p);
            }
        }
        let last = &lines[lines.len() - 1];
        let (key, sig) = match &self.key {
            Some(k) => (
                loopguard_audit::hex(k.verifying_key().as_bytes()),
                loopguard_audit::sign_bytes(k, &cursor_bytes(&self.fleet, &self.host, log, last.seq, &last.hash)),
            ),
            None => (String::new(), String::new()),
        };
        tx.execute(
            "INSERT INTO loopguard_ship (fleet, host, log, seq, hash, problem, key, sig) VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)
             ON CONFLICT (fleet, host, log) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, key = EXCLUDED.key, sig = EXCLUDED.sig",
            &[&self.fleet, &self.host, &log, &last.seq, &last.hash, &key, &sig],
        )?;
        tx.commit()?;
        c.seq = last.seq;
        c.hash = last.hash.clone();
        c.offset = end;
        Ok(())
    }
}

/// The audit logs of a state home by name (file stem).
fn logs(state: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(state.join("audit")) else { return Vec::new() };
    let mut out: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.strip_suffix(".jsonl")?.to_string();
            Some((name, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// After a restart: finds the end of line `seq` in the local file, and checks that line is the
/// one shipped (a log replaced or rewritten since is a problem, not a fresh start).
fn place(c: &mut Cursor, path: &Path) {
    c.placed = true;
    if c.seq == 0 {
        c.hash = GENESIS_HASH.into();
        return;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        c.broken = Some("the local log cannot be read".into());
        return;
    };
    let mut offset = 0u64;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        offset += line.len() as u64;
        if i as i64 + 1 == c.seq {
            let same = AuditEvent::parse_line(line.trim_end_matches('\n')).is_ok_and(|e| e.hash == c.hash);
            if same {
                c.offset = offset;
            } else {
                c.broken = Some(format!("local line {} is not the one shipped: the log was rewritten", c.seq));
            }
            return;
        }
    }
    c.broken = Some(format!("the local log is shorter than the {} lines shipped: it was cut or replaced", c.seq));
}

/// The whole lines after the cursor (at most [`BATCH`]) that chain on, the offset after them,
/// and the problem that stopped reading early, if one did.
fn read_new(path: &Path, c: &Cursor) -> (Vec<Line>, u64, Option<String>) {
    let read = || -> std::io::Result<Vec<u8>> {
        let mut f = std::fs::File::open(path)?;
        f.seek(SeekFrom::Start(c.offset))?;
        let mut buf = Vec::new();
        f.take(8 << 20).read_to_end(&mut buf)?;
        Ok(buf)
    };
    let Ok(buf) = read() else { return (Vec::new(), c.offset, None) };
    let (mut out, mut end) = (Vec::new(), c.offset);
    let (mut seq, mut hash) = (c.seq, c.hash.clone());
    let whole = buf.len() as u64 == (8 << 20);
    for raw in buf.split_inclusive(|&b| b == b'\n') {
        if raw.last() != Some(&b'\n') {
            // A line longer than one read can never complete: say so rather than wait forever.
            if out.is_empty() && whole {
                return (out, end, Some(format!("line {} is longer than 8 MiB", seq + 1)));
            }
            break;
        }
        if out.len() >= BATCH {
            break;
        }
        let text = String::from_utf8_lossy(&raw[..raw.len() - 1]).into_owned();
        let ev = match AuditEvent::parse_line(&text) {
            Ok(ev) => ev,
            Err(e) => return (out, end, Some(format!("line {} does not read: {e}", seq + 1))),
        };
        let problem = if ev.compute_hash() != ev.hash {
            Some("its hash is not the hash of its content")
        } else if ev.seq as i64 != seq + 1 {
            Some("its position does not follow the last one")
        } else if ev.prev_hash != hash {
            Some("it does not chain to the line before it")
        } else {
            None
        };
        if let Some(p) = problem {
            return (out, end, Some(format!("line {}: {p}", seq + 1)));
        }
        seq += 1;
        hash = ev.hash.clone();
        end += raw.len() as u64;
        out.push(Line { seq, hash: ev.hash, prev: ev.prev_hash, text });
    }
    (out, end, None)
}
