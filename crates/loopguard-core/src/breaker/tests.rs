use super::profiles::Profile;
use super::*;
use std::collections::HashMap;

#[derive(Default)]
struct M(HashMap<Trigger, Reading>);

impl M {
    fn set(mut self, t: Trigger, v: f64, volume: u64) -> Self {
        self.0.insert(t, Reading::of(v, volume));
        self
    }
    fn unknown(mut self, t: Trigger) -> Self {
        self.0.insert(t, Reading::unknown());
        self
    }
}

impl Metrics for M {
    fn reading(&self, t: Trigger, _window: Option<u64>) -> Reading {
        self.0.get(&t).copied().unwrap_or(Reading::of(0.0, 0))
    }
}

fn rule(t: Trigger, threshold: f64, a: TripAction, reset: ResetRule) -> BreakerRule {
    BreakerRule { reset, cooldown: 100, ..BreakerRule::new(t, threshold, a) }
}

#[test]
fn hard_caps_trip_at_the_threshold() {
    let rules = [rule(Trigger::Steps, 20.0, TripAction::Stop, ResetRule::Manual)];
    assert!(tripped(&rules, &M::default().set(Trigger::Steps, 19.0, 19)).is_empty());
    let hits = tripped(&rules, &M::default().set(Trigger::Steps, 20.0, 20));
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].reason, "steps reached 20 (limit 20)");
}

#[test]
fn statistical_triggers_need_volume() {
    let r = BreakerRule { min_volume: 3, ..rule(Trigger::SpendVelocity, 1.0, TripAction::ReadOnly, ResetRule::Auto) };
    assert!(tripped(std::slice::from_ref(&r), &M::default().set(Trigger::SpendVelocity, 5.0, 2)).is_empty());
    assert_eq!(tripped(&[r], &M::default().set(Trigger::SpendVelocity, 5.0, 3)).len(), 1);
}

#[test]
fn unknown_metrics_trip_only_strict_actions() {
    let m = M::default().unknown(Trigger::RunUsd);
    for (action, trips) in [
        (TripAction::RequireApproval, false),
        (TripAction::PrOnly, false),
        (TripAction::ReadOnly, true),
        (TripAction::Stop, true),
    ] {
        let hits = tripped(&[rule(Trigger::RunUsd, 1.5, action, ResetRule::Manual)], &m);
        assert_eq!(!hits.is_empty(), trips, "{action:?}");
        if trips {
            assert!(hits[0].reason.contains("cannot be computed"));
        }
    }
}

#[test]
fn the_strictest_tripped_action_wins() {
    let rules = [
        rule(Trigger::Steps, 10.0, TripAction::RequireApproval, ResetRule::Auto),
        rule(Trigger::RunUsd, 1.0, TripAction::ReadOnly, ResetRule::Manual),
        rule(Trigger::WallClock, 60.0, TripAction::PrOnly, ResetRule::Manual),
    ];
    let m = M::default().set(Trigger::Steps, 11.0, 11).set(Trigger::RunUsd, 2.0, 1).set(Trigger::WallClock, 61.0, 1);
    let mut s = BreakerState::default();
    let new = s.trip(1000, "s1", &rules, &tripped(&rules, &m));
    assert_eq!(new.len(), 3);
    assert_eq!(s.position, BreakerPosition::ReadOnly);
    assert!(s.require_approval);
    // The same trips again are not recorded twice.
    assert!(s.trip(1001, "s1", &rules, &tripped(&rules, &m)).is_empty());
    assert_eq!(s.trips.len(), 3);
}

#[test]
fn auto_reset_waits_for_cooldown_and_hysteresis_and_steps_up_one_at_a_time() {
    let rules = [rule(Trigger::ConsecutiveBlocks, 5.0, TripAction::Stop, ResetRule::Auto)];
    let mut s = BreakerState::default();
    s.trip(1000, "s", &rules, &tripped(&rules, &M::default().set(Trigger::ConsecutiveBlocks, 5.0, 5)));
    assert_eq!(s.position, BreakerPosition::Stopped);
    // Below the threshold but within the cooldown: stays.
    let low = M::default().set(Trigger::ConsecutiveBlocks, 0.0, 0);
    assert!(s.recover(1099, &rules, &low, 0.2).is_empty());
    assert_eq!(s.position, BreakerPosition::Stopped);
    // After the cooldown but only just below the threshold (4 ≥ 5 × 0.8): stays.
    let near = M::default().set(Trigger::ConsecutiveBlocks, 4.0, 4);
    assert!(s.recover(1100, &rules, &near, 0.2).is_empty());
    assert_eq!(s.position, BreakerPosition::Stopped);
    // Below the hysteresis margin: cleared, and the position steps up one position.
    assert_eq!(s.recover(1100, &rules, &low, 0.2).len(), 1);
    assert_eq!(s.position, BreakerPosition::ReadOnly);
    // The next step waits another cooldown.
    s.recover(1150, &rules, &low, 0.2);
    assert_eq!(s.position, BreakerPosition::ReadOnly);
    s.recover(1200, &rules, &low, 0.2);
    assert_eq!(s.position, BreakerPosition::PrOnly);
    s.recover(1300, &rules, &low, 0.2);
    assert_eq!(s.position, BreakerPosition::FullAuto);
    assert!(!s.is_tripped());
}

