//! `parley`: runs the server, manages agents, and runs the benchmark's fake upstream.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use parley_app::server::engine::clock::{Clock, SystemClock};
use parley_app::server::store::Db;
use parley_app::server::store::agents::{self, AgentInput, NewAgent};
use parley_server::fake_openai::{FakeOpenAi, Rules};
use parley_server::{Config, spawn};
use parley_widget::protocol::Theme;

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
    /// Add markdown articles (front matter: title, category, kind, source_url) to an agent's
    /// knowledge base (created if missing).
    ImportKnowledge(ImportKnowledge),
    /// Add news items from a JSON array (category, title, summary, date, source, url).
    ImportNews(ImportNews),
    /// Measure added time-to-first-token and concurrent streams against a fake upstream.
    Bench(parley_server::bench::BenchArgs),
    /// Manage MCP access tokens (create, list, revoke).
    #[command(subcommand)]
    McpToken(McpTokenCommand),
    /// Serve an agent's tools over MCP on stdin/stdout (for desktop clients that start a command).
    McpStdio(McpStdio),
}

#[derive(Subcommand)]
enum McpTokenCommand {
    /// Create a token for an agent and print it (it is shown only this once).
    Create(McpTokenCreate),
    /// List the tokens (never the tokens themselves).
    List {
        /// Only the tokens of this agent (public key).
        #[arg(long)]
        agent: Option<String>,
    },
    /// Revoke a token by its id.
    Revoke {
        /// The token's id (from `mcp-token list`).
        id: String,
    },
}

#[derive(clap::Args)]
struct McpTokenCreate {
    /// Public key of the agent.
    #[arg(long)]
    agent: String,
    /// Default tool definitions: `base` (list + general search) or `detail` (a search tool per base).
    #[arg(long, default_value = "base", value_parser = ["base", "detail"])]
    feature_set: String,
    /// Default output format: `raw` (JSON) or `text` (Markdown).
    #[arg(long, default_value = "raw", value_parser = ["raw", "text"])]
    output: String,
    /// A name to recognise the token by.
    #[arg(long, default_value = "MCP client")]
    name: String,
}

#[derive(clap::Args)]
struct CreateUser {
    #[arg(long)]
    email: String,
    #[arg(long, default_value = "Administrator")]
    name: String,
    /// `admin` (everything) or `operator` (conversations, leads, orders).
    #[arg(long, default_value = "admin", value_parser = ["admin", "operator"])]
    role: String,
    /// The password (10 characters or more); a random one is made and printed when absent.
    #[arg(long, env = "PARLEY_USER_PASSWORD", hide_env_values = true)]
    password: Option<String>,
}

#[derive(clap::Args)]
struct McpStdio {
    /// The MCP access token (`pm_…`).
    #[arg(long, env = "PARLEY_MCP_TOKEN", hide_env_values = true)]
    token: String,
}

#[derive(clap::Args)]
struct CreateAgent {
    /// Public key used in the embed snippet.
    #[arg(long)]
    key: String,
    #[arg(long)]
    name: String,
    #[arg(long, default_value = "help_center")]
    vertical: String,
    /// Comma-separated capabilities, e.g. `ticket_escalation,news`.
    #[arg(long, value_delimiter = ',')]
    capabilities: Vec<String>,
    /// Comma-separated tool names to narrow the capabilities' tools.
    #[arg(long, value_delimiter = ',')]
    enabled_tools: Option<Vec<String>>,
    /// `demo`, `openai` or `anthropic` (the last two need `--base-url`).
    #[arg(long, default_value = "demo")]
    provider: String,
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long, env = "PARLEY_AGENT_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    #[arg(long, default_value = "gpt-4o-mini")]
    model: String,
    #[arg(long)]
    fallback_model: Option<String>,
    #[arg(long, default_value = "You are a helpful assistant.")]
    system_prompt: String,
    #[arg(long, default_value = "Hi! How can I help?")]
    greeting: String,
    /// Comma-separated origins allowed to embed the agent (empty: any).
    #[arg(long, value_delimiter = ',')]
    allowed_origins: Vec<String>,
}

