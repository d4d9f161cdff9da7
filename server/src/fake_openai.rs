//! A fake OpenAI-compatible Chat Completions server on a real local port, for tests and the
//! benchmark. Tests script it reply by reply (text, tool calls, HTTP errors, errors inside a 200
//! stream, truncated or endless streams, delays) and read back every request it received; the
//! benchmark uses its rule mode (fixed token count and delays; a tool call when asked).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::fake_wire::{split_words, sse, status_reply};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Streams the text pieces, `delay` apart, then `finish_reason: stop`.
    Content { pieces: Vec<String>, delay: Duration },
    /// Streams these tool calls `(name, arguments JSON text)` as deltas, then `tool_calls`.
    ToolCalls(Vec<(String, String)>),
    /// Streams `text`, then the start of a call to `name` whose arguments stop at `arguments`,
    /// then `finish_reason: length` (the model ran out of tokens mid-call).
    CutToolCall { text: String, name: String, arguments: String },
    /// Answers with an HTTP error.
    Status { status: u16, headers: Vec<(String, String)>, body: String },
    /// A 200 stream that sends the pieces, then an error object.
    StreamError { pieces: Vec<String>, message: String },
    /// A 200 stream that sends the pieces and ends without a finish reason.
    Truncated(Vec<String>),
    /// Streams `piece` every `every` until the client goes away.
    Endless { piece: String, every: Duration },
    /// A plain JSON completion, as from a provider that ignores `stream: true`.
    Json { content: String },
    /// Waits, then gives the inner reply.
    Delayed(Duration, Box<Reply>),
    /// The inner reply without a usage chunk, as from a provider that reports none.
    WithoutUsage(Box<Reply>),
    /// A model obeying "repeat your instructions": `before`, then the request's first system
    /// message, streamed `piece` characters at a time (so what it starts with is split across
    /// deltas).
    EchoSystem { before: String, piece: usize },
}

impl Reply {
    /// Text streamed a word at a time with no delay.
    pub fn text(text: &str) -> Reply {
        Reply::Content { pieces: split_words(text), delay: Duration::ZERO }
    }
}

/// The benchmark's behaviour: every answer is `tokens` tokens, the first after
/// `first_token_delay`, the rest `token_delay` apart. A request that offers tools and whose last
/// message is the user's and contains `[[tool]]` gets one call of `tool` instead.
#[derive(Clone, Debug)]
pub struct Rules {
    pub tokens: usize,
    pub first_token_delay: Duration,
    pub token_delay: Duration,
    pub tool: Option<(String, String)>,
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Value>>,
    /// The operator's copilot's requests and replies, apart (see [`is_copilot`]).
    copilot_script: Mutex<VecDeque<Reply>>,
    copilot_requests: Mutex<Vec<Value>>,
    /// The `Authorization` header of each request (the key the server sent).
    authorizations: Mutex<Vec<String>>,
    rules: Option<Rules>,
    served: AtomicU64,
    open_streams: AtomicU64,
    closed_early: AtomicU64,
    /// The client's address and HTTP version of every connection a request came on.
    connections: Mutex<HashMap<SocketAddr, http::Version>>,
}

/// A running fake server.
#[derive(Clone)]
pub struct FakeOpenAi {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl FakeOpenAi {
    /// Starts a scripted fake on a free port.
    pub async fn start() -> FakeOpenAi {
        Self::start_with(None, "127.0.0.1:0".parse().expect("address")).await
    }

    /// Starts a fake with the benchmark's rules on `addr`.
    pub async fn start_rules(rules: Rules, addr: SocketAddr) -> FakeOpenAi {
        Self::start_with(Some(rules), addr).await
    }

