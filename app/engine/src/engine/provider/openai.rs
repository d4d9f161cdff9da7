//! Client for OpenAI-compatible Chat Completions APIs (OpenAI, OpenRouter, Cloudflare Workers AI,
//! Ollama, vLLM): the request body and the wire format (tool calls assembled from the stream's
//! deltas). Sending, retries and timeouts are the shared [`transport`](super::transport).

use std::borrow::Cow;
use std::collections::BTreeMap;

use bytes::Bytes;
use parley_protocol::sse::SseFrame;
use serde_json::{Value, json};

use super::h2c::Upstream;
use super::stream::Sink;
use super::transport::{KeyHeader, Transport, TransportSettings, WireFormat, truncate};
use super::{
    AttemptLog, ChatModel, FinishReason, ModelEvent, ModelMessage, ModelRequest, ModelStream, ModelToolCall,
    ProviderError, TokenUsage,
};
use crate::secret::ApiKey;

/// One configured endpoint.
#[derive(Clone, Debug)]
pub struct OpenAiClient {
    transport: Transport,
}

impl OpenAiClient {
    /// `base_url` like `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub fn new(
        http: impl Into<Upstream>,
        base_url: &str,
        api_key: Option<ApiKey>,
        settings: TransportSettings,
    ) -> Self {
        let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
        OpenAiClient { transport: Transport::new(http, url, api_key, KeyHeader::Bearer, &[], settings) }
    }
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
        self.transport.stream::<OpenAiWire>(body, &request.model, attempts).await
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
        // OpenAI-compatible APIs cache by themselves and charge no extra for writing.
        cache_written: 0,
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

/// One tool call's fragments, as they arrive.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The wire format of a streamed completion: text deltas as they come, tool-call fragments
/// gathered by index until the answer ends.
#[derive(Default)]
pub struct OpenAiWire {
    /// The calls in the order they began.
    calls: Vec<PartialCall>,
    /// The call each `index` is adding to now. Some servers give parallel calls all `index: 0`
    /// with different ids: a new id at an index begins a new call.
    open: BTreeMap<u64, usize>,
    finish: Option<FinishReason>,
}

impl OpenAiWire {
    fn add(&mut self, pos: usize, c: ToolDelta<'_>) {
        let index = c.index.unwrap_or(pos as u64);
        let id = c.id.filter(|id| !id.is_empty());
        let current = self.open.get(&index).copied();
        let slot = match (current, &id) {
            // The same id again (some servers repeat it in every fragment) or none: the same call.
            (Some(at), Some(id)) if self.calls[at].id.is_empty() || self.calls[at].id == id.as_ref() => at,
            (Some(at), None) => at,
            _ => {
                self.calls.push(PartialCall::default());
                self.open.insert(index, self.calls.len() - 1);
                self.calls.len() - 1
            }
        };
        let entry = &mut self.calls[slot];
        if let Some(id) = id {
            entry.id = id.into_owned();
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

impl WireFormat for OpenAiWire {
    fn frame(&mut self, frame: SseFrame, out: &mut Sink) {
        if frame.event.as_deref() == Some("error") {
            return out.fail(ProviderError::StreamError(truncate(&frame.data, 300)));
        }
        let data = frame.data.trim();
        if data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            return self.end(out);
        }
        let chunk: Chunk<'_> = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => return out.fail(ProviderError::Protocol(format!("bad chunk: {e}"))),
        };
        if let Some(err) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            return out.fail(ProviderError::StreamError(error_message(err)));
        }
        if let Some(u) = chunk.usage {
            out.push(ModelEvent::Usage(TokenUsage {
                input: u.prompt_tokens,
                output: u.completion_tokens,
                cached: u.prompt_tokens_details.map(|d| d.cached_tokens).unwrap_or(0),
                cache_written: 0,
            }));
        }
        let Some(choice) = chunk.choices.into_iter().next() else { return };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                out.push(ModelEvent::Text(text.into_owned()));
            }
            for (pos, c) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                self.add(pos, c);
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish = Some(finish_reason(&reason));
        }
    }

    /// `[DONE]` or the end of the body: the gathered tool calls, then the finish. Without a
    /// finish reason the answer was cut off.
    fn end(&mut self, out: &mut Sink) {
        out.close();
        let Some(reason) = self.finish.take() else {
            return out.fail(ProviderError::Truncated);
        };
        self.open.clear();
        for (i, call) in std::mem::take(&mut self.calls).into_iter().enumerate() {
            let id = if call.id.is_empty() { format!("call_{i}") } else { call.id };
            let arguments = if call.arguments.trim().is_empty() { "{}".to_owned() } else { call.arguments };
            out.push(ModelEvent::ToolCall(ModelToolCall { id, name: call.name, arguments }));
        }
        out.push(ModelEvent::Finished(reason));
    }

    fn whole(body: &str) -> Result<Vec<ModelEvent>, ProviderError> {
        parse_completion(body)
    }

    fn is_quota(body: &str) -> bool {
        body.contains("insufficient_quota")
    }
}

