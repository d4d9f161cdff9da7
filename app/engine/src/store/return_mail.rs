//! Visitors who left (issue 44, part 2): whether a visitor follows their conversation, the page
//! they wrote from, which replies wait to be mailed, and the tokens of the return mails' links
//! and reply addresses (only their SHA-256 is stored).

use super::visitors::hash_token;
use super::{Db, DbError};

/// A visitor's event stream of the conversation opened (the first one on this server).
pub async fn visitor_here(db: &Db, conversation_id: &str) -> Result<(), DbError> {
    sqlx::query("UPDATE conversations SET visitor_here = 1 WHERE id = $1 AND visitor_here = 0")
        .bind(conversation_id)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// The last of the visitor's event streams of the conversation on this server closed at `now`.
pub async fn visitor_left(db: &Db, conversation_id: &str, now: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE conversations SET visitor_here = 0, visitor_left_at = $2 WHERE id = $1")
        .bind(conversation_id)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// The site page the visitor wrote from (kept when it changes).
pub async fn set_page(db: &Db, conversation_id: &str, url: &str) -> Result<(), DbError> {
    sqlx::query("UPDATE conversations SET page_url = $2 WHERE id = $1 AND (page_url IS NULL OR page_url <> $2)")
        .bind(conversation_id)
        .bind(url)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// A reply the visitor may not have seen was stored: the return-mail job looks at the
/// conversation from now on. `by_mail`: the visitor wrote by mail (the agent's answers go back).
pub async fn mark_pending(db: &Db, conversation_id: &str, now: i64, by_mail: bool) -> Result<(), DbError> {
    let sql = if by_mail {
        "UPDATE conversations SET return_pending_since = COALESCE(return_pending_since, $2), mail_in_at = $2 \
         WHERE id = $1"
    } else {
        "UPDATE conversations SET return_pending_since = COALESCE(return_pending_since, $2) WHERE id = $1"
    };
    sqlx::query(sql).bind(conversation_id).bind(now).execute(db.writer()).await?;
    Ok(())
}

crate::store::row_struct! {
    /// A conversation with replies that may wait for a return mail.
    pub struct Pending {
        pub id: String,
        pub agent_id: String,
        pub visitor_id: String,
        pub page_url: Option<String>,
        pub visitor_here: i64,
        pub visitor_left_at: Option<i64>,
        pub return_mailed_upto: i64,
        pub mail_in_at: Option<i64>,
        /// When the visitor last wrote (in the panel or by mail).
        pub last_visitor_at: Option<i64>,
    }
}

/// Up to `limit` conversations marked pending, oldest first.
pub async fn pending(db: &Db, limit: i64) -> Result<Vec<Pending>, DbError> {
    sqlx::query_as(
        "SELECT c.id, c.agent_id, c.visitor_id, c.page_url, c.visitor_here, c.visitor_left_at, c.return_mailed_upto, \
         c.mail_in_at, (SELECT MAX(m.created_at) FROM messages m WHERE m.conversation_id = c.id AND m.role = 'visitor') \
         AS last_visitor_at FROM conversations c WHERE c.return_pending_since IS NOT NULL \
         ORDER BY c.return_pending_since LIMIT $1",
    )
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

crate::store::row_struct! {
    /// A reply to mail: an operator's, or the agent's answer to a visitor who wrote by mail.
    pub struct Reply {
        pub role: String,
        pub author: Option<String>,
        pub content: String,
        pub status: String,
        pub created_at: i64,
    }
}

/// The conversation's operator replies after `after`, and its agent's answers from `answers_after`
/// on (`None`: none), oldest first.
pub async fn replies_after(
    db: &Db,
    conversation_id: &str,
    after: i64,
    answers_after: Option<i64>,
) -> Result<Vec<Reply>, DbError> {
    sqlx::query_as(
        "SELECT role, author, content, status, created_at FROM messages WHERE conversation_id = $1 AND created_at > $2 \
         AND (role = 'operator' OR (role = 'assistant' AND $3 IS NOT NULL AND created_at >= $3)) \
         ORDER BY created_at, id",
    )
    .bind(conversation_id)
    .bind(after)
    .bind(answers_after)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Done with the conversation's pending replies: those up to `mailed_upto` were mailed (or need
/// none). A reply stored since `seen_at` (when the job read them) leaves it pending.
pub async fn settle(db: &Db, conversation_id: &str, mailed_upto: i64, seen_at: i64) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE conversations SET return_mailed_upto = CASE WHEN return_mailed_upto > $2 THEN return_mailed_upto \
         ELSE $2 END, return_pending_since = CASE WHEN EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = $1 \
         AND m.role IN ('operator', 'assistant') AND m.created_at > $3) THEN return_pending_since ELSE NULL END \
         WHERE id = $1",
    )
    .bind(conversation_id)
    .bind(mailed_upto)
    .bind(seen_at)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// What a return token is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The link that opens the conversation on the site (any number of times until it expires).
    Link,
    /// The reply address (one mail).
    Reply,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Link => "link",
            Purpose::Reply => "reply",
        }
    }
}

