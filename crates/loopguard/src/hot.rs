//! The hot state: what every hook call reads and writes — a workspace's breaker, its runs, its
//! pending trip effects — in one small file per workspace (`<state home>/breaker/<key>.state`),
//! and the day totals (`breaker/days.state`), each read-modify-written under an exclusive
//! `flock`. A hook process opens no database: SQLite (`store.rs`) holds the colder data
//! (operators, break-glass history, the effect and webhook queues the flush works through).
//!
//! Why not SQLite for this too: measured in fresh processes (the hook is one per tool call),
//! opening SQLite and running the breaker transaction cost 0.3–0.5 ms per call on these machines
//! (code pages faulted in, library initialisation, schema parsing), against ~0.13 ms in a warm
//! process; the hook's latency goal (≤ 2× a bare `cat`) did not survive it. A locked file costs
//! an open, a lock, a read and a write.
//!
//! File format: a header line `lgstate1 <body length> <sha256 of body, hex>\n`, then the JSON
//! body, written with one `pwrite` at offset 0 (anything after the body is ignored, so a shorter
//! body needs no truncation first). A body that does not match its checksum is an error (the
//! hook denies): a torn write after a power loss is detected, never trusted. Commits that record
//! a trip are fsynced; counter updates are not (an OS crash may lose the last few).

use crate::model::{Pending, Run, StoreResult, WsDoc};
use loopguard_core::breaker::Trip;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Runs kept per workspace (the most recent).
const MAX_RUNS: usize = 64;
/// Ping-pong regions remembered per run.
const MAX_REGIONS: usize = 256;
/// Days of totals kept.
const MAX_DAYS: usize = 62;
/// Largest state file read.
const MAX_FILE: u64 = 16 << 20;

/// One ping-pong region: the last result and how often it went back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    /// Hash of the region's last text.
    pub last_to: String,
    /// Changes back so far (counted while tests failed).
    pub reversals: i64,
}

/// Everything hot about one workspace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HotDoc {
    /// Breaker, spend history, revocation, waivers.
    pub ws: WsDoc,
    /// Runs by session id.
    pub runs: BTreeMap<String, Run>,
    /// Ping-pong regions by session, then `file\0region`.
    pub regions: BTreeMap<String, BTreeMap<String, Region>>,
    /// Trips whose effects are not queued yet.
    pub pending: Vec<Pending>,
    /// The next trip id.
    pub next_trip: i64,
}

/// USD per UTC day, all workspaces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Days {
    /// `day → (usd, count of unpriced spend)`.
    pub days: BTreeMap<String, (f64, i64)>,
    /// In a fleet: `day →` this host's spend in integer units, per repository, and the turns
    /// in flight (what the fleet agent settles and reserves against).
    pub fleet: BTreeMap<String, crate::fleet::budget::FleetDay>,
}

fn io(path: &Path, e: std::io::Error) -> String {
    format!("state file {}: {e}", path.display())
}

/// An open, exclusively locked state file.
struct Locked {
    file: File,
    path: PathBuf,
}

impl Locked {
    fn open(path: PathBuf) -> StoreResult<Locked> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        file.lock().map_err(|e| io(&path, e))?;
        Ok(Locked { file, path })
    }

    fn read<T: serde::de::DeserializeOwned + Default>(&mut self) -> StoreResult<T> {
        let mut bytes = Vec::new();
        (&self.file).take(MAX_FILE).read_to_end(&mut bytes).map_err(|e| io(&self.path, e))?;
        if bytes.is_empty() {
            return Ok(T::default());
        }
        let bad = |what: &str| {
            format!(
                "state file {} is corrupt ({what}); loopguard denies until a human inspects it",
                self.path.display()
            )
        };
        let nl = bytes.iter().position(|b| *b == b'\n').ok_or_else(|| bad("no header"))?;
        let header = std::str::from_utf8(&bytes[..nl]).map_err(|_| bad("header"))?;
        let mut parts = header.split(' ');
        let (Some("lgstate1"), Some(len), Some(sum), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("header"));
        };
        let len: usize = len.parse().map_err(|_| bad("length"))?;
        let body = bytes.get(nl + 1..nl + 1 + len).ok_or_else(|| bad("short body"))?;
        if crate::state::sha256_hex(body) != sum {
            return Err(bad("checksum"));
        }
        serde_json::from_slice(body).map_err(|e| bad(&e.to_string()))
    }

    fn write<T: Serialize>(&self, value: &T, sync: bool) -> StoreResult<()> {
        let body = serde_json::to_vec(value).map_err(|e| format!("state file {}: {e}", self.path.display()))?;
        let mut out =
            format!("lgstate1 {} {}\n", body.len(), loopguard_audit::hex(&Sha256::digest(&body))).into_bytes();
        out.extend_from_slice(&body);
        self.file.write_all_at(&out, 0).map_err(|e| io(&self.path, e))?;
        if sync {
            self.file.sync_data().map_err(|e| io(&self.path, e))?;
        }
        Ok(())
    }
}

