//! Sending a visitor message: checked, committed before the model is called, then answered by a
//! [`Turn`] in a task of its own — or, while a person holds the conversation, passed to them.
//! A retried send (the same `client_message_id`) resumes the stream of the first one.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use parley_protocol::{
    AttachmentRef, ConversationStatus, MessageEnd, MessageStart, MessageStatus, Role, StreamEvent, VisitorMessage,
};

use super::super::Engine;
use super::super::attachments;
use super::super::console::ConsoleEvent;
use super::super::context;
use super::super::hub::Lease;
use super::super::lang::Lang;
use super::super::provider::ModelImage;
use super::super::replay::{self, Until};
use super::super::tools::ToolContext;
use super::super::turn::{Turn, TurnLimits};
use super::resolve::Resolved;
use super::{ChatError, Started};
use crate::store::agents::Agent;
use crate::store::messages::NewTurn;
use crate::store::new_id;
use crate::store::visitors::Visitor;

/// A visitor's message as the API received it.
pub struct SendRequest<'a> {
    pub agent: Arc<Agent>,
    pub visitor: &'a Visitor,
    /// `None`: a new conversation.
    pub conversation_id: Option<&'a str>,
    pub text: &'a str,
    /// The client's id for the message; sending again with it resumes the first send's answer.
    pub client_message_id: Option<&'a str>,
    /// Ids of images uploaded beforehand.
    pub attachments: &'a [String],
    /// What the host page told about itself (`setContext`), as JSON text.
    pub page_context: Option<String>,
    /// The sender's address (`None`: not known, as in tests that call the engine directly): the
    /// daily cap of every visitor from it counts this turn.
    pub address: Option<std::net::IpAddr>,
    /// The message submits a form shown under an answer of this conversation: `text` is then
    /// written from the answers (see `super::form`).
    pub form: Option<&'a parley_protocol::FormSubmission>,
    /// A trial (an answer test, the draft's preview; see `super::super::answer_tests`): a new
    /// conversation is stored as one, and its tools get the trial services (sandbox payments).
    pub trial: bool,
}

/// A turn that holds its conversation: its ids, the lease, the stop token.
pub(super) struct Claimed {
    pub(super) conversation_id: String,
    pub(super) visitor_message_id: String,
    pub(super) message_id: String,
    pub(super) lease: Lease,
    pub(super) cancel: CancellationToken,
    pub(super) slot_token: Option<String>,
}

/// What the commit gives the turn: where its events start, the conversation as known, and the
/// images (those sent before, and this message's for the model).
struct Committed {
    start_seq: u64,
    known: context::Loaded,
    sent: Vec<(String, AttachmentRef)>,
    images: Vec<ModelImage>,
}

