//! The engine: everything that answers a visitor. Providers, tools, the turn loop, live channels
//! and the stream writer, behind one cloneable [`Engine`] handle.

pub mod answer_tests;
pub mod answers;
pub mod attachments;
pub mod budget;
pub mod canary;
pub mod chat;
pub mod clock;
pub mod console;
pub mod contacts;
pub mod context;
pub mod copilot;
pub mod engage;
pub mod experts;
pub mod fetch;
pub mod frame;
pub mod hours;
pub mod hub;
pub mod identity;
pub mod inbox;
pub mod jobs;
pub mod jwt_crypto;
pub mod knowledge;
/// The language of a reply or a mail (a leaf module at the crate root: the store uses it too).
pub use crate::lang;
mod lookup;
pub mod mail;
pub mod notify;
pub mod outbound;
mod owner_tools;
pub mod payments;
pub mod pricing;
pub mod privacy;
pub mod provider;
pub mod recovery;
pub mod relay;
pub mod replay;
pub mod reports;
pub mod search;
pub mod shutdown;
pub mod sources;
pub mod state_tag;
pub mod takeover;
pub mod tools;
pub mod turn;
pub mod webhooks;
pub mod writer;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use clock::Clock;
use hub::Hub;
use lookup::TtlCache;
use provider::ChatModel;
use provider::demo::DemoModel;
use provider::openai::OpenAiClient;
use provider::transport::TransportSettings;
use tools::registry::Registry;
use writer::Writer;

use crate::store::agents::{self, Agent, ProviderKind};
use crate::store::visitors::Visitor;
use crate::store::{Db, DbError, DbKind};

/// Tunables of the engine.
#[derive(Clone, Debug)]
pub struct EngineSettings {
    pub tool_timeout: Duration,
    /// Earlier messages given to the model.
    pub history_limit: i64,
    /// Pause between the demo model's tokens.
    pub demo_token_delay: Duration,
    /// Timeouts and retries of every HTTP model provider.
    pub transport: TransportSettings,
    /// The plain-http model endpoints reached over HTTP/2 with prior knowledge.
    pub h2c: provider::h2c::H2cSettings,
    /// How long the stream writer gathers before it writes.
    pub writer_interval: Duration,
    /// Events and rows waiting to be stored past which turns wait (backpressure).
    pub writer_queue_limit: usize,
    /// A process whose lease is not renewed for this long is taken for dead: its answers are
    /// recovered as `interrupted` by another replica.
    pub lease_ttl: Duration,
    /// How long agents and visitor tokens are cached.
    pub cache_ttl: Duration,
    /// A visitor token unused this long is refused.
    pub visitor_idle: Duration,
    /// Prices of unpriced models, `max_tokens`, the answer's time limit, daily caps.
    pub spend: budget::SpendSettings,
    /// The fallback model of agents that name none, per provider.
    pub fallbacks: provider::fallbacks::DefaultFallbacks,
    /// Where owner-defined tools may send requests.
    pub outbound: outbound::OutboundSettings,
    /// How mail leaves (`None`: no mail).
    pub mail: Option<mail::MailSettings>,
    /// Images uploaded and not yet sent: the most bytes parked from one address, and overall.
    pub parked_images: attachments::ParkedLimits,
    /// Mails visitors may cause (confirmation codes and transcripts) per day.
    pub transcripts: mail::TranscriptLimits,
    /// How knowledge sources are crawled and imported: limits, politeness, the crawler's name.
    pub crawl: sources::CrawlSettings,
    /// Web Push to operators' browsers: the VAPID key and subject, the pushes' TTL.
    pub push: notify::PushSettings,
    /// Mail to visitors who left (when they count as gone, the inbound domain, link lifetimes).
    pub returns: mail::ReturnSettings,
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            tool_timeout: Duration::from_secs(15),
            history_limit: 20,
            demo_token_delay: Duration::from_millis(25),
            transport: TransportSettings::default(),
            h2c: provider::h2c::H2cSettings::default(),
            writer_interval: Duration::from_millis(50),
            writer_queue_limit: 200_000,
            lease_ttl: Duration::from_secs(30),
            cache_ttl: Duration::from_secs(10),
            visitor_idle: Duration::from_secs(30 * 24 * 3600),
            spend: budget::SpendSettings::default(),
            fallbacks: provider::fallbacks::DefaultFallbacks::default(),
            outbound: outbound::OutboundSettings::default(),
            mail: None,
            parked_images: attachments::ParkedLimits::default(),
            transcripts: mail::TranscriptLimits::default(),
            crawl: sources::CrawlSettings::default(),
            push: notify::PushSettings::default(),
            returns: mail::ReturnSettings::default(),
        }
    }
}

/// What tools use besides the database: knowledge search and payments.
#[derive(Debug)]
pub struct Services {
    pub knowledge: knowledge::Knowledge,
    pub payments: payments::Payments,
    /// Where visitors reach this server (payment links).
    pub public_url: String,
}

