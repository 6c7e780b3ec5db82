//! The only crate of loopguard allowed `unsafe` (every other crate forbids it). It holds the
//! kernel primitives the sandbox (`loopguard exec`, previews) needs whose soundness the type
//! system cannot check, each behind a safe function that checks its own precondition:
//!
//! - [`enter_namespaces`]: `unshare` of a user, mount (and network) namespace, with the user
//!   namespace mapping our own uid and gid to themselves.
//! - [`enter_session_namespaces`], [`join`], [`enter_mount_namespace`]: a sandbox session's
//!   user, network and PID namespaces, made once and joined by every call; [`loopback_up`] brings
//!   the session's loopback up (`ioctl`).
//! - [`fork`] and [`exit_now`]: a single-threaded fork (into a PID namespace) and `_exit`.
//! - [`set_read_only`]: `mount_setattr` of a mount (or a whole tree of them) read-only or
//!   writable, which rustix does not wrap.
//! - [`spawn_with_setup`]: spawn a command that runs a setup closure between fork and exec
//!   (`pre_exec`), refused unless this process is single-threaded.
//!
//! Landlock itself needs no `unsafe` (the `landlock` crate wraps it) and stays with its callers.

use std::io;
use std::process::{Child, Command};

/// A namespace step that failed.
#[derive(Debug)]
pub enum NamespaceError {
    /// `unshare` refused (user namespaces disabled, or not allowed here).
    Unshare(io::Error),
    /// Writing `/proc/self/<file>` (setgroups, uid_map, gid_map) failed.
    Map(&'static str, io::Error),
}

/// Whether this process has exactly one thread (Linux: one entry in /proc/self/task).
pub fn single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|d| d.take(2).count() == 1)
}

/// Moves this process into a new user, network and PID namespace (the PID namespace for the
/// children it forks next), mapping our own uid and gid to themselves: the namespaces of a
/// sandbox session, which later calls join (see [`join`]).
pub fn enter_session_namespaces() -> Result<(), NamespaceError> {
    use rustix::thread::UnshareFlags;
    enter_user_namespace_with(UnshareFlags::NEWNET | UnshareFlags::NEWPID)
}

/// `unshare` of a new user namespace together with `more` (namespace flags only), then our own
/// uid and gid mapped to themselves.
#[expect(unsafe_code, reason = "unshare(2) through rustix's unshare_unsafe; see the SAFETY comment")]
fn enter_user_namespace_with(more: rustix::thread::UnshareFlags) -> Result<(), NamespaceError> {
    use rustix::thread::UnshareFlags;
    let (uid, gid) = (rustix::process::getuid().as_raw(), rustix::process::getgid().as_raw());
    let flags = UnshareFlags::NEWUSER | (more & (UnshareFlags::NEWNS | UnshareFlags::NEWNET | UnshareFlags::NEWPID));
    // SAFETY: `unshare_unsafe` is unsafe only because of `CLONE_FILES` (another thread could
    // then observe file descriptors from an unshared table). Only NEWUSER, NEWNS, NEWNET and
    // NEWPID can be passed (masked above): they change namespaces, not the descriptor table.
    unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(|e| NamespaceError::Unshare(e.into()))?;
    let write = |file: &'static str, text: String| {
        std::fs::write(format!("/proc/self/{file}"), text).map_err(|e| NamespaceError::Map(file, e))
    };
    write("setgroups", "deny".into())?;
    write("uid_map", format!("{uid} {uid} 1"))?;
    write("gid_map", format!("{gid} {gid} 1"))
}

/// Moves this process into a new mount namespace only (it must already have `CAP_SYS_ADMIN` in
/// its user namespace: after [`enter_session_namespaces`] or [`join`]).
#[expect(unsafe_code, reason = "unshare(2) through rustix's unshare_unsafe; see the SAFETY comment")]
pub fn enter_mount_namespace() -> io::Result<()> {
    // SAFETY: as in `enter_user_namespace_with`: only CLONE_NEWNS, no descriptor table is unshared.
    unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS) }.map_err(Into::into)
}

/// Joins a session's namespaces (descriptors of `/proc/PID/ns/…` of its holder): its user
/// namespace, its network namespace when `net` is given, and its PID namespace for the children
/// this process forks next. This process must be single-threaded (the kernel refuses a user
/// namespace change otherwise).
pub fn join(
    user: std::os::fd::BorrowedFd<'_>,
    net: Option<std::os::fd::BorrowedFd<'_>>,
    pid: std::os::fd::BorrowedFd<'_>,
) -> io::Result<()> {
    use rustix::thread::{LinkNameSpaceType as T, move_into_link_name_space as setns};
    setns(user, Some(T::User))?;
    if let Some(net) = net {
        setns(net, Some(T::Network))?;
    }
    setns(pid, Some(T::ProcessID))?;
    Ok(())
}

/// Joins a network namespace (a session's, after [`join`] without one).
pub fn join_network(net: std::os::fd::BorrowedFd<'_>) -> io::Result<()> {
    use rustix::thread::{LinkNameSpaceType as T, move_into_link_name_space as setns};
    setns(net, Some(T::Network)).map_err(Into::into)
}

