//! Host adapters: each parses its host's hook input into a [`HostEvent`], lets the
//! [`Engine`] decide, and renders the [`Answer`] (or the deny of a [`HookError`]) in its host's
//! protocol. An adapter decides nothing. Every call runs under [`run_with_deadline`]: panics
//! are caught, and if no answer is ready in time a watchdog thread answers the host with a deny
//! and exits. Hosts fail open on crashes, hangs and bad output, so every path here ends in an
//! explicit answer.

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
pub mod input;

use crate::engine::{Answer, Capabilities, Engine, HookError, HostEvent};
use crate::state::Env;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// Largest hook input accepted; anything larger is denied unread.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

/// Default deadline for one hook call.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(2000);

/// How the hook process exits. Hosts read exit 1 as "proceed" (or ignore it), so the type
/// has no way to say 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exit 0: the host reads stdout (the answer, or nothing: its own flow goes on).
    Proceed,
    /// Exit 2: the host blocks the call (or the event) and shows stderr.
    Block,
}

impl Exit {
    /// The process exit status.
    pub fn code(self) -> u8 {
        match self {
            Exit::Proceed => 0,
            Exit::Block => 2,
        }
    }
}

/// What the hook process prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookOutcome {
    /// Written to stdout.
    pub stdout: String,
    /// Written to stderr.
    pub stderr: String,
    /// How the process exits.
    pub exit: Exit,
}

impl HookOutcome {
    /// Exit 0 with nothing to say.
    pub fn proceed() -> Self {
        HookOutcome { stdout: String::new(), stderr: String::new(), exit: Exit::Proceed }
    }
}

/// A host's hook protocol: parsing its input, rendering answers, and what it can do with them.
pub trait Host: Copy + Send + 'static {
    /// The host's name on the command line (`loopguard hook <name>`), kept in audit events.
    const NAME: &'static str;

    /// What the host does with answers.
    fn capabilities(&self) -> Capabilities;

    /// Parses one hook input. An error carries what could be read of the event (session,
    /// directory, event name), so an input error can still be put on record.
    fn parse(&self, bytes: &[u8]) -> Result<HostEvent, Rejected>;

    /// Renders the engine's answer to `ev`.
    fn render(&self, ev: &HostEvent, answer: Answer) -> HookOutcome;

    /// Renders the deny of an error, for the event when it is known (some events, such as
    /// Claude Code's Stop, must not exit 2).
    fn render_failure(&self, ev: Option<&HostEvent>, err: &HookError) -> HookOutcome;
}

/// An input the adapter could not turn into an event.
#[derive(Debug, Clone)]
pub struct Rejected {
    /// Why.
    pub error: HookError,
    /// The session, when it could be read.
    pub session: String,
    /// The working directory, when it could be read.
    pub cwd: Option<std::path::PathBuf>,
    /// The event's name, when the input got that far.
    pub event: Option<String>,
}

impl Rejected {
    /// An input nothing could be read from.
    pub fn bare(error: HookError) -> Self {
        Rejected { error, session: String::new(), cwd: None, event: None }
    }
}

/// One hook call, already read: parse, decide, render. The one place where an error becomes
/// the host's deny.
pub fn serve<H: Host>(host: H, bytes: &[u8], env: &Env) -> HookOutcome {
    let engine = Engine::new(env, host.capabilities()).for_host(H::NAME);
    let ev = match host.parse(bytes) {
        Ok(ev) => ev,
        Err(r) => {
            engine.record_failure(&r.session, r.cwd.as_deref(), r.event.as_deref(), &r.error);
            return host.render_failure(None, &r.error);
        }
    };
    match engine.handle(&ev) {
        Ok(answer) => host.render(&ev, answer),
        Err(e) => {
            engine.record_failure(&ev.session, Some(&ev.cwd), Some(&ev.name), &e);
            host.render_failure(Some(&ev), &e)
        }
    }
}

/// Runs one hook call for `host`: reads the event from `stdin`, decides, answers. Never panics.
/// If the deadline passes first, the deny is printed and the process exits from the watchdog
/// thread, and this returns `None` (the caller must then wait: see [`wait_for_watchdog`]).
pub fn run<H: Host>(host: H, stdin: impl Read, env: Env, deadline: Duration) -> Option<HookOutcome> {
    run_with_deadline(
        deadline,
        move || match read_bounded(stdin) {
            Ok(bytes) => serve(host, &bytes, &env),
            Err(e) => host.render_failure(None, &HookError::InputInvalid(format!("cannot read the hook input: {e}"))),
        },
        move || {
            host.render_failure(
                None,
                &HookError::Internal("loopguard failed internally while deciding; the call is denied.".into()),
            )
        },
        move || answer_and_exit(&host.render_failure(None, &HookError::Deadline(deadline.as_millis()))),
    )
}

