//! `loopguard hook <host>`: read by hand, never by clap, so that every failure (even of the hook's
//! own flags) still answers the host with a deny.

use super::*;
use clap::Parser;
use loopguard::hosts::{self as hook, HookOutcome};

/// `loopguard hook …`: every failure, even of its own flags, ends in a deny with exit 2. The
/// arguments are read by hand: building clap's parser for the whole CLI costs more than a
/// decision, and this runs on every tool call.
pub(crate) fn main(args: &[String]) -> ExitCode {
    std::panic::set_hook(Box::new(|_| {}));
    if args.iter().skip(2).any(|a| a == "--help" || a == "-h") {
        let _ = Cli::try_parse_from(args).map_err(|e| e.print());
        return ExitCode::SUCCESS;
    }
    let outcome = match parse_hook_args(&args[2..]) {
        Some(deadline_ms) => {
            let deadline = Duration::from_millis(deadline_ms);
            match hook::run(hook::claude_code::ClaudeCode, std::io::stdin(), Env::from_process(), deadline) {
                Some(outcome) => outcome,
                None => hook::wait_for_watchdog(),
            }
        }
        None => hook::claude_code::fail(&loopguard::engine::HookError::Usage(
            "the loopguard hook command line is invalid (expected `loopguard hook claude-code [--deadline-ms N]`, N from 10 to 60000); denied.".into(),
        ).decision()),
    };
    emit(&outcome)
}

/// `claude-code [--deadline-ms N | --deadline-ms=N]` → the deadline in ms.
pub(crate) fn parse_hook_args(args: &[String]) -> Option<u64> {
    let (host, rest) = args.split_first()?;
    if host != "claude-code" {
        return None;
    }
    let value = match rest {
        [] => return Some(hook::DEFAULT_DEADLINE.as_millis() as u64),
        [flag, v] if flag == "--deadline-ms" => v.as_str(),
        [flag] => flag.strip_prefix("--deadline-ms=")?,
        _ => return None,
    };
    value.parse().ok().filter(|ms| (10..=60_000).contains(ms))
}

fn emit(o: &HookOutcome) -> ExitCode {
    hook::write_outcome(o);
    ExitCode::from(o.exit.code())
}
