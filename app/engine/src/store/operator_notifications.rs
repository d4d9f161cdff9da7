//! What a console user is told of (issue 43): a conversation assigned to them (`assigned`), a
//! mention in a note (`mention`), a conversation entering the unassigned queue of one of their
//! teams, or of any team for admins and operators in no team (`queue`), the visitor writing in a
//! conversation assigned to them (`reply`). Ids only, never text: the console reads what it
//! shows with its own access checks.
//!
//! Each is written in the change's own transaction, only when the user wants that kind
//! (`operator_notify_prefs`), and with it one push delivery per browser the user subscribed
//! when they want push (the push outbox, `store::push`). The mail digest reads the unread ones.

use super::script::{Arg, Stmt};
use super::{Db, DbError, new_id};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

crate::store::row_struct! {
    /// One notification.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Notification {
        pub id: String,
        /// `assigned`, `mention`, `queue` or `reply`.
        pub kind: String,
        pub conversation_id: String,
        pub note_id: Option<String>,
        /// Who caused it (`None`: the automatic assignment).
        pub actor_id: Option<String>,
        pub created_at: i64,
    }
}

/// Every kind, as preferences list them.
pub const KINDS: [&str; 4] = ["assigned", "mention", "queue", "reply"];

/// The condition "user `$n` wants kind `$k`": no preferences stored (every kind), or the kind is
/// in their list (`,assigned,queue,`; `$k` is bound as `%,kind,%`).
fn wanted(user: &str, pattern: &str) -> String {
    format!(
        "NOT EXISTS (SELECT 1 FROM operator_notify_prefs p WHERE p.user_id = {user} AND p.kinds NOT LIKE {pattern})"
    )
}

/// The push outbox's rows for notification `$1` (one per browser its user subscribed, unless
/// they turned push off), written at `$2`.
const FAN_OUT: &str = "INSERT INTO push_deliveries (notification_id, subscription_id, status, attempts, \
     next_attempt_at, created_at) SELECT n.id, s.id, 'pending', 0, $2, $2 FROM operator_notifications n \
     JOIN push_subscriptions s ON s.user_id = n.user_id WHERE n.id = $1 AND NOT EXISTS \
     (SELECT 1 FROM operator_notify_prefs p WHERE p.user_id = n.user_id AND p.push = 0)";

fn like(kind: &str) -> String {
    format!("%,{kind},%")
}

/// Writes a notification for `user_id` inside `tx` (the change's own transaction), if the user
/// wants its kind, with its push deliveries; whether it was written.
pub async fn insert_in(
    tx: &mut Tx<'_>,
    user_id: &str,
    kind: &str,
    conversation_id: &str,
    note_id: Option<&str>,
    actor_id: Option<&str>,
    now: i64,
) -> Result<bool, DbError> {
    let id = new_id();
    let done = sqlx::query(&format!(
        "INSERT INTO operator_notifications (id, user_id, kind, conversation_id, note_id, actor_id, created_at) \
         SELECT $1, $2, $3, $4, $5, $6, $7 WHERE {}",
        wanted("$2", "$8")
    ))
    .bind(&id)
    .bind(user_id)
    .bind(kind)
    .bind(conversation_id)
    .bind(note_id)
    .bind(actor_id)
    .bind(now)
    .bind(like(kind))
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query(FAN_OUT).bind(&id).bind(now).execute(&mut **tx).await?;
    Ok(true)
}

/// Tells whoever watches the unassigned queue that the conversation is in it (if it is:
/// unassigned and waiting for or held by a person): the members of its team, every admin and
/// every operator in no team; not `actor` (who put it there). Inside the change's transaction.
pub async fn queue_in(tx: &mut Tx<'_>, conversation_id: &str, actor: Option<&str>, now: i64) -> Result<(), DbError> {
    let users: Vec<String> = sqlx::query_scalar(
        "SELECT u.id FROM users u JOIN conversations c ON c.id = $1 \
         WHERE c.assignee_id IS NULL AND c.status IN ('waiting_human','human') AND ($2 IS NULL OR u.id <> $2) \
         AND (u.role = 'admin' OR NOT EXISTS (SELECT 1 FROM team_members tm WHERE tm.user_id = u.id) \
              OR EXISTS (SELECT 1 FROM team_members tm WHERE tm.user_id = u.id AND tm.team_id = c.team_id)) \
         ORDER BY u.id",
    )
    .bind(conversation_id)
    .bind(actor)
    .fetch_all(&mut **tx)
    .await?;
    for user in users {
        insert_in(tx, &user, "queue", conversation_id, None, actor, now).await?;
    }
    Ok(())
}

/// Statements (for the stream writer's transaction) telling the assignee of each conversation
/// the visitor wrote in, while it waits for or is held by a person: a `reply` notification,
/// unless one about it is still unread (one per conversation until they look), and its pushes.
pub fn reply_stmts(conversation_id: &str, now: i64) -> Vec<Stmt> {
    let id = new_id();
    let insert = format!(
        "INSERT INTO operator_notifications (id, user_id, kind, conversation_id, created_at) \
         SELECT $1, c.assignee_id, 'reply', c.id, $3 FROM conversations c WHERE c.id = $2 \
         AND c.assignee_id IS NOT NULL AND c.status IN ('waiting_human','human') \
         AND NOT EXISTS (SELECT 1 FROM operator_notifications o WHERE o.user_id = c.assignee_id \
             AND o.conversation_id = c.id AND o.kind = 'reply' AND o.read_at IS NULL) AND {}",
        wanted("c.assignee_id", "$4")
    );
    vec![
        Stmt::new(insert, vec![Arg::from(&id), Arg::from(conversation_id), Arg::from(now), Arg::from(like("reply"))]),
        Stmt::new(FAN_OUT, vec![Arg::from(id), Arg::from(now)]),
    ]
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

/// Marks every unread notification of the user read; how many.
pub async fn mark_all_read(db: &Db, user_id: &str, now: i64) -> Result<u64, DbError> {
    let done = sqlx::query("UPDATE operator_notifications SET read_at = $2 WHERE user_id = $1 AND read_at IS NULL")
        .bind(user_id)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected())
}
