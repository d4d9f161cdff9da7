//! Client for OpenAI-compatible Chat Completions APIs (OpenAI, OpenRouter, Cloudflare Workers AI,
//! Ollama, vLLM): streaming with tools, tool calls assembled from the stream's deltas, errors
//! classified, safe retries before the first byte of the answer.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use parley_widget::sse::{SseFrame, SseParser, Utf8Decoder};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::{
    Attempt, AttemptLog, ChatModel, FinishReason, ModelEvent, ModelMessage, ModelRequest, ModelStream, ModelToolCall,
    ProviderError, TokenUsage,
};

/// Timeouts and retry policy of the client.
#[derive(Clone, Debug)]
pub struct OpenAiSettings {
    /// From sending the request to the response headers and the first chunk of the body.
    pub first_byte_timeout: Duration,
    /// Longest silence between two chunks of a streaming body.
    pub idle_timeout: Duration,
    /// Retries after the first attempt (429, 5xx, connect errors and timeouts).
    pub max_retries: u32,
    /// The longest a `retry-after` is honoured; longer hints are cut to this.
    pub max_retry_wait: Duration,
    /// First backoff for 5xx and connect errors; doubled each retry.
    pub backoff: Duration,
}

impl Default for OpenAiSettings {
    fn default() -> Self {
        OpenAiSettings {
            first_byte_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            max_retries: 2,
            max_retry_wait: Duration::from_secs(10),
            backoff: Duration::from_millis(250),
        }
    }
}

/// One configured endpoint.
#[derive(Clone, Debug)]
pub struct OpenAiClient {
    http: reqwest::Client,
    url: String,
    api_key: Option<String>,
    settings: OpenAiSettings,
}

impl OpenAiClient {
    /// `base_url` like `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub fn new(http: reqwest::Client, base_url: &str, api_key: Option<String>, settings: OpenAiSettings) -> Self {
        let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
        OpenAiClient { http, url, api_key, settings }
    }

    async fn send_once(&self, body: &Bytes) -> Result<reqwest::Response, ProviderError> {
        let mut request = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .body(body.clone());
        if let Some(key) = self.api_key.as_deref().filter(|k| !k.is_empty()) {
            request = request.bearer_auth(key);
        }
        let response = tokio::time::timeout(self.settings.first_byte_timeout, request.send())
            .await
            .map_err(|_| ProviderError::Timeout("first byte"))?
            .map_err(|e| {
                if e.is_timeout() { ProviderError::Timeout("connect") } else { ProviderError::Connect(without_url(&e)) }
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let detail = response.text().await.unwrap_or_default();
        Err(classify(status, retry_after, &detail))
    }
}

/// The error of a non-2xx answer.
fn classify(status: StatusCode, retry_after: Option<Duration>, body: &str) -> ProviderError {
    match status.as_u16() {
        429 => {
            // Some providers use 429 for an exhausted quota; waiting does not help there.
            if body.contains("insufficient_quota") {
                ProviderError::Client { status: 429, detail: truncate(body, 300) }
            } else {
                ProviderError::RateLimited { retry_after }
            }
        }
        s @ 500..=599 => ProviderError::Server { status: s },
        s => ProviderError::Client { status: s, detail: truncate(body, 300) },
    }
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds).
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_millis(ms as u64));
    }
    get("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

pub(super) fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// reqwest errors name the URL; keys can live in query strings, so keep only the cause.
pub(super) fn without_url(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut last = String::from("connection failed");
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last
}

pub(super) fn is_retryable(e: &ProviderError) -> bool {
    matches!(
        e,
        ProviderError::RateLimited { .. }
            | ProviderError::Server { .. }
            | ProviderError::Connect(_)
            | ProviderError::Timeout(_)
    )
}

/// The Chat Completions request body.
pub fn request_body(request: &ModelRequest) -> Value {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| match m {
            ModelMessage::System(c) => json!({"role": "system", "content": c}),
            ModelMessage::User(c) => json!({"role": "user", "content": c}),
            ModelMessage::UserImages { text, images } => {
                let mut parts: Vec<Value> = Vec::with_capacity(images.len() + 1);
                if !text.is_empty() {
                    parts.push(json!({"type": "text", "text": text}));
                }
                parts.extend(images.iter().map(|i| json!({"type": "image_url", "image_url": {"url": i.data_url()}})));
                json!({"role": "user", "content": parts})
            }
            ModelMessage::Assistant { content, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": content})
            }
            ModelMessage::Assistant { content, tool_calls } => json!({
                "role": "assistant",
                "content": if content.is_empty() { Value::Null } else { Value::String(content.clone()) },
                "tool_calls": tool_calls.iter().map(|c| json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })).collect::<Vec<_>>(),
            }),
            ModelMessage::Tool { call_id, content } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        })
        .collect();
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        body["tool_choice"] = json!("auto");
    }
    if let Some(max) = request.max_tokens {
        body["max_tokens"] = json!(max);
    }
    body
}

