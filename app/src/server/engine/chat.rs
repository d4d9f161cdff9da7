//! The widget's conversation service: send a message (start a turn), follow or resume a stream,
//! stop a turn, read a transcript, leave a lead. Every call checks that the conversation belongs
//! to the visitor asking; another visitor's conversation is simply not found.

use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use futures::stream::BoxStream;
use parley_widget::protocol::{
    ApiCode, Block, ConversationStatus, Handoff, LeadForm, MessageEnd, MessageStart, MessageStatus, PaymentStatus,
    Role, StreamEvent, Transcript, TranscriptMessage, VisitorMessage, validate_lead,
};
use tokio_util::sync::CancellationToken;

use super::Engine;
use super::attachments;
use super::console::ConsoleEvent;
use super::context;
use super::hub::{Frame, Lease};
use super::lang::Lang;
use super::replay::{self, Until};
use super::tools::ToolContext;
use super::turn::{Turn, TurnLimits};
use super::writer::WriteError;
use crate::server::store::agents::Agent;
use crate::server::store::conversations::{self, Conversation};
use crate::server::store::messages::{self, Message, NewTurn};
use crate::server::store::visitors::Visitor;
use crate::server::store::{DbError, leads, new_id, tool_calls};

/// Why a chat call was refused.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("conversation not found")]
    NotFound,
    #[error("a reply is still being written")]
    Busy,
    #[error("the conversation is closed")]
    Closed,
    /// Input the visitor can correct; the message is for them.
    #[error("{1}")]
    Invalid(ApiCode, String),
    #[error("invalid form")]
    InvalidForm(Vec<(&'static str, &'static str)>),
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

    /// Sends a visitor message and starts the assistant's answer. The message is committed before
    /// the model is called. Sending again with the same `client_message_id` resumes that turn.
    pub async fn send(
        &self,
        agent: Arc<Agent>,
        visitor: &Visitor,
        conversation_id: Option<&str>,
        text: &str,
        client_message_id: Option<&str>,
        attachments: &[String],
    ) -> Result<Started, ChatError> {
        if visitor.agent_id != agent.id {
            return Err(ChatError::NotFound);
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
        let cancel = CancellationToken::new();
        if let Err(busy) = lease.try_begin_turn(message_id.clone(), cancel.clone()) {
            // The previous answer is only finishing its writes: wait for it rather than refuse.
            if !busy.finishing || !lease.wait_turn_released(Duration::from_secs(5)).await {
                return Err(ChatError::Busy);
            }
            lease.try_begin_turn(message_id.clone(), cancel.clone()).map_err(|_| ChatError::Busy)?;
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
        let experts = if agent.is_coordinator() { self.experts().enabled() } else { Arc::new(Vec::new()) };
        let window = self.prices().lookup(&agent.provider.model).map(|p| p.context_window);
        let history_limit = usize::try_from(self.settings().history_limit).unwrap_or(20);
        attachments::mark_history(&mut known.history, &sent);
        let (mut messages, compaction) =
            context::build(&agent, &experts, &known, text, &this_turn, window, history_limit);
        attachments::attach(&mut messages, images.images);
        let turn = Turn {
            writer: self.0.writer.clone(),
            model: self.model_for(&agent),
            model_name: agent.provider.model.clone(),
            tools: self.registry().for_agent(&agent),
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
                max_tokens: None,
            },
            cancel,
            lang: Lang::of(text),
            lease,
            prices: self.prices().clone(),
            budgets: self.budgets().clone(),
            experts,
        };
        tokio::spawn(turn.run());
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
        };
        self.0.writer.begin_turn(stored).await?;
        self.0.writer.event(&Arc::from(conversation_id), frame.clone());
        self.0.writer.release(lease);
        self.console(ConsoleEvent::message(conversation_id, &agent.id));
        let _ = visitor;
        Ok(Started {
            conversation_id: conversation_id.to_owned(),
            message_id: String::new(),
            events: Box::pin(futures::stream::iter([frame])),
        })
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
        self.console(super::console::ConsoleEvent {
            conversation_id: conv.id.clone(),
            agent_id: conv.agent_id.clone(),
            kind: if active { "typing" } else { "typing_stop" },
        });
        Ok(())
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

    /// Follows a conversation's stream from after `after` until the client leaves.
    pub async fn follow(
        &self,
        visitor: &Visitor,
        conversation_id: &str,
        after: u64,
    ) -> Result<impl Stream<Item = Arc<Frame>> + Send + 'static, ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        let lease = self.hub().lease(&conv.id, false).await?;
        Ok(replay::open(self.db().clone(), lease, after, Until::Forever, false).await?)
    }

    /// Stops the running turn, if any. The partial answer is kept as `stopped`.
    pub async fn stop(&self, visitor: &Visitor, conversation_id: &str) -> Result<bool, ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        Ok(self.hub().get(&conv.id).and_then(|lease| lease.cancel_turn()).is_some())
    }

    /// The conversation as the panel shows it after a reload.
    pub async fn transcript(&self, visitor: &Visitor, conversation_id: &str) -> Result<Transcript, ChatError> {
        let conv = self.own_conversation(visitor, conversation_id).await?;
        let rows = messages::list(self.db(), &conv.id).await?;
        let calls = tool_calls::of_conversation(self.db(), &conv.id).await?;
        let images = crate::server::store::attachments::of_conversation(self.db(), &conv.id).await?;
        // A payment's state is the order's, whatever the block said when it was stored.
        let orders = crate::server::store::orders::of_conversation(self.db(), &conv.id).await?;
        let stored_seq = crate::server::store::events::max_seq(self.db(), &conv.id).await?;
        let live_seq = self.hub().get(&conv.id).map(|lease| lease.last_seq()).unwrap_or(0);
        let messages = rows
            .into_iter()
            .map(|m| {
                let tool_calls = calls.iter().filter(|(mid, _)| *mid == m.id).map(|(_, c)| c.clone()).collect();
                let attachments = images.iter().filter(|(mid, _)| *mid == m.id).map(|(_, a)| a.clone()).collect();
                let blocks = m.blocks.into_iter().map(|b| with_order_status(b, &orders)).collect();
                TranscriptMessage {
                    id: m.id,
                    role: m.role,
                    text: m.content,
                    blocks,
                    tool_calls,
                    status: m.status,
                    created_at: m.created_at,
                    start_seq: m.start_seq,
                    attachments,
                }
            })
            .collect();
        Ok(Transcript {
            conversation_id: conv.id,
            last_seq: stored_seq.max(live_seq),
            status: conv.status,
            lead_submitted: conv.lead_submitted,
            messages,
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
            return Err(ChatError::InvalidForm(problems));
        }
        let id = leads::submit(self.db(), &conv.agent_id, &conv.id, &visitor.id, form, self.now_ms()).await?;
        self.console(ConsoleEvent { conversation_id: conv.id.clone(), agent_id: conv.agent_id.clone(), kind: "lead" });
        self.emit_now(&conv.id, StreamEvent::Handoff(Handoff { to: "waiting".into(), operator_name: None })).await?;
        Ok(id)
    }

    /// Emits one event outside a turn and stores it before returning.
    pub async fn emit_now(&self, conversation_id: &str, event: StreamEvent) -> Result<(), DbError> {
        let lease: Lease = self.hub().lease(conversation_id, false).await?;
        let frame = lease.emit(event);
        self.0.writer.event(&Arc::from(conversation_id), frame);
        self.0.writer.flush().await;
        Ok(())
    }
}

/// A payment block with its order's current status.
fn with_order_status(block: Block, orders: &[crate::server::store::orders::Order]) -> Block {
    match block {
        Block::PaymentQr(mut b) => {
            if let Some(order) = orders.iter().find(|o| o.id == b.order_id) {
                b.status = match order.status.as_str() {
                    "paid" => PaymentStatus::Paid,
                    "expired" => PaymentStatus::Expired,
                    _ => PaymentStatus::Pending,
                };
            }
            Block::PaymentQr(b)
        }
        other => other,
    }
}
