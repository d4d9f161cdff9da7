//! The model price table (`model_prices`): dollars per million tokens, context window and image
//! support, matched by model-name prefix.

use super::{Db, DbError};

/// One row of the price table.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPrice {
    pub model_prefix: String,
    pub input_per_mtok: f64,
    pub cached_per_mtok: f64,
    pub output_per_mtok: f64,
    pub context_window: u64,
    pub vision: bool,
}

crate::store::row_struct! {
    struct Row {
        model_prefix: String,
        input_per_mtok: f64,
        cached_per_mtok: f64,
        output_per_mtok: f64,
        context_window: i64,
        vision: i64,
    }
}

pub async fn list(db: &Db) -> Result<Vec<ModelPrice>, DbError> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT model_prefix, input_per_mtok, cached_per_mtok, output_per_mtok, context_window, vision \
         FROM model_prices ORDER BY model_prefix",
    )
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| ModelPrice {
            model_prefix: r.model_prefix,
            input_per_mtok: r.input_per_mtok,
            cached_per_mtok: r.cached_per_mtok,
            output_per_mtok: r.output_per_mtok,
            context_window: u64::try_from(r.context_window).unwrap_or(0),
            vision: r.vision != 0,
        })
        .collect())
}

/// Adds or replaces the row of `p.model_prefix`.
pub async fn upsert(db: &Db, p: &ModelPrice, now: i64) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO model_prices (model_prefix, input_per_mtok, cached_per_mtok, output_per_mtok, context_window, \
         vision, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (model_prefix) DO UPDATE SET input_per_mtok = excluded.input_per_mtok, \
         cached_per_mtok = excluded.cached_per_mtok, output_per_mtok = excluded.output_per_mtok, \
         context_window = excluded.context_window, vision = excluded.vision, updated_at = excluded.updated_at",
    )
    .bind(&p.model_prefix)
    .bind(p.input_per_mtok)
    .bind(p.cached_per_mtok)
    .bind(p.output_per_mtok)
    .bind(i64::try_from(p.context_window).unwrap_or(i64::MAX))
    .bind(i64::from(p.vision))
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

pub async fn delete(db: &Db, model_prefix: &str) -> Result<bool, DbError> {
    let r =
        sqlx::query("DELETE FROM model_prices WHERE model_prefix = $1").bind(model_prefix).execute(db.writer()).await?;
    Ok(r.rows_affected() > 0)
}
