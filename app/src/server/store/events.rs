//! The stored event log of each conversation's stream, written in batches by the engine's writer
//! and read back to replay a stream after `Last-Event-ID`.

use super::{Db, DbError};

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

/// Text to add to a streaming assistant message, so its partial answer survives a crash.
#[derive(Clone, Debug, PartialEq)]
pub struct TextAppend {
    pub message_id: String,
    pub text: String,
}

const ROWS_PER_INSERT: usize = 400;

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Inserts event rows inside a transaction, several rows per statement.
pub async fn insert_rows(tx: &mut sqlx::Transaction<'_, sqlx::Any>, rows: &[EventRow]) -> Result<(), DbError> {
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let mut sql =
            String::from("INSERT INTO events (conversation_id, seq, last_seq, name, data, created_at) VALUES ");
        for i in 0..chunk.len() {
            let b = i * 6;
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("(${}, ${}, ${}, ${}, ${}, ${})", b + 1, b + 2, b + 3, b + 4, b + 5, b + 6));
        }
        let mut query = sqlx::query(&sql);
        for r in chunk {
            query = query
                .bind(&r.conversation_id)
                .bind(to_i64(r.seq))
                .bind(to_i64(r.last_seq))
                .bind(&r.name)
                .bind(&r.data)
                .bind(r.created_at);
        }
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Stored rows that contain events after `after_seq`, in order.
pub async fn after(db: &Db, conversation_id: &str, after_seq: u64) -> Result<Vec<EventRow>, DbError> {
    let rows: Vec<(i64, i64, String, String, i64)> = sqlx::query_as(
        "SELECT seq, last_seq, name, data, created_at FROM events \
         WHERE conversation_id = $1 AND last_seq > $2 ORDER BY seq",
    )
    .bind(conversation_id)
    .bind(to_i64(after_seq))
    .fetch_all(db.pool())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(seq, last_seq, name, data, created_at)| EventRow {
            conversation_id: conversation_id.to_owned(),
            seq: u64::try_from(seq).unwrap_or(0),
            last_seq: u64::try_from(last_seq).unwrap_or(0),
            name,
            data,
            created_at,
        })
        .collect())
}

/// The highest sequence number stored for a conversation (0 when none).
pub async fn max_seq(db: &Db, conversation_id: &str) -> Result<u64, DbError> {
    let max: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(m) FROM (SELECT MAX(last_seq) AS m FROM events WHERE conversation_id = $1 \
         UNION ALL SELECT MAX(start_seq) AS m FROM messages WHERE conversation_id = $1) AS t",
    )
    .bind(conversation_id)
    .fetch_one(db.pool())
    .await?;
    Ok(max.and_then(|m| u64::try_from(m).ok()).unwrap_or(0))
}
