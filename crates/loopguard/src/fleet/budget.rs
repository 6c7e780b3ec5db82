//! Shared budgets, the host's side: what this host spent today (kept by the hook in the day
//! totals, `breaker/days.state`), what the fleet reserved for it (written into the mirror by the
//! agent), and the hook's rule for spending from a reservation.
//!
//! Money is counted in micro-dollars (`i64`), never in floating point: the fleet's ledger must
//! reconcile to the cent with what the hosts report.
//!
//! **What a hook can bound.** The hook sees spend only after a model turn has happened (the
//! transcript's usage). Every answer it gives is followed by one more turn (the model reacts to
//! the result, or to the refusal). So each session holds at most one turn *in flight*, estimated
//! at the largest turn this host has seen today (at least a tenth of a reservation); the hook
//! lets a call through only when the spent, the other sessions' turns in flight and two turns
//! of this one (the call's own follow-up and the turn that will react to a later refusal) fit
//! in the reservation. A turn larger than every turn before it can still overshoot; the
//! ledger settles what was actually spent and records any overshoot, it does not pretend.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A turn left in flight longer than this is forgotten (its session ended without another
/// call; an in-flight estimate must not hold a reservation forever).
pub const TURN_TTL: i64 = 15 * 60;
/// Sessions in flight kept per day (the oldest are dropped beyond it).
const MAX_IN_FLIGHT: usize = 256;
/// Repositories tracked per day.
const MAX_REPOS: usize = 256;

/// USD to micro-dollars, rounded to the nearest.
pub fn micro(usd: f64) -> i64 {
    let m = (usd * 1e6).round();
    if m.is_finite() { m.clamp(i64::MIN as f64, i64::MAX as f64) as i64 } else { i64::MAX }
}

/// Micro-dollars as `$1.23` (to the cent, rounded up: a reader must never see less than spent).
pub fn dollars(micro: i64) -> String {
    let cents = micro.saturating_add(9_999).div_euclid(10_000);
    format!("${}.{:02}", cents.div_euclid(100), cents.rem_euclid(100))
}

/// Money and tokens together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Meter {
    /// Micro-dollars.
    pub usd: i64,
    /// Tokens.
    pub tokens: i64,
}

impl Meter {
    /// Both, added (saturating).
    pub fn plus(self, o: Meter) -> Meter {
        Meter { usd: self.usd.saturating_add(o.usd), tokens: self.tokens.saturating_add(o.tokens) }
    }

    /// Each the larger.
    pub fn max(self, o: Meter) -> Meter {
        Meter { usd: self.usd.max(o.usd), tokens: self.tokens.max(o.tokens) }
    }
}

/// A turn the model has still to make after the hook's last answer in a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct InFlight {
    /// The session's repository key (for repository budgets; empty: none).
    pub repo: String,
    /// When the answer was given (Unix seconds).
    pub at: i64,
    /// What the turn is expected to cost.
    pub est: Meter,
}

/// This host's spend on one UTC day, as the hook counted it from the transcripts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FleetDay {
    /// A random name for this ledger, made when it is first written: a ledger that was lost
    /// and started again from zero (a state home reset, a deleted day file) has another one,
    /// and the fleet adds its counts to what the host had reported before instead of taking
    /// them for the day's total.
    pub epoch: String,
    /// Everything spent here today.
    pub spent: Meter,
    /// Turns whose cost could not be computed (USD unknown).
    pub unpriced: i64,
    /// Per repository key.
    pub repos: BTreeMap<String, Meter>,
    /// The largest single turn seen today.
    pub largest: Meter,
    /// The turn in flight per session.
    pub in_flight: BTreeMap<String, InFlight>,
}