#[test]
fn manual_trips_never_clear_on_their_own() {
    let rules = [rule(Trigger::Steps, 5.0, TripAction::ReadOnly, ResetRule::Manual)];
    let mut s = BreakerState::default();
    s.trip(0, "s", &rules, &tripped(&rules, &M::default().set(Trigger::Steps, 5.0, 5)));
    for now in [100, 1000, 1_000_000] {
        assert!(s.recover(now, &rules, &M::default(), 0.2).is_empty());
        assert_eq!(s.position, BreakerPosition::ReadOnly);
    }
    assert_eq!(s.reset(None).len(), 1);
    assert_eq!(s.position, BreakerPosition::FullAuto);
    assert!(!s.is_tripped());
}

#[test]
fn a_reset_of_one_trigger_keeps_the_others() {
    let rules = [
        rule(Trigger::Steps, 5.0, TripAction::Stop, ResetRule::Manual),
        rule(Trigger::RunUsd, 1.0, TripAction::PrOnly, ResetRule::Manual),
    ];
    let mut s = BreakerState::default();
    s.trip(0, "s", &rules, &tripped(&rules, &M::default().set(Trigger::Steps, 9.0, 9).set(Trigger::RunUsd, 2.0, 1)));
    assert_eq!(s.reset(Some(Trigger::Steps)).len(), 1);
    assert_eq!(s.position, BreakerPosition::PrOnly);
}

#[test]
fn require_approval_clears_when_its_trip_does() {
    let rules = [rule(Trigger::Steps, 10.0, TripAction::RequireApproval, ResetRule::Auto)];
    let mut s = BreakerState::default();
    s.trip(0, "s", &rules, &tripped(&rules, &M::default().set(Trigger::Steps, 10.0, 10)));
    assert!(s.require_approval && s.position == BreakerPosition::FullAuto);
    s.recover(200, &rules, &M::default().set(Trigger::Steps, 1.0, 1), 0.2);
    assert!(!s.require_approval && !s.is_tripped());
}

#[test]
fn both_profiles_stop_after_five_consecutive_blocks() {
    for p in [Profile::Loop, Profile::Interactive] {
        let rules = p.rules();
        let hits = tripped(&rules, &M::default().set(Trigger::ConsecutiveBlocks, 5.0, 5));
        assert!(hits.iter().any(|h| h.action == TripAction::Stop), "{p:?}");
        assert!(tripped(&rules, &M::default().set(Trigger::ConsecutiveBlocks, 4.0, 4)).is_empty(), "{p:?}");
        // Every trigger has a rule in both profiles.
        for t in Trigger::ALL {
            assert!(rules.iter().any(|r| r.trigger == t), "{p:?} lacks {t:?}");
        }
    }
    let lp = Profile::Loop.rules();
    let find = |t| lp.iter().find(|r| r.trigger == t).unwrap();
    assert_eq!(find(Trigger::Steps).threshold, 20.0);
    assert_eq!(find(Trigger::WallClock).threshold, 900.0);
    assert_eq!(find(Trigger::RunUsd).threshold, 1.5);
    assert_eq!(find(Trigger::RunTokens).threshold, 250_000.0);
    assert!(find(Trigger::TestDegradation).revert && find(Trigger::TestDegradation).action == TripAction::Stop);
}

#[test]
fn names_round_trip() {
    for t in Trigger::ALL {
        assert_eq!(Trigger::parse(t.as_str()), Some(t));
    }
    for a in TripAction::ALL {
        assert_eq!(TripAction::parse(a.as_str()), Some(a));
    }
    let mut sorted = TripAction::ALL;
    sorted.sort();
    assert_eq!(sorted, TripAction::ALL);
}
