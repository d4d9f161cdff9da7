//! Where a turn's events go: numbered by the conversation's channel (live to every open stream)
//! and queued for the stream writer (stored).

use std::sync::Arc;

use parley_protocol::{Block, BlockEvent, StreamEvent};

use super::super::hub::Lease;
use super::super::tools::ToolContext;
use super::super::writer::Writer;

/// Sends events of the assistant message to the channel and the writer.
pub(super) struct Out {
    /// When the turn started (its first token's delay is measured from here).
    pub(super) started: std::time::Instant,
    first_token: std::sync::atomic::AtomicBool,
    /// The agent's public key (metric labels).
    pub(super) agent: Arc<str>,
    pub(super) lease: Lease,
    pub(super) writer: Writer,
    pub(super) conversation_id: Arc<str>,
    pub(super) message_id: Arc<str>,
}

impl Out {
    pub(super) fn new(lease: Lease, writer: Writer, ctx: &ToolContext) -> Self {
        Out {
            started: std::time::Instant::now(),
            first_token: std::sync::atomic::AtomicBool::new(false),
            agent: Arc::from(ctx.agent.public_key.as_str()),
            lease,
            writer,
            conversation_id: Arc::from(ctx.conversation_id.as_str()),
            message_id: Arc::from(ctx.message_id.as_str()),
        }
    }

    /// Numbers the event, sends it live and queues it for storage.
    pub(super) fn emit(&self, event: StreamEvent) {
        if matches!(event, StreamEvent::Token(_)) && !self.first_token.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            metrics::histogram!("parley_ttft_seconds", "agent" => self.agent.to_string())
                .record(self.started.elapsed().as_secs_f64());
        }
        let frame = self.lease.emit(event);
        self.writer.event(&self.conversation_id, frame);
    }

    /// Sends a block of the answer.
    pub(super) fn block(&self, block: Block) {
        self.emit(StreamEvent::Block(BlockEvent { message_id: self.message_id.to_string(), block }));
    }
}
