//! The stream writer: one task that persists visitor turns, events, tool calls, usage and final
//! message states in batched transactions, off the streaming path. Consecutive tokens of a
//! conversation are stored as one row (they are also how a crashed answer's partial text is
//! recovered). Turns and flushes are urgent: written at once, and turns that arrive together are
//! committed together (group commit). Everything else waits up to `interval`, without waking the
//! writer for each event.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::clock::Clock;
use super::frame::Frame;
use crate::store::Db;
use crate::store::batch::{Batch, FinishedMessage};
use crate::store::messages::NewTurn;
use crate::store::tool_calls::ToolCallRecord;
use crate::store::usage::UsageRecord;

mod conn;
mod queue;
mod rows;

pub use super::frame::expand;
use conn::Conn;
use queue::Queue;
use rows::{Built, build};

/// Why a visitor's turn was not stored.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("the stream writer has stopped")]
    Stopped,
    #[error("the stream writer's queue is full (the database is slow or unreachable)")]
    Full,
    #[error("the database is unreachable")]
    Unavailable,
    #[error(transparent)]
    Db(#[from] crate::store::DbError),
}

impl WriteError {
    /// The database is unreachable or behind (the visitor is told to try again), rather than
    /// refusing the data.
    pub fn is_unavailable(&self) -> bool {
        match self {
            WriteError::Stopped | WriteError::Full | WriteError::Unavailable => true,
            WriteError::Db(e) => crate::store::is_unavailable(e),
        }
    }
}

/// Work someone waits for.
enum Urgent {
    Turn(Box<NewTurn>, oneshot::Sender<Result<(), WriteError>>),
    Flush(oneshot::Sender<bool>),
}

/// Work that can wait for the next batch.
enum Op {
    /// Kept until the events before it are stored (a hub lease: the channel stays alive).
    Release(Box<dyn Send>),
    Event {
        conversation_id: Arc<str>,
        frame: Arc<Frame>,
    },
    // Boxed: an `Op` is moved through the queue for every event, so it stays the size of the
    // small variants.
    ToolCall(Box<ToolCallRecord>),
    Usage(Box<UsageRecord>),
    Finish(Box<FinishedMessage>),
    /// Gives a conversation's slot back after the events queued before it (replicas).
    SlotRelease {
        conversation_id: String,
        token: String,
    },
}

/// Handle to the writer task.
#[derive(Clone)]
pub struct Writer {
    urgent: mpsc::UnboundedSender<Urgent>,
    ops: mpsc::UnboundedSender<Op>,
    queue: Arc<Queue>,
}

/// How long a new turn waits for room in a full queue before it is refused (503).
const TURN_WAIT: Duration = Duration::from_secs(5);

impl Writer {
    /// Starts the writer; it writes at most every `interval` unless someone waits. At most
    /// `queue_limit` operations wait to be stored: past that, turns wait for room (backpressure).
    pub fn spawn(db: Db, clock: Arc<dyn Clock>, interval: Duration, queue_limit: usize) -> Self {
        let (urgent, urgent_rx) = mpsc::unbounded_channel();
        let (ops, ops_rx) = mpsc::unbounded_channel();
        let queue = Arc::new(Queue::new(queue_limit));
        tokio::spawn(run(db, clock, interval, queue.clone(), urgent_rx, ops_rx));
        Writer { urgent, ops, queue }
    }

    /// Commits a visitor turn (with other turns waiting at the same moment). With the queue
    /// full it waits a little for room, then refuses (`Full`): memory stays bounded.
    pub async fn begin_turn(&self, turn: NewTurn) -> Result<(), WriteError> {
        if self.queue.full() && tokio::time::timeout(TURN_WAIT, self.queue.room()).await.is_err() {
            return Err(WriteError::Full);
        }
        let (tx, rx) = oneshot::channel();
        self.urgent.send(Urgent::Turn(Box::new(turn), tx)).map_err(|_| WriteError::Stopped)?;
        rx.await.unwrap_or(Err(WriteError::Stopped))
    }

    /// Waits while the queue is full: a turn calls it between tokens, so a stalled database
    /// slows the answers instead of growing memory.
    pub async fn room(&self) {
        if self.queue.full() {
            self.queue.room().await;
        }
    }

    /// The writer is waiting for the database to come back: new turns are refused (503) rather
    /// than queued behind the outage.
    pub fn outage(&self) -> bool {
        self.queue.outage.load(Ordering::Relaxed)
    }

    /// Operations waiting to be stored.
    pub fn queue_depth(&self) -> usize {
        self.queue.depth.load(Ordering::Relaxed)
    }

    fn op(&self, op: Op) {
        self.queue.add();
        if self.ops.send(op).is_err() {
            self.queue.done(1);
        }
    }

    /// Drops `lease` once everything sent before it is stored, so the channel outlives its
    /// unstored events (a new channel numbers from what is stored). Any value: the writer only
    /// holds it (the hub's `Lease` in practice; the writer knows nothing of the hub).
    pub fn release(&self, lease: impl Send + 'static) {
        self.op(Op::Release(Box::new(lease)));
    }

    /// Stores an event.
    pub fn event(&self, conversation_id: &Arc<str>, frame: Arc<Frame>) {
        self.op(Op::Event { conversation_id: conversation_id.clone(), frame });
    }