impl FleetDay {
    /// Counts one turn of `session` (its in-flight estimate is settled by it).
    pub fn add_turn(&mut self, session: &str, repo: &str, usd: Option<f64>, tokens: u64) {
        let m = Meter { usd: usd.map_or(0, micro), tokens: i64::try_from(tokens).unwrap_or(i64::MAX) };
        self.spent = self.spent.plus(m);
        self.unpriced = self.unpriced.saturating_add(i64::from(usd.is_none()));
        self.largest = self.largest.max(m);
        if !repo.is_empty() && (self.repos.contains_key(repo) || self.repos.len() < MAX_REPOS) {
            let r = self.repos.entry(repo.to_string()).or_default();
            *r = r.plus(m);
        }
        self.in_flight.remove(session);
    }

    /// What one more turn is expected to cost: the largest seen today, at least a tenth of a
    /// reservation.
    pub fn estimate(&self, reservation: Meter) -> Meter {
        self.largest.max(Meter { usd: reservation.usd / 10, tokens: reservation.tokens / 10 })
    }

    /// Records that `session` has a turn in flight (replacing its earlier one: parallel calls of
    /// one turn lead to one next turn) and forgets turns older than [`TURN_TTL`].
    pub fn set_in_flight(&mut self, session: &str, repo: &str, est: Meter, now: i64) {
        self.in_flight.retain(|_, t| now.saturating_sub(t.at) <= TURN_TTL);
        self.in_flight.insert(session.to_string(), InFlight { repo: repo.to_string(), at: now, est });
        while self.in_flight.len() > MAX_IN_FLIGHT {
            let Some(k) = self.in_flight.iter().min_by_key(|(_, t)| t.at).map(|(k, _)| k.clone()) else { break };
            self.in_flight.remove(&k);
        }
    }

    /// Spent today: the whole host, or one repository.
    pub fn spent_in(&self, repo: Option<&str>) -> Meter {
        match repo {
            None => self.spent,
            Some(r) => self.repos.get(r).copied().unwrap_or_default(),
        }
    }

    /// Spent plus in flight (all sessions but `except`) for a scope: the whole host, or one
    /// repository.
    pub fn committed(&self, repo: Option<&str>, except: &str, now: i64) -> Meter {
        let spent = self.spent_in(repo);
        self.in_flight
            .iter()
            .filter(|(s, t)| s.as_str() != except && now.saturating_sub(t.at) <= TURN_TTL)
            .filter(|(_, t)| repo.is_none_or(|r| t.repo == r))
            .fold(spent, |acc, (_, t)| acc.plus(t.est))
    }

    /// Spent plus every turn in flight: what the agent must have reserved.
    pub fn needed(&self, repo: Option<&str>, now: i64) -> Meter {
        self.committed(repo, "", now)
    }
}

/// An operator's budget definition, as stored in `loopguard_budget_def` and signed like a
/// position: a budget that is new or stricter is taken as it comes; raising or removing one
/// (both limits empty) needs a pinned operator's signature and a version newer than every
/// signed one seen for the scope.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BudgetDef {
    /// The fleet.
    pub fleet: String,
    /// The scope.
    pub scope: String,
    /// Micro-dollars a day (`None`: not limited).
    pub usd_limit: Option<i64>,
    /// Tokens a day.
    pub token_limit: Option<i64>,
    /// Grows with every change, fleet-wide (the positions' sequence).
    pub version: i64,
    /// Who set it.
    pub set_by: String,
    /// When.
    pub set_at: i64,
    /// The signer's public key (hex), or empty.
    pub key: String,
    /// Ed25519 signature (hex) over [`BudgetDef::signed_bytes`], or empty.
    pub sig: String,
}

