//! Knowledge retrieval: a tantivy full-text index (BM25) over the chunks of every knowledge base,
//! with a tokenizer that handles Chinese (character bigrams) and English; blended with vector
//! similarity when an embeddings endpoint is configured. The index lives in memory and is rebuilt
//! from the database when articles change (also when another server changed them).

pub mod backfill;
pub mod embeddings;
mod index;
pub mod tokenizer;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use crate::store::knowledge::{self, ChunkRow, KnowledgeBase, NewArticle};
use crate::store::{Db, DbError};
use embeddings::{Embedder, cosine};
pub use index::rank;
use index::{Built, build, full_text};

/// One retrieved passage.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Hit {
    pub article_id: String,
    pub knowledge_base_id: String,
    pub title: String,
    pub category: Option<String>,
    pub kind: String,
    pub source_url: Option<String>,
    pub text: String,
    /// 0..1, higher is better (relative to the best hit of the query): for ranking.
    pub score: f32,
    /// How similar the passage is to the query, 0..1, comparable across queries (not relative to
    /// the best hit): the cosine of their embeddings when an embeddings endpoint is configured,
    /// else the share of the query's distinct terms that the passage (title and text) contains.
    pub similarity: f32,
    /// The full-text score itself (BM25; 0 when only vectors matched): comparable across queries.
    pub bm25: f32,
}

/// What to search.
#[derive(Clone, Debug, Default)]
pub struct SearchQuery<'a> {
    pub agent_id: &'a str,
    /// Only these knowledge bases (all of the agent's when `None`).
    pub knowledge_base_ids: Option<&'a [String]>,
    pub text: &'a str,
    pub category: Option<&'a str>,
    /// `article` or `experience`.
    pub kind: Option<&'a str>,
    pub limit: usize,
}

/// What an agent's knowledge is about, from its knowledge bases: how the knowledge tools are
/// described to the model, which categories a search can be limited to, and which words make a
/// question on-topic. Nothing in it is particular to one field: the immigration agent's scope
/// comes from its base like any other.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    /// `(name, description)` of each of the agent's bases.
    pub bases: Vec<(String, String)>,
    /// The categories of the agent's articles, sorted.
    pub categories: Vec<String>,
    /// Lower-cased words and phrases that make a question on-topic: the bases' topics and the
    /// categories.
    pub topics: Vec<String>,
}

impl Scope {
    /// The scopes of every agent with a knowledge base.
    fn of_all(bases: &[KnowledgeBase], chunks: &HashMap<String, ChunkRow>) -> HashMap<String, Arc<Scope>> {
        let mut scopes: HashMap<String, Scope> = HashMap::new();
        for b in bases {
            let scope = scopes.entry(b.agent_id.clone()).or_default();
            scope.bases.push((b.name.clone(), b.description.clone()));
            scope.topics.extend(knowledge::topic_list(&b.topics).into_iter().map(|t| t.to_lowercase()));
        }
        for row in chunks.values().filter(|r| r.kind == "article") {
            if let (Some(category), Some(scope)) = (row.category.as_deref(), scopes.get_mut(&row.agent_id))
                && !category.trim().is_empty()
                && !scope.categories.iter().any(|c| c == category)
            {
                scope.categories.push(category.to_owned());
            }
        }
        scopes
            .into_iter()
            .map(|(agent, mut scope)| {
                scope.categories.sort();
                scope.topics.extend(scope.categories.iter().map(|c| c.to_lowercase()));
                scope.topics.sort();
                scope.topics.dedup();
                (agent, Arc::new(scope))
            })
            .collect()
    }

    /// The bases' names, joined for a sentence.
    pub fn names(&self, separator: &str) -> String {
        self.bases.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(separator)
    }

    /// The category as the knowledge spells it, when it is one of them (any case).
    pub fn category<'a>(&'a self, asked: &str) -> Option<&'a str> {
        self.categories.iter().find(|c| c.eq_ignore_ascii_case(asked.trim())).map(String::as_str)
    }
}

/// The search index and the way to add knowledge; cheap to clone.
#[derive(Clone)]
pub struct Knowledge {
    db: Db,
    embedder: Option<Embedder>,
    built: Arc<RwLock<Option<Arc<Built>>>>,
    /// A background embedding run is under way ([`Knowledge::embed_missing`]).
    backfilling: Arc<std::sync::atomic::AtomicBool>,
    /// Why the last background embedding run stopped, if it failed.
    last_embed_error: Arc<std::sync::Mutex<Option<String>>>,
}

