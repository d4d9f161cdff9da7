//! Messages of a conversation: what the visitor wrote, what the assistant or an operator answered.

use parley_widget::protocol::{Block, ConversationStatus, MessageStatus, Role};
use sqlx::FromRow;

use super::{Db, DbError, from_json_text};

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub id: String,
    pub conversation_id: String,
    pub role: Role,
    pub content: String,
    pub blocks: Vec<Block>,
    pub status: MessageStatus,
    pub client_message_id: Option<String>,
    pub reply_to: Option<String>,
    pub author: Option<String>,
    pub start_seq: u64,
    pub created_at: i64,
}

#[derive(FromRow)]
struct Row {
    id: String,
    conversation_id: String,
    role: String,
    content: String,
    blocks: String,
    status: String,
    client_message_id: Option<String>,
    reply_to: Option<String>,
    author: Option<String>,
    start_seq: i64,
    created_at: i64,
}

impl From<Row> for Message {
    fn from(r: Row) -> Self {
        Message {
            id: r.id,
            conversation_id: r.conversation_id,
            role: Role::parse(&r.role).unwrap_or(Role::System),
            content: r.content,
            blocks: from_json_text(&r.blocks),
            status: MessageStatus::parse(&r.status).unwrap_or(MessageStatus::Complete),
            client_message_id: r.client_message_id,
            reply_to: r.reply_to,
            author: r.author,
            start_seq: u64::try_from(r.start_seq).unwrap_or(0),
            created_at: r.created_at,
        }
    }
}

const COLUMNS: &str = "id, conversation_id, role, content, blocks, status, client_message_id, reply_to, \
    author, start_seq, created_at";

/// A conversation to create together with the first message.
pub struct NewConversation<'a> {
    pub id: &'a str,
    pub agent_id: &'a str,
    pub visitor_id: &'a str,
}

/// Everything a visitor turn writes before the model is called.
pub struct TurnStart<'a> {
    pub conversation_id: &'a str,
    pub new_conversation: Option<NewConversation<'a>>,
    pub visitor_message_id: &'a str,
    pub text: &'a str,
    pub client_message_id: Option<&'a str>,
    /// The assistant's placeholder, `None` when a person handles the conversation.
    pub assistant_message_id: Option<&'a str>,
    /// Sequence number of the assistant message's `message_start` event.
    pub assistant_start_seq: u64,
    pub now: i64,
}

/// Commits the visitor's message (and the assistant's placeholder) in one transaction.
pub async fn insert_turn_start(db: &Db, t: &TurnStart<'_>) -> Result<(), DbError> {
    let mut tx = db.pool().begin().await?;
    if let Some(c) = &t.new_conversation {
        sqlx::query(
            "INSERT INTO conversations (id, agent_id, visitor_id, status, lead_submitted, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, 0, $5, $5)",
        )
        .bind(c.id)
        .bind(c.agent_id)
        .bind(c.visitor_id)
        .bind(ConversationStatus::Bot.as_str())
        .bind(t.now)
        .execute(&mut *tx)
        .await?;
    } else {
        sqlx::query("UPDATE conversations SET updated_at = $2 WHERE id = $1")
            .bind(t.conversation_id)
            .bind(t.now)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query(
        "INSERT INTO messages (id, conversation_id, role, content, blocks, status, client_message_id, \
         reply_to, author, start_seq, created_at, updated_at) \
         VALUES ($1, $2, 'visitor', $3, '[]', 'complete', $4, NULL, NULL, 0, $5, $5)",
    )
    .bind(t.visitor_message_id)
    .bind(t.conversation_id)
    .bind(t.text)
    .bind(t.client_message_id)
    .bind(t.now)
    .execute(&mut *tx)
    .await?;
    if let Some(assistant_id) = t.assistant_message_id {
        sqlx::query(
            "INSERT INTO messages (id, conversation_id, role, content, blocks, status, client_message_id, \
             reply_to, author, start_seq, created_at, updated_at) \
             VALUES ($1, $2, 'assistant', '', '[]', 'streaming', NULL, $3, NULL, $4, $5, $5)",
        )
        .bind(assistant_id)
        .bind(t.conversation_id)
        .bind(t.visitor_message_id)
        .bind(i64::try_from(t.assistant_start_seq).unwrap_or(i64::MAX))
        .bind(t.now + 1)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

/// The visitor message sent earlier with this client id, and the assistant reply to it.
pub async fn by_client_id(
    db: &Db,
    conversation_id: &str,
    client_message_id: &str,
) -> Result<Option<(Message, Option<Message>)>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM messages WHERE conversation_id = $1 AND client_message_id = $2");
    let visitor: Option<Row> =
        sqlx::query_as(&sql).bind(conversation_id).bind(client_message_id).fetch_optional(db.pool()).await?;
    let Some(visitor) = visitor.map(Message::from) else {
        return Ok(None);
    };
    let sql = format!("SELECT {COLUMNS} FROM messages WHERE reply_to = $1 ORDER BY created_at LIMIT 1");
    let reply: Option<Row> = sqlx::query_as(&sql).bind(&visitor.id).fetch_optional(db.pool()).await?;
    Ok(Some((visitor, reply.map(Message::from))))
}

/// Like [`by_client_id`], across all of a visitor's conversations (a retried first message).
pub async fn by_visitor_client_id(
    db: &Db,
    visitor_id: &str,
    client_message_id: &str,
) -> Result<Option<(Message, Option<Message>)>, DbError> {
    let conversation: Option<String> = sqlx::query_scalar(
        "SELECT m.conversation_id FROM messages m JOIN conversations c ON c.id = m.conversation_id \
         WHERE m.client_message_id = $1 AND c.visitor_id = $2 LIMIT 1",
    )
    .bind(client_message_id)
    .bind(visitor_id)
    .fetch_optional(db.pool())
    .await?;
    match conversation {
        Some(conversation_id) => by_client_id(db, &conversation_id, client_message_id).await,
        None => Ok(None),
    }
}

/// Every message of a conversation, oldest first.
pub async fn list(db: &Db, conversation_id: &str) -> Result<Vec<Message>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY created_at, id");
    let rows: Vec<Row> = sqlx::query_as(&sql).bind(conversation_id).fetch_all(db.pool()).await?;
    Ok(rows.into_iter().map(Message::from).collect())
}

/// The latest `limit` messages, oldest first, for the model's context.
pub async fn recent(db: &Db, conversation_id: &str, limit: i64) -> Result<Vec<Message>, DbError> {
    let sql =
        format!("SELECT {COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2");
    let rows: Vec<Row> = sqlx::query_as(&sql).bind(conversation_id).bind(limit).fetch_all(db.pool()).await?;
    let mut messages: Vec<Message> = rows.into_iter().map(Message::from).collect();
    messages.reverse();
    Ok(messages)
}

/// Marks every message left `streaming` by a previous process as `interrupted`, keeping its
/// partial text. Returns `(conversation_id, message_id)` of each.
pub async fn interrupt_streaming(db: &Db, now: i64) -> Result<Vec<(String, String)>, DbError> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT conversation_id, id FROM messages WHERE status = 'streaming'")
            .fetch_all(db.pool())
            .await?;
    if !rows.is_empty() {
        sqlx::query("UPDATE messages SET status = 'interrupted', updated_at = $1 WHERE status = 'streaming'")
            .bind(now)
            .execute(db.pool())
            .await?;
    }
    Ok(rows)
}
