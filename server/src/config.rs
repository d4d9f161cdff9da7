//! Configuration of the server, from flags or environment variables.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Settings of `parley serve` (also used by tests through [`crate::spawn`]).
#[derive(clap::Args, Clone, Debug)]
pub struct Config {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, global = true, env = "PARLEY_ADDR", default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,
    /// Directory for the SQLite database and other local data.
    #[arg(long, global = true, env = "PARLEY_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// Database URL; default: SQLite in the data directory. `postgres://…` for PostgreSQL.
    #[arg(long, global = true, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    /// Public URL of this server (snippets, payment links); default `http://ADDR`.
    #[arg(long, global = true, env = "PARLEY_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Also serve a demo host page that embeds the widget, on this address (another origin).
    #[arg(long, global = true, env = "PARLEY_DEMO_HOST_ADDR")]
    pub demo_host_addr: Option<SocketAddr>,
    /// Where cargo-leptos put the site (JS, WASM, CSS).
    #[arg(long, global = true, env = "PARLEY_SITE_ROOT", default_value = "target/site")]
    pub site_root: String,
    /// Pause between the demo model's tokens, in milliseconds.
    #[arg(long, global = true, env = "PARLEY_DEMO_TOKEN_DELAY_MS", default_value_t = 25)]
    pub demo_token_delay_ms: u64,
    /// Per-tool timeout, in milliseconds.
    #[arg(long, global = true, env = "PARLEY_TOOL_TIMEOUT_MS", default_value_t = 15_000)]
    pub tool_timeout_ms: u64,
    /// First-start default provider for the demo agents: an OpenAI-compatible base URL.
    #[arg(long, global = true, env = "PARLEY_OPENAI_BASE_URL")]
    pub openai_base_url: Option<String>,
    /// API key for that provider.
    #[arg(long, global = true, env = "PARLEY_OPENAI_API_KEY", hide_env_values = true)]
    pub openai_api_key: Option<String>,
    /// Secret that payment providers sign webhooks with (HMAC-SHA256); random when unset, which
    /// leaves only the sandbox page able to mark orders paid.
    #[arg(long, global = true, env = "PARLEY_PAYMENT_WEBHOOK_SECRET", hide_env_values = true)]
    pub payment_webhook_secret: Option<String>,
    /// Model for that provider.
    #[arg(long, global = true, env = "PARLEY_MODEL", default_value = "gpt-4o-mini")]
    pub model: String,
    /// Proxies (addresses or CIDR ranges, comma-separated) whose `X-Forwarded-For` header names
    /// the client; without it the client is the socket's peer and the header is ignored.
    #[arg(long, global = true, env = "PARLEY_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
    /// The key that encrypts provider keys at rest: 32 bytes as base64 or hex. Unset: the file
    /// `secret.key` in the data directory, created (mode 0600) on the first start.
    #[arg(long, global = true, env = "PARLEY_SECRET_KEY", hide_env_values = true)]
    pub secret_key: Option<String>,
    /// Console sign-in attempts allowed per client IP per minute (a burst of as many, then one
    /// every 60/N seconds); more answer 429.
    #[arg(long, global = true, env = "PARLEY_SIGNIN_PER_IP_PER_MINUTE", default_value_t = 10)]
    pub signin_per_ip_per_minute: u32,
    /// Password verifications (Argon2, about 19 MiB each) that run at once; other sign-ins wait
    /// up to 5 seconds for a turn, then answer 429.
    #[arg(long, global = true, env = "PARLEY_SIGNIN_CONCURRENCY", default_value_t = 4)]
    pub signin_concurrency: usize,
    /// A visitor token unused for this many hours stops working (the visitor gets a new one).
    #[arg(long, global = true, env = "PARLEY_VISITOR_IDLE_HOURS", default_value_t = 720)]
    pub visitor_idle_hours: u64,
}

impl Config {
    /// Defaults for tests: port 0, the given database, no demo host, a fast demo model.
    pub fn for_tests(database_url: String, data_dir: PathBuf) -> Config {
        Config {
            addr: "127.0.0.1:0".parse().expect("address"),
            data_dir,
            database_url: Some(database_url),
            public_url: None,
            demo_host_addr: None,
            site_root: "target/site".into(),
            demo_token_delay_ms: 0,
            tool_timeout_ms: 2_000,
            openai_base_url: None,
            openai_api_key: None,
            payment_webhook_secret: Some("test-webhook-secret".into()),
            model: "gpt-4o-mini".into(),
            trusted_proxies: String::new(),
            secret_key: None,
            signin_per_ip_per_minute: 10,
            signin_concurrency: 4,
            visitor_idle_hours: 720,
        }
    }

    /// The database URL in use.
    pub fn database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!("sqlite://{}?mode=rwc", self.data_dir.join("parley.db").display()),
        }
    }
}
