//! [`Receiver`]: a real HTTP server on 127.0.0.1 standing for an owner's service (the endpoint of
//! an owner-defined tool). It records every request and answers by path:
//! - `/orders/{id}`: `{"order": id, "status": "shipped", "query": {…}}`
//! - `/blocks`: the request body's `reply`, as it is (an answer with `parley_blocks`)
//! - `/echo`: the request's JSON body back, inside `{"received": …}`
//! - `/text`: a plain-text answer
//! - `/slow`: waits 3 s, then answers
//! - `/huge`: 1 MiB of JSON
//! - `/down`: 503 "down for maintenance"
//! - `/embeddings`: an OpenAI-compatible embeddings endpoint (8-dimensional vectors of letter
//!   counts), answering 503 while [`Receiver::set_down`] says so
//! - `/hook`: a webhook endpoint answering the status [`Receiver::set_hook_status`] set (204 at
//!   first)

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::IntoResponse;
use axum::routing::any;
use serde_json::{Value, json};

/// One request as the receiver saw it.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    /// The path and query as sent.
    pub uri: String,
    pub headers: HashMap<String, String>,
    pub body: String,
}

#[derive(Clone)]
struct Log(Arc<Mutex<Vec<Received>>>, Arc<AtomicBool>, Arc<AtomicU16>);

impl Default for Log {
    fn default() -> Self {
        Log(Arc::default(), Arc::default(), Arc::new(AtomicU16::new(204)))
    }
}

pub struct Receiver {
    pub addr: SocketAddr,
    log: Log,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    pub async fn start() -> Receiver {
        let log = Log::default();
        let app = axum::Router::new()
            .route("/orders/{id}", any(order))
            .route("/echo", any(echo))
            .route("/blocks", any(blocks))
            .route("/text", any(|| async { "Opening hours: 9:00 to 18:00" }))
            .route("/slow", any(slow))
            .route("/huge", any(|| async { Json(json!({"blob": "x".repeat(1024 * 1024)})) }))
            .route("/down", any(|| async { (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance") }))
            .route("/embeddings", any(embeddings))
            .route("/hook", any(hook))
            .layer(axum::middleware::from_fn_with_state(log.clone(), record))
            .with_state(log.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the receiver");
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { addr, log, task }
    }

    /// `http://127.0.0.1:port{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.log.0.lock().unwrap().clone()
    }

    /// What `/hook` answers from now on.
    pub fn set_hook_status(&self, status: u16) {
        self.log.2.store(status, Ordering::SeqCst);
    }

    /// The requests to `path` so far.
    pub fn received_at(&self, path: &str) -> Vec<Received> {
        self.received().into_iter().filter(|r| r.uri == path).collect()
    }

    /// Waits (10 s at most) until `path` has had `n` requests; returns them.
    pub async fn wait_for(&self, path: &str, n: usize) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.received_at(path);
            if got.len() >= n {
                return got;
            }
            assert!(tokio::time::Instant::now() < deadline, "{path} had {} requests, not {n}: {got:?}", got.len());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// While `down`, `/embeddings` answers 503.
    pub fn set_down(&self, down: bool) {
        self.log.1.store(down, Ordering::SeqCst);
    }
}

async fn record(
    State(log): State<Log>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1024 * 1024).await.unwrap_or_default();
    log.0.lock().unwrap().push(Received {
        method: parts.method.to_string(),
        uri: parts.uri.to_string(),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned()))
            .collect(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    });
    next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

async fn hook(State(log): State<Log>) -> StatusCode {
    StatusCode::from_u16(log.2.load(Ordering::SeqCst)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

async fn order(Path(id): Path<String>, Query(query): Query<HashMap<String, String>>) -> Json<Value> {
    Json(json!({"order": id, "status": "shipped", "query": query}))
}

async fn echo(method: Method, body: Bytes) -> impl IntoResponse {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Json(json!({"method": method.as_str(), "received": body}))
}

/// Answers with the request body's `reply` (a tool's answer the test chose, blocks and all).
async fn blocks(Json(body): Json<Value>) -> Json<Value> {
    Json(body["reply"].clone())
}

async fn slow() -> Json<Value> {
    tokio::time::sleep(Duration::from_secs(3)).await;
    Json(json!({"late": true}))
}

/// `{"data": [{"index": i, "embedding": […]}]}`, one vector per input: how often each of eight
/// groups of characters occurs (so related texts are close), normalised.
async fn embeddings(State(log): State<Log>, Json(body): Json<Value>) -> axum::response::Response {
    if log.1.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "embeddings are down").into_response();
    }
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|v| v.as_str().unwrap_or_default().to_owned()).collect(),
        _ => return (StatusCode::BAD_REQUEST, "input").into_response(),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let mut v = [0f32; 8];
            for c in text.chars().filter(|c| c.is_alphanumeric()) {
                v[(c.to_lowercase().next().unwrap_or(c) as usize) % 8] += 1.0;
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
            json!({"index": i, "embedding": v.iter().map(|x| x / norm).collect::<Vec<_>>()})
        })
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}
