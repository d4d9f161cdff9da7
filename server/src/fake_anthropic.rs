//! A fake Anthropic Messages API on a real local port, for tests. Tests script it reply by reply
//! (streamed text, `tool_use` blocks whose input arrives in several `input_json_delta` pieces,
//! HTTP errors with headers, an `error` event inside a 200 stream, a stream cut before
//! `message_stop`) and read back every request it received, headers included.
//!
//! Like the real API it checks the request's shape first (version header, `max_tokens`,
//! alternating roles, non-empty text blocks, every `tool_use` answered by a `tool_result` at the
//! start of the next message, tool blocks only with `tools`) and answers 400 when it is wrong, so
//! a conversion bug in the client fails a test instead of passing against a lenient fake.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;
use axum::{Json, Router};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::fake_wire::{split_words, sse, status_reply, timed_body};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Streams the text pieces as `text_delta`s, `delay` apart, then `end_turn`.
    Text { pieces: Vec<String>, delay: Duration },
    /// Streams an optional text block, then one `tool_use` block per `(name, input JSON text)`
    /// with the input cut into several `input_json_delta` pieces, then `tool_use`.
    ToolUse { text: Option<String>, calls: Vec<(String, String)> },
    /// Answers with an HTTP error.
    Status { status: u16, headers: Vec<(String, String)>, body: String },
    /// A 200 stream that sends the pieces, then an `error` event of `error_type`.
    StreamError { pieces: Vec<String>, error_type: String, message: String },
    /// A 200 stream that sends the pieces and ends without `message_stop`.
    Truncated(Vec<String>),
    /// Waits, then gives the inner reply.
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    /// Text streamed a word at a time with no delay.
    pub fn text(text: &str) -> Reply {
        Reply::Text { pieces: split_words(text), delay: Duration::ZERO }
    }
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    served: AtomicU64,
    /// `input_tokens` every answer reports.
    input_tokens: AtomicU64,
    /// `cache_read_input_tokens` every answer reports.
    cache_read: AtomicU64,
}

/// A running fake server.
#[derive(Clone)]
pub struct FakeAnthropic {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl FakeAnthropic {
    /// Starts a scripted fake on a free port.
    pub async fn start() -> FakeAnthropic {
        let shared = Arc::new(Shared {
            script: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
            served: AtomicU64::new(0),
            input_tokens: AtomicU64::new(12),
            cache_read: AtomicU64::new(0),
        });
        let app = Router::new().route("/v1/messages", post(messages)).with_state(shared.clone());
        let listener = crate::bind("127.0.0.1:0".parse().expect("address")).expect("bind fake Anthropic");
        let addr = listener.local_addr().expect("local addr");
        crate::serve_in_background(listener, app, "fake Anthropic");
        FakeAnthropic { addr, shared }
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn push(&self, reply: Reply) -> &Self {
        self.shared.script.lock().expect("script").push_back(reply);
        self
    }

    pub fn push_text(&self, text: &str) -> &Self {
        self.push(Reply::text(text))
    }

    /// One `tool_use` block calling `name` with `input`.
    pub fn push_tool_use(&self, name: &str, input: Value) -> &Self {
        self.push(Reply::ToolUse { text: None, calls: vec![(name.to_owned(), input.to_string())] })
    }

    /// An HTTP error with Anthropic's error body for `status`.
    pub fn push_error(&self, status: u16, headers: &[(&str, &str)]) -> &Self {
        self.push(Reply::Status {
            status,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: error_body(error_type(status), &format!("fake {} from the fake upstream", error_type(status))),
        })
    }

    /// The usage every answer reports from now on.
    pub fn set_usage(&self, input_tokens: u64, cache_read: u64) -> &Self {
        self.shared.input_tokens.store(input_tokens, Ordering::SeqCst);
        self.shared.cache_read.store(cache_read, Ordering::SeqCst);
        self
    }

    /// Every request body received, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        self.recorded().into_iter().map(|r| r.body).collect()
    }

    /// Every request received with its headers, oldest first.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("requests").clone()
    }