#[async_trait::async_trait]
impl ChatModel for OpenAiClient {
    fn provider(&self) -> &'static str {
        "openai"
    }

    async fn stream(&self, request: ModelRequest, attempts: &AttemptLog) -> Result<ModelStream, ProviderError> {
        let body = Bytes::from(
            serde_json::to_vec(&request_body(&request)).map_err(|e| ProviderError::Protocol(e.to_string()))?,
        );
        let body = &body;
        with_retries(&self.settings, &request.model, attempts, |started| async move {
            let response = self.send_once(body).await?;
            if !is_json(&response) {
                return Ok(
                    Box::pin(event_stream(response.bytes_stream(), self.settings.clone(), started)) as ModelStream
                );
            }
            // A provider that ignored `stream: true`: one JSON completion.
            let events = parse_completion(&whole_body(response, &self.settings).await?)?;
            Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))) as ModelStream)
        })
        .await
    }
}

/// Whether a response is plain JSON (a provider or gateway that does not stream).
pub(super) fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// A whole (non-streamed) body, within the idle timeout.
pub(super) async fn whole_body(
    response: reqwest::Response,
    settings: &OpenAiSettings,
) -> Result<String, ProviderError> {
    tokio::time::timeout(settings.idle_timeout, response.text())
        .await
        .map_err(|_| ProviderError::Timeout("body"))?
        .map_err(|e| ProviderError::Connect(without_url(&e)))
}

/// Runs `attempt` until it gives a stream, retrying what is safe to retry before any answer byte:
/// 429 after its `retry-after` (capped), 5xx, connect errors and timeouts after a doubling
/// backoff. Every failed attempt is recorded in `attempts`.
pub(super) async fn with_retries<F, Fut>(
    settings: &OpenAiSettings,
    model: &str,
    attempts: &AttemptLog,
    mut attempt: F,
) -> Result<ModelStream, ProviderError>
where
    F: FnMut(Instant) -> Fut,
    Fut: std::future::Future<Output = Result<ModelStream, ProviderError>>,
{
    let mut retries = 0;
    let mut backoff = settings.backoff;
    loop {
        let started = Instant::now();
        let error = match attempt(started).await {
            Ok(stream) => return Ok(stream),
            Err(e) => e,
        };
        attempts.push(Attempt {
            model: model.to_owned(),
            outcome: error.code(),
            latency_ms: started.elapsed().as_millis() as u64,
        });
        if !is_retryable(&error) || retries >= settings.max_retries {
            return Err(error);
        }
        retries += 1;
        let wait = match &error {
            ProviderError::RateLimited { retry_after: Some(d) } => (*d).min(settings.max_retry_wait),
            ProviderError::RateLimited { retry_after: None } => backoff.min(settings.max_retry_wait),
            _ => backoff,
        };
        backoff = backoff.saturating_mul(2);
        tracing::info!(code = error.code(), wait_ms = wait.as_millis() as u64, retries, "retrying model call");
        tokio::time::sleep(wait).await;
    }
}

/// Turns a non-streamed completion into the same events a stream gives.
fn parse_completion(text: &str) -> Result<Vec<ModelEvent>, ProviderError> {
    let v: Value = serde_json::from_str(text).map_err(|e| ProviderError::Protocol(e.to_string()))?;
    if let Some(err) = v.get("error") {
        return Err(ProviderError::StreamError(error_message(err)));
    }
    let choice = v.pointer("/choices/0").ok_or_else(|| ProviderError::Protocol("no choices".into()))?;
    let mut events = Vec::new();
    if let Some(content) = choice.pointer("/message/content").and_then(Value::as_str)
        && !content.is_empty()
    {
        events.push(ModelEvent::Text(content.to_owned()));
    }
    if let Some(calls) = choice.pointer("/message/tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            events.push(ModelEvent::ToolCall(ModelToolCall {
                id: c.get("id").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| format!("call_{i}")),
                name: c.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                arguments: c.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("{}").to_owned(),
            }));
        }
    }
    if let Some(u) = v.get("usage") {
        events.push(ModelEvent::Usage(parse_usage(u)));
    }
    let reason = choice.get("finish_reason").and_then(Value::as_str).unwrap_or("stop");
    events.push(ModelEvent::Finished(finish_reason(reason)));
    Ok(events)
}

fn error_message(err: &Value) -> String {
    err.get("message").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| truncate(&err.to_string(), 300))
}

