//! Host hook adapters. Every adapter runs under [`run_with_deadline`]: the work happens on a
//! worker thread, panics are caught, and if no answer arrives in time the host gets a deny.
//! The host fails open on crashes, hangs and bad output, so every path here ends in an
//! explicit answer.

pub mod claude_code;

use std::io::Read;
use std::sync::mpsc;
use std::time::Duration;

/// Largest hook input accepted; anything larger is denied unread.
pub const MAX_INPUT_BYTES: usize = 1024 * 1024;

/// Default deadline for one hook call.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(2000);

/// What the hook process prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookOutcome {
    /// Written to stdout.
    pub stdout: String,
    /// Written to stderr.
    pub stderr: String,
    /// Process exit code: 0 or 2, never 1 (hosts treat 1 as "proceed").
    pub exit: u8,
}

/// Reads at most [`MAX_INPUT_BYTES`] + 1 bytes, so oversized input is detected without reading
/// it all.
pub fn read_bounded(mut input: impl Read) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    input.by_ref().take(MAX_INPUT_BYTES as u64 + 1).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Runs `work` on a worker thread and waits at most `deadline`. A panic becomes `on_panic()`, a
/// timeout `on_timeout()`.
pub fn run_with_deadline<W, P, T>(deadline: Duration, work: W, on_panic: P, on_timeout: T) -> HookOutcome
where
    W: FnOnce() -> HookOutcome + Send + 'static,
    P: FnOnce() -> HookOutcome,
    T: FnOnce() -> HookOutcome,
{
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new().name("loopguard-hook".into()).spawn(move || {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
        let _ = tx.send(result);
    });
    if spawned.is_err() {
        return on_panic();
    }
    match rx.recv_timeout(deadline) {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => on_panic(),
        Err(mpsc::RecvTimeoutError::Timeout) => on_timeout(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(tag: &str) -> HookOutcome {
        HookOutcome { stdout: tag.into(), stderr: String::new(), exit: 0 }
    }

    #[test]
    fn a_panicking_worker_becomes_the_panic_answer() {
        let o = run_with_deadline(
            Duration::from_secs(5),
            || std::panic::panic_any("boom"),
            || outcome("panic"),
            || outcome("timeout"),
        );
        assert_eq!(o.stdout, "panic");
    }

    #[test]
    fn a_slow_worker_becomes_the_timeout_answer() {
        let o = run_with_deadline(
            Duration::from_millis(20),
            || {
                std::thread::sleep(Duration::from_secs(5));
                outcome("late")
            },
            || outcome("panic"),
            || outcome("timeout"),
        );
        assert_eq!(o.stdout, "timeout");
    }

    #[test]
    fn a_prompt_worker_answers() {
        let o =
            run_with_deadline(Duration::from_secs(5), || outcome("done"), || outcome("panic"), || outcome("timeout"));
        assert_eq!(o.stdout, "done");
    }

    #[test]
    fn reading_is_bounded() {
        let big = vec![b'x'; MAX_INPUT_BYTES + 100];
        assert_eq!(read_bounded(&big[..]).unwrap().len(), MAX_INPUT_BYTES + 1);
    }
}
