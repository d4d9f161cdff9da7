//! A knowledge base's sources (issue 42): a website crawled on a schedule, uploaded files, typed
//! question-and-answer snippets. Each source holds pages (one per URL or file, with the state of
//! its last fetch) and runs (one crawl or import each, with the counts its progress bar shows).
//! A page's passages are the chunks of one article (`articles.source_id` names the source).

use super::super::{Db, DbError, from_json_text, new_id, to_json_text};

/// A website source's start and scope, stored as the source's `settings` JSON.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SiteSettings {
    /// Where the crawl starts: a page, or a sitemap (`….xml`, `….xml.gz`).
    pub start_url: String,
    /// Only URLs whose path starts with this (empty: the whole host).
    pub path_prefix: String,
    /// Only URLs whose path (and query) matches one of these patterns (`*` any text); empty: all.
    pub include: Vec<String>,
    /// Never URLs whose path matches one of these.
    pub exclude: Vec<String>,
    /// The most pages one run keeps (queued, fetched or skipped).
    pub page_limit: u32,
}

/// What a source is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    Website,
    Files,
    Snippets,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Website => "website",
            SourceKind::Files => "files",
            SourceKind::Snippets => "snippets",
        }
    }

    pub fn parse(text: &str) -> Option<SourceKind> {
        match text {
            "website" => Some(SourceKind::Website),
            "files" => Some(SourceKind::Files),
            "snippets" => Some(SourceKind::Snippets),
            _ => None,
        }
    }
}

/// How often a source syncs by itself.
pub const SCHEDULES: &[&str] = &["off", "daily", "weekly"];

/// Milliseconds between two scheduled runs (`None`: off).
pub fn schedule_every_ms(schedule: &str) -> Option<i64> {
    match schedule {
        "daily" => Some(86_400_000),
        "weekly" => Some(7 * 86_400_000),
        _ => None,
    }
}

crate::store::row_struct! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct SourceRow {
        pub id: String,
        pub knowledge_base_id: String,
        pub kind: String,
        pub name: String,
        pub settings: String,
        pub schedule: String,
        pub next_sync_at: Option<i64>,
        pub created_at: i64,
    }
}

/// A source as the engine uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub id: String,
    pub knowledge_base_id: String,
    pub kind: SourceKind,
    pub name: String,
    pub site: SiteSettings,
    pub schedule: String,
    pub next_sync_at: Option<i64>,
    pub created_at: i64,
}

impl From<SourceRow> for Source {
    fn from(r: SourceRow) -> Source {
        Source {
            kind: SourceKind::parse(&r.kind).unwrap_or(SourceKind::Files),
            site: from_json_text(&r.settings),
            id: r.id,
            knowledge_base_id: r.knowledge_base_id,
            name: r.name,
            schedule: r.schedule,
            next_sync_at: r.next_sync_at,
            created_at: r.created_at,
        }
    }
}

const SOURCE_COLUMNS: &str = "id, knowledge_base_id, kind, name, settings, schedule, next_sync_at, created_at";

/// A new source; a scheduled one is first due one period from now.
pub async fn create(
    db: &Db,
    knowledge_base_id: &str,
    kind: SourceKind,
    name: &str,
    site: &SiteSettings,
    schedule: &str,
    now: i64,
) -> Result<Source, DbError> {
    let id = new_id();
    let next = schedule_every_ms(schedule).map(|every| now + every);
    sqlx::query(
        "INSERT INTO knowledge_sources (id, knowledge_base_id, kind, name, settings, schedule, next_sync_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
    )
    .bind(&id)
    .bind(knowledge_base_id)
    .bind(kind.as_str())
    .bind(name)
    .bind(to_json_text(site))
    .bind(schedule)
    .bind(next)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(Source {
        id,
        knowledge_base_id: knowledge_base_id.into(),
        kind,
        name: name.into(),
        site: site.clone(),
        schedule: schedule.into(),
        next_sync_at: next,
        created_at: now,
    })
}

