//! `parley bench-crawl`: the knowledge crawler's goals (issue 42) measured in one run. It makes
//! the benchmark site (`server/tests/site/make_site.py bench`: pages of realistic size with the
//! same header, navigation, cookie banner, sidebar and footer), serves it with nginx on
//! 127.0.0.1, and in this process crawls it into a fresh SQLite database with the server's
//! default crawl settings. It prints the first crawl's time and the memory it took over idle,
//! a re-sync with nothing changed (its time and how many page bodies it fetched), and how many
//! of the site's 30 questions find their page among the first five search results.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use parley_engine::engine::Engine;
use parley_engine::engine::knowledge::SearchQuery;
use parley_engine::engine::sources::WebsiteInput;
use parley_engine::store::agents;
use parley_engine::store::knowledge::sources::{self as store, Run, SiteSettings};
use parley_engine::store::knowledge::{self, BaseFields};

use super::nginx::Nginx;

#[derive(clap::Args, Debug)]
pub struct CrawlBenchArgs {
    /// Pages of the generated site.
    #[arg(long, default_value_t = 1000)]
    pub pages: u32,
    /// The site generator (the repository's `server/tests/site/make_site.py`).
    #[arg(long)]
    pub generator: Option<PathBuf>,
    /// The nginx binary.
    #[arg(long, default_value = "/usr/sbin/nginx")]
    pub nginx: PathBuf,
    /// Pause after each request per worker (ms); the server's default when not given.
    #[arg(long)]
    pub delay_ms: Option<u64>,
}

/// This process's resident memory now (KiB), from /proc.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// nginx serving `dir/www` on `port`.
fn serve(nginx: &Path, dir: &Path, port: u16) -> anyhow::Result<Nginx> {
    let template = std::fs::read_to_string(repo_file("tests/site/nginx.conf.template"))?;
    let conf = template.replace("__DIR__", &dir.display().to_string()).replace("__PORT__", &port.to_string());
    std::fs::write(dir.join("nginx.conf"), conf)?;
    std::fs::create_dir_all(dir.join("tmp"))?;
    Nginx::start(nginx, dir, port)
}

/// Waits for the source's run to end while sampling this process's memory; returns the run,
/// its time and the highest RSS seen (KiB).
async fn run_to_end(engine: &Engine, source_id: &str) -> anyhow::Result<(Run, Duration, u64)> {
    let started = Instant::now();
    let peak = Arc::new(AtomicU64::new(rss_kib()));
    let sampler = {
        let peak = peak.clone();
        tokio::spawn(async move {
            loop {
                peak.fetch_max(rss_kib(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    engine.run_sources_once().await;
    let run = loop {
        let run = store::runs(engine.db(), source_id, 1).await?.into_iter().next().context("no run")?;
        if !run.active() {
            break run;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let took = started.elapsed();
    sampler.abort();
    Ok((run, took, peak.load(Ordering::Relaxed)))
}

pub async fn run(args: CrawlBenchArgs) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let base = format!("http://127.0.0.1:{port}");
    let generator = args.generator.clone().unwrap_or_else(|| repo_file("tests/site/make_site.py"));
    let made = std::process::Command::new("python3")
        .arg(&generator)
        .arg("bench")
        .arg(dir.path())
        .args(["--pages", &args.pages.to_string(), "--base", &base])
        .output()
        .context("python3")?;
    anyhow::ensure!(made.status.success(), "make_site.py: {}", String::from_utf8_lossy(&made.stderr));
    let _nginx = serve(&args.nginx, dir.path(), port)?;

    let mut config = crate::Config::for_tests(
        format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display()),
        dir.path().to_path_buf(),
    );
    config.private_endpoints = format!("127.0.0.1:{port}");
    if let Some(ms) = args.delay_ms {
        config.crawl_delay_ms = ms;
    }
    let engine = crate::cli_engine(&config).await?;
    engine.register_process().await?;
    let now = engine.now_ms();
    let agent = super::demo_agent("bench-crawl", "Crawl bench");
    let agent = agents::insert(engine.db(), &agent, now).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let fields = BaseFields { name: "Site", description: "The benchmark site", topics: "" };
    let kb = knowledge::create_base(engine.db(), &agent.id, &fields, now).await?;
    let input = WebsiteInput {
        name: "bench".into(),
        site: SiteSettings {
            start_url: format!("{base}/index.html"),
            page_limit: args.pages + 100,
            ..Default::default()
        },
        schedule: "off".into(),
    };
    let idle = rss_kib();
    let source = engine.create_website(&kb.id, &input).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let (first, took, peak) = run_to_end(&engine, &source.id).await?;
    println!(
        "first crawl: {} pages indexed ({} found, {} skipped, {} failed) in {:.1} s; RSS idle {} MiB, peak {} MiB (+{} MiB)",
        first.indexed,
        first.found,
        first.skipped,
        first.failed,
        took.as_secs_f64(),
        idle / 1024,
        peak / 1024,
        peak.saturating_sub(idle) / 1024
    );

    let log_lines = |d: &Path| std::fs::read_to_string(d.join("access.log")).unwrap_or_default();
    let before = log_lines(dir.path()).lines().count();
    engine.sync_source(&source.id).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let (second, took, _) = run_to_end(&engine, &source.id).await?;
    let log = log_lines(dir.path());
    let bodies = log
        .lines()
        .skip(before)
        .filter(|l| l.contains("\" 200 ") && !l.contains("robots.txt") && !l.contains("sitemap"))
        .count();
    println!(
        "re-sync, nothing changed: {:.1} s, {} unchanged, {} indexed again, {} page bodies fetched",
        took.as_secs_f64(),
        second.unchanged,
        second.indexed,
        bodies
    );

    let questions: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("questions.json"))?)?;
    let mut found = 0;
    for q in &questions {
        let text = q["question"].as_str().unwrap_or_default();
        let want = format!("{base}{}", q["answer_path"].as_str().unwrap_or_default());
        let query = SearchQuery { agent_id: &agent.id, text, limit: 5, ..SearchQuery::default() };
        let hits = engine.services().knowledge.search(&query).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        let rank =
            hits.iter().position(|h| h.source_url.as_deref().is_some_and(|u| u.split('#').next() == Some(&want)));
        match rank {
            Some(_) => found += 1,
            None => println!(
                "  missed: {text} -> {want}; got {:?}",
                hits.iter().map(|h| h.source_url.clone().unwrap_or_default()).collect::<Vec<_>>()
            ),
        }
    }
    println!("questions: {found} of {} find their page in the first 5 results", questions.len());
    engine.release_process().await;
    Ok(())
}
