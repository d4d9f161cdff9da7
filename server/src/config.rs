//! Configuration of the server, from flags or environment variables.

use std::net::SocketAddr;
use std::path::PathBuf;

use parley_engine::engine::outbound::{OutboundSettings, PrivateEndpoints};
use parley_engine::engine::provider::h2c::H2cSettings;
use parley_engine::limits::LimitSettings;
use parley_engine::secret::ApiKey;

mod mail;
pub use mail::MailArgs;
mod spend;
pub use spend::SpendArgs;

/// A secret setting (a provider's key, the sealing key, a webhook or SMTP secret), held as an
/// [`ApiKey`] from the moment it is read, so that no `Debug` of the configuration, no log line and
/// no error message can print it. Blank (unset, or set to an empty value) means none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SecretArg(Option<ApiKey>);

impl SecretArg {
    /// clap's parser: never fails; surrounding blanks are trimmed, nothing left means none.
    pub fn parse(text: &str) -> Result<SecretArg, std::convert::Infallible> {
        Ok(SecretArg(ApiKey::new(text)))
    }

    pub fn key(&self) -> Option<&ApiKey> {
        self.0.as_ref()
    }

    /// The secret itself, for the one place that uses it.
    pub fn expose(&self) -> Option<&str> {
        self.0.as_ref().map(ApiKey::expose)
    }
}

