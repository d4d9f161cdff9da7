//! The Parley server: configuration, database, the router, the demo host page, and the tools
//! used by tests and benchmarks (fake OpenAI-compatible and Anthropic upstreams, the load
//! benchmark).

pub mod api_error;
pub mod bench;
pub mod config;
pub mod demo_host;
pub mod extract;
pub mod fake_anthropic;
pub mod fake_openai;
mod fake_wire;
mod inbound_smtp;
mod listen;
pub mod memory;
pub mod metrics;
pub mod routes;
pub mod sse_body;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use leptos::config::{Env, LeptosOptions};
use parley_app::server::state::{AppState, HttpSettings};
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::engine::knowledge::Knowledge;
use parley_engine::engine::outbound::{self, OutboundSettings};
use parley_engine::engine::payments::{PayLinks, Payments, WebhookSecret};
use parley_engine::engine::provider::fallbacks::DefaultFallbacks;
use parley_engine::engine::shutdown::ShutdownReport;
use parley_engine::engine::tools::registry::Registry;
use parley_engine::engine::{Engine, EngineSettings, Services};
use parley_engine::limits::Limits;
use parley_engine::net::TrustedProxies;
use parley_engine::store::Db;
use parley_engine::store::agents::{ProviderConfig, ProviderKind};
use parley_engine::{auth, seed};
use tokio_util::sync::CancellationToken;

pub use config::Config;
use listen::lock_sqlite;
pub use listen::{bind, serve_in_background, serve_until};

/// A running server.
pub struct Running {
    pub addr: SocketAddr,
    pub state: AppState,
    pub demo_host: Option<SocketAddr>,
    /// The inbound SMTP listener's address, when it runs (`PARLEY_INBOUND_SMTP_ADDR`).
    pub smtp_addr: Option<SocketAddr>,
    /// Stops the HTTP server (after the engine has drained).
    stop_http: CancellationToken,
    http_task: tokio::task::JoinHandle<()>,
    /// Held while serving a SQLite database: one server process per file.
    _sqlite_lock: Option<std::fs::File>,
}

/// How long open connections get to end once the answers are over.
const HTTP_CLOSE_WAIT: Duration = Duration::from_secs(5);

impl Running {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Graceful shutdown (see `engine::shutdown`): new turns refused, running answers given
    /// `grace`, the rest interrupted, streams ended, the writer flushed; then the HTTP server
    /// stops and the database pools close.
    pub async fn shutdown(self, grace: Duration) -> ShutdownReport {
        let report = self.state.engine.shutdown(grace).await;
        if report.flushed {
            // Every answer of this process has ended and is stored: nothing for others to recover.
            self.state.engine.release_process().await;
        }
        self.stop_http.cancel();
        if tokio::time::timeout(HTTP_CLOSE_WAIT, self.http_task).await.is_err() {
            tracing::warn!("some connections were still open when the server stopped");
        }
        if tokio::time::timeout(HTTP_CLOSE_WAIT, self.state.engine.db().close()).await.is_err() {
            tracing::warn!("database connections were still in use when the server stopped");
        }
        report
    }
}

