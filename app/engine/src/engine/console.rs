//! A feed of what changes in conversations, for the console's live lists: a new visitor message,
//! an answer finished, a status changed, a lead or a payment arrived. Only ids travel; the console
//! reads what it shows with its own access checks.

use tokio::sync::broadcast;

use super::Engine;

/// One change.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ConsoleEvent {
    pub conversation_id: String,
    pub agent_id: String,
    /// `message`, `reply`, `status`, `lead`, `order`, `typing` / `typing_stop` (the visitor),
    /// `presence` (someone went away or came back), `assigned` (to `user_id`, or unassigned),
    /// `queue` (handed to a team), `note`, `mention` (of `user_id`; only they receive it) or
    /// `labels`.
    pub kind: &'static str,
    /// Whom it is for: the assignee, the mentioned colleague (issue 43).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

impl ConsoleEvent {
    pub fn new(conversation_id: &str, agent_id: &str, kind: &'static str) -> Self {
        ConsoleEvent { conversation_id: conversation_id.into(), agent_id: agent_id.into(), kind, user_id: None }
    }

    pub fn message(conversation_id: &str, agent_id: &str) -> Self {
        Self::new(conversation_id, agent_id, "message")
    }

    pub fn status(conversation_id: &str, agent_id: &str) -> Self {
        Self::new(conversation_id, agent_id, "status")
    }

    /// For one user (`user_id`).
    pub fn for_user(mut self, user_id: Option<&str>) -> Self {
        self.user_id = user_id.map(str::to_owned);
        self
    }

    /// Whether the console of `user_id` receives it: a mention goes to the mentioned only.
    pub fn is_for(&self, user_id: &str) -> bool {
        self.kind != "mention" || self.user_id.as_deref() == Some(user_id)
    }
}

/// The feed's sender (cheap to clone).
pub type ConsoleFeed = broadcast::Sender<ConsoleEvent>;

pub fn feed() -> ConsoleFeed {
    broadcast::channel(1024).0
}

impl Engine {
    /// Tells open consoles that something changed.
    pub fn console(&self, event: ConsoleEvent) {
        self.console_to_replicas(&event);
        let _ = self.console_feed().send(event);
    }

    /// Follow the feed.
    pub fn console_events(&self) -> broadcast::Receiver<ConsoleEvent> {
        self.console_feed().subscribe()
    }
}
