//! A visitor rates an answer (helpful or not) or, once a person has closed it, the whole
//! conversation (1 to 5), with an optional comment.

use parley_protocol::{ApiCode, ConversationStatus, MAX_RATING_COMMENT_CHARS, MessageStatus, Rate, Role};

use super::super::Engine;
use super::ChatError;
use crate::store::messages;
use crate::store::ratings::{self, NewRating, RatedAnswer};
use crate::store::visitors::Visitor;

impl Engine {
    /// Stores the visitor's rating (replacing an earlier one of the same answer or conversation)
    /// and queues its webhook.
    pub async fn rate(&self, visitor: &Visitor, conversation_id: &str, rate: &Rate) -> Result<(), ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        let invalid = |message: &str| ChatError::Invalid(ApiCode::InvalidBody, message.to_owned());
        let comment = rate.comment.as_deref().map(str::trim).filter(|c| !c.is_empty());
        if comment.is_some_and(|c| c.chars().count() > MAX_RATING_COMMENT_CHARS) {
            return Err(invalid(&format!("A comment is {MAX_RATING_COMMENT_CHARS} characters at most.")));
        }
        let stored;
        let answer = match rate.message_id.as_deref() {
            Some(message_id) => {
                if !matches!(rate.score, 1 | -1) {
                    return Err(invalid("An answer is rated 1 (helpful) or -1 (not helpful)."));
                }
                stored = messages::list(self.db(), &conv.id).await?;
                let at = stored
                    .iter()
                    .position(|m| m.id == message_id && m.role == Role::Assistant)
                    .ok_or(ChatError::NotFound)?;
                if stored[at].status != MessageStatus::Complete {
                    return Err(invalid("Only a finished answer can be rated."));
                }
                let question = stored[..at].iter().rev().find(|m| m.role == Role::Visitor).map(|m| m.content.as_str());
                Some(RatedAnswer { message_id, text: &stored[at].content, question })
            }
            None => {
                if !(1..=5).contains(&rate.score) {
                    return Err(invalid("A conversation is rated from 1 to 5."));
                }
                if conv.status != ConversationStatus::Closed {
                    return Err(invalid("A conversation can be rated once a person has closed it."));
                }
                None
            }
        };
        let rating = NewRating {
            agent_id: &conv.agent_id,
            conversation_id: &conv.id,
            visitor_id: &visitor.id,
            answer,
            score: i64::from(rate.score),
            comment,
        };
        ratings::save(self.db(), &rating, self.now_ms()).await?;
        self.wake_outbox();
        Ok(())
    }
}
