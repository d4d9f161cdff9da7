//! Sending a visitor message: checked, committed before the model is called, then answered by a
//! [`Turn`] in a task of its own — or, while a person holds the conversation, passed to them.
//! A retried send (the same `client_message_id`) resumes the stream of the first one.

use std::sync::Arc;
use std::time::Duration;

use parley_widget::protocol::{
    ApiCode, ConversationStatus, MessageEnd, MessageStart, MessageStatus, Role, StreamEvent, VisitorMessage,
};

use super::super::Engine;
use super::super::attachments;
use super::super::console::ConsoleEvent;
use super::super::context;
use super::super::hub::Lease;
use super::super::lang::Lang;
use super::super::replay::{self, Until};
use super::super::tools::ToolContext;
use super::super::turn::{Turn, TurnLimits};
use super::{ChatError, Started, check_text};
use crate::store::agents::Agent;
use crate::store::messages::{self, Message, NewTurn};
use crate::store::new_id;
use crate::store::visitors::Visitor;

impl Engine {
    /// Sends a visitor message and starts the assistant's answer. The message is committed before
    /// the model is called. Sending again with the same `client_message_id` resumes that turn.
    #[allow(clippy::too_many_arguments)]
    pub async fn send(
        &self,
        agent: Arc<Agent>,
        visitor: &Visitor,
        conversation_id: Option<&str>,
        text: &str,
        client_message_id: Option<&str>,
        attachments: &[String],
        page_context: Option<String>,
    ) -> Result<Started, ChatError> {
        if visitor.agent_id != agent.id {
            return Err(ChatError::NotFound);
        }
        // Shutting down, or the database is away: the visitor is told to try again (503).
        if self.shutdown_state().is_draining() || self.writer_outage() {
            return Err(ChatError::Unavailable);
        }
        // With images the text may be empty.
        let text = match check_text(text, parley_widget::protocol::MAX_MESSAGE_CHARS) {
            Err(ChatError::Invalid(ApiCode::EmptyMessage, _)) if !attachments.is_empty() => "",
            other => other?,
        };
        if let Some(id) = client_message_id
            && (id.is_empty() || id.len() > 100)
        {
            return Err(ChatError::Invalid(
                ApiCode::BadClientMessageId,
                "client_message_id must be 1 to 100 characters.".into(),
            ));
        }
        let existing = match conversation_id {
            Some(id) => {
                let conv = self.own_conversation(visitor, id).await?;
                if conv.agent_id != agent.id {
                    return Err(ChatError::NotFound);
                }
                if conv.status == ConversationStatus::Closed {
                    return Err(ChatError::Closed);
                }
                if let Some(cid) = client_message_id
                    && let Some((_, reply)) = messages::by_client_id(self.db(), &conv.id, cid).await?
                {
                    return self.resume_reply(&conv.id, reply).await;
                }
                Some(conv)
            }
            None => {
                // A retried first message: the client never learnt the conversation's id.
                if let Some(cid) = client_message_id
                    && let Some((visitor_msg, reply)) =
                        messages::by_visitor_client_id(self.db(), &visitor.id, cid).await?
                {
                    return self.resume_reply(&visitor_msg.conversation_id, reply).await;
                }
                None
            }
        };
        // Refused images leave nothing stored.
        let images = self.images_for_send(&agent, visitor, attachments, text).await?;
        let conversation_id = existing.as_ref().map(|c| c.id.clone()).unwrap_or_else(new_id);
        let lease = self.hub().lease(&conversation_id, existing.is_none()).await?;
        let visitor_message_id = new_id();
        if existing.as_ref().is_some_and(|c| c.status == ConversationStatus::Human) {
            // A person handles this conversation: the message is for them; the model stays silent.
            let ids = images.ids;
            return self
                .to_operator(agent, visitor, &conversation_id, lease, visitor_message_id, text, client_message_id, ids)
                .await;
        }
        let message_id = new_id();
        // The visitor's stop, or the end of a shutdown's grace period.
        let cancel = self.shutdown_state().turn_token();
        // One turn at a time across processes (replicas): the slot first, then this process's
        // turn. A new conversation's row is stored with its slot held.
        let slot_token = match existing {
            None => lease.hold_new_slot(),
            Some(_) => {
                if !lease.hold_slot(super::TURN_SLOT_WAIT).await? {
                    return Err(ChatError::Busy);
                }
                None
            }
        };
        if let Err(busy) = lease.try_begin_turn(message_id.clone(), cancel.clone()) {
            // The previous answer is only finishing its writes: wait for it rather than refuse.
            if !busy.finishing || !lease.wait_turn_released(Duration::from_secs(5)).await {
                lease.release_slot();
                return Err(ChatError::Busy);
            }
            if lease.try_begin_turn(message_id.clone(), cancel.clone()).is_err() {
                lease.release_slot();
                return Err(ChatError::Busy);
            }
        }
        let visitor_frame = lease.emit(StreamEvent::VisitorMessage(VisitorMessage {
            message_id: visitor_message_id.clone(),
            text: text.to_owned(),
        }));
        // Number the answer's first event before storing it, so the stored row knows where a
        // resumed stream starts.
        let start = lease.emit(StreamEvent::MessageStart(MessageStart {
            conversation_id: conversation_id.clone(),
            message_id: message_id.clone(),
            role: Role::Assistant,
        }));
        let stored = NewTurn {
            conversation_id: conversation_id.clone(),
            new_conversation: existing.is_none().then(|| (agent.id.clone(), visitor.id.clone())),
            visitor_message_id: visitor_message_id.clone(),
            text: text.to_owned(),
            client_message_id: client_message_id.map(str::to_owned),
            assistant_message_id: Some(message_id.clone()),
            assistant_start_seq: start.seq,
            now: self.now_ms(),
            attachments: images.ids,
            owner: Some(self.process_id().to_owned()),
            slot_token,
        };
        // The visitor's message is committed before the model is called; earlier messages,
        // summary, state and memories are read meanwhile.
        let known = async {
            let existing = existing.as_ref().map(|_| conversation_id.as_str());
            context::load(self.db(), &agent, existing, &visitor.id).await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "could not read the conversation's context");
                context::Loaded::default()
            })
        };
        let sent = self.sent_images(existing.as_ref().map(|_| conversation_id.as_str()));
        let (committed, mut known, sent) = tokio::join!(self.0.writer.begin_turn(stored), known, sent);
        if let Err(e) = committed {
            // Close what was announced; nothing was stored.
            lease.emit(StreamEvent::MessageEnd(MessageEnd {
                message_id: message_id.clone(),
                status: MessageStatus::Failed,
            }));
            lease.end_turn();
            return Err(ChatError::Storage(e));
        }
        let conversation: Arc<str> = Arc::from(conversation_id.as_str());
        self.0.writer.event(&conversation, visitor_frame);
        self.0.writer.event(&conversation, start.clone());
        self.console(ConsoleEvent::message(&conversation_id, &agent.id));
        let events =
            replay::open(self.db().clone(), lease.clone(), start.seq - 1, Until::MessageEnd(message_id.clone()), false)
                .await?;
        let this_turn = [visitor_message_id, message_id.clone()];
        let experts = self.experts().for_agent(&agent);
        let tools = self.tools_for(&agent).await;
        let window = self.prices().lookup(&agent.provider.model).map(|p| p.context_window);
        let history_limit = usize::try_from(self.settings().history_limit).unwrap_or(20);
        attachments::mark_history(&mut known.history, &sent);
        if visitor.is_identified() {
            known.user = Some((visitor.user_name.clone(), visitor.user_email.clone()));
        }
        known.page_context = page_context;
        let (mut messages, compaction) =
            context::build(&agent, &experts, &known, text, &this_turn, window, history_limit);
        attachments::attach(&mut messages, images.images);
        let turn = Turn {
            writer: self.0.writer.clone(),
            model: self.model_for(&agent),
            model_name: agent.provider.model.clone(),
            tools,
            tool_ctx: ToolContext {
                db: self.db().clone(),
                agent: agent.clone(),
                conversation_id: conversation_id.clone(),
                visitor_id: visitor.id.clone(),
                message_id: message_id.clone(),
                clock: self.clock().clone(),
                http: self.0.http.clone(),
                services: self.0.services.clone(),
            },
            messages,
            compaction,
            limits: TurnLimits {
                max_hops: agent.max_turns(),
                tool_timeout: self.settings().tool_timeout,
                max_tokens: Some(agent.limits.max_tokens.unwrap_or(self.settings().spend.answer_max_tokens)),
                time_limit: self.settings().spend.answer_time_limit,
                agent_daily_cap_usd: agent.limits.daily_cap_usd.or(self.settings().spend.agent_daily_cap_usd),
                visitor_daily_cap_usd: self.settings().spend.visitor_daily_cap_usd,
                fallback_model: self.settings().fallbacks.for_provider(&agent.provider),
            },
            cancel,
            shutdown: self.shutdown_state().stopping_turns().clone(),
            lang: Lang::of(text),
            lease,
            prices: self.prices().clone(),
            budgets: self.budgets().clone(),
            experts,
        };
        self.shutdown_state().spawn_turn(turn.run());
        Ok(Started { conversation_id, message_id, events: Box::pin(events) })
    }

    /// Stores a visitor message for the operator who holds the conversation; no model call.
    #[allow(clippy::too_many_arguments)]
    async fn to_operator(
        &self,
        agent: Arc<Agent>,
        visitor: &Visitor,
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
        };
        let committed = self.0.writer.begin_turn(stored).await;
        if committed.is_ok() {
            self.0.writer.event(&Arc::from(conversation_id), frame.clone());
        }
        lease.release_slot();
        committed?;
        self.0.writer.release(lease);
        self.console(ConsoleEvent::message(conversation_id, &agent.id));
        let _ = visitor;
        Ok(Started {
            conversation_id: conversation_id.to_owned(),
            message_id: String::new(),
            events: Box::pin(futures::stream::iter([frame])),
        })
    }

    /// The stream of an earlier reply (a retried send).
    async fn resume_reply(&self, conversation_id: &str, reply: Option<Message>) -> Result<Started, ChatError> {
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