/// Builds the state: connects and migrates the database, recovers interrupted answers, seeds the
/// demo agents on first start.
pub async fn build_state(
    config: &Config,
    addr: SocketAddr,
    clock: Arc<dyn Clock>,
    registry: Registry,
) -> anyhow::Result<AppState> {
    crate::metrics::install();
    let db = open_database(config, clock.now_ms()).await?;
    let outbound = config.outbound()?;
    let http = http_client(outbound)?;
    fence_configured(config, outbound)?;
    let settings = engine_settings(config)?;
    let public_url = config.public_url.clone().unwrap_or_else(|| format!("http://{addr}"));
    let payments = payments(config, &db, &public_url, clock.now_ms()).await?;
    for line in payments_notice(&payments) {
        tracing::warn!("{line}");
    }
    let services = Services {
        knowledge: Knowledge::new(db.clone(), config.embedder(http.clone())),
        payments,
        public_url: public_url.clone(),
    };
    let engine = Engine::new(db.clone(), clock.clone(), http, registry, settings, services);
    engine.reload_prices().await.context("reading the model price table")?;
    engine.register_process().await.context("taking this process's lease")?;
    let recovered = engine.recover().await.context("recovering interrupted answers")?;
    engine.spawn_lease_keeper();
    // Other replicas on the same PostgreSQL: their stored events and live messages reach this one.
    engine.spawn_relay();
    if recovered > 0 {
        tracing::warn!(recovered, "answers interrupted by the last shutdown were marked `interrupted`");
    }
    let origins = demo_origins(config, &public_url);
    let provider = config.openai_base_url.as_ref().map(|base| ProviderConfig {
        kind: ProviderKind::OpenAi,
        base_url: Some(base.clone()),
        api_key: config.openai_api_key.key().cloned(),
        model: config.model.clone(),
        fallback_model: None,
    });
    if seed::demo_agents(&db, &origins, provider, clock.now_ms()).await? {
        tracing::info!("created the demo agents `{}` and `{}`", seed::HELP_AGENT_KEY, seed::IMMIGRATION_AGENT_KEY);
        seed::demo_content(&engine).await.map_err(|e| anyhow::anyhow!("adding the demo knowledge and news: {e}"))?;
    }
    engine.services().knowledge.reload().await.context("building the knowledge index")?;
    engine.spawn_background();
    engine.spawn_webhook_sender();
    crate::memory::spawn_trimmer();
    // Console sessions past their expiry, images never sent: hourly, once across replicas.
    engine.spawn_sweepers();
    // Knowledge sources: scheduled syncs, runs queued by the console, runs left by a crash.
    engine.spawn_source_runner();
    // Rate-limit keys back to full are dropped every half minute.
    let limits = Arc::new(Limits::new(config.limits.settings()));
    limits.spawn_pruner();
    let leptos_options = leptos_options(config, addr);
    first_admin(&engine, config, &public_url).await?;
    Ok(AppState {
        leptos_options,
        engine,
        http: Arc::new(HttpSettings {
            public_url,
            max_body_bytes: 64 * 1024,
            trusted_proxies: TrustedProxies::parse(&config.trusted_proxies).map_err(anyhow::Error::msg)?,
            country_header: Some(config.country_header.trim().to_ascii_lowercase()).filter(|h| !h.is_empty()),
            widget_dir: config.widget_dir.clone().into(),
        }),
        auth: Arc::new(
            auth::Auth::new(auth::SignInLimits {
                per_ip_per_minute: config.signin_per_ip_per_minute,
                per_email_per_minute: config.signin_per_email_per_minute,
                concurrency: config.signin_concurrency,
                ..auth::SignInLimits::default()
            })
            .await,
        ),
        limits,
    })
}

/// An engine for a command that works on the database beside a server (`mcp-stdio`, `crawl`,
/// `import-knowledge`): no answers recovered, no demo seeded, no background work started.
pub async fn cli_engine(config: &Config) -> anyhow::Result<Engine> {
    use parley_engine::engine::clock::SystemClock;
    let db = open_database(config, SystemClock.now_ms()).await?;
    let outbound = config.outbound()?;
    let http = http_client(outbound)?;
    let public_url = config.public_url.clone().unwrap_or_else(|| format!("http://{}", config.addr));
    // The same payments as the server on this database: its pay links open there.
    let payments = payments(config, &db, &public_url, SystemClock.now_ms()).await?;
    let services =
        Services { knowledge: Knowledge::new(db.clone(), config.embedder(http.clone())), payments, public_url };
    let settings = engine_settings(config)?;
    let registry = Registry::builtin(&http);
    let engine = Engine::new(db, Arc::new(SystemClock), http, registry, settings, services);
    engine.services().knowledge.reload().await.context("building the knowledge index")?;
    engine.reload_tools().await.context("reading the owner's tools")?;
    Ok(engine)
}

