//! Signed checkpoints: Ed25519 signatures over a log's size, chain head and RFC 6962 Merkle root,
//! kept in a file beside the log (`<log>.checkpoints`, in the state home, outside any
//! repository). Checkpoints are chained to each other, and each one is also announced in the log
//! itself (a `checkpoint` event with its number and hash), so neither file can be rolled back
//! without the other disagreeing:
//!
//! - an edited, deleted, reordered or truncated log fails the chain or the head anchor;
//! - a log that *shrank* below a checkpoint, or was *replaced* by a fresh valid chain (with a
//!   fresh head anchor), no longer has the checkpointed event at the checkpointed position;
//! - a forged or edited checkpoint fails its signature (only the holder of the key can sign);
//! - a *rolled-back* checkpoint file (newest checkpoints removed or an older copy restored): the
//!   log still announces the checkpoints that were removed.
//!
//! What local files cannot show: an attacker with the key's file system rights who rolls back the
//! log, the checkpoints and both head anchors together to an older consistent state. Exporting
//! checkpoints elsewhere (`loopguard audit export`) is the answer to that.

use crate::event::{GENESIS_HASH, hex};
use crate::{AuditError, AuditLog, EventKind, NewEvent, create_private_dir};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{BufRead, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// One signed checkpoint. Field order is the canonical (signed) order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// Format version (1).
    pub v: u32,
    /// 1-based checkpoint number.
    pub n: u64,
    /// The log's file name.
    pub log: String,
    /// Events covered (the log's size at signing).
    pub size: u64,
    /// Chain hash of event `size` (the chain head).
    pub head: String,
    /// RFC 6962 Merkle tree hash over the event hashes 1..=size.
    pub root: String,
    /// Bytes of the log holding those events (where the next checkpoint starts reading).
    pub offset: u64,
    /// The roots of the perfect subtrees that make up the tree, largest first (one per set bit
    /// of `size`): enough to extend the tree without reading the events again.
    pub frontier: Vec<String>,
    /// RFC 3339 time of signing.
    pub time: String,
    /// Hash of the previous checkpoint ([`GENESIS_HASH`] for the first).
    pub prev: String,
    /// The signer's Ed25519 public key (hex).
    pub key: String,
    /// Ed25519 signature (hex) over the canonical JSON of all fields before it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sig: String,
}

impl Checkpoint {
    fn signed_bytes(&self) -> Vec<u8> {
        let mut body = self.clone();
        body.sig.clear();
        serde_json::to_vec(&body).unwrap_or_default()
    }

    /// SHA-256 of the whole line (what the next checkpoint and the log's announcement name).
    pub fn hash(&self) -> String {
        hex(&Sha256::digest(serde_json::to_vec(self).unwrap_or_default()))
    }

    /// Whether the signature is valid for `key`.
    pub fn signature_ok(&self, key: &VerifyingKey) -> bool {
        let Some(sig) = unhex::<64>(&self.sig) else { return false };
        hex(key.as_bytes()) == self.key && key.verify(&self.signed_bytes(), &Signature::from_bytes(&sig)).is_ok()
    }
}

fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != N * 2 {
        return None;
    }
    let mut out = [0u8; N];
    for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
        let txt = std::str::from_utf8(chunk).ok()?;
        out[i] = u8::from_str_radix(txt, 16).ok()?;
    }
    Some(out)
}

/// An Ed25519 signature (hex) over bytes.
pub fn sign_bytes(key: &SigningKey, bytes: &[u8]) -> String {
    hex(&key.sign(bytes).to_bytes())
}

/// Whether `sig_hex` is a valid Ed25519 signature of `bytes` by `key`.
pub fn verify_signature(key: &VerifyingKey, bytes: &[u8], sig_hex: &str) -> bool {
    unhex::<64>(sig_hex).is_some_and(|s| key.verify(bytes, &Signature::from_bytes(&s)).is_ok())
}

