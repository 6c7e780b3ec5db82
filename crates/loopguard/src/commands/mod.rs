//! One file per subcommand: each `run` takes its parsed arguments and the environment, prints
//! its report and returns the exit code.

mod advisories;
mod approve;
mod audit;
mod break_glass;
mod breaker;
mod certify;
pub(crate) mod console;
pub(crate) mod exec;
mod fetch;
mod grant;
pub(crate) mod hook;
mod install;
mod merge_check;
mod operator;
mod policy;
mod preview;
mod scan;
mod undo;
mod yolo;

pub(crate) use crate::cli::*;
pub(crate) use loopguard::state::{self, Env};
pub(crate) use loopguard_core::Policy;
pub(crate) use loopguard_core::policy::{LayerKind, diag};
pub(crate) use std::path::PathBuf;
pub(crate) use std::process::ExitCode;
pub(crate) use std::time::Duration;

/// Runs a parsed command line (everything but `hook`, which `main` answers itself).
pub fn run(cli: Cli) -> Result<ExitCode, String> {
    let env = Env::from_process();
    match cli.command {
        Command::Hook(_) => Ok(ExitCode::from(2)),
        Command::Policy { command } => policy::run(&env, command),
        Command::Audit { command } => audit::run(&env, command),
        Command::Install(args) => install::run(&env, args),
        Command::Scan(args) => scan::run(args),
        Command::Breaker { command } => breaker::run(&env, command),
        Command::Operator { command } => operator::run(&env, command),
        Command::BreakGlass(args) => break_glass::run(&env, args),
        Command::Preview(args) => preview::run(&env, args),
        Command::Approve(args) => approve::run(&env, args),
        Command::Certify(args) => certify::run(&env, args),
        Command::Advisories { command } => advisories::run(&env, command),
        Command::Yolo { command } => yolo::run(&env, command),
        Command::Undo(args) => undo::run(&env, args),
        Command::Grant { command } => grant::run(&env, command),
        Command::Exec(args) => exec::run(&env, args),
        Command::Fetch(args) => fetch::run(args),
        Command::MergeCheck(args) => merge_check::run(&env, args),
        Command::Doctor(args) => doctor(&env, args),
        // Served by `loopguard-console` (web server, database client): the hook's binary links
        // neither, and starts faster for it.
        Command::Fleet { .. } | Command::Dashboard(_) => console::delegate(),
        Command::Selftest(args) => selftest(&env, &args),
        Command::Decide => {
            let stdin = std::io::stdin().lock();
            let mut out = std::io::stdout().lock();
            loopguard::decide::serve(stdin, &mut out).map_err(|e| format!("decide: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo => {
            let mut out = std::io::stdout().lock();
            let ok = loopguard::demo::run(&mut out).map_err(|e| format!("demo failed: {e}"))?;
            Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}

/// `loopguard selftest [--adversary] [--json]`.
fn selftest(env: &Env, args: &SelftestArgs) -> Result<ExitCode, String> {
    let cwd = cwd()?;
    let report = loopguard::selftest::run(env, &cwd);
    let adversary = if args.adversary { Some(loopguard::adversary::run(env, &cwd)?) } else { None };
    if args.json {
        let v = serde_json::json!({ "checks": report.checks, "adversary": adversary });
        println!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
    } else {
        print!("{}", report.render());
        if let Some(a) = &adversary {
            print!("\nadversary (your effective policy, unattended):\n{}", a.render());
        }
    }
    let ok = report.ok() && adversary.as_ref().is_none_or(loopguard::adversary::Report::ok);
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The current directory.
pub(crate) fn cwd() -> Result<PathBuf, String> {
    std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))
}

/// `loopguard doctor [host | --all]`.
fn doctor(env: &Env, args: DoctorArgs) -> Result<ExitCode, String> {
    let hosts = if args.all {
        Host::ALL.into_iter().filter(|h| install::present(env, *h)).collect()
    } else {
        vec![args.host.unwrap_or(Host::ClaudeCode)]
    };
    let cwd = cwd()?;
    let mut ok = true;
    for h in &hosts {
        let report = match h {
            Host::ClaudeCode => loopguard::doctor::run(env, &cwd),
            other => loopguard::doctor::hosts::run(env, &cwd, other.name()),
        };
        if args.all {
            println!("== {}", h.name());
        }
        print!("{}", report.render());
        ok &= report.ok();
    }
    if hosts.is_empty() {
        return Err("found no agent host on this machine".into());
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
