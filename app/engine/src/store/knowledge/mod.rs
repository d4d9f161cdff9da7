//! Knowledge bases and their articles. Articles are split into chunks when they are written; the
//! engine's search index is built from the chunks.

use super::{Db, DbError, new_id};

pub mod sources;
mod text;
pub use text::{CHUNK_CHARS, excerpt, parse_markdown, split};

crate::store::row_struct! {
    #[derive(Clone, Debug, PartialEq, serde::Serialize)]
    pub struct KnowledgeBase {
        pub id: String,
        pub agent_id: String,
        pub name: String,
        pub description: String,
        /// Words and phrases that mark a question as belonging to this base's field (comma or line
        /// separated), for the off-topic check.
        pub topics: String,
    }
}

/// What a knowledge base is: its name, description and topics, as the console and the CLI set them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BaseFields<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub topics: &'a str,
}

/// The topics of a base, one per entry: split on commas (also `，` and `、`) and lines, trimmed,
/// without empties and repeats.
pub fn topic_list(topics: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in topics.split([',', '，', '、', '\n']).map(str::trim).filter(|t| !t.is_empty()) {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    }
    out
}

crate::store::row_struct! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Article {
        pub id: String,
        pub knowledge_base_id: String,
        pub title: String,
        pub category: Option<String>,
        /// `article` or `experience`.
        pub kind: String,
        pub body: String,
        pub source_url: Option<String>,
    }
}

/// An article to write.
#[derive(Clone, Debug, PartialEq)]
pub struct NewArticle {
    pub title: String,
    pub category: Option<String>,
    pub kind: String,
    pub body: String,
    pub source_url: Option<String>,
}

crate::store::row_struct! {
    /// A stored chunk with its article's metadata, as the index needs it.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ChunkRow {
        pub id: String,
        pub article_id: String,
        pub knowledge_base_id: String,
        pub agent_id: String,
        pub title: String,
        pub category: Option<String>,
        pub kind: String,
        pub source_url: Option<String>,
        pub text: String,
        pub embedding: Option<String>,
        /// Where a citation of this passage points, when it is not the article's `source_url`: a
        /// crawled page with a text fragment that scrolls to the passage.
        pub url: Option<String>,
        /// The passage's place in its article (0: the first).
        pub ordinal: i64,
        /// 1 when the article came from a source (a crawled page, a file, a snippet): its
        /// passages carry their own headings.
        pub from_source: i64,
    }
}

pub async fn create_base(db: &Db, agent_id: &str, fields: &BaseFields<'_>, now: i64) -> Result<KnowledgeBase, DbError> {
    let id = new_id();
    sqlx::query(
        "INSERT INTO knowledge_bases (id, agent_id, name, description, topics, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6)",
    )
    .bind(&id)
    .bind(agent_id)
    .bind(fields.name)
    .bind(fields.description)
    .bind(fields.topics)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(KnowledgeBase {
        id,
        agent_id: agent_id.into(),
        name: fields.name.into(),
        description: fields.description.into(),
        topics: fields.topics.into(),
    })
}

/// Renames or redescribes a base; `false` if there is none with this id.
pub async fn update_base(db: &Db, id: &str, fields: &BaseFields<'_>, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE knowledge_bases SET name = $2, description = $3, topics = $4, updated_at = $5 WHERE id = $1",
    )
    .bind(id)
    .bind(fields.name)
    .bind(fields.description)
    .bind(fields.topics)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() > 0)
}

const BASE_COLUMNS: &str = "id, agent_id, name, description, topics";

pub async fn bases_of_agent(db: &Db, agent_id: &str) -> Result<Vec<KnowledgeBase>, DbError> {
    sqlx::query_as(&format!("SELECT {BASE_COLUMNS} FROM knowledge_bases WHERE agent_id = $1 ORDER BY created_at, id"))
        .bind(agent_id)
        .fetch_all(&mut *db.read().await?)
        .await
}

/// Every base of every agent (what the knowledge tools are told about each agent's knowledge).
pub async fn every_base(db: &Db) -> Result<Vec<KnowledgeBase>, DbError> {
    sqlx::query_as(&format!("SELECT {BASE_COLUMNS} FROM knowledge_bases ORDER BY created_at, id"))
        .fetch_all(&mut *db.read().await?)
        .await
}

/// Writes an article and its chunks (with embeddings when given) in one transaction.
pub async fn insert_article(
    db: &Db,
    knowledge_base_id: &str,
    article: &NewArticle,
    chunks: &[(String, Option<Vec<f32>>)],
    now: i64,
) -> Result<String, DbError> {
    let id = new_id();
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "INSERT INTO articles (id, knowledge_base_id, title, category, kind, body, source_url, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
    )
    .bind(&id)
    .bind(knowledge_base_id)
    .bind(&article.title)
    .bind(&article.category)
    .bind(&article.kind)
    .bind(&article.body)
    .bind(&article.source_url)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    insert_chunks(&mut tx, &id, knowledge_base_id, chunks).await?;
    sqlx::query("UPDATE knowledge_bases SET updated_at = $2 WHERE id = $1")
        .bind(knowledge_base_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(id)
}

crate::store::row_struct! {
    /// A knowledge base with its agent's name and how many articles it holds (console lists).
    #[derive(Clone, Debug, PartialEq)]
    pub struct BaseSummary {
        pub id: String,
        pub agent_id: String,
        pub agent_name: String,
        pub name: String,
        pub description: String,
        pub topics: String,
        pub articles: i64,
    }
}

/// A base with its agent's name and article count (one row per base).
const SUMMARY: &str = "SELECT b.id, b.agent_id, a.name AS agent_name, b.name, b.description, b.topics, \
     (SELECT COUNT(*) FROM articles x WHERE x.knowledge_base_id = b.id) AS articles \
     FROM knowledge_bases b JOIN agents a ON a.id = b.agent_id";

