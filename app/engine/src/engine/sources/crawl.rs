//! One run of a website source: robots.txt first, then the start page or sitemap and every page
//! the last run knew, then the links found, a few requests at a time, each page's outcome
//! stored as it ends (so a run taken over after a crash goes on from its queue). At the end,
//! pages the run no longer reached are retired.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use parley_ingest::robots::Robots;
use parley_ingest::sitemap::{self, Sitemap};
use url::Url;

use super::fetch::{BodyKind, Fetched, Fetcher};
use super::scope::{self, Scope};
use crate::engine::Engine;
use crate::store::DbError;
use crate::store::knowledge::NewArticle;
use crate::store::knowledge::sources::{self as store, Page, PageOutcome, PagePassage, Progress, Source};

/// The largest passage, in characters.
pub const PASSAGE_CHARS: usize = 800;

/// Pages fetched between two reports of a run's progress (and checks for a cancel or a stop),
/// per request at once.
const BATCH_PER_WORKER: usize = 2;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    Done,
    Cancelled,
    /// Another process owns the run now (this one was taken for dead).
    Lost,
    Failed(String),
}

/// What every page of one run shares.
struct Crawl {
    engine: Engine,
    source: Source,
    run_id: String,
    scope: Scope,
    robots: Robots,
    fetcher: Fetcher,
    delay: Duration,
    /// Pages of the run so far (its page limit counts these).
    pages: AtomicI64,
    /// Pages recorded as skipped (or retired) when offered, not yet reported.
    noted_skipped: AtomicI64,
    noted_retired: AtomicI64,
    limit: i64,
}

impl Crawl {
    /// Adds the pages recorded as skipped or retired when offered, since the last report.
    fn take_noted(&self, progress: &mut Progress) {
        progress.skipped += self.noted_skipped.swap(0, Ordering::Relaxed);
        progress.retired += self.noted_retired.swap(0, Ordering::Relaxed);
    }

    /// Queues `url` in this run if it is in scope, allowed and under the page limit.
    async fn offer(&self, url: &Url, depth: i64) -> Result<bool, DbError> {
        let url = scope::normal(url);
        if !self.scope.contains(&url) {
            return Ok(false);
        }
        let now = self.engine.now_ms();
        if !self.robots.allows(&url) {
            let noted = store::note_skipped(
                self.engine.db(),
                &self.source.id,
                &self.run_id,
                url.as_str(),
                "disallowed by robots.txt",
                now,
            )
            .await?;
            if noted.noted {
                self.pages.fetch_add(1, Ordering::Relaxed);
                let outcome = if noted.retired { &self.noted_retired } else { &self.noted_skipped };
                outcome.fetch_add(1, Ordering::Relaxed);
            }
            return Ok(false);
        }
        if self.pages.load(Ordering::Relaxed) >= self.limit {
            return Ok(false);
        }
        let queued = store::enqueue(self.engine.db(), &self.source.id, &self.run_id, url.as_str(), depth, now).await?;
        if queued {
            self.pages.fetch_add(1, Ordering::Relaxed);
        }
        Ok(queued)
    }
}

impl Engine {
    /// Runs a website source's run that this process has taken, to its end.
    pub(super) async fn crawl(&self, source: Source, run_id: &str) -> Ended {
        // A database busy or briefly unreachable does not end the run: it goes on from its
        // queue (pages already stored are not fetched again), up to five times.
        let mut tries = 0;
        loop {
            match self.crawl_inner(source.clone(), run_id).await {
                Ok(ended) => return ended,
                Err(e) if crate::store::is_unavailable(&e) && tries < 5 => {
                    tries += 1;
                    tracing::info!(error = %e, run = run_id, "knowledge source run: the database was busy; going on");
                    tokio::time::sleep(Duration::from_millis(200 * tries)).await;
                }
                Err(e) => return Ended::Failed(format!("database: {e}")),
            }
        }
    }