impl std::fmt::Debug for Knowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Knowledge").field("embeddings", &self.embedder.is_some()).finish()
    }
}

/// Why a search failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("search index: {0}")]
    Index(String),
}

impl From<tantivy::TantivyError> for SearchError {
    fn from(e: tantivy::TantivyError) -> Self {
        SearchError::Index(e.to_string())
    }
}

impl Knowledge {
    pub fn new(db: Db, embedder: Option<Embedder>) -> Self {
        Knowledge {
            db,
            embedder,
            built: Arc::new(RwLock::new(None)),
            backfilling: Arc::default(),
            last_embed_error: Arc::default(),
        }
    }

    pub fn has_embeddings(&self) -> bool {
        self.embedder.is_some()
    }

    /// The texts' embeddings, one per text; `None` when embeddings are off or the endpoint failed
    /// (logged), so callers fall back to words.
    pub async fn embed_texts(&self, texts: &[String]) -> Option<Vec<Vec<f32>>> {
        let e = self.embedder.as_ref()?;
        match e.embed(texts).await {
            Ok(v) => Some(v),
            Err(err) => {
                tracing::warn!(error = %err, "grouping without embeddings");
                None
            }
        }
    }

    /// Rebuilds the index from the database.
    pub async fn reload(&self) -> Result<(), SearchError> {
        let version = knowledge::version(&self.db).await?;
        let rows = knowledge::all_chunks(&self.db).await?;
        let bases = knowledge::every_base(&self.db).await?;
        let mut built = tokio::task::spawn_blocking(move || build(rows, version))
            .await
            .map_err(|e| SearchError::Index(e.to_string()))??;
        built.scopes = Scope::of_all(&bases, &built.chunks);
        if let Ok(mut slot) = self.built.write() {
            *slot = Some(Arc::new(built));
        }
        Ok(())
    }

    /// Rebuilds when the stored knowledge changed since the last build (cheap check).
    pub async fn refresh_if_changed(&self) -> Result<bool, SearchError> {
        let version = knowledge::version(&self.db).await?;
        let current = self.built.read().ok().and_then(|b| b.as_ref().map(|b| b.version));
        if current == Some(version) {
            return Ok(false);
        }
        self.reload().await?;
        Ok(true)
    }

    /// Stores articles (split into chunks, with embeddings when configured), then rebuilds.
    pub async fn add_articles(
        &self,
        knowledge_base_id: &str,
        articles: &[NewArticle],
        now: i64,
    ) -> Result<Vec<String>, SearchError> {
        let mut ids = Vec::with_capacity(articles.len());
        for article in articles {
            let chunks = self.chunks_of(article).await;
            ids.push(knowledge::insert_article(&self.db, knowledge_base_id, article, &chunks, now).await?);
        }
        self.reload().await?;
        Ok(ids)
    }

    /// Rewrites an article (chunks and embeddings again), then rebuilds; `false` if unknown.
    pub async fn update_article(&self, id: &str, article: &NewArticle, now: i64) -> Result<bool, SearchError> {
        let chunks = self.chunks_of(article).await;
        let done = knowledge::update_article(&self.db, id, article, &chunks, now).await?;
        if done {
            self.reload().await?;
        }
        Ok(done)
    }

    /// Deletes an article and its chunks, then rebuilds; `false` if unknown.
    pub async fn delete_article(&self, id: &str) -> Result<bool, SearchError> {
        let done = knowledge::delete_article(&self.db, id).await?;
        if done {
            self.reload().await?;
        }
        Ok(done)
    }

    /// The article's chunks, with embeddings when an embedder is configured and answers.
    async fn chunks_of(&self, article: &NewArticle) -> Vec<(String, Option<Vec<f32>>)> {
        let pieces = knowledge::split(&article.body);
        let vectors = match &self.embedder {
            Some(e) => {
                let inputs: Vec<String> = pieces.iter().map(|p| format!("{}\n{p}", article.title)).collect();
                match e.embed(&inputs).await {
                    Ok(v) => v.into_iter().map(Some).collect(),
                    Err(err) => {
                        tracing::warn!(error = %err, "storing the article without embeddings");
                        vec![None; pieces.len()]
                    }
                }
            }
            None => vec![None; pieces.len()],
        };
        pieces.into_iter().zip(vectors).collect()
    }

    fn snapshot(&self) -> Option<Arc<Built>> {
        self.built.read().ok().and_then(|b| b.clone())
    }