pub async fn all_bases(db: &Db) -> Result<Vec<BaseSummary>, DbError> {
    sqlx::query_as(&format!("{SUMMARY} ORDER BY a.name, b.created_at, b.id")).fetch_all(&mut *db.read().await?).await
}

/// One base as [`all_bases`] lists it.
pub async fn base_summary(db: &Db, id: &str) -> Result<Option<BaseSummary>, DbError> {
    sqlx::query_as(&format!("{SUMMARY} WHERE b.id = $1")).bind(id).fetch_optional(&mut *db.read().await?).await
}

pub async fn base(db: &Db, id: &str) -> Result<Option<KnowledgeBase>, DbError> {
    sqlx::query_as(&format!("SELECT {BASE_COLUMNS} FROM knowledge_bases WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

crate::store::row_struct! {
    /// A row of an article list.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ArticleSummary {
        pub id: String,
        pub title: String,
        pub category: Option<String>,
        pub kind: String,
        pub updated_at: i64,
    }
}

/// One page of a knowledge base's articles, filtered by words of the title or body.
pub async fn articles(
    db: &Db,
    knowledge_base_id: &str,
    search: Option<&str>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<ArticleSummary>, i64), DbError> {
    let pattern =
        search.map(|s| format!("%{}%", s.to_lowercase().replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")));
    let filter = "knowledge_base_id = $1 AND ($2 IS NULL OR LOWER(title) LIKE $2 ESCAPE '\\' OR LOWER(body) LIKE $2 ESCAPE '\\')";
    let rows = sqlx::query_as(&format!(
        "SELECT id, title, category, kind, updated_at FROM articles WHERE {filter} ORDER BY title, id LIMIT $3 OFFSET $4"
    ))
    .bind(knowledge_base_id)
    .bind(&pattern)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *db.read().await?)
    .await?;
    let total = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM articles WHERE {filter}"))
        .bind(knowledge_base_id)
        .bind(&pattern)
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok((rows, total))
}

pub async fn article(db: &Db, id: &str) -> Result<Option<Article>, DbError> {
    sqlx::query_as("SELECT id, knowledge_base_id, title, category, kind, body, source_url FROM articles WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// Rewrites an article and its chunks in one transaction.
pub async fn update_article(
    db: &Db,
    id: &str,
    article: &NewArticle,
    chunks: &[(String, Option<Vec<f32>>)],
    now: i64,
) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    let done = sqlx::query(
        "UPDATE articles SET title = $2, category = $3, kind = $4, body = $5, source_url = $6, updated_at = $7 WHERE id = $1",
    )
    .bind(id)
    .bind(&article.title)
    .bind(&article.category)
    .bind(&article.kind)
    .bind(&article.body)
    .bind(&article.source_url)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    let base: String =
        sqlx::query_scalar("SELECT knowledge_base_id FROM articles WHERE id = $1").bind(id).fetch_one(&mut *tx).await?;
    sqlx::query("DELETE FROM chunks WHERE article_id = $1").bind(id).execute(&mut *tx).await?;
    insert_chunks(&mut tx, id, &base, chunks).await?;
    tx.commit().await?;
    Ok(true)
}

pub async fn delete_article(db: &Db, id: &str) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query("DELETE FROM chunks WHERE article_id = $1").bind(id).execute(&mut *tx).await?;
    let done = sqlx::query("DELETE FROM articles WHERE id = $1").bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(done.rows_affected() == 1)
}

/// Writes an article's chunks (in order) inside the caller's transaction.
async fn insert_chunks(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    article_id: &str,
    knowledge_base_id: &str,
    chunks: &[(String, Option<Vec<f32>>)],
) -> Result<(), DbError> {
    for (i, (text, embedding)) in chunks.iter().enumerate() {
        sqlx::query(
            "INSERT INTO chunks (id, article_id, knowledge_base_id, ordinal, text, embedding) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(new_id())
        .bind(article_id)
        .bind(knowledge_base_id)
        .bind(i as i64)
        .bind(text)
        .bind(embedding.as_ref().map(super::to_json_text))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Every chunk with its article's metadata (the index is built from this).
pub async fn all_chunks(db: &Db) -> Result<Vec<ChunkRow>, DbError> {
    sqlx::query_as(
        "SELECT c.id, c.article_id, c.knowledge_base_id, b.agent_id, a.title, a.category, a.kind, a.source_url, c.text, \
         c.embedding, c.url, c.ordinal, CAST(CASE WHEN a.source_id IS NULL THEN 0 ELSE 1 END AS BIGINT) AS from_source \
         FROM chunks c JOIN articles a ON a.id = c.article_id JOIN knowledge_bases b ON b.id = a.knowledge_base_id \
         ORDER BY a.id, c.ordinal",
    )
    .fetch_all(&mut *db.read().await?)
    .await
}

/// A fingerprint of the knowledge (article count and last change), to notice edits made by
/// another server.
pub async fn version(db: &Db) -> Result<(i64, i64), DbError> {
    // Bases count too: their names, descriptions and topics are how the tools describe them; and
    // chunks given a vector in the background (they change the index, not the articles).
    let row: (i64, i64, i64, Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM articles), (SELECT COUNT(*) FROM knowledge_bases), \
         (SELECT COUNT(embedding) FROM chunks), (SELECT MAX(updated_at) FROM articles), \
         (SELECT MAX(updated_at) FROM knowledge_bases)",
    )
    .fetch_one(&mut *db.read().await?)
    .await?;
    Ok((row.0 + row.1 + row.2 * 1_000_000, row.3.unwrap_or(0).max(row.4.unwrap_or(0))))
}
