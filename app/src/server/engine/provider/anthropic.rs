//! Client for Anthropic's native Messages API: streaming with tools, `tool_use` input assembled
//! from `input_json_delta` pieces, the system prompt marked for prompt caching, errors classified
//! and safe retries before the first byte of the answer (the same policy as the OpenAI client).

use std::borrow::Cow;
use std::collections::BTreeMap;

use bytes::Bytes;
use parley_widget::sse::SseFrame;
use serde_json::{Map, Value, json};

use super::transport::{KeyHeader, Sink, Transport, TransportSettings, WireFormat, truncate};
use super::{
    AttemptLog, ChatModel, FinishReason, ModelEvent, ModelMessage, ModelRequest, ModelStream, ModelToolCall,
    ProviderError, TokenUsage,
};
use crate::server::secret::ApiKey;

/// The API version every request names.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `max_tokens` is required by the Messages API; this is used when the agent sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// One configured endpoint.
#[derive(Clone, Debug)]
pub struct AnthropicClient {
    transport: Transport,
}

impl AnthropicClient {
    /// `base_url` like `https://api.anthropic.com/v1`; `/messages` is appended.
    pub fn new(http: reqwest::Client, base_url: &str, api_key: Option<ApiKey>, settings: TransportSettings) -> Self {
        let url = format!("{}/messages", base_url.trim_end_matches('/'));
        let headers = &[("anthropic-version", ANTHROPIC_VERSION)];
        AnthropicClient {
            transport: Transport::new(http, url, api_key, KeyHeader::Named("x-api-key"), headers, settings),
        }
    }
}

/// An exhausted balance or quota: waiting does not help, so it is no rate limit.
fn is_quota(body: &str) -> bool {
    let kind = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/type").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    let lower = body.to_ascii_lowercase();
    kind == "billing_error"
        || ["billing", "quota", "credit balance", "insufficient"].iter().any(|needle| lower.contains(needle))
}

/// A tool call's arguments as the `input` object Anthropic wants (`{}` when unreadable).
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

/// The Messages request body.
///
/// Anthropic wants strictly alternating `user` / `assistant` turns, so neighbours of the same role
/// are merged into one message of several content blocks; the results of one hop's tool calls
/// become one `user` message of `tool_result` blocks. A request without tools may not carry
/// `tool_use` / `tool_result` blocks (the API rejects it), so then earlier tool calls and results
/// are given as plain text.
pub fn request_body(request: &ModelRequest) -> Value {
    let tools_offered = !request.tools.is_empty();
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::System(s) if !s.trim().is_empty() => Some(s.as_str()),
            _ => None,
        })
        .collect();
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in &request.messages {
        let (role, blocks) = match m {
            ModelMessage::System(_) => continue,
            ModelMessage::User(text) => ("user", text_block(text).into_iter().collect::<Vec<_>>()),
            // Images first, then the text about them.
            ModelMessage::UserImages { text, images } => {
                let mut blocks: Vec<Value> = images
                    .iter()
                    .map(|i| {
                        json!({"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": &*i.base64}})
                    })
                    .collect();
                blocks.extend(text_block(text));
                ("user", blocks)
            }
            ModelMessage::Assistant { content, tool_calls } => {
                let mut blocks: Vec<Value> = text_block(content).into_iter().collect();
                for call in tool_calls {
                    names.insert(&call.id, &call.name);
                    if tools_offered {
                        blocks.push(json!({
                            "type": "tool_use",
                            "id": call.id,
                            "name": call.name,
                            "input": tool_input(&call.arguments),
                        }));
                    } else {
                        let args = tool_input(&call.arguments);
                        blocks.extend(text_block(&format!("[called the tool {} with {args}]", call.name)));
                    }
                }
                ("assistant", blocks)
            }
            ModelMessage::Tool { call_id, content } => {
                let block = if tools_offered {
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content})
                } else {
                    let name = names.get(call_id.as_str()).copied().unwrap_or("tool");
                    json!({"type": "text", "text": format!("[result of the tool {name}: {content}]")})
                };
                ("user", vec![block])
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "stream": true,
        "messages": messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect::<Vec<_>>(),
    });
    if !system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": system.join("\n\n"),
            "cache_control": {"type": "ephemeral"},
        }]);
    }
    if tools_offered {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

/// A text block; none for empty text (the API rejects empty text blocks).
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

#[async_trait::async_trait]
impl ChatModel for AnthropicClient {
    fn provider(&self) -> &'static str {
        "anthropic"
    }

    async fn stream(&self, request: ModelRequest, attempts: &AttemptLog) -> Result<ModelStream, ProviderError> {
        let body = Bytes::from(
            serde_json::to_vec(&request_body(&request)).map_err(|e| ProviderError::Protocol(e.to_string()))?,
        );
        self.transport.stream::<AnthropicWire>(body, &request.model, attempts).await
    }
}

