//! `parley`: runs the server, manages agents, and runs the benchmark's fake upstream.

/// jemalloc for everything Rust allocates (see Cargo.toml for why). SQLite's C code keeps glibc's
/// malloc, which `memory::spawn_trimmer` still trims after a burst.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read when it starts: one background thread gives freed pages back to the
/// system about a second after they are freed (unused dirty pages decay over 1 s, muzzy ones at
/// once), even while the process is idle after a burst.
#[cfg(not(target_env = "msvc"))]
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8] =
    b"background_thread:true,max_background_threads:1,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use cli::accounts::{CreateAgent, CreateUser};
use cli::content::{ImportKnowledge, ImportNews};
use cli::mcp::{McpStdio, McpTokenCommand};
use parley_server::fake_openai::{FakeOpenAi, Rules};
use parley_server::{Config, spawn};

mod cli;

#[derive(Parser)]
#[command(name = "parley", about = "Parley: an embeddable AI chat widget platform", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    config: Config,
}

// Parsed once at start-up: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run the server (the default).
    Serve,
    /// Create an agent.
    CreateAgent(CreateAgent),
    /// Create a console user (administrator or operator), or set a new password for one.
    CreateUser(CreateUser),
    /// Run a fake OpenAI-compatible upstream with fixed delays (for benchmarks).
    FakeUpstream(FakeUpstream),
    /// Add files to an agent's knowledge base (created if missing): Markdown articles with a
    /// front matter (title, category, kind, source_url), and PDF, DOCX, HTML, Markdown, text and
    /// CSV (question, answer) files into the base's Files source.
    ImportKnowledge(ImportKnowledge),
    /// Crawl a website into an agent's knowledge base (a website source, added or synced again),
    /// with a progress bar.
    Crawl(cli::sources::Crawl),
    /// Run an agent's answer tests (as published, or its draft with `--draft`); fails when a case
    /// fails.
    TestAgent(cli::answer_tests::TestAgent),
    /// Add news items from a JSON array (category, title, summary, date, source, url).
    ImportNews(ImportNews),
    /// Measure added time-to-first-token and concurrent streams against a fake upstream.
    Bench(parley_server::bench::BenchArgs),
    /// Measure the knowledge crawler on a generated site served by nginx: crawl time and memory,
    /// a re-sync with nothing changed, and search quality on the site's 30 questions.
    BenchCrawl(parley_server::bench::crawl::CrawlBenchArgs),
    /// Measure the reports on a database filled with 100,000 conversations over 90 days.
    BenchReports(parley_server::bench::reports::ReportBenchArgs),
    /// Measure many streams at once through nginx to replicas on PostgreSQL
    /// (`.ci/bench-replicas.sh` runs it with a fresh database and a raised descriptor limit).
    BenchReplicas(parley_server::bench::replicas::ReplicaBenchArgs),
    /// Manage MCP access tokens (create, list, revoke).
    #[command(subcommand)]
    McpToken(McpTokenCommand),
    /// Serve an agent's tools over MCP on stdin/stdout (for desktop clients that start a command).
    McpStdio(McpStdio),
    /// Revoke a visitor's token (by visitor id, as the console's conversations show it); a
    /// running server refuses it within a minute (its token cache).
    RevokeVisitor(cli::accounts::RevokeVisitor),
    /// Create or rotate an agent's identity secret, which the website's backend signs its users'
    /// tokens with (`Parley.identify`); prints it once.
    IdentitySecret(cli::accounts::IdentitySecret),
    /// Print everything stored about a visitor or a website's user as JSON.
    ExportPerson(cli::people::PersonArgs),
    /// Delete everything stored about a visitor or a website's user (usage keeps only its cost).
    DeletePerson(cli::people::PersonArgs),
    /// Add an outbound webhook endpoint to an agent; prints its signing secret once.
    AddWebhook(cli::reach::AddWebhook),
}