impl BudgetDef {
    /// The bytes a signature covers.
    pub fn signed_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&(
            "loopguard-fleet-budget-v1",
            &self.fleet,
            &self.scope,
            self.usd_limit,
            self.token_limit,
            self.version,
            &self.set_by,
            self.set_at,
        ))
        .unwrap_or_default()
    }

    /// Signs it.
    pub fn sign(mut self, key: &loopguard_audit::SigningKey) -> BudgetDef {
        (self.key, self.sig) = super::sig::sign(key, &self.signed_bytes());
        self
    }

    /// Signed by one of `pinned`.
    pub fn signed_by(&self, pinned: &[String]) -> bool {
        super::sig::signed_by(pinned, (&self.key, &self.sig), &self.signed_bytes())
    }

    /// A removal (both limits empty).
    pub fn removed(&self) -> bool {
        self.usd_limit.is_none() && self.token_limit.is_none()
    }

    /// Whether it is no looser than `than` on either meter (`None` is no limit).
    fn no_looser(&self, than: &BudgetDef) -> bool {
        let le = |a: Option<i64>, b: Option<i64>| match (a, b) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => a <= b,
        };
        !self.removed() && le(self.usd_limit, than.usd_limit) && le(self.token_limit, than.token_limit)
    }
}

/// The budget definitions a host took, by scope, with the highest signed version seen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Defs {
    /// Accepted, by scope (removals kept, as the floor for later ones).
    pub scopes: BTreeMap<String, BudgetDef>,
    /// The highest version signed by a pinned key seen per scope.
    pub signed: BTreeMap<String, i64>,
}

impl Defs {
    /// Takes `d` as the rules allow (see [`BudgetDef`]). `Ok(false)`: nothing changes;
    /// `Err(why)`: refused.
    pub fn accept(&mut self, d: &BudgetDef, fleet: &str, pinned: &[String]) -> Result<bool, String> {
        if d.fleet != fleet || !valid_scope(&d.scope) {
            return Err(format!("budget {}: not a budget of this fleet", d.scope));
        }
        let current = self.scopes.get(&d.scope);
        if current == Some(d) {
            return Ok(false);
        }
        let signed = d.signed_by(pinned);
        let floor = self.signed.get(&d.scope).copied().unwrap_or(0);
        let tighter = match current {
            None => !d.removed(),
            Some(c) => d.no_looser(c),
        };
        if !tighter {
            if !signed {
                return Err(format!(
                    "budget {} version {}: it raises or removes a budget and is not signed by a pinned operator key",
                    d.scope, d.version
                ));
            }
            if d.version <= floor {
                return Err(format!(
                    "budget {} version {}: not newer than the one accepted (a replay)",
                    d.scope, d.version
                ));
            }
        } else if current.is_some_and(|c| d.version <= c.version && d.no_looser(c) && c.no_looser(d)) {
            return Ok(false);
        }
        if signed {
            self.signed.insert(d.scope.clone(), floor.max(d.version));
        }
        self.scopes.insert(d.scope.clone(), d.clone());
        Ok(true)
    }

    /// The limits in force for a scope (`None`: no budget).
    pub fn limits(&self, scope: &str) -> Option<(Option<i64>, Option<i64>)> {
        self.scopes.get(scope).filter(|d| !d.removed()).map(|d| (d.usd_limit, d.token_limit))
    }
}

/// One fleet budget as reserved for this host (written into the mirror by the agent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Allowance {
    /// `*`, `group:NAME` or `repo:KEY`.
    pub scope: String,
    /// The UTC day (`YYYY-MM-DD`).
    pub day: String,
    /// The fleet-wide limits (micro-dollars, tokens), for the words of a refusal.
    pub usd_limit: Option<i64>,
    /// Tokens.
    pub token_limit: Option<i64>,
    /// What the fleet reserved for this host today.
    pub granted: Meter,
    /// What the fleet had counted for this host before the local ledger's epoch began (the
    /// local counts start from zero in a new epoch).
    pub base: Meter,
    /// Until when this host may spend from it, by this host's clock (the fleet's lease, less a
    /// margin for clock drift and the agent's round).
    pub lease_until: i64,
    /// The fleet has nothing left to reserve (its last top-up came back short).
    pub exhausted: bool,
}