/// Reads at most [`MAX_INPUT_BYTES`] + 1 bytes, so oversized input is detected without reading
/// it all.
pub fn read_bounded(mut input: impl Read) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    input.by_ref().take(MAX_INPUT_BYTES as u64 + 1).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Runs `work` on the calling thread, with a watchdog thread holding the deadline. A panic in
/// `work` becomes `on_panic()`. If `work` has not finished by `deadline`, the watchdog claims the
/// answer and calls `on_timeout` — which must answer the host and end the process (see
/// [`answer_and_exit`]) — and this returns `None`: the caller must then print nothing and
/// never return from `main` (see [`wait_for_watchdog`]), or the process could exit 0 first.
///
/// Why the work stays on the calling thread: handing it to a worker thread cost ~90 µs per hook
/// call here, the watchdog ~55 µs (std's thread start registers a TLS destructor, glibc mallocs
/// for it and so maps a fresh arena: unavoidable with `std::thread`). Waiting with
/// `park_timeout` instead of the channel measured ~2% slower end to end.
pub fn run_with_deadline<W, P, T>(deadline: Duration, work: W, on_panic: P, on_timeout: T) -> Option<HookOutcome>
where
    W: FnOnce() -> HookOutcome,
    P: FnOnce() -> HookOutcome,
    T: FnOnce() + Send + 'static,
{
    let claimed = Arc::new(AtomicBool::new(false));
    let (done, wait) = mpsc::channel::<()>();
    let watchdog_claimed = Arc::clone(&claimed);
    let spawned =
        std::thread::Builder::new().name("loopguard-deadline".into()).stack_size(64 * 1024).spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(deadline)
                && claim(&watchdog_claimed)
                // A panic while answering must still end the process blocked, never leave the
                // main thread parked until the host gives up (the host would then proceed).
                && std::panic::catch_unwind(std::panic::AssertUnwindSafe(on_timeout)).is_err()
            {
                std::process::exit(2);
            }
        });
    if spawned.is_err() {
        // No watchdog, no deadline: do not start work that could hang unanswered.
        return Some(on_panic());
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    if !claim(&claimed) {
        return None;
    }
    drop(done);
    Some(result.unwrap_or_else(|_| on_panic()))
}

/// The first caller wins the right to answer.
fn claim(flag: &AtomicBool) -> bool {
    flag.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_ok()
}

/// Writes an outcome to stdout and stderr (errors ignored: there is nobody left to tell).
pub fn write_outcome(o: &HookOutcome) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(o.stdout.as_bytes());
    let _ = out.flush();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(o.stderr.as_bytes());
    let _ = err.flush();
}

/// For a watchdog's `on_timeout`: answer and end the process now, whatever the work is doing.
pub fn answer_and_exit(o: &HookOutcome) -> ! {
    write_outcome(o);
    std::process::exit(i32::from(o.exit.code()))
}

/// For the caller when [`run_with_deadline`] returned `None`: the watchdog is answering and
/// will end the process; returning from `main` could exit 0 before it does.
/// Should the watchdog somehow not exit within a second, the process exits 2 (blocking) itself.
pub fn wait_for_watchdog() -> ! {
    std::thread::sleep(Duration::from_secs(1));
    std::process::exit(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(tag: &str) -> HookOutcome {
        HookOutcome { stdout: tag.into(), stderr: String::new(), exit: Exit::Proceed }
    }

    #[test]
    fn a_panicking_worker_becomes_the_panic_answer() {
        let o = run_with_deadline(Duration::from_secs(5), || std::panic::panic_any("boom"), || outcome("panic"), || {});
        assert_eq!(o.map(|o| o.stdout).as_deref(), Some("panic"));
    }

    #[test]
    fn a_slow_worker_loses_the_answer_to_the_watchdog() {
        let (tx, rx) = mpsc::channel();
        let o = run_with_deadline(
            Duration::from_millis(20),
            || {
                // Wait until the watchdog has answered, then finish: too late to be heard.
                let _ = rx.recv_timeout(Duration::from_secs(30));
                outcome("late")
            },
            || outcome("panic"),
            move || {
                let _ = tx.send(());
            },
        );
        assert_eq!(o, None);
    }

    #[test]
    fn a_prompt_worker_answers_and_the_watchdog_stays_silent() {
        let (tx, rx) = mpsc::channel();
        let o = run_with_deadline(
            Duration::from_millis(50),
            || outcome("done"),
            || outcome("panic"),
            move || {
                let _ = tx.send(());
            },
        );
        assert_eq!(o.map(|o| o.stdout).as_deref(), Some("done"));
        // Past the deadline the watchdog must still not fire: the answer is claimed.
        assert_eq!(rx.recv_timeout(Duration::from_millis(300)), Err(mpsc::RecvTimeoutError::Disconnected));
    }

    #[test]
    fn reading_is_bounded() {
        let big = vec![b'x'; MAX_INPUT_BYTES + 100];
        assert_eq!(read_bounded(&big[..]).unwrap().len(), MAX_INPUT_BYTES + 1);
    }
}