    /// What the agent's knowledge is about (empty for an agent without a base).
    pub async fn scope(&self, agent_id: &str) -> Result<Arc<Scope>, SearchError> {
        if self.snapshot().is_none() {
            self.reload().await?;
        }
        let built = self.snapshot().ok_or_else(|| SearchError::Index("index unavailable".into()))?;
        Ok(built.scopes.get(agent_id).cloned().unwrap_or_default())
    }

    /// Full-text search (blended with vectors when configured), best first.
    pub async fn search(&self, q: &SearchQuery<'_>) -> Result<Vec<Hit>, SearchError> {
        if self.snapshot().is_none() {
            self.reload().await?;
        }
        let built = self.snapshot().ok_or_else(|| SearchError::Index("index unavailable".into()))?;
        let query_vector = match &self.embedder {
            Some(e) if !built.vectors.is_empty() => match e.embed(&[q.text.to_owned()]).await {
                Ok(mut v) => v.pop(),
                Err(err) => {
                    tracing::warn!(error = %err, "searching without embeddings");
                    None
                }
            },
            _ => None,
        };
        let bm25 = full_text(&built, q)?;
        Ok(blend(&built, q, bm25, query_vector.as_deref()))
    }
}

/// The share of the query's distinct terms (words; CJK bigrams) that a passage contains, 0..1.
pub fn coverage(query: &str, passage: &str) -> f64 {
    let terms = |t: &str| tokenizer::terms(t).into_iter().map(|t| t.text).collect::<HashSet<_>>();
    let asked = terms(query);
    if asked.is_empty() {
        return 0.0;
    }
    asked.intersection(&terms(passage)).count() as f64 / asked.len() as f64
}

/// Combines full-text and vector scores; one hit per article (its best chunk).
fn blend(built: &Built, q: &SearchQuery<'_>, bm25: Vec<(String, f32)>, query_vector: Option<&[f32]>) -> Vec<Hit> {
    let max = bm25.iter().map(|(_, s)| *s).fold(0.0f32, f32::max);
    let raw: HashMap<String, f32> = bm25.iter().cloned().collect();
    let mut scores: HashMap<String, f32> =
        bm25.into_iter().map(|(id, s)| (id, if max > 0.0 { s / max } else { 0.0 })).collect();
    if let Some(qv) = query_vector {
        let passes = |row: &ChunkRow| {
            row.agent_id == q.agent_id
                && q.knowledge_base_ids.is_none_or(|b| b.contains(&row.knowledge_base_id))
                && q.category.is_none_or(|c| row.category.as_deref() == Some(c))
                && q.kind.is_none_or(|k| row.kind == k)
        };
        let mut blended: HashMap<String, f32> = HashMap::new();
        for (id, v) in &built.vectors {
            let Some(row) = built.chunks.get(id) else { continue };
            if !passes(row) {
                continue;
            }
            let text = scores.get(id).copied().unwrap_or(0.0);
            let vector = cosine(qv, v).max(0.0);
            let score = 0.5 * text + 0.5 * vector;
            if score > 0.05 {
                blended.insert(id.clone(), score);
            }
        }
        // Chunks without a vector keep half their text score.
        for (id, s) in &scores {
            blended.entry(id.clone()).or_insert(0.5 * s);
        }
        scores = blended;
    }
    let mut ranked: Vec<(String, f32)> = scores.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut seen_articles = HashSet::new();
    let mut hits = Vec::new();
    for (id, score) in ranked {
        let Some(row) = built.chunks.get(&id) else { continue };
        if !seen_articles.insert(row.article_id.clone()) {
            continue;
        }
        let vector = query_vector.zip(built.vectors.get(&id));
        let similarity = match vector {
            Some((qv, v)) => cosine(qv, v).clamp(0.0, 1.0),
            None => coverage(q.text, &format!("{} {}", row.title, row.text)) as f32,
        };
        hits.push(Hit {
            article_id: row.article_id.clone(),
            knowledge_base_id: row.knowledge_base_id.clone(),
            title: row.title.clone(),
            category: row.category.clone(),
            kind: row.kind.clone(),
            source_url: row.url.clone().or_else(|| row.source_url.clone()),
            text: row.text.clone(),
            score: (score * 100.0).round() / 100.0,
            similarity: (similarity * 100.0).round() / 100.0,
            bm25: raw.get(&id).copied().unwrap_or(0.0),
        });
        if hits.len() >= q.limit.max(1) {
            break;
        }
    }
    hits
}
