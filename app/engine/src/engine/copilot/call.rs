//! One copilot model call: the agent's own model, room held first in the agent's daily cap and
//! the conversation's budget (the visitor's and the address's caps are theirs, not the
//! operator's), every attempt in the usage ledger as the conversation's spend without a message,
//! and the hold settled with the call's real cost (an estimate when the provider reports none or
//! the call breaks). Nothing reaches the visitor's stream.

use std::time::Instant;

use futures::StreamExt;

use super::CopilotError;
use crate::engine::Engine;
use crate::engine::budget::{Charge, Hold, LimitHit, Limits};
use crate::engine::context::message_tokens;
use crate::engine::pricing::estimate_tokens;
use crate::engine::provider::{AttemptLog, ModelEvent, ModelMessage, ModelRequest, ProviderError, TokenUsage};
use crate::store::agents::Agent;

/// What a call gave.
pub(super) struct Answer {
    pub(super) text: String,
    pub(super) model: String,
    pub(super) cost_usd: f64,
}

/// Tokens charged for one attempt: `(input, output, cached, estimated)`.
type Tokens = (u64, u64, u64, bool);

impl Engine {
    /// Calls the agent's model with `messages` (no tools) and collects its text.
    pub(super) async fn copilot_call(
        &self,
        agent: &Agent,
        conversation_id: &str,
        messages: Vec<ModelMessage>,
        max_tokens: u32,
    ) -> Result<Answer, CopilotError> {
        let request = ModelRequest {
            model: agent.provider.model.clone(),
            messages,
            tools: Vec::new(),
            max_tokens: Some(max_tokens),
        };
        let hold = self.copilot_hold(agent, conversation_id, &request).await?;
        let model = self.model_for(agent);
        let attempts = AttemptLog::default();
        let started = Instant::now();
        let opened = model.stream(request.clone(), &attempts).await;
        for attempt in attempts.take() {
            self.copilot_record(
                agent,
                conversation_id,
                &attempt.model,
                attempt.outcome,
                (0, 0, 0, false),
                attempt.latency_ms,
                None,
            );
        }
        let mut stream = opened.map_err(CopilotError::Provider)?;
        let mut text = String::new();
        let mut usage = None;
        let mut finished = false;
        let time_limit = self.settings().spend.answer_time_limit;
        let read = async {
            while let Some(item) = stream.next().await {
                match item? {
                    ModelEvent::Text(t) => text.push_str(&t),
                    ModelEvent::Usage(u) => usage = Some(u),
                    ModelEvent::Finished(_) => finished = true,
                    // No tools were offered: a call is not run.
                    ModelEvent::ToolCall(_) => {}
                }
            }
            Ok::<(), ProviderError>(())
        };
        let outcome = match tokio::time::timeout(time_limit, read).await {
            Ok(Ok(())) if finished => Ok(()),
            Ok(Ok(())) => Err(ProviderError::Truncated),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(ProviderError::Timeout("the answer's time limit")),
        };
        let tokens = charged(&request, &text, usage);
        let latency_ms = started.elapsed().as_millis() as u64;
        let code = outcome.as_ref().err().map(ProviderError::code).unwrap_or("ok");
        let cost = self.copilot_record(agent, conversation_id, &request.model, code, tokens, latency_ms, Some(&hold));
        hold.settle(cost);
        // The operator is told the cost the ledger holds (and a next call's hold reads it).
        self.0.writer.flush().await;
        outcome.map_err(CopilotError::Provider)?;
        Ok(Answer { text: text.trim().to_owned(), model: request.model, cost_usd: cost })
    }

    async fn copilot_hold(
        &self,
        agent: &Agent,
        conversation_id: &str,
        request: &ModelRequest,
    ) -> Result<Hold, CopilotError> {
        let prices = self.prices();
        let input = request.messages.iter().map(message_tokens).sum::<usize>() as u64;
        let output = u64::from(request.max_tokens.unwrap_or(1024));
        let worst = prices.cost_usd(&request.model, input, 0, output).max(prices.floor_usd(&request.model));
        let lease = self.hub().lease(conversation_id, false).await?;
        let limits = Limits {
            agent_id: &agent.id,
            visitor_id: "",
            budget_usd: agent.limits.budget_usd,
            daily_cap_usd: agent.limits.daily_cap_usd.or(self.settings().spend.agent_daily_cap_usd),
            visitor_daily_cap_usd: None,
            address: "",
            address_daily_cap_usd: None,
            floor_usd: worst,
            now_ms: self.now_ms(),
        };
        match self.budgets().hold(self.db(), &lease, limits).await? {
            Ok(hold) => Ok(hold),
            Err(hit) => {
                let why = match hit {
                    LimitHit::Conversation { spent_usd, budget_usd } => {
                        format!("this conversation has spent ${spent_usd:.4} of its ${budget_usd:.2} budget")
                    }
                    LimitHit::AgentDaily { spent_usd, cap_usd } => {
                        format!("the agent has spent ${spent_usd:.4} of its ${cap_usd:.2} daily cap")
                    }
                    // Not asked for: the operator's calls do not count against the visitor.
                    LimitHit::VisitorDaily { .. } | LimitHit::AddressDaily { .. } => "a daily cap is reached".into(),
                };
                metrics::counter!("parley_budget_refusals_total", "agent" => agent.public_key.clone(), "limit" => "copilot")
                    .increment(1);
                Err(CopilotError::Budget(why))
            }
        }
    }

    /// Writes one attempt to the ledger (the conversation's, no message, no visitor); its cost.
    #[allow(clippy::too_many_arguments)]
    fn copilot_record(
        &self,
        agent: &Agent,
        conversation_id: &str,
        model: &str,
        outcome: &str,
        (input, output, cached, estimated): Tokens,
        latency_ms: u64,
        hold: Option<&Hold>,
    ) -> f64 {
        let cost = self.prices().cost_usd(model, input, cached, output);
        let row = Charge {
            agent_id: &agent.id,
            agent_key: &agent.public_key,
            conversation_id: Some(conversation_id),
            message_id: None,
            visitor_id: None,
            provider: self.model_for(agent).provider(),
            model,
            outcome,
            input_tokens: input,
            output_tokens: output,
            cached_tokens: cached,
            estimated,
            cost_usd: cost,
            latency_ms,
            at: self.now_ms(),
        }
        .ledger_row(hold);
        self.0.writer.usage(row);
        cost
    }
}

/// The provider's own count, else an estimate from the text sent and received.
fn charged(request: &ModelRequest, produced: &str, usage: Option<TokenUsage>) -> Tokens {
    match usage {
        Some(u) if u.input > 0 || u.output > 0 => (u.input, u.output, u.cached, false),
        _ => {
            let input = request.messages.iter().map(message_tokens).sum::<usize>() as u64;
            (input, estimate_tokens(produced), 0, true)
        }
    }
}
