//! Console sessions for tower-sessions, stored in Parley's own database (SQLite or PostgreSQL).

use std::collections::HashMap;

use serde_json::Value;
use time::OffsetDateTime;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};

use super::Db;

/// The tower-sessions store over [`Db`].
#[derive(Clone, Debug)]
pub struct DbSessionStore {
    db: Db,
}

impl DbSessionStore {
    pub fn new(db: Db) -> Self {
        DbSessionStore { db }
    }

    /// Removes expired sessions; returns how many.
    pub async fn delete_expired(&self, now_ms: i64) -> Result<u64, sqlx::Error> {
        let done =
            sqlx::query("DELETE FROM sessions WHERE expiry <= $1").bind(now_ms).execute(self.db.writer()).await?;
        Ok(done.rows_affected())
    }
}

fn backend(e: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

fn millis(t: OffsetDateTime) -> i64 {
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

fn now_ms() -> i64 {
    millis(OffsetDateTime::now_utc())
}

#[async_trait::async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        let data = serde_json::to_string(&record.data).map_err(backend)?;
        // A new id on the (astronomically unlikely) collision.
        for _ in 0..5 {
            let inserted = sqlx::query("INSERT INTO sessions (id, data, expiry) VALUES ($1, $2, $3)")
                .bind(record.id.to_string())
                .bind(&data)
                .bind(millis(record.expiry_date))
                .execute(self.db.writer())
                .await;
            match inserted {
                Ok(_) => return Ok(()),
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => record.id = Id::default(),
                Err(e) => return Err(backend(e)),
            }
        }
        Err(backend("could not find a free session id"))
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let data = serde_json::to_string(&record.data).map_err(backend)?;
        sqlx::query(
            "INSERT INTO sessions (id, data, expiry) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET data = excluded.data, expiry = excluded.expiry",
        )
        .bind(record.id.to_string())
        .bind(data)
        .bind(millis(record.expiry_date))
        .execute(self.db.writer())
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let row: Option<(String, i64)> =
            sqlx::query_as("SELECT data, expiry FROM sessions WHERE id = $1 AND expiry > $2")
                .bind(id.to_string())
                .bind(now_ms())
                .fetch_optional(&mut *self.db.read().await.map_err(backend)?)
                .await
                .map_err(backend)?;
        let Some((data, expiry)) = row else { return Ok(None) };
        let data: HashMap<String, Value> = serde_json::from_str(&data).map_err(backend)?;
        let expiry_date = OffsetDateTime::from_unix_timestamp_nanos(i128::from(expiry) * 1_000_000).map_err(backend)?;
        Ok(Some(Record { id: *id, data, expiry_date }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        sqlx::query("DELETE FROM sessions WHERE id = $1")
            .bind(id.to_string())
            .execute(self.db.writer())
            .await
            .map_err(backend)?;
        Ok(())
    }
}