impl From<&str> for SecretArg {
    fn from(text: &str) -> SecretArg {
        SecretArg(ApiKey::new(text))
    }
}

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
    /// Where `.ci/build-widget.sh` put the chat panel's own bundle (served at `/widget/`).
    #[arg(long, global = true, env = "PARLEY_WIDGET_DIR", default_value = "target/widget")]
    pub widget_dir: String,
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
    #[arg(long, global = true, env = "PARLEY_OPENAI_API_KEY", hide_env_values = true, value_parser = SecretArg::parse, default_value = "", hide_default_value = true)]
    pub openai_api_key: SecretArg,
    /// Secret that payment webhooks are signed with, Standard Webhooks style: `whsec_<base64 of 24
    /// to 64 random bytes>`. Without it the webhook route is not mounted.
    #[arg(long, global = true, env = "PARLEY_PAYMENT_WEBHOOK_SECRET", hide_env_values = true, value_parser = SecretArg::parse, default_value = "", hide_default_value = true)]
    pub payment_webhook_secret: SecretArg,
    /// Model for that provider.
    #[arg(long, global = true, env = "PARLEY_MODEL", default_value = "gpt-4o-mini")]
    pub model: String,
    /// The fallback model of agents that name none, per provider: `provider=model` pairs,
    /// comma-separated (`anthropic=claude-3-5-haiku-latest,openai=gpt-4o-mini`); empty: none.
    #[arg(long, global = true, env = "PARLEY_FALLBACK_MODELS", default_value = parley_engine::engine::provider::fallbacks::DEFAULT_FALLBACK_MODELS)]
    pub fallback_models: String,
    /// Proxies (addresses or CIDR ranges, comma-separated) whose `X-Forwarded-For` header names
    /// the client; without it the client is the socket's peer and the header is ignored.
    #[arg(long, global = true, env = "PARLEY_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
    /// A request header in which the proxy in front of Parley names the visitor's country (two
    /// letters: `CF-IPCountry` on Cloudflare, a GeoIP module's header on nginx); kept coarse on
    /// contacts. Empty: no country. Name it only if the proxy always sets or clears it.
    #[arg(long, global = true, env = "PARLEY_COUNTRY_HEADER", default_value = "")]
    pub country_header: String,
    /// Turns on the sandbox payment provider (a test page that marks orders paid, no money
    /// moves). Off by default: without it (and without a real provider) payments are off.
    #[arg(long, global = true, env = "PARLEY_PAYMENTS_SANDBOX", default_value_t = false, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub payments_sandbox: bool,
    /// An OpenAI-compatible embeddings endpoint (`…/v1`): knowledge search blends vector
    /// similarity in, and stored knowledge without vectors gets them in the background.
    #[arg(long, global = true, env = "PARLEY_EMBEDDINGS_BASE_URL")]
    pub embeddings_base_url: Option<String>,
    /// API key of the embeddings endpoint.
    #[arg(long, global = true, env = "PARLEY_EMBEDDINGS_API_KEY", hide_env_values = true, value_parser = SecretArg::parse, default_value = "", hide_default_value = true)]
    pub embeddings_api_key: SecretArg,
    /// Embeddings model.
    #[arg(long, global = true, env = "PARLEY_EMBEDDINGS_MODEL", default_value = "text-embedding-3-small")]
    pub embeddings_model: String,
    /// Lets every outbound call (model providers, embeddings, owners' tools, webhooks) use plain
    /// `http` and private, loopback or link-local addresses. Off by default: only public `https`
    /// endpoints, plus those of `PARLEY_PRIVATE_ENDPOINTS`.
    #[arg(long, global = true, env = "PARLEY_ALLOW_PRIVATE_ENDPOINTS", default_value_t = false, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub allow_private_endpoints: bool,
    /// The private destinations outbound calls may reach (plain `http` allowed there), comma
    /// separated: addresses or CIDR ranges (every port) and `host:port` (that port only), e.g.
    /// `127.0.0.1:11434,10.0.0.0/8,ollama:11434`. Empty by default.
    #[arg(long, global = true, env = "PARLEY_PRIVATE_ENDPOINTS", default_value = "")]
    pub private_endpoints: String,
    /// The plain-`http` model endpoints (self-hosted gateways, local model servers) that speak
    /// HTTP/2 with prior knowledge (h2c), in the forms of `PARLEY_PRIVATE_ENDPOINTS` (`*`: every
    /// plain-http model endpoint). Their answers share a few multiplexed connections instead of
    /// one HTTP/1.1 connection each. Empty by default (`https` endpoints negotiate HTTP/2
    /// themselves).
    #[arg(long, global = true, env = "PARLEY_H2C_ENDPOINTS", default_value = "")]
    pub h2c_endpoints: String,
    /// The most answers one h2c connection carries at once; a further answer opens another
    /// connection. Keep it at or under the gateway's `SETTINGS_MAX_CONCURRENT_STREAMS`.
    #[arg(long, global = true, env = "PARLEY_H2C_STREAMS_PER_CONNECTION", default_value_t = parley_engine::engine::provider::h2c::DEFAULT_STREAMS_PER_CONNECTION as u64, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub h2c_streams_per_connection: u64,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub spend: SpendArgs,
    #[command(flatten)]
    pub mail: MailArgs,
    /// The key that encrypts provider keys at rest: 32 bytes as base64 or hex. Unset: the file
    /// `secret.key` in the data directory, created (mode 0600) on the first start.
    #[arg(long, global = true, env = "PARLEY_SECRET_KEY", hide_env_values = true, value_parser = SecretArg::parse, default_value = "", hide_default_value = true)]
    pub secret_key: SecretArg,
    /// The VAPID private key of Web Push to operators' browsers: a P-256 private key, 32 bytes
    /// base64url. Unset: a key pair made on the first start, stored sealed in the database.
    #[arg(long, global = true, env = "PARLEY_VAPID_PRIVATE_KEY", hide_env_values = true, value_parser = SecretArg::parse, default_value = "", hide_default_value = true)]
    pub vapid_private_key: SecretArg,
    /// Who push services may contact about this server's pushes (the VAPID `sub`): `mailto:…`
    /// or an `https:` address. Unset: the public URL.
    #[arg(long, global = true, env = "PARLEY_VAPID_SUBJECT")]
    pub vapid_subject: Option<String>,
    /// Console sign-in attempts allowed per client IP per minute (a burst of as many, then one
    /// every 60/N seconds); more answer 429.
    #[arg(long, global = true, env = "PARLEY_SIGNIN_PER_IP_PER_MINUTE", default_value_t = 10)]
    pub signin_per_ip_per_minute: u32,
    /// Console sign-in attempts allowed for one email from all addresses together per minute (a
    /// burst of as many, then one every 60/N seconds); more answer 429 with a short wait. Guesses
    /// from one address slow only that address.
    #[arg(long, global = true, env = "PARLEY_SIGNIN_PER_EMAIL_PER_MINUTE", default_value_t = parley_engine::auth::PER_EMAIL_PER_MINUTE)]
    pub signin_per_email_per_minute: u32,
    /// MiB of images visitors have uploaded and not yet sent that one address (an IPv6 address
    /// by its /64) may park; past it uploads answer 429. 0: no limit.
    #[arg(long, global = true, env = "PARLEY_PARKED_IMAGE_MIB_PER_IP", default_value_t = 100)]
    pub parked_image_mib_per_ip: u64,
    /// MiB of images uploaded and not yet sent the server keeps from everyone together; past it
    /// uploads answer 429. 0: no limit.
    #[arg(long, global = true, env = "PARLEY_PARKED_IMAGE_MIB_TOTAL", default_value_t = 2048)]
    pub parked_image_mib_total: u64,
    /// Password verifications (Argon2, about 19 MiB each) that run at once; other sign-ins wait
    /// up to 5 seconds for a turn, then answer 429.
    #[arg(long, global = true, env = "PARLEY_SIGNIN_CONCURRENCY", default_value_t = 4)]
    pub signin_concurrency: usize,
    /// A visitor token unused for this many hours stops working (the visitor gets a new one).
    #[arg(long, global = true, env = "PARLEY_VISITOR_IDLE_HOURS", default_value_t = 720)]
    pub visitor_idle_hours: u64,
    /// On SIGTERM or Ctrl-C, how long running answers may take to finish (seconds) before they
    /// are stopped as `interrupted`; new turns are refused with 503 meanwhile.
    #[arg(long, global = true, env = "PARLEY_SHUTDOWN_GRACE_SECS", default_value_t = 20)]
    pub shutdown_grace_secs: u64,
    /// A process that has not renewed its lease for this many seconds is taken for dead: another
    /// replica on the same PostgreSQL finishes its answers as `interrupted`.
    #[arg(long, global = true, env = "PARLEY_LEASE_TTL_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(6..))]
    pub lease_ttl_secs: u64,
    /// The knowledge crawler's pause after each request, per worker (milliseconds); a site's
    /// robots.txt `Crawl-delay` wins when longer (up to 10 s).
    #[arg(long, global = true, env = "PARLEY_CRAWL_DELAY_MS", default_value_t = 100)]
    pub crawl_delay_ms: u64,
    /// The knowledge crawler's requests at once to one site.
    #[arg(long, global = true, env = "PARLEY_CRAWL_CONCURRENCY", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=16))]
    pub crawl_concurrency: u64,
    /// The largest page or file the knowledge crawler and file uploads read (KiB).
    #[arg(long, global = true, env = "PARLEY_CRAWL_MAX_PAGE_KIB", default_value_t = 2048)]
    pub crawl_max_page_kib: u64,
    /// Log lines as `text` (for people) or `json` (one object per line, for log collectors).
    #[arg(long, global = true, env = "PARLEY_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
    /// Tests only: lets a second server in the same process open the SQLite file the first one
    /// serves (to simulate a crash and restart without ending the first).
    #[arg(long, hide = true, default_value_t = false)]
    pub allow_second_sqlite_process: bool,
}

