//! `loopguard fleet install`: a systemd user unit that keeps this host's fleet agent running
//! (restarted when it dies: sixty seconds without it and the host is read-only).
//!
//! The unit names the state home and the configuration home explicitly, so the agent serves
//! the same state home as the hooks whatever environment systemd gives it.

use std::path::{Path, PathBuf};

/// The unit's file name.
pub const UNIT: &str = "loopguard-fleet-agent.service";

/// Where the unit goes: `$XDG_CONFIG_HOME/systemd/user/` (or `~/.config/systemd/user/`).
pub fn unit_path(config_home: &Path) -> PathBuf {
    config_home.join("systemd").join("user").join(UNIT)
}

/// The unit's text: the agent from `exe`, serving `state`, with `config` as its configuration
/// home (where the user policy with `[fleet]` is).
pub fn unit_text(exe: &Path, state: &Path, config: &Path, home: &Path) -> Result<String, String> {
    for p in [exe, state, config, home] {
        if p.to_string_lossy().contains(['\n', '\r']) {
            return Err(format!("{}: a path with a line break cannot go in a systemd unit", p.display()));
        }
    }
    Ok(format!(
        "# Written by `loopguard fleet install`; `loopguard fleet install --force` rewrites it.\n\
         [Unit]\n\
         Description=loopguard fleet agent (positions, shared budgets and audit shipping for this host)\n\
         After=network-online.target\n\
         Wants=network-online.target\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={} fleet agent\n\
         Environment={}\n\
         Environment={}\n\
         Environment={}\n\
         Restart=always\n\
         RestartSec=2\n\
         NoNewPrivileges=yes\n\
         PrivateTmp=yes\n\
         UMask=0077\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        quote(exe),
        quote_env("LOOPGUARD_HOME", state),
        quote_env("XDG_CONFIG_HOME", config),
        quote_env("HOME", home),
    ))
}

/// A path for an `ExecStart=` line: quoted, with systemd's specifiers (`%`) and quotes escaped.
fn quote(p: &Path) -> String {
    // ExecStart= also expands `$VAR`: `$$` is a dollar sign there.
    format!("\"{}\"", escape(&p.to_string_lossy()).replace('$', "$$"))
}

fn quote_env(name: &str, p: &Path) -> String {
    format!("\"{name}={}\"", escape(&p.to_string_lossy()))
}

fn escape(s: &str) -> String {
    // `\`, `"`: quoting; `%`: specifiers. Line breaks are refused before (see [`unit_text`]).
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('%', "%%")
}

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// Written (new, or rewritten with `force`).
    Written(PathBuf),
    /// Already as it should be.
    Unchanged(PathBuf),
}

/// Writes the unit. A unit that exists and differs (edited by hand, or for another binary or
/// state home) is left alone unless `force`.
pub fn install(path: &Path, text: &str, force: bool) -> Result<Installed, String> {
    match std::fs::read_to_string(path) {
        Ok(old) if old == text => return Ok(Installed::Unchanged(path.to_path_buf())),
        Ok(_) if !force => {
            return Err(format!(
                "{} exists and differs from the unit loopguard would write (edited, or for another binary or state home); \
                 look at it, then run `loopguard fleet install --force` to replace it",
                path.display()
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{}: {e}", path.display())),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // A fresh temporary name, created exclusively (never through a planted link), then renamed
    // over the unit.
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness: {e}"))?;
    let tmp = path.with_extension(format!("service.{}.tmp", loopguard_audit::hex(&bytes)));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        std::io::Write::write_all(&mut f, text.as_bytes())?;
        f.sync_all()
    };
    write().map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: {e}", path.display())
    })?;
    Ok(Installed::Written(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_names_the_state_home_and_escapes_what_systemd_would_expand() {
        let t = unit_text(
            Path::new("/opt/lg$1/loopguard"),
            Path::new("/home/a/.local/state/loopguard%x$HOME"),
            Path::new("/home/a/.config"),
            Path::new("/home/a"),
        )
        .unwrap();
        assert!(t.contains("ExecStart=\"/opt/lg$$1/loopguard\" fleet agent\n"), "{t}");
        assert!(t.contains("Environment=\"LOOPGUARD_HOME=/home/a/.local/state/loopguard%%x$HOME\"\n"), "{t}");
        let bad = Path::new("/home/a\nExecStartPre=/bin/evil");
        assert!(unit_text(Path::new("/x"), bad, bad, bad).is_err(), "a line break is refused");
        assert!(t.contains("Restart=always") && t.contains("WantedBy=default.target"));
        let dir = tempfile::tempdir().unwrap();
        let p = unit_path(dir.path());
        assert_eq!(install(&p, &t, false), Ok(Installed::Written(p.clone())));
        assert_eq!(install(&p, &t, false), Ok(Installed::Unchanged(p.clone())));
        std::fs::write(&p, "edited").unwrap();
        assert!(install(&p, &t, false).unwrap_err().contains("--force"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "edited", "an edited unit is kept");
        assert_eq!(install(&p, &t, true), Ok(Installed::Written(p.clone())));
    }
}