/// Turns a non-streamed message into the same events a stream gives.
fn parse_message(text: &str) -> Result<Vec<ModelEvent>, ProviderError> {
    let v: Value = serde_json::from_str(text).map_err(|e| ProviderError::Protocol(e.to_string()))?;
    if v.get("type").and_then(Value::as_str) == Some("error") {
        return Err(ProviderError::StreamError(error_message(v.get("error").unwrap_or(&Value::Null))));
    }
    let mut events = Vec::new();
    for (i, block) in v.get("content").and_then(Value::as_array).into_iter().flatten().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    events.push(ModelEvent::Text(t.to_owned()));
                }
            }
            Some("tool_use") => events.push(ModelEvent::ToolCall(ModelToolCall {
                id: block.get("id").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| format!("toolu_{i}")),
                name: block.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                arguments: block
                    .get("input")
                    .filter(|i| i.is_object())
                    .map(Value::to_string)
                    .unwrap_or_else(|| "{}".to_owned()),
            })),
            _ => {}
        }
    }
    if let Some(u) = v.get("usage").and_then(|u| serde_json::from_value::<UsageJson>(u.clone()).ok()) {
        let mut acc = UsageAcc::default();
        acc.merge(&u);
        events.push(ModelEvent::Usage(acc.usage()));
    }
    let reason = v.get("stop_reason").and_then(Value::as_str).unwrap_or("end_turn");
    events.push(ModelEvent::Finished(finish_reason(reason)));
    Ok(events)
}

/// `type: message` of an error object (`overloaded_error: Overloaded`), so that the type stays
/// visible to whoever decides on a fallback.
fn error_message(err: &Value) -> String {
    let kind = err.get("type").and_then(Value::as_str);
    match (kind, err.get("message").and_then(Value::as_str)) {
        (Some(kind), Some(message)) => truncate(&format!("{kind}: {message}"), 300),
        (None, Some(message)) => truncate(message, 300),
        _ => truncate(&err.to_string(), 300),
    }
}

fn finish_reason(s: &str) -> FinishReason {
    match s {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// One streamed event, read without building a JSON tree (this runs for every token).
#[derive(serde::Deserialize)]
struct Event<'a> {
    #[serde(borrow, rename = "type", default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    content_block: Option<ContentBlock<'a>>,
    #[serde(default)]
    message: Option<MessageJson>,
    #[serde(default)]
    usage: Option<UsageJson>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(serde::Deserialize)]
struct Delta<'a> {
    #[serde(borrow, rename = "type", default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct ContentBlock<'a> {
    #[serde(borrow, rename = "type", default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct MessageJson {
    #[serde(default)]
    usage: Option<UsageJson>,
}

#[derive(serde::Deserialize)]
struct UsageJson {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

/// Token counts as they arrive: `message_start` gives the input, `message_delta` the output (its
/// counts are cumulative, so a later value replaces an earlier one).
#[derive(Default)]
struct UsageAcc {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_creation: u64,
}

impl UsageAcc {
    fn merge(&mut self, u: &UsageJson) {
        if let Some(n) = u.input_tokens {
            self.input = n;
        }
        if let Some(n) = u.output_tokens {
            self.output = n;
        }
        if let Some(n) = u.cache_read_input_tokens {
            self.cache_read = n;
        }
        if let Some(n) = u.cache_creation_input_tokens {
            self.cache_creation = n;
        }
    }

