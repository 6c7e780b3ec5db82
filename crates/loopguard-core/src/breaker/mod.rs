//! Circuit breakers: the pure part. Given a run's metrics and the breaker rules, which rules are
//! tripped; given the current breaker state, what the position becomes after new trips, after
//! cooldowns and after a human reset. No clock and no storage here: the caller passes `now`
//! (Unix seconds) and persists [`BreakerState`] (the binary keeps it in SQLite).

pub mod pingpong;
pub mod profiles;
pub mod testcount;
pub mod usage;

use crate::BreakerPosition;
use serde::{Deserialize, Serialize};

/// What a breaker watches. Every trigger reads one field of [`Metrics`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// Tool calls in the run.
    Steps,
    /// Seconds since the run started.
    WallClock,
    /// Tokens used by the run (input, output and cache).
    RunTokens,
    /// US dollars spent by the run.
    RunUsd,
    /// US dollars spent today (UTC), all runs and workspaces together.
    DailyUsd,
    /// US dollars spent in the rule's sliding window (spend velocity).
    SpendVelocity,
    /// Blocked decisions in a row (reset by an allowed call).
    ConsecutiveBlocks,
    /// Calls in the run that carried a secret.
    SecretFindings,
    /// Calls in the run that tried to change loopguard itself.
    SelfProtection,
    /// The most times one region of one file was changed back and forth while tests failed.
    PingPong,
    /// How far the passing-test count fell below the run's best.
    TestDegradation,
    /// Audit or escalation writes that failed in the run.
    EvidenceFailures,
    /// A denylisted path was touched (the HOLD of the paths check).
    Denylist,
    /// A canary credential planted by `loopguard exec` was used or its file read.
    Canary,
    /// The control plane (policy, harness, host settings) no longer matches what a human
    /// approved (`loopguard approve`).
    ApprovalDrift,
    /// A human tripped the breaker by hand (`loopguard breaker trip`); not a policy trigger.
    Manual,
}

impl Trigger {
    /// Every trigger a policy rule can watch.
    pub const ALL: [Trigger; 15] = [
        Trigger::Steps,
        Trigger::WallClock,
        Trigger::RunTokens,
        Trigger::RunUsd,
        Trigger::DailyUsd,
        Trigger::SpendVelocity,
        Trigger::ConsecutiveBlocks,
        Trigger::SecretFindings,
        Trigger::SelfProtection,
        Trigger::PingPong,
        Trigger::TestDegradation,
        Trigger::EvidenceFailures,
        Trigger::Denylist,
        Trigger::Canary,
        Trigger::ApprovalDrift,
    ];

    /// The name used in policy files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Steps => "steps",
            Trigger::WallClock => "wall_clock",
            Trigger::RunTokens => "run_tokens",
            Trigger::RunUsd => "run_usd",
            Trigger::DailyUsd => "daily_usd",
            Trigger::SpendVelocity => "spend_velocity",
            Trigger::ConsecutiveBlocks => "consecutive_blocks",
            Trigger::SecretFindings => "secret_findings",
            Trigger::SelfProtection => "self_protection",
            Trigger::PingPong => "ping_pong",
            Trigger::TestDegradation => "test_degradation",
            Trigger::EvidenceFailures => "evidence_failures",
            Trigger::Denylist => "denylist",
            Trigger::Canary => "canary",
            Trigger::ApprovalDrift => "approval_drift",
            Trigger::Manual => "manual",
        }
    }

    /// Parses a policy name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Statistical triggers need a minimum volume of observations before they may trip; hard caps
    /// trip at once.
    pub fn is_statistical(self) -> bool {
        matches!(self, Trigger::SpendVelocity | Trigger::PingPong | Trigger::TestDegradation)
    }

    /// The unit of the metric, for messages.
    pub fn unit(self) -> &'static str {
        match self {
            Trigger::WallClock => "s",
            Trigger::RunUsd | Trigger::DailyUsd | Trigger::SpendVelocity => "USD",
            Trigger::RunTokens => "tokens",
            Trigger::TestDegradation => "tests",
            _ => "",
        }
    }
}

/// What a tripped breaker does. Ordered from mildest to strictest; the strictest tripped wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TripAction {
    /// Every allow becomes ask; blocks stay blocks.
    RequireApproval,
    /// Cap at PR_ONLY.
    PrOnly,
    /// Cap at READ_ONLY.
    ReadOnly,
    /// STOPPED: nothing runs.
    Stop,
}

impl TripAction {
    /// Every action, mildest first.
    pub const ALL: [TripAction; 4] =
        [TripAction::RequireApproval, TripAction::PrOnly, TripAction::ReadOnly, TripAction::Stop];

    /// The policy name.
    pub fn as_str(self) -> &'static str {
        match self {
            TripAction::RequireApproval => "require_approval",
            TripAction::PrOnly => "pr_only",
            TripAction::ReadOnly => "read_only",
            TripAction::Stop => "stop",
        }
    }

    /// Parses a policy name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// The position the action caps the breaker at (require_approval adds no cap, only the flag).
    pub fn position(self) -> BreakerPosition {
        match self {
            TripAction::RequireApproval => BreakerPosition::FullAuto,
            TripAction::PrOnly => BreakerPosition::PrOnly,
            TripAction::ReadOnly => BreakerPosition::ReadOnly,
            TripAction::Stop => BreakerPosition::Stopped,
        }
    }
}

