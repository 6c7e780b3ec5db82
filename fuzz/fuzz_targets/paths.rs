#![no_main]
//! Any path text: the validator answers (never panics), and a path it calls inside the
//! workspace really resolves inside it.
use libfuzzer_sys::fuzz_target;
use loopguard_core::Policy;
use loopguard_core::checks::paths::{PathValidator, resolve};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else { return };
    let ws = Path::new("/nonexistent-fuzz/ws");
    let policy = Policy::builtin();
    let v = PathValidator::new([ws]).with_rules(policy.path_rules(), Some(Path::new("/nonexistent-fuzz/home")), &[]);
    let findings = v.check_write(raw, ws, "write");
    if findings.is_empty() && !raw.starts_with("/dev/") {
        let real = resolve(Path::new(raw), ws).unwrap();
        assert!(real.starts_with(ws), "{raw:?} judged inside but resolves to {}", real.display());
    }
    if let Ok(real) = resolve(Path::new(raw), ws) {
        let _ = v.check_read(raw, &real, "read");
        assert_eq!(resolve(&real, Path::new("/")).unwrap(), real, "not idempotent for {raw:?}");
    }
});
