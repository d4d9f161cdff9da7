//! Messages of a conversation: what the visitor wrote, what the assistant or an operator answered.

use parley_protocol::{Block, ConversationStatus, MessageStatus, Role};

use super::script::{Arg, Stmt};
use super::{Db, DbError, from_json_text, insert_rows};

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
    /// The agent's published version that wrote an assistant message (`None`: a person's, or
    /// from before versions).
    pub agent_version: Option<i64>,
}

crate::store::row_struct! {
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
        agent_version: Option<i64>,
    }
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
            agent_version: r.agent_version,
        }
    }
}

const COLUMNS: &str = "id, conversation_id, role, content, blocks, status, client_message_id, reply_to, \
    author, start_seq, created_at, agent_version";

/// A visitor turn to store before the model is called: the visitor's message, the assistant's
/// placeholder (unless a person handles the conversation) and, for a first message, the
/// conversation itself.
#[derive(Clone, Debug)]
pub struct NewTurn {
    pub conversation_id: String,
    /// `(agent_id, visitor_id)` when the conversation is new.
    pub new_conversation: Option<(String, String)>,
    pub visitor_message_id: String,
    pub text: String,
    pub client_message_id: Option<String>,
    pub assistant_message_id: Option<String>,
    /// Sequence number of the assistant message's `message_start` event.
    pub assistant_start_seq: u64,
    pub now: i64,
    /// Uploads sent with the visitor's message (linked to it in the same transaction).
    pub attachments: Vec<String>,
    /// The process writing the answer (its lease; see `store::leases`).
    pub owner: Option<String>,
    /// A new conversation is stored with its slot held by `owner` under this token (replicas;
    /// see `store::slots`).
    pub slot_token: Option<String>,
    /// The conversation waits for or is held by a person: its assignee hears of the message
    /// (issue 43). False for the model's conversations, which then pay nothing for it.
    pub tell_assignee: bool,
    /// What the host page set with `Parley.setContext`, kept on the visitor row (its id, the JSON)
    /// for the contact page (issue 43, part 5).
    pub attributes: Option<(String, String)>,
    /// The visitor message's blocks as stored JSON (`[]`; a submitted form's answers).
    pub visitor_blocks: String,
    /// The agent's published version that writes the answer (stored on the assistant message).
    pub agent_version: Option<i64>,
    /// A new conversation is a trial (an answer test, the draft's preview): see migration 0045.
    pub trial: bool,
}

const ROWS_PER_INSERT: usize = 200;

/// Statements storing turns, several rows per statement (conversations first).
pub fn insert_turn_stmts(turns: &[NewTurn]) -> Vec<Stmt> {
    let conversations = turns
        .iter()
        .filter_map(|t| {
            let (agent_id, visitor_id) = t.new_conversation.clone()?;
            let slot_process = t.slot_token.as_ref().and(t.owner.clone());
            Some(vec![
                Arg::from(&t.conversation_id),
                Arg::from(agent_id),
                Arg::from(visitor_id),
                Arg::from(ConversationStatus::Bot.as_str()),
                Arg::from(0i64),
                Arg::from(t.now),
                Arg::from(t.now),
                Arg::from(slot_process),
                Arg::from(&t.slot_token),
                Arg::from(i64::from(t.trial)),
            ])
        })
        .collect();
    let mut out = insert_rows(
        "conversations (id, agent_id, visitor_id, status, lead_submitted, created_at, updated_at, slot_process, \
         slot_token, trial)",
        10,
        conversations,
        ROWS_PER_INSERT,
    );
    // Visitor messages and assistant placeholders.
    let mut rows: Vec<Vec<Arg>> = Vec::with_capacity(turns.len() * 2);
    for t in turns {
        rows.push(vec![
            Arg::from(&t.visitor_message_id),
            Arg::from(&t.conversation_id),
            Arg::from("visitor"),
            Arg::from(&t.text),
            Arg::from(if t.visitor_blocks.is_empty() { "[]" } else { t.visitor_blocks.as_str() }),
            Arg::from("complete"),
            Arg::from(&t.client_message_id),
            Arg::MaybeText(None),
            Arg::MaybeText(None),
            Arg::from(0i64),
            Arg::from(t.now),
            Arg::from(t.now),
            Arg::MaybeText(None),
            Arg::MaybeInt(None),
        ]);
        if let Some(assistant) = &t.assistant_message_id {
            rows.push(vec![
                Arg::from(assistant),
                Arg::from(&t.conversation_id),
                Arg::from("assistant"),
                Arg::from(""),
                Arg::from("[]"),
                Arg::from("streaming"),
                Arg::MaybeText(None),
                Arg::MaybeText(Some(t.visitor_message_id.clone())),
                Arg::MaybeText(None),
                Arg::from(t.assistant_start_seq),
                Arg::from(t.now + 1),
                Arg::from(t.now + 1),
                Arg::from(&t.owner),
                Arg::MaybeInt(t.agent_version),
            ]);
        }
    }
    out.extend(insert_rows(
        "messages (id, conversation_id, role, content, blocks, status, client_message_id, reply_to, author, \
         start_seq, created_at, updated_at, owner, agent_version)",
        14,
        rows,
        ROWS_PER_INSERT,
    ));
    // The assignee hears that the visitor wrote (issue 43), in the same transaction.
    for t in turns.iter().filter(|t| t.tell_assignee && t.new_conversation.is_none()) {
        out.extend(super::operator_notifications::reply_stmts(&t.conversation_id, t.now));
    }
    // The page's attributes, when they changed.
    for (visitor_id, json) in turns.iter().filter_map(|t| t.attributes.as_ref()) {
        out.push(Stmt::new(
            "UPDATE visitors SET attributes = $2 WHERE id = $1 AND (attributes IS NULL OR attributes <> $2)",
            vec![Arg::from(visitor_id), Arg::from(json)],
        ));
    }
    // Images sent with the messages, once the messages exist.
    out.extend(turns.iter().filter_map(super::attachments::link_stmt));
    out
}

