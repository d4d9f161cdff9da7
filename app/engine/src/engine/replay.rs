//! Reading a conversation's stream from any point: stored events after `Last-Event-ID`, then the
//! ones still only in memory, then live ones, each exactly once and in order.

use std::collections::VecDeque;
use std::sync::Arc;

use futures::Stream;
use parley_widget::protocol::StreamEvent;
use tokio::sync::broadcast::error::RecvError;

use super::frame::{Frame, stored_after};
use super::hub::Lease;
use crate::store::{Db, DbError};

/// After a restart, numbering continues this far past the last stored event, so that clients
/// that saw events the old process never stored do not skip new ones.
pub const RESTART_GAP: u64 = 100_000;

/// When a subscription ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Until {
    /// After the `message_end` of this message.
    MessageEnd(String),
    /// When the client goes away.
    Forever,
}

struct State {
    db: Db,
    lease: Lease,
    rx: tokio::sync::broadcast::Receiver<Arc<Frame>>,
    queue: VecDeque<Arc<Frame>>,
    last: u64,
    until: Until,
    done: bool,
    /// Serve what is queued, then stop (the message was already finished).
    drain_only: bool,
}

fn ends(frame: &Frame, until: &Until) -> bool {
    match (until, &frame.event) {
        (Until::MessageEnd(id), StreamEvent::MessageEnd(end)) => &end.message_id == id,
        _ => false,
    }
}

/// Opens the stream of a conversation after `after`. With `Until::MessageEnd` for a message that
/// is already finished, pass `finished = true`: the stream ends after the stored events.
pub async fn open(
    db: Db,
    lease: Lease,
    after: u64,
    until: Until,
    finished: bool,
) -> Result<impl Stream<Item = Arc<Frame>> + Send + 'static, DbError> {
    let (recent, rx) = lease.subscribe(after);
    // Only go to the database when memory does not reach back to `after`.
    let covered = recent.first().is_some_and(|f| f.seq == after + 1);
    let mut queue: VecDeque<Arc<Frame>> = VecDeque::new();
    if !covered {
        queue.extend(stored_after(&db, &lease.conversation_id, after).await?);
    }
    queue.extend(recent);
    if finished {
        // Nothing more will come for this message: serve what is stored up to its end.
        if let Some(seq) = queue.iter().find(|f| ends(f, &until)).map(|f| f.seq) {
            queue.retain(|f| f.seq <= seq);
        }
    }
    // Boxed: the state is moved in and out of the stream on every event.
    let state = Box::new(State { db, lease, rx, queue, last: after, until, done: false, drain_only: finished });
    Ok(futures::stream::unfold(state, |mut st| async move {
        loop {
            if st.done {
                return None;
            }
            while let Some(frame) = st.queue.pop_front() {
                if frame.ephemeral {
                    return Some((frame, st));
                }
                if frame.seq <= st.last {
                    continue;
                }
                st.last = frame.seq;
                if ends(&frame, &st.until) {
                    st.done = true;
                }
                return Some((frame, st));
            }
            if st.drain_only {
                return None;
            }
            match st.rx.recv().await {
                Ok(frame) => st.queue.push_back(frame),
                Err(RecvError::Lagged(_)) => {
                    // Catch up from memory, or from the database if memory moved on.
                    let from_memory = st.lease.recent_after(st.last);
                    if from_memory.first().is_some_and(|f| f.seq == st.last + 1) {
                        st.queue.extend(from_memory);
                    } else {
                        match stored_after(&st.db, &st.lease.conversation_id, st.last).await {
                            Ok(frames) => st.queue.extend(frames),
                            Err(e) => {
                                tracing::warn!(error = %e, "could not catch up a lagging stream")
                            }
                        }
                        st.queue.extend(from_memory);
                    }
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }))
}