/// Abuse limits of the public API (0 turns a rate off). See `docs/security.md`.
#[derive(clap::Args, Clone, Debug)]
pub struct LimitArgs {
    /// Turn every rate and stream cap off (benchmarks against a local fake upstream only).
    #[arg(long, global = true, env = "PARLEY_NO_LIMITS", default_value_t = false, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub no_limits: bool,
    /// New visitors per IP address per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_VISITORS_PER_IP", default_value_t = LimitSettings::default().visitors_per_ip)]
    pub limit_visitors_per_ip: u32,
    /// Messages per IP address per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_SENDS_PER_IP", default_value_t = LimitSettings::default().sends_per_ip)]
    pub limit_sends_per_ip: u32,
    /// Messages per visitor per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_SENDS_PER_VISITOR", default_value_t = LimitSettings::default().sends_per_visitor)]
    pub limit_sends_per_visitor: u32,
    /// Image uploads per visitor per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_UPLOADS_PER_VISITOR", default_value_t = LimitSettings::default().uploads_per_visitor)]
    pub limit_uploads_per_visitor: u32,
    /// Stream resumes per visitor per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_RESUMES_PER_VISITOR", default_value_t = LimitSettings::default().resumes_per_visitor)]
    pub limit_resumes_per_visitor: u32,
    /// Lead forms per visitor per hour.
    #[arg(long, global = true, env = "PARLEY_LIMIT_LEADS_PER_VISITOR_PER_HOUR", default_value_t = LimitSettings::default().leads_per_visitor_per_hour)]
    pub limit_leads_per_visitor_per_hour: u32,
    /// Ratings (of answers and conversations) per visitor per hour.
    #[arg(long, global = true, env = "PARLEY_LIMIT_RATINGS_PER_VISITOR_PER_HOUR", default_value_t = LimitSettings::default().ratings_per_visitor_per_hour)]
    pub limit_ratings_per_visitor_per_hour: u32,
    /// Turns one agent may start per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_TURNS_PER_AGENT", default_value_t = LimitSettings::default().turns_per_agent)]
    pub limit_turns_per_agent: u32,
    /// Public reads (an agent's configuration, the embed page) per IP address per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_READS_PER_IP", default_value_t = LimitSettings::default().reads_per_ip)]
    pub limit_reads_per_ip: u32,
    /// MCP requests per IP address per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_MCP_PER_IP", default_value_t = LimitSettings::default().mcp_per_ip)]
    pub limit_mcp_per_ip: u32,
    /// Typing notices and stops per visitor per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_SMALL_CALLS_PER_VISITOR", default_value_t = LimitSettings::default().small_calls_per_visitor)]
    pub limit_small_calls_per_visitor: u32,
    /// Answer streams open at once on this server (0: no cap).
    #[arg(long, global = true, env = "PARLEY_LIMIT_STREAMS", default_value_t = LimitSettings::default().max_streams)]
    pub limit_streams: usize,
    /// Answer streams one visitor may hold open at once (0: no cap).
    #[arg(long, global = true, env = "PARLEY_LIMIT_STREAMS_PER_VISITOR", default_value_t = LimitSettings::default().max_streams_per_visitor)]
    pub limit_streams_per_visitor: usize,
    /// Streams one address (an IPv6 address by its /64) may hold open at once (0: no cap).
    #[arg(long, global = true, env = "PARLEY_LIMIT_STREAMS_PER_IP", default_value_t = LimitSettings::default().max_streams_per_ip)]
    pub limit_streams_per_ip: usize,
    /// Seconds a followed conversation's stream may stay without an event before it ends (the
    /// panel reconnects; 0: never).
    #[arg(long, global = true, env = "PARLEY_RESUME_IDLE_SECS", default_value_t = LimitSettings::default().resume_idle.as_secs())]
    pub resume_idle_secs: u64,
}

