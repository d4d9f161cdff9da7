//! News items the `fetch_immigration_news` tool serves (importable from a JSON file).

use serde::{Deserialize, Serialize};

use super::{Db, DbError, new_id};

crate::store::row_struct! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct NewsItem {
        #[serde(default)]
        pub id: String,
        pub category: String,
        pub title: String,
        pub summary: String,
        #[serde(rename = "date")]
        pub published_on: String,
        pub source: String,
        #[serde(default)]
        pub url: Option<String>,
    }
}

/// Stores items (for every agent when `agent_id` is `None`). Returns how many were added.
pub async fn import(db: &Db, agent_id: Option<&str>, items: &[NewsItem], now: i64) -> Result<usize, DbError> {
    let mut tx = db.begin_write().await?;
    for item in items {
        sqlx::query(
            "INSERT INTO news_items (id, agent_id, category, title, summary, published_on, source, url, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(new_id())
        .bind(agent_id)
        .bind(&item.category)
        .bind(&item.title)
        .bind(&item.summary)
        .bind(&item.published_on)
        .bind(&item.source)
        .bind(&item.url)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(items.len())
}

/// The newest items for an agent; `category` `None` means all categories (items filed under
/// `ALL` always match).
pub async fn latest(db: &Db, agent_id: &str, category: Option<&str>, limit: i64) -> Result<Vec<NewsItem>, DbError> {
    sqlx::query_as(
        "SELECT id, category, title, summary, published_on, source, url FROM news_items \
         WHERE (agent_id IS NULL OR agent_id = $1) AND ($2 IS NULL OR category = $2 OR category = 'ALL') \
         ORDER BY published_on DESC, created_at DESC LIMIT $3",
    )
    .bind(agent_id)
    .bind(category)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Items for one day (`YYYY-MM-DD`).
pub async fn on_date(db: &Db, agent_id: &str, date: &str) -> Result<Vec<NewsItem>, DbError> {
    sqlx::query_as(
        "SELECT id, category, title, summary, published_on, source, url FROM news_items \
         WHERE (agent_id IS NULL OR agent_id = $1) AND published_on = $2 ORDER BY created_at",
    )
    .bind(agent_id)
    .bind(date)
    .fetch_all(&mut *db.read().await?)
    .await
}

pub async fn count(db: &Db) -> Result<i64, DbError> {
    sqlx::query_scalar("SELECT COUNT(*) FROM news_items").fetch_one(&mut *db.read().await?).await
}
