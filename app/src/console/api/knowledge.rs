//! Knowledge bases and their articles (administrators only). Writes go through the engine's
//! knowledge service, which re-chunks, embeds when configured, and rebuilds the search index.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{ArticleForm, ArticleItem, EmbeddingCounts, KnowledgeBaseItem, Page, Saved};

/// Every knowledge base, with its agent and how many articles it has.
#[server]
pub async fn knowledge_bases() -> Result<Vec<KnowledgeBaseItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let bases = parley_engine::store::knowledge::all_bases(state.engine.db()).await?;
    Ok(bases.into_iter().map(base_item).collect())
}

/// How many passages have their vector (filled in the background when an embeddings endpoint
/// is configured).
#[server]
pub async fn embedding_status() -> Result<EmbeddingCounts, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let p = state.engine.services().knowledge.embedding_progress().await.map_err(ConsoleError::internal)?;
    Ok(EmbeddingCounts {
        configured: p.configured,
        chunks: p.chunks,
        embedded: p.embedded,
        indexed: p.indexed,
        last_error: p.last_error,
    })
}

/// The most characters of a base's topics.
#[cfg(feature = "ssr")]
const TOPICS_MAX: usize = 2000;

/// A base's name, description and topics, checked and trimmed.
#[cfg(feature = "ssr")]
fn base_fields<'a>(
    name: &'a str,
    description: &'a str,
    topics: &'a str,
) -> Result<parley_engine::store::knowledge::BaseFields<'a>, ConsoleError> {
    let name = super::checks::name(name)?;
    if description.chars().count() > 500 {
        return Err(ConsoleError::invalid("description", "The description has at most 500 characters."));
    }
    if topics.chars().count() > TOPICS_MAX {
        return Err(ConsoleError::invalid("topics", "The topics have at most 2,000 characters."));
    }
    Ok(parley_engine::store::knowledge::BaseFields { name, description: description.trim(), topics: topics.trim() })
}

/// Creates a knowledge base of an agent; the answer is its id.
#[server]
pub async fn create_knowledge_base(
    agent_id: String,
    name: String,
    description: String,
    topics: String,
) -> Result<String, ConsoleError> {
    use parley_engine::store::knowledge;
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let fields = base_fields(&name, &description, &topics)?;
    super::checks::agent(db, &agent_id).await?;
    let base = knowledge::create_base(db, &agent_id, &fields, state.engine.now_ms()).await?;
    // The agent's tools are described from its bases.
    state.engine.services().knowledge.reload().await.map_err(ConsoleError::internal)?;
    Ok(base.id)
}

/// One knowledge base, for its page.
#[server]
pub async fn knowledge_base(id: String) -> Result<KnowledgeBaseItem, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let b = parley_engine::store::knowledge::base_summary(state.engine.db(), &id).await?;
    b.map(base_item).ok_or(ConsoleError::NotFound)
}

/// A base as the console shows it.
#[cfg(feature = "ssr")]
fn base_item(b: parley_engine::store::knowledge::BaseSummary) -> KnowledgeBaseItem {
    KnowledgeBaseItem {
        id: b.id,
        agent_id: b.agent_id,
        agent_name: b.agent_name,
        name: b.name,
        description: b.description,
        topics: b.topics,
        articles: b.articles,
    }
}

/// Renames a knowledge base or changes its description and topics (what the knowledge tools
/// tell the model about it, and what the off-topic check counts as on-topic).
#[server]
pub async fn update_knowledge_base(
    id: String,
    name: String,
    description: String,
    topics: String,
) -> Result<(), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let fields = base_fields(&name, &description, &topics)?;
    let db = state.engine.db();
    if !parley_engine::store::knowledge::update_base(db, &id, &fields, state.engine.now_ms()).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.services().knowledge.reload().await.map_err(ConsoleError::internal)?;
    Ok(())
}

/// The articles of a knowledge base a page at a time; `search` filters (empty: all).
#[server]
pub async fn articles(knowledge_base_id: String, search: String, page: i64) -> Result<Page<ArticleItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let paging = super::paging::Paging::new(page);
    let search = Some(search.trim()).filter(|s| !s.is_empty());
    let (rows, total) = parley_engine::store::knowledge::articles(
        state.engine.db(),
        &knowledge_base_id,
        search,
        paging.offset(),
        paging.limit(),
    )
    .await?;
    let items = rows
        .into_iter()
        .map(|a| ArticleItem { id: a.id, title: a.title, category: a.category, kind: a.kind, updated_at: a.updated_at })
        .collect();
    Ok(paging.of(items, total))
}

