//! One transaction of everything the stream writer collected since its last flush.

use parley_widget::protocol::{Block, MessageStatus};

use super::events::{EventRow, TextAppend};
use super::tool_calls::{self, ToolCallRecord};
use super::usage::{self, UsageRecord};
use super::{Db, DbError, to_json_text};

/// The final state of an assistant message.
#[derive(Clone, Debug)]
pub struct FinishedMessage {
    pub message_id: String,
    pub content: String,
    pub blocks: Vec<Block>,
    pub status: MessageStatus,
    pub at: i64,
}

/// What a flush writes.
#[derive(Debug, Default)]
pub struct Batch {
    pub events: Vec<EventRow>,
    pub appends: Vec<TextAppend>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub usage: Vec<UsageRecord>,
    pub finished: Vec<FinishedMessage>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
            && self.appends.is_empty()
            && self.tool_calls.is_empty()
            && self.usage.is_empty()
            && self.finished.is_empty()
    }
}

/// Writes the batch in one transaction (events first, final message states last).
pub async fn write(db: &Db, batch: &Batch) -> Result<(), DbError> {
    if batch.is_empty() {
        return Ok(());
    }
    let mut tx = db.pool().begin().await?;
    super::events::insert_rows(&mut tx, &batch.events).await?;
    for a in &batch.appends {
        sqlx::query("UPDATE messages SET content = content || $2 WHERE id = $1 AND status = 'streaming'")
            .bind(&a.message_id)
            .bind(&a.text)
            .execute(&mut *tx)
            .await?;
    }
    for r in &batch.tool_calls {
        tool_calls::insert(&mut *tx, r).await?;
    }
    for r in &batch.usage {
        usage::insert(&mut *tx, r).await?;
    }
    for f in &batch.finished {
        sqlx::query("UPDATE messages SET content = $2, blocks = $3, status = $4, updated_at = $5 WHERE id = $1")
            .bind(&f.message_id)
            .bind(&f.content)
            .bind(to_json_text(&f.blocks))
            .bind(f.status.as_str())
            .bind(f.at)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await
}