fn parse_usage(u: &Value) -> TokenUsage {
    let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    TokenUsage {
        input: n("/prompt_tokens"),
        output: n("/completion_tokens"),
        cached: n("/prompt_tokens_details/cached_tokens"),
    }
}

fn finish_reason(s: &str) -> FinishReason {
    match s {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// One streamed chunk, read without building a JSON tree (this runs for every token).
#[derive(serde::Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    choices: Vec<ChunkChoice<'a>>,
    #[serde(default)]
    usage: Option<UsageJson>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(serde::Deserialize)]
struct ChunkChoice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolDelta<'a>>>,
}

#[derive(serde::Deserialize)]
struct ToolDelta<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(serde::Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct UsageJson {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<UsageDetails>,
}

#[derive(serde::Deserialize)]
struct UsageDetails {
    #[serde(default)]
    cached_tokens: u64,
}

/// Tool call fragments by index, as they arrive.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// State of one streaming body.
struct StreamState<S> {
    body: S,
    settings: OpenAiSettings,
    deadline_first: Option<Instant>,
    decoder: Utf8Decoder,
    parser: SseParser,
    pending: VecDeque<Result<ModelEvent, ProviderError>>,
    calls: BTreeMap<u64, PartialCall>,
    finish: Option<FinishReason>,
    done: bool,
}

impl<S> StreamState<S> {
    fn frame(&mut self, frame: SseFrame) {
        if self.done {
            return;
        }
        if frame.event.as_deref() == Some("error") {
            self.fail(ProviderError::StreamError(truncate(&frame.data, 300)));
            return;
        }
        let data = frame.data.trim();
        if data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            self.end();
            return;
        }
        let chunk: Chunk<'_> = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => return self.fail(ProviderError::Protocol(format!("bad chunk: {e}"))),
        };
        if let Some(err) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            return self.fail(ProviderError::StreamError(error_message(err)));
        }
        if let Some(u) = chunk.usage {
            self.pending.push_back(Ok(ModelEvent::Usage(TokenUsage {
                input: u.prompt_tokens,
                output: u.completion_tokens,
                cached: u.prompt_tokens_details.map(|d| d.cached_tokens).unwrap_or(0),
            })));
        }
        let Some(choice) = chunk.choices.into_iter().next() else { return };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.pending.push_back(Ok(ModelEvent::Text(text.into_owned())));
            }
            for (pos, c) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                let entry = self.calls.entry(c.index.unwrap_or(pos as u64)).or_default();
                if let Some(id) = c.id {
                    entry.id.push_str(&id);
                }
                if let Some(f) = c.function {
                    if let Some(name) = f.name {
                        entry.name.push_str(&name);
                    }
                    if let Some(args) = f.arguments {
                        entry.arguments.push_str(&args);
                    }
                }
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish = Some(finish_reason(&reason));
        }
    }

    fn fail(&mut self, error: ProviderError) {
        self.pending.push_back(Err(error));
        self.done = true;
    }

    /// The body ended (`[DONE]` or end of stream).
    fn end(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let Some(reason) = self.finish.take() else {
            self.pending.push_back(Err(ProviderError::Truncated));
            return;
        };
        for (i, call) in std::mem::take(&mut self.calls) {
            let id = if call.id.is_empty() { format!("call_{i}") } else { call.id };
            let arguments = if call.arguments.trim().is_empty() { "{}".to_owned() } else { call.arguments };
            self.pending.push_back(Ok(ModelEvent::ToolCall(ModelToolCall { id, name: call.name, arguments })));
        }
        self.pending.push_back(Ok(ModelEvent::Finished(reason)));
    }

    /// Appends bytes, decoding only complete UTF-8 sequences.
    fn bytes(&mut self, chunk: &[u8]) {
        let text = match self.decoder.push(chunk) {
            Ok(text) => text,
            Err(_) => return self.fail(ProviderError::Protocol("invalid UTF-8 in stream".into())),
        };
        let mut frames = Vec::new();
        self.parser.feed_with(&text, |f| frames.push(f));
        for f in frames {
            self.frame(f);
        }
    }
}

