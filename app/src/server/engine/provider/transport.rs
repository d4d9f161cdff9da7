//! What every HTTP model provider shares, whatever its wire format: one POST with the key in the
//! provider's header, timeouts (connect, first byte, idle), classification of a failed answer,
//! safe retries before the first byte of the answer (`retry-after`, doubling backoff), and one
//! stream driver that turns a streamed body into [`ModelEvent`]s through a [`WireFormat`]. A
//! provider file then holds only its wire format: the request body and the parser.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use parley_widget::sse::{SseFrame, SseParser};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};

use super::{Attempt, AttemptLog, ModelEvent, ModelStream, ProviderError};
use crate::server::secret::ApiKey;

/// Timeouts and retry policy of every HTTP provider.
#[derive(Clone, Debug)]
pub struct TransportSettings {
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

impl Default for TransportSettings {
    fn default() -> Self {
        TransportSettings {
            first_byte_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            max_retries: 2,
            max_retry_wait: Duration::from_secs(10),
            backoff: Duration::from_millis(250),
        }
    }
}

/// How a provider wants its key.
#[derive(Clone, Copy, Debug)]
pub enum KeyHeader {
    /// `Authorization: Bearer <key>` (OpenAI-compatible APIs).
    Bearer,
    /// The key alone in a header of this name (`x-api-key` for Anthropic).
    Named(&'static str),
}

/// A wire format: how one provider's streamed answer reads. One parser lives per answer.
pub trait WireFormat: Default + Send + 'static {
    /// One server-sent event of the body.
    fn frame(&mut self, frame: SseFrame, out: &mut Sink);
    /// The body ended (or `[DONE]` came, when the format has it) without the parser having ended
    /// the answer itself.
    fn end(&mut self, out: &mut Sink);
    /// A whole answer of a provider (or gateway) that ignored `stream: true`.
    fn whole(body: &str) -> Result<Vec<ModelEvent>, ProviderError>;
    /// A 429 whose body says the balance or quota is exhausted: waiting does not help there.
    fn is_quota(body: &str) -> bool;
}

/// Where a parser puts what it read.
#[derive(Default)]
pub struct Sink {
    pending: VecDeque<Result<ModelEvent, ProviderError>>,
    done: bool,
}

impl Sink {
    /// The next event of the answer.
    pub fn push(&mut self, event: ModelEvent) {
        self.pending.push_back(Ok(event));
    }

    /// The answer failed; nothing after this is read.
    pub fn fail(&mut self, error: ProviderError) {
        self.pending.push_back(Err(error));
        self.done = true;
    }

    /// The answer is complete; nothing after this is read.
    pub fn close(&mut self) {
        self.done = true;
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// What was read so far (tests).
    #[cfg(test)]
    pub fn drain(&mut self) -> Vec<Result<ModelEvent, ProviderError>> {
        self.pending.drain(..).collect()
    }

    #[cfg(test)]
    pub fn pop(&mut self) -> Option<Result<ModelEvent, ProviderError>> {
        self.pending.pop_front()
    }

    #[cfg(test)]
    pub fn pending(&self) -> &VecDeque<Result<ModelEvent, ProviderError>> {
        &self.pending
    }
}

/// One configured HTTP endpoint of a provider.
#[derive(Clone, Debug)]
pub struct Transport {
    http: reqwest::Client,
    url: String,
    key: Option<ApiKey>,
    key_header: KeyHeader,
    /// Headers every request carries (`anthropic-version`).
    headers: &'static [(&'static str, &'static str)],
    pub settings: TransportSettings,
}

impl Transport {
    pub fn new(
        http: reqwest::Client,
        url: String,
        key: Option<ApiKey>,
        key_header: KeyHeader,
        headers: &'static [(&'static str, &'static str)],
        settings: TransportSettings,
    ) -> Self {
        Transport { http, url, key, key_header, headers, settings }
    }