/// An article as the editor shows it.
#[server]
pub async fn article(id: String) -> Result<ArticleForm, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let a = parley_engine::store::knowledge::article(state.engine.db(), &id).await?.ok_or(ConsoleError::NotFound)?;
    Ok(ArticleForm {
        id: Some(a.id),
        knowledge_base_id: a.knowledge_base_id,
        title: a.title,
        category: a.category.unwrap_or_default(),
        kind: a.kind,
        body: a.body,
        source_url: a.source_url.unwrap_or_default(),
    })
}

/// What is wrong with an article, by field.
#[cfg(feature = "ssr")]
pub fn validate_article(form: &ArticleForm) -> Vec<crate::console::types::FieldError> {
    use crate::console::types::FieldError;
    let mut errors = Vec::new();
    let mut push =
        |field: &str, message: &str| errors.push(FieldError { field: field.into(), message: message.into() });
    if form.title.trim().is_empty() || form.title.chars().count() > 200 {
        push("title", "A title of 1 to 200 characters.");
    }
    if form.category.chars().count() > 40 {
        push("category", "At most 40 characters.");
    }
    if !matches!(form.kind.as_str(), "article" | "experience") {
        push("kind", "article or experience.");
    }
    if form.body.trim().is_empty() {
        push("body", "The article is empty.");
    } else if form.body.len() > 200_000 {
        push("body", "At most 200 KB of text.");
    }
    let url = form.source_url.trim();
    if !url.is_empty() && url::Url::parse(url).map(|u| !matches!(u.scheme(), "http" | "https")).unwrap_or(true) {
        push("source_url", "An http(s) URL, or nothing.");
    }
    errors
}

#[cfg(feature = "ssr")]
fn to_new(form: &ArticleForm) -> parley_engine::store::knowledge::NewArticle {
    let optional = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    parley_engine::store::knowledge::NewArticle {
        title: form.title.trim().into(),
        category: optional(&form.category),
        kind: form.kind.clone(),
        body: form.body.clone(),
        source_url: optional(&form.source_url),
    }
}

/// An error unless the knowledge base exists.
#[cfg(feature = "ssr")]
pub(super) async fn known_base(db: &parley_engine::store::Db, id: &str) -> Result<(), ConsoleError> {
    match parley_engine::store::knowledge::base(db, id).await? {
        Some(_) => Ok(()),
        None => Err(ConsoleError::invalid("knowledge_base_id", "Unknown knowledge base.")),
    }
}

/// Creates (no id) or rewrites an article.
#[server(input = Json)]
pub async fn save_article(form: ArticleForm) -> Result<Saved, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let errors = validate_article(&form);
    if !errors.is_empty() {
        return Ok(Saved { id: None, errors });
    }
    let k = &state.engine.services().knowledge;
    let now = state.engine.now_ms();
    let id = match &form.id {
        Some(id) => {
            if !k.update_article(id, &to_new(&form), now).await.map_err(ConsoleError::internal)? {
                return Err(ConsoleError::NotFound);
            }
            id.clone()
        }
        None => {
            known_base(state.engine.db(), &form.knowledge_base_id).await?;
            k.add_articles(&form.knowledge_base_id, &[to_new(&form)], now)
                .await
                .map_err(ConsoleError::internal)?
                .remove(0)
        }
    };
    Ok(Saved { id: Some(id), errors: vec![] })
}

/// Deletes an article (and its chunks from the index).
#[server]
pub async fn delete_article(id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let done = state.engine.services().knowledge.delete_article(&id).await.map_err(ConsoleError::internal)?;
    if done { Ok(()) } else { Err(ConsoleError::NotFound) }
}

/// Imports one markdown file (front matter: title, category, kind, source_url); the page calls
/// this once per file and shows the progress.
#[server]
pub async fn import_article(
    knowledge_base_id: String,
    file_name: String,
    text: String,
) -> Result<String, ConsoleError> {
    use parley_engine::store::knowledge;
    let AdminUser { state, .. } = AdminUser::extract().await?;
    known_base(state.engine.db(), &knowledge_base_id).await?;
    let article =
        knowledge::parse_markdown(&text).map_err(|why| ConsoleError::invalid("file", format!("{file_name}: {why}")))?;
    let form = ArticleForm {
        id: None,
        knowledge_base_id: knowledge_base_id.clone(),
        title: article.title.clone(),
        category: article.category.clone().unwrap_or_default(),
        kind: article.kind.clone(),
        body: article.body.clone(),
        source_url: article.source_url.clone().unwrap_or_default(),
    };
    if let Some(bad) = validate_article(&form).first() {
        return Err(ConsoleError::invalid("file", format!("{file_name}: {} — {}", bad.field, bad.message)));
    }
    let mut ids = state
        .engine
        .services()
        .knowledge
        .add_articles(&knowledge_base_id, &[article], state.engine.now_ms())
        .await
        .map_err(ConsoleError::internal)?;
    Ok(ids.remove(0))
}
