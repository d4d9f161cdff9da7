//! [`TestApp`]: the real server on port 0 with its own database (a SQLite file, or a fresh
//! PostgreSQL database when `PARLEY_TEST_POSTGRES` is set) and a scripted fake OpenAI upstream
//! over real HTTP; built by [`TestApp::builder`].

use std::sync::Arc;

use parley_engine::engine::Engine;
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::engine::tools::registry::Registry;
use parley_engine::store::agents::{self, Agent, AgentLimits};
use parley_engine::store::messages::{self, Message};
use parley_engine::store::users;
use parley_engine::store::{Db, tool_calls, usage};
use parley_protocol::{Block, MessageStatus, Role, StreamEvent, ToolCallStatus};
use parley_server::config::SecretArg;
use parley_server::fake_anthropic::FakeAnthropic;
use parley_server::fake_openai::FakeOpenAi;
use parley_server::{Config, Running, spawn_with};
use serde_json::{Value, json};
use sqlx::Connection;

use super::fixtures::{self, AgentFixture, User};
use super::{Browser, read_events};

pub struct TestApp {
    running: Running,
    /// The OpenAI-compatible upstream, always started.
    pub fake: FakeOpenAi,
    anthropic: Option<FakeAnthropic>,
    pub client: reqwest::Client,
    /// The server's configuration (a restart uses it again).
    pub config: Config,
    pub database_url: String,
    /// The server's data directory (and the SQLite file).
    pub dir: tempfile::TempDir,
}

/// What [`TestApp`] starts with; each setting has a default.
pub struct TestAppBuilder {
    clock: Arc<dyn Clock>,
    registry: Option<Registry>,
    anthropic: bool,
    users: Vec<User>,
    configure: Vec<ConfigChange>,
    payments_sandbox: bool,
    webhook_secret: Option<String>,
}

/// A change to the server's settings ([`TestAppBuilder::config`]).
type ConfigChange = Box<dyn FnOnce(&mut Config)>;

/// The server with every default: the system clock, the built-in tools, no console users.
pub async fn spawn_app() -> TestApp {
    TestApp::builder().spawn().await
}

/// The server with one agent `key` on the fake OpenAI upstream, and a visitor of it: `(app, the
/// visitor's token)`.
pub async fn spawn_chat(key: &str, capabilities: &[&str]) -> (TestApp, String) {
    let app = spawn_app().await;
    app.agent(key, capabilities).await;
    let token = app.visitor(key).await;
    (app, token)
}

impl TestAppBuilder {
    /// The server's clock (the system clock by default).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The server's tools (the built-in registry by default; see [`super::registry_with`]).
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Also starts a fake Anthropic upstream ([`TestApp::anthropic`]).
    pub fn anthropic(mut self) -> Self {
        self.anthropic = true;
        self
    }

    /// Changes the server's settings before it starts.
    pub fn config(mut self, change: impl FnOnce(&mut Config) + 'static) -> Self {
        self.configure.push(Box::new(change));
        self
    }

    /// Console users, created once the server runs.
    pub fn with_users(mut self, users: &[User]) -> Self {
        self.users.extend_from_slice(users);
        self
    }

    /// Turns the sandbox payment provider on (`PARLEY_PAYMENTS_SANDBOX`; off by default, as in a
    /// plain `parley serve`).
    pub fn payments_sandbox(mut self) -> Self {
        self.payments_sandbox = true;
        self
    }

    /// The payment webhook secret (`Config::for_tests`'s by default; `None`: no webhook route).
    pub fn webhook_secret(mut self, secret: Option<&str>) -> Self {
        self.webhook_secret = secret.map(str::to_owned);
        self
    }