/// Forks this process, which must be single-threaded: `Ok(None)` in the child, `Ok(Some(pid))`
/// in the parent.
#[expect(unsafe_code, reason = "fork(2); see the SAFETY comment")]
pub fn fork() -> io::Result<Option<i32>> {
    if !single_threaded() {
        return Err(io::Error::other("fork needs a single-threaded process"));
    }
    // SAFETY: fork is unsafe in a multi-threaded process (the child could inherit a lock another
    // thread held). `single_threaded()` just found this process alone, and nothing between the
    // check and the call starts a thread.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(None),
        pid => Ok(Some(pid)),
    }
}

/// Ends this process at once with `code` (`_exit(2)`: no destructors, no atexit handlers, no
/// flush), for a forked process that must not go on running its parent's code.
#[expect(unsafe_code, reason = "_exit(2); see the SAFETY comment")]
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes an integer, touches no memory of ours and does not return.
    unsafe { libc::_exit(code) }
}

/// Brings the loopback interface of this process's network namespace up (a new network
/// namespace starts with it down).
#[expect(unsafe_code, reason = "ioctl(2) SIOCGIFFLAGS/SIOCSIFFLAGS; see the SAFETY comment")]
pub fn loopback_up() -> io::Result<()> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: socket(2) takes integers; a non-negative result is a new descriptor we own.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor no one else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: `ifreq` is plain data for which all-zero bytes are a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *d = *s as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS reads the NUL-terminated name and writes the flags into `req`, a
    // live `ifreq` on our stack; SIOCSIFFLAGS reads the same struct. Neither keeps the pointer.
    unsafe {
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) < 0 {
            return Err(io::Error::last_os_error());
        }
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &req) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Moves this process into a new user and mount namespace (and a new network namespace, with
/// only a down loopback, when `new_net`), mapping our own uid and gid to themselves so files
/// keep their owner. Nothing mounted afterwards propagates back to the host: a mount namespace
/// owned by a new, less privileged user namespace has its shared mounts reduced to slaves by
/// the kernel (mount_namespaces(7)).
pub fn enter_namespaces(new_net: bool) -> Result<(), NamespaceError> {
    use rustix::thread::UnshareFlags;
    enter_user_namespace_with(if new_net { UnshareFlags::NEWNS | UnshareFlags::NEWNET } else { UnshareFlags::NEWNS })
}

/// `struct mount_attr` of `<linux/mount.h>` (MOUNT_ATTR_SIZE_VER0: four `u64`, 32 bytes).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `MOUNT_ATTR_RDONLY`.
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// Makes the mount at `path` read-only (`read_only`) or writable, with every mount below it too
/// when `recursive` (`mount_setattr(2)` with `AT_RECURSIVE`: one call, all or nothing). Only the
/// read-only flag changes; the flags the host locked on a mount stay, and making a mount that
/// the host locked read-only writable is refused by the kernel (`EPERM`). Linux 5.12 or newer,
/// which Landlock (5.13) implies.
#[expect(unsafe_code, reason = "mount_setattr(2) through libc::syscall; see the SAFETY comment")]
pub fn set_read_only(path: &std::path::Path, read_only: bool, recursive: bool) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags: libc::c_uint = if recursive { libc::AT_RECURSIVE as libc::c_uint } else { 0 };
    // SAFETY: mount_setattr(dirfd, path, flags, attr, size) reads a NUL-terminated path (`c`,
    // alive until the call returns) and `size` bytes of `attr` (a `repr(C)` struct of exactly
    // that size on the stack, alive until the call returns); it writes to neither, and no other
    // memory is touched.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Spawns `cmd` with `setup` run in the child between fork and exec (an error from it aborts
/// the spawn, and `spawn` returns that error). Refused (an error, nothing spawned) when this
/// process has more than one thread: only then may the child allocate and take locks.
#[expect(unsafe_code, reason = "CommandExt::pre_exec; see the SAFETY comment")]
pub fn spawn_with_setup<F>(cmd: &mut Command, setup: F) -> io::Result<Child>
where
    F: FnMut() -> io::Result<()> + Send + Sync + 'static,
{
    use std::os::unix::process::CommandExt;
    if !single_threaded() {
        return Err(io::Error::other("the sandbox's setup needs a single-threaded process"));
    }
    // SAFETY: the closure runs in the forked child before exec. Only async-signal-safe functions
    // are safe there if another thread of the parent could hold a lock (the allocator's, stdio's)
    // at fork time. `single_threaded()` just found no other thread, and nothing between that
    // check and `spawn` below (this function's next statement) can start one, so the child's
    // copy of every lock is free and allocating, formatting and system calls are sound there.
    unsafe {
        cmd.pre_exec(setup);
    }
    cmd.spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_threaded_test_process_is_rare_but_the_check_reads_the_task_list() {
        // The test harness runs tests on threads: this process has more than one.
        assert!(!single_threaded());
        let mut cmd = Command::new("true");
        let refused = spawn_with_setup(&mut cmd, || Ok(()));
        assert!(refused.is_err(), "setup must be refused in a multi-threaded process");
    }
}