/// Which of the mirror's budgets bind a call: today's and the scope's. A budget known for
/// another day only (the day turned, the agent has not reserved yet) binds with nothing
/// reserved.
fn binding<'a>(all: &'a [Allowance], today: &str, repo: &str) -> Vec<(String, Option<&'a Allowance>)> {
    let mut scopes: Vec<&str> = all
        .iter()
        .map(|a| a.scope.as_str())
        .filter(|s| s.strip_prefix("repo:").is_none_or(|r| !repo.is_empty() && r == repo))
        .collect();
    scopes.sort_unstable();
    scopes.dedup();
    scopes.into_iter().map(|s| (s.to_string(), all.iter().find(|a| a.scope == s && a.day == today))).collect()
}

/// What the hook asks about one call of `session`.
pub struct Ask<'a> {
    /// The session.
    pub session: &'a str,
    /// The workspace's repository key (empty: none).
    pub repo: &'a str,
    /// Today (UTC).
    pub today: &'a str,
    /// Now (Unix seconds).
    pub now: i64,
    /// The host reports spend to hooks and the session's transcript reads (no spend may go
    /// unmeasured against a fleet budget).
    pub spend_measured: bool,
    /// The reservation size (for the turn estimate).
    pub reservation: Meter,
}

/// Where the hook asks the agent for a reservation at once (it waits for the database's
/// notifications in slices and looks for this file between them).
pub fn wake_path(state: &std::path::Path) -> std::path::PathBuf {
    state.join("fleet").join("wake")
}

/// The hook's rule: `Some(why)` when the call may not spend from the fleet's budgets.
pub fn refusal(budgets: &[Allowance], day: &FleetDay, q: &Ask<'_>) -> Option<String> {
    refused(budgets, day, q).map(|(why, _)| why)
}

/// Like [`refusal`], with whether the agent may be able to reserve more (the budget is not
/// spent): then it is worth waking.
pub fn refused(budgets: &[Allowance], day: &FleetDay, q: &Ask<'_>) -> Option<(String, bool)> {
    let bound = binding(budgets, q.today, q.repo);
    if bound.is_empty() {
        return None;
    }
    if !q.spend_measured {
        return Some((
            "this session's spend cannot be measured here (the host reports none to hooks, or its transcript does not read), so the fleet's budget cannot be kept".into(),
            false,
        ));
    }
    let est = day.estimate(q.reservation);
    for (scope, a) in bound {
        let Some(a) = a else {
            return Some((
                format!(
                    "the fleet budget `{scope}` has nothing reserved for this host today yet (the fleet agent reserves it)"
                ),
                true,
            ));
        };
        if q.now > a.lease_until {
            return Some((
                format!(
                    "this host's reservation from the fleet budget `{scope}` lapsed {} s ago (the fleet agent has not renewed it: the database may be away)",
                    q.now.saturating_sub(a.lease_until)
                ),
                true,
            ));
        }
        let repo = scope.strip_prefix("repo:");
        if repo.is_some_and(|r| !day.repos.contains_key(r) && day.repos.len() >= MAX_REPOS) {
            return Some((format!("the fleet budget `{scope}`: this host tracks no more repositories today"), false));
        }
        let have = a.base.plus(day.committed(repo, q.session, q.now)).plus(est).plus(est);
        let short_usd = a.usd_limit.is_some() && (have.usd > a.granted.usd || day.unpriced > 0);
        let short_tokens = a.token_limit.is_some() && have.tokens > a.granted.tokens;
        if short_usd || short_tokens {
            // Worth waking the agent unless the budget is spent or the spend has no price.
            let unpriced = short_usd && day.unpriced > 0;
            return Some((words(&scope, a, day, repo, short_usd), !(a.exhausted || unpriced)));
        }
    }
    None
}