/// Changes a website source's name, scope and schedule; `false` if there is no such website.
pub async fn update(
    db: &Db,
    id: &str,
    name: &str,
    site: &SiteSettings,
    schedule: &str,
    now: i64,
) -> Result<bool, DbError> {
    let next = schedule_every_ms(schedule).map(|every| now + every);
    let done = sqlx::query(
        "UPDATE knowledge_sources SET name = $2, settings = $3, schedule = $4, next_sync_at = $5, updated_at = $6 \
         WHERE id = $1 AND kind = 'website'",
    )
    .bind(id)
    .bind(name)
    .bind(to_json_text(site))
    .bind(schedule)
    .bind(next)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn get(db: &Db, id: &str) -> Result<Option<Source>, DbError> {
    let row: Option<SourceRow> =
        sqlx::query_as(&format!("SELECT {SOURCE_COLUMNS} FROM knowledge_sources WHERE id = $1"))
            .bind(id)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    Ok(row.map(Source::from))
}

pub async fn of_base(db: &Db, knowledge_base_id: &str) -> Result<Vec<Source>, DbError> {
    let rows: Vec<SourceRow> = sqlx::query_as(&format!(
        "SELECT {SOURCE_COLUMNS} FROM knowledge_sources WHERE knowledge_base_id = $1 ORDER BY created_at, id"
    ))
    .bind(knowledge_base_id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.into_iter().map(Source::from).collect())
}

/// The base's source of this kind (files, snippets: one each), made when missing.
pub async fn one_of_kind(
    db: &Db,
    knowledge_base_id: &str,
    kind: SourceKind,
    name: &str,
    now: i64,
) -> Result<Source, DbError> {
    if let Some(found) = of_base(db, knowledge_base_id).await?.into_iter().find(|s| s.kind == kind) {
        return Ok(found);
    }
    create(db, knowledge_base_id, kind, name, &SiteSettings::default(), "off", now).await
}

/// Deletes a source, its pages, runs, articles and their passages in one transaction.
pub async fn delete(db: &Db, id: &str) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query("DELETE FROM chunks WHERE article_id IN (SELECT id FROM articles WHERE source_id = $1)")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM articles WHERE source_id = $1").bind(id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM source_pages WHERE source_id = $1").bind(id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM source_runs WHERE source_id = $1").bind(id).execute(&mut *tx).await?;
    let done = sqlx::query("DELETE FROM knowledge_sources WHERE id = $1").bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(done.rows_affected() == 1)
}

/// Claims the scheduled run of a source that is due: moves its `next_sync_at` on, true for the
/// one process that did.
pub async fn claim_due(db: &Db, id: &str, due: i64, next: i64) -> Result<bool, DbError> {
    let moved = sqlx::query("UPDATE knowledge_sources SET next_sync_at = $3 WHERE id = $1 AND next_sync_at = $2")
        .bind(id)
        .bind(due)
        .bind(next)
        .execute(db.writer())
        .await?;
    Ok(moved.rows_affected() == 1)
}

/// Sources whose scheduled sync is due.
pub async fn due(db: &Db, now: i64) -> Result<Vec<Source>, DbError> {
    let rows: Vec<SourceRow> = sqlx::query_as(&format!(
        "SELECT {SOURCE_COLUMNS} FROM knowledge_sources WHERE next_sync_at IS NOT NULL AND next_sync_at <= $1"
    ))
    .bind(now)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.into_iter().map(Source::from).collect())
}

crate::store::row_struct! {
    /// One run of a source, with the counts of its progress.
    #[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
    pub struct Run {
        pub id: String,
        pub source_id: String,
        /// `queued`, `running`, `done`, `failed`, `cancelled`.
        pub state: String,
        pub owner: Option<String>,
        pub reason: Option<String>,
        pub current_url: Option<String>,
        pub found: i64,
        pub fetched: i64,
        pub indexed: i64,
        pub unchanged: i64,
        pub skipped: i64,
        pub failed: i64,
        pub retired: i64,
        pub started_at: i64,
        pub heartbeat_at: i64,
        pub finished_at: Option<i64>,
    }
}

