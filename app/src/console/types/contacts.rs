//! Contacts as the console shows them (issue 43, part 5).

use serde::{Deserialize, Serialize};

/// A contact in a list: what names it and how much it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContactItem {
    pub id: String,
    pub agent_name: String,
    /// The name shown: the operators', the website's, the contact form's, or a short id.
    pub name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    /// The website's user id, when it identified them.
    pub user_id: Option<String>,
    pub conversations: i64,
    pub last_seen_at: i64,
}

/// Everything about one contact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContactDetail {
    pub item: ContactItem,
    pub agent_id: String,
    /// What operators set (the form's values).
    pub contact_name: String,
    pub contact_email: String,
    pub contact_phone: String,
    /// What the website said (identity claims) and the newest contact form, shown beside.
    pub user_name: Option<String>,
    pub user_email: Option<String>,
    pub lead_name: Option<String>,
    pub lead_email: Option<String>,
    pub lead_phone: Option<String>,
    /// `Parley.setContext`'s last object, as `(key, value)` pairs (values as JSON text).
    pub attributes: Vec<(String, String)>,
    pub first_seen_at: i64,
    pub browsers: Vec<BrowserItem>,
    pub conversations: Vec<ContactConversationItem>,
    pub leads: Vec<ContactLeadItem>,
    pub orders: Vec<ContactOrderItem>,
    pub ratings: Vec<ContactRatingItem>,
    pub memories: Vec<(String, Option<String>)>,
    /// The contacts merged into this one.
    pub merged: Vec<ContactItem>,
}

/// A browser of the contact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BrowserItem {
    /// "Chrome 131 on Windows", and the raw User-Agent.
    pub label: String,
    pub user_agent: Option<String>,
    pub language: Option<String>,
    pub country: Option<String>,
    pub site: Option<String>,
    pub first_seen_at: i64,
    pub last_seen_at: i64,
    pub signed_out: bool,
}

/// A conversation of the contact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContactConversationItem {
    pub id: String,
    pub status: String,
    pub updated_at: i64,
    pub messages: i64,
    pub last_message: String,
    pub rating: Option<i64>,
}

/// A lead of the contact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContactLeadItem {
    pub conversation_id: String,
    pub name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub message: String,
    pub status: String,
    pub created_at: i64,
}

/// An order of the contact (the amount already formatted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContactOrderItem {
    pub conversation_id: String,
    pub service: String,
    pub amount: String,
    pub status: String,
    pub created_at: i64,
}

/// A rating the contact gave: the conversation (1–5) or an answer (thumbs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContactRatingItem {
    pub conversation_id: String,
    pub what: String,
    pub comment: Option<String>,
    pub updated_at: i64,
}
