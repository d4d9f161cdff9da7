//! Knowledge sources (issue 42) against a real web server: nginx serving the test site
//! `server/tests/site/make_site.py small` makes (robots.txt with a disallowed path, a sitemap
//! index with a gzipped sitemap, pages with navigation, cookie banner and footer, a redirect, a
//! canonical copy, a page in Chinese, a PDF, a page that changes, one that disappears, one over
//! the size limit, a binary file, a private-address link). The crawl, the citations, the
//! re-sync, a restart in the middle of a run, and files imported from fixtures made by real
//! tools.

use std::path::{Path, PathBuf};
use std::time::Duration;

use parley_engine::engine::knowledge::SearchQuery;
use parley_engine::engine::sources::{SourceError, WebsiteInput};
use parley_engine::store::agents::{ProviderConfig, ProviderKind};
use parley_engine::store::knowledge::sources::{self as store, Run, SiteSettings};
use parley_engine::store::knowledge::{self, BaseFields};
use parley_server::bench::nginx::Nginx;
use serde_json::Value;

use crate::harness::fixtures::agent;
use crate::harness::*;

/// The test site behind nginx on a free port, stopped by its PID (and waited for, workers
/// included) when dropped.
pub struct Site {
    // Stopped before its folder goes.
    _nginx: Nginx,
    dir: tempfile::TempDir,
    pub port: u16,
    pub expect: Value,
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

impl Site {
    pub fn start() -> Site {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let made = std::process::Command::new("python3")
            .arg(repo("tests/site/make_site.py"))
            .args(["small"])
            .arg(dir.path())
            .args(["--base", &base])
            .output()
            .expect("python3 runs");
        assert!(made.status.success(), "make_site.py: {}", String::from_utf8_lossy(&made.stderr));
        let template = std::fs::read_to_string(repo("tests/site/nginx.conf.template")).unwrap();
        let conf =
            template.replace("__DIR__", &dir.path().display().to_string()).replace("__PORT__", &port.to_string());
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let nginx = Nginx::start(Path::new("/usr/sbin/nginx"), dir.path(), port).expect("nginx serves the test site");
        let expect: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("expect.json")).unwrap()).unwrap();
        Site { _nginx: nginx, dir, port, expect }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }
}

/// The offline demo model (it searches the agent's knowledge for a question it has no rule for).
fn demo() -> ProviderConfig {
    ProviderConfig {
        kind: ProviderKind::Demo,
        base_url: None,
        api_key: None,
        model: "demo".into(),
        fallback_model: None,
    }
}

/// A base of a new demo agent `key` with knowledge search.
async fn base_of_new_agent(app: &TestApp, key: &str) -> (String, String) {
    let a = app.insert_agent(agent(key, demo()).capabilities(&["knowledge_search"])).await;
    let fields = BaseFields { name: "Harborlight", description: "The Harborlight website", topics: "" };
    let base = knowledge::create_base(app.db(), &a.id, &fields, app.engine().now_ms()).await.unwrap();
    (a.id, base.id)
}

/// The source's latest run once it has ended.
async fn ended_run(app: &TestApp, source_id: &str) -> Run {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        let runs = store::runs(app.db(), source_id, 1).await.unwrap();
        if let Some(run) = runs.into_iter().next().filter(|r| !r.active()) {
            return run;
        }
        assert!(tokio::time::Instant::now() < deadline, "the run did not end in 90 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn chunks_containing(app: &TestApp, text: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM chunks WHERE text LIKE $1")
        .bind(format!("%{text}%"))
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap()
}

fn website(start: &str) -> WebsiteInput {
    WebsiteInput {
        name: "Harborlight".into(),
        site: SiteSettings { start_url: start.into(), ..SiteSettings::default() },
        schedule: "off".into(),
    }
}

