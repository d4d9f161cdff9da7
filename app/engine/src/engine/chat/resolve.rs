//! Where a visitor's message goes before anything is stored: the checks that need nothing
//! stored, the conversation it belongs to, and the stream of an earlier answer when the send is
//! a retry (the same `client_message_id`).

use parley_protocol::{ApiCode, ConversationStatus, MessageStatus};

use super::super::Engine;
use super::super::replay::{self, Until};
use super::send::SendRequest;
use super::{ChatError, Started, check_text};
use crate::store::conversations::Conversation;
use crate::store::messages::{self, Message};

/// Where a send goes once checked: an earlier answer's stream (a retried send), or on, into this
/// conversation (`None`: a new one).
pub(super) enum Resolved {
    Resume(Started),
    Go(Option<Conversation>),
}

impl Engine {
    /// The checks that need nothing stored: the visitor's agent, the service up, the text, the
    /// client's id. Gives the text to store (trimmed; empty only with images).
    pub(super) fn check_send<'a>(&self, req: &SendRequest<'a>) -> Result<&'a str, ChatError> {
        if req.visitor.agent_id != req.agent.id {
            return Err(ChatError::NotFound);
        }
        // Shutting down, or the database is away: the visitor is told to try again (503).
        if self.shutdown_state().is_draining() || self.writer_outage() {
            return Err(ChatError::Unavailable);
        }
        let text = match check_text(req.text, parley_protocol::MAX_MESSAGE_CHARS) {
            // A form's message is written from its answers.
            _ if req.form.is_some() => "",
            Err(ChatError::Invalid(ApiCode::EmptyMessage, _)) if !req.attachments.is_empty() => "",
            other => other?,
        };
        // An agent with a pre-chat form starts each conversation with it (a trial tries answers).
        if req.conversation_id.is_none() && req.form.is_none() && req.agent.prechat.is_on() && !req.trial {
            return Err(ChatError::Invalid(
                ApiCode::PrechatRequired,
                "Please fill in the form above before the first message.".into(),
            ));
        }
        if let Some(id) = req.client_message_id
            && (id.is_empty() || id.len() > 100)
        {
            return Err(ChatError::Invalid(
                ApiCode::BadClientMessageId,
                "client_message_id must be 1 to 100 characters.".into(),
            ));
        }
        Ok(text)
    }

    /// The conversation the message goes to: the visitor's own, open, of this agent; or the
    /// stream of the answer a retried send already started (the same `client_message_id` with
    /// the same text: the id reused for another message is refused, not answered with the old
    /// answer).
    pub(super) async fn resolve_send(&self, req: &SendRequest<'_>, text: &str) -> Result<Resolved, ChatError> {
        let same = |stored: &messages::Message| {
            if stored.content == text {
                Ok(())
            } else {
                Err(ChatError::Invalid(
                    ApiCode::BadClientMessageId,
                    "client_message_id was used for another message; use a new one for each message.".into(),
                ))
            }
        };
        let Some(id) = req.conversation_id else {
            // A retried first message: the client never learnt the conversation's id.
            if let Some(cid) = req.client_message_id
                && let Some((visitor_msg, reply)) =
                    messages::by_visitor_client_id(self.db(), &req.visitor.id, cid).await?
            {
                same(&visitor_msg)?;
                return Ok(Resolved::Resume(self.resume_reply(&visitor_msg.conversation_id, reply).await?));
            }
            return Ok(Resolved::Go(None));
        };
        let conv = self.own_conversation(req.visitor, id).await?;
        if conv.agent_id != req.agent.id {
            return Err(ChatError::NotFound);
        }
        if conv.status == ConversationStatus::Closed {
            return Err(ChatError::Closed);
        }
        if let Some(cid) = req.client_message_id
            && let Some((visitor_msg, reply)) = messages::by_client_id(self.db(), &conv.id, cid).await?
        {
            same(&visitor_msg)?;
            return Ok(Resolved::Resume(self.resume_reply(&conv.id, reply).await?));
        }
        Ok(Resolved::Go(Some(conv)))
    }

    /// The stream of an earlier reply (a retried send).
    pub(super) async fn resume_reply(
        &self,
        conversation_id: &str,
        reply: Option<Message>,
    ) -> Result<Started, ChatError> {
        let lease = self.hub().lease(conversation_id, false).await?;
        let Some(reply) = reply else {
            let events = replay::open(
                self.db().clone(),
                lease.clone(),
                lease.last_seq(),
                Until::MessageEnd(String::new()),
                true,
            )
            .await?;
            return Ok(Started {
                conversation_id: conversation_id.to_owned(),
                message_id: String::new(),
                events: Box::pin(events),
            });
        };
        let live = lease.active_turn().as_deref() == Some(reply.id.as_str());
        let finished = reply.status != MessageStatus::Streaming && !live;
        let after = reply.start_seq.saturating_sub(1);
        let events =
            replay::open(self.db().clone(), lease, after, Until::MessageEnd(reply.id.clone()), finished).await?;
        Ok(Started { conversation_id: conversation_id.to_owned(), message_id: reply.id, events: Box::pin(events) })
    }
}
