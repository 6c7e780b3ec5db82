#![no_main]
//! Any text as a URL or a shell network target: the SSRF judge never panics, and an internal
//! verdict always names its host and reason.
use libfuzzer_sys::fuzz_target;
use loopguard_core::checks::ssrf;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(Some(i)) = ssrf::check_url(text) {
        assert!(!i.why.is_empty());
    }
    if let Some(i) = ssrf::check_target(text) {
        assert!(!i.why.is_empty());
    }
});