    /// Anthropic counts cached and cache-written tokens apart from `input_tokens`; the ledger's
    /// input is all of them, its cached part the cache reads.
    fn usage(&self) -> TokenUsage {
        TokenUsage {
            input: self.input + self.cache_read + self.cache_creation,
            output: self.output,
            cached: self.cache_read,
        }
    }
}

/// A `tool_use` block being streamed.
#[derive(Default)]
struct PartialTool {
    id: String,
    name: String,
    json: String,
}

/// The wire format of a streamed message: text deltas as they come, `tool_use` input gathered
/// from `input_json_delta` pieces, usage from `message_start` and `message_delta`.
#[derive(Default)]
pub struct AnthropicWire {
    tools: BTreeMap<u64, PartialTool>,
    usage: UsageAcc,
    calls: usize,
    finish: Option<FinishReason>,
}

impl WireFormat for AnthropicWire {
    fn frame(&mut self, frame: SseFrame, out: &mut Sink) {
        let data = frame.data.trim();
        if data.is_empty() {
            return;
        }
        let event: Event<'_> = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(_) if frame.event.as_deref() == Some("error") => {
                return out.fail(ProviderError::StreamError(truncate(data, 300)));
            }
            Err(e) => return out.fail(ProviderError::Protocol(format!("bad event: {e}"))),
        };
        // The `type` inside the data names the event; the SSE `event:` line says the same.
        let kind = event.kind.as_deref().or(frame.event.as_deref()).unwrap_or_default();
        match kind {
            "message_start" => {
                if let Some(u) = event.message.as_ref().and_then(|m| m.usage.as_ref()) {
                    self.usage.merge(u);
                }
            }
            "content_block_start" => {
                let Some(block) = event.content_block else { return };
                match block.kind.as_deref() {
                    Some("tool_use") => {
                        let tool = PartialTool {
                            id: block.id.map(Cow::into_owned).unwrap_or_default(),
                            name: block.name.map(Cow::into_owned).unwrap_or_default(),
                            json: String::new(),
                        };
                        self.tools.insert(event.index.unwrap_or(0), tool);
                    }
                    Some("text") => {
                        if let Some(text) = block.text.filter(|t| !t.is_empty()) {
                            out.push(ModelEvent::Text(text.into_owned()));
                        }
                    }
                    // Thinking and server-side tool blocks are not part of the answer.
                    _ => {}
                }
            }
            "content_block_delta" => {
                let Some(delta) = event.delta else { return };
                match delta.kind.as_deref() {
                    Some("text_delta") => {
                        if let Some(text) = delta.text.filter(|t| !t.is_empty()) {
                            out.push(ModelEvent::Text(text.into_owned()));
                        }
                    }
                    Some("input_json_delta") => {
                        if let (Some(tool), Some(part)) =
                            (self.tools.get_mut(&event.index.unwrap_or(0)), delta.partial_json)
                        {
                            tool.json.push_str(&part);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(tool) = self.tools.remove(&event.index.unwrap_or(0)) {
                    self.emit_tool(tool, out);
                }
            }
            "message_delta" => {
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason) {
                    self.finish = Some(finish_reason(&reason));
                }
                if let Some(u) = &event.usage {
                    self.usage.merge(u);
                }
            }
            "message_stop" => self.stop(out),
            "error" => {
                let message = event.error.as_ref().map(error_message).unwrap_or_else(|| truncate(data, 300));
                out.fail(ProviderError::StreamError(message));
            }
            // `ping` and event types added later.
            _ => {}
        }
    }

    /// The body ended; without `message_stop` the answer is incomplete.
    fn end(&mut self, out: &mut Sink) {
        out.fail(ProviderError::Truncated);
    }

    fn whole(body: &str) -> Result<Vec<ModelEvent>, ProviderError> {
        parse_message(body)
    }

    fn is_quota(body: &str) -> bool {
        is_quota(body)
    }
}

impl AnthropicWire {
    fn emit_tool(&mut self, tool: PartialTool, out: &mut Sink) {
        let id = if tool.id.is_empty() { format!("toolu_{}", self.calls) } else { tool.id };
        let arguments = if tool.json.trim().is_empty() { "{}".to_owned() } else { tool.json };
        self.calls += 1;
        out.push(ModelEvent::ToolCall(ModelToolCall { id, name: tool.name, arguments }));
    }

