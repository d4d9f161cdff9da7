//! The operator's copilot (issue 43, part 7), through the agent's own model and budget
//! ([`call`]): a summary of the conversation for the person it is handed to (written on its own
//! when a lead hands it over or someone claims it, stored, shown at the top of its page); a reply
//! drafted from the agent's knowledge with its sources, which the operator edits before sending
//! (never sent by itself); and "improve", "shorten", "translate to the visitor's language" on the
//! operator's own draft. With the offline demo model each of these works too, as a plain extract
//! that says it is one (see `provider::demo::copilot` and [`Assist::note`]).

mod call;
pub mod prompt;

use parley_protocol::{Citation, Role};
use serde_json::{Value, json};

use super::Engine;
use super::console::ConsoleEvent;
use super::knowledge::SearchQuery;
use super::provider::ProviderError;
use crate::store::agents::{self, Agent, ProviderKind};
use crate::store::copilot::{self, HandoffSummary};
use crate::store::{DbError, conversations, leads, messages};
pub use prompt::Rewrite;

/// Characters of an operator's draft at most (the reply box's limit).
pub const MAX_DRAFT_CHARS: usize = 4_000;
/// `max_tokens` of each kind of call.
const SUMMARY_TOKENS: u32 = 500;
const DRAFT_TOKENS: u32 = 700;

/// Why the copilot could not help.
#[derive(Debug, thiserror::Error)]
pub enum CopilotError {
    #[error("no such conversation")]
    NotFound,
    #[error("{0}")]
    Invalid(String),
    /// A budget or daily cap is reached: the call was not made.
    #[error("the copilot is not available: {0}")]
    Budget(String),
    #[error("the model could not answer: {0}")]
    Provider(ProviderError),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// A draft for the reply box (a suggestion or a rewrite).
#[derive(Clone, Debug, PartialEq)]
pub struct Assist {
    pub text: String,
    /// The knowledge the draft draws on (a suggestion's), numbered as in the text.
    pub citations: Vec<Citation>,
    pub model: String,
    pub cost_usd: f64,
    /// What the offline demo model did instead (`None` with a real model).
    pub note: Option<String>,
}

/// What the offline demo model does for each task (shown with its result).
pub fn demo_note(task: &str) -> &'static str {
    match task {
        "summary" => "Written by the offline demo model: an extract of the conversation, not a real summary.",
        "suggest" => "Offline demo model: the best-matching passage of the knowledge base, not a written reply.",
        "improve" => "Offline demo model: it only tidies spaces and capitals.",
        "shorten" => "Offline demo model: it keeps the first sentence.",
        "translate" => "Offline demo model: it cannot translate; your draft is unchanged.",
        _ => "Offline demo model.",
    }
}

impl Engine {
    /// The conversation and its agent, or not found.
    async fn copilot_agent(&self, conversation_id: &str) -> Result<Agent, CopilotError> {
        let conv = conversations::by_id(self.db(), conversation_id).await?.ok_or(CopilotError::NotFound)?;
        agents::by_id(self.db(), &conv.agent_id).await?.ok_or(CopilotError::NotFound)
    }

    /// Writes (again) and stores the conversation's hand-over summary.
    pub async fn copilot_summary(&self, conversation_id: &str) -> Result<HandoffSummary, CopilotError> {
        let agent = self.copilot_agent(conversation_id).await?;
        let stored = messages::list(self.db(), conversation_id).await?;
        if !stored.iter().any(|m| m.role == Role::Visitor) {
            return Err(CopilotError::Invalid("the visitor has not written anything yet".into()));
        }
        let lead = leads::of_conversation(self.db(), conversation_id)
            .await?
            .pop()
            .map(|l| json!({"name": l.name, "message": l.message}));
        let request = prompt::summary(prompt::transcript(&stored), lead);
        let answer = self.copilot_call(&agent, conversation_id, request, SUMMARY_TOKENS).await?;
        if answer.text.is_empty() {
            return Err(CopilotError::Provider(ProviderError::Truncated));
        }
        let model = if agent.provider.kind == ProviderKind::Demo { "demo".to_owned() } else { answer.model };
        let summary = HandoffSummary { text: answer.text, model, created_at: self.now_ms() };
        copilot::set_summary(self.db(), conversation_id, &summary).await?;
        self.console(ConsoleEvent::new(conversation_id, &agent.id, "summary"));
        Ok(summary)
    }

