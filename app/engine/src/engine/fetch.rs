//! Why a call to an outside service (web search, exchange rates, embeddings) failed. The URL is
//! never part of the error: it may carry a key.

/// A failed call to an outside service.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("no answer within {0} ms")]
    Timeout(u128),
    #[error("{0}")]
    Connect(String),
    #[error("the service answered HTTP {0}")]
    Status(u16),
    #[error("unreadable answer: {0}")]
    Unreadable(String),
    /// The service answered, but with an error or without what was asked for.
    #[error("{0}")]
    Answer(String),
}

impl FetchError {
    /// A transport error of reqwest, without its URL.
    pub fn connect(e: reqwest::Error) -> Self {
        FetchError::Connect(e.without_url().to_string())
    }

    /// A body that could not be read or parsed, without the URL.
    pub fn unreadable(e: reqwest::Error) -> Self {
        FetchError::Unreadable(e.without_url().to_string())
    }
}