    /// `message_stop`: the answer is complete.
    fn stop(&mut self, out: &mut Sink) {
        for (_, tool) in std::mem::take(&mut self.tools) {
            self.emit_tool(tool, out);
        }
        let reason =
            self.finish.take().unwrap_or(if self.calls > 0 { FinishReason::ToolCalls } else { FinishReason::Stop });
        out.push(ModelEvent::Usage(self.usage.usage()));
        out.push(ModelEvent::Finished(reason));
        out.close();
    }
}

#[cfg(test)]
mod tests {
    use super::super::ToolSpec;
    use reqwest::StatusCode;
    use std::time::Duration;

    use super::super::transport::{self, Reader, is_retryable};
    use super::*;

    fn state() -> Reader<AnthropicWire> {
        Reader::default()
    }

    fn classify(status: StatusCode, retry_after: Option<Duration>, body: &str) -> ProviderError {
        transport::classify(status, retry_after, body, AnthropicWire::is_quota)
    }

    fn sse(event: &str, data: Value) -> String {
        format!("event: {event}\ndata: {data}\n\n")
    }

    fn message_start(input: u64, cache_read: u64, cache_creation: u64) -> String {
        sse(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                "content": [], "model": "claude-sonnet-4-20250514", "stop_reason": null,
                "usage": {"input_tokens": input, "output_tokens": 1,
                    "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_creation}}}),
        )
    }

    fn text_delta(index: u64, text: &str) -> String {
        sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
        )
    }