    async fn crawl_inner(&self, source: Source, run_id: &str) -> Result<Ended, DbError> {
        let settings = self.settings().crawl.clone();
        let fetcher = Fetcher::new(self.settings().outbound, settings.clone());
        let Ok(start) = Url::parse(&source.site.start_url) else {
            return Ok(Ended::Failed("the start URL is not a URL".into()));
        };
        let scope = match Scope::new(&start, &source.site) {
            Ok(scope) => scope,
            Err(e) => return Ok(Ended::Failed(format!("a scope pattern: {e}"))),
        };
        let robots = match read_robots(&fetcher, &start).await {
            Ok(robots) => robots,
            Err(e) => return Ok(Ended::Failed(e)),
        };
        let delay_ms = robots.crawl_delay().map_or(0, |s| (s.clamp(0.0, 10.0) * 1000.0) as u64);
        let limit = match source.site.page_limit {
            0 => settings.default_page_limit,
            n => n.min(settings.max_page_limit),
        };
        let crawl = Arc::new(Crawl {
            engine: self.clone(),
            pages: AtomicI64::new(store::run_page_count(self.db(), run_id).await?),
            source,
            run_id: run_id.to_owned(),
            scope,
            robots,
            delay: settings.delay.max(Duration::from_millis(delay_ms)),
            fetcher,
            noted_skipped: AtomicI64::new(0),
            noted_retired: AtomicI64::new(0),
            limit: i64::from(limit),
        });
        if crawl.pages.load(Ordering::Relaxed) == 0 {
            seed(&crawl, &start).await?;
            let mut progress = Progress { found: crawl.pages.load(Ordering::Relaxed), ..Progress::default() };
            crawl.take_noted(&mut progress);
            store::report(self.db(), run_id, self.process_id(), &progress, None, self.now_ms()).await?;
        }
        loop {
            // A stopping process leaves the run to the next one (its lease is released).
            if self.shutdown_state().is_draining() {
                return Ok(Ended::Lost);
            }
            let workers = crawl.fetcher.settings.concurrency.max(1);
            let batch = store::queued(self.db(), run_id, (workers * BATCH_PER_WORKER) as i64).await?;
            if batch.is_empty() {
                break;
            }
            let before = crawl.pages.load(Ordering::Relaxed);
            let current = batch.last().map(|p| p.url.clone());
            let results: Vec<Result<Progress, DbError>> = futures::stream::iter(batch)
                .map(|page| {
                    let crawl = crawl.clone();
                    async move {
                        let progress = crawl_page(&crawl, page).await;
                        // The pause spares the site the work of serving pages; a `304` (a
                        // re-sync of an unchanged page) sent none.
                        if progress.as_ref().map_or(true, |p| p.unchanged == 0 || p.fetched > 0) {
                            tokio::time::sleep(crawl.delay).await;
                        }
                        progress
                    }
                })
                .buffer_unordered(workers)
                .collect()
                .await;
            let mut progress = Progress { found: crawl.pages.load(Ordering::Relaxed) - before, ..Progress::default() };
            for r in results {
                add(&mut progress, &r?);
            }
            crawl.take_noted(&mut progress);
            match store::report(self.db(), run_id, self.process_id(), &progress, current.as_deref(), self.now_ms())
                .await?
            {
                Some(state) if state == "running" => {}
                Some(state) if state == "cancelled" => return Ok(Ended::Cancelled),
                _ => return Ok(Ended::Lost),
            }
        }
        let mut retired = Progress::default();
        for page in store::unseen(self.db(), &crawl.source.id, run_id).await? {
            let reason = "no longer linked from the site or listed in its sitemap";
            if store::retire(self.db(), &page.id, "gone", reason, self.now_ms()).await? {
                retired.retired += 1;
            }
        }
        store::report(self.db(), run_id, self.process_id(), &retired, None, self.now_ms()).await?;
        Ok(Ended::Done)
    }
}

fn add(total: &mut Progress, p: &Progress) {
    total.found += p.found;
    total.fetched += p.fetched;
    total.indexed += p.indexed;
    total.unchanged += p.unchanged;
    total.skipped += p.skipped;
    total.failed += p.failed;
    total.retired += p.retired;
}

/// The site's robots.txt for the crawler's name: none (`4xx`) allows everything; a server error
/// or no answer stops the run (RFC 9309: the site may be down, so crawl nothing).
async fn read_robots(fetcher: &Fetcher, start: &Url) -> Result<Robots, String> {
    let Ok(at) = start.join("/robots.txt") else { return Ok(Robots::allow_all()) };
    match fetcher.get(&at, None, None, true).await {
        Fetched::Body { body, .. } => Ok(Robots::parse(&fetcher.settings.user_agent, &body)),
        Fetched::Gone(_) | Fetched::Unsupported(_) | Fetched::Redirect(_) => Ok(Robots::allow_all()),
        Fetched::TooLarge(_) => Ok(Robots::allow_all()),
        Fetched::NotModified => Ok(Robots::allow_all()),
        Fetched::Refused(why) => Err(format!("the site's address is refused: {why}")),
        Fetched::Failed(why) => Err(format!("robots.txt could not be read ({why}); nothing was crawled")),
    }
}

