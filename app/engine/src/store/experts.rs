//! Expert agents (`experts`): the instructions, input schema and tools of each expert a
//! coordinator can call.

use serde_json::Value;

use super::{Db, DbError, from_json_text, to_json_text};

/// One expert as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Expert {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub system_prompt: String,
    /// Tools the expert may call (only those its agent has count).
    pub tools: Vec<String>,
    /// `None`: the coordinator's model.
    pub model: Option<String>,
    pub max_tokens: u32,
    pub enabled: bool,
    /// The coordinator whose own copy this is; `None`: shared by every coordinator.
    pub agent_id: Option<String>,
    /// The shared expert a copy stands in for (its tool keeps that name).
    pub based_on: Option<String>,
}

crate::store::row_struct! {
    struct Row {
        name: String,
        description: String,
        input_schema: String,
        system_prompt: String,
        tools: String,
        model: Option<String>,
        max_tokens: i64,
        enabled: i64,
        agent_id: Option<String>,
        based_on: Option<String>,
    }
}

pub async fn list(db: &Db) -> Result<Vec<Expert>, DbError> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT name, description, input_schema, system_prompt, tools, model, max_tokens, enabled, agent_id, \
         based_on FROM experts ORDER BY name",
    )
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Expert {
            input_schema: serde_json::from_str(&r.input_schema)
                .unwrap_or_else(|_| serde_json::json!({"type": "object"})),
            name: r.name,
            description: r.description,
            system_prompt: r.system_prompt,
            tools: from_json_text(&r.tools),
            model: r.model,
            max_tokens: u32::try_from(r.max_tokens).unwrap_or(800),
            enabled: r.enabled != 0,
            agent_id: r.agent_id,
            based_on: r.based_on,
        })
        .collect())
}

/// The name of `agent_key`'s copy of the shared expert `name`.
pub fn copy_name(name: &str, agent_key: &str) -> String {
    format!("{name}.{agent_key}")
}

/// Makes the coordinator `agent_id` (whose key is `agent_key`) its own copy of the shared expert
/// `name`, with the same fields; the copy's name, or `None` when there is no such shared expert.
/// A copy that exists already is kept as it is.
pub async fn copy_for(
    db: &Db,
    name: &str,
    agent_id: &str,
    agent_key: &str,
    now: i64,
) -> Result<Option<String>, DbError> {
    let copy = copy_name(name, agent_key);
    let r = sqlx::query(
        "INSERT INTO experts (name, description, input_schema, system_prompt, tools, model, max_tokens, enabled, \
         updated_at, agent_id, based_on) SELECT $1, description, input_schema, system_prompt, tools, model, max_tokens, \
         enabled, $2, $3, name FROM experts WHERE name = $4 AND agent_id IS NULL \
         AND NOT EXISTS (SELECT 1 FROM experts WHERE name = $1)",
    )
    .bind(&copy)
    .bind(now)
    .bind(agent_id)
    .bind(name)
    .execute(db.writer())
    .await?;
    if r.rows_affected() > 0 {
        return Ok(Some(copy));
    }
    let exists: Option<String> = sqlx::query_scalar("SELECT name FROM experts WHERE name = $1 AND agent_id = $2")
        .bind(&copy)
        .bind(agent_id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(exists)
}

/// Deletes a coordinator's copy (it goes back to the shared expert); false when `name` is not a
/// copy.
pub async fn delete_copy(db: &Db, name: &str) -> Result<bool, DbError> {
    let r = sqlx::query("DELETE FROM experts WHERE name = $1 AND agent_id IS NOT NULL")
        .bind(name)
        .execute(db.writer())
        .await?;
    Ok(r.rows_affected() > 0)
}

/// A fingerprint of the experts (how many, and the sum of their change times), to notice an edit
/// made by another replica.
pub async fn version(db: &Db) -> Result<(i64, i64), DbError> {
    let row: (i64, Option<i64>) = sqlx::query_as("SELECT COUNT(*), CAST(SUM(updated_at) AS BIGINT) FROM experts")
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok((row.0, row.1.unwrap_or(0)))
}

/// Replaces the editable fields of an existing expert; false when there is none of that name.
pub async fn update(db: &Db, e: &Expert, now: i64) -> Result<bool, DbError> {
    let r = sqlx::query(
        "UPDATE experts SET description = $2, input_schema = $3, system_prompt = $4, tools = $5, model = $6, \
         max_tokens = $7, enabled = $8, updated_at = $9 WHERE name = $1",
    )
    .bind(&e.name)
    .bind(&e.description)
    .bind(e.input_schema.to_string())
    .bind(&e.system_prompt)
    .bind(to_json_text(&e.tools))
    .bind(&e.model)
    .bind(i64::from(e.max_tokens))
    .bind(i64::from(e.enabled))
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(r.rows_affected() > 0)
}