/// The visitor message sent earlier with this client id, and the assistant reply to it.
pub async fn by_client_id(
    db: &Db,
    conversation_id: &str,
    client_message_id: &str,
) -> Result<Option<(Message, Option<Message>)>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM messages WHERE conversation_id = $1 AND client_message_id = $2");
    let visitor: Option<Row> = sqlx::query_as(&sql)
        .bind(conversation_id)
        .bind(client_message_id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    let Some(visitor) = visitor.map(Message::from) else {
        return Ok(None);
    };
    let sql = format!("SELECT {COLUMNS} FROM messages WHERE reply_to = $1 ORDER BY created_at LIMIT 1");
    let reply: Option<Row> = sqlx::query_as(&sql).bind(&visitor.id).fetch_optional(&mut *db.read().await?).await?;
    Ok(Some((visitor, reply.map(Message::from))))
}

/// The blocks of a conversation's messages by `role` that hold forms or their answers (their JSON
/// names a `form_id`), oldest first.
pub async fn form_blocks(db: &Db, conversation_id: &str, role: Role) -> Result<Vec<Block>, DbError> {
    let rows: Vec<String> = sqlx::query_scalar(
        "SELECT blocks FROM messages WHERE conversation_id = $1 AND role = $2 AND blocks LIKE '%\"form_id\"%' \
         ORDER BY created_at",
    )
    .bind(conversation_id)
    .bind(role.as_str())
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.iter().flat_map(|json| from_json_text::<Vec<Block>>(json)).collect())
}

/// The newest email address a visitor gave in a form (any field whose answer is one).
pub async fn latest_form_email(db: &Db, visitor_id: &str) -> Result<Option<String>, DbError> {
    let rows: Vec<String> = sqlx::query_scalar(
        "SELECT m.blocks FROM messages m JOIN conversations c ON c.id = m.conversation_id \
         WHERE c.visitor_id = $1 AND m.role = 'visitor' AND m.blocks LIKE '%\"form_id\"%' \
         ORDER BY m.created_at DESC LIMIT 20",
    )
    .bind(visitor_id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.iter().flat_map(|json| from_json_text::<Vec<Block>>(json)).find_map(|b| match b {
        Block::FormAnswers(a) => a.answers.into_iter().map(|x| x.value).find(|v| parley_protocol::looks_like_email(v)),
        _ => None,
    }))
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
    .fetch_optional(&mut *db.read().await?)
    .await?;
    match conversation {
        Some(conversation_id) => by_client_id(db, &conversation_id, client_message_id).await,
        None => Ok(None),
    }
}

/// Every message of a conversation, oldest first.
pub async fn list(db: &Db, conversation_id: &str) -> Result<Vec<Message>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY created_at, id");
    let rows: Vec<Row> = sqlx::query_as(&sql).bind(conversation_id).fetch_all(&mut *db.read().await?).await?;
    Ok(rows.into_iter().map(Message::from).collect())
}

/// The newest `limit` messages created after `after_ms`, oldest first (the model's context).
pub async fn recent_after(db: &Db, conversation_id: &str, after_ms: i64, limit: i64) -> Result<Vec<Message>, DbError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM messages WHERE conversation_id = $1 AND created_at > $2 \
         ORDER BY created_at DESC, id DESC LIMIT $3"
    );
    let rows: Vec<Row> =
        sqlx::query_as(&sql).bind(conversation_id).bind(after_ms).bind(limit).fetch_all(&mut *db.read().await?).await?;
    let mut messages: Vec<Message> = rows.into_iter().map(Message::from).collect();
    messages.reverse();
    Ok(messages)
}

/// Stores an operator's reply to the visitor (complete at once).
pub async fn insert_operator_reply(
    db: &Db,
    id: &str,
    conversation_id: &str,
    text: &str,
    (author, author_id): (&str, &str),
    now: i64,
) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO messages (id, conversation_id, role, content, blocks, status, client_message_id, reply_to, author, \
         start_seq, created_at, updated_at, author_id) VALUES ($1, $2, $3, $4, '[]', $5, NULL, NULL, $6, 0, $7, $7, $8)",
    )
    .bind(id)
    .bind(conversation_id)
    .bind(Role::Operator.as_str())
    .bind(text)
    .bind(MessageStatus::Complete.as_str())
    .bind(author)
    .bind(now)
    .bind(author_id)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// The stream event a message was shown by (an operator's reply, once emitted).
pub async fn set_start_seq(db: &Db, id: &str, seq: u64) -> Result<(), DbError> {
    sqlx::query("UPDATE messages SET start_seq = $2 WHERE id = $1")
        .bind(id)
        .bind(i64::try_from(seq).unwrap_or(i64::MAX))
        .execute(db.writer())
        .await?;
    Ok(())
}

/// `(text, created_at)` of the visitor messages of an agent's conversations since `since`, newest
/// first, at most `limit`.
pub async fn visitor_texts_since(
    db: &Db,
    agent_id: &str,
    since: i64,
    limit: i64,
) -> Result<Vec<(String, i64)>, DbError> {
    sqlx::query_as(
        "SELECT m.content, m.created_at FROM messages m JOIN conversations c ON c.id = m.conversation_id \
         WHERE c.agent_id = $1 AND m.role = 'visitor' AND m.created_at >= $2 ORDER BY m.created_at DESC LIMIT $3",
    )
    .bind(agent_id)
    .bind(since)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}
