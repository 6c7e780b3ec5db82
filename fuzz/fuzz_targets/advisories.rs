#![no_main]
//! Any text as a manifest or lockfile of every kind, a requirement or version of every
//! ecosystem, or a command line: the readers never panic, and what they return is usable (a
//! lockfile's versions parse; a floor is a version of its ecosystem).
use libfuzzer_sys::fuzz_target;
use loopguard_core::advisories::{Ecosystem, detect, manifest::Kind};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for kind in [
        Kind::CargoToml,
        Kind::CargoLock,
        Kind::PackageJson,
        Kind::PackageLock,
        Kind::Requirements,
        Kind::Pyproject,
        Kind::GoMod,
        Kind::PyLock,
        Kind::PipfileLock,
        Kind::YarnLock,
        Kind::PnpmLock,
    ] {
        if let Ok(deps) = kind.read(text) {
            for d in deps {
                assert!(!d.name.is_empty() || kind == Kind::GoMod || kind == Kind::CargoToml || kind == Kind::CargoLock);
            }
        }
    }
    for eco in Ecosystem::ALL {
        let _ = eco.parse(text);
        if let Some(f) = eco.floor(text) {
            assert!(eco.parse(&f.to_string()).is_some() || eco == Ecosystem::Go, "{eco} floor {f}");
        }
        let _ = eco.normalize(text);
    }
    let _ = detect::from_command_line(text);
});
