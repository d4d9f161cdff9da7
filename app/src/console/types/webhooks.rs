//! Outbound webhooks as the console shows them: an agent's endpoints, each with its recent
//! deliveries and attempts.

use serde::{Deserialize, Serialize};

/// Every event an endpoint can receive, with what it means.
pub const WEBHOOK_EVENTS: [(&str, &str); 12] = [
    ("lead.created", "a visitor left their contact details"),
    ("conversation.waiting_human", "a conversation waits for a person"),
    ("conversation.claimed", "an operator took a conversation over"),
    ("conversation.assigned", "a conversation was assigned, unassigned or handed to a team"),
    ("conversation.labeled", "an operator changed a conversation's labels"),
    ("conversation.closed", "an operator closed a conversation"),
    ("order.paid", "an order was paid"),
    ("order.expired", "an order expired unpaid"),
    ("answer.rated", "a visitor rated an answer"),
    ("conversation.rated", "a visitor rated a closed conversation"),
    ("agent.cap_reached", "the agent's daily spending cap was reached (once a day)"),
    ("provider.quota_exhausted", "the model provider's quota or balance ran out (once a day)"),
];

/// One delivery of an event to an endpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeliveryItem {
    /// Also the `webhook-id` the endpoint saw.
    pub id: String,
    pub event: String,
    pub conversation_id: Option<String>,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i64,
    /// When a pending delivery is tried next.
    pub next_attempt_at: i64,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: i64,
    pub payload: String,
}

/// One attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttemptItem {
    pub delivery_id: String,
    pub at: i64,
    pub status: Option<i64>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// An endpoint with its log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EndpointItem {
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    /// The first characters of its secret.
    pub prefix: String,
    pub enabled: bool,
    /// Why Parley turned it off (`None`: on, or turned off by hand).
    pub disabled_reason: Option<String>,
    pub last_success_at: Option<i64>,
    pub created_at: i64,
    pub deliveries: Vec<DeliveryItem>,
    pub attempts: Vec<AttemptItem>,
}

/// `/admin/webhooks` for one agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhooksView {
    pub agent_id: String,
    pub endpoints: Vec<EndpointItem>,
    /// Private and loopback addresses (and plain http) are allowed on this server.
    pub allow_private: bool,
}

/// A new endpoint with its signing secret, shown once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewEndpoint {
    pub url: String,
    pub secret: String,
}