/// The HTTP client of model calls and tools. Idle connections kept per upstream host: enough
/// for steady concurrency to reuse them, and after a burst of thousands of streams the rest
/// (each with its buffers) is closed rather than kept for the idle timeout.
/// A host name that resolves to a private address off the list is refused when connecting (the
/// outbound fence, [`outbound`]).
pub fn http_client(outbound: OutboundSettings) -> anyhow::Result<reqwest::Client> {
    let builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(90))
        .pool_max_idle_per_host(128)
        .tcp_nodelay(true);
    let builder = builder.dns_resolver(outbound::resolver(outbound));
    builder.build().context("building the HTTP client")
}

/// The provider and embeddings addresses of the configuration keep to the outbound fence: a
/// private one off `PARLEY_PRIVATE_ENDPOINTS` stops the start (names are checked at connect).
fn fence_configured(config: &Config, settings: OutboundSettings) -> anyhow::Result<()> {
    let typed = [
        ("PARLEY_OPENAI_BASE_URL", &config.openai_base_url),
        ("PARLEY_EMBEDDINGS_BASE_URL", &config.embeddings_base_url),
    ];
    for (name, url) in typed {
        if let Some(url) = url.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
            outbound::check_url(url, settings).map_err(|e| {
                anyhow::anyhow!("{name}: {e} (list it in PARLEY_PRIVATE_ENDPOINTS to allow a local service)")
            })?;
        }
    }
    Ok(())
}

/// The engine's tunables from the configuration; a bad value stops the start with its reason.
fn engine_settings(config: &Config) -> anyhow::Result<EngineSettings> {
    if let Some(key) = config.vapid_private_key.expose() {
        parley_engine::engine::notify::vapid::Vapid::from_private(key)
            .map_err(|e| anyhow::anyhow!("PARLEY_VAPID_PRIVATE_KEY: {e}"))?;
    }
    Ok(EngineSettings {
        demo_token_delay: Duration::from_millis(config.demo_token_delay_ms),
        tool_timeout: Duration::from_millis(config.tool_timeout_ms),
        visitor_idle: Duration::from_secs(config.visitor_idle_hours.saturating_mul(3600)),
        spend: config.spend.settings()?,
        lease_ttl: Duration::from_secs(config.lease_ttl_secs),
        crawl: parley_engine::engine::sources::CrawlSettings {
            delay: Duration::from_millis(config.crawl_delay_ms),
            concurrency: usize::try_from(config.crawl_concurrency).unwrap_or(4),
            max_page_bytes: usize::try_from(config.crawl_max_page_kib.saturating_mul(1024)).unwrap_or(usize::MAX),
            ..Default::default()
        },
        fallbacks: DefaultFallbacks::parse(&config.fallback_models)
            .map_err(|e| anyhow::anyhow!("PARLEY_FALLBACK_MODELS: {e}"))?,
        outbound: config.outbound()?,
        h2c: config.h2c()?,
        mail: config.mail.settings()?,
        transcripts: config.mail.transcript_limits(),
        returns: config.mail.return_settings()?,
        push: parley_engine::engine::notify::PushSettings {
            vapid_private_key: config.vapid_private_key.key().cloned(),
            subject: config.vapid_subject.clone().filter(|s| !s.trim().is_empty()),
            ..Default::default()
        },
        parked_images: parley_engine::engine::attachments::ParkedLimits {
            per_ip: config.parked_image_mib_per_ip.saturating_mul(1024 * 1024),
            total: config.parked_image_mib_total.saturating_mul(1024 * 1024),
        },
        ..EngineSettings::default()
    })
}

/// The origins the demo agents accept: Parley's own URL and the demo host page's.
fn demo_origins(config: &Config, public_url: &str) -> Vec<String> {
    let mut origins = vec![public_url.trim_end_matches('/').to_owned()];
    if let Some(demo) = config.demo_host_addr {
        origins.push(format!("http://{demo}"));
        if demo.ip().is_loopback() {
            origins.push(format!("http://localhost:{}", demo.port()));
        }
    }
    origins
}

