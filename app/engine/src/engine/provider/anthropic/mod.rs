//! Client for Anthropic's native Messages API: the request body ([`body`]: alternating roles,
//! `tool_use` / `tool_result` blocks, the system prompt marked for prompt caching) and the wire
//! format ([`wire`]: `tool_use` input assembled from `input_json_delta` pieces, usage with cache
//! reads and writes). Sending, retries and timeouts are the shared [`transport`](super::transport).

mod body;
mod wire;

use bytes::Bytes;

use super::h2c::Upstream;
use super::transport::{KeyHeader, Transport, TransportSettings};
use super::{AttemptLog, ChatModel, ModelRequest, ModelStream, ProviderError};
use crate::secret::ApiKey;
pub use body::{DEFAULT_MAX_TOKENS, request_body};
pub use wire::AnthropicWire;

/// The API version every request names.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// One configured endpoint.
#[derive(Clone, Debug)]
pub struct AnthropicClient {
    transport: Transport,
}

impl AnthropicClient {
    /// `base_url` like `https://api.anthropic.com/v1`; `/messages` is appended.
    pub fn new(
        http: impl Into<Upstream>,
        base_url: &str,
        api_key: Option<ApiKey>,
        settings: TransportSettings,
    ) -> Self {
        let url = format!("{}/messages", base_url.trim_end_matches('/'));
        let headers = &[("anthropic-version", ANTHROPIC_VERSION)];
        AnthropicClient {
            transport: Transport::new(http, url, api_key, KeyHeader::Named("x-api-key"), headers, settings),
        }
    }
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

#[cfg(test)]
mod tests {
    use reqwest::StatusCode;
    use serde_json::json;
    use std::time::Duration;

    use super::super::transport::{self, WireFormat, is_retryable};
    use super::*;

    fn classify(status: StatusCode, retry_after: Option<Duration>, body: &str) -> ProviderError {
        transport::classify(status, retry_after, body, AnthropicWire::is_quota)
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
            crate::secret::ApiKey::new("sk-ant-secret"),
            TransportSettings::default(),
        );
        let debug = format!("{client:?}");
        assert!(debug.contains("https://api.anthropic.com/v1/messages"), "{debug}");
        assert!(!debug.contains("sk-ant-secret"), "{debug}");
    }
}
