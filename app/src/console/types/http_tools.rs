//! Owner-defined tools as the console shows and edits them, and the background embedding of
//! knowledge (the other thing an owner's services feed).

use serde::{Deserialize, Serialize};

/// A tool in the list. Header values never leave the server: only their names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HttpToolItem {
    pub id: String,
    pub name: String,
    pub capability: String,
    pub method: String,
    pub url: String,
    pub header_names: Vec<String>,
    pub description: String,
    /// Agents whose capabilities give them the tool.
    pub agents: Vec<String>,
}

/// The tool form. `id: None` creates a tool. `headers` is write-only: empty keeps the saved ones,
/// `-` removes them; `saved_headers` names the saved ones (values masked).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HttpToolForm {
    pub id: Option<String>,
    pub name: String,
    pub description: String,
    pub capability: String,
    /// JSON Schema of the arguments, as text.
    pub parameters: String,
    pub method: String,
    pub url: String,
    pub headers: String,
    pub saved_headers: Vec<String>,
    /// Milliseconds, as typed.
    pub timeout_ms: String,
}

/// How far the background embedding of stored knowledge is (the Knowledge page).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingCounts {
    /// An embeddings endpoint is configured.
    pub configured: bool,
    /// Passages in all, and those with a vector.
    pub chunks: i64,
    pub embedded: i64,
    /// Vectors the search index of the replica that answered uses.
    pub indexed: i64,
    /// Why the last run stopped, when it failed (it is tried again every few seconds).
    pub last_error: Option<String>,
}
