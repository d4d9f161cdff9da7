//! Embeddings of knowledge chunks filled in after the fact: chunks stored while no embeddings
//! endpoint was configured (or while it failed) get their vectors in the background, a batch at
//! a time (see `engine::knowledge::backfill`).

use super::{Db, DbError};

crate::store::row_struct! {
    /// A chunk waiting for its vector: its id and the text embedded for it (title, then passage, as
    /// when an article is stored).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Waiting {
        pub id: String,
        pub title: String,
        pub text: String,
    }
}

/// Up to `limit` chunks without a vector, oldest articles first.
pub async fn waiting(db: &Db, limit: i64) -> Result<Vec<Waiting>, DbError> {
    sqlx::query_as(
        "SELECT c.id, a.title, c.text FROM chunks c JOIN articles a ON a.id = c.article_id \
         WHERE c.embedding IS NULL ORDER BY a.created_at, a.id, c.ordinal LIMIT $1",
    )
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Stores vectors, in one transaction. A chunk deleted meanwhile is skipped.
pub async fn store(db: &Db, vectors: &[(String, Vec<f32>)]) -> Result<(), DbError> {
    let mut tx = db.begin_write().await?;
    for (id, vector) in vectors {
        sqlx::query("UPDATE chunks SET embedding = $2 WHERE id = $1 AND embedding IS NULL")
            .bind(id)
            .bind(super::to_json_text(vector))
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await
}

/// `(chunks, chunks with a vector)`.
pub async fn counts(db: &Db) -> Result<(i64, i64), DbError> {
    sqlx::query_as("SELECT COUNT(*), COUNT(embedding) FROM chunks").fetch_one(&mut *db.read().await?).await
}
