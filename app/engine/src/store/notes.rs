//! Private notes on a conversation (issue 43): operators write them to each other. A note is not a
//! message: it never goes into the transcript, the stream, the model's context, MCP or a webhook.
//! A note can mention colleagues (`@Name`); each gets a notification.

use super::{Db, DbError, new_id, operator_notifications};

crate::store::row_struct! {
    /// A note as stored.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Note {
        pub id: String,
        pub conversation_id: String,
        pub author_id: String,
        pub author_name: String,
        pub body: String,
        /// The mentioned users, `,id,id,`.
        pub mentions: String,
        pub created_at: i64,
    }
}

impl Note {
    /// The mentioned users' ids.
    pub fn mentioned(&self) -> Vec<String> {
        self.mentions.split(',').filter(|m| !m.is_empty()).map(str::to_owned).collect()
    }
}

/// Longest note, in characters (as an operator's reply).
pub const MAX_BODY_CHARS: usize = 4000;

/// Stores a note and one `mention` notification per mentioned user (the author excepted), in one
/// transaction; its id.
pub async fn add(
    db: &Db,
    conversation_id: &str,
    author: (&str, &str),
    body: &str,
    mentions: &[String],
    now: i64,
) -> Result<String, DbError> {
    let id = new_id();
    let (author_id, author_name) = author;
    let listed = if mentions.is_empty() { String::new() } else { format!(",{},", mentions.join(",")) };
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "INSERT INTO conversation_notes (id, conversation_id, author_id, author_name, body, mentions, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(conversation_id)
    .bind(author_id)
    .bind(author_name)
    .bind(body)
    .bind(listed)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    for user in mentions.iter().filter(|u| *u != author_id) {
        operator_notifications::insert_in(&mut tx, user, "mention", conversation_id, Some(&id), Some(author_id), now)
            .await?;
    }
    tx.commit().await?;
    Ok(id)
}

/// A conversation's notes, oldest first.
pub async fn of_conversation(db: &Db, conversation_id: &str) -> Result<Vec<Note>, DbError> {
    sqlx::query_as(
        "SELECT id, conversation_id, author_id, author_name, body, mentions, created_at FROM conversation_notes \
         WHERE conversation_id = $1 ORDER BY created_at, id",
    )
    .bind(conversation_id)
    .fetch_all(&mut *db.read().await?)
    .await
}
