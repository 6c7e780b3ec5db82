//! Packages pinned by a `Cargo.lock` (registry packages only: path and git dependencies have no
//! crates.io version to look up).

/// A locked package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    /// Crate name.
    pub name: String,
    /// Exact version.
    pub version: String,
}

/// Reads a Cargo.lock. `Err` for text that is not one.
pub fn cargo_lock(text: &str) -> Result<Vec<Locked>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| format!("not a Cargo.lock: {e}"))?;
    let Some(toml::Value::Array(pkgs)) = doc.get("package") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for p in pkgs {
        let (Some(name), Some(version)) =
            (p.get("name").and_then(|v| v.as_str()), p.get("version").and_then(|v| v.as_str()))
        else {
            return Err("a [[package]] entry lacks name or version".into());
        };
        let registry = p
            .get("source")
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.starts_with("registry+") || s.starts_with("sparse+"));
        if registry {
            out.push(Locked { name: name.to_string(), version: version.to_string() });
        }
    }
    Ok(out)
}
