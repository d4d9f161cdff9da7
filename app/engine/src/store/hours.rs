//! Agents' business hours and console users' presence (issue 17).

use chrono::NaiveDate;

use serde::{Deserialize, Serialize};

use super::{Db, DbError};

/// An agent's hours, as stored (what they mean at a moment: `crate::engine::hours`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusinessHours {
    /// IANA name, e.g. `Europe/Paris`.
    pub time_zone: String,
    /// Seven days, Monday first: `(open, close)` minutes after local midnight, open < close.
    pub weekly: Vec<Vec<(u16, u16)>>,
    /// Local dates nobody is in (holidays).
    pub closed_dates: Vec<NaiveDate>,
}

/// The agent's hours; `None` when it has none (people always reachable).
pub async fn of_agent(db: &Db, agent_id: &str) -> Result<Option<BusinessHours>, DbError> {
    let row: Option<(String, String, String)> =
        sqlx::query_as("SELECT time_zone, weekly, closed_dates FROM business_hours WHERE agent_id = $1")
            .bind(agent_id)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    let Some((time_zone, weekly, closed)) = row else { return Ok(None) };
    let weekly: Vec<Vec<(u16, u16)>> = serde_json::from_str(&weekly).map_err(|e| DbError::Decode(Box::new(e)))?;
    let closed_dates: Vec<NaiveDate> = serde_json::from_str(&closed).map_err(|e| DbError::Decode(Box::new(e)))?;
    Ok(Some(BusinessHours { time_zone, weekly, closed_dates }))
}

/// Sets the agent's hours (`None`: removes them).
pub async fn set(db: &Db, agent_id: &str, hours: Option<&BusinessHours>, now: i64) -> Result<(), DbError> {
    let Some(h) = hours else {
        sqlx::query("DELETE FROM business_hours WHERE agent_id = $1").bind(agent_id).execute(db.writer()).await?;
        return Ok(());
    };
    let weekly = serde_json::to_string(&h.weekly).unwrap_or_default();
    let closed = serde_json::to_string(&h.closed_dates).unwrap_or_default();
    sqlx::query(
        "INSERT INTO business_hours (agent_id, time_zone, weekly, closed_dates, updated_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (agent_id) DO UPDATE SET time_zone = excluded.time_zone, weekly = excluded.weekly, \
         closed_dates = excluded.closed_dates, updated_at = excluded.updated_at",
    )
    .bind(agent_id)
    .bind(&h.time_zone)
    .bind(weekly)
    .bind(closed)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// How long after its console's feed was last seen a user still counts as online.
pub const ONLINE_WITHIN_MS: i64 = 120_000;

/// The console's feed of `user_id` is open at `now`.
pub async fn seen(db: &Db, user_id: &str, now: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE users SET last_seen_at = $2 WHERE id = $1")
        .bind(user_id)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// The user is away (or back).
pub async fn set_away(db: &Db, user_id: &str, away: bool) -> Result<(), DbError> {
    sqlx::query("UPDATE users SET away = $2 WHERE id = $1")
        .bind(user_id)
        .bind(i64::from(away))
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Whether the user is away.
pub async fn is_away(db: &Db, user_id: &str) -> Result<bool, DbError> {
    let row: Option<(i64,)> = sqlx::query_as("SELECT away FROM users WHERE id = $1")
        .bind(user_id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.is_some_and(|(a,)| a != 0))
}

/// Console users online at `now` (their console open, not away): `(name, role)`, by name.
pub async fn online(db: &Db, now: i64) -> Result<Vec<(String, String)>, DbError> {
    sqlx::query_as(
        "SELECT name, role FROM users WHERE away = 0 AND last_seen_at IS NOT NULL AND last_seen_at >= $1 ORDER BY name",
    )
    .bind(now - ONLINE_WITHIN_MS)
    .fetch_all(&mut *db.read().await?)
    .await
}
