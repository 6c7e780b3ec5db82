#![no_main]
//! Any policy text: it loads or yields diagnostics that point inside the file; never a panic.
use libfuzzer_sys::fuzz_target;
use loopguard_core::Policy;
use loopguard_core::policy::LayerKind;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for kind in [LayerKind::User, LayerKind::Project] {
        if let Err(e) = Policy::from_layers(&[(kind, "fuzz.toml".into(), text.to_string())]) {
            assert!(!e.diagnostics.is_empty());
            for d in e.diagnostics.iter().filter(|d| d.file.as_os_str() == "fuzz.toml") {
                assert!(d.span.start <= text.len() && d.line >= 1 && d.col >= 1);
            }
        }
    }
});