fn event_stream<S>(
    body: S,
    settings: OpenAiSettings,
    started: Instant,
) -> impl Stream<Item = Result<ModelEvent, ProviderError>> + Send
where
    S: Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static,
{
    let state = StreamState {
        body,
        deadline_first: Some(started + settings.first_byte_timeout),
        settings,
        decoder: Utf8Decoder::default(),
        parser: SseParser::new(),
        pending: VecDeque::new(),
        calls: BTreeMap::new(),
        finish: None,
        done: false,
    };
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(item) = st.pending.pop_front() {
                return Some((item, st));
            }
            if st.done {
                return None;
            }
            let wait = match st.deadline_first.take() {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => st.settings.idle_timeout,
            };
            match tokio::time::timeout(wait, st.body.next()).await {
                Err(_) => st.fail(ProviderError::Timeout("idle")),
                Ok(None) => st.end(),
                Ok(Some(Err(e))) => st.fail(ProviderError::Connect(without_url(&e))),
                Ok(Some(Ok(bytes))) => st.bytes(&bytes),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> Vec<Result<ModelEvent, ProviderError>> {
        let mut st = StreamState {
            body: (),
            settings: OpenAiSettings::default(),
            deadline_first: None,
            decoder: Utf8Decoder::default(),
            parser: SseParser::new(),
            pending: VecDeque::new(),
            calls: BTreeMap::new(),
            finish: None,
            done: false,
        };
        for c in chunks {
            st.bytes(c.as_bytes());
        }
        st.end();
        st.pending.into_iter().collect()
    }

    #[test]
    fn assembles_tool_calls_from_deltas() {
        let events = run(&[
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"escalate_to_human\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"rea\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"son\\\":\\\"x\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\ndata: [DONE]\n\n",
        ]);
        assert_eq!(
            events,
            vec![
                Ok(ModelEvent::Usage(TokenUsage { input: 5, output: 7, cached: 0 })),
                Ok(ModelEvent::ToolCall(ModelToolCall {
                    id: "c1".into(),
                    name: "escalate_to_human".into(),
                    arguments: "{\"reason\":\"x\"}".into()
                })),
                Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
            ]
        );
    }

    #[test]
    fn text_split_inside_a_multibyte_character() {
        let frame = "data: {\"choices\":[{\"delta\":{\"content\":\"你好\"},\"finish_reason\":\"stop\"}]}\n\n";
        let bytes = frame.as_bytes();
        let cut = frame.find('你').unwrap() + 1;
        let mut st = StreamState {
            body: (),
            settings: OpenAiSettings::default(),
            deadline_first: None,
            decoder: Utf8Decoder::default(),
            parser: SseParser::new(),
            pending: VecDeque::new(),
            calls: BTreeMap::new(),
            finish: None,
            done: false,
        };
        st.bytes(&bytes[..cut]);
        st.bytes(&bytes[cut..]);
        st.end();
        assert_eq!(st.pending.pop_front(), Some(Ok(ModelEvent::Text("你好".into()))));
    }

    #[test]
    fn error_inside_a_200_stream_is_a_failure() {
        let events = run(&["data: {\"error\":{\"message\":\"overloaded\"}}\n\n"]);
        assert_eq!(events, vec![Err(ProviderError::StreamError("overloaded".into()))]);
    }

    #[test]
    fn stream_without_finish_reason_is_truncated() {
        let events = run(&["data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"]);
        assert_eq!(events, vec![Ok(ModelEvent::Text("Hel".into())), Err(ProviderError::Truncated)]);
    }

    #[test]
    fn classifies_statuses() {
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, Some(Duration::from_millis(20)), ""),
            ProviderError::RateLimited { retry_after: Some(Duration::from_millis(20)) }
        );
        assert!(matches!(
            classify(StatusCode::TOO_MANY_REQUESTS, None, "insufficient_quota"),
            ProviderError::Client { .. }
        ));
        assert_eq!(classify(StatusCode::BAD_GATEWAY, None, ""), ProviderError::Server { status: 502 });
        assert_eq!(classify(StatusCode::UNAUTHORIZED, None, "").code(), "auth_error");
    }

    #[test]
    fn reads_retry_after_headers() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
    }

    #[test]
    fn body_offers_tools_only_when_there_are_some() {
        let mut req = ModelRequest {
            model: "m".into(),
            messages: vec![ModelMessage::User("hi".into())],
            tools: vec![],
            max_tokens: None,
        };
        assert!(request_body(&req).get("tools").is_none());
        req.tools.push(super::super::ToolSpec {
            name: "t".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        });
        assert_eq!(request_body(&req)["tools"][0]["function"]["name"], "t");
    }

    #[test]
    fn images_become_content_parts_after_the_text() {
        let image = super::super::ModelImage::new("image/png", b"\x89PNG");
        let req = ModelRequest {
            model: "m".into(),
            messages: vec![
                ModelMessage::User("[image] earlier".into()),
                ModelMessage::UserImages { text: "what is this?".into(), images: vec![image.clone()] },
                ModelMessage::UserImages { text: String::new(), images: vec![image] },
            ],
            tools: vec![],
            max_tokens: None,
        };
        let body = request_body(&req);
        assert_eq!(body["messages"][0], json!({"role": "user", "content": "[image] earlier"}));
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
            ]})
        );
        assert_eq!(body["messages"][2]["content"].as_array().unwrap().len(), 1, "no empty text part");
    }
}