    /// Writes the summary in the background when the conversation has none or messages came
    /// after it (a hand-over: a lead, a claim). A refusal (budget) or a model fault is logged;
    /// the operator can ask again from the conversation's page.
    pub fn summarise_on_handoff(&self, conversation_id: &str) {
        let (engine, id) = (self.clone(), conversation_id.to_owned());
        tokio::spawn(async move {
            match copilot::summary_is_stale(engine.db(), &id).await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => return tracing::warn!(conversation = %id, error = %e, "reading the hand-over summary"),
            }
            match engine.copilot_summary(&id).await {
                Ok(_) => {}
                Err(e @ (CopilotError::Budget(_) | CopilotError::Invalid(_))) => {
                    tracing::info!(conversation = %id, reason = %e, "no hand-over summary")
                }
                Err(e) => tracing::warn!(conversation = %id, error = %e, "writing the hand-over summary failed"),
            }
        });
    }

    /// A reply drafted from the agent's knowledge for the visitor's last message.
    pub async fn copilot_suggest(&self, conversation_id: &str) -> Result<Assist, CopilotError> {
        let agent = self.copilot_agent(conversation_id).await?;
        let stored = messages::list(self.db(), conversation_id).await?;
        let Some(question) = stored.iter().rev().find(|m| m.role == Role::Visitor && !m.content.trim().is_empty())
        else {
            return Err(CopilotError::Invalid("the visitor has not written anything yet".into()));
        };
        let query = prompt::clip(&question.content, 500);
        let search = SearchQuery {
            agent_id: &agent.id,
            knowledge_base_ids: None,
            text: &query,
            category: None,
            kind: Some("article"),
            limit: 3,
        };
        let hits = match self.services().knowledge.search(&search).await {
            Ok(hits) => hits,
            Err(e) => {
                tracing::warn!(error = %e, "the copilot drafts without knowledge");
                Vec::new()
            }
        };
        let sources: Vec<Value> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| json!({"n": i + 1, "title": h.title, "url": h.source_url, "text": prompt::clip(&h.text, 1_200)}))
            .collect();
        let citations = hits
            .iter()
            .map(|h| Citation {
                title: h.title.clone(),
                url: h.source_url.clone(),
                article_id: Some(h.article_id.clone()),
            })
            .collect();
        let request = prompt::suggest(prompt::transcript(&stored), Value::Array(sources));
        let answer = self.copilot_call(&agent, conversation_id, request, DRAFT_TOKENS).await?;
        Ok(self.assist(&agent, "suggest", answer, citations))
    }

    /// The operator's draft improved, shortened or translated into the visitor's language.
    pub async fn copilot_rewrite(
        &self,
        conversation_id: &str,
        draft: &str,
        how: Rewrite,
    ) -> Result<Assist, CopilotError> {
        let draft = draft.trim();
        if draft.is_empty() {
            return Err(CopilotError::Invalid("write a draft first".into()));
        }
        if draft.chars().count() > MAX_DRAFT_CHARS {
            return Err(CopilotError::Invalid(format!("a draft is {MAX_DRAFT_CHARS} characters at most")));
        }
        let agent = self.copilot_agent(conversation_id).await?;
        let stored = messages::list(self.db(), conversation_id).await?;
        let visitor_words: Vec<String> = stored
            .iter()
            .rev()
            .filter(|m| m.role == Role::Visitor && !m.content.trim().is_empty())
            .take(3)
            .map(|m| prompt::clip(&m.content, 500))
            .collect();
        let request = prompt::rewrite(how, draft, visitor_words);
        let answer = self.copilot_call(&agent, conversation_id, request, DRAFT_TOKENS).await?;
        Ok(self.assist(&agent, how.as_str(), answer, Vec::new()))
    }

    fn assist(&self, agent: &Agent, task: &str, answer: call::Answer, citations: Vec<Citation>) -> Assist {
        let demo = agent.provider.kind == ProviderKind::Demo;
        Assist {
            text: answer.text,
            citations,
            model: answer.model,
            cost_usd: answer.cost_usd,
            note: demo.then(|| demo_note(task).to_owned()),
        }
    }
}