#[derive(clap::Args)]
struct ImportKnowledge {
    /// Public key of the agent.
    #[arg(long)]
    agent: String,
    /// Name of the knowledge base.
    #[arg(long, default_value = "Knowledge")]
    base: String,
    /// Markdown files or directories of them.
    paths: Vec<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct ImportNews {
    /// Public key of the agent (all agents when omitted).
    #[arg(long)]
    agent: Option<String>,
    /// The JSON file.
    file: std::path::PathBuf,
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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn,hyper=warn,leptos=warn".into()),
        )
        .with_writer(writer)
        .init();
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(cli.config).await,
        Command::CreateAgent(args) => create_agent(&cli.config, args).await,
        Command::CreateUser(args) => create_user(&cli.config, args).await,
        Command::FakeUpstream(args) => fake_upstream(args).await,
        Command::Bench(args) => parley_server::bench::run(args).await,
        Command::ImportKnowledge(args) => import_knowledge(cli.config, args).await,
        Command::ImportNews(args) => import_news(&cli.config, args).await,
        Command::McpToken(command) => mcp_token(&cli.config, command).await,
        Command::McpStdio(args) => mcp_stdio(cli.config, args).await,
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let running = spawn(config).await?;
    let url = running.url();
    println!();
    println!("  Parley is running at {url}");
    if let Some(demo) = running.demo_host {
        println!("  Demo host page (another origin, embeds the widget): http://{demo}/");
        println!("  Immigration demo:                                  http://{demo}/immigration");
    }
    println!("  Embed snippet: <script src=\"{url}/widget.js\" data-agent=\"demo-help\" async></script>");
    println!();
    tokio::signal::ctrl_c().await.context("waiting for Ctrl-C")?;
    tracing::info!("shutting down");
    Ok(())
}

async fn create_agent(config: &Config, a: CreateAgent) -> anyhow::Result<()> {
    let theme = Theme::default();
    let input = AgentInput {
        key: a.key,
        name: a.name,
        vertical: a.vertical,
        capabilities: a.capabilities,
        enabled_tools: a.enabled_tools,
        provider: a.provider,
        base_url: a.base_url.unwrap_or_default(),
        api_key: a.api_key.unwrap_or_default(),
        model: a.model,
        fallback_model: a.fallback_model.unwrap_or_default(),
        system_prompt: a.system_prompt,
        greeting: a.greeting,
        theme_color: theme.color,
        launcher_position: theme.position,
        allowed_origins: a.allowed_origins,
    };
    if config.database_url.is_none() {
        std::fs::create_dir_all(&config.data_dir)?;
    }
    let db = Db::connect(&config.database_url()).await?;
    let catalogue = parley_app::server::seed::tool_catalogue(&db).await.context("reading the experts")?;
    let new = NewAgent::parse(&input, &catalogue).map_err(|errors| {
        let lines: Vec<String> =
            errors.iter().map(|e| format!("  --{}: {}", e.field.replace('_', "-"), e.message)).collect();
        anyhow::anyhow!("the agent was not created:\n{}", lines.join("\n"))
    })?;
    let agent = agents::insert(&db, &new, SystemClock.now_ms()).await.context("creating the agent")?;
    println!("created agent {} (key {})", agent.id, agent.public_key);
    Ok(())
}

async fn create_user(config: &Config, a: CreateUser) -> anyhow::Result<()> {
    use parley_app::server::{auth, store::users};
    let role = users::Role::parse(&a.role).context("--role must be `admin` or `operator`")?;
    if !a.email.contains('@') {
        anyhow::bail!("--email must be an email address");
    }
    let (password, generated) = match a.password {
        Some(p) if p.chars().count() >= 10 => (p, false),
        Some(_) => anyhow::bail!("the password needs at least 10 characters"),
        None => (auth::one_time_password(), true),
    };
    if config.database_url.is_none() {
        std::fs::create_dir_all(&config.data_dir)?;
    }
    let db = Db::connect(&config.database_url()).await?;
    let hash = auth::hash_password(password.clone()).await;
    match users::with_hash(&db, &a.email).await? {
        Some((user, _)) => {
            users::set_password(&db, &user.id, &hash).await?;
            println!("new password set for {} ({})", user.email, user.role.as_str());
        }
        None => {
            let user = users::insert(&db, &a.email, &a.name, role, &hash, SystemClock.now_ms()).await?;
            println!("created {} {} ({})", user.role.as_str(), user.email, user.id);
        }
    }
    if generated {
        println!("password: {password}");
    }
    Ok(())
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

async fn open_db(config: &Config) -> anyhow::Result<Db> {
    if config.database_url.is_none() {
        std::fs::create_dir_all(&config.data_dir)?;
    }
    Ok(Db::connect(&config.database_url()).await?)
}

async fn import_knowledge(config: Config, a: ImportKnowledge) -> anyhow::Result<()> {
    use parley_app::server::engine::knowledge::Knowledge;
    use parley_app::server::store::knowledge;
    let db = open_db(&config).await?;
    let agent =
        agents::by_public_key(&db, &a.agent).await?.with_context(|| format!("no agent with key {}", a.agent))?;
    let now = SystemClock.now_ms();
    let base = match knowledge::bases_of_agent(&db, &agent.id).await?.into_iter().find(|b| b.name == a.base) {
        Some(base) => base,
        None => knowledge::create_base(&db, &agent.id, &a.base, "", now).await?,
    };
    let mut files = Vec::new();
    for path in &a.paths {
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            files.extend(entries.into_iter().filter(|p| p.extension().is_some_and(|e| e == "md")));
        } else {
            files.push(path.clone());
        }
    }
    let mut articles = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        articles.push(knowledge::parse_markdown(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?);
    }
    let embedder = parley_app::server::engine::knowledge::embeddings::Embedder::from_env(reqwest::Client::new());
    let index = Knowledge::new(db.clone(), embedder);
    index.add_articles(&base.id, &articles, now).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("added {} articles to \"{}\" of {}", articles.len(), base.name, agent.public_key);
    Ok(())
}

