//! Process leases: every running server process has a row it renews (its heartbeat). An answer
//! being written names the process writing it (`messages.owner`), so crash recovery touches only
//! the answers of processes that are gone, never those of another live replica.

use super::{Db, DbError};

/// Registers this process.
pub async fn register(db: &Db, id: &str, host: &str, pid: u32, now: i64) -> Result<(), DbError> {
    sqlx::query("INSERT INTO processes (id, host, pid, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $4)")
        .bind(id)
        .bind(host)
        .bind(i64::from(pid))
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Renews this process's lease; false if its row was gone (another process took it for dead),
/// in which case it is written again.
pub async fn heartbeat(db: &Db, id: &str, host: &str, pid: u32, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query("UPDATE processes SET heartbeat_at = $2 WHERE id = $1")
        .bind(id)
        .bind(now)
        .execute(db.writer())
        .await?
        .rows_affected();
    if done == 0 {
        register(db, id, host, pid, now).await?;
    }
    Ok(done > 0)
}

/// Ends this process's lease (a clean shutdown, after its answers have ended).
pub async fn release(db: &Db, id: &str) -> Result<(), DbError> {
    sqlx::query("DELETE FROM processes WHERE id = $1").bind(id).execute(db.writer()).await?;
    Ok(())
}

/// Forgets processes whose lease expired before `cutoff` (their answers are recovered first).
pub async fn forget_expired(db: &Db, cutoff: i64, except: &str) -> Result<u64, DbError> {
    Ok(sqlx::query("DELETE FROM processes WHERE heartbeat_at < $1 AND id <> $2")
        .bind(cutoff)
        .bind(except)
        .execute(db.writer())
        .await?
        .rows_affected())
}

/// A `streaming` answer whose writer is gone.
#[derive(Clone, Debug, PartialEq)]
pub struct Orphan {
    pub conversation_id: String,
    pub message_id: String,
    pub start_seq: u64,
    pub agent_id: String,
    pub visitor_id: String,
}

/// `streaming` answers not written by `me` whose process is gone: no owner, an owner without a
/// lease, or one whose heartbeat is older than `cutoff`. With `every_other`, every answer not
/// written by `me` (one process per database: whatever else is streaming was left by a crash).
pub async fn orphans(db: &Db, me: &str, cutoff: i64, every_other: bool) -> Result<Vec<Orphan>, DbError> {
    const SELECT: &str = "SELECT m.conversation_id, m.id, m.start_seq, c.agent_id, c.visitor_id FROM messages m \
         JOIN conversations c ON c.id = m.conversation_id WHERE m.status = 'streaming' AND ";
    let mut conn = db.read().await?;
    let rows: Vec<(String, String, i64, String, String)> = if every_other {
        sqlx::query_as(&format!("{SELECT} (m.owner IS NULL OR m.owner <> $1)")).bind(me).fetch_all(&mut *conn).await?
    } else {
        sqlx::query_as(&format!(
            "{SELECT} (m.owner IS NULL OR (m.owner <> $1 AND NOT EXISTS \
             (SELECT 1 FROM processes p WHERE p.id = m.owner AND p.heartbeat_at >= $2)))"
        ))
        .bind(me)
        .bind(cutoff)
        .fetch_all(&mut *conn)
        .await?
    };
    Ok(rows
        .into_iter()
        .map(|(conversation_id, message_id, start_seq, agent_id, visitor_id)| Orphan {
            conversation_id,
            message_id,
            start_seq: u64::try_from(start_seq).unwrap_or(0),
            agent_id,
            visitor_id,
        })
        .collect())
}
