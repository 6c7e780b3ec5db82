//! `dashboard`, `fleet` and `audit verify --fleet` are served by a second binary,
//! `loopguard-console`, installed next to `loopguard`: they need a web server and a database
//! client (axum, tokio, postgres), and linking those into the binary every hook call starts cost
//! the hook 0.2–0.4 ms (3 MB more to load and relocate). This one runs the sibling in its place.

use super::*;
use std::os::unix::process::CommandExt;

/// The console binary's file name.
pub const CONSOLE: &str = "loopguard-console";

/// Replaces this process with `loopguard-console`, same arguments.
pub fn delegate() -> Result<ExitCode, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let console = exe.with_file_name(CONSOLE);
    if !console.is_file() {
        return Err(format!(
            "`{CONSOLE}` is not installed next to {} (it serves `dashboard`, `fleet` and `audit verify --fleet`; scripts/install.sh and `cargo install --path crates/loopguard` install both)",
            exe.display()
        ));
    }
    let err = std::process::Command::new(&console).args(std::env::args_os().skip(1)).exec();
    Err(format!("cannot run {}: {err}", console.display()))
}