    pub async fn spawn(self) -> TestApp {
        let logs = super::captured_logs();
        let dir = tempfile::tempdir().expect("temp dir");
        let database_url = fresh_database(dir.path()).await;
        let registry = self.registry.unwrap_or_else(|| Registry::builtin(&reqwest::Client::new()));
        let mut config = Config::for_tests(database_url.clone(), dir.path().to_path_buf());
        config.payments_sandbox = self.payments_sandbox;
        config.payment_webhook_secret = self.webhook_secret.as_deref().map(SecretArg::from).unwrap_or_default();
        // The fake upstreams are the only private destinations (as an operator lists a local
        // model's `host:port`); every other loopback port stays behind the outbound fence.
        let fake = FakeOpenAi::start().await;
        let anthropic = if self.anthropic { Some(FakeAnthropic::start().await) } else { None };
        config.private_endpoints = std::iter::once(fake.addr)
            .chain(anthropic.as_ref().map(|a| a.addr))
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(",");
        for change in self.configure {
            change(&mut config);
        }
        let running = spawn_with(config.clone(), self.clock, registry).await.expect("server starts");
        // What the server made at its first start: the sealing key, the first password.
        if let Ok(key) = std::fs::read_to_string(dir.path().join("secret.key")) {
            logs.secret(key.trim());
        }
        if let Some(key) = config.secret_key.expose() {
            logs.secret(key);
        }
        if let Ok(text) = std::fs::read_to_string(dir.path().join("first-admin-password.txt")) {
            for password in text.lines().filter_map(|l| l.strip_prefix("password: ")) {
                logs.secret(password);
            }
        }
        let app = TestApp { running, fake, anthropic, client: reqwest::Client::new(), config, database_url, dir };
        for user in &self.users {
            app.add_user(user).await;
        }
        app
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            super::captured_logs().assert_no_secret();
        }
    }
}

/// False, with a word on the test's output, outside the PostgreSQL pass: for tests of replicas,
/// which share PostgreSQL only.
pub fn in_postgres_pass() -> bool {
    let on = !std::env::var("PARLEY_TEST_POSTGRES").unwrap_or_default().is_empty();
    if !on {
        eprintln!("replicas share PostgreSQL only: this test runs in the PostgreSQL pass");
    }
    on
}

/// A fresh database URL: SQLite in `dir`, or a new PostgreSQL database.
pub async fn fresh_database(dir: &std::path::Path) -> String {
    match std::env::var("PARLEY_TEST_POSTGRES") {
        Ok(base) if !base.is_empty() => {
            let name = format!("parley_t_{}", uuid::Uuid::new_v4().simple());
            sqlx::any::install_default_drivers();
            let mut conn = sqlx::AnyConnection::connect(&base).await.expect("connect to PostgreSQL");
            sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut conn).await.expect("create test database");
            // The harness never drops its databases; this file lists them for whoever cleans up.
            if let Ok(list) = std::env::var("PARLEY_TEST_POSTGRES_CREATED") {
                use std::io::Write;
                if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(list) {
                    let _ = writeln!(f, "{name}");
                }
            }
            let (prefix, _) = base.rsplit_once('/').expect("database URL with a database name");
            format!("{prefix}/{name}")
        }
        _ => format!("sqlite://{}?mode=rwc", dir.join("parley.db").display()),
    }
}

impl TestApp {
    pub fn builder() -> TestAppBuilder {
        TestAppBuilder {
            clock: Arc::new(SystemClock),
            registry: None,
            anthropic: false,
            users: Vec::new(),
            configure: Vec::new(),
            payments_sandbox: false,
            webhook_secret: Some(parley_server::config::TEST_WEBHOOK_SECRET.to_owned()),
        }
    }

