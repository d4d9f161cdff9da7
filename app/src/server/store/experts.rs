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
}

#[derive(sqlx::FromRow)]
struct Row {
    name: String,
    description: String,
    input_schema: String,
    system_prompt: String,
    tools: String,
    model: Option<String>,
    max_tokens: i64,
    enabled: i64,
}

pub async fn list(db: &Db) -> Result<Vec<Expert>, DbError> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT name, description, input_schema, system_prompt, tools, model, max_tokens, enabled FROM experts \
         ORDER BY name",
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
        })
        .collect())
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