    fn json_delta(index: u64, part: &str) -> String {
        sse(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part}}),
        )
    }

    fn block_stop(index: u64) -> String {
        sse("content_block_stop", json!({"type": "content_block_stop", "index": index}))
    }

    fn message_end(reason: &str, output: u64) -> String {
        sse(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null},
                "usage": {"output_tokens": output}}),
        ) + &sse("message_stop", json!({"type": "message_stop"}))
    }

    /// Feeds the whole text in chunks of `size` bytes, then ends the body.
    fn run_chunked(text: &str, size: usize) -> Vec<Result<ModelEvent, ProviderError>> {
        let mut st = state();
        for c in text.as_bytes().chunks(size) {
            st.bytes(c);
        }
        st.end();
        st.sink.drain()
    }

    fn run(text: &str) -> Vec<Result<ModelEvent, ProviderError>> {
        run_chunked(text, text.len().max(1))
    }

    #[test]
    fn streams_text_as_it_arrives() {
        let mut st = state();
        st.bytes(message_start(10, 0, 0).as_bytes());
        st.bytes(
            sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            )
            .as_bytes(),
        );
        st.bytes(sse("ping", json!({"type": "ping"})).as_bytes());
        st.bytes(text_delta(0, "Hello").as_bytes());
        // The token is out before the message is finished.
        assert_eq!(st.sink.pop(), Some(Ok(ModelEvent::Text("Hello".into()))));
        st.bytes(text_delta(0, " there").as_bytes());
        st.bytes(block_stop(0).as_bytes());
        st.bytes(message_end("end_turn", 3).as_bytes());
        st.end();
        let events: Vec<_> = st.sink.drain();
        assert_eq!(
            events,
            vec![
                Ok(ModelEvent::Text(" there".into())),
                Ok(ModelEvent::Usage(TokenUsage { input: 10, output: 3, cached: 0 })),
                Ok(ModelEvent::Finished(FinishReason::Stop)),
            ]
        );
    }

    #[test]
    fn assembles_tool_use_from_partial_json_across_chunks() {
        let body = [
            message_start(20, 0, 0),
            sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            text_delta(0, "Let me get a person."),
            block_stop(0),
            sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block":
                    {"type": "tool_use", "id": "toolu_01", "name": "escalate_to_human", "input": {}}}),
            ),
            json_delta(1, ""),
            json_delta(1, "{\"rea"),
            json_delta(1, "son\": \"bill"),
            json_delta(1, "ing\"}"),
            block_stop(1),
            sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 2, "content_block":
                    {"type": "tool_use", "id": "toolu_02", "name": "no_args", "input": {}}}),
            ),
            block_stop(2),
            message_end("tool_use", 42),
        ]
        .concat();
        let expected = vec![
            Ok(ModelEvent::Text("Let me get a person.".into())),
            Ok(ModelEvent::ToolCall(ModelToolCall {
                id: "toolu_01".into(),
                name: "escalate_to_human".into(),
                arguments: "{\"reason\": \"billing\"}".into(),
            })),
            Ok(ModelEvent::ToolCall(ModelToolCall {
                id: "toolu_02".into(),
                name: "no_args".into(),
                arguments: "{}".into(),
            })),
            Ok(ModelEvent::Usage(TokenUsage { input: 20, output: 42, cached: 0 })),
            Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
        ];
        // Whole, and cut into pieces that split lines, field names and JSON anywhere.
        assert_eq!(run(&body), expected);
        for size in [1, 3, 7, 16, 61] {
            assert_eq!(run_chunked(&body, size), expected, "chunks of {size} bytes");
        }
        // One cut exactly inside a `data:` line.
        let cut = body.find("son\\\": \\\"bill").unwrap() + 2;
        let mut st = state();
        st.bytes(&body.as_bytes()[..cut]);
        assert!(!st.sink.pending().iter().any(|e| matches!(e, Ok(ModelEvent::ToolCall(_)))));
        st.bytes(&body.as_bytes()[cut..]);
        st.end();
        assert_eq!(st.sink.drain(), expected);
    }

    #[test]
    fn usage_counts_cache_reads_and_writes_as_input() {
        let body = [message_start(12, 300, 40), text_delta(0, "ok"), message_end("end_turn", 5)].concat();
        assert_eq!(
            run(&body),
            vec![
                Ok(ModelEvent::Text("ok".into())),
                Ok(ModelEvent::Usage(TokenUsage { input: 352, output: 5, cached: 300 })),
                Ok(ModelEvent::Finished(FinishReason::Stop)),
            ]
        );
    }

    #[test]
    fn finish_reasons_map() {
        assert_eq!(finish_reason("end_turn"), FinishReason::Stop);
        assert_eq!(finish_reason("stop_sequence"), FinishReason::Stop);
        assert_eq!(finish_reason("tool_use"), FinishReason::ToolCalls);
        assert_eq!(finish_reason("max_tokens"), FinishReason::Length);
        assert_eq!(finish_reason("refusal"), FinishReason::Other("refusal".into()));
        let events = run(&[message_start(1, 0, 0), text_delta(0, "Cut"), message_end("max_tokens", 1)].concat());
        assert_eq!(events.last(), Some(&Ok(ModelEvent::Finished(FinishReason::Length))));
    }

    #[test]
    fn stream_without_message_stop_is_truncated() {
        let events = run(&[message_start(1, 0, 0), text_delta(0, "Hel")].concat());
        assert_eq!(events, vec![Ok(ModelEvent::Text("Hel".into())), Err(ProviderError::Truncated)]);
        // A tool call that never got its `content_block_stop` is not announced.
        let events = run(&[
            message_start(1, 0, 0),
            sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block":
                    {"type": "tool_use", "id": "t", "name": "x", "input": {}}}),
            ),
            json_delta(0, "{\"a\":"),
        ]
        .concat());
        assert_eq!(events, vec![Err(ProviderError::Truncated)]);
    }

    #[test]
    fn error_event_inside_the_stream_is_a_failure() {
        let overloaded =
            sse("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
        let events =
            run(&[message_start(1, 0, 0), text_delta(0, "Par"), overloaded, message_end("end_turn", 1)].concat());
        assert_eq!(
            events,
            vec![
                Ok(ModelEvent::Text("Par".into())),
                Err(ProviderError::StreamError("overloaded_error: Overloaded".into()))
            ]
        );
        assert_eq!(run("event: error\ndata: not json\n\n"), vec![Err(ProviderError::StreamError("not json".into()))]);
        assert!(matches!(run("data: {oops\n\n").as_slice(), [Err(ProviderError::Protocol(_))]));
    }

    #[test]
    fn text_split_inside_a_multibyte_character() {
        let body = [message_start(1, 0, 0), text_delta(0, "你好"), message_end("end_turn", 2)].concat();
        let cut = body.find('你').unwrap() + 1;
        let mut st = state();
        st.bytes(&body.as_bytes()[..cut]);
        st.bytes(&body.as_bytes()[cut..]);
        assert_eq!(st.sink.pop(), Some(Ok(ModelEvent::Text("你好".into()))));
    }

    #[test]
    fn classifies_statuses() {
        let body = |kind: &str| json!({"type": "error", "error": {"type": kind, "message": "m"}}).to_string();
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, Some(Duration::from_secs(3)), &body("rate_limit_error")),
            ProviderError::RateLimited { retry_after: Some(Duration::from_secs(3)) }
        );
        assert_eq!(
            classify(StatusCode::from_u16(529).unwrap(), None, &body("overloaded_error")),
            ProviderError::Server { status: 529 }
        );
        assert_eq!(
            classify(StatusCode::INTERNAL_SERVER_ERROR, None, &body("api_error")),
            ProviderError::Server { status: 500 }
        );
        let auth = classify(StatusCode::UNAUTHORIZED, None, &body("authentication_error"));
        assert_eq!(auth.code(), "auth_error");
        assert!(!is_retryable(&auth));
        assert_eq!(classify(StatusCode::FORBIDDEN, None, &body("permission_error")).code(), "auth_error");
        let billing = classify(StatusCode::TOO_MANY_REQUESTS, None, &body("billing_error"));
        assert!(matches!(billing, ProviderError::Client { status: 429, .. }), "{billing:?}");
        assert!(!is_retryable(&billing));
        let credit = json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "Your credit balance is too low to access the Anthropic API."}})
        .to_string();
        assert!(matches!(classify(StatusCode::BAD_REQUEST, None, &credit), ProviderError::Client { status: 400, .. }));
        assert!(matches!(
            classify(StatusCode::PAYMENT_REQUIRED, None, &body("billing_error")),
            ProviderError::Client { .. }
        ));
        assert!(is_retryable(&classify(StatusCode::from_u16(529).unwrap(), None, "")));
    }

    #[test]
    fn debug_output_hides_the_key() {
        let client = AnthropicClient::new(
            reqwest::Client::new(),
            "https://api.anthropic.com/v1/",
            crate::server::secret::ApiKey::new("sk-ant-secret"),
            TransportSettings::default(),
        );
        let debug = format!("{client:?}");
        assert!(debug.contains("https://api.anthropic.com/v1/messages"), "{debug}");
        assert!(!debug.contains("sk-ant-secret"), "{debug}");
    }

    fn call(id: &str, name: &str, arguments: &str) -> ModelToolCall {
        ModelToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    fn tool_request(messages: Vec<ModelMessage>) -> ModelRequest {
        ModelRequest {
            model: "claude-sonnet-4-20250514".into(),
            messages,
            tools: vec![ToolSpec {
                name: "escalate_to_human".into(),
                description: "Offer a person.".into(),
                parameters: json!({"type": "object", "properties": {"reason": {"type": "string"}}}),
            }],
            max_tokens: None,
        }
    }

    #[test]
    fn body_has_a_cached_system_prompt_and_defaults() {
        let mut req = tool_request(vec![
            ModelMessage::System("You are Parley.".into()),
            ModelMessage::System("Context: shop hours 9-5.".into()),
            ModelMessage::User("hi".into()),
        ]);
        req.tools.clear();
        let body = request_body(&req);
        assert_eq!(body["model"], "claude-sonnet-4-20250514");
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(body["stream"], true);
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "You are Parley.\n\nContext: shop hours 9-5.",
                "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(body["messages"], json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]));
        assert!(body.get("tools").is_none(), "no tools offered: {body}");

        req.max_tokens = Some(300);
        req.messages.retain(|m| !matches!(m, ModelMessage::System(_)));
        let body = request_body(&req);
        assert_eq!(body["max_tokens"], 300);
        assert!(body.get("system").is_none(), "no empty system block: {body}");
    }

    #[test]
    fn body_groups_tool_results_and_alternates_roles() {
        let req = tool_request(vec![
            ModelMessage::System("sys".into()),
            ModelMessage::Assistant { content: "Hi! How can I help?".into(), tool_calls: vec![] },
            ModelMessage::User("first".into()),
            ModelMessage::User("second".into()),
            ModelMessage::Assistant {
                content: "Checking.".into(),
                tool_calls: vec![
                    call("toolu_a", "escalate_to_human", "{\"reason\":\"x\"}"),
                    call("toolu_b", "escalate_to_human", "not json"),
                    call("toolu_c", "escalate_to_human", ""),
                ],
            },
            ModelMessage::Tool { call_id: "toolu_a".into(), content: "{\"ok\":true}".into() },
            ModelMessage::Tool { call_id: "toolu_b".into(), content: "{\"ok\":false}".into() },
            ModelMessage::Tool { call_id: "toolu_c".into(), content: "done".into() },
            ModelMessage::Assistant { content: String::new(), tool_calls: vec![] },
        ]);
        let body = request_body(&req);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "assistant", "content": [{"type": "text", "text": "Hi! How can I help?"}]},
                {"role": "user", "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_a", "name": "escalate_to_human", "input": {"reason": "x"}},
                    {"type": "tool_use", "id": "toolu_b", "name": "escalate_to_human", "input": {}},
                    {"type": "tool_use", "id": "toolu_c", "name": "escalate_to_human", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "{\"ok\":true}"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "{\"ok\":false}"},
                    {"type": "tool_result", "tool_use_id": "toolu_c", "content": "done"},
                ]},
            ])
        );
        assert_eq!(
            body["tools"],
            json!([{"name": "escalate_to_human", "description": "Offer a person.",
                "input_schema": {"type": "object", "properties": {"reason": {"type": "string"}}}}])
        );
        // Roles alternate.
        let roles: Vec<&str> =
            body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert!(roles.windows(2).all(|w| w[0] != w[1]), "{roles:?}");
    }

    #[test]
    fn body_without_tools_gives_earlier_tool_calls_as_text() {
        let mut req = tool_request(vec![
            ModelMessage::User("help".into()),
            ModelMessage::Assistant {
                content: String::new(),
                tool_calls: vec![call("toolu_a", "escalate_to_human", "{\"reason\":\"x\"}")],
            },
            ModelMessage::Tool { call_id: "toolu_a".into(), content: "{\"ok\":true}".into() },
        ]);
        req.tools.clear();
        let body = request_body(&req);
        let text = body.to_string();
        assert!(!text.contains("tool_use") && !text.contains("tool_result"), "{body}");
        assert_eq!(
            body["messages"][1],
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "[called the tool escalate_to_human with {\"reason\":\"x\"}]"}]})
        );
        assert_eq!(body["messages"][2]["content"][0]["text"], "[result of the tool escalate_to_human: {\"ok\":true}]");
    }

    #[test]
    fn images_are_base64_blocks_before_the_text() {
        let image = crate::server::engine::provider::ModelImage::new("image/jpeg", &[0xFF, 0xD8, 0xFF]);
        let mut req = tool_request(vec![
            ModelMessage::User("[image]".into()),
            ModelMessage::Assistant { content: "A cat.".into(), tool_calls: vec![] },
            ModelMessage::UserImages { text: "and this?".into(), images: vec![image.clone(), image] },
        ]);
        req.tools.clear();
        let body = request_body(&req);
        let block = json!({"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}});
        assert_eq!(
            body["messages"][2],
            json!({"role": "user", "content": [block.clone(), block, {"type": "text", "text": "and this?"}]})
        );
        assert_eq!(body["messages"][0]["content"], json!([{"type": "text", "text": "[image]"}]));
        // An image alone: no empty text block.
        req.messages = vec![ModelMessage::UserImages {
            text: String::new(),
            images: vec![crate::server::engine::provider::ModelImage::new("image/png", b"x")],
        }];
        let body = request_body(&req);
        assert_eq!(body["messages"][0]["content"].as_array().unwrap().len(), 1);
        assert_eq!(body["messages"][0]["content"][0]["type"], "image");
    }

    #[test]
    fn reads_a_message_that_was_not_streamed() {
        let text = json!({"type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "toolu_9", "name": "escalate_to_human", "input": {"reason": "r"}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 4, "output_tokens": 6, "cache_read_input_tokens": 2}})
        .to_string();
        assert_eq!(
            parse_message(&text).unwrap(),
            vec![
                ModelEvent::Text("Sure.".into()),
                ModelEvent::ToolCall(call("toolu_9", "escalate_to_human", "{\"reason\":\"r\"}")),
                ModelEvent::Usage(TokenUsage { input: 6, output: 6, cached: 2 }),
                ModelEvent::Finished(FinishReason::ToolCalls),
            ]
        );
    }
}