#[derive(clap::Args)]
struct FakeUpstream {
    #[arg(long, default_value = "127.0.0.1:18080")]
    listen: SocketAddr,
    #[arg(long, default_value_t = 64)]
    tokens: usize,
    #[arg(long, default_value_t = 0)]
    first_token_delay_ms: u64,
    #[arg(long, default_value_t = 0)]
    token_delay_ms: u64,
    /// Tool to call when the user message contains `[[tool]]`, as `NAME` or `NAME={"json":"args"}`.
    #[arg(long)]
    tool: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // Over stdio, stdout carries the MCP messages: logs go to stderr.
    let writer = match cli.command {
        Some(Command::McpStdio(_)) => tracing_subscriber::fmt::writer::BoxMakeWriter::new(std::io::stderr),
        _ => tracing_subscriber::fmt::writer::BoxMakeWriter::new(std::io::stdout),
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info,sqlx=warn,hyper=warn,leptos=warn".into());
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    if cli.config.log_format == "json" {
        // One JSON object per line; the request span's id is on every line of a request and its turn.
        logs.json().with_current_span(true).with_span_list(false).init();
    } else {
        logs.init();
    }
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let result = serve(cli.config).await;
            // Everything is stored and the pools are closed: exit now rather than wait for
            // background tasks (timers, pollers) to notice.
            match &result {
                Ok(()) => std::process::exit(0),
                Err(e) => {
                    eprintln!("Error: {e:#}");
                    std::process::exit(1)
                }
            }
        }
        Command::CreateAgent(args) => cli::accounts::create_agent(&cli.config, args).await,
        Command::CreateUser(args) => cli::accounts::create_user(&cli.config, args).await,
        Command::FakeUpstream(args) => fake_upstream(args).await,
        Command::Bench(args) => parley_server::bench::run(args).await,
        Command::BenchCrawl(args) => parley_server::bench::crawl::run(args).await,
        Command::BenchReports(args) => parley_server::bench::reports::run(args).await,
        Command::BenchReplicas(args) => parley_server::bench::replicas::run(args).await,
        Command::ImportKnowledge(args) => cli::content::import_knowledge(cli.config, args).await,
        Command::Crawl(args) => cli::sources::crawl(cli.config, args).await,
        Command::TestAgent(args) => cli::answer_tests::test_agent(cli.config, args).await,
        Command::ImportNews(args) => cli::content::import_news(&cli.config, args).await,
        Command::McpToken(command) => cli::mcp::mcp_token(&cli.config, command).await,
        Command::McpStdio(args) => cli::mcp::mcp_stdio(cli.config, args).await,
        Command::RevokeVisitor(args) => cli::accounts::revoke_visitor(&cli.config, args).await,
        Command::IdentitySecret(args) => cli::accounts::identity_secret(&cli.config, args).await,
        Command::ExportPerson(args) => cli::people::export_person(&cli.config, args).await,
        Command::DeletePerson(args) => cli::people::delete_person(&cli.config, args).await,
        Command::AddWebhook(args) => cli::reach::add_webhook(&cli.config, args).await,
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    // Listen for the signals before anything is served, so that none is missed.
    let stop = StopSignals::new()?;
    let running = spawn(config.clone()).await?;
    let url = running.url();
    println!();
    println!("  Parley is running at {url}");
    if let Some(demo) = running.demo_host {
        println!("  Demo host page (another origin, embeds the widget): http://{demo}/");
        println!("  Immigration demo:                                  http://{demo}/immigration");
    }
    println!("  Embed snippet: <script src=\"{url}/widget.js\" data-agent=\"demo-help\" async></script>");
    println!();
    let signal = stop.wait().await;
    let grace = Duration::from_secs(config.shutdown_grace_secs);
    tracing::info!(signal, "shutting down");
    let report = running.shutdown(grace).await;
    tracing::info!(finished = report.finished, interrupted = report.interrupted, flushed = report.flushed, "stopped");
    if !report.flushed {
        anyhow::bail!("some events could not be stored before the shutdown");
    }
    Ok(())
}

/// SIGTERM (service managers, containers) and SIGINT (Ctrl-C).
struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn new() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                term: signal(SignalKind::terminate()).context("listening for SIGTERM")?,
                int: signal(SignalKind::interrupt()).context("listening for SIGINT")?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    /// Waits for the first; names it.
    async fn wait(mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

async fn fake_upstream(a: FakeUpstream) -> anyhow::Result<()> {
    let tool = a.tool.map(|t| match t.split_once('=') {
        Some((name, args)) => (name.to_owned(), args.to_owned()),
        None => (t, "{}".to_owned()),
    });
    let rules = Rules {
        tokens: a.tokens,
        first_token_delay: Duration::from_millis(a.first_token_delay_ms),
        token_delay: Duration::from_millis(a.token_delay_ms),
        tool,
    };
    let fake = FakeOpenAi::start_rules(rules, a.listen).await;
    println!("fake upstream on {}", fake.base_url());
    tokio::signal::ctrl_c().await?;
    Ok(())
}
