//! Operators' notifications as the console shows them (issue 43): the unread list, the user's
//! preferences, what the browser needs to subscribe to Web Push.

use serde::{Deserialize, Serialize};

/// The kinds of notification, with what the console calls them.
pub const NOTIFY_KINDS: [(&str, &str); 4] = [
    ("assigned", "A conversation is assigned to me"),
    ("mention", "I am mentioned in a note"),
    ("queue", "A conversation enters my teams' unassigned queue"),
    ("reply", "The visitor writes in a conversation assigned to me"),
];

/// One unread notification (ids only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotificationItem {
    pub id: String,
    pub kind: String,
    pub conversation_id: String,
    pub created_at: i64,
}

/// How many notifications the asking user has unread, and whether they want to be told in the
/// console (sound, desktop notification).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadView {
    pub count: i64,
    pub in_console: bool,
}

/// The asking user's unread notifications (newest first) and their preferences.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotifyPage {
    pub unread: Vec<NotificationItem>,
    pub kinds: Vec<String>,
    pub in_console: bool,
    pub push: bool,
    pub digest: bool,
    pub digest_delay_min: i64,
    /// Mail is set up on this server (digests need it).
    pub mail_enabled: bool,
    /// The server's VAPID public key (the browser's `applicationServerKey`), base64url.
    pub vapid_public_key: String,
}