#[cfg(test)]
mod tests {
    use reqwest::StatusCode;

    use super::super::stream::Reader;
    use super::super::transport::classify;
    use super::*;

    fn run(chunks: &[&str]) -> Vec<Result<ModelEvent, ProviderError>> {
        let mut reader = Reader::<OpenAiWire>::default();
        for c in chunks {
            reader.bytes(c.as_bytes());
        }
        reader.end();
        reader.sink.drain()
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
                Ok(ModelEvent::Usage(TokenUsage { input: 5, output: 7, cached: 0, cache_written: 0 })),
                Ok(ModelEvent::ToolCall(ModelToolCall {
                    id: "c1".into(),
                    name: "escalate_to_human".into(),
                    arguments: "{\"reason\":\"x\"}".into()
                })),
                Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
            ]
        );
    }

    fn call(id: &str, name: &str, arguments: &str) -> Result<ModelEvent, ProviderError> {
        Ok(ModelEvent::ToolCall(ModelToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }))
    }

    #[test]
    fn parallel_calls_all_at_index_0_stay_separate() {
        let delta = |rest: &str| format!("data: {{\"choices\":[{{\"delta\":{{\"tool_calls\":[{rest}]}}}}]}}\n\n");
        let chunks = [
            delta(r#"{"index":0,"id":"a","function":{"name":"get_time","arguments":"{\"city\":"}}"#),
            delta(r#"{"index":0,"function":{"arguments":"\"HK\"}"}}"#),
            delta(r#"{"index":0,"id":"b","function":{"name":"get_time","arguments":""}}"#),
            delta(r#"{"index":0,"id":"b","function":{"arguments":"{\"city\":\"SG\"}"}}"#),
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n".to_owned(),
        ];
        let events = run(&chunks.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            events,
            vec![
                call("a", "get_time", "{\"city\":\"HK\"}"),
                call("b", "get_time", "{\"city\":\"SG\"}"),
                Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
            ],
            "a new id at index 0 is a new call; the same id repeated is the same call"
        );
    }

    #[test]
    fn text_split_inside_a_multibyte_character() {
        let frame = "data: {\"choices\":[{\"delta\":{\"content\":\"你好\"},\"finish_reason\":\"stop\"}]}\n\n";
        let bytes = frame.as_bytes();
        let cut = frame.find('你').unwrap() + 1;
        let mut reader = Reader::<OpenAiWire>::default();
        reader.bytes(&bytes[..cut]);
        reader.bytes(&bytes[cut..]);
        reader.end();
        assert_eq!(reader.sink.drain().into_iter().next(), Some(Ok(ModelEvent::Text("你好".into()))));
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
    fn an_exhausted_quota_is_no_rate_limit() {
        assert!(matches!(
            classify(StatusCode::TOO_MANY_REQUESTS, None, "insufficient_quota", OpenAiWire::is_quota),
            ProviderError::Client { .. }
        ));
        assert!(matches!(
            classify(StatusCode::TOO_MANY_REQUESTS, None, "slow down", OpenAiWire::is_quota),
            ProviderError::RateLimited { .. }
        ));
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