    /// Sends `body` and reads the answer as `W`, retrying what is safe to retry. Every failed
    /// attempt is recorded in `attempts`.
    pub async fn stream<W: WireFormat>(
        &self,
        body: Bytes,
        model: &str,
        attempts: &AttemptLog,
    ) -> Result<ModelStream, ProviderError> {
        let body = &body;
        with_retries(&self.settings, model, attempts, |started| async move {
            let response = self.send_once::<W>(body).await?;
            if !is_json(&response) {
                return Ok(
                    Box::pin(drive::<_, W>(response.bytes_stream(), self.settings.clone(), started)) as ModelStream
                );
            }
            let events = W::whole(&whole_body(response, &self.settings).await?)?;
            Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))) as ModelStream)
        })
        .await
    }

    async fn send_once<W: WireFormat>(&self, body: &Bytes) -> Result<reqwest::Response, ProviderError> {
        let mut request = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .body(body.clone());
        for (name, value) in self.headers {
            request = request.header(*name, *value);
        }
        if let Some(key) = &self.key {
            let value = match self.key_header {
                KeyHeader::Bearer => HeaderValue::from_str(&format!("Bearer {}", key.expose())),
                KeyHeader::Named(_) => HeaderValue::from_str(key.expose()),
            };
            if let Ok(mut value) = value {
                // Kept out of any debug output of the request.
                value.set_sensitive(true);
                let name = match self.key_header {
                    KeyHeader::Bearer => reqwest::header::AUTHORIZATION.as_str(),
                    KeyHeader::Named(name) => name,
                };
                request = request.header(name, value);
            }
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
        let mut detail = response.text().await.unwrap_or_default();
        if let Some(key) = &self.key {
            // Never keep a key an upstream (or a proxy) echoed back.
            detail = detail.replace(key.expose(), "[redacted]");
        }
        Err(classify(status, retry_after, &detail, W::is_quota))
    }
}

/// The error of a non-2xx answer.
pub fn classify(
    status: StatusCode,
    retry_after: Option<Duration>,
    body: &str,
    is_quota: fn(&str) -> bool,
) -> ProviderError {
    match status.as_u16() {
        // Some providers use 429 for an exhausted quota; waiting does not help there.
        429 if is_quota(body) => ProviderError::Client { status: 429, detail: truncate(body, 300) },
        429 => ProviderError::RateLimited { retry_after },
        // 529 (Anthropic overloaded) like any 5xx is worth another try.
        s @ 500..=599 => ProviderError::Server { status: s },
        s => ProviderError::Client { status: s, detail: truncate(body, 300) },
    }
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
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

/// The first `max` characters.
pub fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// reqwest errors name the URL; keys can live in query strings, so keep only the cause.
pub fn without_url(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut last = String::from("connection failed");
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last
}

pub fn is_retryable(e: &ProviderError) -> bool {
    matches!(
        e,
        ProviderError::RateLimited { .. }
            | ProviderError::Server { .. }
            | ProviderError::Connect(_)
            | ProviderError::Timeout(_)
    )
}

/// Whether a response is plain JSON (a provider or gateway that does not stream).
fn is_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// A whole (non-streamed) body, within the idle timeout.
async fn whole_body(response: reqwest::Response, settings: &TransportSettings) -> Result<String, ProviderError> {
    tokio::time::timeout(settings.idle_timeout, response.text())
        .await
        .map_err(|_| ProviderError::Timeout("body"))?
        .map_err(|e| ProviderError::Connect(without_url(&e)))
}

/// Runs `attempt` until it gives a stream, retrying what is safe to retry before any answer byte:
/// 429 after its `retry-after` (capped), 5xx, connect errors and timeouts after a doubling
/// backoff. Every failed attempt is recorded in `attempts`.
async fn with_retries<F, Fut>(
    settings: &TransportSettings,
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
        // The provider's own `retry-after` as it says; otherwise the backoff with jitter (between
        // half and all of it), so callers failed together do not all come back at once.
        let wait = match &error {
            ProviderError::RateLimited { retry_after: Some(d) } => (*d).min(settings.max_retry_wait),
            ProviderError::RateLimited { retry_after: None } => jittered(backoff).min(settings.max_retry_wait),
            _ => jittered(backoff),
        };
        backoff = backoff.saturating_mul(2);
        tracing::info!(code = error.code(), wait_ms = wait.as_millis() as u64, retries, "retrying model call");
        tokio::time::sleep(wait).await;
    }
}

/// Between half and all of `backoff`, at random.
fn jittered(backoff: Duration) -> Duration {
    backoff.mul_f64(rand::random_range(0.5..=1.0))
}

/// Reads a streamed body: bytes → server-sent events (whole lines, checked as UTF-8) → the wire
/// format's parser → model events.
pub struct Reader<W> {
    parser: SseParser,
    wire: W,
    pub sink: Sink,
}

impl<W: WireFormat> Default for Reader<W> {
    fn default() -> Self {
        Reader { parser: SseParser::new(), wire: W::default(), sink: Sink::default() }
    }
}

