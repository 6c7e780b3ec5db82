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
        Some((host, deadline_ms, event)) => {
            let deadline = Duration::from_millis(deadline_ms);
            let env = Env { hook_deadline: Some(std::time::Instant::now() + deadline), ..env };
            serve(host, event, env, deadline)
        }
        None => {
            let usage = HookError::Usage(
                "the loopguard hook command line is invalid (expected `loopguard hook <claude-code|codex|gemini|copilot|cursor> [--deadline-ms N]`, N from 10 to 60000, and for copilot's camelCase hooks `--event <event>`); denied.".into(),
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

fn serve(host: Host, event: Option<String>, env: Env, deadline: Duration) -> HookOutcome {
    let stdin = std::io::stdin();
    let outcome = match host {
        Host::ClaudeCode => hook::run(hook::claude_code::ClaudeCode, stdin, env, deadline),
        Host::Codex => hook::run(hook::codex::Codex, stdin, env, deadline),
        Host::Gemini => hook::run(hook::gemini::Gemini, stdin, env, deadline),
        Host::Copilot => hook::run(copilot(event), stdin, env, deadline),
        Host::Cursor => hook::run(hook::cursor::Cursor, stdin, env, deadline),
    };
    outcome.unwrap_or_else(|| hook::wait_for_watchdog())
}

fn failure(host: Host, err: &HookError) -> HookOutcome {
    match host {
        Host::ClaudeCode => hook::claude_code::ClaudeCode.render_failure(None, err),
        Host::Codex => hook::codex::Codex.render_failure(None, err),
        Host::Gemini => hook::gemini::Gemini.render_failure(None, err),
        Host::Copilot => hook::copilot::Copilot::pascal().render_failure(None, err),
        Host::Cursor => hook::cursor::Cursor.render_failure(None, err),
    }
}

/// The Copilot adapter for the registration this call comes from: PascalCase without
/// `--event`, camelCase for the event it names. (A name loopguard does not know lives as long as
/// the process, which is one hook call: the adapter refuses it with its own coded error.)
fn copilot(event: Option<String>) -> hook::copilot::Copilot {
    use hook::copilot::{CAMEL_EVENTS, Copilot};
    match event {
        None => Copilot::pascal(),
        Some(e) => match CAMEL_EVENTS.iter().find(|(n, _)| *n == e) {
            Some((known, _)) => Copilot::camel(known),
            None => Copilot::camel(Box::leak(e.into_boxed_str())),
        },
    }
}

/// `<host> [--deadline-ms N | --deadline-ms=N] [--event E | --event=E]` → the host, the deadline
/// in ms and the event the command names (Copilot's camelCase registrations only: their input
/// does not name it). Each flag at most once, in any order.
pub(crate) fn parse_hook_args(args: &[String]) -> Option<(Host, u64, Option<String>)> {
    let (host, mut rest) = args.split_first()?;
    let host = Host::from_name(host)?;
    let (mut deadline, mut event) = (None, None);
    while let Some((flag, tail)) = rest.split_first() {
        let (name, value, tail) = match flag.split_once('=') {
            Some((n, v)) => (n, v, tail),
            None => {
                let (v, t) = tail.split_first()?;
                (flag.as_str(), v.as_str(), t)
            }
        };
        match name {
            "--deadline-ms" if deadline.is_none() => {
                deadline = Some(value.parse().ok().filter(|ms| (10..=60_000).contains(ms))?);
            }
            "--event" if event.is_none() && host == Host::Copilot && !value.is_empty() => {
                event = Some(value.to_string());
            }
            _ => return None,
        }
        rest = tail;
    }
    Some((host, deadline.unwrap_or(hook::DEFAULT_DEADLINE.as_millis() as u64), event))
}

fn emit(o: &HookOutcome) -> ExitCode {
    hook::write_outcome(o);
    ExitCode::from(o.exit.code())
}