/// The day totals as read, with their lock (`None`: a reader found no file).
type DaysSlot = (Option<Locked>, Days);

/// One hook call's view of the hot state: the workspace document (locked for the whole call)
/// and the day totals (locked on first use).
pub struct HotTx {
    doc: RefCell<HotDoc>,
    /// The day totals and their lock (`None` when a reader found no file: nothing to lock).
    days: RefCell<Option<DaysSlot>>,
    dir: PathBuf,
    /// Only reads (`peek`): a missing day totals file reads as empty instead of being created.
    peek: bool,
    dirty_days: Cell<bool>,
    tripped: Cell<bool>,
}

/// The hot-state directory.
pub fn dir(state_home: &Path) -> PathBuf {
    state_home.join("breaker")
}

/// Runs `f` on the workspace's hot state under its lock, then writes it back (fsynced when a
/// trip was recorded). Errors leave the file as it was.
pub fn write<T>(state_home: &Path, workspace: &str, f: impl FnOnce(&HotTx) -> StoreResult<T>) -> StoreResult<T> {
    let dir = dir(state_home);
    loopguard_audit::create_private_dir(&dir).map_err(|e| io(&dir, e))?;
    let mut ws = Locked::open(dir.join(format!("{workspace}.state")))?;
    let doc: HotDoc = ws.read()?;
    let tx = HotTx::new(doc, dir);
    let out = f(&tx)?;
    let sync = tx.tripped.get();
    if tx.dirty_days.get()
        && let Some((Some(lock), days)) = tx.days.borrow().as_ref()
    {
        lock.write(days, sync)?;
    }
    ws.write(&*tx.doc.borrow(), sync)?;
    Ok(out)
}

/// Like [`write()`] for a transaction that only reads (the workspace document and the day totals,
/// under the same locks): nothing is written back, so a reader — `breaker status`, the
/// dashboard — never changes the files' times or contents.
pub fn peek<T>(state_home: &Path, workspace: &str, f: impl FnOnce(&HotTx) -> StoreResult<T>) -> StoreResult<T> {
    let dir = dir(state_home);
    let path = dir.join(format!("{workspace}.state"));
    // The workspace file stays locked while `f` reads: the document and the day totals agree.
    let mut locked = if path.exists() { Some(Locked::open(path)?) } else { None };
    let doc = match locked.as_mut() {
        Some(l) => l.read()?,
        None => HotDoc::default(),
    };
    let mut tx = HotTx::new(doc, dir);
    tx.peek = true;
    let out = f(&tx);
    drop(locked);
    out
}

/// Reads the workspace's hot state (under the lock, without writing).
pub fn read(state_home: &Path, workspace: &str) -> StoreResult<HotDoc> {
    let path = dir(state_home).join(format!("{workspace}.state"));
    if !path.exists() {
        return Ok(HotDoc::default());
    }
    Locked::open(path)?.read()
}

/// This host's fleet ledger for `day`, read under the day totals' lock (for the fleet agent).
pub fn fleet_day(state_home: &Path, day: &str) -> StoreResult<crate::fleet::budget::FleetDay> {
    let path = dir(state_home).join("days.state");
    if !path.exists() {
        return Ok(Default::default());
    }
    let days: Days = Locked::open(path)?.read()?;
    Ok(days.fleet.get(day).cloned().unwrap_or_default())
}

/// Every workspace key with hot state.
pub fn workspaces(state_home: &Path) -> StoreResult<Vec<String>> {
    let dir = dir(state_home);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(&dir, e)),
    };
    let mut out = Vec::new();
    for e in entries {
        let name = e.map_err(|e| io(&dir, e))?.file_name();
        if let Some(k) = name.to_str().and_then(|n| n.strip_suffix(".state")).filter(|k| *k != "days") {
            out.push(k.to_string());
        }
    }
    out.sort();
    Ok(out)
}