/// Checks every page of the site against what `expect.json` says of run `run` (`run1`, `run2`).
async fn check_outcomes(app: &TestApp, site: &Site, source_id: &str, run: &str) {
    let pages = site.expect["pages"].as_object().unwrap();
    for (path, e) in pages {
        let page = store::page_by_url(app.db(), source_id, &site.url(path)).await.unwrap();
        let page = page.unwrap_or_else(|| panic!("{path}: no page recorded"));
        let reason = page.reason.clone().unwrap_or_default();
        let shown = format!("{path}: {} ({reason})", page.status);
        match (e[run].as_str().unwrap(), e["reason"].as_str().unwrap_or("")) {
            ("indexed", _) => assert_eq!(page.status, "indexed", "{shown}"),
            ("gone", _) => assert_eq!(page.status, "gone", "{shown}"),
            ("skipped", "robots") => assert!(reason.contains("robots.txt"), "{shown}"),
            ("skipped", "redirect-target") => assert!(reason.contains("redirects to"), "{shown}"),
            ("skipped", "canonical") => assert!(reason.contains("canonical"), "{shown}"),
            ("skipped", "too-large") => assert!(reason.contains("larger than"), "{shown}"),
            ("skipped", "not-html") => assert!(reason.contains("not a web page"), "{shown}"),
            ("skipped", "http-error") => assert!(reason.contains("410"), "{shown}"),
            other => panic!("{path}: unexpected expectation {other:?}"),
        }
        if e[run] != "indexed" {
            assert!(page.article_id.is_none(), "{shown} keeps passages");
        }
        if e["must_not_find_fact"] == true {
            let fact = e["fact"].as_str().unwrap();
            assert_eq!(chunks_containing(app, fact).await, 0, "{path}: its fact reached the index");
        }
    }
    for (url, _) in site.expect["off_site"].as_object().unwrap() {
        assert!(store::page_by_url(app.db(), source_id, url).await.unwrap().is_none(), "{url} was taken in");
    }
    assert!(!site.file("access.log").contains("/private/"), "a disallowed page was fetched");
}

