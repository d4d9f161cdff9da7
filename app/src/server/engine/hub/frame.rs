//! A numbered event as the hub hands it out: the event, its SSE text rendered once for every
//! subscriber, and whether the stream writer has stored it yet.

use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use parley_widget::protocol::StreamEvent;

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