fn words(scope: &str, a: &Allowance, day: &FleetDay, repo: Option<&str>, usd: bool) -> String {
    let spent = day.spent_in(repo);
    let fleet = if a.exhausted { "the fleet's budget is spent" } else { "the fleet agent reserves more when it can" };
    if usd && day.unpriced > 0 {
        return format!("the fleet budget `{scope}` is in USD and {} turns here had no price", day.unpriced);
    }
    if usd {
        format!(
            "the fleet budget `{scope}` ({} a day): this host's reservation of {} is used ({} spent, plus the turns in flight); {fleet}",
            a.usd_limit.map_or_else(String::new, dollars),
            dollars(a.granted.usd),
            dollars(spent.usd)
        )
    } else {
        format!(
            "the fleet budget `{scope}` ({} tokens a day): this host's reservation of {} tokens is used ({} spent, plus the turns in flight); {fleet}",
            a.token_limit.unwrap_or(0),
            a.granted.tokens,
            spent.tokens
        )
    }
}

/// A repository's key from its git configuration: the `origin` remote's host and path
/// (`github.com/org/repo`), lower case, without scheme, credentials or `.git`; empty when there
/// is none. A worktree's or submodule's `.git` file is followed to the repository's own config.
pub fn repo_key(workspace: &std::path::Path) -> String {
    let Some(config) = git_config(workspace) else { return String::new() };
    let mut in_origin = false;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_origin = line.replace(' ', "") == "[remote\"origin\"]";
            continue;
        }
        if in_origin
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == "url"
        {
            return normalize_remote(v.trim());
        }
    }
    String::new()
}

/// The text of the repository's config, through `.git` files (`gitdir:`) and `commondir`.
fn git_config(workspace: &std::path::Path) -> Option<String> {
    let dot = workspace.join(".git");
    let mut dir = if dot.is_file() {
        let text = read_small(&dot).ok()?;
        let target = text.trim().strip_prefix("gitdir:")?.trim();
        let p = std::path::Path::new(target);
        if p.is_absolute() { p.to_path_buf() } else { workspace.join(p) }
    } else {
        dot
    };
    if let Ok(common) = read_small(&dir.join("commondir")) {
        let c = std::path::Path::new(common.trim());
        dir = if c.is_absolute() { c.to_path_buf() } else { dir.join(c) };
    }
    read_small(&dir.join("config")).ok()
}

fn read_small(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut s = String::new();
    std::fs::File::open(path)?.take(64 << 10).read_to_string(&mut s)?;
    Ok(s)
}

/// `https://user:pw@GitHub.com/org/repo.git`, `git@github.com:org/repo` → `github.com/org/repo`.
pub fn normalize_remote(url: &str) -> String {
    let url = url.trim_matches('"');
    let rest = match url.split_once("://") {
        Some((_, r)) => r.to_string(),
        // scp-like `user@host:path`
        None => match url.split_once(':') {
            Some((h, p)) if !h.contains('/') => format!("{h}/{p}"),
            _ => return String::new(),
        },
    };
    let rest = rest.rsplit_once('@').map_or(rest.as_str(), |(_, r)| r);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    let path = path.trim_matches('/').trim_end_matches(".git").trim_matches('/');
    if host.is_empty() || path.is_empty() {
        return String::new();
    }
    // Hosting services treat paths without regard to case: `Org/Repo` is `org/repo`.
    format!("{host}/{}", path.to_ascii_lowercase())
}

