//! The stored event log of each conversation's stream, written in batches by the engine's writer
//! and read back to replay a stream after `Last-Event-ID`.

use super::script::{Arg, Stmt};
use super::{Db, DbError, insert_rows};

/// One stored row: a single event, or a run of consecutive tokens (`data` is then a JSON array of
/// the token texts for `seq..=last_seq`).
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    pub conversation_id: String,
    pub seq: u64,
    pub last_seq: u64,
    pub name: String,
    pub data: String,
    pub created_at: i64,
}

const ROWS_PER_INSERT: usize = 400;

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Statements inserting event rows, several rows per statement.
pub fn insert_stmts(rows: &[EventRow]) -> Vec<Stmt> {
    let values = rows
        .iter()
        .map(|r| {
            vec![
                Arg::from(&r.conversation_id),
                Arg::from(r.seq),
                Arg::from(r.last_seq),
                Arg::from(&r.name),
                Arg::from(&r.data),
                Arg::from(r.created_at),
            ]
        })
        .collect();
    insert_rows("events (conversation_id, seq, last_seq, name, data, created_at)", 6, values, ROWS_PER_INSERT)
}

/// Stored rows that contain events after `after_seq`, in order.
pub async fn after(db: &Db, conversation_id: &str, after_seq: u64) -> Result<Vec<EventRow>, DbError> {
    let rows: Vec<(i64, i64, String, String, i64)> = sqlx::query_as(
        "SELECT seq, last_seq, name, data, created_at FROM events \
         WHERE conversation_id = $1 AND last_seq > $2 ORDER BY seq",
    )
    .bind(conversation_id)
    .bind(to_i64(after_seq))
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(to_rows(conversation_id, rows))
}

/// At most `limit` stored rows that contain events after `after_seq`, in order: one page of a
/// replay. It starts at the row holding `after_seq` (a run of tokens may straddle it), found by
/// the key, so every page reads only its own rows.
pub async fn page(db: &Db, conversation_id: &str, after_seq: u64, limit: i64) -> Result<Vec<EventRow>, DbError> {
    let rows: Vec<(i64, i64, String, String, i64)> = sqlx::query_as(
        "SELECT seq, last_seq, name, data, created_at FROM events WHERE conversation_id = $1 \
         AND seq >= COALESCE((SELECT MAX(seq) FROM events WHERE conversation_id = $1 AND seq <= $2), 0) \
         AND last_seq > $2 ORDER BY seq LIMIT $3",
    )
    .bind(conversation_id)
    .bind(to_i64(after_seq))
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(to_rows(conversation_id, rows))
}

fn to_rows(conversation_id: &str, rows: Vec<(i64, i64, String, String, i64)>) -> Vec<EventRow> {
    rows.into_iter()
        .map(|(seq, last_seq, name, data, created_at)| EventRow {
            conversation_id: conversation_id.to_owned(),
            seq: u64::try_from(seq).unwrap_or(0),
            last_seq: u64::try_from(last_seq).unwrap_or(0),
            name,
            data,
            created_at,
        })
        .collect()
}

/// The highest sequence number of a conversation's stored events, and the highest one any of its
/// stored messages starts at (each 0 when none). A message row is stored with its turn, before
/// the events numbered for it: the second can be ahead of the first.
pub async fn stored_seqs(db: &Db, conversation_id: &str) -> Result<(u64, u64), DbError> {
    let (events, messages): (Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT (SELECT MAX(last_seq) FROM events WHERE conversation_id = $1), \
         (SELECT MAX(start_seq) FROM messages WHERE conversation_id = $1)",
    )
    .bind(conversation_id)
    .fetch_one(&mut *db.read().await?)
    .await?;
    let seq = |v: Option<i64>| v.and_then(|m| u64::try_from(m).ok()).unwrap_or(0);
    Ok((seq(events), seq(messages)))
}

/// The highest sequence number stored for a conversation (0 when none).
pub async fn max_seq(db: &Db, conversation_id: &str) -> Result<u64, DbError> {
    let max: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(m) FROM (SELECT MAX(last_seq) AS m FROM events WHERE conversation_id = $1 \
         UNION ALL SELECT MAX(start_seq) AS m FROM messages WHERE conversation_id = $1) AS t",
    )
    .bind(conversation_id)
    .fetch_one(&mut *db.read().await?)
    .await?;
    Ok(max.and_then(|m| u64::try_from(m).ok()).unwrap_or(0))
}