    /// A second server on the same database and data directory, as after a restart (the same
    /// settings, the system clock, the built-in tools).
    pub async fn restart(&self) -> Running {
        let mut config = self.config.clone();
        // The first server still runs in this process (its crash is simulated by leaving it).
        config.allow_second_sqlite_process = true;
        parley_server::spawn(config).await.expect("second server starts")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.running.url(), path)
    }

    pub fn db(&self) -> &Db {
        self.running.state.engine.db()
    }

    pub fn engine(&self) -> &Engine {
        &self.running.state.engine
    }

    /// The console's sign-in state (verification counts).
    pub fn auth(&self) -> &parley_engine::auth::Auth {
        &self.running.state.auth
    }

    /// The fake Anthropic upstream of a server built with [`TestAppBuilder::anthropic`].
    pub fn anthropic(&self) -> &FakeAnthropic {
        self.anthropic.as_ref().expect("a TestApp built with .anthropic()")
    }

    pub async fn insert_agent(&self, agent: AgentFixture) -> Agent {
        agents::insert(self.db(), &agent.build(), SystemClock.now_ms()).await.expect("insert agent")
    }

    /// Sets the agent's limits and tells the engine.
    pub async fn set_limits(&self, agent_id: &str, limits: AgentLimits) {
        agents::set_limits(self.db(), agent_id, &limits).await.unwrap();
        self.engine().agents_changed();
    }

    /// An agent that talks to the fake OpenAI upstream.
    /// The inbound SMTP listener's port (the config's `inbound_smtp_addr`).
    pub fn smtp_port(&self) -> u16 {
        self.running.smtp_addr.expect("the inbound SMTP listener runs").port()
    }

    pub async fn agent(&self, key: &str, capabilities: &[&str]) -> Agent {
        self.insert_agent(fixtures::agent(key, fixtures::openai_provider(&self.fake)).capabilities(capabilities)).await
    }

    /// An agent that talks to the fake Anthropic upstream.
    pub async fn anthropic_agent(&self, key: &str, capabilities: &[&str]) -> Agent {
        let provider = fixtures::anthropic_provider(&self.anthropic().base_url());
        self.insert_agent(fixtures::agent(key, provider).capabilities(capabilities)).await
    }

    /// Creates a console user with the password [`fixtures::PASSWORD`].
    pub async fn add_user(&self, user: &User) -> users::User {
        let hash = parley_engine::auth::hash_password(fixtures::PASSWORD.into()).await;
        users::insert(self.db(), user.email, user.name, user.role, &hash, SystemClock.now_ms()).await.unwrap()
    }

    /// A browser on the console, not signed in.
    pub fn browser(&self) -> Browser {
        Browser::new(self.running.url())
    }

    /// A browser on the console, signed in as `user`.
    pub async fn signed_in(&self, user: &User) -> Browser {
        let mut b = self.browser();
        let (status, body) = b.sign_in(user.email, fixtures::PASSWORD).await;
        assert_eq!(status, 200, "sign in: {body}");
        assert!(b.cookie.is_some(), "a session cookie");
        b
    }

    /// A new visitor's token.
    pub async fn visitor(&self, agent_key: &str) -> String {
        let r = self.client.post(self.url("/api/v1/visitors")).json(&json!({"agent": agent_key})).send().await.unwrap();
        assert_eq!(r.status(), 201, "create visitor");
        r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned()
    }

    pub async fn send_raw(&self, token: &str, body: Value) -> reqwest::Response {
        self.send_raw_on(&self.running.url(), token, body).await
    }

    /// [`TestApp::send_raw`] to the server at `base` (a second one).
    pub async fn send_raw_on(&self, base: &str, token: &str, body: Value) -> reqwest::Response {
        self.client.post(format!("{base}/api/v1/chat")).bearer_auth(token).json(&body).send().await.unwrap()
    }

    /// Sends a message and reads the whole stream.
    pub async fn send(
        &self,
        token: &str,
        agent: &str,
        conversation: Option<&str>,
        message: &str,
    ) -> Vec<(u64, StreamEvent)> {
        let r =
            self.send_raw(token, json!({"agent": agent, "conversation_id": conversation, "message": message})).await;
        assert_eq!(r.status(), 200, "send: {:?}", r.text().await);
        read_events(r).await
    }

    pub async fn get(&self, token: &str, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).bearer_auth(token).send().await.unwrap()
    }

    pub async fn post(&self, token: &str, path: &str, body: Value) -> reqwest::Response {
        self.client.post(self.url(path)).bearer_auth(token).json(&body).send().await.unwrap()
    }

    /// `GET /api/v1/conversations/{id}/events` with `Last-Event-ID`.
    pub async fn follow(&self, token: &str, conversation: &str, last_event_id: u64) -> reqwest::Response {
        self.follow_on(&self.running.url(), token, conversation, last_event_id).await
    }

    /// [`TestApp::follow`] on the server at `base` (a restarted one).
    pub async fn follow_on(
        &self,
        base: &str,
        token: &str,
        conversation: &str,
        last_event_id: u64,
    ) -> reqwest::Response {
        self.client
            .get(format!("{base}/api/v1/conversations/{conversation}/events"))
            .bearer_auth(token)
            .header("Last-Event-ID", last_event_id.to_string())
            .send()
            .await
            .unwrap()
    }

    /// The visitor's stop button: `POST /api/v1/conversations/{id}/stop`.
    pub async fn stop(&self, token: &str, conversation: &str) -> reqwest::Response {
        self.client
            .post(self.url(&format!("/api/v1/conversations/{conversation}/stop")))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    /// Uploads an image as a visitor (`POST /api/v1/attachments`).
    pub async fn upload(&self, token: &str, content_type: &str, bytes: &[u8]) -> reqwest::Response {
        self.client
            .post(self.url("/api/v1/attachments"))
            .bearer_auth(token)
            .header("content-type", content_type)
            .body(bytes.to_vec())
            .send()
            .await
            .unwrap()
    }

    /// Uploads an image that must be accepted; returns its id.
    pub async fn upload_ok(&self, token: &str, content_type: &str, bytes: &[u8]) -> String {
        let r = self.upload(token, content_type, bytes).await;
        assert_eq!(r.status(), 201, "upload: {:?}", r.text().await);
        r.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
    }

    /// The conversation holds the visitor's `question` and a complete `answer`, nothing else;
    /// returns them.
    pub async fn assert_turn_stored(&self, conversation: &str, question: &str, answer: &str) -> Vec<Message> {
        let stored = messages::list(self.db(), conversation).await.unwrap();
        assert_eq!(stored.len(), 2);
        assert_eq!((stored[0].role, stored[0].content.as_str()), (Role::Visitor, question));
        assert_eq!((stored[1].role, stored[1].status), (Role::Assistant, MessageStatus::Complete));
        assert_eq!(stored[1].content, answer);
        stored
    }

    /// The conversation's answer (its second message) is stored with `text`, the escalation button
    /// and one successful `escalate_to_human` call.
    pub async fn assert_escalation_stored(&self, conversation: &str, text: &str) {
        let stored = messages::list(self.db(), conversation).await.unwrap();
        let answer = &stored[1];
        assert_eq!(answer.content, text);
        assert!(matches!(answer.blocks.as_slice(), [Block::EscalationButton(_)]));
        let calls = tool_calls::of_message(self.db(), &answer.id).await.unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!((calls[0].name.as_str(), calls[0].status), ("escalate_to_human", ToolCallStatus::Succeeded));
    }

    pub async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(self.db().pool()).await.unwrap()
    }

    /// The outcomes of the conversation's upstream calls, in the ledger's order.
    pub async fn outcomes(&self, conversation: &str) -> Vec<String> {
        usage::of_conversation(self.db(), conversation).await.unwrap().into_iter().map(|u| u.outcome).collect()
    }
}

/// A ledger row of an earlier model call of `agent_id` costing `cost_usd` at `at` (what an agent
/// has spent today, for the daily-cap tests).
pub async fn spent_earlier(db: &Db, agent_id: &str, cost_usd: f64, at: i64) {
    sqlx::query(
        "INSERT INTO usage_ledger (id, agent_id, conversation_id, message_id, provider, model, outcome, input_tokens, \
         output_tokens, cached_tokens, cost_usd, latency_ms, created_at) \
         VALUES ($1, $2, NULL, NULL, 'openai', 'gpt-4o-mini', 'ok', 0, 0, 0, $3, 1, $4)",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(agent_id)
    .bind(cost_usd)
    .bind(at)
    .execute(db.writer())
    .await
    .unwrap();
}
