//! People in the loop: an operator claims a conversation (from then on the model is not called
//! for it), replies (the visitor sees it live), shows that they are typing, hands it back to the
//! bot or closes it. The claim is stored, so a restart keeps the model off; the claim is a
//! conditional update, so two operators cannot both hold a conversation.

use parley_protocol::{ConversationStatus, Handoff, OperatorMessage, StreamEvent, Typing};

use super::Engine;
use super::console::ConsoleEvent;
use super::relay::Live;
use crate::store::users::{Role as UserRole, User};
use crate::store::{DbError, conversations, messages, new_id};

/// Why a takeover action was refused.
#[derive(Debug, thiserror::Error)]
pub enum TakeoverError {
    #[error("conversation not found")]
    NotFound,
    #[error("{0}")]
    Refused(&'static str),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Longest operator reply, in characters.
pub const MAX_REPLY_CHARS: usize = 4000;

impl Engine {
    pub(crate) async fn conversation_agent(&self, id: &str) -> Result<(String, String, Option<String>), TakeoverError> {
        conversations::holder(self.db(), id).await?.ok_or(TakeoverError::NotFound)
    }

    /// Takes the conversation over; false when someone else holds it (or it is closed).
    pub async fn claim(&self, conversation_id: &str, user: &User) -> Result<bool, TakeoverError> {
        let (agent_id, _, _) = self.conversation_agent(conversation_id).await?;
        if !conversations::claim(self.db(), conversation_id, &user.id, self.now_ms()).await? {
            return Ok(false);
        }
        self.wake_outbox();
        // An answer being written stops, on whichever process writes it: a person is here now.
        self.cancel_everywhere(conversation_id);
        self.emit_now(
            conversation_id,
            StreamEvent::Handoff(Handoff { to: "human".into(), operator_name: Some(user.name.clone()) }),
        )
        .await?;
        self.console(ConsoleEvent::status(conversation_id, &agent_id));
        self.summarise_on_handoff(conversation_id);
        Ok(true)
    }

    fn may_act(&self, claimed_by: &Option<String>, user: &User) -> Result<(), TakeoverError> {
        match claimed_by {
            Some(holder) if *holder == user.id || user.role == UserRole::Admin => Ok(()),
            Some(_) => Err(TakeoverError::Refused("another operator holds this conversation")),
            None => Err(TakeoverError::Refused("claim the conversation first")),
        }
    }

    /// Hands the conversation back to the bot.
    pub async fn release(&self, conversation_id: &str, user: &User) -> Result<(), TakeoverError> {
        let (agent_id, _, claimed_by) = self.conversation_agent(conversation_id).await?;
        self.may_act(&claimed_by, user)?;
        conversations::unclaim(self.db(), conversation_id, ConversationStatus::Bot, Some(&user.id), self.now_ms())
            .await?;
        self.emit_now(conversation_id, StreamEvent::Handoff(Handoff { to: "bot".into(), operator_name: None })).await?;
        self.console(ConsoleEvent::status(conversation_id, &agent_id));
        // The holder has room for one more: the teams' queues may go on.
        self.assign_waiting().await;
        Ok(())
    }

    /// Ends the conversation (the visitor's next message starts a new one).
    pub async fn close(&self, conversation_id: &str, user: &User) -> Result<(), TakeoverError> {
        let (agent_id, status, claimed_by) = self.conversation_agent(conversation_id).await?;
        if claimed_by.is_some() {
            self.may_act(&claimed_by, user)?;
        }
        if status == ConversationStatus::Closed.as_str() {
            return Ok(());
        }
        self.cancel_everywhere(conversation_id);
        conversations::unclaim(self.db(), conversation_id, ConversationStatus::Closed, Some(&user.id), self.now_ms())
            .await?;
        self.wake_outbox();
        self.emit_now(conversation_id, StreamEvent::Handoff(Handoff { to: "closed".into(), operator_name: None }))
            .await?;
        self.console(ConsoleEvent::status(conversation_id, &agent_id));
        self.assign_waiting().await;
        Ok(())
    }

    /// A person writes to the visitor.
    pub async fn operator_reply(
        &self,
        conversation_id: &str,
        user: &User,
        text: &str,
    ) -> Result<String, TakeoverError> {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_REPLY_CHARS {
            return Err(TakeoverError::Refused("a reply has 1 to 4000 characters"));
        }
        let (agent_id, _, claimed_by) = self.conversation_agent(conversation_id).await?;
        self.may_act(&claimed_by, user)?;
        let id = new_id();
        let now = self.now_ms();
        messages::insert_operator_reply(self.db(), &id, conversation_id, text, (&user.name, &user.id), now).await?;
        let seq = self
            .emit_now(
                conversation_id,
                StreamEvent::OperatorMessage(OperatorMessage {
                    message_id: id.clone(),
                    text: text.to_owned(),
                    operator_name: user.name.clone(),
                }),
            )
            .await?;
        // Where the reply stands in the stream: a panel that was closed counts it as unread.
        messages::set_start_seq(self.db(), &id, seq).await?;
        // A visitor who left gets it by mail (`engine/mail/return_mail.rs`).
        crate::store::return_mail::mark_pending(self.db(), conversation_id, now, false).await?;
        self.console(ConsoleEvent::message(conversation_id, &agent_id));
        Ok(id)
    }

    /// Shows (or hides) a typing indicator to everyone following the conversation.
    pub fn typing(&self, conversation_id: &str, who: &str, active: bool) {
        if let Some(lease) = self.hub().get(conversation_id) {
            lease.emit_ephemeral(StreamEvent::Typing(Typing { who: who.to_owned(), active }));
        }
        self.tell_replicas(Live::Typing { c: conversation_id.to_owned(), w: who.to_owned(), on: active });
    }

    /// Stops the conversation's running answer here and on every other process; true if it ran
    /// here.
    pub fn cancel_everywhere(&self, conversation_id: &str) -> bool {
        self.tell_replicas(Live::Cancel { c: conversation_id.to_owned() });
        self.hub().get(conversation_id).and_then(|lease| lease.cancel_turn()).is_some()
    }
}