/// Queues a new run's first pages: the sitemap's URLs (a sitemap start URL), or the start page,
/// the sitemaps robots.txt names and every page the source knew (re-checked, conditionally).
async fn seed(crawl: &Crawl, start: &Url) -> Result<(), DbError> {
    let from_sitemap = scope::is_sitemap(start);
    let sitemaps = if from_sitemap {
        vec![start.clone()]
    } else {
        crawl.offer(start, 0).await?;
        crawl.robots.sitemaps().into_iter().filter(|s| s.origin() == start.origin()).collect()
    };
    for url in read_sitemaps(&crawl.fetcher, sitemaps).await {
        crawl.offer(&url, 1).await?;
    }
    if !from_sitemap {
        for (url, depth) in store::known_urls(crawl.engine.db(), &crawl.source.id).await? {
            if let Ok(url) = Url::parse(&url) {
                crawl.offer(&url, depth).await?;
            }
        }
    }
    Ok(())
}

/// The page URLs of sitemaps, following sitemap indexes two levels down (at most 50 sitemaps).
async fn read_sitemaps(fetcher: &Fetcher, mut todo: Vec<Url>) -> Vec<Url> {
    let mut pages = Vec::new();
    let mut read = 0;
    while let Some(at) = todo.pop() {
        read += 1;
        if read > 50 {
            break;
        }
        let Fetched::Body { body, .. } = fetcher.get(&at, None, None, true).await else { continue };
        match sitemap::parse(&body) {
            Ok(Sitemap::Urls(entries)) => pages.extend(entries.into_iter().map(|e| e.loc)),
            Ok(Sitemap::Index(more)) => todo.extend(more.into_iter().filter(|m| m.origin() == at.origin())),
            Err(e) => tracing::info!(sitemap = %at, error = %e, "a sitemap could not be read"),
        }
    }
    pages
}