/// An Ed25519 public key from its hex form.
pub fn verifying_key(hex_key: &str) -> Option<VerifyingKey> {
    VerifyingKey::from_bytes(&unhex::<32>(hex_key.trim())?).ok()
}

/// The signing key of a 32-byte seed (hex).
pub fn signing_key(hex_seed: &str) -> Option<SigningKey> {
    Some(SigningKey::from_bytes(&unhex::<32>(hex_seed.trim())?))
}

/// RFC 6962 Merkle tree hash of leaves (`SHA-256(0x00 || leaf)` at the bottom,
/// `SHA-256(0x01 || left || right)` above, split at the largest power of two below n).
pub fn merkle_root(leaves: &[Vec<u8>]) -> [u8; 32] {
    fn mth(leaves: &[Vec<u8>]) -> [u8; 32] {
        match leaves.len() {
            0 => Sha256::digest([]).into(),
            1 => {
                let mut h = Sha256::new();
                h.update([0u8]);
                h.update(&leaves[0]);
                h.finalize().into()
            }
            n => {
                let k = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
                let (l, r) = (mth(&leaves[..k]), mth(&leaves[k..]));
                let mut h = Sha256::new();
                h.update([1u8]);
                h.update(l);
                h.update(r);
                h.finalize().into()
            }
        }
    }
    mth(leaves)
}

fn node(l: &[u8], r: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(l);
    h.update(r);
    h.finalize().into()
}

fn leaf_hash(leaf: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(leaf);
    h.finalize().into()
}

/// An RFC 6962 tree kept as its frontier: the roots of its perfect subtrees, largest first, with
/// their sizes. Appending is a binary increment; the root folds the frontier from the right.
#[derive(Debug, Clone, Default, PartialEq)]
struct Frontier(Vec<(u64, [u8; 32])>);

impl Frontier {
    fn push(&mut self, leaf: &[u8]) {
        let mut cur = (1u64, leaf_hash(leaf));
        while let Some(&(size, h)) = self.0.last() {
            if size != cur.0 {
                break;
            }
            self.0.pop();
            cur = (size * 2, node(&h, &cur.1));
        }
        self.0.push(cur);
    }

    fn root(&self) -> [u8; 32] {
        let mut it = self.0.iter().rev();
        let Some(&(_, mut r)) = it.next() else { return Sha256::digest([]).into() };
        for (_, h) in it {
            r = node(h, &r);
        }
        r
    }

    fn to_hex(&self) -> Vec<String> {
        self.0.iter().map(|(_, h)| hex(h)).collect()
    }

    /// The frontier of a tree of `size` leaves from its hex form (sizes from the set bits).
    fn from_hex(size: u64, hashes: &[String]) -> Option<Frontier> {
        let sizes: Vec<u64> = (0..64).rev().map(|b| 1u64 << b).filter(|bit| size & bit != 0).collect();
        if sizes.len() != hashes.len() {
            return None;
        }
        let mut out = Vec::new();
        for (s, h) in sizes.into_iter().zip(hashes) {
            out.push((s, unhex::<32>(h)?));
        }
        Some(Frontier(out))
    }
}

/// The event hashes (as leaves) of the first events of a log, up to the first line that does not
/// read (verify reports that line).
/// Each with the byte offset just past its line.
fn leaves(log: &AuditLog) -> Result<Vec<(u64, String, u64)>, AuditError> {
    let file = match std::fs::File::open(log.path()) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    let mut offset = 0u64;
    for line in std::io::BufReader::new(file).lines() {
        let line = line?;
        offset += line.len() as u64 + 1;
        match crate::AuditEvent::parse_line(&line) {
            Ok(ev) => out.push((ev.seq, ev.hash, offset)),
            Err(_) => break,
        }
    }
    Ok(out)
}

impl AuditLog {
    /// The checkpoint file of this log.
    pub fn checkpoints_path(&self) -> PathBuf {
        let mut p = self.path().as_os_str().to_owned();
        p.push(".checkpoints");
        PathBuf::from(p)
    }