impl LimitArgs {
    /// The defaults.
    pub fn defaults() -> Self {
        LimitArgs::from(LimitSettings::default())
    }

    /// The settings the server runs with.
    pub fn settings(&self) -> LimitSettings {
        if self.no_limits {
            return LimitSettings::off();
        }
        LimitSettings {
            visitors_per_ip: self.limit_visitors_per_ip,
            sends_per_ip: self.limit_sends_per_ip,
            sends_per_visitor: self.limit_sends_per_visitor,
            uploads_per_visitor: self.limit_uploads_per_visitor,
            resumes_per_visitor: self.limit_resumes_per_visitor,
            leads_per_visitor_per_hour: self.limit_leads_per_visitor_per_hour,
            ratings_per_visitor_per_hour: self.limit_ratings_per_visitor_per_hour,
            turns_per_agent: self.limit_turns_per_agent,
            reads_per_ip: self.limit_reads_per_ip,
            mcp_per_ip: self.limit_mcp_per_ip,
            small_calls_per_visitor: self.limit_small_calls_per_visitor,
            max_streams: self.limit_streams,
            max_streams_per_visitor: self.limit_streams_per_visitor,
            max_streams_per_ip: self.limit_streams_per_ip,
            resume_idle: std::time::Duration::from_secs(self.resume_idle_secs),
        }
    }
}

