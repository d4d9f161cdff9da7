//! A trial: the real turn — the agent as given (its published behaviour or a draft's), its real
//! tools against real data — for a visitor made for the trial, in a conversation stored as a
//! trial (migration 0045): nothing about it reaches the inbox, search, contacts, webhooks, mail or
//! operators, and its payments go to the sandbox. Once the last answer is stored and read, the
//! visitor and everything of theirs is deleted; the model calls' cost stays in the accounts.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use parley_protocol::{Block, Role};

use super::super::Engine;
use super::super::chat::{ChatError, SendRequest};
use crate::store::agents::Agent;
use crate::store::answer_tests::CalledTool;
use crate::store::{messages, privacy, tool_calls, usage, visitors};

/// What a trial's last answer did.
#[derive(Clone, Debug, PartialEq)]
pub struct TrialAnswer {
    /// The trial's conversation (deleted once the trial is read).
    pub conversation_id: String,
    pub answer: String,
    /// `complete`, `failed`, `stopped`, …
    pub status: String,
    /// The tools the last answer called (an expert's calls included), in order.
    pub tool_calls: Vec<CalledTool>,
    /// The sources it cited: each title, with its address in brackets where known.
    pub sources: Vec<String>,
    /// It offered the visitor a person.
    pub handed_over: bool,
    /// Every turn's model calls.
    pub cost_usd: f64,
    pub duration_ms: i64,
}

/// Longest wait for one answer, beyond the service's answer time limit.
const ANSWER_GRACE: Duration = Duration::from_secs(30);

impl Engine {
    /// Runs the visitor messages `turns` one after another against `agent` as a trial, and reads
    /// what the last answer did; the trial leaves nothing behind but its cost.
    pub async fn trial_answer(&self, agent: Arc<Agent>, turns: &[String]) -> Result<TrialAnswer, ChatError> {
        let token = visitors::new_token();
        let visitor = visitors::create(self.db(), &agent.id, &token, None, &Default::default(), self.now_ms()).await?;
        let outcome = self.trial_turns(agent, &visitor, turns).await;
        // Whatever happened, the trial's rows go (its answers are stored before this reads them).
        if let Err(e) = privacy::delete_person(self.db(), &visitor.id, self.now_ms()).await {
            tracing::warn!(error = %e, visitor = %visitor.id, "a trial's visitor could not be deleted");
        }
        outcome
    }

    async fn trial_turns(
        &self,
        agent: Arc<Agent>,
        visitor: &visitors::Visitor,
        turns: &[String],
    ) -> Result<TrialAnswer, ChatError> {
        let started_at = Instant::now();
        let mut at: Option<(String, String)> = None;
        for text in turns {
            let conversation = at.as_ref().map(|(c, _)| c.as_str());
            at = Some(self.trial_turn(agent.clone(), visitor, conversation, text).await?);
        }
        let (conversation_id, message_id) = at.unwrap_or_default();
        self.read_trial(&conversation_id, &message_id, started_at).await
    }

    /// One visitor message of a trial, answered and stored; the conversation's and the answer's
    /// ids.
    pub(super) async fn trial_turn(
        &self,
        agent: Arc<Agent>,
        visitor: &visitors::Visitor,
        conversation: Option<&str>,
        text: &str,
    ) -> Result<(String, String), ChatError> {
        let started = self
            .send(SendRequest {
                agent,
                visitor,
                conversation_id: conversation,
                text,
                client_message_id: None,
                attachments: &[],
                page_context: None,
                address: None,
                form: None,
                trial: true,
            })
            .await?;
        let limit = self.settings().spend.answer_time_limit + ANSWER_GRACE;
        // The stream ends with the answer's `message_end` (stored before it is sent).
        let mut events = started.events;
        if tokio::time::timeout(limit, async { while events.next().await.is_some() {} }).await.is_err() {
            tracing::warn!(conversation = %started.conversation_id, "a trial's answer did not end in time");
        }
        drop(events);
        // The turn's last writes (the end event, the slot) are queued before it lets go of the
        // conversation: wait for that, then for the writer.
        if let Some(lease) = self.hub().get(&started.conversation_id) {
            lease.wait_turn_released(Duration::from_secs(10)).await;
        }
        self.flush().await;
        Ok((started.conversation_id, started.message_id))
    }

    /// What the answer `message_id` of the trial did, from what was stored.
    pub(super) async fn read_trial(
        &self,
        conversation_id: &str,
        message_id: &str,
        started_at: Instant,
    ) -> Result<TrialAnswer, ChatError> {
        let answer = messages::list(self.db(), conversation_id)
            .await?
            .into_iter()
            .rev()
            .find(|m| m.id == message_id && m.role == Role::Assistant);
        let calls = tool_calls::of_message(self.db(), message_id).await?;
        let (text, status, blocks) = match answer {
            Some(m) => (m.content, m.status.as_str().to_owned(), m.blocks),
            None => (String::new(), "missing".to_owned(), Vec::new()),
        };
        let mut sources = Vec::new();
        let mut offered = false;
        for block in &blocks {
            match block {
                Block::Citations(c) => sources.extend(c.sources.iter().map(|s| match &s.url {
                    Some(url) => format!("{} ({url})", s.title),
                    None => s.title.clone(),
                })),
                Block::EscalationButton(_) => offered = true,
                _ => {}
            }
        }
        let handed_over = offered || calls.iter().any(|c| c.name == "escalate_to_human");
        let tool_calls = calls
            .into_iter()
            .map(|c| CalledTool { name: c.name, arguments: c.arguments, status: c.status.as_str().to_owned() })
            .collect();
        Ok(TrialAnswer {
            conversation_id: conversation_id.to_owned(),
            answer: text,
            status,
            tool_calls,
            sources,
            handed_over,
            cost_usd: usage::conversation_cost(self.db(), conversation_id).await?,
            duration_ms: i64::try_from(started_at.elapsed().as_millis()).unwrap_or(i64::MAX),
        })
    }
}
