//! Periodic jobs shared by every replica (issue 14): expiring orders, deleting stale sessions,
//! images and webhook ids. Every replica ticks, but a run happens once: a replica runs a job only
//! if it moved the job's `next_run_at` forward itself, in one conditional `UPDATE` that exactly
//! one process can win for each due run (a row lock on PostgreSQL, the one writer on SQLite). A
//! replica that dies mid-run leaves the next run to whoever is first when it falls due.

use super::{Db, DbError};

/// Claims the run of `job` due at `now`: true if this process (`by`) is to run it now, in which
/// case the next run is due `every_ms` later; false if the job is not due or another process
/// claimed it first.
pub async fn claim(db: &Db, job: &str, every_ms: i64, by: &str, now: i64) -> Result<bool, DbError> {
    let next = now.saturating_add(every_ms);
    let moved = sqlx::query(
        "UPDATE jobs SET next_run_at = $2, last_run_by = $3, last_run_at = $4 WHERE name = $1 AND next_run_at <= $4",
    )
    .bind(job)
    .bind(next)
    .bind(by)
    .bind(now)
    .execute(db.writer())
    .await?
    .rows_affected();
    if moved == 1 {
        return Ok(true);
    }
    // The job's first run ever: whoever inserts its row runs it.
    let inserted = sqlx::query(
        "INSERT INTO jobs (name, next_run_at, last_run_by, last_run_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(job)
    .bind(next)
    .bind(by)
    .bind(now)
    .execute(db.writer())
    .await?
    .rows_affected();
    Ok(inserted == 1)
}

/// `(process, time)` of a job's last run, if it ran (the console, tests).
pub async fn last_run(db: &Db, job: &str) -> Result<Option<(String, i64)>, DbError> {
    let row: Option<(Option<String>, Option<i64>)> =
        sqlx::query_as("SELECT last_run_by, last_run_at FROM jobs WHERE name = $1")
            .bind(job)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    Ok(row.and_then(|(by, at)| Some((by?, at?))))
}