impl From<LimitSettings> for LimitArgs {
    fn from(s: LimitSettings) -> Self {
        LimitArgs {
            no_limits: false,
            limit_visitors_per_ip: s.visitors_per_ip,
            limit_sends_per_ip: s.sends_per_ip,
            limit_sends_per_visitor: s.sends_per_visitor,
            limit_uploads_per_visitor: s.uploads_per_visitor,
            limit_resumes_per_visitor: s.resumes_per_visitor,
            limit_leads_per_visitor_per_hour: s.leads_per_visitor_per_hour,
            limit_ratings_per_visitor_per_hour: s.ratings_per_visitor_per_hour,
            limit_turns_per_agent: s.turns_per_agent,
            limit_reads_per_ip: s.reads_per_ip,
            limit_mcp_per_ip: s.mcp_per_ip,
            limit_small_calls_per_visitor: s.small_calls_per_visitor,
            limit_streams: s.max_streams,
            limit_streams_per_visitor: s.max_streams_per_visitor,
            limit_streams_per_ip: s.max_streams_per_ip,
            resume_idle_secs: s.resume_idle.as_secs(),
        }
    }
}

/// The webhook secret of [`Config::for_tests`].
pub const TEST_WEBHOOK_SECRET: &str = "whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIzNDU2Nzg5YWI=";

impl Config {
    /// Where outbound calls may go; a bad `PARLEY_PRIVATE_ENDPOINTS` stops the start with its
    /// reason.
    pub fn outbound(&self) -> anyhow::Result<OutboundSettings> {
        let private = PrivateEndpoints::parse(&self.private_endpoints)
            .map_err(|e| anyhow::anyhow!("PARLEY_PRIVATE_ENDPOINTS: {e}"))?;
        Ok(OutboundSettings { allow_private: self.allow_private_endpoints, private })
    }

    /// The model endpoints reached over h2c; a bad `PARLEY_H2C_ENDPOINTS` stops the start.
    pub fn h2c(&self) -> anyhow::Result<H2cSettings> {
        let endpoints =
            PrivateEndpoints::parse(&self.h2c_endpoints).map_err(|e| anyhow::anyhow!("PARLEY_H2C_ENDPOINTS: {e}"))?;
        let streams_per_connection = usize::try_from(self.h2c_streams_per_connection).unwrap_or(usize::MAX);
        Ok(H2cSettings { endpoints, streams_per_connection })
    }

    /// The embeddings client, when an endpoint is configured.
    pub fn embedder(&self, http: reqwest::Client) -> Option<parley_engine::engine::knowledge::embeddings::Embedder> {
        let base = self.embeddings_base_url.as_deref().map(str::trim).filter(|b| !b.is_empty())?;
        let key = self.embeddings_api_key.expose().map(str::to_owned);
        Some(parley_engine::engine::knowledge::embeddings::Embedder::new(http, base, key, &self.embeddings_model))
    }