    /// The checkpoints, in order. Lines that do not parse are an error naming the line.
    pub fn checkpoints(&self) -> Result<Vec<Checkpoint>, String> {
        let text = match std::fs::read_to_string(self.checkpoints_path()) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(format!("checkpoints unreadable: {e}")),
        };
        text.lines()
            .enumerate()
            .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("checkpoint line {}: {e}", i + 1)))
            .collect()
    }

    /// Signs a checkpoint over the log as it is now, appends it to the checkpoint file and
    /// announces it in the log. Only the events since the last checkpoint are read (a session end
    /// must not reread a log of months): they must chain to it and verify — a checkpoint never
    /// blesses a tampered tail — and the tree is extended from the last checkpoint's frontier, so
    /// a tampered older part cannot enter a new checkpoint either (`audit verify` reports it).
    /// Checkpoints of one log are serialised with a lock on the checkpoint file.
    pub fn checkpoint(&self, key: &SigningKey, session: &str) -> Result<Checkpoint, String> {
        use std::io::{Read, Seek, SeekFrom};
        if let Some(dir) = self.checkpoints_path().parent() {
            create_private_dir(dir).map_err(|e| e.to_string())?;
        }
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(self.checkpoints_path())
            .map_err(|e| e.to_string())?;
        f.lock().map_err(|e| e.to_string())?;
        let cps = self.checkpoints()?;
        let last = cps.last();
        let (mut size, mut head, mut offset) =
            last.map_or((0, GENESIS_HASH.to_string(), 0), |c| (c.size, c.head.clone(), c.offset));
        let mut tree = match last {
            Some(c) => Frontier::from_hex(c.size, &c.frontier)
                .ok_or_else(|| format!("checkpoint {}: its frontier does not match its size", c.n))?,
            None => Frontier::default(),
        };
        let mut log = match std::fs::File::open(self.path()) {
            Ok(l) => Some(l),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && last.is_none() => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err("the log is missing but has checkpoints: not checkpointed".into());
            }
            Err(e) => return Err(e.to_string()),
        };
        if let Some(l) = log.as_mut() {
            let len = l.metadata().map_err(|e| e.to_string())?.len();
            if len < offset {
                return Err(format!(
                    "the log shrank below the last checkpoint ({len} bytes, checkpointed {offset}): not checkpointed"
                ));
            }
            l.seek(SeekFrom::Start(offset)).map_err(|e| e.to_string())?;
            let mut tail = String::new();
            l.read_to_string(&mut tail).map_err(|e| e.to_string())?;
            let complete = tail.rfind('\n').map_or(0, |i| i + 1);
            for line in tail[..complete].lines() {
                let ev = crate::AuditEvent::parse_line(line).map_err(|why| {
                    format!("the log does not verify, so it is not checkpointed: event {}: {why}", size + 1)
                })?;
                if ev.seq != size + 1 || ev.prev_hash != head {
                    return Err(format!(
                        "the log does not verify, so it is not checkpointed: event {} does not chain to the last checkpoint",
                        size + 1
                    ));
                }
                tree.push(ev.hash.as_bytes());
                size = ev.seq;
                offset += line.len() as u64 + 1;
                head = ev.hash;
            }
        }
        let mut cp = Checkpoint {
            v: 1,
            n: cps.len() as u64 + 1,
            log: self.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            size,
            head,
            root: hex(&tree.root()),
            offset,
            frontier: tree.to_hex(),
            time: jiff::Timestamp::now().to_string(),
            prev: cps.last().map_or(GENESIS_HASH.to_string(), Checkpoint::hash),
            key: hex(key.verifying_key().as_bytes()),
            sig: String::new(),
        };
        cp.sig = hex(&key.sign(&cp.signed_bytes()).to_bytes());
        let line = serde_json::to_string(&cp).map_err(|e| e.to_string())? + "\n";
        f.write_all(line.as_bytes()).map_err(|e| e.to_string())?;
        f.sync_data().map_err(|e| e.to_string())?;
        let mut ev = NewEvent::new(session, EventKind::Checkpoint);
        ev.details = Some(serde_json::json!({ "checkpoint": cp.n, "size": cp.size, "hash": cp.hash() }));
        self.append(ev).map_err(|e| e.to_string())?;
        Ok(cp)
    }

    /// Checks every checkpoint against the log and the trusted public key. Returns the number of
    /// checkpoints, or the first problem.
    pub fn verify_checkpoints(&self, trusted: Option<&VerifyingKey>) -> Result<u64, String> {
        let cps = self.checkpoints()?;
        let leaves = leaves(self).map_err(|e| e.to_string())?;
        let mut prev = GENESIS_HASH.to_string();
        let mut last_size = 0;
        for cp in &cps {
            let at = format!("checkpoint {}", cp.n);
            let Some(key) = trusted else {
                return Err(format!("{at}: there is no trusted public key to check it with"));
            };
            if !cp.signature_ok(key) {
                return Err(format!("{at}: the signature is not valid for the trusted key (forged or edited)"));
            }
            if cp.prev != prev {
                return Err(format!("{at}: it does not follow the previous checkpoint (one was removed or reordered)"));
            }
            if cp.size < last_size {
                return Err(format!("{at}: it covers fewer events than the one before"));
            }
            if cp.size > leaves.len() as u64 {
                return Err(format!(
                    "{at} covers {} events but the log has {} (the log shrank)",
                    cp.size,
                    leaves.len()
                ));
            }
            let prefix = &leaves[..cp.size as usize];
            let head = prefix.last().map_or(GENESIS_HASH, |l| l.1.as_str());
            let root = hex(&merkle_root(&prefix.iter().map(|l| l.1.as_bytes().to_vec()).collect::<Vec<_>>()));
            let mut tree = Frontier::default();
            for l in prefix {
                tree.push(l.1.as_bytes());
            }
            let offset = prefix.last().map_or(0, |l| l.2);
            if head != cp.head || root != cp.root || tree.to_hex() != cp.frontier || offset != cp.offset {
                return Err(format!(
                    "{at}: the log's first {} events are not the ones signed (the log was replaced or rewritten)",
                    cp.size
                ));
            }
            prev = cp.hash();
            last_size = cp.size;
        }
        // Every checkpoint the log announces must still be there, unchanged.
        let text = std::fs::read_to_string(self.path()).unwrap_or_default();
        for line in text.lines() {
            let Ok(ev) = crate::AuditEvent::parse_line(line) else { break };
            if ev.kind != EventKind::Checkpoint {
                continue;
            }
            let d = ev.details.unwrap_or_default();
            let (Some(n), Some(hash)) = (d["checkpoint"].as_u64(), d["hash"].as_str()) else {
                return Err(format!("event {}: a checkpoint announcement without its number and hash", ev.seq));
            };
            match cps.get((n as usize).wrapping_sub(1)) {
                Some(cp) if cp.hash() == hash => {}
                Some(_) => return Err(format!("checkpoint {n} is not the one the log announced at event {}", ev.seq)),
                None => {
                    return Err(format!(
                        "the log announces checkpoint {n} at event {} but the checkpoint file ends at {} (checkpoints were rolled back)",
                        ev.seq,
                        cps.len()
                    ));
                }
            }
        }
        Ok(cps.len() as u64)
    }
}

#[cfg(test)]
mod frontier_tests {
    use super::*;

    #[test]
    fn the_frontier_root_equals_the_recursive_merkle_root_for_every_size() {
        let leaves: Vec<Vec<u8>> = (0..70u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let mut f = Frontier::default();
        assert_eq!(f.root(), merkle_root(&[]));
        for n in 1..=leaves.len() {
            f.push(&leaves[n - 1]);
            assert_eq!(f.root(), merkle_root(&leaves[..n]), "size {n}");
            assert_eq!(Frontier::from_hex(n as u64, &f.to_hex()), Some(f.clone()), "size {n}");
        }
        assert_eq!(Frontier::from_hex(5, &["00".repeat(32)]), None, "5 = 4 + 1 needs two roots");
    }
}
