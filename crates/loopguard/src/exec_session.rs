//! Sandbox sessions: one set of namespaces per workspace that every confined call joins, so that
//! a server one call starts stays reachable, and killable, from the next — and nothing outside
//! can be named at all.
//!
//! A holder process (`loopguard __session-holder DIR`) creates a user, network (loopback only,
//! up) and PID namespace and stays in it as the PID namespace's init: it reaps orphans, mounts
//! its own `/proc` to count who is left, and exits once it has been alone for [`IDLE`] (or its
//! state directory is gone). `<state>/sessions/<ws_key>/holder` names it. A call joins its user
//! namespace, its network namespace when the call runs offline, and its PID namespace (for the
//! command it forks), then makes a mount namespace of its own as before. In the PID namespace a
//! command sees and signals only the session's processes: the user's own processes have no
//! number there. Landlock keeps every call's processes away from the holder (a sandboxed
//! process cannot ptrace or read the memory of one outside its domain, nor change mounts).
//!
//! Anything that fails here leaves the call on its own namespaces, as before sessions: never
//! less confined.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a holder alone in its namespaces waits before it exits.
pub const IDLE: Duration = Duration::from_secs(600);

/// How often the holder looks.
const TICK: Duration = Duration::from_secs(2);

/// A session's namespaces, opened for joining.
#[derive(Debug)]
pub struct Session {
    /// The holder's process id (in the host's PID namespace).
    pub holder: i32,
    /// `/proc/<holder>/ns/user`.
    pub user: OwnedFd,
    /// `/proc/<holder>/ns/net`.
    pub net: OwnedFd,
    /// `/proc/<holder>/ns/pid`.
    pub pid: OwnedFd,
}

impl Session {
    /// Opens the namespaces of a live holder, checked to be the holder of `dir` (its command
    /// line: a recycled process id names something else) and not this process's namespaces.
    pub fn open(holder: i32, dir: &Path) -> Option<Session> {
        let cmdline = std::fs::read(format!("/proc/{holder}/cmdline")).ok()?;
        let mut args = cmdline.split(|b| *b == 0).skip(1);
        let is_holder = args.next() == Some(b"__session-holder".as_slice())
            && args.next() == Some(dir.as_os_str().as_encoded_bytes());
        let ns = |n: &str| std::fs::File::open(format!("/proc/{holder}/ns/{n}")).ok().map(OwnedFd::from);
        let own = std::fs::read_link("/proc/self/ns/user").ok()?;
        if !is_holder || std::fs::read_link(format!("/proc/{holder}/ns/user")).ok()? == own {
            return None;
        }
        Some(Session { holder, user: ns("user")?, net: ns("net")?, pid: ns("pid")? })
    }
}

/// The session of the workspace `ws_key`: its live holder's namespaces, a holder started when
/// there is none. `None` when none can be had (the call then makes namespaces of its own).
pub fn session(state: &Path, ws_key: &str) -> Option<Session> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = state.join("sessions").join(ws_key);
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).ok()?;
    // One caller at a time checks and starts: two calls must not start two holders.
    let lock = std::fs::File::create(dir.join("lock")).ok()?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).ok()?;
    if let Some(s) = read_holder(&dir).and_then(|h| Session::open(h, &dir)) {
        return Some(s);
    }
    let exe = std::env::current_exe().ok()?;
    let status = std::process::Command::new(exe)
        .arg("__session-holder")
        .arg(&dir)
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    read_holder(&dir).and_then(|h| Session::open(h, &dir))
}

fn read_holder(dir: &Path) -> Option<i32> {
    std::fs::read_to_string(dir.join("holder")).ok()?.trim().parse().ok()
}

/// `__session-holder DIR`: the first process makes the namespaces, forks the holder (the PID
/// namespace's init), records it in `DIR/holder` and returns; the holder stays.
pub fn holder_main(dir: &Path) -> Result<(), String> {
    rustix::process::setsid().map_err(|e| format!("setsid: {e}"))?;
    loopguard_sandbox::enter_session_namespaces().map_err(|e| format!("session namespaces: {e:?}"))?;
    loopguard_sandbox::loopback_up().map_err(|e| format!("loopback: {e}"))?;
    match loopguard_sandbox::fork().map_err(|e| format!("fork: {e}"))? {
        Some(pid) => {
            let tmp = dir.join("holder.tmp");
            std::fs::write(&tmp, pid.to_string()).map_err(|e| format!("{}: {e}", tmp.display()))?;
            std::fs::rename(&tmp, dir.join("holder")).map_err(|e| format!("{}: {e}", dir.display()))
        }
        None => {
            let code = i32::from(hold(dir).is_err());
            loopguard_sandbox::exit_now(code)
        }
    }
}

/// The holder's life: its own `/proc` (so it counts only the session's processes), then reap
/// and look until it has been alone for [`IDLE`] or its record no longer names it.
fn hold(dir: &Path) -> Result<(), String> {
    use rustix::mount::{MountFlags, MountPropagationFlags};
    loopguard_sandbox::enter_mount_namespace().map_err(|e| e.to_string())?;
    rustix::mount::mount_change("/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC)
        .map_err(|e| e.to_string())?;
    rustix::mount::mount("proc", "/proc", "proc", MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC, None)
        .map_err(|e| e.to_string())?;
    let record: PathBuf = dir.join("holder");
    let mut alone_since = std::time::Instant::now();
    // The first process writes the record after the fork: a record not yet there is not gone.
    let mut recorded = false;
    loop {
        let exists = record.exists();
        recorded |= exists;
        while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
        let others = std::fs::read_dir("/proc").map_or(0, |rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_str().is_some_and(|n| n != "1" && n.bytes().all(|b| b.is_ascii_digit())))
                .count()
        });
        if others > 0 {
            alone_since = std::time::Instant::now();
        } else if alone_since.elapsed() >= IDLE || (recorded && !exists) {
            return Ok(());
        }
        std::thread::sleep(TICK);
    }
}