/// A new random token (`pr_` + 43 characters of base64url; `[A-Za-z0-9_-]`, safe in an address's
/// local part and in a URL fragment).
pub fn new_token() -> String {
    use base64::Engine;
    let bytes: [u8; 32] = rand::random();
    format!("pr_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Stores a token for the conversation and its visitor, valid until `expires_at`.
pub async fn add_token(
    db: &Db,
    token: &str,
    purpose: Purpose,
    conversation_id: &str,
    visitor_id: &str,
    now: i64,
    expires_at: i64,
) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO return_tokens (token_hash, purpose, conversation_id, visitor_id, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(hash_token(token))
    .bind(purpose.as_str())
    .bind(conversation_id)
    .bind(visitor_id)
    .bind(now)
    .bind(expires_at)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// The conversation and visitor of a link token still valid at `now`.
pub async fn link(db: &Db, token: &str, now: i64) -> Result<Option<(String, String)>, DbError> {
    sqlx::query_as(
        "SELECT conversation_id, visitor_id FROM return_tokens WHERE token_hash = $1 AND purpose = 'link' \
         AND expires_at > $2",
    )
    .bind(hash_token(token))
    .bind(now)
    .fetch_optional(&mut *db.read().await?)
    .await
}

/// The conversation and visitor of a reply token valid at `now` and unused (read only: checked
/// while the mail is received, and before the sender is).
pub async fn reply_target(db: &Db, token: &str, now: i64) -> Result<Option<(String, String)>, DbError> {
    sqlx::query_as(
        "SELECT conversation_id, visitor_id FROM return_tokens WHERE token_hash = $1 AND purpose = 'reply' \
         AND expires_at > $2 AND used_at IS NULL",
    )
    .bind(hash_token(token))
    .bind(now)
    .fetch_optional(&mut *db.read().await?)
    .await
}

/// Gives back a reply address used at `used_at` whose mail could not be taken after all.
pub async fn unuse_reply(db: &Db, token: &str, used_at: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE return_tokens SET used_at = NULL WHERE token_hash = $1 AND purpose = 'reply' AND used_at = $2")
        .bind(hash_token(token))
        .bind(used_at)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Uses a reply token: its conversation and visitor, once; `None` when it is unknown, expired or
/// used before (at the same moment, exactly one caller gets it).
pub async fn use_reply(db: &Db, token: &str, now: i64) -> Result<Option<(String, String)>, DbError> {
    sqlx::query_as(
        "UPDATE return_tokens SET used_at = $2 WHERE token_hash = $1 AND purpose = 'reply' AND expires_at > $2 \
         AND used_at IS NULL RETURNING conversation_id, visitor_id",
    )
    .bind(hash_token(token))
    .bind(now)
    .fetch_optional(db.writer())
    .await
}
