#![no_main]
//! Any text: scanning never panics, redaction removes every finding and is idempotent, and a
//! gitleaks config either loads or is refused with a message.
use libfuzzer_sys::fuzz_target;
use loopguard_secrets::Scanner;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for s in [Scanner::builtin(), Scanner::builtin_bulk()] {
        let found = s.scan(text);
        let once = s.redact(text);
        for f in &found {
            assert!(!once.contains(&text[f.span.clone()]) || f.span.len() < 8, "left a secret in {once:?}");
        }
        assert_eq!(s.redact(&once), once, "not idempotent");
    }
    let _ = loopguard_secrets::gitleaks::scanner_from_gitleaks(text);
});