impl Run {
    /// Still to end (queued or running).
    pub fn active(&self) -> bool {
        self.state == "queued" || self.state == "running"
    }
}

const RUN_COLUMNS: &str = "id, source_id, state, owner, reason, current_url, found, fetched, indexed, unchanged, \
     skipped, failed, retired, started_at, heartbeat_at, finished_at";

/// Queues a run of the source unless one is queued or running; returns the active run either
/// way, and whether it is new.
pub async fn queue_run(db: &Db, source_id: &str, now: i64) -> Result<(Run, bool), DbError> {
    if let Some(active) = active_run(db, source_id).await? {
        return Ok((active, false));
    }
    Ok((insert_run(db, source_id, None, now).await?, true))
}

/// A new run: `queued`, or already `running` in process `owner` (an upload runs where it came).
pub async fn insert_run(db: &Db, source_id: &str, owner: Option<&str>, now: i64) -> Result<Run, DbError> {
    let id = new_id();
    let state = if owner.is_some() { "running" } else { "queued" };
    sqlx::query(
        "INSERT INTO source_runs (id, source_id, state, owner, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5, $5)",
    )
    .bind(&id)
    .bind(source_id)
    .bind(state)
    .bind(owner)
    .bind(now)
    .execute(db.writer())
    .await?;
    run(db, &id).await?.ok_or(DbError::RowNotFound)
}

