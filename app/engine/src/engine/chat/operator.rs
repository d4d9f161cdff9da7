//! A visitor's message for the person who holds the conversation (no model call), and the
//! check that keeps a claim from slipping past a send: the status is read again once the turn is
//! held, where the claim's stop reaches it. With a pause for tests at the moment that check
//! guards.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use parley_protocol::{ConversationStatus, StreamEvent, VisitorMessage};

use super::super::Engine;
use super::super::console::ConsoleEvent;
use super::super::hub::Lease;
use super::send::Claimed;
use super::{ChatError, Started};
use crate::store::agents::Agent;
use crate::store::conversations;
use crate::store::messages::NewTurn;

/// A test's hold on the next send to an existing conversation, after it read the conversation's
/// status and before it takes the slot ([`Engine::pause_next_send`]).
#[derive(Default)]
pub struct SendPause(Mutex<Option<(oneshot::Sender<String>, oneshot::Receiver<()>)>>);

impl Engine {
    /// Holds the next send to an existing conversation after its status read, before its slot:
    /// the receiver gets the conversation's id once the send is there; the send goes on when
    /// the sender is used or dropped. For tests of what lands in that moment (a claim).
    pub fn pause_next_send(&self) -> (oneshot::Receiver<String>, oneshot::Sender<()>) {
        let (reached_tx, reached_rx) = oneshot::channel();
        let (go_tx, go_rx) = oneshot::channel();
        if let Ok(mut pause) = self.0.send_pause.0.lock() {
            *pause = Some((reached_tx, go_rx));
        }
        (reached_rx, go_tx)
    }

    /// Waits where [`Self::pause_next_send`] asked (at once when no test did).
    pub(super) async fn paused_send(&self, conversation_id: &str) {
        let pause = self.0.send_pause.0.lock().ok().and_then(|mut p| p.take());
        if let Some((reached, go)) = pause {
            let _ = reached.send(conversation_id.to_owned());
            let _ = go.await;
        }
    }

    /// Whether a person holds the conversation now, read once the turn is held. A claim stores
    /// the status, then stops the conversation's turn: one that lands after this read finds the
    /// turn and stops it; one that landed before is seen here.
    pub(super) async fn taken_over(&self, claimed: &Claimed) -> Result<bool, ChatError> {
        let now = conversations::holder(self.db(), &claimed.conversation_id).await?;
        Ok(now.is_some_and(|(_, status, _)| status == ConversationStatus::Human.as_str()))
    }

    /// Stores a visitor message for the operator who holds the conversation; no model call.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn to_operator(
        &self,
        agent: Arc<Agent>,
        visitor_blocks: String,
        conversation_id: &str,
        lease: Lease,
        visitor_message_id: String,
        text: &str,
        client_message_id: Option<&str>,
        attachments: Vec<String>,
    ) -> Result<Started, ChatError> {
        if !lease.hold_slot(super::SLOT_WAIT).await? {
            return Err(ChatError::Busy);
        }
        let frame = lease.emit(StreamEvent::VisitorMessage(VisitorMessage {
            message_id: visitor_message_id.clone(),
            text: text.to_owned(),
            client_message_id: client_message_id.map(str::to_owned),
        }));
        let stored = NewTurn {
            conversation_id: conversation_id.to_owned(),
            new_conversation: None,
            visitor_message_id: visitor_message_id.clone(),
            text: text.to_owned(),
            client_message_id: client_message_id.map(str::to_owned),
            assistant_message_id: None,
            assistant_start_seq: 0,
            now: self.now_ms(),
            attachments,
            owner: None,
            slot_token: None,
            tell_assignee: true,
            attributes: None,
            visitor_blocks,
            agent_version: None,
            trial: false,
        };
        let committed = self.0.writer.begin_turn(stored).await;
        if committed.is_ok() {
            self.0.writer.event(&Arc::from(conversation_id), frame.clone());
        }
        lease.release_slot();
        committed?;
        self.0.writer.release(lease);
        self.console(ConsoleEvent::message(conversation_id, &agent.id));
        Ok(Started {
            conversation_id: conversation_id.to_owned(),
            message_id: String::new(),
            events: Box::pin(futures::stream::iter([frame])),
        })
    }
}
