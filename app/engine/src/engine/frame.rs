//! A numbered event as the hub hands it out: the event, its SSE text rendered once for every
//! subscriber, and whether the stream writer has stored it yet; and events read back from the
//! store. Below the hub, the writer and replay, which all use it.

use std::sync::atomic::{AtomicBool, Ordering};

use std::sync::Arc;

use bytes::Bytes;
use parley_protocol::StreamEvent;

use crate::store::events::EventRow;
use crate::store::{self, Db, DbError};

/// A numbered event, with its SSE frame rendered once for every subscriber.
#[derive(Debug)]
pub struct Frame {
    pub seq: u64,
    pub event: StreamEvent,
    pub sse: Bytes,
    /// Not numbered, not stored, not replayed (typing indicators).
    pub ephemeral: bool,
    /// In the database: the channel need not keep it.
    stored: AtomicBool,
}

impl Frame {
    pub fn new(seq: u64, event: StreamEvent) -> Self {
        let sse = Bytes::from(event.to_sse(seq));
        Frame { seq, event, sse, ephemeral: false, stored: AtomicBool::new(false) }
    }

    /// A frame read back from the database.
    pub fn from_store(seq: u64, event: StreamEvent) -> Self {
        let frame = Frame::new(seq, event);
        frame.stored.store(true, Ordering::Relaxed);
        frame
    }

    pub fn ephemeral(event: StreamEvent) -> Self {
        let sse = Bytes::from(event.to_sse_unnumbered());
        Frame { seq: 0, event, sse, ephemeral: true, stored: AtomicBool::new(false) }
    }

    /// Called by the stream writer once the event is committed.
    pub fn mark_stored(&self) {
        self.stored.store(true, Ordering::Release);
    }

    pub fn is_stored(&self) -> bool {
        self.stored.load(Ordering::Acquire)
    }
}
/// Expands a stored row back into numbered events.
pub fn expand(row: &EventRow) -> Vec<(u64, StreamEvent)> {
    if row.name == "token" {
        let texts: Vec<String> = serde_json::from_str(&row.data).unwrap_or_default();
        return texts
            .into_iter()
            .enumerate()
            .map(|(i, text)| (row.seq + i as u64, StreamEvent::Token(parley_protocol::Token { text })))
            .collect();
    }
    match StreamEvent::parse(&row.name, &row.data) {
        Ok(Some(event)) => vec![(row.seq, event)],
        _ => Vec::new(),
    }
}

/// Stored rows a replay reads at a time.
pub(crate) const PAGE_ROWS: i64 = 200;

/// One page of the stored events of a conversation after `after`, as frames, and where the next
/// page starts when more may follow (the page was full).
pub(crate) async fn stored_page(
    db: &Db,
    conversation_id: &str,
    after: u64,
) -> Result<(Vec<Arc<Frame>>, Option<u64>), DbError> {
    let rows = store::events::page(db, conversation_id, after, PAGE_ROWS).await?;
    let more = (rows.len() as i64 >= PAGE_ROWS).then(|| rows.last().map_or(after, |r| r.last_seq));
    let frames = rows
        .iter()
        .flat_map(expand)
        .filter(|(seq, _)| *seq > after)
        .map(|(seq, event)| Arc::new(Frame::from_store(seq, event)))
        .collect();
    Ok((frames, more))
}

/// The stored events of a conversation after `after`, as frames.
pub(crate) async fn stored_after(db: &Db, conversation_id: &str, after: u64) -> Result<Vec<Arc<Frame>>, DbError> {
    let rows = store::events::after(db, conversation_id, after).await?;
    Ok(rows
        .iter()
        .flat_map(expand)
        .filter(|(seq, _)| *seq > after)
        .map(|(seq, event)| Arc::new(Frame::from_store(seq, event)))
        .collect())
}