pub async fn run(db: &Db, id: &str) -> Result<Option<Run>, DbError> {
    sqlx::query_as(&format!("SELECT {RUN_COLUMNS} FROM source_runs WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// The source's queued or running run.
pub async fn active_run(db: &Db, source_id: &str) -> Result<Option<Run>, DbError> {
    sqlx::query_as(&format!(
        "SELECT {RUN_COLUMNS} FROM source_runs WHERE source_id = $1 AND state IN ('queued', 'running') \
         ORDER BY started_at DESC, id DESC LIMIT 1"
    ))
    .bind(source_id)
    .fetch_optional(&mut *db.read().await?)
    .await
}

/// The source's latest runs, newest first.
pub async fn runs(db: &Db, source_id: &str, limit: i64) -> Result<Vec<Run>, DbError> {
    sqlx::query_as(&format!(
        "SELECT {RUN_COLUMNS} FROM source_runs WHERE source_id = $1 ORDER BY started_at DESC, id DESC LIMIT $2"
    ))
    .bind(source_id)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Runs waiting for a process: queued ones, and running ones whose owner holds no live lease
/// (its `processes` row is gone, as after a clean stop, or was not renewed since `cutoff`).
pub async fn runs_to_take(db: &Db, me: &str, cutoff: i64) -> Result<Vec<Run>, DbError> {
    sqlx::query_as(&format!(
        "SELECT {RUN_COLUMNS} FROM source_runs WHERE state = 'queued' OR (state = 'running' AND (owner IS NULL OR \
         (owner <> $1 AND NOT EXISTS (SELECT 1 FROM processes p WHERE p.id = source_runs.owner AND p.heartbeat_at >= $2)))) \
         ORDER BY started_at, id"
    ))
    .bind(me)
    .bind(cutoff)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Takes a run for this process, if it is still as [`runs_to_take`] found it (one process wins).
pub async fn take_run(db: &Db, run: &Run, me: &str, now: i64) -> Result<bool, DbError> {
    let moved = sqlx::query(
        "UPDATE source_runs SET state = 'running', owner = $2, heartbeat_at = $3 \
         WHERE id = $1 AND state = $4 AND heartbeat_at = $5 AND (owner IS NULL AND $6 IS NULL OR owner = $6)",
    )
    .bind(&run.id)
    .bind(me)
    .bind(now)
    .bind(&run.state)
    .bind(run.heartbeat_at)
    .bind(&run.owner)
    .execute(db.writer())
    .await?;
    Ok(moved.rows_affected() == 1)
}

/// What a run did since its last report, added to its counts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub found: i64,
    pub fetched: i64,
    pub indexed: i64,
    pub unchanged: i64,
    pub skipped: i64,
    pub failed: i64,
    pub retired: i64,
}

/// Adds to a run's counts, sets its current URL and beats its heartbeat; returns the run's state
/// (a run cancelled meanwhile says `cancelled`), or `None` if this process no longer owns it.
pub async fn report(
    db: &Db,
    run_id: &str,
    me: &str,
    p: &Progress,
    current_url: Option<&str>,
    now: i64,
) -> Result<Option<String>, DbError> {
    sqlx::query(
        "UPDATE source_runs SET found = found + $3, fetched = fetched + $4, indexed = indexed + $5, \
         unchanged = unchanged + $6, skipped = skipped + $7, failed = failed + $8, retired = retired + $9, \
         current_url = COALESCE($10, current_url), heartbeat_at = $11 WHERE id = $1 AND owner = $2",
    )
    .bind(run_id)
    .bind(me)
    .bind(p.found)
    .bind(p.fetched)
    .bind(p.indexed)
    .bind(p.unchanged)
    .bind(p.skipped)
    .bind(p.failed)
    .bind(p.retired)
    .bind(current_url)
    .bind(now)
    .execute(db.writer())
    .await?;
    let state: Option<(String, Option<String>)> = sqlx::query_as("SELECT state, owner FROM source_runs WHERE id = $1")
        .bind(run_id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(state.filter(|(_, owner)| owner.as_deref() == Some(me)).map(|(s, _)| s))
}

/// Ends a run (`done`, `failed` or `cancelled`) with its reason.
pub async fn finish_run(db: &Db, run_id: &str, state: &str, reason: Option<&str>, now: i64) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE source_runs SET state = $2, reason = $3, finished_at = $4, current_url = NULL WHERE id = $1 \
         AND state IN ('queued', 'running')",
    )
    .bind(run_id)
    .bind(state)
    .bind(reason)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// Cancels the source's active run; `false` if it had none.
pub async fn cancel(db: &Db, source_id: &str, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE source_runs SET state = 'cancelled', reason = 'cancelled by the owner', finished_at = $2 \
         WHERE source_id = $1 AND state IN ('queued', 'running')",
    )
    .bind(source_id)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() > 0)
}

crate::store::row_struct! {
    /// A page (or file) of a source.
    #[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
    pub struct Page {
        pub id: String,
        pub source_id: String,
        pub url: String,
        pub run_id: Option<String>,
        /// `queued`, `indexed`, `skipped`, `failed`, `gone`, `excluded`.
        pub status: String,
        pub reason: Option<String>,
        pub depth: i64,
        pub title: Option<String>,
        pub lang: Option<String>,
        pub etag: Option<String>,
        pub last_modified: Option<String>,
        pub content_hash: Option<String>,
        pub bytes: Option<i64>,
        pub article_id: Option<String>,
        pub fetched_at: Option<i64>,
        pub updated_at: i64,
    }
}

const PAGE_COLUMNS: &str = "id, source_id, url, run_id, status, reason, depth, title, lang, etag, last_modified, \
     content_hash, bytes, article_id, fetched_at, updated_at";

/// Puts a URL in a run's queue: a new page, or a known one not yet in this run (never an
/// excluded one). True if it was queued now; the run's page limit is the caller's to keep.
pub async fn enqueue(db: &Db, source_id: &str, run_id: &str, url: &str, depth: i64, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query(
        "INSERT INTO source_pages (id, source_id, url, run_id, status, depth, updated_at) VALUES ($1, $2, $3, $4, 'queued', $5, $6) \
         ON CONFLICT (source_id, url) DO UPDATE SET run_id = $4, status = 'queued', depth = $5, updated_at = $6 \
         WHERE source_pages.status <> 'excluded' AND (source_pages.run_id IS NULL OR source_pages.run_id <> $4)",
    )
    .bind(new_id())
    .bind(source_id)
    .bind(url)
    .bind(run_id)
    .bind(depth)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// What [`note_skipped`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Noted {
    /// The URL is recorded as skipped in this run (it was not seen in it before).
    pub noted: bool,
    /// It had passages, now gone.
    pub retired: bool,
}

/// Records a URL a run will not fetch (disallowed by robots.txt) with its reason, unless the
/// page was already seen in this run; a page indexed before loses its passages.
pub async fn note_skipped(
    db: &Db,
    source_id: &str,
    run_id: &str,
    url: &str,
    reason: &str,
    now: i64,
) -> Result<Noted, DbError> {
    let mut tx = db.begin_write().await?;
    // The upsert answers the page's article itself: no read before the write.
    let article: Option<Option<String>> = sqlx::query_scalar(
        "INSERT INTO source_pages (id, source_id, url, run_id, status, reason, updated_at) VALUES ($1, $2, $3, $4, 'skipped', $5, $6) \
         ON CONFLICT (source_id, url) DO UPDATE SET run_id = $4, status = 'skipped', reason = $5, updated_at = $6 \
         WHERE source_pages.status <> 'excluded' AND (source_pages.run_id IS NULL OR source_pages.run_id <> $4) \
         RETURNING article_id",
    )
    .bind(new_id())
    .bind(source_id)
    .bind(url)
    .bind(run_id)
    .bind(reason)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(article) = article else { return Ok(Noted::default()) };
    if let Some(article) = &article {
        sqlx::query("DELETE FROM chunks WHERE article_id = $1").bind(article).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM articles WHERE id = $1").bind(article).execute(&mut *tx).await?;
        sqlx::query(
            "UPDATE source_pages SET article_id = NULL, content_hash = NULL, etag = NULL, last_modified = NULL \
             WHERE source_id = $1 AND url = $2",
        )
        .bind(source_id)
        .bind(url)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(Noted { noted: true, retired: article.is_some() })
}

/// How many pages a run has seen so far (its page limit counts these).
pub async fn run_page_count(db: &Db, run_id: &str) -> Result<i64, DbError> {
    sqlx::query_scalar("SELECT COUNT(*) FROM source_pages WHERE run_id = $1")
        .bind(run_id)
        .fetch_one(&mut *db.read().await?)
        .await
}

/// The next pages a run is to fetch, shallowest first.
pub async fn queued(db: &Db, run_id: &str, limit: i64) -> Result<Vec<Page>, DbError> {
    sqlx::query_as(&format!(
        "SELECT {PAGE_COLUMNS} FROM source_pages WHERE run_id = $1 AND status = 'queued' ORDER BY depth, url LIMIT $2"
    ))
    .bind(run_id)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// The pages of a source, by URL; `status` filters.
pub async fn pages(
    db: &Db,
    source_id: &str,
    status: Option<&str>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Page>, i64), DbError> {
    let filter = "source_id = $1 AND ($2 IS NULL OR status = $2)";
    let rows = sqlx::query_as(&format!(
        "SELECT {PAGE_COLUMNS} FROM source_pages WHERE {filter} ORDER BY url LIMIT $3 OFFSET $4"
    ))
    .bind(source_id)
    .bind(status)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *db.read().await?)
    .await?;
    let total = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM source_pages WHERE {filter}"))
        .bind(source_id)
        .bind(status)
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok((rows, total))
}

pub async fn page(db: &Db, id: &str) -> Result<Option<Page>, DbError> {
    sqlx::query_as(&format!("SELECT {PAGE_COLUMNS} FROM source_pages WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

pub async fn page_by_url(db: &Db, source_id: &str, url: &str) -> Result<Option<Page>, DbError> {
    sqlx::query_as(&format!("SELECT {PAGE_COLUMNS} FROM source_pages WHERE source_id = $1 AND url = $2"))
        .bind(source_id)
        .bind(url)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// Another indexed page of the source with this content, if any (a duplicate under two URLs).
pub async fn same_content(db: &Db, source_id: &str, hash: &str, except_url: &str) -> Result<Option<String>, DbError> {
    sqlx::query_scalar(
        "SELECT url FROM source_pages WHERE source_id = $1 AND content_hash = $2 AND url <> $3 AND status = 'indexed' \
         ORDER BY url LIMIT 1",
    )
    .bind(source_id)
    .bind(hash)
    .bind(except_url)
    .fetch_optional(&mut *db.read().await?)
    .await
}

/// How a fetch of a page ended, to record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageOutcome<'a> {
    pub status: &'a str,
    pub reason: Option<&'a str>,
    pub title: Option<&'a str>,
    pub lang: Option<&'a str>,
    pub etag: Option<&'a str>,
    pub last_modified: Option<&'a str>,
    pub content_hash: Option<&'a str>,
    pub bytes: Option<i64>,
}

/// Records the end of a page's fetch that changed nothing in the index (unchanged, skipped,
/// failed); an unchanged page keeps its article, validators and hash.
pub async fn settle(db: &Db, page_id: &str, o: &PageOutcome<'_>, now: i64) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE source_pages SET status = $2, reason = $3, title = COALESCE($4, title), lang = COALESCE($5, lang), \
         etag = COALESCE($6, etag), last_modified = COALESCE($7, last_modified), fetched_at = $8, updated_at = $8 WHERE id = $1",
    )
    .bind(page_id)
    .bind(o.status)
    .bind(o.reason)
    .bind(o.title)
    .bind(o.lang)
    .bind(o.etag)
    .bind(o.last_modified)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// A page's passages to store: text, and where its citation points.
pub struct PagePassage {
    pub text: String,
    pub url: Option<String>,
}

/// Stores a page's article and passages (replacing the page's earlier ones) and records the
/// page as indexed, in one transaction.
pub async fn index_page(
    db: &Db,
    page: &Page,
    knowledge_base_id: &str,
    article: &super::NewArticle,
    passages: &[PagePassage],
    o: &PageOutcome<'_>,
    now: i64,
) -> Result<String, DbError> {
    let mut tx = db.begin_write().await?;
    if let Some(old) = &page.article_id {
        sqlx::query("DELETE FROM chunks WHERE article_id = $1").bind(old).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM articles WHERE id = $1").bind(old).execute(&mut *tx).await?;
    }
    let article_id = new_id();
    sqlx::query(
        "INSERT INTO articles (id, knowledge_base_id, title, category, kind, body, source_url, source_id, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)",
    )
    .bind(&article_id)
    .bind(knowledge_base_id)
    .bind(&article.title)
    .bind(&article.category)
    .bind(&article.kind)
    .bind(&article.body)
    .bind(&article.source_url)
    .bind(&page.source_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    for (i, p) in passages.iter().enumerate() {
        sqlx::query(
            "INSERT INTO chunks (id, article_id, knowledge_base_id, ordinal, text, url) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(new_id())
        .bind(&article_id)
        .bind(knowledge_base_id)
        .bind(i as i64)
        .bind(&p.text)
        .bind(&p.url)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query(
        "UPDATE source_pages SET status = $2, reason = $3, title = $4, lang = $5, etag = $6, last_modified = $7, \
         content_hash = $8, bytes = $9, article_id = $10, fetched_at = $11, updated_at = $11 WHERE id = $1",
    )
    .bind(&page.id)
    .bind(o.status)
    .bind(o.reason)
    .bind(o.title)
    .bind(o.lang)
    .bind(o.etag)
    .bind(o.last_modified)
    .bind(o.content_hash)
    .bind(o.bytes)
    .bind(&article_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE knowledge_bases SET updated_at = $2 WHERE id = $1")
        .bind(knowledge_base_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(article_id)
}

/// Takes a page's passages out of the index and gives it a status (`gone`, `excluded`,
/// `skipped`) with its reason.
pub async fn retire(db: &Db, page_id: &str, status: &str, reason: &str, now: i64) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    // A write first: on PostgreSQL it locks the page's row, so no crawl can give it another
    // article between the read below and the deletes (SQLite's write lock is the transaction's
    // from `begin_write` on).
    sqlx::query("UPDATE source_pages SET updated_at = $2 WHERE id = $1")
        .bind(page_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    let article: Option<Option<String>> = sqlx::query_scalar("SELECT article_id FROM source_pages WHERE id = $1")
        .bind(page_id)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(article) = article else { return Ok(false) };
    if let Some(article) = &article {
        sqlx::query("DELETE FROM chunks WHERE article_id = $1").bind(article).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM articles WHERE id = $1").bind(article).execute(&mut *tx).await?;
        // The version the index compares counts articles: a deletion is seen by every replica.
    }
    sqlx::query(
        "UPDATE source_pages SET status = $2, reason = $3, article_id = NULL, content_hash = NULL, etag = NULL, \
         last_modified = NULL, updated_at = $4 WHERE id = $1",
    )
    .bind(page_id)
    .bind(status)
    .bind(reason)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(article.is_some())
}

/// Pages of the source that were indexed before but not seen by this run (no longer linked or
/// listed): the run retires them when it ends.
pub async fn unseen(db: &Db, source_id: &str, run_id: &str) -> Result<Vec<Page>, DbError> {
    sqlx::query_as(&format!(
        "SELECT {PAGE_COLUMNS} FROM source_pages WHERE source_id = $1 AND status = 'indexed' \
         AND (run_id IS NULL OR run_id <> $2)"
    ))
    .bind(source_id)
    .bind(run_id)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Known pages of a source that a new run re-checks (conditional requests make that cheap).
pub async fn known_urls(db: &Db, source_id: &str) -> Result<Vec<(String, i64)>, DbError> {
    sqlx::query_as(
        "SELECT url, depth FROM source_pages WHERE source_id = $1 AND status IN ('indexed', 'failed') ORDER BY depth, url",
    )
    .bind(source_id)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Lets an excluded page be crawled again (its status becomes `skipped` until the next run).
pub async fn include_again(db: &Db, page_id: &str, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE source_pages SET status = 'skipped', reason = 'included again: fetched on the next run', updated_at = $2 \
         WHERE id = $1 AND status = 'excluded'",
    )
    .bind(page_id)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A page's passages as the index holds them: `(text, url)` in order.
pub async fn passages_of(db: &Db, article_id: &str) -> Result<Vec<(String, Option<String>)>, DbError> {
    sqlx::query_as("SELECT text, url FROM chunks WHERE article_id = $1 ORDER BY ordinal")
        .bind(article_id)
        .fetch_all(&mut *db.read().await?)
        .await
}

/// Counts of a source's pages by status, for its summary.
pub async fn page_counts(db: &Db, source_id: &str) -> Result<Vec<(String, i64)>, DbError> {
    sqlx::query_as("SELECT status, COUNT(*) FROM source_pages WHERE source_id = $1 GROUP BY status ORDER BY status")
        .bind(source_id)
        .fetch_all(&mut *db.read().await?)
        .await
}

/// A new page that is not crawled (a file or a snippet), to index at once.
pub async fn new_page(db: &Db, source_id: &str, url: &str, now: i64) -> Result<Page, DbError> {
    if let Some(found) = page_by_url(db, source_id, url).await? {
        return Ok(found);
    }
    let id = new_id();
    sqlx::query("INSERT INTO source_pages (id, source_id, url, status, updated_at) VALUES ($1, $2, $3, 'queued', $4)")
        .bind(&id)
        .bind(source_id)
        .bind(url)
        .bind(now)
        .execute(db.writer())
        .await?;
    page(db, &id).await?.ok_or(DbError::RowNotFound)
}

/// Deletes one page with its passages (a file or a snippet removed by the owner).
pub async fn delete_page(db: &Db, page_id: &str) -> Result<bool, DbError> {
    retire(db, page_id, "gone", "deleted", 0).await?;
    let done = sqlx::query("DELETE FROM source_pages WHERE id = $1").bind(page_id).execute(db.writer()).await?;
    Ok(done.rows_affected() == 1)
}