/// How a trip is cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetRule {
    /// After the cooldown, once the metric is back below the threshold by the hysteresis margin.
    Auto,
    /// Only by a human (`loopguard breaker reset`).
    Manual,
}

impl ResetRule {
    /// The policy name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResetRule::Auto => "auto",
            ResetRule::Manual => "manual",
        }
    }
}

/// One `[[breakers]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakerRule {
    /// What it watches.
    pub trigger: Trigger,
    /// The value at which it trips (`metric >= threshold`).
    pub threshold: f64,
    /// Sliding window in seconds (spend velocity only).
    pub window: Option<u64>,
    /// What it does when tripped.
    pub action: TripAction,
    /// Minimum seconds a trip lasts.
    pub cooldown: u64,
    /// How it is cleared.
    pub reset: ResetRule,
    /// For statistical triggers: observations needed before it may trip.
    pub min_volume: u64,
    /// On `stop`: revert the worktree's changes since the run's base (kept in a stash/backup ref).
    pub revert: bool,
}

impl BreakerRule {
    /// A rule with the usual defaults (10 minute cooldown, manual reset, volume 3, revert on stop).
    pub fn new(trigger: Trigger, threshold: f64, action: TripAction) -> Self {
        BreakerRule {
            trigger,
            threshold,
            window: (trigger == Trigger::SpendVelocity).then_some(600),
            action,
            cooldown: 600,
            reset: ResetRule::Manual,
            min_volume: if trigger.is_statistical() { 2 } else { 0 },
            revert: action == TripAction::Stop,
        }
    }
}

/// A metric's value, with the volume of observations behind it. `None` value: it could not be
/// computed (a transcript that cannot be read, a model without a price).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Reading {
    /// The value, when known.
    pub value: Option<f64>,
    /// How many observations it rests on.
    pub volume: u64,
}

impl Reading {
    /// A known value from `volume` observations.
    pub fn of(value: f64, volume: u64) -> Self {
        Reading { value: Some(value), volume }
    }
    /// A value that could not be computed.
    pub fn unknown() -> Self {
        Reading { value: None, volume: 0 }
    }
}

/// A run's metrics, as the breaker sees them. The caller fills each reading for the triggers it
/// has rules for (spend velocity over the rule's window).
pub trait Metrics {
    /// The reading for a trigger (for spend velocity: over `window` seconds).
    fn reading(&self, trigger: Trigger, window: Option<u64>) -> Reading;
}

/// A rule that is tripped now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tripped {
    /// Which rule (index into the rule list).
    pub rule: usize,
    /// Its trigger.
    pub trigger: Trigger,
    /// Its action.
    pub action: TripAction,
    /// The metric value (`None`: could not be computed, which trips stop/read_only rules).
    pub value: Option<f64>,
    /// The threshold.
    pub threshold: f64,
    /// A sentence for people and the agent.
    pub reason: String,
}

/// Which rules trip on these metrics. A metric that cannot be computed trips `stop` and
/// `read_only` rules (fail closed) and is ignored by milder ones.
pub fn tripped(rules: &[BreakerRule], metrics: &dyn Metrics) -> Vec<Tripped> {
    let mut out = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        let reading = metrics.reading(r.trigger, r.window);
        let hit = match reading.value {
            None => r.action >= TripAction::ReadOnly,
            Some(v) => v >= r.threshold && (!r.trigger.is_statistical() || reading.volume >= r.min_volume),
        };
        if hit {
            let reason = match reading.value {
                Some(v) => format!(
                    "{} reached {} (limit {}{})",
                    r.trigger.as_str(),
                    fmt_value(r.trigger, v),
                    fmt_value(r.trigger, r.threshold),
                    r.window.map(|w| format!(" in {w} s")).unwrap_or_default()
                ),
                None => format!("{} cannot be computed, which counts as tripped (fail closed)", r.trigger.as_str()),
            };
            out.push(Tripped {
                rule: i,
                trigger: r.trigger,
                action: r.action,
                value: reading.value,
                threshold: r.threshold,
                reason,
            });
        }
    }
    out
}

/// A value with its unit, compactly.
pub fn fmt_value(trigger: Trigger, v: f64) -> String {
    match trigger.unit() {
        "USD" => format!("${v:.2}"),
        "" => format!("{v}"),
        u => format!("{v} {u}"),
    }
}

/// An active trip, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trip {
    /// Store id (0 until stored).
    pub id: i64,
    /// What tripped.
    pub trigger: Trigger,
    /// What it does.
    pub action: TripAction,
    /// The value that tripped it.
    pub value: Option<f64>,
    /// The threshold.
    pub threshold: f64,
    /// Why, in words.
    pub reason: String,
    /// The session it tripped in.
    pub session: String,
    /// When (Unix seconds).
    pub at: i64,
    /// Not cleared before this (Unix seconds).
    pub cooldown_until: i64,
    /// How it is cleared.
    pub reset: ResetRule,
}

