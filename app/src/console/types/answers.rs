//! The answer quality loop as the console shows it: unanswered questions, saved replies.

use serde::{Deserialize, Serialize};

/// Similar unanswered questions together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnansweredGroup {
    pub question: String,
    pub count: usize,
    /// `(why, how often)`.
    pub reasons: Vec<(String, usize)>,
    /// The conversations, newest first (at most ten).
    pub conversations: Vec<String>,
    pub last_at: i64,
}

/// A saved reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedReplyItem {
    pub id: String,
    pub shortcut: String,
    pub body: String,
}
