//! Fleet positions: what an operator sets for the whole fleet or one group, how a host decides
//! whether to accept it, and the local mirror the hook reads.
//!
//! The fleet can only tighten a host on its own word: a stricter position is taken as it comes
//! (a forged one costs availability, never safety). Anything that loosens — lifting a stop —
//! must carry an Ed25519 signature by an operator key the host pins in its user policy, over
//! every field including a version that only grows: a forged release fails the signature, a
//! replayed one the version. The fleet never touches the local breaker: its position is a cap
//! on top of it, and local trips and resets stay local and human.

use loopguard_core::BreakerPosition;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One position row, as stored in `loopguard_control`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// The fleet.
    pub fleet: String,
    /// `*` (the whole fleet) or `group:<name>`.
    pub scope: String,
    /// Grows with every change, fleet-wide.
    pub version: i64,
    /// full-auto (no cap), pr-only, read-only, stopped.
    pub position: String,
    /// Why.
    pub reason: String,
    /// Who set it.
    pub set_by: String,
    /// When (Unix seconds).
    pub set_at: i64,
    /// The signer's public key (hex), or empty.
    pub key: String,
    /// Ed25519 signature (hex) over [`Setting::signed_bytes`], or empty.
    pub sig: String,
}

impl Setting {
    /// The bytes a signature covers: every field but the key and the signature, in order.
    pub fn signed_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&(
            "loopguard-fleet-control-v1",
            &self.fleet,
            &self.scope,
            self.version,
            &self.position,
            &self.reason,
            &self.set_by,
            self.set_at,
        ))
        .unwrap_or_default()
    }

    /// Signs it with `key`.
    pub fn sign(mut self, key: &loopguard_audit::SigningKey) -> Setting {
        self.key = loopguard_audit::hex(key.verifying_key().as_bytes());
        self.sig = loopguard_audit::sign_bytes(key, &self.signed_bytes());
        self
    }

    /// Whether it carries a valid signature by one of `pinned` (hex public keys).
    pub fn signed_by(&self, pinned: &[String]) -> bool {
        pinned.iter().any(|p| p.eq_ignore_ascii_case(&self.key))
            && loopguard_audit::verifying_key(&self.key)
                .is_some_and(|k| loopguard_audit::verify_signature(&k, &self.signed_bytes(), &self.sig))
    }

    /// The position it sets (`None`: not a position).
    pub fn parsed(&self) -> Option<BreakerPosition> {
        parse_position(&self.position)
    }
}

/// A position by name.
pub fn parse_position(s: &str) -> Option<BreakerPosition> {
    Some(match s {
        "full-auto" => BreakerPosition::FullAuto,
        "pr-only" => BreakerPosition::PrOnly,
        "read-only" => BreakerPosition::ReadOnly,
        "stopped" => BreakerPosition::Stopped,
        _ => return None,
    })
}

/// The fleet's positions as this host accepted them: the hook reads it
/// (`$LOOPGUARD_HOME/fleet/control.json`, written by the agent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mirror {
    /// The fleet.
    pub fleet: String,
    /// Accepted settings by scope.
    pub scopes: BTreeMap<String, Setting>,
    /// What was refused, most recent last (at most 20): for `fleet status` and the audit log.
    pub refused: Vec<String>,
    /// When the agent last took the fleet's settings (Unix seconds): a mirror nobody refreshes
    /// means the fleet cannot reach this host.
    #[serde(default)]
    pub checked_at: i64,
}

/// Why a setting was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Its version is not newer than the one accepted for its scope (a replay).
    Replayed,
    /// It loosens and is not signed by a pinned operator key.
    Unsigned,
    /// It names no known position, or another fleet.
    Invalid,
}