/// Whether `s` is a budget scope: `*`, `group:NAME` or `repo:KEY`.
pub fn valid_scope(s: &str) -> bool {
    let ok = |x: &str, extra: &[u8]| {
        !x.is_empty()
            && x.len() <= 200
            && x.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b) || extra.contains(&b))
    };
    s == "*"
        || s.strip_prefix("group:").is_some_and(|g| g.len() <= 64 && ok(g, b""))
        || s.strip_prefix("repo:").is_some_and(|r| ok(r, b"/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowance(scope: &str, usd: i64) -> Allowance {
        Allowance {
            scope: scope.into(),
            day: "2026-12-02".into(),
            usd_limit: Some(10_000_000),
            token_limit: None,
            granted: Meter { usd, tokens: 0 },
            base: Meter::default(),
            lease_until: 1_000,
            exhausted: false,
        }
    }

    fn ask<'a>(session: &'a str, repo: &'a str, now: i64) -> Ask<'a> {
        Ask {
            session,
            repo,
            today: "2026-12-02",
            now,
            spend_measured: true,
            reservation: Meter { usd: 1_000_000, tokens: 200_000 },
        }
    }

    fn def(version: i64, usd: Option<i64>) -> BudgetDef {
        BudgetDef {
            fleet: "f".into(),
            scope: "*".into(),
            usd_limit: usd,
            version,
            set_by: "ann".into(),
            ..BudgetDef::default()
        }
    }

    #[test]
    fn a_budget_is_tightened_by_anyone_but_raised_or_removed_only_signed_and_newer() {
        let key = loopguard_audit::SigningKey::from_bytes(&[7u8; 32]);
        let pinned = vec![loopguard_audit::hex(key.verifying_key().as_bytes())];
        let mut d = Defs::default();
        assert_eq!(d.accept(&def(1, Some(10)), "f", &pinned), Ok(true), "a new budget needs no signature");
        assert_eq!(d.accept(&def(2, Some(5)), "f", &pinned), Ok(true), "lowered: taken");
        assert!(d.accept(&def(3, Some(50)), "f", &pinned).is_err(), "raised unsigned");
        assert!(d.accept(&def(3, None), "f", &pinned).is_err(), "removed unsigned");
        let mut other = def(3, Some(5));
        other.token_limit = None;
        other.usd_limit = None;
        assert!(d.accept(&other, "f", &pinned).is_err());
        assert_eq!(d.limits("*"), Some((Some(5), None)));
        let raise = def(4, Some(20)).sign(&key);
        assert_eq!(d.accept(&raise, "f", &pinned), Ok(true), "raised, signed");
        assert_eq!(d.accept(&def(5, Some(8)).sign(&key), "f", &pinned), Ok(true));
        assert!(d.accept(&raise, "f", &pinned).is_err(), "an old signed raise replayed");
        let mut forged = raise.clone();
        forged.usd_limit = Some(1_000);
        assert!(d.accept(&forged, "f", &pinned).is_err(), "a field changed after signing");
        assert_eq!(d.accept(&def(6, None).sign(&key), "f", &pinned), Ok(true), "a signed removal");
        assert_eq!(d.limits("*"), None);
        assert!(d.accept(&def(7, Some(1)), "g", &pinned).is_err(), "another fleet");
    }

    #[test]
    fn money_is_counted_in_micro_dollars_and_shown_rounded_up() {
        assert_eq!(micro(0.1 + 0.2), 300_000);
        assert_eq!(micro(f64::NAN), i64::MAX);
        assert_eq!(dollars(10_000_000), "$10.00");
        assert_eq!(dollars(1), "$0.01");
        assert_eq!(dollars(1_234_567), "$1.24");
    }

    #[test]
    fn a_call_needs_room_for_the_turns_in_flight_and_two_of_its_own() {
        let mut d = FleetDay::default();
        let a = [allowance("*", 1_000_000)];
        // Nothing seen yet: a turn is estimated at a tenth of a reservation ($0.10).
        assert_eq!(refusal(&a, &d, &ask("s1", "", 10)), None);
        d.add_turn("s1", "", Some(0.50), 1000);
        // $0.50 spent, the largest turn is $0.50: 0.50 + 2 × 0.50 > 1.00.
        let why = refusal(&a, &d, &ask("s1", "", 10)).unwrap();
        assert!(why.contains("$1.00") && why.contains("$0.50 spent"), "{why}");
        let mut d = FleetDay::default();
        d.add_turn("s1", "", Some(0.10), 10);
        d.set_in_flight("s2", "", Meter { usd: 100_000, tokens: 0 }, 10);
        d.set_in_flight("s3", "", Meter { usd: 100_000, tokens: 0 }, 10);
        // 0.10 + 0.20 in flight + 2 × 0.10 = 0.50 ≤ 0.60.
        assert_eq!(refusal(&[allowance("*", 600_000)], &d, &ask("s1", "", 10)), None);
        assert!(refusal(&[allowance("*", 450_000)], &d, &ask("s1", "", 10)).is_some());
        // A turn in flight past its time no longer holds the reservation.
        assert_eq!(refusal(&[allowance("*", 450_000)], &d, &ask("s1", "", 10 + TURN_TTL + 1)), None);
    }

    #[test]
    fn no_reservation_for_today_a_lapsed_lease_or_unmeasured_spend_refuse() {
        let d = FleetDay::default();
        let mut old = allowance("*", 5_000_000);
        old.day = "2026-12-01".into();
        assert!(refusal(&[old], &d, &ask("s", "", 10)).unwrap().contains("nothing reserved"));
        assert!(refusal(&[allowance("*", 5_000_000)], &d, &ask("s", "", 1_001)).unwrap().contains("lapsed"));
        let mut q = ask("s", "", 10);
        q.spend_measured = false;
        assert!(refusal(&[allowance("*", 5_000_000)], &d, &q).unwrap().contains("cannot be measured"));
        let mut d = FleetDay::default();
        d.add_turn("s", "", None, 10);
        assert!(refusal(&[allowance("*", 5_000_000)], &d, &ask("s", "", 10)).unwrap().contains("no price"));
        assert_eq!(refusal(&[], &d, &ask("s", "", 10)), None, "no budget, no rule");
    }

    #[test]
    fn a_repository_budget_binds_only_its_repository() {
        let mut d = FleetDay::default();
        d.add_turn("s1", "github.com/o/a", Some(0.90), 10);
        let a = [allowance("repo:github.com/o/a", 1_000_000)];
        assert!(refusal(&a, &d, &ask("s1", "github.com/o/a", 10)).is_some());
        assert_eq!(refusal(&a, &d, &ask("s2", "github.com/o/b", 10)), None, "another repository");
        assert_eq!(refusal(&a, &d, &ask("s2", "", 10)), None, "no repository");
    }

    #[test]
    fn remotes_normalise_to_host_and_path() {
        for (url, key) in [
            ("https://user:pw@GitHub.com/org/repo.git", "github.com/org/repo"),
            ("git@github.com:org/repo.git", "github.com/org/repo"),
            ("ssh://git@gitlab.example:2222/g/sub/r", "gitlab.example/g/sub/r"),
            ("https://github.com/Org/Repo", "github.com/org/repo"),
            ("\"https://github.com/org/repo/\"", "github.com/org/repo"),
            ("/srv/git/repo", ""),
            ("", ""),
        ] {
            assert_eq!(normalize_remote(url), key, "{url}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://x.org/u/v\n[remote \"origin\"]\n\turl = git@github.com:o/a.git\n",
        )
        .unwrap();
        assert_eq!(repo_key(dir.path()), "github.com/o/a");
        // A worktree: `.git` is a file naming the worktree's git dir, whose commondir is the
        // repository's.
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(dir.path().join(".git/worktrees/wt")).unwrap();
        std::fs::write(dir.path().join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", dir.path().join(".git/worktrees/wt").display()))
            .unwrap();
        assert_eq!(repo_key(&wt), "github.com/o/a");
        assert!(valid_scope("repo:github.com/o/a") && valid_scope("*") && valid_scope("group:ci"));
        assert!(!valid_scope("repo:") && !valid_scope("group:a/b") && !valid_scope("team:x"));
    }
}