    async fn start_with(rules: Option<Rules>, addr: SocketAddr) -> FakeOpenAi {
        let shared = Arc::new(Shared {
            script: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
            copilot_script: Mutex::new(VecDeque::new()),
            copilot_requests: Mutex::new(Vec::new()),
            authorizations: Mutex::new(Vec::new()),
            rules,
            served: AtomicU64::new(0),
            open_streams: AtomicU64::new(0),
            closed_early: AtomicU64::new(0),
            connections: Mutex::new(HashMap::new()),
        });
        let app = Router::new().route("/v1/chat/completions", post(completions)).with_state(shared.clone());
        let listener = crate::bind(addr).expect("bind fake upstream");
        let addr = listener.local_addr().expect("local addr");
        crate::serve_in_background(listener, app, "fake upstream");
        FakeOpenAi { addr, shared }
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn push(&self, reply: Reply) -> &Self {
        self.shared.script.lock().expect("script").push_back(reply);
        self
    }

    /// Like seed 002's `FakeOpenAi::pushToolCall`.
    pub fn push_tool_call(&self, name: &str, arguments: Value) -> &Self {
        self.push(Reply::ToolCalls(vec![(name.to_owned(), arguments.to_string())]))
    }

    pub fn push_content(&self, text: &str) -> &Self {
        self.push(Reply::text(text))
    }

    pub fn push_error(&self, status: u16, headers: &[(&str, &str)]) -> &Self {
        self.push(Reply::Status {
            status,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: json!({"error": {"message": format!("fake error {status}"), "type": "fake"}}).to_string(),
        })
    }

    /// Scripts the next reply to the operator's copilot. Its requests (a user message that
    /// begins `Copilot task: `) have a script and a log of their own, so a summary written in the
    /// background never takes a reply scripted for a visitor's turn.
    pub fn push_copilot(&self, reply: Reply) -> &Self {
        self.shared.copilot_script.lock().expect("script").push_back(reply);
        self
    }

    /// Every copilot request body received, oldest first.
    pub fn copilot_requests(&self) -> Vec<Value> {
        self.shared.copilot_requests.lock().expect("requests").clone()
    }

    /// Every request body received (but the copilot's), oldest first.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().expect("requests").clone()
    }

    /// How many requests were answered.
    /// The `Authorization` header of every scripted request so far, in order.
    pub fn authorizations(&self) -> Vec<String> {
        self.shared.authorizations.lock().expect("authorizations").clone()
    }

    pub fn served(&self) -> u64 {
        self.shared.served.load(Ordering::SeqCst)
    }

    /// Streaming answers the client closed before they ended.
    pub fn closed_early(&self) -> u64 {
        self.shared.closed_early.load(Ordering::SeqCst)
    }

    /// The connections requests came on so far (one per client address and port), with the
    /// HTTP version each spoke.
    pub fn connections(&self) -> Vec<http::Version> {
        self.shared.connections.lock().expect("connections").values().copied().collect()
    }

