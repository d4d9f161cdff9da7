//! What a console user is told of (issue 43): a conversation assigned to them, a mention in a
//! note. Ids only, never text: the console reads what it shows with its own access checks. The
//! console shows them live; push and mail digests (later) read the unread ones.

use super::{Db, DbError, new_id};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

crate::store::row_struct! {
    /// One notification.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Notification {
        pub id: String,
        /// `assigned` or `mention`.
        pub kind: String,
        pub conversation_id: String,
        pub note_id: Option<String>,
        /// Who caused it (`None`: the automatic assignment).
        pub actor_id: Option<String>,
        pub created_at: i64,
    }
}

/// Writes a notification for `user_id` inside `tx` (the change's own transaction).
pub async fn insert_in(
    tx: &mut Tx<'_>,
    user_id: &str,
    kind: &str,
    conversation_id: &str,
    note_id: Option<&str>,
    actor_id: Option<&str>,
    now: i64,
) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO operator_notifications (id, user_id, kind, conversation_id, note_id, actor_id, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(new_id())
    .bind(user_id)
    .bind(kind)
    .bind(conversation_id)
    .bind(note_id)
    .bind(actor_id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A user's unread notifications, newest first.
pub async fn unread(db: &Db, user_id: &str, limit: i64) -> Result<Vec<Notification>, DbError> {
    sqlx::query_as(
        "SELECT id, kind, conversation_id, note_id, actor_id, created_at FROM operator_notifications \
         WHERE user_id = $1 AND read_at IS NULL ORDER BY created_at DESC, id DESC LIMIT $2",
    )
    .bind(user_id)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// How many unread notifications a user has.
pub async fn unread_count(db: &Db, user_id: &str) -> Result<i64, DbError> {
    sqlx::query_scalar("SELECT COUNT(*) FROM operator_notifications WHERE user_id = $1 AND read_at IS NULL")
        .bind(user_id)
        .fetch_one(&mut *db.read().await?)
        .await
}

/// Marks the user's notifications `ids` read (others' are left alone); how many it marked.
pub async fn mark_read(db: &Db, user_id: &str, ids: &[String], now: i64) -> Result<u64, DbError> {
    let mut marked = 0;
    for id in ids {
        marked += sqlx::query(
            "UPDATE operator_notifications SET read_at = $3 WHERE id = $1 AND user_id = $2 AND read_at IS NULL",
        )
        .bind(id)
        .bind(user_id)
        .bind(now)
        .execute(db.writer())
        .await?
        .rows_affected();
    }
    Ok(marked)
}
