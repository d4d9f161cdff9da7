//! A knowledge base's sources (issue 42, administrators only): websites crawled on demand and on
//! a schedule, uploaded files and typed snippets. The engine does the work (checks, runs,
//! indexing); these functions check who asks, translate the forms and say what happened.

use leptos::prelude::*;
use leptos::server_fn::codec::{Json, MultipartData, MultipartFormData};

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{FileOutcome, Page, PageItem, PassageItem, RunItem, SourceItem, WebsiteForm};

/// How many runs a source's history shows.
#[cfg(feature = "ssr")]
const HISTORY: i64 = 10;

/// The most files one upload request carries (the page sends one at a time).
#[cfg(feature = "ssr")]
const FILES_PER_REQUEST: usize = 10;

#[cfg(feature = "ssr")]
use parley_engine::engine::sources::SourceError;
#[cfg(feature = "ssr")]
use parley_engine::store::knowledge::sources as store;

/// What the console answers when the engine refused or failed.
#[cfg(feature = "ssr")]
fn refused(e: SourceError) -> ConsoleError {
    match e {
        SourceError::Invalid(fields) => ConsoleError::Invalid(fields),
        SourceError::NotFound => ConsoleError::NotFound,
        SourceError::Db(e) => e.into(),
        SourceError::Index(e) => ConsoleError::internal(e),
    }
}

#[cfg(feature = "ssr")]
fn run_item(r: store::Run) -> RunItem {
    RunItem {
        id: r.id,
        source_id: r.source_id,
        state: r.state,
        reason: r.reason,
        current_url: r.current_url,
        found: r.found,
        fetched: r.fetched,
        indexed: r.indexed,
        unchanged: r.unchanged,
        skipped: r.skipped,
        failed: r.failed,
        retired: r.retired,
        started_at: r.started_at,
        finished_at: r.finished_at,
    }
}

/// The source's active run, else its latest.
#[cfg(feature = "ssr")]
async fn latest_run(db: &parley_engine::store::Db, source_id: &str) -> Result<Option<RunItem>, ConsoleError> {
    let run = match store::active_run(db, source_id).await? {
        Some(run) => Some(run),
        None => store::runs(db, source_id, 1).await?.pop(),
    };
    Ok(run.map(run_item))
}

/// A source with its page counts and latest run.
#[cfg(feature = "ssr")]
async fn source_item(db: &parley_engine::store::Db, s: store::Source) -> Result<SourceItem, ConsoleError> {
    Ok(SourceItem {
        counts: store::page_counts(db, &s.id).await?,
        last_run: latest_run(db, &s.id).await?,
        kind: s.kind.as_str().to_owned(),
        start_url: s.site.start_url,
        path_prefix: s.site.path_prefix,
        include: s.site.include,
        exclude: s.site.exclude,
        page_limit: s.site.page_limit,
        id: s.id,
        knowledge_base_id: s.knowledge_base_id,
        name: s.name,
        schedule: s.schedule,
        next_sync_at: s.next_sync_at,
    })
}

/// The sources of a knowledge base, oldest first.
#[server]
pub async fn sources(knowledge_base_id: String) -> Result<Vec<SourceItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let mut items = Vec::new();
    for s in store::of_base(db, &knowledge_base_id).await? {
        items.push(source_item(db, s).await?);
    }
    Ok(items)
}

/// One source, for its page.
#[server]
pub async fn source(id: String) -> Result<SourceItem, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let s = store::get(db, &id).await?.ok_or(ConsoleError::NotFound)?;
    source_item(db, s).await
}

/// The source's active run, else its latest (the progress bar asks every second while it runs).
#[server]
pub async fn source_run(source_id: String) -> Result<Option<RunItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    latest_run(state.engine.db(), &source_id).await
}

/// The source's latest runs, newest first.
#[server]
pub async fn source_runs(source_id: String) -> Result<Vec<RunItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    Ok(store::runs(state.engine.db(), &source_id, HISTORY).await?.into_iter().map(run_item).collect())
}

/// A website form as the engine takes it: patterns one per line, the page limit a number.
#[cfg(feature = "ssr")]
fn website_input(form: &WebsiteForm) -> Result<parley_engine::engine::sources::WebsiteInput, ConsoleError> {
    let lines = |text: &str| text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect();
    let limit = form.page_limit.trim();
    let page_limit = if limit.is_empty() {
        0
    } else {
        limit.parse().map_err(|_| ConsoleError::invalid("page_limit", "A whole number of pages (0: the default)."))?
    };
    Ok(parley_engine::engine::sources::WebsiteInput {
        name: form.name.clone(),
        schedule: form.schedule.clone(),
        site: store::SiteSettings {
            start_url: form.start_url.clone(),
            path_prefix: form.path_prefix.clone(),
            include: lines(&form.include),
            exclude: lines(&form.exclude),
            page_limit,
        },
    })
}

/// Adds a website source to a base and queues its first run; the answer is the source's id.
#[server(input = Json)]
pub async fn add_website(knowledge_base_id: String, form: WebsiteForm) -> Result<String, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    super::knowledge::known_base(state.engine.db(), &knowledge_base_id).await?;
    let input = website_input(&form)?;
    let source = state.engine.create_website(&knowledge_base_id, &input).await.map_err(refused)?;
    Ok(source.id)
}

/// Changes a website source's name, scope and schedule (the next run uses them).
#[server(input = Json)]
pub async fn update_website(id: String, form: WebsiteForm) -> Result<(), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let input = website_input(&form)?;
    state.engine.update_website(&id, &input).await.map_err(refused)
}

/// Queues a run of a website source now (or answers the one already under way).
#[server]
pub async fn sync_source(id: String) -> Result<RunItem, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    state.engine.sync_source(&id).await.map(run_item).map_err(refused)
}