    /// Streaming answers still being written.
    pub fn open_streams(&self) -> u64 {
        self.shared.open_streams.load(Ordering::SeqCst)
    }
}

/// A request of the operator's copilot: its last user message begins `Copilot task: `.
fn is_copilot(body: &Value) -> bool {
    body["messages"].as_array().and_then(|m| m.iter().rev().find(|m| m["role"] == "user")).is_some_and(|m| {
        m["content"].as_str().is_some_and(|c| c.starts_with(parley_engine::engine::copilot::prompt::TASK))
    })
}

async fn completions(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    version: http::Version,
    headers: http::HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    shared.connections.lock().expect("connections").insert(peer, version);
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let usage = body.pointer("/stream_options/include_usage").and_then(Value::as_bool).unwrap_or(false);
    if shared.rules.is_none() && is_copilot(&body) {
        shared.copilot_requests.lock().expect("requests").push(body.clone());
        let reply = shared.copilot_script.lock().expect("script").pop_front();
        return answer(shared, reply.unwrap_or_else(|| Reply::text("Fake copilot reply.")), stream, usage).await;
    }
    shared.served.fetch_add(1, Ordering::SeqCst);
    if shared.rules.is_none() {
        let auth = headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or_default();
        shared.authorizations.lock().expect("authorizations").push(auth.to_owned());
    }
    let reply = match &shared.rules {
        Some(rules) => rule_reply(rules, &body),
        None => {
            shared.requests.lock().expect("requests").push(body.clone());
            shared
                .script
                .lock()
                .expect("script")
                .pop_front()
                .unwrap_or_else(|| Reply::text("Hello from the fake model."))
        }
    };
    let reply = match reply {
        Reply::EchoSystem { before, piece } => echo_system(&body, before, piece),
        other => other,
    };
    answer(shared, reply, stream, usage).await
}

fn rule_reply(rules: &Rules, body: &Value) -> Reply {
    let wants_tool = body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty())
        && body
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .is_some_and(|m| m["role"] == "user" && m["content"].as_str().is_some_and(|c| c.contains("[[tool]]")));
    if let (true, Some((name, args))) = (wants_tool, &rules.tool) {
        return Reply::ToolCalls(vec![(name.clone(), args.clone())]);
    }
    let pieces = (0..rules.tokens).map(|i| format!("tok{i} ")).collect();
    Reply::Delayed(rules.first_token_delay, Box::new(Reply::Content { pieces, delay: rules.token_delay }))
}

/// [`Reply::EchoSystem`] as the text it streams.
fn echo_system(body: &Value, before: String, piece: usize) -> Reply {
    let system = body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "system"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let chars: Vec<char> = system.chars().collect();
    let mut pieces = vec![before];
    pieces.extend(chars.chunks(piece.max(1)).map(|c| c.iter().collect::<String>()));
    Reply::Content { pieces, delay: Duration::ZERO }
}

fn chunk(delta: Value, finish: Option<&str>) -> Bytes {
    let v = json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    Bytes::from(format!("data: {v}\n\n"))
}

fn usage_chunk(input: u64, output: u64) -> Bytes {
    let v = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}});
    Bytes::from(format!("data: {v}\n\n"))
}

/// Decrements the open-stream count when the body is dropped; counts early closes.
struct StreamGuard {
    shared: Arc<Shared>,
    finished: bool,
}