async fn import_news(config: &Config, a: ImportNews) -> anyhow::Result<()> {
    use parley_app::server::store::news;
    let db = open_db(config).await?;
    let agent_id = match &a.agent {
        Some(key) => {
            Some(agents::by_public_key(&db, key).await?.with_context(|| format!("no agent with key {key}"))?.id)
        }
        None => None,
    };
    let text = std::fs::read_to_string(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let items: Vec<news::NewsItem> =
        serde_json::from_str(&text).context("the file must be a JSON array of news items")?;
    let n = news::import(&db, agent_id.as_deref(), &items, SystemClock.now_ms()).await?;
    println!("added {n} news items");
    Ok(())
}

async fn mcp_token(config: &Config, command: McpTokenCommand) -> anyhow::Result<()> {
    use parley_app::server::store::mcp_tokens::{self, FeatureSet, OutputFormat};
    let db = open_db(config).await?;
    let now = SystemClock.now_ms();
    match command {
        McpTokenCommand::Create(a) => {
            let agent = agents::by_public_key(&db, &a.agent)
                .await?
                .with_context(|| format!("no agent with key {}", a.agent))?;
            let feature_set = FeatureSet::parse(&a.feature_set).context("--feature-set must be base or detail")?;
            let output = OutputFormat::parse(&a.output).context("--output must be raw or text")?;
            let (row, token) = mcp_tokens::create(&db, &agent.id, &a.name, feature_set, output, now).await?;
            let base = config.public_url.clone().unwrap_or_else(|| format!("http://{}", config.addr));
            println!(
                "created MCP token {} for agent {} ({}, {})",
                row.id,
                agent.public_key,
                feature_set.as_str(),
                output.as_str()
            );
            println!("token (shown only now): {token}");
            println!("URL: {}/mcp?token={token}", base.trim_end_matches('/'));
        }
        McpTokenCommand::List { agent } => {
            let agent_id = match &agent {
                Some(key) => {
                    Some(agents::by_public_key(&db, key).await?.with_context(|| format!("no agent with key {key}"))?.id)
                }
                None => None,
            };
            let tokens = mcp_tokens::list(&db, agent_id.as_deref()).await?;
            if tokens.is_empty() {
                println!("no MCP tokens");
            }
            for t in tokens {
                let state = if t.revoked_at.is_some() { "revoked" } else { "active" };
                let used = t.last_used_at.map_or("never used".to_owned(), |ms| {
                    format!("last used {}", parley_app::server::mcp::builtin::today(ms))
                });
                println!(
                    "{}  {}  {}…  {}  {}/{}  {state}  {used}",
                    t.id,
                    t.agent_key,
                    t.token_prefix,
                    t.name,
                    t.feature_set.as_str(),
                    t.output_format.as_str()
                );
            }
        }
        McpTokenCommand::Revoke { id } => {
            if !mcp_tokens::revoke(&db, &id, None, now).await? {
                anyhow::bail!("no active MCP token with id {id}");
            }
            println!("revoked MCP token {id}");
        }
    }
    Ok(())
}

async fn mcp_stdio(config: Config, a: McpStdio) -> anyhow::Result<()> {
    use std::sync::Arc;

    use parley_app::server::engine::knowledge::Knowledge;
    use parley_app::server::engine::knowledge::embeddings::Embedder;
    use parley_app::server::engine::payments::sandbox::Sandbox;
    use parley_app::server::engine::tools::registry::Registry;
    use parley_app::server::engine::{Engine, EngineSettings, Services};
    // Not `build_state`: it also recovers interrupted answers and seeds demo agents, which is the
    // server's business; this process may run beside a server on the same database.
    let db = open_db(&config).await?;
    let http = reqwest::Client::new();
    let public_url = config.public_url.clone().unwrap_or_else(|| format!("http://{}", config.addr));
    let secret: [u8; 32] = rand::random();
    let services = Services {
        knowledge: Knowledge::new(db.clone(), Embedder::from_env(http.clone())),
        payments: Arc::new(Sandbox::new(&public_url, &secret)),
        public_url,
    };
    let settings =
        EngineSettings { tool_timeout: Duration::from_millis(config.tool_timeout_ms), ..EngineSettings::default() };
    let registry = Registry::builtin(&http);
    let engine = Engine::new(db, Arc::new(SystemClock), http, registry, settings, services);
    engine.services().knowledge.reload().await.context("building the knowledge index")?;
    parley_app::server::mcp::service::serve_stdio(engine, a.token).await.map_err(anyhow::Error::msg)
}