    /// How many requests were answered.
    pub fn served(&self) -> u64 {
        self.shared.served.load(Ordering::SeqCst)
    }
}

fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn error_body(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

async fn messages(State(shared): State<Arc<Shared>>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let n = shared.served.fetch_add(1, Ordering::SeqCst);
    let recorded_headers = headers
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_ascii_lowercase(), v.to_str().ok()?.to_owned())))
        .collect();
    shared.requests.lock().expect("requests").push(Recorded { headers: recorded_headers, body: body.clone() });
    if let Err(problem) = validate(&headers, &body) {
        return status_reply(400, Vec::new(), error_body("invalid_request_error", &problem));
    }
    let reply = shared.script.lock().expect("script").pop_front().unwrap_or_else(|| Reply::text("Hello from Claude."));
    let usage = (shared.input_tokens.load(Ordering::SeqCst), shared.cache_read.load(Ordering::SeqCst));
    answer(reply, n, usage).await
}

/// The checks of the real API that a client's conversion can get wrong.
fn validate(headers: &HeaderMap, body: &Value) -> Result<(), String> {
    if headers.get("anthropic-version").is_none() {
        return Err("anthropic-version: header is required".into());
    }
    if body.get("model").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err("model: Field required".into());
    }
    if body.get("max_tokens").and_then(Value::as_u64).is_none() {
        return Err("max_tokens: Field required".into());
    }
    let has_tools = body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
    let messages = body.get("messages").and_then(Value::as_array).ok_or("messages: Field required")?;
    if messages.is_empty() {
        return Err("messages: at least one message is required".into());
    }
    let mut open_calls: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        if !matches!(role, "user" | "assistant") {
            return Err(format!("messages.{i}.role: Input should be 'user' or 'assistant'"));
        }
        if i > 0 && messages[i - 1]["role"] == role {
            return Err(format!("messages.{i}: roles must alternate between \"user\" and \"assistant\""));
        }
        let blocks: Vec<Value> = match m.get("content") {
            Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
            Some(Value::Array(a)) => a.clone(),
            _ => return Err(format!("messages.{i}.content: Field required")),
        };
        // The results of the previous message's tool calls come first.
        let answered: Vec<&str> = blocks
            .iter()
            .take_while(|b| b["type"] == "tool_result")
            .filter_map(|b| b["tool_use_id"].as_str())
            .collect();
        if let Some(missing) = open_calls.iter().find(|id| !answered.contains(&id.as_str())) {
            return Err(format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {missing}"
            ));
        }
        open_calls.clear();
        for (j, b) in blocks.iter().enumerate() {
            match b["type"].as_str().unwrap_or_default() {
                "text" if b["text"].as_str().is_none_or(str::is_empty) => {
                    return Err(format!("messages.{i}.content.{j}.text: text content blocks must be non-empty"));
                }
                "text" => {}
                "tool_use" | "tool_result" if !has_tools => {
                    return Err("Requests which include `tool_use` or `tool_result` blocks must define tools.".into());
                }
                "tool_use" if role == "assistant" => {
                    if !b["input"].is_object() {
                        return Err(format!("messages.{i}.content.{j}.tool_use.input: Input should be an object"));
                    }
                    open_calls.push(b["id"].as_str().unwrap_or_default().to_owned());
                }
                "tool_result" if role == "user" => {}
                "image" if role == "user" => {
                    let source = &b["source"];
                    let media = source["media_type"].as_str().unwrap_or_default();
                    if source["type"] != "base64"
                        || !matches!(media, "image/png" | "image/jpeg" | "image/gif" | "image/webp")
                        || source["data"].as_str().is_none_or(str::is_empty)
                    {
                        return Err(format!("messages.{i}.content.{j}.image.source: a base64 image is required"));
                    }
                }
                other => return Err(format!("messages.{i}.content.{j}: unexpected block `{other}` for {role}")),
            }
        }
    }
    if !open_calls.is_empty() {
        return Err("the last message has `tool_use` blocks without results".into());
    }
    Ok(())
}