impl HotTx {
    /// A transaction over `doc`, the day totals in `dir` read when first asked for.
    fn new(doc: HotDoc, dir: PathBuf) -> HotTx {
        HotTx {
            doc: RefCell::new(doc),
            days: RefCell::new(None),
            dir,
            dirty_days: Cell::new(false),
            tripped: Cell::new(false),
            peek: false,
        }
    }

    /// The whole document, mutably.
    pub fn doc(&self) -> std::cell::RefMut<'_, HotDoc> {
        self.doc.borrow_mut()
    }

    /// The workspace document (a copy).
    pub fn ws(&self, _workspace: &str) -> StoreResult<WsDoc> {
        Ok(self.doc.borrow().ws.clone())
    }

    /// Replaces the workspace document.
    pub fn set_ws(&self, _workspace: &str, ws: &WsDoc) -> StoreResult<()> {
        self.doc.borrow_mut().ws = ws.clone();
        Ok(())
    }

    /// The run, created (started now) if new.
    pub fn run(&self, workspace: &str, session: &str, now: i64) -> StoreResult<Run> {
        let mut doc = self.doc.borrow_mut();
        if let Some(r) = doc.runs.get(session) {
            return Ok(r.clone());
        }
        let run =
            Run { workspace: workspace.to_string(), session: session.to_string(), started_at: now, ..Run::default() };
        doc.runs.insert(session.to_string(), run.clone());
        // Keep the most recent runs only.
        while doc.runs.len() > MAX_RUNS {
            let Some(oldest) = doc.runs.iter().min_by_key(|(_, r)| r.started_at).map(|(k, _)| k.clone()) else { break };
            doc.runs.remove(&oldest);
            doc.regions.remove(&oldest);
        }
        Ok(run)
    }

    /// Stores a run.
    pub fn save_run(&self, r: &Run) -> StoreResult<()> {
        self.doc.borrow_mut().runs.insert(r.session.clone(), r.clone());
        Ok(())
    }

    fn days(&self) -> StoreResult<std::cell::RefMut<'_, Option<DaysSlot>>> {
        let mut slot = self.days.borrow_mut();
        if slot.is_none() {
            let path = self.dir.join("days.state");
            // A reader on a fresh state home: no totals yet, and a reader creates nothing.
            if self.peek && !path.exists() {
                *slot = Some((None, Days::default()));
                return Ok(slot);
            }
            let mut lock = Locked::open(path)?;
            let days: Days = lock.read()?;
            *slot = Some((Some(lock), days));
        }
        Ok(slot)
    }

    /// Adds spend to the day's total (all workspaces).
    pub fn add_day_spend(&self, day: &str, usd: Option<f64>) -> StoreResult<()> {
        let mut slot = self.days()?;
        if let Some((_, d)) = slot.as_mut() {
            let e = d.days.entry(day.to_string()).or_insert((0.0, 0));
            e.0 += usd.unwrap_or(0.0);
            e.1 += i64::from(usd.is_none());
            while d.days.len() > MAX_DAYS {
                let Some(first) = d.days.keys().next().cloned() else { break };
                d.days.remove(&first);
            }
        }
        self.dirty_days.set(true);
        Ok(())
    }

    /// Runs `f` on this host's fleet ledger for `day` (created if new; days beyond the last
    /// few are dropped).
    pub fn fleet_day<T>(&self, day: &str, f: impl FnOnce(&mut crate::fleet::budget::FleetDay) -> T) -> StoreResult<T> {
        let mut slot = self.days()?;
        let Some((_, d)) = slot.as_mut() else { return Err("the day totals did not open".into()) };
        let entry = d.fleet.entry(day.to_string()).or_default();
        if entry.epoch.is_empty() {
            let mut bytes = [0u8; 8];
            getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the fleet ledger: {e}"))?;
            entry.epoch = loopguard_audit::hex(&bytes);
        }
        let out = f(entry);
        while d.fleet.len() > 3 {
            let Some(first) = d.fleet.keys().next().cloned() else { break };
            d.fleet.remove(&first);
        }
        self.dirty_days.set(true);
        Ok(out)
    }

    /// USD spent on a day, all workspaces; `None` if some spend had no price.
    pub fn daily_usd(&self, day: &str) -> StoreResult<Option<f64>> {
        let slot = self.days()?;
        Ok(match slot.as_ref().and_then(|(_, d)| d.days.get(day)) {
            None => Some(0.0),
            Some((usd, 0)) => Some(*usd),
            Some(_) => None,
        })
    }

    /// Records one region change; returns the region's reversal count after it (a change whose
    /// result differs from the region's last result counts when `counting`: tests were failing).
    pub fn edit(&self, r: &Run, file: &str, region: &str, to: &str, counting: bool) -> StoreResult<i64> {
        let mut doc = self.doc.borrow_mut();
        let regions = doc.regions.entry(r.session.clone()).or_default();
        let key = format!("{file}\0{region}");
        let n = match regions.get(&key) {
            Some(g) if g.last_to != to && counting => g.reversals + 1,
            Some(g) => g.reversals,
            None => 0,
        };
        if regions.len() >= MAX_REGIONS && !regions.contains_key(&key) {
            // Forget the quietest region to make room.
            if let Some(k) = regions.iter().min_by_key(|(_, g)| g.reversals).map(|(k, _)| k.clone()) {
                regions.remove(&k);
            }
        }
        regions.insert(key, Region { last_to: to.to_string(), reversals: n });
        Ok(n)
    }

    /// Records a trip's effects for the flush; returns the trip's id.
    pub fn add_pending(&self, mut p: Pending) -> StoreResult<i64> {
        let mut doc = self.doc.borrow_mut();
        doc.next_trip += 1;
        p.trip.id = doc.next_trip;
        let id = p.trip.id;
        doc.pending.push(p);
        self.tripped.set(true);
        Ok(id)
    }

    /// Replaces a pending trip (same id).
    pub fn set_pending_trip(&self, trip: &Trip) -> StoreResult<()> {
        for p in self.doc.borrow_mut().pending.iter_mut().filter(|p| p.trip.id == trip.id) {
            p.trip = trip.clone();
        }
        Ok(())
    }

    /// Marks the commit as recording a trip (fsynced).
    pub fn mark_tripped(&self) {
        self.tripped.set(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_a_torn_file_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "w", |tx| {
            let mut r = tx.run("w", "s", 10)?;
            r.steps = 3;
            tx.save_run(&r)?;
            tx.add_day_spend("2026-12-01", Some(1.5))
        })
        .unwrap();
        let doc = read(d.path(), "w").unwrap();
        assert_eq!(doc.runs["s"].steps, 3);
        write(d.path(), "w", |tx| {
            assert_eq!(tx.daily_usd("2026-12-01")?, Some(1.5));
            // A shorter body over a longer one: the tail is ignored.
            tx.doc().runs.clear();
            Ok(())
        })
        .unwrap();
        assert!(read(d.path(), "w").unwrap().runs.is_empty());
        let path = dir(d.path()).join("w.state");
        let mut bytes = std::fs::read(&path).unwrap();
        // Flip a byte inside the body (the tail after it is leftover from the longer write).
        let body = bytes.iter().position(|b| *b == b'\n').unwrap() + 5;
        bytes[body] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        let e = read(d.path(), "w").unwrap_err();
        assert!(e.contains("corrupt"), "{e}");
        assert!(write(d.path(), "w", |_| Ok(())).is_err(), "a corrupt file is never overwritten blindly");
        assert_eq!(workspaces(d.path()).unwrap(), ["w"]);
    }

    #[test]
    fn reversals_count_only_changes_back_while_tests_fail() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "w", |tx| {
            let r = tx.run("w", "s", 0)?;
            assert_eq!(tx.edit(&r, "f", "ab", "b", true)?, 0);
            assert_eq!(tx.edit(&r, "f", "ab", "a", true)?, 1);
            assert_eq!(tx.edit(&r, "f", "ab", "a", true)?, 1, "the same result again is no reversal");
            assert_eq!(tx.edit(&r, "f", "ab", "b", false)?, 1, "tests passing: not counted");
            assert_eq!(tx.edit(&r, "f", "ab", "a", true)?, 2);
            assert_eq!(tx.edit(&r, "g", "ab", "b", true)?, 0, "another file");
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn runs_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "w", |tx| {
            for i in 0..100 {
                tx.run("w", &format!("s{i}"), i)?;
            }
            Ok(())
        })
        .unwrap();
        let doc = read(d.path(), "w").unwrap();
        assert_eq!(doc.runs.len(), MAX_RUNS);
        assert!(doc.runs.contains_key("s99") && !doc.runs.contains_key("s0"));
    }
}
