//! The wire format of a streamed Messages answer, and of a whole one.

use std::borrow::Cow;
use std::collections::BTreeMap;

use parley_protocol::sse::SseFrame;
use serde_json::Value;

use super::super::stream::Sink;
use super::super::transport::{WireFormat, truncate};
use super::super::{FinishReason, ModelEvent, ModelToolCall, ProviderError, TokenUsage};

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
    /// input is all of them, its cached part the cache reads; cache writes are priced apart.
    fn usage(&self) -> TokenUsage {
        TokenUsage {
            input: self.input + self.cache_read + self.cache_creation,
            output: self.output,
            cached: self.cache_read,
            cache_written: self.cache_creation,
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
    use serde_json::json;

    use super::super::super::stream::Reader;
    use super::*;

    fn state() -> Reader<AnthropicWire> {
        Reader::default()
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
                Ok(ModelEvent::Usage(TokenUsage { input: 10, output: 3, cached: 0, cache_written: 0 })),
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
            Ok(ModelEvent::Usage(TokenUsage { input: 20, output: 42, cached: 0, cache_written: 0 })),
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
                Ok(ModelEvent::Usage(TokenUsage { input: 352, output: 5, cached: 300, cache_written: 40 })),
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
                ModelEvent::ToolCall(ModelToolCall {
                    id: "toolu_9".into(),
                    name: "escalate_to_human".into(),
                    arguments: "{\"reason\":\"r\"}".into(),
                }),
                ModelEvent::Usage(TokenUsage { input: 6, output: 6, cached: 2, cache_written: 0 }),
                ModelEvent::Finished(FinishReason::ToolCalls),
            ]
        );
    }
}