/// One SSE event, cut in two so the client sees events split across reads.
fn event(items: &mut Vec<(Duration, Bytes)>, pause: Duration, data: Value) {
    let kind = data["type"].as_str().unwrap_or("message").to_owned();
    let bytes = Bytes::from(format!("event: {kind}\ndata: {data}\n\n"));
    let mid = bytes.len() / 2;
    items.push((pause, bytes.slice(..mid)));
    items.push((Duration::ZERO, bytes.slice(mid..)));
}

fn message_start(items: &mut Vec<(Duration, Bytes)>, (input, cache_read): (u64, u64)) {
    event(
        items,
        Duration::ZERO,
        json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "content": [],
            "model": "claude-fake", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": 1,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": cache_read}}}),
    );
    event(items, Duration::ZERO, json!({"type": "ping"}));
}

fn text_block(items: &mut Vec<(Duration, Bytes)>, index: usize, pieces: Vec<String>, delay: Duration) {
    event(
        items,
        Duration::ZERO,
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
    );
    for (i, p) in pieces.into_iter().enumerate() {
        let pause = if i == 0 { Duration::ZERO } else { delay };
        event(
            items,
            pause,
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}),
        );
    }
    event(items, Duration::ZERO, json!({"type": "content_block_stop", "index": index}));
}

fn message_end(items: &mut Vec<(Duration, Bytes)>, stop_reason: &str, output: u64) {
    event(
        items,
        Duration::ZERO,
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output}}),
    );
    event(items, Duration::ZERO, json!({"type": "message_stop"}));
}

/// Cuts `s` into `n` pieces at character boundaries.
fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let size = chars.len().div_ceil(n).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

async fn answer(reply: Reply, n: u64, usage: (u64, u64)) -> Response {
    match reply {
        Reply::Delayed(pause, inner) => {
            tokio::time::sleep(pause).await;
            Box::pin(answer(*inner, n, usage)).await
        }
        Reply::Status { status, headers, body } => status_reply(status, headers, body),
        Reply::Text { pieces, delay } => {
            let output = pieces.len() as u64;
            let mut items = Vec::new();
            message_start(&mut items, usage);
            text_block(&mut items, 0, pieces, delay);
            message_end(&mut items, "end_turn", output);
            sse(timed_body(items))
        }
        Reply::ToolUse { text, calls } => {
            let mut items = Vec::new();
            message_start(&mut items, usage);
            let mut index = 0;
            if let Some(text) = text {
                text_block(&mut items, 0, split_words(&text), Duration::ZERO);
                index = 1;
            }
            for (i, (name, input)) in calls.iter().enumerate() {
                let id = format!("toolu_fake{n}_{i}");
                event(
                    &mut items,
                    Duration::ZERO,
                    json!({"type": "content_block_start", "index": index, "content_block":
                        {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                );
                // The real API starts with an empty piece, then cuts the JSON anywhere.
                let mut parts = vec![String::new()];
                parts.extend(pieces(input, 4));
                for part in parts {
                    event(
                        &mut items,
                        Duration::ZERO,
                        json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": part}}),
                    );
                }
                event(&mut items, Duration::ZERO, json!({"type": "content_block_stop", "index": index}));
                index += 1;
            }
            message_end(&mut items, "tool_use", 8);
            sse(timed_body(items))
        }
        Reply::StreamError { pieces, error_type, message } => {
            let mut items = Vec::new();
            message_start(&mut items, usage);
            event(
                &mut items,
                Duration::ZERO,
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            );
            for p in pieces {
                event(
                    &mut items,
                    Duration::ZERO,
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}),
                );
            }
            event(
                &mut items,
                Duration::ZERO,
                json!({"type": "error", "error": {"type": error_type, "message": message}}),
            );
            sse(timed_body(items))
        }
        Reply::Truncated(pieces) => {
            let mut items = Vec::new();
            message_start(&mut items, usage);
            text_block(&mut items, 0, pieces, Duration::ZERO);
            sse(timed_body(items))
        }
    }
}