impl Engine {
    /// Sends a visitor message and starts the assistant's answer: [`Self::check_send`],
    /// [`Self::resolve_send`], then the lease; a conversation a person holds takes the message
    /// for them; otherwise [`Self::claim_turn`] — and, the turn held, the status read again, so
    /// a claim that landed meanwhile still passes the message to the person —,
    /// [`Self::commit_turn`] (the message is committed before the model is called) and
    /// [`Self::start_turn`].
    pub async fn send(&self, req: SendRequest<'_>) -> Result<Started, ChatError> {
        let text = self.check_send(&req)?;
        let (form, form_text) = match req.form {
            Some(submission) => {
                let (answers, text) = self.form_answers(&req, submission).await?;
                (Some(answers), text)
            }
            None => (None, String::new()),
        };
        let text = if form.is_some() { form_text.as_str() } else { text };
        let existing = match self.resolve_send(&req, text).await? {
            Resolved::Resume(started) => return Ok(started),
            Resolved::Go(existing) => existing,
        };
        let (form, blocks) = match form {
            Some(answers) => {
                let conversation = existing.as_ref().map(|c| c.id.as_str()).unwrap_or_default();
                self.form_not_answered(conversation, &answers.form_id).await?;
                let blocks = crate::store::to_json_text(&[parley_protocol::Block::FormAnswers(answers.clone())]);
                (Some(answers), blocks)
            }
            None => (None, String::new()),
        };
        // Refused images leave nothing stored.
        let images = self.images_for_send(&req.agent, req.visitor, req.attachments, text).await?;
        let conversation_id = existing.as_ref().map(|c| c.id.clone()).unwrap_or_else(new_id);
        let lease = self.hub().lease(&conversation_id, existing.is_none()).await?;
        let visitor_message_id = new_id();
        if existing.as_ref().is_some_and(|c| c.status == ConversationStatus::Human) {
            // A person handles this conversation: the message is for them; the model stays silent.
            let (agent, cmid) = (req.agent.clone(), req.client_message_id);
            return self
                .to_operator(agent, blocks, &conversation_id, lease, visitor_message_id, text, cmid, images.ids)
                .await;
        }
        self.paused_send(&conversation_id).await;
        let claimed = self.claim_turn(lease, conversation_id, visitor_message_id, existing.is_some()).await?;
        if existing.is_some() && self.taken_over(&claimed).await? {
            // A person claimed it after its status was read: the message is theirs after all.
            let Claimed { conversation_id, visitor_message_id, lease, .. } = claimed;
            lease.end_turn();
            let (agent, cmid) = (req.agent.clone(), req.client_message_id);
            return self
                .to_operator(agent, blocks, &conversation_id, lease, visitor_message_id, text, cmid, images.ids)
                .await;
        }
        // Someone is asked for (the status `waiting_human`): their assignee hears of the message.
        let waiting = existing.as_ref().is_some_and(|c| c.status == ConversationStatus::WaitingHuman);
        let mut committed =
            self.commit_turn(&req, &claimed, (text, blocks), images.ids, (existing.is_some(), waiting)).await?;
        committed.images = images.images;
        committed.known.form_answers = form;
        self.start_turn(req, claimed, committed, text).await
    }

    /// One turn at a time across processes (replicas): the conversation's slot first (a new
    /// conversation's row is stored with its slot held), then this process's turn.
    async fn claim_turn(
        &self,
        lease: Lease,
        conversation_id: String,
        visitor_message_id: String,
        existing: bool,
    ) -> Result<Claimed, ChatError> {
        let message_id = new_id();
        // The visitor's stop, or the end of a shutdown's grace period.
        let cancel = self.shutdown_state().turn_token();
        let slot_token = if existing {
            if !lease.hold_slot(super::TURN_SLOT_WAIT).await? {
                return Err(ChatError::Busy);
            }
            None
        } else {
            lease.hold_new_slot()
        };
        if let Err(busy) = lease.try_begin_turn(message_id.clone(), cancel.clone()) {
            // The previous answer is only finishing its writes: wait for it rather than refuse.
            if !busy.finishing
                || !lease.wait_turn_released(Duration::from_secs(5)).await
                || lease.try_begin_turn(message_id.clone(), cancel.clone()).is_err()
            {
                lease.release_slot();
                return Err(ChatError::Busy);
            }
        }
        Ok(Claimed { conversation_id, visitor_message_id, message_id, lease, cancel, slot_token })
    }

