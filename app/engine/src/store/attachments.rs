//! Images visitors attach to their messages: stored bytes, who uploaded them, and the message
//! they were sent with (none until then).

use parley_protocol::AttachmentRef;

use super::messages::NewTurn;
use super::script::{Arg, Stmt};
use super::{Db, DbError};

crate::store::row_struct! {
    /// An upload with its bytes.
    #[derive(Clone, Debug, PartialEq)]
    pub struct StoredImage {
        pub id: String,
        pub mime: String,
        pub data: Vec<u8>,
    }
}

/// `$from`, `$from+1`, … for `n` values.
fn list(from: usize, n: usize) -> String {
    (from..from + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// An upload about to be stored.
pub struct NewUpload<'a> {
    pub id: &'a str,
    pub visitor_id: &'a str,
    /// The address it came from, as [`crate::net::address_group`] gives it.
    pub client_ip: &'a str,
    pub mime: &'a str,
    pub data: &'a [u8],
}

/// Stores an upload, not yet linked to a message.
pub async fn insert(db: &Db, upload: &NewUpload<'_>, now: i64) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO attachments (id, visitor_id, conversation_id, message_id, mime, size_bytes, data, created_at, \
         client_ip) VALUES ($1, $2, NULL, NULL, $3, $4, $5, $6, $7)",
    )
    .bind(upload.id)
    .bind(upload.visitor_id)
    .bind(upload.mime)
    .bind(i64::try_from(upload.data.len()).unwrap_or(i64::MAX))
    .bind(upload.data)
    .bind(now)
    .bind(upload.client_ip)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// Bytes of images parked (uploaded, not sent): from `client_ip`, and from everyone.
pub async fn parked_bytes(db: &Db, client_ip: &str) -> Result<(i64, i64), DbError> {
    let (from_ip, all): (Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT CAST(SUM(CASE WHEN client_ip = $1 THEN size_bytes ELSE 0 END) AS BIGINT), \
         CAST(SUM(size_bytes) AS BIGINT) FROM attachments WHERE message_id IS NULL",
    )
    .bind(client_ip)
    .fetch_one(&mut *db.read().await?)
    .await?;
    Ok((from_ip.unwrap_or(0), all.unwrap_or(0)))
}

/// How many uploads of a visitor wait to be sent.
pub async fn count_unsent(db: &Db, visitor_id: &str) -> Result<i64, DbError> {
    sqlx::query_scalar("SELECT COUNT(*) FROM attachments WHERE visitor_id = $1 AND message_id IS NULL")
        .bind(visitor_id)
        .fetch_one(&mut *db.read().await?)
        .await
}

/// `(mime, bytes)` of an upload, when `visitor_id` uploaded it.
pub async fn of_visitor(db: &Db, id: &str, visitor_id: &str) -> Result<Option<(String, Vec<u8>)>, DbError> {
    sqlx::query_as("SELECT mime, data FROM attachments WHERE id = $1 AND visitor_id = $2")
        .bind(id)
        .bind(visitor_id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// `(mime, bytes)` of any upload (the console).
pub async fn by_id(db: &Db, id: &str) -> Result<Option<(String, Vec<u8>)>, DbError> {
    sqlx::query_as("SELECT mime, data FROM attachments WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// The uploads among `ids` that `visitor_id` made and has not sent yet.
pub async fn unsent(db: &Db, visitor_id: &str, ids: &[String]) -> Result<Vec<StoredImage>, DbError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT id, mime, data FROM attachments WHERE visitor_id = $1 AND message_id IS NULL AND id IN ({})",
        list(2, ids.len())
    );
    let mut query = sqlx::query_as(&sql).bind(visitor_id);
    for id in ids {
        query = query.bind(id);
    }
    query.fetch_all(&mut *db.read().await?).await
}

/// `(message_id, attachment)` of every image sent in a conversation, in upload order.
pub async fn of_conversation(db: &Db, conversation_id: &str) -> Result<Vec<(String, AttachmentRef)>, DbError> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT message_id, id, mime FROM attachments WHERE conversation_id = $1 AND message_id IS NOT NULL \
         ORDER BY created_at, id",
    )
    .bind(conversation_id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.into_iter().map(|(message_id, id, mime)| (message_id, AttachmentRef { id, mime })).collect())
}

/// Links a turn's uploads to its visitor message, in the transaction that stores the message.
/// Only uploads of the conversation's visitor that were not sent before are linked.
pub fn link_stmt(turn: &NewTurn) -> Option<Stmt> {
    if turn.attachments.is_empty() {
        return None;
    }
    let mut args = vec![Arg::from(&turn.conversation_id), Arg::from(&turn.visitor_message_id)];
    args.extend(turn.attachments.iter().map(Arg::from));
    Some(Stmt::new(
        format!(
            "UPDATE attachments SET conversation_id = $1, message_id = $2 WHERE message_id IS NULL \
             AND visitor_id = (SELECT visitor_id FROM conversations WHERE id = $1) AND id IN ({})",
            list(3, turn.attachments.len())
        ),
        args,
    ))
}

/// Deletes uploads never sent that were made before `before` (ms); returns how many.
pub async fn delete_unsent_before(db: &Db, before: i64) -> Result<u64, DbError> {
    let done = sqlx::query("DELETE FROM attachments WHERE message_id IS NULL AND created_at < $1")
        .bind(before)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_statement_names_each_upload() {
        let mut turn = NewTurn {
            visitor_blocks: String::new(),
            agent_version: None,
            trial: false,
            conversation_id: "c1".into(),
            new_conversation: None,
            visitor_message_id: "m1".into(),
            text: "look".into(),
            client_message_id: None,
            assistant_message_id: None,
            assistant_start_seq: 0,
            now: 0,
            attachments: Vec::new(),
            owner: None,
            slot_token: None,
            tell_assignee: false,
            attributes: None,
        };
        assert!(link_stmt(&turn).is_none());
        turn.attachments = vec!["a1".into(), "a2".into()];
        let stmt = link_stmt(&turn).unwrap();
        assert!(stmt.sql.ends_with("AND id IN ($3, $4)"), "{}", stmt.sql);
        assert_eq!(stmt.args, vec![Arg::from("c1"), Arg::from("m1"), Arg::from("a1"), Arg::from("a2")]);
    }
}
