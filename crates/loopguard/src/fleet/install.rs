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
pub fn unit_text(exe: &Path, state: &Path, config: &Path, home: &Path) -> String {
    format!(
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
    )
}

/// A path for an `ExecStart=` line: quoted, with systemd's specifiers (`%`) and quotes escaped.
fn quote(p: &Path) -> String {
    format!("\"{}\"", escape(&p.to_string_lossy()))
}

fn quote_env(name: &str, p: &Path) -> String {
    format!("\"{name}={}\"", escape(&p.to_string_lossy()))
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('%', "%%").replace('\n', "")
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
    let tmp = path.with_extension("service.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Installed::Written(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_names_the_state_home_and_escapes_what_systemd_would_expand() {
        let t = unit_text(
            Path::new("/opt/lg 1/loopguard"),
            Path::new("/home/a/.local/state/loopguard%x"),
            Path::new("/home/a/.config"),
            Path::new("/home/a"),
        );
        assert!(t.contains("ExecStart=\"/opt/lg 1/loopguard\" fleet agent\n"), "{t}");
        assert!(t.contains("Environment=\"LOOPGUARD_HOME=/home/a/.local/state/loopguard%%x\"\n"), "{t}");
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
