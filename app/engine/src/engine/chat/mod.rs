//! The widget's conversation service: send a message (start a turn, [`send`]), follow or resume
//! a stream, stop a turn, read a transcript ([`transcript`]), leave a lead. Every call checks that
//! the conversation belongs to the visitor asking; another visitor's conversation is simply not
//! found.

mod operator;
pub use operator::SendPause;
mod form;
mod rating;
mod resolve;
mod send;
pub use send::SendRequest;
mod transcript;

use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use parley_protocol::{ApiCode, Handoff, LeadForm, StreamEvent, validate_lead};

use super::Engine;
use super::attachments;
use super::console::ConsoleEvent;
use super::hub::{Frame, Lease};
use super::replay::{self, Until};
use super::writer::WriteError;
use crate::store::conversations::{self, Conversation};
use crate::store::visitors::Visitor;
use crate::store::{DbError, leads};

/// Why a chat call was refused.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("conversation not found")]
    NotFound,
    #[error("a reply is still being written")]
    Busy,
    #[error("the conversation is closed")]
    Closed,
    /// The server is shutting down (or its database is unreachable): try again shortly,
    /// another replica will answer.
    #[error("the server cannot take new turns now")]
    Unavailable,
    /// Input the visitor can correct; the message is for them.
    #[error("{1}")]
    Invalid(ApiCode, String),
    #[error("invalid form")]
    /// Fields to correct: `(field, what is wrong)`.
    InvalidForm(Vec<(String, String)>),
    #[error(transparent)]
    Db(#[from] DbError),
    /// The visitor's message could not be committed.
    #[error(transparent)]
    Storage(#[from] WriteError),
}

impl From<attachments::SendImagesError> for ChatError {
    fn from(e: attachments::SendImagesError) -> Self {
        match e {
            attachments::SendImagesError::Refused(code, message) => ChatError::Invalid(code, message),
            attachments::SendImagesError::Db(e) => ChatError::Db(e),
        }
    }
}

/// How long an event written outside a turn waits for a turn on another process to end.
const SLOT_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// How long a visitor's message waits for another process's answer to finish its writes.
const TURN_SLOT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A started (or resumed) turn.
pub struct Started {
    pub conversation_id: String,
    pub message_id: String,
    pub events: BoxStream<'static, Arc<Frame>>,
}

/// Largest visitor message, in characters.
pub fn check_text(text: &str, max_chars: usize) -> Result<&str, ChatError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ChatError::Invalid(ApiCode::EmptyMessage, "The message is empty.".into()));
    }
    let n = trimmed.chars().count();
    if n > max_chars {
        return Err(ChatError::Invalid(
            ApiCode::MessageTooLong,
            format!("The message is too long ({n} characters; {max_chars} at most)."),
        ));
    }
    Ok(trimmed)
}

impl Engine {
    async fn own_conversation(&self, visitor: &Visitor, conversation_id: &str) -> Result<Conversation, ChatError> {
        conversations::of_visitor(self.db(), conversation_id, &visitor.id).await?.ok_or(ChatError::NotFound)
    }

    /// The visitor is typing (shown to the operator who handles the conversation).
    pub async fn visitor_typing(
        &self,
        visitor: &Visitor,
        conversation_id: &str,
        active: bool,
    ) -> Result<(), ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        self.typing(&conv.id, "visitor", active);
        // The operator's console learns it through its feed (it does not follow the stream).
        self.console(super::console::ConsoleEvent::new(
            &conv.id,
            &conv.agent_id,
            if active { "typing" } else { "typing_stop" },
        ));
        Ok(())
    }

    /// Follows a conversation's stream from after `after` until the client leaves.
    pub async fn follow(
        &self,
        visitor: &Visitor,
        conversation_id: &str,
        after: u64,
    ) -> Result<impl Stream<Item = Arc<Frame>> + Send + 'static, ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        let lease = self.hub().lease(&conv.id, false).await?;
        let frames = replay::open(self.db().clone(), lease, after, Until::Forever, false).await?;
        // While it is open the visitor is here: replies reach the panel, not their mailbox.
        let here = self.visitor_here(&conv.id).await?;
        Ok(frames.map(move |frame| {
            let _here = &here;
            frame
        }))
    }

    /// Stops the running turn, if any. The partial answer is kept as `stopped`.
    pub async fn stop(&self, visitor: &Visitor, conversation_id: &str) -> Result<bool, ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        if self.cancel_everywhere(&conv.id) {
            return Ok(true);
        }
        // Another process may be writing it (replicas): it was told to stop.
        Ok(match self.db().kind() {
            crate::store::DbKind::Postgres => {
                crate::store::slots::holder(self.db(), &conv.id).await?.is_some_and(|p| p != self.process_id())
            }
            crate::store::DbKind::Sqlite => false,
        })
    }

    /// Saves a lead from the panel's form and marks the conversation as waiting for a person.
    pub async fn submit_lead(
        &self,
        visitor: &Visitor,
        conversation_id: &str,
        form: &LeadForm,
    ) -> Result<String, ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        let problems = validate_lead(form);
        if !problems.is_empty() {
            return Err(ChatError::InvalidForm(
                problems.into_iter().map(|(f, m)| (f.to_owned(), m.to_owned())).collect(),
            ));
        }
        let id = leads::submit(self.db(), &conv.agent_id, &conv.id, &visitor.id, form, self.now_ms()).await?;
        self.wake_outbox();
        self.console(ConsoleEvent::new(&conv.id, &conv.agent_id, "lead"));
        self.emit_now(&conv.id, StreamEvent::Handoff(Handoff { to: "waiting".into(), operator_name: None })).await?;
        // It went to its agent's team's queue with the lead; an automatic team gives it out now.
        self.auto_assign(&conv.id).await;
        // The person who takes it over finds a summary at the top.
        self.summarise_on_handoff(&conv.id);
        Ok(id)
    }

    /// Emits one event outside a turn and stores it before returning. With replicas, it waits
    /// for the conversation's slot: a turn another process is writing ends first (one that was
    /// told to stop ends at once).
    pub async fn emit_now(&self, conversation_id: &str, event: StreamEvent) -> Result<u64, DbError> {
        let lease: Lease = self.hub().lease(conversation_id, false).await?;
        if !lease.hold_slot(SLOT_WAIT).await? {
            return Err(DbError::Protocol("another server is still writing in this conversation".into()));
        }
        let frame = lease.emit(event);
        let seq = frame.seq;
        self.0.writer.event(&Arc::from(conversation_id), frame);
        lease.release_slot();
        self.0.writer.flush().await;
        Ok(seq)
    }
}
