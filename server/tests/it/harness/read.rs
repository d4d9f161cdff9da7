//! Reading what the server answered (SSE event streams, whole or a piece at a time, their shape;
//! JSON errors) and what the fake upstreams were sent.

use std::pin::Pin;
use std::time::Duration;

use futures::{Stream, StreamExt};
use parley_protocol::sse::{SseFrame, SseParser};
use parley_protocol::{Block, StreamEvent, ToolCall, ToolCallStatus, Usage};
use reqwest::header::CONTENT_TYPE;
use serde_json::Value;

/// Events as streamed: `(seq, event)`.
pub type Events = Vec<(u64, StreamEvent)>;

/// The first events of a turn in which the model calls `escalate_to_human` once.
pub const ESCALATED: [&str; 5] = [
    "message_start",
    "usage",
    "tool_call:escalate_to_human:started",
    "tool_call:escalate_to_human:succeeded",
    "block:escalation_button",
];

/// Reads SSE events until the stream ends (10 s at most).
pub async fn read_events(r: reqwest::Response) -> Events {
    let mut out = Vec::new();
    let mut parser = SseParser::new();
    let mut body = r.bytes_stream();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, body.next()).await {
            Ok(Some(Ok(bytes))) => {
                for f in parser.feed_bytes(&bytes).expect("utf-8") {
                    out.push(parse_frame(&f));
                }
            }
            Ok(Some(Err(e))) => panic!("stream error: {e}"),
            Ok(None) => return out,
            Err(_) => panic!("stream did not end in time; got {out:?}"),
        }
    }
}

/// An SSE response read a piece at a time.
pub struct Live {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    parser: SseParser,
    pub events: Events,
}

impl Live {
    /// An SSE answer: 200 and `text/event-stream`.
    pub fn new(r: reqwest::Response) -> Live {
        assert_eq!(r.status(), 200, "an SSE answer");
        let content_type = r.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        assert!(content_type.starts_with("text/event-stream"), "content type {content_type:?}");
        Live::unchecked(r)
    }

    /// Like [`Live::new`], without looking at the status or the content type.
    pub fn unchecked(r: reqwest::Response) -> Live {
        Live { body: Box::pin(r.bytes_stream()), parser: SseParser::new(), events: Vec::new() }
    }

    /// Reads events until `stop` says so (10 s at most).
    pub async fn until(&mut self, stop: impl Fn(&[(u64, StreamEvent)]) -> bool) {
        self.until_within(10, stop).await
    }

    /// [`Live::until`] with a deadline of `secs` seconds.
    pub async fn until_within(&mut self, secs: u64, stop: impl Fn(&[(u64, StreamEvent)]) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        while !stop(&self.events) {
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Ok(Some(Ok(bytes))) => {
                    for f in self.parser.feed_bytes(&bytes).expect("utf-8") {
                        self.events.push(parse_frame(&f));
                    }
                }
                other => panic!("stream ended or stalled: {other:?}; got {:?}", self.events),
            }
        }
    }

    /// Reads until a `message_end` arrives.
    pub async fn until_end(&mut self) {
        self.until(|events| events.iter().any(|(_, e)| matches!(e, StreamEvent::MessageEnd(_)))).await;
    }

    /// The stream ends (nothing more than what was read).
    pub async fn assert_ends(&mut self) {
        match tokio::time::timeout(Duration::from_secs(5), self.body.next()).await {
            Ok(None) => {}
            Ok(Some(Ok(bytes))) => panic!("more after the end: {bytes:?}"),
            Ok(Some(Err(e))) => panic!("stream error: {e}"),
            Err(_) => panic!("the stream did not end after message_end"),
        }
    }
}

fn parse_frame(f: &SseFrame) -> (u64, StreamEvent) {
    let name = f.event.as_deref().expect("every event has a name");
    // Typing indicators are not numbered (0 here); every other event is.
    let seq = match f.id.as_deref() {
        Some(id) => id.parse().expect("numeric id"),
        None if name == "typing" => 0,
        None => panic!("every event but typing has an id: {name}"),
    };
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

/// How many `token` events.
pub fn tokens(events: &[(u64, StreamEvent)]) -> usize {
    events.iter().filter(|(_, e)| matches!(e, StreamEvent::Token(_))).count()
}

pub fn seqs(events: &[(u64, StreamEvent)]) -> Vec<u64> {
    events.iter().map(|(s, _)| *s).collect()
}

/// `n` numbers from `from` on.
pub fn consecutive(from: u64, n: usize) -> Vec<u64> {
    (from..from + n as u64).collect()
}

/// The streamed blocks, in order.
pub fn blocks(events: &[(u64, StreamEvent)]) -> Vec<Block> {
    events
        .iter()
        .filter_map(|(_, e)| if let StreamEvent::Block(b) = e { Some(b.block.clone()) } else { None })
        .collect()
}

/// The streamed `usage` events, in order.
pub fn usages(events: &[(u64, StreamEvent)]) -> Vec<&Usage> {
    events.iter().filter_map(|(_, e)| if let StreamEvent::Usage(u) = e { Some(u) } else { None }).collect()
}

/// The streamed `tool_call` events with `status`, in order.
pub fn tool_calls(events: &[(u64, StreamEvent)], status: ToolCallStatus) -> Vec<ToolCall> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::ToolCall(t) if t.status == status => Some(t.clone()),
            _ => None,
        })
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

/// The status and the JSON error code of an error answer.
pub async fn failure(r: reqwest::Response) -> (u16, String) {
    let status = r.status().as_u16();
    let body: Value = r.json().await.expect("a JSON error body");
    (status, body["error"].as_str().expect("an error code").to_owned())
}

/// What [`failure`] should read.
pub fn fail(status: u16, code: &str) -> (u16, String) {
    (status, code.to_owned())
}

/// The contents of the tool messages of a request to the fake OpenAI upstream, in order.
pub fn tool_messages(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().filter(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap().to_owned()).collect()
}

/// [`tool_messages`] read as JSON.
pub fn tool_results(request: &Value) -> Vec<Value> {
    tool_messages(request).iter().map(|c| serde_json::from_str(c).unwrap()).collect()
}

/// Each numbered event once, in rising order.
pub fn assert_numbered_in_order(events: &[(u64, StreamEvent)]) {
    let seqs = seqs(events);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "each event once, in order: {seqs:?}");
}

/// Waits until `f` holds (every 50 ms, `secs` seconds at most; then the test fails naming `what`).
pub async fn within(secs: u64, what: &str, mut f: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while !f().await {
        assert!(tokio::time::Instant::now() < deadline, "{what}: not within {secs} s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
