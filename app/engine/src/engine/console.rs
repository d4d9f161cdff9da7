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
    /// `message`, `reply`, `status`, `lead`, `order`, `typing` / `typing_stop` (the visitor), or
    /// `presence` (someone went away or came back).
    pub kind: &'static str,
}

impl ConsoleEvent {
    pub fn message(conversation_id: &str, agent_id: &str) -> Self {
        ConsoleEvent { conversation_id: conversation_id.into(), agent_id: agent_id.into(), kind: "message" }
    }

    pub fn status(conversation_id: &str, agent_id: &str) -> Self {
        ConsoleEvent { conversation_id: conversation_id.into(), agent_id: agent_id.into(), kind: "status" }
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
