//! Times parsing each built-in pack (first use in a process): `cargo run --release --example packparse`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring tool

use loopguard_core::packs::{BUILTIN_PACKS, Pack, PackOrigin};

fn main() {
    let mut rows = Vec::new();
    for b in BUILTIN_PACKS {
        let t = std::time::Instant::now();
        let _ = toml::from_str::<toml::Table>(b.text).unwrap();
        let toml_us = t.elapsed().as_secs_f64() * 1e6;
        let t = std::time::Instant::now();
        let p = Pack::parse(b.file, b.text, PackOrigin::Builtin).unwrap();
        let all_us = t.elapsed().as_secs_f64() * 1e6;
        rows.push((all_us, toml_us, b.id, p.rules.len(), b.text.len()));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (all, toml, id, n, len) in rows.iter().take(12) {
        println!("{id:24} {n:4} rules {len:7} bytes  parse {all:8.1} µs  (toml alone {toml:7.1} µs)");
    }
}