/// Leptos's options: where the site's files are, production or development (`LEPTOS_ENV`).
fn leptos_options(config: &Config, addr: SocketAddr) -> LeptosOptions {
    let env = match std::env::var("LEPTOS_ENV").as_deref() {
        Ok("PROD") | Ok("prod") | Ok("production") => Env::PROD,
        _ => Env::DEV,
    };
    LeptosOptions::builder()
        .output_name("parley")
        .site_root(config.site_root.as_str())
        .site_pkg_dir("pkg")
        .env(env)
        .site_addr(addr)
        .reload_port(3010)
        .build()
}

/// On the very first start, the first administrator, whose one-time password goes to a file
/// only its owner can read (never to a log or the terminal).
async fn first_admin(engine: &Engine, config: &Config, public_url: &str) -> anyhow::Result<()> {
    if let Some((email, password)) =
        auth::ensure_first_admin(engine).await.context("creating the first administrator")?
    {
        // The password goes to a file only its owner can read, never to a log or the terminal.
        let path = auth::write_password_file(&config.data_dir, &email, &password)
            .context("writing the first administrator's password file")?;
        tracing::warn!(
            "first start: sign in to {public_url}/admin as {email}; the one-time password is in {} (readable by \
             this user only; delete it after signing in)",
            path.display()
        );
        println!("\n  Console: {public_url}/admin — first sign-in: {email}, password in {}\n", path.display());
    }
    Ok(())
}

/// Opens the configured database (making the data directory of a default SQLite file first),
/// applies the migrations, and gives it the secret key that seals provider keys: the key is
/// checked against what the database holds (a wrong key stops here, changing nothing) and keys
/// still stored as plain text are sealed.
pub async fn open_database(config: &Config, now: i64) -> anyhow::Result<Db> {
    use parley_engine::store::credentials;
    if config.database_url.is_none() {
        std::fs::create_dir_all(&config.data_dir)
            .with_context(|| format!("creating the data directory {}", config.data_dir.display()))?;
    }
    let url = config.database_url();
    let db = Db::connect(&url)
        .await
        .with_context(|| format!("opening the database {}", parley_engine::store::redact(&url)))?;
    let secrets = secret_key(config, &db).await?;
    let db = db.with_secrets(secrets);
    let sealed = credentials::prepare(&db, now).await.context("checking the secret key (PARLEY_SECRET_KEY)")?;
    if sealed > 0 {
        tracing::info!(sealed, "provider keys stored as plain text were encrypted");
    }
    Ok(db)
}

/// The secret key: `PARLEY_SECRET_KEY`, else the data directory's `secret.key`, created (mode
/// 0600) when the database has never been sealed; never a new key for a sealed database.
async fn secret_key(config: &Config, db: &Db) -> anyhow::Result<parley_engine::secret::SecretBox> {
    use parley_engine::secret::SecretBox;
    if let Some(text) = config.secret_key.expose() {
        return SecretBox::parse(text).map_err(|e| anyhow::anyhow!("PARLEY_SECRET_KEY: {e}"));
    }
    let path = config.data_dir.join("secret.key");
    match std::fs::read_to_string(&path) {
        Ok(text) => return SecretBox::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("reading the secret key file {}", path.display()));
        }
        Err(_) => {}
    }
    if parley_engine::store::credentials::sealed_before(db).await? {
        anyhow::bail!(
            "this database holds provider keys encrypted with a secret key, but neither PARLEY_SECRET_KEY nor {} \
             is there: give the key used before",
            path.display()
        );
    }
    let (secrets, text) = SecretBox::generate();
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("creating the data directory {}", config.data_dir.display()))?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = match options.open(&path) {
        Ok(file) => file,
        // Another replica on this data directory made it a moment ago: use that key.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return key_written_by_another(&path).await,
        Err(e) => return Err(e).with_context(|| format!("creating the secret key file {}", path.display())),
    };
    std::io::Write::write_all(&mut file, format!("{text}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing the secret key file {}", path.display()))?;
    tracing::warn!(
        "created the secret key {} (mode 0600): provider keys are encrypted with it; back it up with the database",
        path.display()
    );
    Ok(secrets)
}

