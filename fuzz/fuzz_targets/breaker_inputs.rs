#![no_main]
//! What the breaker reads from the agent's world: tool results (test counts), transcript lines
//! (usage) and edits (ping-pong). Never a panic; counts are consistent.
use libfuzzer_sys::fuzz_target;
use loopguard_core::breaker::{pingpong, testcount, usage};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(run) = testcount::parse(text) {
        assert!(!run.format.is_empty());
    }
    let prices = usage::default_prices();
    for line in text.lines() {
        if let Some(m) = usage::parse_line(line, &prices) {
            assert!(m.usd.is_none_or(|u| u >= 0.0 && u.is_finite()), "{m:?}");
        }
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        let original = v.get("originalFile").and_then(serde_json::Value::as_str);
        for tool in ["Edit", "MultiEdit", "Write"] {
            let action = loopguard::hosts::claude_code::tools::action(tool, &v);
            for t in pingpong::transitions(&action, original) {
                assert_eq!(t.region.len(), 32);
            }
        }
    }
});