    /// Defaults for tests: port 0, the given database, no demo host, a fast demo model.
    pub fn for_tests(database_url: String, data_dir: PathBuf) -> Config {
        Config {
            addr: "127.0.0.1:0".parse().expect("address"),
            data_dir,
            database_url: Some(database_url),
            public_url: None,
            demo_host_addr: None,
            site_root: "target/site".into(),
            widget_dir: "target/widget".into(),
            demo_token_delay_ms: 0,
            tool_timeout_ms: 2_000,
            openai_base_url: None,
            openai_api_key: SecretArg::default(),
            payment_webhook_secret: SecretArg::from(TEST_WEBHOOK_SECRET),
            model: "gpt-4o-mini".into(),
            // No default fallback: each test says which model takes over.
            fallback_models: String::new(),
            trusted_proxies: String::new(),
            country_header: String::new(),
            limits: LimitArgs::defaults(),
            spend: SpendArgs::defaults(),
            mail: MailArgs::default(),
            payments_sandbox: false,
            allow_private_endpoints: false,
            private_endpoints: String::new(),
            h2c_endpoints: String::new(),
            h2c_streams_per_connection: parley_engine::engine::provider::h2c::DEFAULT_STREAMS_PER_CONNECTION as u64,
            embeddings_base_url: None,
            embeddings_api_key: SecretArg::default(),
            embeddings_model: "text-embedding-3-small".into(),
            secret_key: SecretArg::default(),
            vapid_private_key: SecretArg::default(),
            vapid_subject: None,
            signin_per_ip_per_minute: 10,
            signin_per_email_per_minute: parley_engine::auth::PER_EMAIL_PER_MINUTE,
            parked_image_mib_per_ip: 100,
            parked_image_mib_total: 2048,
            signin_concurrency: 4,
            visitor_idle_hours: 720,
            shutdown_grace_secs: 20,
            lease_ttl_secs: 30,
            crawl_delay_ms: 100,
            crawl_concurrency: 4,
            crawl_max_page_kib: 2048,
            log_format: "text".into(),
            allow_second_sqlite_process: false,
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        config: Config,
    }

    /// Secrets are held as keys from the start: a `Debug` of the configuration (a log line, a
    /// panic) shows only hints; blank values mean none.
    #[test]
    fn secrets_never_print_and_blank_means_none() {
        let cli = Cli::try_parse_from([
            "parley",
            "--openai-api-key",
            "sk-live-0123456789abcdef",
            "--secret-key",
            "  ",
            "--smtp-password",
            "hunter2-hunter2-hunter2",
        ])
        .unwrap();
        let shown = format!("{:?}", cli.config);
        assert!(!shown.contains("sk-live-0123456789abcdef") && !shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("••••cdef"), "{shown}");
        assert_eq!(cli.config.openai_api_key.expose(), Some("sk-live-0123456789abcdef"));
        assert_eq!(cli.config.secret_key.key(), None);
        assert_eq!(cli.config.payment_webhook_secret.key(), None);
    }

    #[test]
    fn limits_can_be_turned_off_as_the_benchmark_does() {
        // `PARLEY_NO_LIMITS=1` (what `parley bench` and the README set) reads as on.
        let on = Cli::try_parse_from(["parley", "--no-limits", "1"]).expect("1 is a yes");
        assert_eq!(on.config.limits.settings(), LimitSettings::off());
        let bare = Cli::try_parse_from(["parley", "--no-limits"]).expect("a bare flag is a yes");
        assert!(bare.config.limits.no_limits);
        let off = Cli::try_parse_from(["parley"]).expect("defaults");
        assert_eq!(off.config.limits.settings(), LimitSettings::default());
    }

    #[test]
    fn spend_settings_have_safe_defaults_and_refuse_nonsense() {
        let defaults = Cli::try_parse_from(["parley"]).unwrap().config.spend.settings().unwrap();
        assert_eq!(defaults.agent_daily_cap_usd, Some(10.0), "the agent's daily cap is on by default");
        assert_eq!(defaults.visitor_daily_cap_usd, Some(1.0));
        assert_eq!(defaults.address_daily_cap_usd, Some(5.0));
        assert_eq!(defaults.answer_max_tokens, 4096);
        let off =
            Cli::try_parse_from(["parley", "--agent-daily-cap-usd", "0", "--visitor-daily-cap-usd", "0"]).unwrap();
        let off = off.config.spend.settings().unwrap();
        assert_eq!((off.agent_daily_cap_usd, off.visitor_daily_cap_usd), (None, None), "0 turns a cap off");
        for bad in [
            &["--answer-max-tokens", "0"][..],
            &["--answer-time-limit-secs", "0"],
            &["--agent-daily-cap-usd=-1"],
            &["--unpriced-output-per-mtok", "NaN"],
        ] {
            let cli = Cli::try_parse_from(std::iter::once("parley").chain(bad.iter().copied())).unwrap();
            let error = cli.config.spend.settings().expect_err("refused").to_string();
            assert!(error.starts_with("PARLEY_"), "the message names the setting: {error}");
        }
    }
}
