//! Configuration of the server, from flags or environment variables.

use std::net::SocketAddr;
use std::path::PathBuf;

use parley_app::server::limits::LimitSettings;

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
    /// Secret that payment webhooks are signed with, Standard Webhooks style: `whsec_<base64 of 24
    /// to 64 random bytes>`. Without it the webhook route is not mounted.
    #[arg(long, global = true, env = "PARLEY_PAYMENT_WEBHOOK_SECRET", hide_env_values = true)]
    pub payment_webhook_secret: Option<String>,
    /// Model for that provider.
    #[arg(long, global = true, env = "PARLEY_MODEL", default_value = "gpt-4o-mini")]
    pub model: String,
    /// Proxies (addresses or CIDR ranges, comma-separated) whose `X-Forwarded-For` header names
    /// the client; without it the client is the socket's peer and the header is ignored.
    #[arg(long, global = true, env = "PARLEY_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
    /// Turns on the sandbox payment provider (a test page that marks orders paid, no money
    /// moves). Off by default: without it (and without a real provider) payments are off.
    #[arg(long, global = true, env = "PARLEY_PAYMENTS_SANDBOX", default_value_t = false, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub payments_sandbox: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
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
    /// Turns one agent may start per minute.
    #[arg(long, global = true, env = "PARLEY_LIMIT_TURNS_PER_AGENT", default_value_t = LimitSettings::default().turns_per_agent)]
    pub limit_turns_per_agent: u32,
    /// Answer streams open at once on this server (0: no cap).
    #[arg(long, global = true, env = "PARLEY_LIMIT_STREAMS", default_value_t = LimitSettings::default().max_streams)]
    pub limit_streams: usize,
    /// Answer streams one visitor may hold open at once (0: no cap).
    #[arg(long, global = true, env = "PARLEY_LIMIT_STREAMS_PER_VISITOR", default_value_t = LimitSettings::default().max_streams_per_visitor)]
    pub limit_streams_per_visitor: usize,
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
            turns_per_agent: self.limit_turns_per_agent,
            max_streams: self.limit_streams,
            max_streams_per_visitor: self.limit_streams_per_visitor,
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
            limit_turns_per_agent: s.turns_per_agent,
            limit_streams: s.max_streams,
            limit_streams_per_visitor: s.max_streams_per_visitor,
        }
    }
}

/// The webhook secret of [`Config::for_tests`].
pub const TEST_WEBHOOK_SECRET: &str = "whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIzNDU2Nzg5YWI=";

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
            payment_webhook_secret: Some(TEST_WEBHOOK_SECRET.into()),
            model: "gpt-4o-mini".into(),
            trusted_proxies: String::new(),
            limits: LimitArgs::defaults(),
            payments_sandbox: false,
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        config: Config,
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
}
