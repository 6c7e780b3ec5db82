//! `loopguard-console`: `dashboard`, `fleet` and `audit verify --fleet`, the commands that need a
//! web server or a database client. `loopguard` runs it in its own place for those commands
//! (commands/console.rs), so the hook's binary links neither.

use clap::Parser;
use std::process::ExitCode;

// The whole command line, so `--help` and errors read as `loopguard`'s; this binary uses a part.
#[path = "cli.rs"]
#[allow(dead_code)]
mod cli;
#[path = "commands/fleet.rs"]
mod fleet;

// What commands/fleet.rs finds in its `super`.
use cli::*;
use loopguard::state::Env;
use std::path::PathBuf;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let env = Env::from_process();
    let result = match cli.command {
        Command::Dashboard(args) => fleet::dashboard(&env, args),
        Command::Fleet { command } => fleet::run(&env, command),
        Command::Audit { command: AuditCommand::Verify { fleet: true, silent_after, json, host_keys, .. } } => {
            fleet::verify(&env, silent_after, json, host_keys.as_deref())
        }
        _ => Err("loopguard-console serves only `dashboard`, `fleet` and `audit verify --fleet`; run loopguard".into()),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("loopguard: error: {e}");
            ExitCode::from(2)
        }
    }
}