    pub fn tool_call(&self, record: ToolCallRecord) {
        self.op(Op::ToolCall(Box::new(record)));
    }

    pub fn usage(&self, record: UsageRecord) {
        self.op(Op::Usage(Box::new(record)));
    }

    pub fn finish(&self, message: FinishedMessage) {
        self.op(Op::Finish(Box::new(message)));
    }

    /// Gives a conversation's slot back, in the transaction that stores the last events numbered
    /// under it or a later one.
    pub fn release_slot(&self, conversation_id: &str, token: String) {
        self.op(Op::SlotRelease { conversation_id: conversation_id.to_owned(), token });
    }

    /// Waits until everything sent so far is stored; false if some of it was refused.
    pub async fn flush(&self) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.urgent.send(Urgent::Flush(tx)).is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }
}

async fn run(
    db: Db,
    clock: Arc<dyn Clock>,
    interval: Duration,
    queue: Arc<Queue>,
    mut urgent_rx: mpsc::UnboundedReceiver<Urgent>,
    mut ops_rx: mpsc::UnboundedReceiver<Op>,
) {
    let mut conn = Conn::new(db, queue.clone());
    let mut urgent: Vec<Urgent> = Vec::new();
    let mut ops: Vec<Op> = Vec::with_capacity(4096);
    let mut deadline: Option<tokio::time::Instant> = None;
    let (mut urgent_open, mut ops_open) = (true, true);
    while urgent_open || ops_open || !ops.is_empty() {
        tokio::select! {
            biased;
            u = urgent_rx.recv(), if urgent_open => match u {
                Some(u) => urgent.push(u),
                None => urgent_open = false,
            },
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)), if deadline.is_some() => {}
            n = ops_rx.recv_many(&mut ops, 4096), if deadline.is_none() && ops_open => {
                if n == 0 {
                    ops_open = false;
                } else {
                    // The first op starts the clock; the rest are collected when it runs out.
                    deadline = Some(tokio::time::Instant::now() + interval);
                    continue;
                }
            }
        }
        while let Ok(u) = urgent_rx.try_recv() {
            urgent.push(u);
        }
        let due = deadline.is_some_and(|d| d <= tokio::time::Instant::now());
        if urgent.is_empty() && !due && (ops_open || urgent_open) {
            continue;
        }
        // Everything queued so far goes into this batch (a flush covers what was sent before it).
        while let Ok(op) = ops_rx.try_recv() {
            ops.push(op);
        }
        deadline = None;
        let n = ops.len();
        write(&mut conn, std::mem::take(&mut urgent), std::mem::take(&mut ops), clock.now_ms()).await;
        queue.done(n);
    }
}

async fn write(conn: &mut Conn, urgent: Vec<Urgent>, ops: Vec<Op>, now: i64) {
    let Built { mut batch, releases, frames } = build(ops, now);
    let mut flushes = Vec::new();
    let mut turn_waiters = Vec::new();
    for u in urgent {
        match u {
            Urgent::Turn(turn, w) => {
                batch.turns.push(*turn);
                turn_waiters.push(w);
            }
            Urgent::Flush(w) => flushes.push(w),
        }
    }
    let mut all_stored = true;
    match conn.write(&batch, false).await {
        Ok(()) => {
            for w in turn_waiters {
                let _ = w.send(Ok(()));
            }
        }
        Err(first) => {
            // Visitors waiting for their turn are answered at once: with the database down they
            // are told to try again (503) rather than kept waiting; a turn the database refuses
            // is found by trying each alone.
            let unavailable = crate::store::is_unavailable(&first);
            for (turn, w) in std::mem::take(&mut batch.turns).into_iter().zip(turn_waiters) {
                let result = if unavailable {
                    Err(WriteError::Unavailable)
                } else {
                    let single = Batch { turns: vec![turn], ..Batch::default() };
                    conn.write(&single, false).await.map_err(|e| {
                        tracing::warn!(error = %e, "a visitor turn could not be stored");
                        WriteError::Db(e)
                    })
                };
                let _ = w.send(result);
            }
            all_stored = store_rest(conn, batch).await;
        }
    }
    if all_stored {
        for frame in &frames {
            frame.mark_stored();
        }
    }
    for w in flushes {
        let _ = w.send(all_stored);
    }
    drop(releases);
}

/// Stores what a failed batch held (its turns already answered): the whole batch again once the
/// database is back; if the database refuses the data, row by row, so one bad row sinks no
/// other; a refused row is written again repaired (NUL taken out), and only if that fails too
/// it is left out, with a logged reason. False if any row was left out.
async fn store_rest(conn: &mut Conn, batch: Batch) -> bool {
    if batch.is_empty() {
        return true;
    }
    if conn.write_patiently(&batch, false).await.is_ok() {
        return true;
    }
    let mut all = true;
    for piece in batch.pieces() {
        if conn.write_patiently(&piece, false).await.is_ok() {
            continue;
        }
        match conn.write_patiently(&piece, true).await {
            Ok(()) => {
                metrics::counter!("parley_writer_rows_repaired_total").increment(1);
                tracing::warn!(row = %piece.describe(), "a row the database refused was stored with its NUL characters replaced");
            }
            Err(e) => {
                all = false;
                metrics::counter!("parley_writer_rows_refused_total").increment(1);
                tracing::error!(row = %piece.describe(), error = %e, "the database refused a row: it was not stored");
            }
        }
    }
    all
}
