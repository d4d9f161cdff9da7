//! What every HTTP model provider shares, whatever its wire format: one POST with the key in the
//! provider's header, timeouts (connect, first byte, idle), classification of a failed answer,
//! safe retries before the first byte of the answer (`retry-after`, doubling backoff), and the
//! [`WireFormat`] a provider implements (its request body and parser; [`super::stream`] drives a
//! streamed body through it).

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use parley_protocol::sse::SseFrame;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};

use super::h2c::{LaneGuard, Upstream};
use super::stream::{Sink, drive};
use super::{Attempt, AttemptLog, ModelEvent, ModelStream, ProviderError};
use crate::secret::ApiKey;

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
pub trait WireFormat: Default + Send + Unpin + 'static {
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

/// One configured HTTP endpoint of a provider.
#[derive(Clone, Debug)]
pub struct Transport {
    upstream: Upstream,
    url: String,
    key: Option<ApiKey>,
    key_header: KeyHeader,
    /// Headers every request carries (`anthropic-version`).
    headers: &'static [(&'static str, &'static str)],
    pub settings: TransportSettings,
}

impl Transport {
    pub fn new(
        upstream: impl Into<Upstream>,
        url: String,
        key: Option<ApiKey>,
        key_header: KeyHeader,
        headers: &'static [(&'static str, &'static str)],
        settings: TransportSettings,
    ) -> Self {
        Transport { upstream: upstream.into(), url, key, key_header, headers, settings }
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
            let (response, lane) = self.send_once::<W>(body).await?;
            if !is_json(&response) {
                // An h2c answer keeps its place on the connection until its body is dropped.
                let body = response.bytes_stream().map(move |chunk| {
                    let _held: &Option<LaneGuard> = &lane;
                    chunk
                });
                return Ok(Box::pin(drive::<_, W>(body, self.settings.clone(), started)) as ModelStream);
            }
            let events = W::whole(&whole_body(response, &self.settings).await?)?;
            Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))) as ModelStream)
        })
        .await
    }

    /// One attempt; on success the response and, over h2c, its place on a connection.
    async fn send_once<W: WireFormat>(
        &self,
        body: &Bytes,
    ) -> Result<(reqwest::Response, Option<LaneGuard>), ProviderError> {
        let (http, lane) = self.upstream.checkout();
        let mut request = http
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
            return Ok((response, lane));
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

#[cfg(test)]
mod tests {
    use super::*;

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
