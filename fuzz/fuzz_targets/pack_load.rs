#![no_main]
//! Any pack text: it parses into a pack whose rules hold or report their examples, or it is refused
//! with at least one problem; matching any command line against it never panics.
use libfuzzer_sys::fuzz_target;
use loopguard_core::checks::shell::{commands, split_with_home};
use loopguard_core::packs::{Pack, PackOrigin};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The pack text, then (after a NUL) a command line to match.
    let (pack, line) = text.split_once('\0').unwrap_or((text, "tool delete -rf --force x"));
    for origin in [PackOrigin::Builtin, PackOrigin::File("fuzz.toml".into())] {
        match Pack::parse("fuzz.toml", pack, origin) {
            Ok(p) => {
                let _ = p.check_examples();
                if let Ok(cmds) = split_with_home(line, None).and_then(|s| commands(&s, None)) {
                    for c in &cmds {
                        for r in &p.rules {
                            let _ = r.matches_command(&p, c);
                        }
                    }
                }
            }
            Err(e) => assert!(!e.problems.is_empty()),
        }
    }
});
