//! Test harness: the real server on port 0, its own database (a SQLite file, or a fresh
//! PostgreSQL database when `PARLEY_TEST_POSTGRES` is set), and a scripted fake OpenAI upstream
//! over real HTTP.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use parley_app::server::engine::clock::{Clock, SystemClock};
use parley_app::server::engine::tools::Tool;
use parley_app::server::engine::tools::registry::Registry;
use parley_app::server::store::agents::{self, Agent, NewAgent, ProviderConfig, ProviderKind};
use parley_server::fake_openai::FakeOpenAi;
use parley_server::{Config, Running, spawn_with};
use parley_widget::protocol::{StreamEvent, Theme};
use parley_widget::sse::SseParser;
use serde_json::{Value, json};
use sqlx::Connection;

pub struct TestApp {
    pub running: Running,
    pub fake: FakeOpenAi,
    pub client: reqwest::Client,
    pub database_url: String,
    pub dir: tempfile::TempDir,
}

/// A fresh database URL: SQLite in `dir`, or a new PostgreSQL database.
pub async fn fresh_database(dir: &std::path::Path) -> String {
    match std::env::var("PARLEY_TEST_POSTGRES") {
        Ok(base) if !base.is_empty() => {
            let name = format!("parley_t_{}", uuid::Uuid::new_v4().simple());
            sqlx::any::install_default_drivers();
            let mut conn = sqlx::AnyConnection::connect(&base).await.expect("connect to PostgreSQL");
            sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut conn).await.expect("create test database");
            let (prefix, _) = base.rsplit_once('/').expect("database URL with a database name");
            format!("{prefix}/{name}")
        }
        _ => format!("sqlite://{}?mode=rwc", dir.join("parley.db").display()),
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(Arc::new(SystemClock), Registry::builtin(&reqwest::Client::new())).await
}

pub async fn spawn_app_with(clock: Arc<dyn Clock>, registry: Registry) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let database_url = fresh_database(dir.path()).await;
    let running = spawn_with(Config::for_tests(database_url.clone(), dir.path().to_path_buf()), clock, registry)
        .await
        .expect("server starts");
    let fake = FakeOpenAi::start().await;
    TestApp { running, fake, client: reqwest::Client::new(), database_url, dir }
}

/// A registry of the built-in tools plus `extra`.
pub fn registry_with(extra: Vec<Arc<dyn Tool>>) -> Registry {
    let mut tools: Vec<Arc<dyn Tool>> =
        vec![Arc::new(parley_app::server::engine::tools::escalate_to_human::EscalateToHuman)];
    tools.extend(extra);
    Registry::new(tools).expect("valid registry")
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.running.url(), path)
    }

    pub fn db(&self) -> &parley_app::server::store::Db {
        self.running.state.engine.db()
    }

    /// An agent that talks to the fake upstream.
    pub async fn agent(&self, key: &str, capabilities: &[&str], enabled_tools: Option<&[&str]>) -> Agent {
        self.agent_with(key, capabilities, enabled_tools, &[]).await
    }

    pub async fn agent_with(
        &self,
        key: &str,
        capabilities: &[&str],
        enabled_tools: Option<&[&str]>,
        origins: &[&str],
    ) -> Agent {
        let new = NewAgent {
            public_key: key.into(),
            name: format!("Agent {key}"),
            vertical: "help_center".into(),
            capabilities: capabilities.iter().map(|s| s.to_string()).collect(),
            enabled_tools: enabled_tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
            provider: ProviderConfig {
                kind: ProviderKind::OpenAi,
                base_url: Some(self.fake.base_url()),
                api_key: Some("sk-test-secret".into()),
                model: "gpt-4o-mini".into(),
                fallback_model: None,
            },
            system_prompt: "You are a test agent.".into(),
            greeting: "Hi".into(),
            theme: Theme::default(),
            allowed_origins: origins.iter().map(|s| s.to_string()).collect(),
        };
        agents::insert(self.db(), &new, SystemClock.now_ms()).await.expect("insert agent")
    }

    /// A new visitor's token.
    pub async fn visitor(&self, agent_key: &str) -> String {
        let r = self.client.post(self.url("/api/v1/visitors")).json(&json!({"agent": agent_key})).send().await.unwrap();
        assert_eq!(r.status(), 201, "create visitor");
        r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned()
    }

    pub async fn send_raw(&self, token: &str, body: Value) -> reqwest::Response {
        self.client.post(self.url("/api/v1/chat")).bearer_auth(token).json(&body).send().await.unwrap()
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

    pub async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(self.db().pool()).await.unwrap()
    }
}