impl Mirror {
    /// Takes `s` if it is newer and, when it loosens, signed by a pinned key.
    pub fn accept(&mut self, s: &Setting, pinned: &[String]) -> Result<bool, Refusal> {
        let Some(position) = s.parsed().filter(|_| s.fleet == self.fleet) else { return Err(Refusal::Invalid) };
        let current = self.scopes.get(&s.scope);
        if current.is_some_and(|c| s.version <= c.version) {
            return if current == Some(s) { Ok(false) } else { Err(Refusal::Replayed) };
        }
        // Loosening is anything looser than what this scope holds now (nothing yet: no cap).
        let now = current.and_then(Setting::parsed).unwrap_or(BreakerPosition::FullAuto);
        if position > now && !s.signed_by(pinned) {
            return Err(Refusal::Unsigned);
        }
        self.scopes.insert(s.scope.clone(), s.clone());
        Ok(true)
    }

    /// The cap for a host in `group`: the strictest of the fleet's and its group's positions,
    /// with the setting that imposes it.
    pub fn cap(&self, group: Option<&str>) -> Option<(BreakerPosition, &Setting)> {
        let group = group.map(|g| format!("group:{g}"));
        self.scopes
            .iter()
            .filter(|(k, _)| k.as_str() == "*" || Some(k.as_str()) == group.as_deref())
            .filter_map(|(_, s)| Some((s.parsed()?, s)))
            .min_by_key(|(p, _)| *p)
            .filter(|(p, _)| *p < BreakerPosition::FullAuto)
    }
}

/// The mirror file in a state home.
pub fn mirror_path(state: &Path) -> PathBuf {
    state.join("fleet").join("control.json")
}

/// What the hook applies: the mirror's cap for this host. No mirror, or one the agent has not
/// refreshed for `stale_after` seconds, means the fleet cannot reach this host (the agent is not
/// running, or the database is away): read-only at most, until it reports again — a stop the
/// fleet sends meanwhile must not be missed by a host that goes on writing. A mirror that cannot
/// be read is a stop (it is only ever written whole, by rename).
pub fn hook_cap(state: &Path, group: Option<&str>, now: i64, stale_after: i64) -> Option<(BreakerPosition, String)> {
    let unreachable = |why: String| {
        Some((BreakerPosition::ReadOnly, format!("{why}: read-only until `loopguard fleet agent` reports again")))
    };
    let text = match std::fs::read(mirror_path(state)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return unreachable("this host is in a fleet but its fleet agent has never reported".into());
        }
        Err(e) => return Some((BreakerPosition::Stopped, format!("the fleet's positions cannot be read ({e})"))),
    };
    let m = match serde_json::from_slice::<Mirror>(&text) {
        Ok(m) => m,
        Err(e) => return Some((BreakerPosition::Stopped, format!("the fleet's positions do not read ({e})"))),
    };
    let cap = m.cap(group).map(|(p, s)| {
        (
            p,
            format!(
                "the fleet `{}` is set to {} by {} (version {}): {}",
                s.fleet, s.position, s.set_by, s.version, s.reason
            ),
        )
    });
    let age = now.saturating_sub(m.checked_at);
    match cap {
        Some((p, why)) if p <= BreakerPosition::ReadOnly || age <= stale_after => Some((p, why)),
        _ if age > stale_after => unreachable(format!("the fleet agent last reported {age} s ago")),
        other => other,
    }
}

/// Writes the mirror whole (temporary file, then rename).
pub fn write_mirror(state: &Path, m: &Mirror) -> std::io::Result<()> {
    let path = mirror_path(state);
    if let Some(dir) = path.parent() {
        loopguard_audit::create_private_dir(dir)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(m).map_err(std::io::Error::other)?)?;
    std::fs::rename(tmp, path)
}

