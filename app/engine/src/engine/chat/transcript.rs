//! The conversation as the panel shows it after a reload: messages with their blocks (a payment
//! block with its order's current state), tool calls and images.

use parley_protocol::{Block, PaymentStatus, Transcript, TranscriptMessage};

use super::super::Engine;
use super::ChatError;
use crate::store::visitors::Visitor;
use crate::store::{messages, tool_calls};

impl Engine {
    /// The conversation as the panel shows it after a reload.
    pub async fn transcript(&self, visitor: &Visitor, conversation_id: &str) -> Result<Transcript, ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        let rows = messages::list(self.db(), &conv.id).await?;
        let calls = tool_calls::of_conversation(self.db(), &conv.id).await?;
        let images = crate::store::attachments::of_conversation(self.db(), &conv.id).await?;
        // A payment's state is the order's, whatever the block said when it was stored.
        let orders = crate::store::orders::of_conversation(self.db(), &conv.id).await?;
        let stored_seq = crate::store::events::max_seq(self.db(), &conv.id).await?;
        let live_seq = self.hub().get(&conv.id).map(|lease| lease.last_seq()).unwrap_or(0);
        let ratings = crate::store::ratings::of_conversation(self.db(), &conv.id).await?;
        let rating_of = |target: &str| ratings.iter().find(|(id, _, _)| id == target).map(|(_, score, _)| *score);
        let messages = rows
            .into_iter()
            .map(|m| {
                let tool_calls = calls.iter().filter(|(mid, _)| *mid == m.id).map(|(_, c)| c.clone()).collect();
                let attachments = images.iter().filter(|(mid, _)| *mid == m.id).map(|(_, a)| a.clone()).collect();
                let blocks = m.blocks.into_iter().map(|b| with_order_status(b, &orders)).collect();
                let rating = rating_of(&m.id).and_then(|s| i8::try_from(s).ok());
                TranscriptMessage {
                    id: m.id,
                    role: m.role,
                    text: m.content,
                    blocks,
                    tool_calls,
                    status: m.status,
                    created_at: m.created_at,
                    start_seq: m.start_seq,
                    attachments,
                    rating,
                }
            })
            .collect();
        Ok(Transcript {
            conversation_id: conv.id,
            last_seq: stored_seq.max(live_seq),
            status: conv.status,
            lead_submitted: conv.lead_submitted,
            messages,
            rating: rating_of("").and_then(|s| u8::try_from(s).ok()),
        })
    }
}

/// A payment block with its order's current status.
fn with_order_status(block: Block, orders: &[crate::store::orders::Order]) -> Block {
    match block {
        Block::PaymentQr(mut b) => {
            if let Some(order) = orders.iter().find(|o| o.id == b.order_id) {
                b.status = match order.status.as_str() {
                    "paid" => PaymentStatus::Paid,
                    "expired" => PaymentStatus::Expired,
                    _ => PaymentStatus::Pending,
                };
            }
            Block::PaymentQr(b)
        }
        other => other,
    }
}
