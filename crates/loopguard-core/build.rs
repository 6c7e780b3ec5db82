//! Lists the built-in pack files (`packs/*.toml`) for src/packs/mod.rs: each file's id, programs
//! and default switch (read here, so the hook parses a pack only when a command uses one of its
//! programs) and its text. A pack file without those keys fails the build.

use std::fmt::Write;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("packs");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("&[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let head = std::fs::read_to_string(f).ok().and_then(|t| t.parse::<toml::Table>().ok());
        let Some(head) = head else { fail(&format!("{name}: not readable TOML")) };
        let id = head.get("id").and_then(|v| v.as_str());
        let enabled = head.get("enabled").map_or(Some(true), |v| v.as_bool());
        let programs: Option<Vec<&str>> =
            head.get("programs").and_then(|v| v.as_array()).map(|a| a.iter().filter_map(|p| p.as_str()).collect());
        let (Some(id), Some(enabled), Some(programs)) = (id, enabled, programs) else {
            fail(&format!("{name}: needs `id`, `programs` and a boolean `enabled` if any"))
        };
        let _ = writeln!(
            out,
            "    BuiltinPack {{ file: {name:?}, id: {id:?}, enabled: {enabled}, programs: &{programs:?}, text: include_str!({:?}) }},",
            f.display().to_string()
        );
    }
    out.push(']');
    let target = std::path::Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("builtin_packs.rs");
    if let Err(e) = std::fs::write(&target, out) {
        fail(&format!("cannot write {}: {e}", target.display()));
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("loopguard-core build: pack {msg}");
    std::process::exit(1)
}
