//! The running dashboards of a state home: `dashboard/live-<pid>.json` (0600, in the state home
//! the gate keeps agents out of) holds the port and, until a browser redeems it, the one-time
//! URL. The hook reads these files to refuse any call that reaches a dashboard's port or quotes
//! its token; this module has no web dependencies, so the hook links none.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// One running dashboard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Live {
    /// The dashboard's process.
    pub pid: u32,
    /// The TCP port it listens on.
    pub port: u16,
    /// The one-time URL (with its token) until a browser redeems it.
    pub url: Option<String>,
    /// The token of that URL.
    pub token: Option<String>,
}

fn dir(state: &Path) -> PathBuf {
    state.join("dashboard")
}

/// The file of the dashboard `pid`.
pub fn path(state: &Path, pid: u32) -> PathBuf {
    dir(state).join(format!("live-{pid}.json"))
}

impl Live {
    /// Writes (or rewrites) this dashboard's file, atomically.
    pub fn write(&self, state: &Path) -> std::io::Result<()> {
        loopguard_audit::create_private_dir(&dir(state))?;
        let file = path(state, self.pid);
        let tmp = file.with_extension("tmp");
        let mut f = std::fs::OpenOptions::new().create(true).write(true).truncate(true).mode(0o600).open(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?)?;
        std::fs::rename(&tmp, &file)
    }
}

/// Whether process `pid` exists.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The dashboards running on this state home (files of processes that are gone are skipped).
pub fn running(state: &Path) -> Vec<Live> {
    let Ok(entries) = std::fs::read_dir(dir(state)) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("live-") && n.ends_with(".json")))
        .filter_map(|e| serde_json::from_slice::<Live>(&std::fs::read(e.path()).ok()?).ok())
        .filter(|l| alive(l.pid))
        .collect()
}

/// Removes the files of dashboards whose process is gone.
pub fn sweep(state: &Path) {
    let Ok(entries) = std::fs::read_dir(dir(state)) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("live-")?.strip_suffix(".json")?.parse().ok()) else {
            continue;
        };
        if !alive(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// What the hook guards: the ports of running dashboards and their unredeemed tokens.
pub fn guarded(state: &Path) -> (Vec<u16>, Vec<String>) {
    let live = running(state);
    (live.iter().map(|l| l.port).collect(), live.into_iter().filter_map(|l| l.token).collect())
}
