//! `parley crawl`: adds (or finds) a website source of an agent's knowledge base and runs it in
//! this process with a progress bar, then prints what happened to each page that did not index.

use std::time::Duration;

use anyhow::Context;
use parley_engine::engine::sources::{SourceError, WebsiteInput};
use parley_engine::store::knowledge::sources::{self as store, SiteSettings, SourceKind};
use parley_server::Config;

#[derive(clap::Args)]
pub struct Crawl {
    /// Public key of the agent.
    #[arg(long)]
    agent: String,
    /// Name of the knowledge base (created when the agent has none of this name).
    #[arg(long, default_value = "Knowledge")]
    base: String,
    /// The page or sitemap (`….xml`, `….xml.gz`) the crawl starts from.
    url: String,
    /// The source's name (default: the URL's host).
    #[arg(long)]
    name: Option<String>,
    /// Only URLs whose path starts with this, such as `/help/`.
    #[arg(long, default_value = "")]
    prefix: String,
    /// Only paths matching this pattern (`*` any text); repeat for more.
    #[arg(long)]
    include: Vec<String>,
    /// Never paths matching this pattern; repeat for more.
    #[arg(long)]
    exclude: Vec<String>,
    /// The most pages a run takes (0: the default, 500).
    #[arg(long, default_value_t = 0)]
    limit: u32,
    /// Sync again by itself: off, daily or weekly (run by the server).
    #[arg(long, default_value = "off")]
    schedule: String,
}

pub async fn crawl(config: Config, a: Crawl) -> anyhow::Result<()> {
    let engine = parley_server::cli_engine(&config).await?;
    let base = super::content::base_of(engine.db(), &a.agent, &a.base, None, None).await?;
    let site = SiteSettings {
        start_url: a.url.clone(),
        path_prefix: a.prefix.clone(),
        include: a.include.clone(),
        exclude: a.exclude.clone(),
        page_limit: a.limit,
    };
    let name = a.name.clone().unwrap_or_else(|| {
        url::Url::parse(&a.url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_else(|| a.url.clone())
    });
    let input = WebsiteInput { name, site, schedule: a.schedule.clone() };
    let checked = engine.check_website(&input).await.map_err(explain)?;
    let existing = store::of_base(engine.db(), &base.id)
        .await?
        .into_iter()
        .find(|s| s.kind == SourceKind::Website && s.site.start_url == checked.site.start_url);
    let source = match existing {
        Some(s) => {
            engine.update_website(&s.id, &input).await.map_err(explain)?;
            engine.sync_source(&s.id).await.map_err(explain)?;
            s
        }
        None => engine.create_website(&base.id, &input).await.map_err(explain)?,
    };
    let run = store::active_run(engine.db(), &source.id).await?.context("the run was not queued")?;
    engine.register_process().await.context("taking this process's lease")?;
    engine.spawn_lease_keeper();
    engine.run_sources_once().await;
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} pages  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let last = loop {
        let now = store::run(engine.db(), &run.id).await?.context("the run is gone")?;
        let done = now.indexed + now.unchanged + now.skipped + now.failed + now.retired;
        bar.set_length(now.found.max(done) as u64);
        bar.set_position(done as u64);
        bar.set_message(now.current_url.clone().unwrap_or_default());
        if !now.active() {
            break now;
        }
        if !engine.runs_here(&run.id) && now.state == "queued" {
            engine.run_sources_once().await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    bar.finish_and_clear();
    engine.release_process().await;
    println!(
        "{}: {} — found {}, fetched {}, indexed {}, unchanged {}, skipped {}, failed {}, retired {}",
        source.name,
        last.state,
        last.found,
        last.fetched,
        last.indexed,
        last.unchanged,
        last.skipped,
        last.failed,
        last.retired
    );
    if let Some(reason) = &last.reason {
        println!("  {reason}");
    }
    for status in ["failed", "skipped"] {
        let (pages, total) = store::pages(engine.db(), &source.id, Some(status), 0, 50).await?;
        for p in &pages {
            println!("  {status:7} {}  {}", p.url, p.reason.as_deref().unwrap_or(""));
        }
        if total > pages.len() as i64 {
            println!("  … and {} more {status}", total - pages.len() as i64);
        }
    }
    if last.state == "failed" {
        anyhow::bail!("the run failed");
    }
    Ok(())
}

/// A source error in words, a line per wrong field.
pub fn explain(e: SourceError) -> anyhow::Error {
    match e {
        SourceError::Invalid(errors) => {
            let lines: Vec<String> = errors.iter().map(|e| format!("{}: {}", e.field, e.message)).collect();
            anyhow::anyhow!("{}", lines.join("\n"))
        }
        other => anyhow::anyhow!("{other}"),
    }
}