/// Reads SSE events until the stream ends (10 s at most).
pub async fn read_events(r: reqwest::Response) -> Vec<(u64, StreamEvent)> {
    let mut out = Vec::new();
    let mut parser = SseParser::new();
    let mut body = r.bytes_stream();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, body.next()).await {
            Ok(Some(Ok(bytes))) => {
                for f in parser.feed(std::str::from_utf8(&bytes).expect("utf-8 chunk")) {
                    out.push(parse_frame(&f));
                }
            }
            Ok(Some(Err(e))) => panic!("stream error: {e}"),
            Ok(None) => return out,
            Err(_) => panic!("stream did not end in time; got {out:?}"),
        }
    }
}

/// Reads SSE events until `stop` says so.
pub async fn read_until(
    body: &mut (impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    parser: &mut SseParser,
    out: &mut Vec<(u64, StreamEvent)>,
    stop: impl Fn(&[(u64, StreamEvent)]) -> bool,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !stop(out) {
        match tokio::time::timeout_at(deadline, body.next()).await {
            Ok(Some(Ok(bytes))) => {
                for f in parser.feed(std::str::from_utf8(&bytes).expect("utf-8")) {
                    out.push(parse_frame(&f));
                }
            }
            other => panic!("stream ended or stalled: {other:?}; got {out:?}"),
        }
    }
}

fn parse_frame(f: &parley_widget::sse::SseFrame) -> (u64, StreamEvent) {
    let seq = f.id.as_deref().expect("every event has an id").parse().expect("numeric id");
    let name = f.event.as_deref().expect("every event has a name");
    let event = StreamEvent::parse(name, &f.data).expect("valid payload").expect("known event");
    (seq, event)
}

/// Event names in order, tokens folded into one `token*` entry per run.
pub fn shape(events: &[(u64, StreamEvent)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, e) in events {
        let name = match e {
            StreamEvent::ToolCall(t) => format!("tool_call:{}:{}", t.name, t.status.as_str()),
            StreamEvent::Block(b) => format!("block:{}", b.block.kind()),
            StreamEvent::MessageEnd(m) => format!("message_end:{}", m.status.as_str()),
            StreamEvent::Error(e) => format!("error:{}", e.code),
            other => other.name().to_owned(),
        };
        if name == "token" && out.last().map(String::as_str) == Some("token*") {
            continue;
        }
        out.push(if name == "token" { "token*".into() } else { name });
    }
    out
}

/// The streamed answer text.
pub fn text(events: &[(u64, StreamEvent)]) -> String {
    events
        .iter()
        .filter_map(|(_, e)| if let StreamEvent::Token(t) = e { Some(t.text.as_str()) } else { None })
        .collect()
}

pub fn conversation_id(events: &[(u64, StreamEvent)]) -> String {
    events
        .iter()
        .find_map(|(_, e)| if let StreamEvent::MessageStart(m) = e { Some(m.conversation_id.clone()) } else { None })
        .expect("message_start")
}

pub fn message_id(events: &[(u64, StreamEvent)]) -> String {
    events
        .iter()
        .find_map(|(_, e)| if let StreamEvent::MessageStart(m) = e { Some(m.message_id.clone()) } else { None })
        .expect("message_start")
}

/// Waits until `f` is true (5 s at most).
pub async fn eventually(mut f: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !f().await {
        assert!(tokio::time::Instant::now() < deadline, "condition not met in time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl TestApp {
    /// An agent that talks to a fake Anthropic upstream at `base_url` with Anthropic's native
    /// Messages API (key `sk-ant-test-secret`, model `claude-sonnet-4-20250514`).
    pub async fn agent_anthropic(&self, key: &str, capabilities: &[&str], base_url: &str) -> Agent {
        let new = NewAgent {
            public_key: key.into(),
            name: format!("Agent {key}"),
            vertical: "help_center".into(),
            capabilities: capabilities.iter().map(|s| s.to_string()).collect(),
            enabled_tools: None,
            provider: ProviderConfig {
                kind: ProviderKind::Anthropic,
                base_url: Some(base_url.to_owned()),
                api_key: Some("sk-ant-test-secret".into()),
                model: "claude-sonnet-4-20250514".into(),
                fallback_model: None,
            },
            system_prompt: "You are a test agent.".into(),
            greeting: "Hi".into(),
            theme: Theme::default(),
            allowed_origins: Vec::new(),
        };
        agents::insert(self.db(), &new, SystemClock.now_ms()).await.expect("insert agent")
    }
}

impl TestApp {
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
}