/// Cancels the source's queued or running run (it stops at its next report).
#[server]
pub async fn cancel_run(source_id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    if store::cancel(state.engine.db(), &source_id, state.engine.now_ms()).await? {
        Ok(())
    } else {
        Err(ConsoleError::Conflict("No run of this source is under way.".into()))
    }
}

/// Deletes a source with its pages, runs and passages.
#[server]
pub async fn delete_source(id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    state.engine.delete_source(&id).await.map_err(refused)
}

/// The pages of a source a page at a time, by URL; `status` filters (empty: all).
#[server]
pub async fn source_pages(source_id: String, status: String, page: i64) -> Result<Page<PageItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let paging = super::paging::Paging::new(page);
    let status = super::paging::filter(Some(status));
    let (rows, total) =
        store::pages(state.engine.db(), &source_id, status.as_deref(), paging.offset(), paging.limit()).await?;
    let items = rows
        .into_iter()
        .map(|p| PageItem {
            indexed: p.article_id.is_some(),
            id: p.id,
            url: p.url,
            title: p.title,
            status: p.status,
            reason: p.reason,
            lang: p.lang,
            fetched_at: p.fetched_at,
        })
        .collect();
    Ok(paging.of(items, total))
}

/// A page's passages as the index holds them (what the agent reads), in order.
#[server]
pub async fn page_passages(page_id: String) -> Result<Vec<PassageItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let page = store::page(db, &page_id).await?.ok_or(ConsoleError::NotFound)?;
    let Some(article) = page.article_id else { return Ok(vec![]) };
    let passages = store::passages_of(db, &article).await?;
    Ok(passages.into_iter().map(|(text, url)| PassageItem { text, url }).collect())
}

/// Takes a page out of the index and keeps it out of later runs.
#[server]
pub async fn exclude_page(page_id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    state.engine.exclude_page(&page_id).await.map_err(refused)
}

/// Lets an excluded page be crawled again on the next run.
#[server]
pub async fn include_page(page_id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    if store::include_again(state.engine.db(), &page_id, state.engine.now_ms()).await? {
        Ok(())
    } else {
        Err(ConsoleError::Conflict("This page is not excluded.".into()))
    }
}

/// Deletes an uploaded file or a snippet with its passages (a website's pages are excluded
/// instead: a deleted one would come back on the next run).
#[server]
pub async fn delete_page(page_id: String) -> Result<(), ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let page = store::page(db, &page_id).await?.ok_or(ConsoleError::NotFound)?;
    let source = store::get(db, &page.source_id).await?.ok_or(ConsoleError::NotFound)?;
    if source.kind == store::SourceKind::Website {
        return Err(ConsoleError::Conflict("A website's page is excluded, not deleted.".into()));
    }
    store::delete_page(db, &page_id).await?;
    state.engine.reload_knowledge().await.map_err(refused)
}

/// Adds a question and its answer to the base (its Snippets source), indexed at once.
#[server]
pub async fn add_snippet(knowledge_base_id: String, question: String, answer: String) -> Result<String, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    super::knowledge::known_base(state.engine.db(), &knowledge_base_id).await?;
    state.engine.add_snippet(&knowledge_base_id, &question, &answer).await.map_err(refused)
}

/// An upload the server could not read.
#[cfg(feature = "ssr")]
fn unreadable(e: impl std::fmt::Display) -> ConsoleError {
    ConsoleError::Call(format!("unreadable upload: {e}"))
}

/// Indexes uploaded files into the base's Files source. The form has `knowledge_base_id` and
/// one or more `file` parts (the page sends one file per request); each file is indexed or
/// refused alone, with a message naming it. A file over the console's limit is refused unread.
#[server(input = MultipartFormData)]
pub async fn upload_files(data: MultipartData) -> Result<Vec<FileOutcome>, ConsoleError> {
    use crate::console::types::UPLOAD_MAX_BYTES;
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let Some(mut form) = data.into_inner() else { return Err(ConsoleError::Call("no form data".into())) };
    let (mut base, mut files, mut too_big) = (None, Vec::new(), Vec::new());
    while let Some(mut field) = form.next_field().await.map_err(unreadable)? {
        match field.name() {
            Some("knowledge_base_id") => base = Some(field.text().await.map_err(unreadable)?),
            Some("file") => {
                if files.len() + too_big.len() >= FILES_PER_REQUEST {
                    return Err(ConsoleError::invalid("file", format!("At most {FILES_PER_REQUEST} files at once.")));
                }
                let name = field.file_name().unwrap_or("file").to_owned();
                let mut bytes = Vec::new();
                while let Some(chunk) = field.chunk().await.map_err(unreadable)? {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > UPLOAD_MAX_BYTES {
                        break;
                    }
                }
                if bytes.len() > UPLOAD_MAX_BYTES {
                    too_big.push(name);
                } else {
                    files.push((name, bytes));
                }
            }
            _ => {}
        }
    }
    let base = base.ok_or_else(|| ConsoleError::invalid("knowledge_base_id", "Unknown knowledge base."))?;
    super::knowledge::known_base(state.engine.db(), &base).await?;
    let mut outcomes: Vec<FileOutcome> = too_big
        .into_iter()
        .map(|name| FileOutcome {
            error: Some(format!("{name}: larger than the limit of {} MiB", UPLOAD_MAX_BYTES / (1024 * 1024))),
            name,
            title: None,
            passages: 0,
        })
        .collect();
    if !files.is_empty() {
        let results = state.engine.import_files(&base, &files).await.map_err(refused)?;
        outcomes.extend(results.into_iter().map(|r| FileOutcome {
            name: r.name,
            title: r.title,
            passages: r.passages,
            error: r.error,
        }));
    }
    Ok(outcomes)
}