#[tokio::test]
async fn a_website_is_crawled_cited_and_kept_fresh() {
    let site = Site::start();
    let app = TestApp::builder().config({
        let port = site.port;
        move |c| c.private_endpoints = format!("{},127.0.0.1:{port}", c.private_endpoints)
    });
    let app = app.spawn().await;
    let (_, base) = base_of_new_agent(&app, "harbor").await;
    let engine = app.engine();

    // A start URL the fence refuses, or no URL at all, is a field error and stores nothing.
    for bad in ["http://10.1.2.3/", "ftp://127.0.0.1/", "not a url", "http://127.0.0.1:9/"] {
        match engine.create_website(&base, &website(bad)).await {
            Err(SourceError::Invalid(errors)) => assert!(errors.iter().any(|e| e.field == "start_url"), "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    let mut bad_scope = website(&site.url("/"));
    bad_scope.site.path_prefix = "docs".into();
    bad_scope.schedule = "hourly".into();
    let Err(SourceError::Invalid(errors)) = engine.create_website(&base, &bad_scope).await else { panic!() };
    assert_eq!(errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(), ["path_prefix", "schedule"]);
    assert_eq!(app.count("knowledge_sources").await, 0);

    // The first run: every page as expect.json says.
    let start = site.expect["start"].as_str().unwrap().to_owned();
    let source = engine.create_website(&base, &website(&start)).await.unwrap();
    let run1 = ended_run(&app, &source.id).await;
    assert_eq!(run1.state, "done", "{run1:?}");
    check_outcomes(&app, &site, &source.id, "run1").await;
    let indexed = site.expect["pages"].as_object().unwrap().values().filter(|e| e["run1"] == "indexed").count();
    assert_eq!(run1.indexed as usize, indexed, "{run1:?}");
    let settled = run1.indexed + run1.unchanged + run1.skipped + run1.failed + run1.retired;
    assert_eq!(settled, run1.found, "a page found but not counted in any outcome: {run1:?}");

    // No boilerplate line reached a passage; each page's fact did, once.
    for line in site.expect["boilerplate"]["lines"].as_array().unwrap() {
        assert_eq!(chunks_containing(&app, line.as_str().unwrap()).await, 0, "boilerplate indexed: {line}");
    }
    let nav = site.expect["boilerplate"]["nav_text"].as_str().unwrap();
    assert_eq!(chunks_containing(&app, nav).await, 0, "the navigation was indexed");
    for (path, e) in site.expect["pages"].as_object().unwrap() {
        if e["run1"] == "indexed" && path != "/files/brochure.pdf" {
            let fact = e["fact"].as_str().unwrap();
            assert_eq!(chunks_containing(&app, fact).await, 1, "{path}: its fact is not indexed once: {fact}");
        }
    }

    // Each question finds its page among the first five, and the citation scrolls to the passage.
    let agent_id = sqlx::query_scalar::<_, String>("SELECT id FROM agents WHERE public_key = 'harbor'")
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap();
    for (path, e) in site.expect["pages"].as_object().unwrap() {
        if e["run1"] != "indexed" {
            continue;
        }
        let question = e["question"].as_str().unwrap();
        let q = SearchQuery { agent_id: &agent_id, text: question, limit: 5, ..SearchQuery::default() };
        let hits = engine.services().knowledge.search(&q).await.unwrap();
        let page = site.url(path);
        let hit = hits.iter().find(|h| h.source_url.as_deref().is_some_and(|u| u.starts_with(&page)));
        let hit = hit.unwrap_or_else(|| panic!("{question}: {page} not in {hits:#?}"));
        if path != "/files/brochure.pdf" {
            assert!(hit.source_url.as_deref().unwrap().contains("#:~:text="), "{hit:?}");
        }
    }

    // The demo model answers a visitor from the site and cites the page.
    let token = app.visitor("harbor").await;
    let events = app.send(&token, "harbor", None, "How much is the Harbor plan a month?").await;
    let said = format!("{events:?}");
    assert!(said.contains(&site.url("/pricing.html")), "no citation of the pricing page: {said}");

    // The second run: a page changed, one disappeared; the rest answer 304 and are not fetched.
    let dir = site.dir.path();
    std::fs::copy(dir.join("changing.v2.html"), dir.join("www/changing.html")).unwrap();
    std::fs::remove_file(dir.join("www/gone.html")).unwrap();
    let log_before = site.file("access.log").lines().count();
    engine.sync_source(&source.id).await.unwrap();
    let run2 = ended_run(&app, &source.id).await;
    assert_eq!(run2.state, "done", "{run2:?}");
    assert_ne!(run2.id, run1.id);
    check_outcomes(&app, &site, &source.id, "run2").await;
    let unchanged = site.expect["run2"]["unchanged"].as_array().unwrap().len();
    assert!(run2.unchanged as usize >= unchanged, "{run2:?}");
    assert_eq!(run2.indexed, 1, "only the changed page is indexed again: {run2:?}");
    let log = site.file("access.log");
    let second: Vec<&str> = log.lines().skip(log_before).collect();
    assert!(second.iter().filter(|l| l.contains("\" 304 ")).count() >= unchanged, "{second:#?}");
    let changed = &site.expect["run2"]["changed"]["/changing.html"];
    assert_eq!(chunks_containing(&app, changed["fact"].as_str().unwrap()).await, 1);
    assert_eq!(chunks_containing(&app, changed["old_fact"].as_str().unwrap()).await, 0);
    let gone_fact = site.expect["pages"]["/gone.html"]["fact"].as_str().unwrap();
    assert_eq!(chunks_containing(&app, gone_fact).await, 0);
    // Nothing duplicated: one article per indexed page.
    let articles: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM articles WHERE source_id = $1")
        .bind(&source.id)
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap();
    let (_, indexed_now) = store::pages(app.db(), &source.id, Some("indexed"), 0, 1).await.unwrap();
    assert_eq!(articles, indexed_now);

    // A page robots.txt now disallows loses its passages on the next run, counted once.
    let robots =
        site.file("www/robots.txt").replace("Disallow: /private/", "Disallow: /private/\nDisallow: /docs/setup.html");
    std::fs::write(dir.join("www/robots.txt"), robots).unwrap();
    engine.sync_source(&source.id).await.unwrap();
    let run3 = ended_run(&app, &source.id).await;
    assert_eq!(run3.state, "done", "{run3:?}");
    assert_eq!(run3.retired, 1, "{run3:?}");
    let settled = run3.indexed + run3.unchanged + run3.skipped + run3.failed + run3.retired;
    assert_eq!(settled, run3.found, "{run3:?}");
    let setup = store::page_by_url(app.db(), &source.id, &site.url("/docs/setup.html")).await.unwrap().unwrap();
    assert_eq!((setup.status.as_str(), setup.article_id.as_deref()), ("skipped", None), "{setup:?}");
    assert!(setup.reason.as_deref().is_some_and(|r| r.contains("robots.txt")), "{setup:?}");
    let setup_fact = site.expect["pages"]["/docs/setup.html"]["fact"].as_str().unwrap();
    assert_eq!(chunks_containing(&app, setup_fact).await, 0, "a disallowed page kept its passages");

    // Its settings change in place (a bad one changes nothing); the next run uses them.
    let mut edited = website(&start);
    edited.name = "Harborlight site".into();
    edited.schedule = "weekly".into();
    edited.site.path_prefix = "nowhere".into();
    assert!(matches!(engine.update_website(&source.id, &edited).await, Err(SourceError::Invalid(_))));
    assert_eq!(store::get(app.db(), &source.id).await.unwrap().unwrap().name, source.name);
    edited.site.path_prefix = String::new();
    engine.update_website(&source.id, &edited).await.unwrap();
    let now = store::get(app.db(), &source.id).await.unwrap().unwrap();
    assert_eq!((now.name.as_str(), now.schedule.as_str()), ("Harborlight site", "weekly"));
    assert!(now.next_sync_at.is_some_and(|t| t > engine.now_ms()), "{now:?}");
    assert!(matches!(engine.update_website("no-such-source", &edited).await, Err(SourceError::NotFound)));

    // Excluding a page retires its passages and keeps it out of the next run; deleting the
    // source takes everything with it.
    let pricing = store::page_by_url(app.db(), &source.id, &site.url("/pricing.html")).await.unwrap().unwrap();
    engine.exclude_page(&pricing.id).await.unwrap();
    assert_eq!(chunks_containing(&app, "The Harbor plan costs 49 euros").await, 0);
    engine.sync_source(&source.id).await.unwrap();
    ended_run(&app, &source.id).await;
    let pricing = store::page(app.db(), &pricing.id).await.unwrap().unwrap();
    assert_eq!((pricing.status.as_str(), pricing.article_id), ("excluded", None));
    engine.delete_source(&source.id).await.unwrap();
    assert_eq!(app.count("source_pages").await, 0);
    assert_eq!(app.count("source_runs").await, 0);
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM articles WHERE source_id IS NOT NULL")
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap();
    assert_eq!(left, 0);
    assert_eq!(chunks_containing(&app, "Harborlight").await, 0);
}

#[tokio::test]
async fn a_run_cut_by_a_restart_resumes_and_takes_every_page_once() {
    let site = Site::start();
    let port = site.port;
    let app = TestApp::builder()
        .config(move |c| {
            c.private_endpoints = format!("{},127.0.0.1:{port}", c.private_endpoints);
            // Slow enough to stop it in the middle.
            c.crawl_delay_ms = 300;
            c.crawl_concurrency = 1;
        })
        .spawn()
        .await;
    let (_, base) = base_of_new_agent(&app, "harbor").await;
    let start = site.expect["start"].as_str().unwrap().to_owned();
    let source = app.engine().create_website(&base, &website(&start)).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let run = store::active_run(app.db(), &source.id).await.unwrap().expect("the run goes on");
        if run.indexed >= 3 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the run did not get going: {run:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The server stops (SIGTERM's path: draining, then its lease released) mid-run.
    app.engine().shutdown(Duration::from_millis(100)).await;
    let cut = store::active_run(app.db(), &source.id).await.unwrap().expect("still running");
    // The pages in flight end and are stored; then the run is left.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while app.engine().runs_here(&cut.id) {
        assert!(tokio::time::Instant::now() < deadline, "the stopping server kept crawling");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.engine().release_process().await;
    let cut = store::run(app.db(), &cut.id).await.unwrap().unwrap();
    assert_eq!(cut.state, "running");
    let queued_left = store::queued(app.db(), &cut.id, 1000).await.unwrap().len();
    assert!(queued_left > 0, "the run ended before the stop");

    let second = app.restart().await;
    let run = ended_run(&app, &source.id).await;
    assert_eq!((run.id.as_str(), run.state.as_str()), (cut.id.as_str(), "done"), "{run:?}");
    check_outcomes(&app, &site, &source.id, "run1").await;
    let indexed = site.expect["pages"].as_object().unwrap().values().filter(|e| e["run1"] == "indexed").count();
    assert_eq!(run.indexed as usize, indexed, "a page indexed twice or lost: {run:?}");
    let articles: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM articles WHERE source_id = $1")
        .bind(&source.id)
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap();
    assert_eq!(articles as usize, indexed);
    // Every page fetched once in the run, the restart included (robots.txt and sitemaps aside).
    let log = site.file("access.log");
    for path in ["/pricing.html", "/docs/setup.html", "/zh/about.html", "/blog/post.html"] {
        let fetches = log.lines().filter(|l| l.contains(&format!("GET {path} "))).count();
        assert_eq!(fetches, 1, "{path} fetched {fetches} times:\n{log}");
    }
    second.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn files_made_by_real_tools_are_indexed_and_bad_ones_refused_by_name() {
    let app = TestApp::builder().spawn().await;
    let (agent_id, base) = base_of_new_agent(&app, "files").await;
    let fixture = |name: &str| {
        let bytes = std::fs::read(repo(&format!("../app/ingest/tests/fixtures/files/{name}"))).unwrap();
        (name.to_owned(), bytes)
    };
    let files: Vec<(String, Vec<u8>)> =
        ["guide.pdf", "handbook.docx", "faq.csv", "broken.pdf", "scan.pdf", "setup.exe"].map(fixture).to_vec();
    let results = app.engine().import_files(&base, &files).await.unwrap();
    let refused: Vec<&str> = results.iter().filter_map(|r| r.error.as_deref()).collect();
    assert_eq!(results.iter().filter(|r| r.error.is_none()).count(), 3, "{results:#?}");
    for name in ["broken.pdf", "scan.pdf", "setup.exe"] {
        assert!(refused.iter().any(|e| e.starts_with(&format!("{name}: "))), "{name}: {refused:?}");
    }
    // The Chinese text layer of the PDF is searchable, and the citation names the file.
    let q = SearchQuery { agent_id: &agent_id, text: "退款政策", limit: 5, ..SearchQuery::default() };
    let hits = app.engine().services().knowledge.search(&q).await.unwrap();
    assert_eq!(hits.first().map(|h| h.title.as_str()), Some("Parley Pricing Guide"), "{hits:#?}");
    // The same file again replaces it; the run history records both uploads.
    app.engine().import_files(&base, &files[..1]).await.unwrap();
    let sources = store::of_base(app.db(), &base).await.unwrap();
    let (_, pages) = store::pages(app.db(), &sources[0].id, Some("indexed"), 0, 1).await.unwrap();
    assert_eq!(pages, 3);
    assert_eq!(store::runs(app.db(), &sources[0].id, 10).await.unwrap().len(), 2);

    // A snippet: a blank answer is refused; a good one is found.
    assert!(matches!(app.engine().add_snippet(&base, "Parking?", " ").await, Err(SourceError::Invalid(_))));
    app.engine()
        .add_snippet(&base, "Is there parking at the office?", "Yes, twelve free spaces behind it.")
        .await
        .unwrap();
    let q = SearchQuery { agent_id: &agent_id, text: "parking office", limit: 5, ..SearchQuery::default() };
    let hits = app.engine().services().knowledge.search(&q).await.unwrap();
    assert!(hits.iter().any(|h| h.text.contains("twelve free spaces")), "{hits:#?}");

    // The console's upload refuses a body that is not multipart before anything reads it.
    use leptos::server_fn::ServerFn;
    let path = parley_app::console::api::sources::UploadFiles::PATH;
    let r = app.client.post(app.url(path)).body("x").send().await.unwrap();
    assert_eq!(r.status(), 415);
}
