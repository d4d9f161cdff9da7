//! The writer's queue depth, shared by its handles and its task: the bound that makes turns wait
//! (backpressure) instead of memory growing while the database is slow.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// Operations queued and not yet stored, shared by the handles and the task.
#[derive(Debug)]
pub(super) struct Queue {
    pub(super) depth: AtomicUsize,
    limit: usize,
    room: Notify,
    /// The writer is waiting for an unreachable database.
    pub(super) outage: AtomicBool,
}

impl Queue {
    /// At most `limit` operations wait (at least one).
    pub(super) fn new(limit: usize) -> Self {
        Queue { depth: AtomicUsize::new(0), limit: limit.max(1), room: Notify::new(), outage: AtomicBool::new(false) }
    }

    pub(super) fn add(&self) {
        self.depth.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn done(&self, n: usize) {
        let before = self.depth.fetch_sub(n, Ordering::AcqRel);
        metrics::gauge!("parley_writer_queue_depth").set(before.saturating_sub(n) as f64);
        if before >= self.limit && before - n < self.limit {
            self.room.notify_waiters();
        }
    }

    pub(super) fn full(&self) -> bool {
        self.depth.load(Ordering::Relaxed) >= self.limit
    }

    /// Waits until the queue is below its limit.
    pub(super) async fn room(&self) {
        while self.full() {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !self.full() {
                return;
            }
            notified.await;
        }
    }
}
