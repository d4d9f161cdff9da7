//! What each console user wants to be told of (issue 43): which kinds of notification, by which
//! channels (in the console, Web Push, a mail digest), and the digest's delay. Also the digest's
//! reads: who has unread notifications older than their delay, not yet mailed.

use super::{Db, DbError};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

/// A user's preferences.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Prefs {
    /// The kinds they want (of `operator_notifications::KINDS`).
    pub kinds: Vec<String>,
    pub in_console: bool,
    pub push: bool,
    pub digest: bool,
    /// Minutes an unread notification waits before it goes into a digest.
    pub digest_delay_min: i64,
}

impl Default for Prefs {
    /// Every kind, in the console and by push; no digest (mail is opted into).
    fn default() -> Self {
        Prefs {
            kinds: super::operator_notifications::KINDS.iter().map(|k| (*k).to_owned()).collect(),
            in_console: true,
            push: true,
            digest: false,
            digest_delay_min: 15,
        }
    }
}

/// The user's preferences (the defaults when they never saved any).
pub async fn of_user(db: &Db, user_id: &str) -> Result<Prefs, DbError> {
    let row: Option<(String, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT kinds, in_console, push, digest, digest_delay_min FROM operator_notify_prefs WHERE user_id = $1",
    )
    .bind(user_id)
    .fetch_optional(&mut *db.read().await?)
    .await?;
    Ok(match row {
        None => Prefs::default(),
        Some((kinds, in_console, push, digest, digest_delay_min)) => Prefs {
            kinds: kinds.split(',').filter(|k| !k.is_empty()).map(str::to_owned).collect(),
            in_console: in_console != 0,
            push: push != 0,
            digest: digest != 0,
            digest_delay_min,
        },
    })
}

/// Saves the user's preferences (checked by the caller).
pub async fn save(db: &Db, user_id: &str, prefs: &Prefs, now: i64) -> Result<(), DbError> {
    let kinds = format!(",{},", prefs.kinds.join(","));
    sqlx::query(
        "INSERT INTO operator_notify_prefs (user_id, kinds, in_console, push, digest, digest_delay_min, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (user_id) DO UPDATE SET kinds = excluded.kinds, \
         in_console = excluded.in_console, push = excluded.push, digest = excluded.digest, \
         digest_delay_min = excluded.digest_delay_min, updated_at = excluded.updated_at",
    )
    .bind(user_id)
    .bind(kinds)
    .bind(i64::from(prefs.in_console))
    .bind(i64::from(prefs.push))
    .bind(i64::from(prefs.digest))
    .bind(prefs.digest_delay_min)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// Users with a digest due at `now`: digests on, an address, and an unread notification not yet
/// mailed that is older than their delay. `(id, email, name)`.
pub async fn digest_due(db: &Db, now: i64, limit: i64) -> Result<Vec<(String, String, String)>, DbError> {
    sqlx::query_as(
        "SELECT u.id, u.email, u.name FROM users u JOIN operator_notify_prefs p ON p.user_id = u.id \
         WHERE p.digest = 1 AND u.email <> '' AND EXISTS (SELECT 1 FROM operator_notifications n \
             WHERE n.user_id = u.id AND n.read_at IS NULL AND n.digested_at IS NULL \
             AND n.created_at <= $1 - p.digest_delay_min * 60000) \
         ORDER BY u.id LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

crate::store::row_struct! {
    /// An unread notification as a digest lists it: ids, the agent's name, when.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DigestLine {
        pub id: String,
        pub kind: String,
        pub conversation_id: String,
        pub agent_name: Option<String>,
        pub created_at: i64,
    }
}

/// Inside `tx`: the user's unread notifications not yet mailed (oldest first, `limit` at most),
/// marked as mailed at `now` (a concurrent digest marks none of them twice: it gets none).
pub async fn take_for_digest(tx: &mut Tx<'_>, user_id: &str, now: i64, limit: i64) -> Result<Vec<DigestLine>, DbError> {
    let lines: Vec<DigestLine> = sqlx::query_as(
        "SELECT n.id, n.kind, n.conversation_id, a.name AS agent_name, n.created_at FROM operator_notifications n \
         LEFT JOIN conversations c ON c.id = n.conversation_id LEFT JOIN agents a ON a.id = c.agent_id \
         WHERE n.user_id = $1 AND n.read_at IS NULL AND n.digested_at IS NULL ORDER BY n.created_at, n.id LIMIT $2",
    )
    .bind(user_id)
    .bind(limit)
    .fetch_all(&mut **tx)
    .await?;
    let mut taken = Vec::with_capacity(lines.len());
    for line in lines {
        let done = sqlx::query(
            "UPDATE operator_notifications SET digested_at = $2 WHERE id = $1 AND digested_at IS NULL AND read_at IS NULL",
        )
        .bind(&line.id)
        .bind(now)
        .execute(&mut **tx)
        .await?;
        if done.rows_affected() == 1 {
            taken.push(line);
        }
    }
    Ok(taken)
}