/// Reads the mirror (an empty one for `fleet` when there is none yet).
pub fn read_mirror(state: &Path, fleet: &str) -> Mirror {
    std::fs::read(mirror_path(state))
        .ok()
        .and_then(|t| serde_json::from_slice::<Mirror>(&t).ok())
        .filter(|m| m.fleet == fleet)
        .unwrap_or_else(|| Mirror { fleet: fleet.to_string(), ..Mirror::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(version: i64, position: &str) -> Setting {
        Setting {
            fleet: "f".into(),
            scope: "*".into(),
            version,
            position: position.into(),
            reason: "r".into(),
            set_by: "ann".into(),
            set_at: 1,
            key: String::new(),
            sig: String::new(),
        }
    }

    #[test]
    fn tightening_is_taken_loosening_needs_a_pinned_signature_and_replays_are_refused() {
        let key = loopguard_audit::SigningKey::from_bytes(&[7u8; 32]);
        let pinned = vec![loopguard_audit::hex(key.verifying_key().as_bytes())];
        let mut m = Mirror { fleet: "f".into(), ..Mirror::default() };
        assert_eq!(m.accept(&setting(1, "stopped"), &pinned), Ok(true), "a stop needs no signature");
        assert_eq!(m.cap(None).map(|c| c.0), Some(BreakerPosition::Stopped));
        assert_eq!(m.accept(&setting(2, "full-auto"), &pinned), Err(Refusal::Unsigned), "a forged release");
        let other = loopguard_audit::SigningKey::from_bytes(&[8u8; 32]);
        assert_eq!(
            m.accept(&setting(2, "full-auto").sign(&other), &pinned),
            Err(Refusal::Unsigned),
            "a key not pinned"
        );
        let mut tampered = setting(2, "full-auto").sign(&key);
        tampered.reason = "changed".into();
        assert_eq!(m.accept(&tampered, &pinned), Err(Refusal::Unsigned), "a field changed after signing");
        let release = setting(2, "full-auto").sign(&key);
        assert_eq!(m.accept(&release, &pinned), Ok(true));
        assert_eq!(m.cap(None), None, "released");
        assert_eq!(m.accept(&setting(3, "read-only"), &pinned), Ok(true));
        assert_eq!(m.accept(&release, &pinned), Err(Refusal::Replayed), "an old release replayed");
        let mut restamped = release.clone();
        restamped.version = 9;
        assert_eq!(m.accept(&restamped, &pinned), Err(Refusal::Unsigned), "an old release with a new version");
        assert_eq!(m.cap(None).map(|c| c.0), Some(BreakerPosition::ReadOnly));
        let mut g = setting(4, "stopped");
        g.scope = "group:ci".into();
        assert_eq!(m.accept(&g, &pinned), Ok(true));
        assert_eq!(m.cap(Some("ci")).map(|c| c.0), Some(BreakerPosition::Stopped));
        assert_eq!(m.cap(Some("dev")).map(|c| c.0), Some(BreakerPosition::ReadOnly), "another group");
        assert_eq!(m.accept(&setting(5, "sideways"), &pinned), Err(Refusal::Invalid));
    }

    #[test]
    fn the_hook_fails_closed_on_a_missing_stale_or_damaged_mirror() {
        let dir = tempfile::tempdir().unwrap();
        let (p, why) = hook_cap(dir.path(), None, 1000, 60).unwrap();
        assert_eq!(p, BreakerPosition::ReadOnly, "no agent has ever reported");
        assert!(why.contains("never reported"), "{why}");
        std::fs::create_dir_all(dir.path().join("fleet")).unwrap();
        std::fs::write(mirror_path(dir.path()), "{not json").unwrap();
        assert_eq!(hook_cap(dir.path(), None, 1000, 60).map(|c| c.0), Some(BreakerPosition::Stopped));
        let mut m = Mirror { fleet: "f".into(), checked_at: 1000, ..Mirror::default() };
        write_mirror(dir.path(), &m).unwrap();
        assert_eq!(hook_cap(dir.path(), None, 1030, 60), None, "fresh, no cap");
        let (p, why) = hook_cap(dir.path(), None, 1100, 60).unwrap();
        assert_eq!(p, BreakerPosition::ReadOnly, "stale: {why}");
        m.accept(&setting(1, "stopped"), &[]).unwrap();
        write_mirror(dir.path(), &m).unwrap();
        let (p, why) = hook_cap(dir.path(), None, 1100, 60).unwrap();
        assert_eq!(p, BreakerPosition::Stopped, "a stale stop is still a stop");
        assert!(why.contains("stopped") && why.contains("ann"), "{why}");
    }
}