/// The key file another process has just created, once it has written the key (it writes one
/// line and syncs right after creating the file).
async fn key_written_by_another(path: &std::path::Path) -> anyhow::Result<parley_engine::secret::SecretBox> {
    for _ in 0..50 {
        if let Ok(Ok(secrets)) = std::fs::read_to_string(path).map(|t| parley_engine::secret::SecretBox::parse(&t)) {
            return Ok(secrets);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("the secret key file {} was created by another process but holds no key", path.display())
}

/// Payments as configured: the sandbox provider only when asked for; webhooks only with a secret
/// (a malformed one stops the start with the reason); pay links signed with the database's key.
pub async fn payments(config: &Config, db: &Db, public_url: &str, now: i64) -> anyhow::Result<Payments> {
    let secret = match config.payment_webhook_secret.expose() {
        Some(text) => Some(WebhookSecret::parse(text).map_err(anyhow::Error::msg)?),
        None => None,
    };
    let key = parley_engine::store::orders::link_key(db, &rand::random::<[u8; 32]>(), now)
        .await
        .context("reading the key that signs pay links")?;
    let links = PayLinks::new(public_url, &key);
    Ok(if config.payments_sandbox { Payments::sandbox(links, secret) } else { Payments::off(links) })
}

/// What start-up says about payments that are off or half on.
pub fn payments_notice(payments: &Payments) -> Vec<&'static str> {
    let mut lines = Vec::new();
    if payments.provider.is_none() {
        lines.push(
            "payments are off: the sandbox payment provider is off (PARLEY_PAYMENTS_SANDBOX=1 turns it on, for \
             demos and tests only) and no other provider is configured",
        );
    } else if payments.sandbox {
        lines.push(
            "the SANDBOX payment provider is on: anyone holding an order's pay link can mark it paid, no money moves",
        );
    }
    if payments.provider.is_some() && !payments.webhooks {
        lines.push(
            "no PARLEY_PAYMENT_WEBHOOK_SECRET: the payment webhook route /api/v1/payments/webhook is not mounted",
        );
    }
    lines
}

/// Binds, builds and serves in the background (tests use port 0).
pub async fn spawn(config: Config) -> anyhow::Result<Running> {
    spawn_with(config, Arc::new(SystemClock), Registry::builtin(&reqwest::Client::new())).await
}

/// Like [`spawn`], with a clock and a tool registry of the caller's choosing (tests).
pub async fn spawn_with(config: Config, clock: Arc<dyn Clock>, registry: Registry) -> anyhow::Result<Running> {
    let sqlite_lock = if config.allow_second_sqlite_process { None } else { lock_sqlite(&config)? };
    // Not tokio's `bind` (a backlog of 1,024): a burst of a thousand visitors at once overflowed
    // it, and every dropped connection attempt waited the kernel's 1 s before trying again.
    let listener = bind(config.addr).with_context(|| format!("binding {}", config.addr))?;
    let addr = listener.local_addr()?;
    let state = build_state(&config, addr, clock, registry).await?;
    let demo_host = match config.demo_host_addr {
        Some(demo) => {
            Some(demo_host::spawn(demo, state.http.public_url.clone()).await.context("starting the demo host page")?)
        }
        None => None,
    };
    let stop_http = CancellationToken::new();
    let smtp_addr = match config.mail.inbound_smtp_addr {
        Some(at) => Some(
            inbound_smtp::spawn(at, state.engine.clone(), stop_http.clone())
                .await
                .with_context(|| format!("starting the inbound SMTP listener on {at}"))?,
        ),
        None => None,
    };
    let http_task = serve_until(listener, routes::router(state.clone()), "server", stop_http.clone());
    Ok(Running { addr, state, demo_host, smtp_addr, stop_http, http_task, _sqlite_lock: sqlite_lock })
}
