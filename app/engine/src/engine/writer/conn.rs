//! The stream writer's connection: its own (SQLite on a thread of its own, PostgreSQL
//! pipelined), else one of the write pool's; and the patient write that waits out an unreachable
//! database.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::queue::Queue;
use crate::store::Db;
use crate::store::batch::{self, Batch};
use crate::store::pg_writer::PgWriter;
use crate::store::sqlite_writer::SqliteWriter;

/// Backoff between attempts while the database is unreachable.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// The writer's own connection, kept for its lifetime (reopened after an error): on SQLite one
/// on a thread of its own ([`SqliteWriter`]), on PostgreSQL one that sends a batch pipelined
/// ([`PgWriter`]); the write pool's if its own cannot be opened.
pub(super) struct Conn {
    db: Db,
    conn: Option<sqlx::pool::PoolConnection<sqlx::Any>>,
    own: Own,
    /// Opening its own connection failed for a reason other than the database being unreachable
    /// (a URL the client does not read, a file that cannot be opened): the pool's serves for good.
    own_refused: bool,
    queue: Arc<Queue>,
}

enum Own {
    None,
    Sqlite(SqliteWriter),
    Postgres(PgWriter),
}

impl Conn {
    pub(super) fn new(db: Db, queue: Arc<Queue>) -> Conn {
        Conn { db, conn: None, own: Own::None, own_refused: false, queue }
    }

    pub(super) async fn write(&mut self, batch: &Batch, repaired: bool) -> Result<(), crate::store::DbError> {
        self.open_own().await?;
        let started = std::time::Instant::now();
        let kind = self.db.kind();
        let result = match &mut self.own {
            Own::Sqlite(sqlite) => sqlite.run(batch::statements_to_write(kind, batch, repaired)).await,
            Own::Postgres(pg) => pg.run(&batch::statements_to_write(kind, batch, repaired)).await,
            Own::None => self.write_pooled(batch, repaired).await,
        };
        metrics::histogram!("parley_writer_batch_seconds").record(started.elapsed().as_secs_f64());
        let lost = match &self.own {
            // The own connection's thread is gone.
            Own::Sqlite(_) => matches!(result, Err(crate::store::DbError::WorkerCrashed)),
            Own::Postgres(pg) => pg.is_closed() || result.as_ref().is_err_and(crate::store::is_unavailable),
            Own::None => false,
        };
        if lost {
            // A new one next time.
            self.own = Own::None;
        }
        result
    }

    /// Opens the writer's own connection if it is not open yet: to SQLite's file, or to
    /// PostgreSQL (an unreachable server is an error the writer waits out). Once refused, the
    /// pool's connection serves for good.
    async fn open_own(&mut self) -> Result<(), crate::store::DbError> {
        if !matches!(self.own, Own::None) || self.own_refused {
            return Ok(());
        }
        let opened = if let Some(path) = self.db.sqlite_file() {
            SqliteWriter::open(path).map(Own::Sqlite)
        } else if let Some(url) = self.db.listen_url() {
            PgWriter::connect(url).await.map(Own::Postgres)
        } else {
            return Ok(());
        };
        match opened {
            Ok(own) => self.own = own,
            Err(e) if crate::store::is_unavailable(&e) => return Err(e),
            Err(e) => {
                self.own_refused = true;
                tracing::warn!(error = %e, "the stream writer uses the pool's connection: its own could not be opened");
            }
        }
        Ok(())
    }

    async fn write_pooled(&mut self, batch: &Batch, repaired: bool) -> Result<(), crate::store::DbError> {
        if self.conn.is_none() {
            self.conn = Some(self.db.writer().acquire().await?);
        }
        let conn = self.conn.as_mut().expect("connection");
        let result = if repaired {
            batch::write_repaired(conn, self.db.kind(), batch).await
        } else {
            batch::write(conn, self.db.kind(), batch).await
        };
        if result.is_err() {
            // Give it back to the pool, which checks it, and take a fresh one next time.
            self.conn = None;
        }
        result
    }

    /// Writes `batch`, waiting out an unreachable database with backoff (for as long as it
    /// takes: what is queued was promised to be stored). Errors are the database refusing the
    /// data itself.
    pub(super) async fn write_patiently(&mut self, batch: &Batch, repaired: bool) -> Result<(), crate::store::DbError> {
        let mut delay = RETRY_FIRST;
        let mut attempt = 0u32;
        loop {
            match self.write(batch, repaired).await {
                Err(e) if crate::store::is_unavailable(&e) => {
                    self.queue.outage.store(true, Ordering::Relaxed);
                    self.db.connections_lost();
                    attempt += 1;
                    metrics::counter!("parley_writer_retries_total").increment(1);
                    if attempt == 1 || attempt.is_power_of_two() {
                        tracing::warn!(error = %e, attempt, rows = batch.len(), "database unreachable: the stream writer retries");
                    }
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(RETRY_MAX);
                }
                other => {
                    if attempt > 0 {
                        self.queue.outage.store(false, Ordering::Relaxed);
                        tracing::info!(attempts = attempt, "the database is back: the stream writer goes on");
                    }
                    return other;
                }
            }
        }
    }
}
