//! Tools owners define (`http_tools`): a name, a description and an argument schema for the
//! model, and the HTTPS endpoint Parley calls. Header values (an API key, a bearer token) are
//! sealed with the secret key like provider keys, and only ever leave the store opened into
//! [`ApiKey`]s, whose `Debug` shows a hint. The rules of a tool live in
//! `engine::tools::http_tool`; this module only stores what passed them.

use serde_json::Value;

use super::{Db, DbError, new_id};
use crate::secret::ApiKey;

/// A tool as stored, its headers opened.
#[derive(Clone, Debug)]
pub struct HttpToolRow {
    pub id: String,
    pub name: String,
    pub description: String,
    pub capability: String,
    pub parameters: Value,
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, ApiKey)>,
    pub timeout_ms: u32,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A checked tool to write. `headers: None` keeps the stored ones (an edit that does not retype
/// the secrets).
#[derive(Clone, Debug, PartialEq)]
pub struct HttpToolFields {
    pub name: String,
    pub description: String,
    pub capability: String,
    pub parameters: Value,
    pub method: String,
    pub url: String,
    pub headers: Option<Vec<(String, String)>>,
    pub timeout_ms: u32,
}

/// Why a tool was not written.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("Another tool already has this name.")]
    NameTaken,
    #[error(transparent)]
    Db(#[from] DbError),
}

impl SaveError {
    /// `name` is the only unique column besides the random id.
    fn from_db(e: DbError) -> Self {
        match &e {
            DbError::Database(d) if d.is_unique_violation() => SaveError::NameTaken,
            _ => SaveError::Db(e),
        }
    }
}

crate::store::row_struct! {
    struct Row {
        id: String,
        name: String,
        description: String,
        capability: String,
        parameters: String,
        method: String,
        url: String,
        headers: Option<String>,
        timeout_ms: i64,
        created_at: i64,
        updated_at: i64,
    }
}

const COLUMNS: &str = "id, name, description, capability, parameters, method, url, headers, timeout_ms, created_at, \
    updated_at";

fn no_secret_key() -> DbError {
    DbError::Configuration("no secret key to seal or open tool headers (see PARLEY_SECRET_KEY)".into())
}

fn open(db: &Db, r: Row) -> Result<HttpToolRow, DbError> {
    let headers = match r.headers.as_deref() {
        None => Vec::new(),
        Some(sealed) => {
            let secrets = db.secrets().ok_or_else(no_secret_key)?;
            let plain = secrets.open(sealed, headers_place(&r.id)).map_err(|e| DbError::Decode(Box::new(e)))?;
            let pairs: Vec<(String, String)> =
                serde_json::from_str(&plain).map_err(|e| DbError::Decode(Box::new(e)))?;
            pairs.into_iter().filter_map(|(n, v)| Some((n, ApiKey::new(v)?))).collect()
        }
    };
    Ok(HttpToolRow {
        parameters: serde_json::from_str(&r.parameters).map_err(|e| DbError::Decode(Box::new(e)))?,
        id: r.id,
        name: r.name,
        description: r.description,
        capability: r.capability,
        method: r.method,
        url: r.url,
        headers,
        timeout_ms: u32::try_from(r.timeout_ms).unwrap_or(10_000),
        created_at: r.created_at,
        updated_at: r.updated_at,
    })
}

/// Where a tool's headers are sealed to.
fn headers_place(id: &str) -> crate::secret::Place<'_> {
    crate::secret::Place::new("http_tools", "headers", id)
}

/// Headers as stored: NULL for none, else the JSON list of pairs sealed to the tool's row.
fn seal(db: &Db, id: &str, headers: &[(String, String)]) -> Result<Option<String>, DbError> {
    if headers.is_empty() {
        return Ok(None);
    }
    let plain = serde_json::to_string(headers).map_err(|e| DbError::Decode(Box::new(e)))?;
    Ok(Some(db.secrets().ok_or_else(no_secret_key)?.seal(&plain, headers_place(id))))
}

/// Every tool, by name.
pub async fn list(db: &Db) -> Result<Vec<HttpToolRow>, DbError> {
    let rows: Vec<Row> = sqlx::query_as(&format!("SELECT {COLUMNS} FROM http_tools ORDER BY name"))
        .fetch_all(&mut *db.read().await?)
        .await?;
    rows.into_iter().map(|r| open(db, r)).collect()
}

pub async fn by_id(db: &Db, id: &str) -> Result<Option<HttpToolRow>, DbError> {
    let row: Option<Row> = sqlx::query_as(&format!("SELECT {COLUMNS} FROM http_tools WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    row.map(|r| open(db, r)).transpose()
}

/// Writes a new tool and returns its id; [`SaveError::NameTaken`] when the name is in use.
pub async fn insert(db: &Db, t: &HttpToolFields, now: i64) -> Result<String, SaveError> {
    let id = new_id();
    let headers = seal(db, &id, t.headers.as_deref().unwrap_or_default())?;
    sqlx::query(
        "INSERT INTO http_tools (id, name, description, capability, parameters, method, url, headers, timeout_ms, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)",
    )
    .bind(&id)
    .bind(&t.name)
    .bind(&t.description)
    .bind(&t.capability)
    .bind(t.parameters.to_string())
    .bind(&t.method)
    .bind(&t.url)
    .bind(headers)
    .bind(i64::from(t.timeout_ms))
    .bind(now)
    .execute(db.writer())
    .await
    .map_err(SaveError::from_db)?;
    Ok(id)
}

/// Replaces a tool (its headers only when given); false when there is no such tool.
pub async fn update(db: &Db, id: &str, t: &HttpToolFields, now: i64) -> Result<bool, SaveError> {
    let headers = t.headers.as_deref().map(|h| seal(db, id, h)).transpose()?;
    let sql = if headers.is_some() {
        "UPDATE http_tools SET name = $2, description = $3, capability = $4, parameters = $5, method = $6, \
         url = $7, timeout_ms = $8, updated_at = $9, headers = $10 WHERE id = $1"
    } else {
        "UPDATE http_tools SET name = $2, description = $3, capability = $4, parameters = $5, method = $6, \
         url = $7, timeout_ms = $8, updated_at = $9 WHERE id = $1"
    };
    let mut query = sqlx::query(sql)
        .bind(id)
        .bind(&t.name)
        .bind(&t.description)
        .bind(&t.capability)
        .bind(t.parameters.to_string())
        .bind(&t.method)
        .bind(&t.url)
        .bind(i64::from(t.timeout_ms))
        .bind(now);
    if let Some(sealed) = headers {
        query = query.bind(sealed);
    }
    let r = query.execute(db.writer()).await.map_err(SaveError::from_db)?;
    Ok(r.rows_affected() > 0)
}

/// Deletes a tool; false when there was none.
pub async fn delete(db: &Db, id: &str) -> Result<bool, DbError> {
    let r = sqlx::query("DELETE FROM http_tools WHERE id = $1").bind(id).execute(db.writer()).await?;
    Ok(r.rows_affected() > 0)
}

/// A fingerprint of the tools (how many, and the sum of their change times), to notice an edit
/// made by another replica.
pub async fn version(db: &Db) -> Result<(i64, i64), DbError> {
    let row: (i64, Option<i64>) = sqlx::query_as("SELECT COUNT(*), CAST(SUM(updated_at) AS BIGINT) FROM http_tools")
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok((row.0, row.1.unwrap_or(0)))
}