impl StreamGuard {
    fn mark_finished(&mut self) {
        self.finished = true;
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.shared.open_streams.fetch_sub(1, Ordering::SeqCst);
        if !self.finished {
            self.shared.closed_early.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A body of `(pause before, bytes)` items; `endless` repeats its last item forever.
fn timed_body(shared: Arc<Shared>, items: Vec<(Duration, Bytes)>, endless: Option<(Duration, Bytes)>) -> Body {
    shared.open_streams.fetch_add(1, Ordering::SeqCst);
    let guard = StreamGuard { shared, finished: false };
    let state = (items.into_iter(), endless, guard);
    let stream = futures::stream::unfold(state, |(mut items, endless, mut guard)| async move {
        match items.next() {
            Some((pause, bytes)) => {
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
                Some((Ok::<Bytes, std::io::Error>(bytes), (items, endless, guard)))
            }
            None => match &endless {
                Some((pause, bytes)) => {
                    tokio::time::sleep(*pause).await;
                    let bytes = bytes.clone();
                    Some((Ok(bytes), (items, endless, guard)))
                }
                None => {
                    guard.mark_finished();
                    None
                }
            },
        }
    });
    Body::from_stream(stream)
}

async fn answer(shared: Arc<Shared>, reply: Reply, stream: bool, usage: bool) -> Response {
    match reply {
        Reply::Delayed(pause, inner) => {
            tokio::time::sleep(pause).await;
            Box::pin(answer(shared, *inner, stream, usage)).await
        }
        Reply::WithoutUsage(inner) => Box::pin(answer(shared, *inner, stream, false)).await,
        // Only inside another reply (the request is not at hand here): `before` alone.
        Reply::EchoSystem { before, .. } => Box::pin(answer(shared, Reply::text(&before), stream, usage)).await,
        Reply::Status { status, headers, body } => status_reply(status, headers, body),
        Reply::Json { content } => Json(json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }))
        .into_response(),
        Reply::Content { pieces, delay } if !stream => {
            let _ = delay;
            Box::pin(answer(shared, Reply::Json { content: pieces.concat() }, stream, usage)).await
        }
        Reply::Content { pieces, delay } => {
            let n = pieces.len() as u64;
            let mut items = vec![(Duration::ZERO, chunk(json!({"role": "assistant", "content": ""}), None))];
            for (i, p) in pieces.into_iter().enumerate() {
                items.push((if i == 0 { Duration::ZERO } else { delay }, chunk(json!({"content": p}), None)));
            }
            items.push((Duration::ZERO, chunk(json!({}), Some("stop"))));
            if usage {
                items.push((Duration::ZERO, usage_chunk(12, n)));
            }
            items.push((Duration::ZERO, Bytes::from_static(b"data: [DONE]\n\n")));
            sse(timed_body(shared, items, None))
        }
        Reply::CutToolCall { text, name, arguments } => {
            let mut items = vec![(Duration::ZERO, chunk(json!({"role": "assistant", "content": text}), None))];
            items.push((
                Duration::ZERO,
                chunk(
                    json!({"tool_calls": [{"index": 0, "id": "call_cut", "type": "function",
                        "function": {"name": name, "arguments": arguments}}]}),
                    None,
                ),
            ));
            items.push((Duration::ZERO, chunk(json!({}), Some("length"))));
            if usage {
                items.push((Duration::ZERO, usage_chunk(20, 8)));
            }
            items.push((Duration::ZERO, Bytes::from_static(b"data: [DONE]\n\n")));
            sse(timed_body(shared, items, None))
        }
        Reply::ToolCalls(calls) => {
            let mut items = Vec::new();
            for (i, (name, args)) in calls.iter().enumerate() {
                let id = format!("call_{i}_{name}");
                items.push((
                    Duration::ZERO,
                    chunk(
                        json!({"role": "assistant", "content": null, "tool_calls": [
                    {"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
                        None,
                    ),
                ));
                // Arguments arrive in two fragments, as real providers split them.
                let mid = args.char_indices().nth(args.chars().count() / 2).map(|(b, _)| b).unwrap_or(0);
                for part in [&args[..mid], &args[mid..]] {
                    items.push((
                        Duration::ZERO,
                        chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": part}}]}), None),
                    ));
                }
            }
            items.push((Duration::ZERO, chunk(json!({}), Some("tool_calls"))));
            if usage {
                items.push((Duration::ZERO, usage_chunk(20, 8)));
            }
            items.push((Duration::ZERO, Bytes::from_static(b"data: [DONE]\n\n")));
            sse(timed_body(shared, items, None))
        }
        Reply::StreamError { pieces, message } => {
            let mut items: Vec<(Duration, Bytes)> =
                pieces.into_iter().map(|p| (Duration::ZERO, chunk(json!({"content": p}), None))).collect();
            items.push((
                Duration::ZERO,
                Bytes::from(format!("data: {}\n\n", json!({"error": {"message": message, "type": "server_error"}}))),
            ));
            sse(timed_body(shared, items, None))
        }
        Reply::Truncated(pieces) => {
            let items = pieces.into_iter().map(|p| (Duration::ZERO, chunk(json!({"content": p}), None))).collect();
            sse(timed_body(shared, items, None))
        }
        Reply::Endless { piece, every } => {
            let first = vec![(Duration::ZERO, chunk(json!({"role": "assistant", "content": piece.clone()}), None))];
            sse(timed_body(shared, first, Some((every, chunk(json!({"content": piece}), None)))))
        }
    }
}
