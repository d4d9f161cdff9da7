//! Reading a conversation's stream from any point: stored events after `Last-Event-ID`, then the
//! ones still only in memory, then live ones, each exactly once and in order.

use std::collections::VecDeque;
use std::sync::Arc;

use futures::Stream;
use parley_protocol::StreamEvent;
use tokio::sync::broadcast::error::RecvError;

use super::frame::{Frame, stored_page};
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
    /// Stored events after `last` (and `read`) are still to be read, a page at a time.
    paging: bool,
    /// The last sequence number read from the database.
    read: u64,
    /// What memory held past the stored events, served once the pages are read.
    held: Vec<Arc<Frame>>,
    last: u64,
    until: Until,
    done: bool,
    /// Serve what is stored and held, then stop (the message was already finished).
    drain_only: bool,
}

fn ends(frame: &Frame, until: &Until) -> bool {
    match (until, &frame.event) {
        (Until::MessageEnd(id), StreamEvent::MessageEnd(end)) => &end.message_id == id,
        _ => false,
    }
}

/// Opens the stream of a conversation after `after`. With `Until::MessageEnd` for a message that
/// is already finished, pass `finished = true`: the stream ends after the stored events. Stored
/// events are read [`PAGE_ROWS`](super::frame::PAGE_ROWS) rows at a time, as the client takes
/// them, never the whole conversation at once.
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
    let mut state = Box::new(State {
        db,
        lease,
        rx,
        queue: VecDeque::new(),
        paging: !covered,
        read: after,
        held: recent,
        last: after,
        until,
        done: false,
        drain_only: finished,
    });
    // The first page is read here, so that a database error refuses the stream.
    if state.paging {
        state.next_page().await?;
    } else {
        state.unhold();
    }
    // Boxed: the state is moved in and out of the stream on every event.
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
            if st.paging {
                if let Err(e) = st.next_page().await {
                    tracing::warn!(error = %e, "could not read a stream's stored events");
                    st.paging = false;
                    st.unhold();
                }
                continue;
            }
            if st.drain_only {
                return None;
            }
            match st.rx.recv().await {
                Ok(frame) => st.queue.push_back(frame),
                Err(RecvError::Lagged(_)) => {
                    // Catch up from memory, or from the database (page by page) if memory moved on.
                    st.held = st.lease.recent_after(st.last);
                    if st.held.first().is_some_and(|f| f.seq == st.last + 1) {
                        st.unhold();
                    } else {
                        st.read = st.last;
                        st.paging = true;
                    }
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }))
}

impl State {
    /// Queues the next page of stored events after `last`; after the last page, what memory held.
    async fn next_page(&mut self) -> Result<(), DbError> {
        let from = self.read.max(self.last);
        let (frames, more) = stored_page(&self.db, &self.lease.conversation_id, from).await?;
        self.queue.extend(frames);
        match more {
            Some(read) => self.read = read,
            None => {
                self.paging = false;
                self.unhold();
            }
        }
        Ok(())
    }

    fn unhold(&mut self) {
        self.queue.extend(std::mem::take(&mut self.held));
    }
}