struct Inner {
    db: Db,
    services: Arc<Services>,
    /// The services of trial turns (answer tests, the draft's preview): the same knowledge, and
    /// payments in the sandbox without webhooks whatever the server's provider.
    trial_services: Arc<Services>,
    console: console::ConsoleFeed,
    clock: Arc<dyn Clock>,
    http: reqwest::Client,
    /// The connections of model endpoints that speak h2c ([`provider::h2c`]).
    h2c: Arc<provider::h2c::H2cPool>,
    /// The tools Parley ships (or a test's).
    builtin: Registry,
    /// Those and the owner's tools, as last read ([`Engine::reload_tools`]), with the
    /// fingerprint of the owner's tools they were built from.
    registry: RwLock<(Registry, Option<(i64, i64)>)>,
    /// The client of owner-defined endpoints (see [`outbound`]).
    outbound: reqwest::Client,
    hub: Hub,
    writer: Writer,
    settings: EngineSettings,
    demo: Arc<DemoModel>,
    agents: TtlCache<Option<Arc<Agent>>>,
    visitors: TtlCache<Visitor>,
    prices: pricing::Prices,
    budgets: budget::Budgets,
    experts: experts::Experts,
    shutdown: shutdown::Shutdown,
    /// This process's lease id.
    process_id: String,
    /// Messages to and from other processes on the same PostgreSQL (none on SQLite).
    relay: Option<Arc<relay::Relay>>,
    /// Wakes this process's webhook and mail senders when something was queued.
    outbox: Arc<webhooks::Wake>,
    /// How mail leaves, if it does.
    mail: Option<mail::MailSettings>,
    /// A test's pause inside the next send ([`Engine::pause_next_send`]).
    send_pause: chat::SendPause,
    /// The knowledge sources' runs this process runs.
    sources: Arc<sources::Runner>,
    /// Visitors' open event streams per conversation on this process (see [`mail::Here`]).
    presence: mail::Presence,
    /// The answer-test runs this process runs.
    answer_runs: answer_tests::AnswerRuns,
    /// One refresh of the reports' roll-up at a time in this process.
    report_refresh: tokio::sync::Mutex<()>,
}

/// The engine handle; cheap to clone.
#[derive(Clone)]
pub struct Engine(Arc<Inner>);

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("tools", &self.registry()).finish()
    }
}

