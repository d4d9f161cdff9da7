//! Model providers: one trait, an OpenAI-compatible client, a native Anthropic Messages client
//! and the offline demo model. The turn loop only ever sees [`ChatModel`]; the agent's settings
//! pick the implementation.

pub mod anthropic;
pub mod demo;
pub mod fallbacks;
pub mod h2c;
pub mod openai;
pub mod stream;
pub mod transport;

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use serde_json::Value;

/// A message of the model's context. `UserImages` is the visitor's new message with the images
/// sent with it (its text may be empty); earlier turns' images are given as the text `[image]`.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelMessage {
    System(String),
    User(String),
    UserImages { text: String, images: Vec<ModelImage> },
    Assistant { content: String, tool_calls: Vec<ModelToolCall> },
    Tool { call_id: String, content: String },
}

impl ModelMessage {
    /// The text of a visitor's message, with or without images.
    pub fn user_text(&self) -> Option<&str> {
        match self {
            ModelMessage::User(text) | ModelMessage::UserImages { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// An image given to the model.
#[derive(Clone, PartialEq)]
pub struct ModelImage {
    /// `image/png`, `image/jpeg` or `image/webp`.
    pub mime: String,
    /// The bytes, base64-encoded (both providers want them so); shared, as the turn's messages
    /// are cloned for every hop.
    pub base64: Arc<str>,
}

impl ModelImage {
    pub fn new(mime: &str, bytes: &[u8]) -> Self {
        use base64::Engine;
        ModelImage { mime: mime.to_owned(), base64: Arc::from(base64::engine::general_purpose::STANDARD.encode(bytes)) }
    }

    /// `data:<mime>;base64,…`
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime, self.base64)
    }
}

impl std::fmt::Debug for ModelImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Megabytes of base64 in a log line help nobody.
        f.debug_struct("ModelImage").field("mime", &self.mime).field("base64_len", &self.base64.len()).finish()
    }
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A tool call requested by the model. `arguments` is the raw JSON text the model produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One request to a model.
#[derive(Clone, Debug)]
pub struct ModelRequest {
    pub model: String,
    pub messages: Vec<ModelMessage>,
    /// Empty: no tools offered.
    pub tools: Vec<ToolSpec>,
    pub max_tokens: Option<u32>,
}

/// Token counts of one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// Every input token, cached ones included.
    pub input: u64,
    pub output: u64,
    /// Input tokens read from the provider's prompt cache (cheaper).
    pub cached: u64,
    /// Input tokens written to the prompt cache (Anthropic charges them above the input price).
    pub cache_written: u64,
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Other(String),
}

/// What a model stream yields.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelEvent {
    /// The next piece of answer text.
    Text(String),
    /// A complete tool call (assembled from the stream's deltas).
    ToolCall(ModelToolCall),
    Usage(TokenUsage),
    /// The model finished; always the last event of a successful stream.
    Finished(FinishReason),
}

/// A failed model call, classified for retry and fallback decisions.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProviderError {
    #[error("rate limited by the provider")]
    RateLimited { retry_after: Option<Duration> },
    #[error("the provider answered {status}")]
    Server { status: u16 },
    #[error("the provider refused the request ({status})")]
    Client { status: u16, detail: String },
    #[error("could not connect to the provider: {0}")]
    Connect(String),
    #[error("the provider did not answer in time ({0})")]
    Timeout(&'static str),
    #[error("the provider's stream reported an error: {0}")]
    StreamError(String),
    #[error("the provider's stream ended before the answer was finished")]
    Truncated,
    #[error("the provider sent something unreadable: {0}")]
    Protocol(String),
}

impl ProviderError {
    /// The account's quota or balance is exhausted (waiting does not help; someone must pay):
    /// OpenAI's `insufficient_quota` 429, a 402, Anthropic's "credit balance is too low".
    pub fn is_quota(&self) -> bool {
        match self {
            ProviderError::Client { status: 429 | 402, .. } => true,
            ProviderError::Client { status: 400, detail } => detail.contains("credit balance"),
            _ => false,
        }
    }

    /// A stable code for the ledger and the `error` event.
    pub fn code(&self) -> &'static str {
        match self {
            ProviderError::RateLimited { .. } => "rate_limited",
            ProviderError::Server { .. } => "server_error",
            ProviderError::Client { status: 401 | 403, .. } => "auth_error",
            ProviderError::Client { .. } => "request_rejected",
            ProviderError::Connect(_) => "connect_error",
            ProviderError::Timeout(_) => "timeout",
            ProviderError::StreamError(_) => "stream_error",
            ProviderError::Truncated => "truncated",
            ProviderError::Protocol(_) => "protocol_error",
        }
    }
}

pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ProviderError>> + Send>>;

/// One upstream attempt, for the usage ledger.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    pub model: String,
    /// `ok` or a [`ProviderError::code`].
    pub outcome: &'static str,
    pub latency_ms: u64,
}

/// Collects the attempts a call made (retries included).
#[derive(Clone, Debug, Default)]
pub struct AttemptLog(Arc<Mutex<Vec<Attempt>>>);

impl AttemptLog {
    pub fn push(&self, attempt: Attempt) {
        if let Ok(mut v) = self.0.lock() {
            v.push(attempt);
        }
    }

    pub fn take(&self) -> Vec<Attempt> {
        self.0.lock().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default()
    }
}

/// How a request of the operator's copilot (`engine::copilot`) begins its user message: the
/// demo model recognises it (here, so the provider layer needs nothing from the copilot's).
pub const COPILOT_TASK: &str = "Copilot task: ";

/// A chat model that streams.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// Name of the provider for logs and the ledger (`openai`, `anthropic`, `demo`).
    fn provider(&self) -> &'static str;

    /// Starts a streaming call. Retries that are safe (before any output) happen inside; every
    /// attempt that failed is recorded in `attempts`.
    async fn stream(&self, request: ModelRequest, attempts: &AttemptLog) -> Result<ModelStream, ProviderError>;
}

/// A provider whose address the outbound fence refuses ([`super::outbound::fence`]): every call
/// fails as a connection failure, before connecting.
pub struct Refused {
    pub provider: &'static str,
    pub reason: String,
}

#[async_trait::async_trait]
impl ChatModel for Refused {
    fn provider(&self) -> &'static str {
        self.provider
    }

    async fn stream(&self, _request: ModelRequest, _attempts: &AttemptLog) -> Result<ModelStream, ProviderError> {
        Err(ProviderError::Connect(self.reason.clone()))
    }
}
