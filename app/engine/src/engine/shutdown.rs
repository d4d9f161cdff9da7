//! Graceful shutdown. On SIGTERM or Ctrl-C the server stops taking new turns (`503 unavailable`
//! with `Retry-After`, and `/healthz` answers 503 so a load balancer sends visitors elsewhere),
//! lets the running answers finish for a grace period, then ends the ones still running as
//! `interrupted` (with their final `message_end`), closes the open streams so widgets resume on
//! another replica, and waits until the stream writer has stored everything.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Engine;

/// How long answers stopped after the grace period get to store their end.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// How long the shutdown waits for the writer to store what it holds.
const FLUSH_WAIT: Duration = Duration::from_secs(30);

/// What a shutdown did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Answers that finished within the grace period.
    pub finished: usize,
    /// Answers ended as `interrupted` when the grace period was over.
    pub interrupted: usize,
    /// Everything the writer held was stored.
    pub flushed: bool,
}

/// The engine's shutdown state.
#[derive(Debug, Default)]
pub struct Shutdown {
    draining: AtomicBool,
    /// Cancelled when the grace period is over: every running turn's stop token is a child.
    stop_turns: CancellationToken,
    /// Cancelled once the answers have ended: open streams end.
    close_streams: CancellationToken,
    turns: TaskTracker,
}

impl Shutdown {
    /// New turns are refused.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// A running turn's stop token: the visitor's stop, or the end of the grace period.
    pub fn turn_token(&self) -> CancellationToken {
        self.stop_turns.child_token()
    }

    /// True once running turns are being stopped by the shutdown (not by their visitor).
    pub fn stopping_turns(&self) -> &CancellationToken {
        &self.stop_turns
    }

    /// Cancelled when open streams should end.
    pub fn streams_closing(&self) -> &CancellationToken {
        &self.close_streams
    }

    /// Runs a turn, counted so the shutdown can wait for it.
    pub fn spawn_turn<F>(&self, turn: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        // The turn's log lines carry the span of the request that started it (its request id).
        self.turns.spawn(tracing::Instrument::instrument(turn, tracing::Span::current()));
    }

    /// Answers running now.
    pub fn running_turns(&self) -> usize {
        self.turns.len()
    }
}

impl Engine {
    pub fn shutdown_state(&self) -> &Shutdown {
        &self.0.shutdown
    }

    /// Drains: refuses new turns, waits up to `grace` for running answers, interrupts the rest,
    /// closes open streams and flushes the writer. Safe to call more than once.
    pub async fn shutdown(&self, grace: Duration) -> ShutdownReport {
        let s = &self.0.shutdown;
        s.draining.store(true, Ordering::Release);
        s.turns.close();
        let running = s.turns.len();
        tracing::info!(running, grace_secs = grace.as_secs_f64(), "draining: new turns are refused");
        let mut report = ShutdownReport::default();
        if tokio::time::timeout(grace, s.turns.wait()).await.is_err() {
            report.interrupted = s.turns.len();
            tracing::warn!(answers = report.interrupted, "grace period over: stopping the running answers");
            s.stop_turns.cancel();
            if tokio::time::timeout(STOP_WAIT, s.turns.wait()).await.is_err() {
                tracing::error!(answers = s.turns.len(), "answers did not end after being stopped");
            }
        }
        report.finished = running.saturating_sub(report.interrupted);
        s.close_streams.cancel();
        // A database that stays away does not hold the process forever.
        report.flushed = tokio::time::timeout(FLUSH_WAIT, self.flush()).await.unwrap_or(false);
        if !report.flushed {
            tracing::error!("the stream writer could not store everything before shutdown");
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn turn_tokens_are_stopped_by_the_shutdown_only() {
        let s = Shutdown::default();
        let a = s.turn_token();
        let b = s.turn_token();
        a.cancel();
        assert!(!b.is_cancelled() && !s.stopping_turns().is_cancelled());
        s.stop_turns.cancel();
        assert!(b.is_cancelled());
    }
}