impl Engine {
    /// Starts the engine (and its stream writer) on a connected database.
    pub fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        http: reqwest::Client,
        registry: Registry,
        settings: EngineSettings,
        services: Services,
    ) -> Self {
        let writer = Writer::spawn(db.clone(), clock.clone(), settings.writer_interval, settings.writer_queue_limit);
        // Replicas share PostgreSQL, so their daily totals must too; one SQLite process keeps
        // them in memory (no database round trip before a model call).
        let budgets = match db.kind() {
            DbKind::Postgres => budget::Budgets::shared(),
            DbKind::Sqlite => budget::Budgets::default(),
        };
        let demo = Arc::new(DemoModel { token_delay: settings.demo_token_delay });
        let prices = pricing::Prices::with_default(
            settings.spend.unpriced_input_per_mtok,
            settings.spend.unpriced_output_per_mtok,
        );
        let process_id = crate::store::new_id();
        // Replicas share PostgreSQL: a conversation's events are numbered by the process holding
        // its slot, and what one process stores reaches the others' streams.
        let replicas = (db.kind() == DbKind::Postgres).then(|| hub::Replicas {
            process_id: process_id.clone(),
            writer: writer.clone(),
            clock: clock.clone(),
            lease_ttl: settings.lease_ttl,
        });
        let relay = relay::for_db(&db, &process_id);
        let mail = settings.mail.clone();
        let trial_services = Arc::new(Services {
            knowledge: services.knowledge.clone(),
            payments: payments::Payments::sandbox(services.payments.links.clone(), None),
            public_url: services.public_url.clone(),
        });
        Engine(Arc::new(Inner {
            services: Arc::new(services),
            trial_services,
            console: console::feed(),
            hub: Hub::new(db.clone(), replicas),
            agents: TtlCache::new(settings.cache_ttl),
            visitors: TtlCache::new(settings.cache_ttl * 6),
            db,
            clock,
            http,
            h2c: Arc::new(provider::h2c::H2cPool::new(settings.h2c, settings.outbound)),
            registry: RwLock::new((registry.clone(), None)),
            builtin: registry,
            outbound: outbound::client(settings.outbound),
            writer,
            settings,
            demo,
            prices,
            budgets,
            experts: experts::Experts::default(),
            shutdown: shutdown::Shutdown::default(),
            process_id,
            relay,
            outbox: Arc::default(),
            mail,
            send_pause: chat::SendPause::default(),
            sources: sources::runner(),
            presence: mail::Presence::default(),
            answer_runs: answer_tests::AnswerRuns::default(),
            report_refresh: tokio::sync::Mutex::new(()),
        }))
    }

    pub fn db(&self) -> &Db {
        &self.0.db
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.0.clock
    }

    pub fn console_feed(&self) -> &console::ConsoleFeed {
        &self.0.console
    }

    pub fn services(&self) -> &Arc<Services> {
        &self.0.services
    }

    /// The agent's tools, described for what its knowledge covers (the knowledge tools name its
    /// bases and categories).
    pub async fn tools_for(&self, agent: &Agent) -> tools::registry::AgentTools {
        let tools = self.registry().for_agent(agent);
        if !agent.has_capability("knowledge_search") {
            return tools;
        }
        match self.0.services.knowledge.scope(&agent.id).await {
            Ok(scope) => tools.tailored(&scope),
            Err(e) => {
                tracing::warn!(error = %e, "tools described without the agent's knowledge");
                tools
            }
        }
    }

    pub fn hub(&self) -> &Hub {
        &self.0.hub
    }

    pub fn settings(&self) -> &EngineSettings {
        &self.0.settings
    }

    /// The model price table in memory.
    pub fn prices(&self) -> &pricing::Prices {
        &self.0.prices
    }

    /// Today's spend of each agent.
    pub fn budgets(&self) -> &budget::Budgets {
        &self.0.budgets
    }

    /// Reads the price table, the experts and the owner's tools from the database (at start and
    /// after an edit).
    pub async fn reload_prices(&self) -> Result<(), DbError> {
        let rows = crate::store::prices::list(&self.0.db).await?;
        self.0.prices.replace(rows);
        let experts_version = crate::store::experts::version(&self.0.db).await?;
        self.0.experts.replace_at(crate::store::experts::list(&self.0.db).await?, experts_version);
        self.reload_tools().await
    }

    /// The expert agents coordinators call.
    pub fn experts(&self) -> &experts::Experts {
        &self.0.experts
    }

    /// Every tool an agent can be given, with its capability: the registry's and the experts'.
    pub fn catalogue(&self) -> Vec<(String, String)> {
        let registry = self.registry();
        let mut all: Vec<(String, String)> =
            registry.catalogue().into_iter().map(|(n, c)| (n.to_owned(), c.to_owned())).collect();
        // A coordinator's copy of an expert keeps the shared expert's tool.
        all.extend(
            self.0
                .experts
                .all()
                .iter()
                .filter(|e| e.agent_id.is_none())
                .map(|e| (e.tool_name(), agents::EXPERT_TEAM.to_owned())),
        );
        all
    }

    pub fn now_ms(&self) -> i64 {
        self.0.clock.now_ms()
    }

    /// Waits until everything streamed so far is stored (tests, shutdown).
    pub async fn flush(&self) -> bool {
        self.0.writer.flush().await
    }

    /// The stream writer is waiting for an unreachable database.
    pub fn writer_outage(&self) -> bool {
        self.0.writer.outage()
    }

    /// Events and rows waiting for the stream writer.
    pub fn writer_queue_depth(&self) -> usize {
        self.0.writer.queue_depth()
    }

    /// The model client an agent's settings ask for.
    /// A base URL the outbound fence refuses (written past the console's check) gets a client
    /// that fails before connecting.
    pub fn model_for(&self, agent: &Agent) -> Arc<dyn ChatModel> {
        if let Some(base) = agent.provider.base_url.as_deref()
            && agent.provider.kind != ProviderKind::Demo
            && let Err(refused) = url::Url::parse(base)
                .map_err(|_| outbound::OutboundError::NotAUrl)
                .and_then(|url| outbound::fence(&url, self.0.settings.outbound))
        {
            tracing::warn!(agent = %agent.public_key, error = %refused, "the agent's provider address is refused by the outbound fence");
            let provider = if agent.provider.kind == ProviderKind::Anthropic { "anthropic" } else { "openai" };
            return Arc::new(provider::Refused { provider, reason: refused.to_string() });
        }
        let upstream = |base| provider::h2c::Upstream::for_base_url(&self.0.http, &self.0.h2c, base);
        match (agent.provider.kind, agent.provider.base_url.as_deref()) {
            (ProviderKind::OpenAi, Some(base)) => Arc::new(OpenAiClient::new(
                upstream(base),
                base,
                agent.provider.api_key.clone(),
                self.0.settings.transport.clone(),
            )),
            (ProviderKind::Anthropic, Some(base)) => Arc::new(provider::anthropic::AnthropicClient::new(
                upstream(base),
                base,
                agent.provider.api_key.clone(),
                self.0.settings.transport.clone(),
            )),
            _ => self.0.demo.clone(),
        }
    }
}
