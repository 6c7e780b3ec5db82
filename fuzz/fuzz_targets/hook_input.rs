#![no_main]
//! Any bytes on the hook's stdin, for every host adapter: an answer that is 0 or 2 (never 1), JSON
//! when it has stdout, and never one the host would read as "go on" by mistake (a blank reason).
//! The first byte picks the host.
use libfuzzer_sys::fuzz_target;
use loopguard::hosts::{self, HookOutcome};
use loopguard::state::Env;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, data)) = data.split_first() else { return };
    let dir = tempfile::tempdir().unwrap();
    let env = Env { loopguard_home: Some(dir.path().join("state")), home: Some(dir.path().to_path_buf()), ..Env::default() };
    let out: HookOutcome = match pick % 6 {
        0 => hosts::serve(hosts::claude_code::ClaudeCode, data, &env),
        1 => hosts::serve(hosts::codex::Codex, data, &env),
        2 => hosts::serve(hosts::gemini::Gemini, data, &env),
        3 => hosts::serve(hosts::copilot::Copilot::pascal(), data, &env),
        5 => hosts::serve(hosts::copilot::Copilot::camel("preToolUse"), data, &env),
        _ => hosts::serve(hosts::cursor::Cursor, data, &env),
    };
    let _ = out.exit.code();
    if !out.stdout.is_empty() {
        let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
        assert!(v.is_object());
        for reason in ["/hookSpecificOutput/permissionDecisionReason", "/reason", "/permissionDecisionReason", "/agent_message"] {
            if let Some(r) = v.pointer(reason) {
                assert!(!r.as_str().unwrap_or_default().trim().is_empty(), "a blank reason: {v}");
            }
        }
    }
    if out.exit == hosts::Exit::Block && pick % 6 == 1 {
        // Codex shows stderr on exit 2 and fails open on a blank one.
        assert!(!out.stderr.trim().is_empty());
    }
});