/// Fetches one queued page and records its outcome.
async fn crawl_page(crawl: &Crawl, page: Page) -> Result<Progress, DbError> {
    let db = crawl.engine.db();
    let now = || crawl.engine.now_ms();
    let mut progress = Progress::default();
    let Ok(url) = Url::parse(&page.url) else {
        store::retire(db, &page.id, "failed", "not a URL", now()).await?;
        progress.failed = 1;
        return Ok(progress);
    };
    if !crawl.robots.allows(&url) {
        store::retire(db, &page.id, "skipped", "disallowed by robots.txt", now()).await?;
        progress.skipped = 1;
        return Ok(progress);
    }
    let known = page.article_id.is_some();
    let (etag, modified) = if known { (page.etag.as_deref(), page.last_modified.as_deref()) } else { (None, None) };
    let answer = crawl.fetcher.get(&url, etag, modified, false).await;
    let page_id = page.id.as_str();
    let skip = |reason: String| async move {
        store::retire(db, page_id, "skipped", &reason, crawl.engine.now_ms())
            .await
            .map(|_| Progress { skipped: 1, ..Progress::default() })
    };
    let (kind, body, etag, last_modified) = match answer {
        Fetched::NotModified => {
            let o = PageOutcome { status: "indexed", reason: Some("not modified"), ..PageOutcome::default() };
            store::settle(db, &page.id, &o, now()).await?;
            progress.unchanged = 1;
            return Ok(progress);
        }
        // A page indexed before is gone (its passages retire); one never indexed is skipped, so
        // that every page a run found settles in one count.
        Fetched::Gone(status) if known => {
            let retired = store::retire(db, &page.id, "gone", &format!("HTTP {status}"), now()).await?;
            progress.retired = i64::from(retired);
            progress.skipped = i64::from(!retired);
            progress.fetched = 1;
            return Ok(progress);
        }
        Fetched::Gone(status) => return skip(format!("HTTP {status}")).await.map(counted),
        Fetched::Redirect(to) => {
            let to = scope::normal(&to);
            if to.as_str() != url.as_str() {
                crawl.offer(&to, page.depth).await?;
            }
            let reason = if crawl.scope.contains(&to) {
                format!("redirects to {to}")
            } else {
                format!("redirects outside the source's scope, to {to}")
            };
            return skip(reason).await;
        }
        Fetched::Refused(why) => {
            let o = PageOutcome { status: "failed", reason: Some(&why), ..PageOutcome::default() };
            store::settle(db, &page.id, &o, now()).await?;
            progress.failed = 1;
            return Ok(progress);
        }
        Fetched::Failed(why) => {
            let o = PageOutcome { status: "failed", reason: Some(&why), ..PageOutcome::default() };
            store::settle(db, &page.id, &o, now()).await?;
            progress.failed = 1;
            progress.fetched = 1;
            return Ok(progress);
        }
        Fetched::TooLarge(bytes) => {
            let limit = crawl.fetcher.settings.max_page_bytes;
            return skip(format!("larger than the limit of {} KiB ({} KiB or more)", limit / 1024, bytes / 1024)).await;
        }
        Fetched::Unsupported(content_type) => {
            return skip(format!("not a web page, PDF or text ({content_type})")).await;
        }
        Fetched::Body { kind, body, etag, last_modified } => (kind, body, etag, last_modified),
    };
    progress.fetched = 1;
    let (title, lang, markdown) = match kind {
        BodyKind::Html => {
            let html = String::from_utf8_lossy(&body).into_owned();
            let at = url.clone();
            let Some(read) = off_thread(move || parley_ingest::html_page(&html, &at)).await else {
                return skip("the page took too long to read".into()).await.map(counted);
            };
            if !read.nofollow {
                for link in &read.links {
                    crawl.offer(link, page.depth + 1).await?;
                }
            }
            if read.noindex {
                return skip("the page asks not to be indexed (robots noindex)".into()).await.map(counted);
            }
            if let Some(canonical) = read.canonical.as_ref().map(scope::normal)
                && canonical.as_str() != url.as_str()
            {
                crawl.offer(&canonical, page.depth).await?;
                return skip(format!("a copy of its canonical page {canonical}")).await.map(counted);
            }
            (read.title, read.lang, read.markdown)
        }
        BodyKind::Pdf | BodyKind::Text | BodyKind::Raw => {
            let name = if kind == BodyKind::Pdf { "page.pdf" } else { "page.txt" };
            let bytes = body.clone();
            let Some(read) = off_thread(move || parley_ingest::read_file(name, &bytes)).await else {
                return skip("the document took too long to read".into()).await.map(counted);
            };
            match read {
                Ok(parley_ingest::Read::Document(d)) => {
                    let title = if d.title.is_empty() || d.title == "page" { last_segment(&url) } else { d.title };
                    (title, d.lang, d.markdown)
                }
                Ok(parley_ingest::Read::Snippets(_)) => (last_segment(&url), None, String::new()),
                Err(e) => return skip(format!("unreadable: {e}")).await.map(counted),
            }
        }
    };
    if markdown.trim().is_empty() {
        return skip("no text found on the page".into()).await.map(counted);
    }
    let hash = parley_ingest::content_hash(&markdown);
    let validators = PageOutcome {
        status: "indexed",
        reason: None,
        title: Some(&title),
        lang: lang.as_deref(),
        etag: etag.as_deref(),
        last_modified: last_modified.as_deref(),
        content_hash: Some(&hash),
        bytes: Some(body.len() as i64),
    };
    if known && page.content_hash.as_deref() == Some(hash.as_str()) {
        store::settle(db, &page.id, &PageOutcome { reason: Some("content unchanged"), ..validators }, now()).await?;
        progress.unchanged = 1;
        return Ok(progress);
    }
    if let Some(other) = store::same_content(db, &crawl.source.id, &hash, url.as_str()).await? {
        return skip(format!("the same content as {other}")).await.map(counted);
    }
    let passages = parley_ingest::passages(&markdown, PASSAGE_CHARS);
    let stored: Vec<PagePassage> = passages
        .iter()
        .map(|p| PagePassage { text: p.text.clone(), url: Some(parley_ingest::text_fragment(&url, p).to_string()) })
        .collect();
    let article = NewArticle {
        title: title.clone(),
        category: None,
        kind: "article".into(),
        body: markdown,
        source_url: Some(url.to_string()),
    };
    store::index_page(db, &page, &crawl.source.knowledge_base_id, &article, &stored, &validators, now()).await?;
    progress.indexed = 1;
    Ok(progress)
}

/// Parsing is CPU work (and a hostile page can make it slow): it runs on the blocking pool, and
/// the crawl waits for it at most 20 s.
pub(super) async fn off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::time::timeout(Duration::from_secs(20), tokio::task::spawn_blocking(work)).await.ok()?.ok()
}

/// A skipped page's progress that also counts its fetch.
fn counted(p: Progress) -> Progress {
    Progress { fetched: 1, ..p }
}

/// The last part of a URL's path, for a document without a title.
fn last_segment(url: &Url) -> String {
    url.path_segments()
        .and_then(|mut s| s.rfind(|p| !p.is_empty()).map(str::to_owned))
        .unwrap_or_else(|| url.host_str().unwrap_or("page").to_owned())
}
