//! `loopguard hook <host>`: read by hand, never by clap, so that every failure (even of the hook's
//! own flags) still answers the host with a deny.

use super::*;
use clap::Parser;
use loopguard::engine::HookError;
use loopguard::hosts::{self as hook, HookOutcome, Host as _};

/// `loopguard hook …`: every failure, even of its own flags, ends in a deny. The arguments are
/// read by hand: building clap's parser for the whole CLI costs more than a decision, and this
/// runs on every tool call.
pub(crate) fn main(args: &[String]) -> ExitCode {
    std::panic::set_hook(Box::new(|_| {}));
    if args.iter().skip(2).any(|a| a == "--help" || a == "-h") {
        let _ = Cli::try_parse_from(args).map_err(|e| e.print());
        return ExitCode::SUCCESS;
    }
    let env = Env::from_process();
    let outcome = match parse_hook_args(&args[2..]) {
        Some((host, deadline_ms)) => serve(host, env, Duration::from_millis(deadline_ms)),
        None => {
            let usage = HookError::Usage(
                "the loopguard hook command line is invalid (expected `loopguard hook <claude-code|codex|gemini|copilot|cursor> [--deadline-ms N]`, N from 10 to 60000); denied.".into(),
            );
            // The host is not known: a JSON deny on stdout and exit 2 block in every host.
            match args.get(2).and_then(|h| Host::from_name(h)) {
                Some(host) => failure(host, &usage),
                None => hook::claude_code::fail(&usage.decision()),
            }
        }
    };
    emit(&outcome)
}

fn serve(host: Host, env: Env, deadline: Duration) -> HookOutcome {
    let stdin = std::io::stdin();
    let outcome = match host {
        Host::ClaudeCode => hook::run(hook::claude_code::ClaudeCode, stdin, env, deadline),
        Host::Codex => hook::run(hook::codex::Codex, stdin, env, deadline),
        Host::Gemini => hook::run(hook::gemini::Gemini, stdin, env, deadline),
        Host::Copilot => hook::run(hook::copilot::Copilot, stdin, env, deadline),
        Host::Cursor => hook::run(hook::cursor::Cursor, stdin, env, deadline),
    };
    outcome.unwrap_or_else(|| hook::wait_for_watchdog())
}

fn failure(host: Host, err: &HookError) -> HookOutcome {
    match host {
        Host::ClaudeCode => hook::claude_code::ClaudeCode.render_failure(None, err),
        Host::Codex => hook::codex::Codex.render_failure(None, err),
        Host::Gemini => hook::gemini::Gemini.render_failure(None, err),
        Host::Copilot => hook::copilot::Copilot.render_failure(None, err),
        Host::Cursor => hook::cursor::Cursor.render_failure(None, err),
    }
}

/// `<host> [--deadline-ms N | --deadline-ms=N]` → the host and the deadline in ms.
pub(crate) fn parse_hook_args(args: &[String]) -> Option<(Host, u64)> {
    let (host, rest) = args.split_first()?;
    let host = Host::from_name(host)?;
    let value = match rest {
        [] => return Some((host, hook::DEFAULT_DEADLINE.as_millis() as u64)),
        [flag, v] if flag == "--deadline-ms" => v.as_str(),
        [flag] => flag.strip_prefix("--deadline-ms=")?,
        _ => return None,
    };
    value.parse().ok().filter(|ms| (10..=60_000).contains(ms)).map(|ms| (host, ms))
}

fn emit(o: &HookOutcome) -> ExitCode {
    hook::write_outcome(o);
    ExitCode::from(o.exit.code())
}
