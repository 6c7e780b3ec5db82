#![no_main]
//! Any command line: the gate decides (never panics, never allows what it could not parse).
use libfuzzer_sys::fuzz_target;
use loopguard_core::{Context, Gate, Policy, ToolCall};

fuzz_target!(|data: &[u8]| {
    let Ok(cmd) = std::str::from_utf8(data) else { return };
    let policy = Policy::builtin();
    let ws = std::path::Path::new("/nonexistent-fuzz/ws");
    let ctx = Context::new(ws).with_home(Some(std::path::Path::new("/nonexistent-fuzz/home")));
    let call = ToolCall::new("Bash", loopguard_core::Action::Shell { command: cmd.to_string() }, serde_json::json!({ "command": cmd }), ws);
    let d = Gate::new(&policy).evaluate(&call, &ctx);
    if loopguard_core::checks::shell::split(cmd).is_err() {
        assert!(d.verdict() > loopguard_core::Verdict::Allow, "unparsable input allowed: {cmd:?}");
    }
    assert!(!d.codes().iter().any(|c| c == "internal-error"), "panic inside the gate for {cmd:?}");
});
