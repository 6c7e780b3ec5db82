#![no_main]
//! Any bytes on the hook's stdin: an answer that is 0 or 2, never 1, and JSON when it has stdout.
use libfuzzer_sys::fuzz_target;
use loopguard::state::Env;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let env = Env { loopguard_home: Some(dir.path().join("state")), home: Some(dir.path().to_path_buf()), ..Env::default() };
    let out = loopguard::hosts::claude_code::handle(data, &env);
    let _ = out.exit.code();
    if !out.stdout.is_empty() {
        let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
        assert!(v["hookSpecificOutput"]["permissionDecision"].is_string());
    }
});
