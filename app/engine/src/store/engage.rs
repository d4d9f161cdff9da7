//! Triggers and their counts (issue 44, part 1). A rule is stored as the protocol's `Trigger`
//! JSON; checking it is the engine's (`crate::engine::engage`), before it gets here.

use parley_protocol::{EngageEvent, Trigger};

use super::{Db, DbError};

/// A trigger as the console lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTrigger {
    pub trigger: Trigger,
    pub enabled: bool,
}

/// Why a save did not happen.
#[derive(Debug)]
pub enum SaveError {
    /// Another trigger of the agent has this name.
    Taken,
    /// The trigger to rewrite is gone.
    NotFound,
    /// The agent has as many triggers as it may.
    Full,
    Db(DbError),
}

impl From<DbError> for SaveError {
    fn from(e: DbError) -> Self {
        SaveError::Db(e)
    }
}

fn decode(rule: &str) -> Result<Trigger, DbError> {
    serde_json::from_str(rule).map_err(|e| DbError::Decode(Box::new(e)))
}

/// The agent's triggers in the owner's order.
pub async fn list(db: &Db, agent_id: &str) -> Result<Vec<StoredTrigger>, DbError> {
    let rows: Vec<(String, i64)> =
        sqlx::query_as("SELECT rule, enabled FROM engage_triggers WHERE agent_id = $1 ORDER BY position, name")
            .bind(agent_id)
            .fetch_all(&mut *db.read().await?)
            .await?;
    rows.into_iter()
        .map(|(rule, enabled)| Ok(StoredTrigger { trigger: decode(&rule)?, enabled: enabled != 0 }))
        .collect()
}

/// The agent's enabled triggers, in order: what the loader gets.
pub async fn enabled(db: &Db, agent_id: &str) -> Result<Vec<Trigger>, DbError> {
    Ok(list(db, agent_id).await?.into_iter().filter(|t| t.enabled).map(|t| t.trigger).collect())
}

/// Adds a trigger at the end (`previous` `None`) or rewrites the one named `previous` in its place
/// (a new name renames it), in one transaction.
pub async fn save(
    db: &Db,
    agent_id: &str,
    previous: Option<&str>,
    trigger: &Trigger,
    enabled: bool,
    now: i64,
) -> Result<(), SaveError> {
    let rule = serde_json::to_string(trigger).map_err(|e| DbError::Encode(Box::new(e)))?;
    let mut tx = db.begin_write().await?;
    let taken: Option<(i64,)> = sqlx::query_as("SELECT 1 FROM engage_triggers WHERE agent_id = $1 AND name = $2")
        .bind(agent_id)
        .bind(&trigger.name)
        .fetch_optional(&mut *tx)
        .await?;
    let position = match previous {
        None => {
            if taken.is_some() {
                return Err(SaveError::Taken);
            }
            let (count, last): (i64, Option<i64>) =
                sqlx::query_as("SELECT COUNT(*), MAX(position) FROM engage_triggers WHERE agent_id = $1")
                    .bind(agent_id)
                    .fetch_one(&mut *tx)
                    .await?;
            if count as usize >= parley_protocol::MAX_TRIGGERS {
                return Err(SaveError::Full);
            }
            last.map_or(0, |p| p + 1)
        }
        Some(previous) => {
            if taken.is_some() && previous != trigger.name {
                return Err(SaveError::Taken);
            }
            let row: Option<(i64,)> =
                sqlx::query_as("SELECT position FROM engage_triggers WHERE agent_id = $1 AND name = $2")
                    .bind(agent_id)
                    .bind(previous)
                    .fetch_optional(&mut *tx)
                    .await?;
            let Some((position,)) = row else { return Err(SaveError::NotFound) };
            sqlx::query("DELETE FROM engage_triggers WHERE agent_id = $1 AND name = $2")
                .bind(agent_id)
                .bind(previous)
                .execute(&mut *tx)
                .await?;
            position
        }
    };
    sqlx::query(
        "INSERT INTO engage_triggers (agent_id, name, position, enabled, rule, updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(agent_id)
    .bind(&trigger.name)
    .bind(position)
    .bind(i64::from(enabled))
    .bind(rule)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Removes a trigger (its counts stay); whether there was one.
pub async fn remove(db: &Db, agent_id: &str, name: &str) -> Result<bool, DbError> {
    let done = sqlx::query("DELETE FROM engage_triggers WHERE agent_id = $1 AND name = $2")
        .bind(agent_id)
        .bind(name)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Counts one showing or click of an enabled trigger on the UTC day of `now`; false (nothing
/// counted) when the agent has no such enabled trigger.
pub async fn count(db: &Db, agent_id: &str, name: &str, event: EngageEvent, now: i64) -> Result<bool, DbError> {
    let known: Option<(i64,)> =
        sqlx::query_as("SELECT 1 FROM engage_triggers WHERE agent_id = $1 AND name = $2 AND enabled = 1")
            .bind(agent_id)
            .bind(name)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    if known.is_none() {
        return Ok(false);
    }
    let (shown, clicked) = match event {
        EngageEvent::Shown => (1_i64, 0_i64),
        EngageEvent::Clicked => (0, 1),
    };
    sqlx::query(
        "INSERT INTO engage_counts (agent_id, trigger_name, day, shown, clicked) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (agent_id, trigger_name, day) DO UPDATE SET shown = engage_counts.shown + excluded.shown, \
         clicked = engage_counts.clicked + excluded.clicked",
    )
    .bind(agent_id)
    .bind(name)
    .bind(now - now.rem_euclid(86_400_000))
    .bind(shown)
    .bind(clicked)
    .execute(db.writer())
    .await?;
    Ok(true)
}

/// Showings and clicks per agent and trigger from the UTC day of `since` on:
/// `(agent_id, trigger, shown, clicked)`, most shown first.
pub async fn counts_since(db: &Db, since: i64) -> Result<Vec<(String, String, i64, i64)>, DbError> {
    let rows: Vec<(String, String, i64, i64)> = sqlx::query_as(
        "SELECT agent_id, trigger_name, CAST(SUM(shown) AS BIGINT), CAST(SUM(clicked) AS BIGINT) FROM engage_counts \
         WHERE day >= $1 GROUP BY agent_id, trigger_name ORDER BY 3 DESC, 2",
    )
    .bind(since - since.rem_euclid(86_400_000))
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows)
}
