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
        (self.key, self.sig) = super::sig::sign(key, &self.signed_bytes());
        self
    }

    /// Whether it carries a valid signature by one of `pinned` (hex public keys).
    pub fn signed_by(&self, pinned: &[String]) -> bool {
        super::sig::signed_by(pinned, (&self.key, &self.sig), &self.signed_bytes())
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
    /// The highest version signed by a pinned key seen for each scope: a loosening must be
    /// newer than it (an unsigned setting never raises it, so a planted huge version cannot
    /// make later operators' settings look old).
    #[serde(default)]
    pub signed: BTreeMap<String, i64>,
    /// The fleet's budgets that bind this host, with what the fleet reserved for it.
    #[serde(default)]
    pub budgets: Vec<super::budget::Allowance>,
    /// The budget definitions this host accepted (and the signed versions seen).
    #[serde(default)]
    pub budget_defs: super::budget::Defs,
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
    /// Takes `s` as the rules allow: anything stricter than what its scope holds, whatever its
    /// version or signature; anything looser only signed by a pinned key and newer than every
    /// signed setting seen for the scope (a replayed old release is older than the stop after
    /// it). `Ok(false)`: nothing changes.
    pub fn accept(&mut self, s: &Setting, pinned: &[String]) -> Result<bool, Refusal> {
        let valid_scope = s.scope == "*"
            || s.scope.strip_prefix("group:").is_some_and(|g| {
                !g.is_empty() && g.len() <= 64 && g.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            });
        let Some(position) = s.parsed().filter(|_| s.fleet == self.fleet && valid_scope) else {
            return Err(Refusal::Invalid);
        };
        let current = self.scopes.get(&s.scope);
        if current == Some(s) {
            return Ok(false);
        }
        let signed = s.signed_by(pinned);
        let floor = self.signed.get(&s.scope).copied().unwrap_or(0);
        let now = current.and_then(Setting::parsed).unwrap_or(BreakerPosition::FullAuto);
        if position > now {
            if !signed {
                return Err(Refusal::Unsigned);
            }
            if s.version <= floor {
                return Err(Refusal::Replayed);
            }
        } else if position == now && current.is_some_and(|c| s.version <= c.version) {
            // The same position again, no newer: nothing to take.
            return Ok(false);
        }
        if signed {
            self.signed.insert(s.scope.clone(), floor.max(s.version));
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
///
/// `spend`: this host's ledger and the call, where spend is counted — a call the fleet's
/// budgets cannot cover is stopped (see [`super::budget::refusal`]).
pub fn hook_cap(
    state: &Path,
    fleet: &str,
    group: Option<&str>,
    pinned: &[String],
    (now, stale_after): (i64, i64),
    spend: Option<(&super::budget::FleetDay, &super::budget::Ask<'_>)>,
) -> Option<(BreakerPosition, String, bool)> {
    let unreachable = |why: String| {
        Some((
            BreakerPosition::ReadOnly,
            format!("{why}: read-only until `loopguard fleet agent` reports again"),
            false,
        ))
    };
    let text = match std::fs::read(mirror_path(state)) {
        Ok(t) => t,
        // Nothing is known of the fleet's positions or budgets: even reading costs model turns
        // a budget may not cover.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some((
                BreakerPosition::Stopped,
                "this host is in a fleet but its fleet agent has never reported: stopped until `loopguard fleet agent` runs".into(),
                false,
            ));
        }
        Err(e) => {
            return Some((BreakerPosition::Stopped, format!("the fleet's positions cannot be read ({e})"), false));
        }
    };
    let m = match serde_json::from_slice::<Mirror>(&text) {
        Ok(m) => m,
        Err(e) => return Some((BreakerPosition::Stopped, format!("the fleet's positions do not read ({e})"), false)),
    };
    if m.fleet != fleet {
        return Some((
            BreakerPosition::Stopped,
            format!(
                "the fleet agent last reported for fleet `{}`, not `{fleet}`: stopped until it reports for this one",
                m.fleet
            ),
            false,
        ));
    }
    let cap = m.cap(group).map(|(p, s)| {
        // Only a signed setting's words reach the agent: unsigned text is anyone's who can
        // write the database.
        let why = if s.signed_by(pinned) {
            format!(
                "the fleet `{}` is set to {} by {} (version {}): {}",
                s.fleet,
                s.position,
                s.set_by,
                s.version,
                bounded(&s.reason)
            )
        } else {
            format!("the fleet `{}` is set to {} (version {}, unsigned)", s.fleet, s.position, s.version)
        };
        (p, why)
    });
    let age = now.saturating_sub(m.checked_at);
    // A stamp from the future (a clock set back) is no proof of a live agent either.
    let stale = age > stale_after || m.checked_at > now.saturating_add(60);
    let cap = match cap {
        Some((p, why)) if p <= BreakerPosition::ReadOnly || !stale => Some((p, why, false)),
        _ if stale => unreachable(format!("the fleet agent last reported {age} s ago")),
        other => other.map(|(p, why)| (p, why, false)),
    };
    // Spend is refused on its own terms (a reservation runs on after the mirror went stale,
    // until it is used or its lease lapses).
    with_spend(state, cap, spend.and_then(|(day, q)| super::budget::refused(&m.budgets, day, q)))
}

/// The fleet's cap and the budgets' refusal together: a stop stays the fleet's; a refusal
/// stops the call, and ends the session where waiting cannot lift it.
fn with_spend(
    state: &Path,
    cap: Option<(BreakerPosition, String, bool)>,
    refused: Option<(String, bool)>,
) -> Option<(BreakerPosition, String, bool)> {
    if let Some((_, true)) = &refused {
        // The agent reserves at once instead of at its next heartbeat.
        let _ = std::fs::File::create(super::budget::wake_path(state));
    }
    match (cap, refused) {
        (Some((BreakerPosition::Stopped, why, _)), _) => Some((BreakerPosition::Stopped, why, false)),
        (_, Some((why, wake))) => Some((BreakerPosition::Stopped, why, !wake)),
        (cap, None) => cap,
    }
}

/// At most 300 characters of a reason.
fn bounded(s: &str) -> String {
    if s.chars().count() <= 300 { s.to_string() } else { format!("{}…", s.chars().take(300).collect::<String>()) }
}

/// Writes the mirror whole (temporary file, then rename).
pub fn write_mirror(state: &Path, m: &Mirror) -> std::io::Result<()> {
    let path = mirror_path(state);
    if let Some(dir) = path.parent() {
        loopguard_audit::create_private_dir(dir)?;
    }
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    std::io::Write::write_all(&mut f, &serde_json::to_vec_pretty(m).map_err(std::io::Error::other)?)?;
    // On disk before it replaces the old one: a crash never leaves an empty mirror.
    f.sync_all()?;
    std::fs::rename(tmp, &path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Reads the mirror (an empty one for `fleet` when there is none yet, or when it was for
/// another fleet). A mirror that exists but does not read is an error: rebuilding it from the
/// database would forget which signed versions were seen and let an old release be replayed.
/// The hook treats it as a stop meanwhile; a human removes it after a look.
pub fn read_mirror(state: &Path, fleet: &str) -> Result<Mirror, String> {
    let path = mirror_path(state);
    let fresh = || Mirror { fleet: fleet.to_string(), ..Mirror::default() };
    match std::fs::read(&path) {
        Ok(t) => match serde_json::from_slice::<Mirror>(&t) {
            Ok(m) if m.fleet == fleet => Ok(m),
            Ok(_) => Ok(fresh()),
            Err(e) => Err(format!(
                "{} does not read ({e}): every call here is stopped until a human checks and removes it",
                path.display()
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(fresh()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
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
        assert_eq!(m.accept(&setting(3, "read-only").sign(&key), &pinned), Ok(true));
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
        let mut odd = setting(6, "stopped");
        odd.scope = "group:a b".into();
        assert_eq!(m.accept(&odd, &pinned), Err(Refusal::Invalid), "not a scope");
        // A planted huge version does not make the operators' later settings look old: a
        // stricter one is taken whatever its version, a signed release lifts the planted stop.
        let mut planted = setting(i64::MAX, "pr-only");
        planted.scope = "*".into();
        let mut fresh = Mirror { fleet: "f".into(), ..Mirror::default() };
        assert_eq!(fresh.accept(&planted, &pinned), Ok(true));
        assert_eq!(fresh.accept(&setting(10, "stopped"), &pinned), Ok(true), "a later stop is taken");
        assert_eq!(fresh.cap(None).map(|c| c.0), Some(BreakerPosition::Stopped));
        assert_eq!(fresh.accept(&setting(11, "full-auto").sign(&key), &pinned), Ok(true), "a signed release");
        assert_eq!(fresh.cap(None), None);
    }

    #[test]
    fn the_hook_fails_closed_on_a_missing_stale_or_damaged_mirror() {
        let dir = tempfile::tempdir().unwrap();
        let cap = |now: i64| hook_cap(dir.path(), "f", None, &[], (now, 60), None);
        let (p, why, _) = cap(1000).unwrap();
        assert_eq!(p, BreakerPosition::Stopped, "no agent has ever reported: nothing known of budgets either");
        assert!(why.contains("never reported"), "{why}");
        std::fs::create_dir_all(dir.path().join("fleet")).unwrap();
        std::fs::write(mirror_path(dir.path()), "{not json").unwrap();
        assert_eq!(cap(1000).map(|c| c.0), Some(BreakerPosition::Stopped));
        assert!(read_mirror(dir.path(), "f").is_err(), "the agent does not rebuild a damaged mirror");
        let mut m = Mirror { fleet: "f".into(), checked_at: 1000, ..Mirror::default() };
        write_mirror(dir.path(), &m).unwrap();
        assert_eq!(cap(1030), None, "fresh, no cap");
        assert_eq!(cap(1100).map(|c| c.0), Some(BreakerPosition::ReadOnly), "stale");
        assert_eq!(cap(800).map(|c| c.0), Some(BreakerPosition::ReadOnly), "stamped in the future");
        assert_eq!(
            hook_cap(dir.path(), "g", None, &[], (1030, 60), None).map(|c| c.0),
            Some(BreakerPosition::Stopped),
            "another fleet's mirror"
        );
        m.accept(&setting(1, "stopped"), &[]).unwrap();
        write_mirror(dir.path(), &m).unwrap();
        let (p, why, _) = cap(1100).unwrap();
        assert_eq!(p, BreakerPosition::Stopped, "a stale stop is still a stop");
        assert!(
            why.contains("stopped") && why.contains("unsigned") && !why.contains("ann"),
            "unsigned words stay out: {why}"
        );
    }
}