impl<W: WireFormat> Reader<W> {
    /// Appends bytes (a chunk may end inside a character or a line) and parses the frames they
    /// complete.
    pub fn bytes(&mut self, chunk: &[u8]) {
        if self.sink.done {
            return;
        }
        let Reader { parser, wire, sink } = self;
        let parsed = parser.feed_bytes_with(chunk, |frame| {
            if !sink.done {
                wire.frame(frame, sink);
            }
        });
        if parsed.is_err() && !self.sink.done {
            self.sink.fail(ProviderError::Protocol("invalid UTF-8 in stream".into()));
        }
    }

    /// The body ended.
    pub fn end(&mut self) {
        if !self.sink.done {
            self.wire.end(&mut self.sink);
            self.sink.done = true;
        }
    }
}

/// The stream of model events of a streamed body, with the first-byte and idle timeouts.
///
/// One timer serves the whole body: it is not re-armed for every chunk (a burst relays tens of
/// thousands of chunks a second); when it fires early, because chunks came meanwhile, it is set
/// again from the last chunk (or the last time the answer asked for more).
fn drive<S, W>(
    body: S,
    settings: TransportSettings,
    started: Instant,
) -> impl Stream<Item = Result<ModelEvent, ProviderError>> + Send
where
    S: Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static,
    W: WireFormat,
{
    let first = tokio::time::Instant::from_std(started + settings.first_byte_timeout);
    let state = Body {
        body,
        reader: Reader::<W>::default(),
        timer: Box::pin(tokio::time::sleep_until(first)),
        last_activity: None,
        idle: settings.idle_timeout,
    };
    futures::stream::unfold(state, |mut st| async move {
        // Silence is the upstream's only while we are reading: the time the answer spent
        // elsewhere (waiting for room in the writer's queue) does not count.
        if st.last_activity.is_some() {
            st.last_activity = Some(tokio::time::Instant::now());
        }
        loop {
            if let Some(item) = st.reader.sink.pending.pop_front() {
                return Some((item, st));
            }
            if st.reader.sink.done {
                return None;
            }
            tokio::select! {
                biased;
                next = st.body.next() => match next {
                    None => st.reader.end(),
                    Some(Err(e)) => st.reader.sink.fail(ProviderError::Connect(without_url(&e))),
                    Some(Ok(bytes)) => {
                        let now = tokio::time::Instant::now();
                        if st.last_activity.replace(now).is_none() {
                            // From the first-byte deadline to the idle one.
                            st.timer.as_mut().reset(now + st.idle);
                        }
                        st.reader.bytes(&bytes);
                    }
                },
                () = st.timer.as_mut() => match st.last_activity {
                    // Nothing came before the first-byte deadline.
                    None => st.reader.sink.fail(ProviderError::Timeout("idle")),
                    Some(last) if last.elapsed() >= st.idle => st.reader.sink.fail(ProviderError::Timeout("idle")),
                    Some(last) => st.timer.as_mut().reset(last + st.idle),
                },
            }
        }
    })
}

/// What [`drive`] keeps between chunks.
struct Body<S, W> {
    body: S,
    reader: Reader<W>,
    /// The first-byte deadline, then the idle one (moved on lazily, see [`drive`]).
    timer: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// The last chunk, or the last time the answer asked for more after one.
    last_activity: Option<tokio::time::Instant>,
    idle: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::openai::OpenAiWire;

