#![no_main]
//! Any text as a Codex `apply_patch` patch: read or refused, never a panic; every file it names
//! is non-empty, and a patch that reads changes at least one file.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(files) = loopguard::hosts::codex::patch::parse(text) {
        assert!(!files.is_empty());
        assert!(files.iter().all(|f| !f.path.trim().is_empty()));
    }
});
