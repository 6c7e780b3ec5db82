#![no_main]
//! What the hook and the agent read that others write, in a fleet: any bytes as the mirror
//! (positions, budget definitions, reservations) and as a day ledger, any text as a git remote,
//! a `.git` config and a budget scope — read or refused, never a panic; and the budget rule on
//! whatever parsed never lets a call through on a lapsed lease or unmeasured spend.
use libfuzzer_sys::fuzz_target;
use loopguard::fleet::budget::{self, Ask, FleetDay, Meter};

fuzz_target!(|data: &[u8]| {
    let mirror = serde_json::from_slice::<loopguard::fleet::control::Mirror>(data).ok();
    let day = serde_json::from_slice::<FleetDay>(data).unwrap_or_default();
    let Ok(text) = std::str::from_utf8(data) else { return };
    let key = budget::normalize_remote(text);
    assert!(key.is_empty() || key.contains('/'), "{key}");
    assert_eq!(key, key.to_ascii_lowercase());
    let _ = budget::valid_scope(text);
    let budgets = mirror.map(|m| m.budgets).unwrap_or_default();
    let q = |now: i64, measured: bool| Ask {
        session: "s",
        repo: &key,
        today: "2026-12-02",
        now,
        spend_measured: measured,
        reservation: Meter { usd: 1_000_000, tokens: 200_000 },
    };
    if budgets.iter().any(|a| a.scope == "*") {
        assert!(budget::refusal(&budgets, &day, &q(0, false)).is_some(), "unmeasured spend under a budget");
        if budgets.iter().all(|a| a.lease_until < i64::MAX) {
            assert!(budget::refusal(&budgets, &day, &q(i64::MAX, true)).is_some(), "a lapsed lease");
        }
    }
    let _ = budget::refusal(&budgets, &day, &q(1_000, true));
});