/// The breaker of one workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakerState {
    /// Where it stands.
    pub position: BreakerPosition,
    /// Every allow becomes ask.
    pub require_approval: bool,
    /// Active trips.
    pub trips: Vec<Trip>,
    /// The position may step up (recover) no earlier than this (Unix seconds).
    pub next_step_at: i64,
    /// Seconds between recovery steps (the cooldown of the trip that cleared last).
    pub step_cooldown: i64,
}

impl Default for BreakerState {
    fn default() -> Self {
        BreakerState {
            position: BreakerPosition::FullAuto,
            require_approval: false,
            trips: Vec::new(),
            next_step_at: 0,
            step_cooldown: 600,
        }
    }
}

/// The position one step less restricted.
pub fn step_up(p: BreakerPosition) -> BreakerPosition {
    match p {
        BreakerPosition::Stopped => BreakerPosition::ReadOnly,
        BreakerPosition::ReadOnly => BreakerPosition::PrOnly,
        BreakerPosition::PrOnly | BreakerPosition::FullAuto => BreakerPosition::FullAuto,
    }
}

impl BreakerState {
    /// Whether anything is tripped (the position is capped or approval is required).
    pub fn is_tripped(&self) -> bool {
        self.position < BreakerPosition::FullAuto || self.require_approval || !self.trips.is_empty()
    }

    /// The position the active trips demand (the strictest).
    pub fn floor(&self) -> BreakerPosition {
        self.trips.iter().map(|t| t.action.position()).min().unwrap_or(BreakerPosition::FullAuto)
    }

    /// Records new trips (a trigger already active with the same action is not recorded twice)
    /// and moves the position down to the strictest. Returns the trips that are new.
    pub fn trip(&mut self, now: i64, session: &str, rules: &[BreakerRule], hits: &[Tripped]) -> Vec<Trip> {
        let mut new = Vec::new();
        for h in hits {
            if self.trips.iter().any(|t| t.trigger == h.trigger && t.action == h.action) {
                continue;
            }
            let Some(rule) = rules.get(h.rule) else { continue };
            let trip = Trip {
                id: 0,
                trigger: h.trigger,
                action: h.action,
                value: h.value,
                threshold: h.threshold,
                reason: h.reason.clone(),
                session: session.to_string(),
                at: now,
                cooldown_until: now.saturating_add(i64::try_from(rule.cooldown).unwrap_or(i64::MAX)),
                reset: rule.reset,
            };
            self.trips.push(trip.clone());
            new.push(trip);
        }
        self.position = self.position.min(self.floor());
        self.require_approval |= self.trips.iter().any(|t| t.action == TripAction::RequireApproval);
        if !new.is_empty() {
            let longest = new.iter().map(|t| t.cooldown_until).max().unwrap_or(now);
            self.next_step_at = self.next_step_at.max(longest);
        }
        new
    }

    /// Clears auto-reset trips whose cooldown is over and whose metric is back below
    /// `threshold × (1 − hysteresis)`, then steps the position up by one (never past what the
    /// remaining trips demand, and only once per cooldown). Returns the cleared trips.
    pub fn recover(&mut self, now: i64, rules: &[BreakerRule], metrics: &dyn Metrics, hysteresis: f64) -> Vec<Trip> {
        let mut cleared = Vec::new();
        let mut kept = Vec::new();
        for t in std::mem::take(&mut self.trips) {
            let ok = t.reset == ResetRule::Auto && now >= t.cooldown_until && {
                let window =
                    rules.iter().find(|r| r.trigger == t.trigger && r.action == t.action).and_then(|r| r.window);
                let r = metrics.reading(t.trigger, window);
                r.value.is_some_and(|v| v < t.threshold * (1.0 - hysteresis))
            };
            if ok { cleared.push(t) } else { kept.push(t) }
        }
        self.trips = kept;
        let floor = self.floor();
        if self.position < floor && now >= self.next_step_at {
            self.position = step_up(self.position).min(floor);
            if let Some(c) = cleared.iter().map(|t| t.cooldown_until - t.at).max() {
                self.step_cooldown = c;
            }
            self.next_step_at = now.saturating_add(self.step_cooldown);
        }
        if !self.trips.iter().any(|t| t.action == TripAction::RequireApproval) && self.position == floor {
            self.require_approval = false;
        }
        cleared
    }

    /// A human reset: clears every trip (or only those of `trigger`) and sets the position to what
    /// the remaining trips demand. Returns the cleared trips.
    pub fn reset(&mut self, trigger: Option<Trigger>) -> Vec<Trip> {
        let (cleared, kept): (Vec<Trip>, Vec<Trip>) =
            std::mem::take(&mut self.trips).into_iter().partition(|t| trigger.is_none_or(|g| g == t.trigger));
        self.trips = kept;
        self.position = self.floor();
        self.require_approval = self.trips.iter().any(|t| t.action == TripAction::RequireApproval);
        self.next_step_at = 0;
        cleared
    }
}

#[cfg(test)]
mod tests;