    /// Numbers the visitor's message and the answer's first event, commits the message (before
    /// the model is called) while the conversation's context is read, and hands the two events
    /// to the writer. On a failed commit the announced answer is closed and nothing is stored.
    async fn commit_turn(
        &self,
        req: &SendRequest<'_>,
        claimed: &Claimed,
        (text, visitor_blocks): (&str, String),
        attachments: Vec<String>,
        (existing, waiting): (bool, bool),
    ) -> Result<Committed, ChatError> {
        let Claimed { conversation_id, visitor_message_id, message_id, lease, .. } = claimed;
        let visitor_frame = lease.emit(StreamEvent::VisitorMessage(VisitorMessage {
            message_id: visitor_message_id.clone(),
            text: text.to_owned(),
            client_message_id: req.client_message_id.map(str::to_owned),
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
            new_conversation: (!existing).then(|| (req.agent.id.clone(), req.visitor.id.clone())),
            visitor_message_id: visitor_message_id.clone(),
            text: text.to_owned(),
            client_message_id: req.client_message_id.map(str::to_owned),
            assistant_message_id: Some(message_id.clone()),
            assistant_start_seq: start.seq,
            now: self.now_ms(),
            attachments,
            owner: Some(self.process_id().to_owned()),
            slot_token: claimed.slot_token.clone(),
            tell_assignee: waiting,
            attributes: req.page_context.clone().map(|json| (req.visitor.id.clone(), json)),
            visitor_blocks,
            agent_version: Some(req.agent.version),
            trial: req.trial,
        };
        let earlier = existing.then_some(conversation_id.as_str());
        let known = async {
            context::load(self.db(), &req.agent, earlier, &req.visitor.id).await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "could not read the conversation's context");
                context::Loaded::default()
            })
        };
        let (committed, known, sent) = tokio::join!(self.0.writer.begin_turn(stored), known, self.sent_images(earlier));
        if let Err(e) = committed {
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
        if !req.trial {
            // A trial is for no one's inbox.
            self.console(ConsoleEvent::message(conversation_id, &req.agent.id));
        }
        Ok(Committed { start_seq: start.seq, known, sent, images: Vec::new() })
    }

    /// Builds the model's messages from what is known and starts the answer in a task of its
    /// own; the visitor's stream replays from the answer's first event.
    async fn start_turn(
        &self,
        req: SendRequest<'_>,
        claimed: Claimed,
        mut committed: Committed,
        text: &str,
    ) -> Result<Started, ChatError> {
        let Claimed { conversation_id, visitor_message_id, message_id, lease, cancel, .. } = claimed;
        let (agent, address) = (req.agent, req.address);
        let until = Until::MessageEnd(message_id.clone());
        let events = replay::open(self.db().clone(), lease.clone(), committed.start_seq - 1, until, false).await?;
        let this_turn = [visitor_message_id, message_id.clone()];
        let experts = self.experts().for_agent(&agent);
        let window = self.prices().lookup(&agent.provider.model).map(|p| p.context_window);
        let history_limit = usize::try_from(self.settings().history_limit).unwrap_or(20);
        let known = &mut committed.known;
        attachments::mark_history(&mut known.history, &committed.sent);
        if req.visitor.is_identified() {
            known.user = Some((req.visitor.user_name.clone(), req.visitor.user_email.clone()));
        }
        known.page_context = req.page_context;
        let (mut messages, compaction) =
            context::build(&agent, &experts, known, text, &this_turn, window, history_limit);
        attachments::attach(&mut messages, committed.images);
        let tool_ctx = ToolContext {
            db: self.db().clone(),
            agent: agent.clone(),
            conversation_id: conversation_id.clone(),
            visitor_id: req.visitor.id.clone(),
            message_id: message_id.clone(),
            clock: self.clock().clone(),
            http: self.0.http.clone(),
            services: if req.trial { self.0.trial_services.clone() } else { self.0.services.clone() },
        };
        let turn = Turn {
            writer: self.0.writer.clone(),
            model: self.model_for(&agent),
            model_name: agent.provider.model.clone(),
            tools: self.tools_for(&agent).await,
            tool_ctx,
            messages,
            compaction,
            limits: self.turn_limits(&agent, address),
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

    /// The limits of an agent's turn: its own, else the service's.
    fn turn_limits(&self, agent: &Agent, address: Option<std::net::IpAddr>) -> TurnLimits {
        let spend = &self.settings().spend;
        TurnLimits {
            max_hops: agent.max_turns(),
            tool_timeout: self.settings().tool_timeout,
            max_tokens: Some(agent.limits.max_tokens.unwrap_or(spend.answer_max_tokens)),
            time_limit: spend.answer_time_limit,
            agent_daily_cap_usd: agent.limits.daily_cap_usd.or(spend.agent_daily_cap_usd),
            visitor_daily_cap_usd: spend.visitor_daily_cap_usd,
            address_daily_cap_usd: spend.address_daily_cap_usd,
            address: address.map(crate::net::address_group).unwrap_or_default(),
            fallback_model: self.settings().fallbacks.for_provider(&agent.provider),
        }
    }
}