    /// A token chunk of an OpenAI-compatible stream.
    fn token(text: &str) -> Bytes {
        Bytes::from(format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n"))
    }

    /// A body whose chunks come after the given pauses (then it stays open, silent).
    fn body_after(pauses: Vec<(u64, Bytes)>) -> impl Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            for (ms, chunk) in pauses {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                if tx.send(chunk).is_err() {
                    return;
                }
            }
            // Held open: the body never ends by itself.
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(tx);
        });
        channel_body(rx)
    }

    /// A body made of the chunks sent on `rx`; it ends when every sender is gone.
    fn channel_body(
        rx: tokio::sync::mpsc::UnboundedReceiver<Bytes>,
    ) -> impl Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static {
        Box::pin(futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (Ok(b), rx)) }))
    }

    fn settings(first_ms: u64, idle_ms: u64) -> TransportSettings {
        TransportSettings {
            first_byte_timeout: Duration::from_millis(first_ms),
            idle_timeout: Duration::from_millis(idle_ms),
            ..TransportSettings::default()
        }
    }

    fn is_idle_timeout(item: &Option<Result<ModelEvent, ProviderError>>) -> bool {
        matches!(item, Some(Err(ProviderError::Timeout("idle"))))
    }

    #[tokio::test]
    async fn a_body_that_never_starts_fails_at_the_first_byte_deadline() {
        let started = Instant::now();
        let mut events = Box::pin(drive::<_, OpenAiWire>(body_after(vec![]), settings(150, 5_000), started));
        assert!(is_idle_timeout(&events.next().await));
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(150) && took < Duration::from_secs(3), "{took:?}");
    }

    #[tokio::test]
    async fn silence_after_a_chunk_fails_after_the_idle_timeout_not_the_first_byte_one() {
        let started = Instant::now();
        let body = body_after(vec![(10, token("a"))]);
        let mut events = Box::pin(drive::<_, OpenAiWire>(body, settings(10_000, 150), started));
        assert!(matches!(events.next().await, Some(Ok(ModelEvent::Text(t))) if t == "a"));
        let after_chunk = Instant::now();
        assert!(is_idle_timeout(&events.next().await));
        let silent = after_chunk.elapsed();
        assert!(silent >= Duration::from_millis(140) && silent < Duration::from_secs(3), "{silent:?}");
    }

    #[tokio::test]
    async fn chunks_closer_than_the_idle_timeout_never_time_out_however_long_the_body() {
        let pauses = (0..12).map(|i| (60, token(&i.to_string()))).collect();
        let mut events = Box::pin(drive::<_, OpenAiWire>(body_after(pauses), settings(1_000, 150), Instant::now()));
        for i in 0..12 {
            assert!(matches!(events.next().await, Some(Ok(ModelEvent::Text(t))) if t == i.to_string()), "chunk {i}");
        }
    }

    #[tokio::test]
    async fn time_the_answer_spends_elsewhere_is_not_the_upstreams_silence() {
        // The answer waits 400 ms between two tokens (a full writer queue); the next chunk then
        // comes 50 ms after it asks: the upstream was silent 50 ms, not 450.
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
        let mut events = Box::pin(drive::<_, OpenAiWire>(channel_body(rx), settings(1_000, 200), Instant::now()));
        tx.send(token("a")).unwrap();
        assert!(matches!(events.next().await, Some(Ok(ModelEvent::Text(t))) if t == "a"));
        tokio::time::sleep(Duration::from_millis(400)).await;
        let sender = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            tx.send(token("b")).unwrap();
            tx
        });
        assert!(matches!(events.next().await, Some(Ok(ModelEvent::Text(t))) if t == "b"));
        drop(sender.await);
    }

    #[test]
    fn a_stream_that_is_not_utf8_fails_as_a_protocol_error() {
        let mut reader = Reader::<OpenAiWire>::default();
        reader.bytes(&token("a"));
        reader.bytes(b"data: \xff\xfe\n\n");
        reader.bytes(&token("b"));
        let events = reader.sink.drain();
        assert!(matches!(&events[0], Ok(ModelEvent::Text(t)) if t == "a"));
        assert!(matches!(&events[1], Err(ProviderError::Protocol(_))), "{events:?}");
        assert_eq!(events.len(), 2, "nothing after the error: {events:?}");
    }

    #[test]
    fn retries_wait_between_half_and_all_of_the_backoff_at_random() {
        let backoff = std::time::Duration::from_millis(400);
        let waits: std::collections::BTreeSet<_> = (0..50).map(|_| super::jittered(backoff)).collect();
        assert!(waits.iter().all(|w| *w >= backoff / 2 && *w <= backoff), "{waits:?}");
        assert!(waits.len() > 40, "callers failed together spread out: {waits:?}");
    }

    #[test]
    fn classifies_statuses() {
        let never = |_: &str| false;
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, Some(Duration::from_millis(20)), "", never),
            ProviderError::RateLimited { retry_after: Some(Duration::from_millis(20)) }
        );
        assert!(matches!(
            classify(StatusCode::TOO_MANY_REQUESTS, None, "quota", |b| b.contains("quota")),
            ProviderError::Client { status: 429, .. }
        ));
        assert_eq!(classify(StatusCode::BAD_GATEWAY, None, "", never), ProviderError::Server { status: 502 });
        assert_eq!(classify(StatusCode::UNAUTHORIZED, None, "", never).code(), "auth_error");
    }

    #[test]
    fn reads_retry_after_headers() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
    }
}
