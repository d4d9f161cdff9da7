//! One model call of a turn (the coordinator's, an expert's or a summary): room for it is held in
//! the budgets first, the agent's fallback model is tried once when the model is overloaded or
//! failing, every upstream attempt goes into the usage ledger, and the hold is settled with the
//! call's real cost, announced in a `usage` event.

use std::time::Instant;

use futures::StreamExt;
use parley_widget::protocol::{StreamCode, StreamEvent, Token, Usage};

use super::super::attachments;
use super::super::budget::{Budgets, Hold, LimitHit, Limits};
use super::super::pricing::Prices;
use super::super::provider::{AttemptLog, ChatModel, ModelEvent, ModelRequest, ProviderError};
use super::super::state_tag::StateFilter;
use super::super::tools::ToolContext;
use super::out::Out;
use super::{HopEnd, Stop};
use crate::server::store::usage::UsageRecord;

/// What a model call needs besides its request.
pub(super) struct Caller<'a> {
    pub(super) out: &'a Out,
    pub(super) ctx: &'a ToolContext,
    model: &'a dyn ChatModel,
    prices: &'a Prices,
    budgets: &'a Budgets,
}

impl<'a> Caller<'a> {
    pub(super) fn new(
        out: &'a Out,
        ctx: &'a ToolContext,
        model: &'a dyn ChatModel,
        prices: &'a Prices,
        budgets: &'a Budgets,
    ) -> Self {
        Caller { out, ctx, model, prices, budgets }
    }

    /// Holds budget room, then makes the call (falling back to the agent's fallback model when the
    /// model is overloaded or failing). Visible text goes out through `filter` as it comes.
    /// Without a filter the text is only collected (an expert's answer is not streamed).
    pub(super) async fn model_call(
        &self,
        request: ModelRequest,
        filter: Option<&mut StateFilter>,
        text: &mut String,
    ) -> Result<HopEnd, Stop> {
        let hold = self.hold(&request.model).await?;
        self.call(request, hold, filter, text).await
    }

    async fn hold(&self, model: &str) -> Result<Hold, Stop> {
        let agent = &self.ctx.agent;
        let limits = Limits {
            agent_id: &agent.id,
            budget_usd: agent.limits.budget_usd,
            daily_cap_usd: agent.limits.daily_cap_usd,
            floor_usd: self.prices.floor_usd(model),
            now_ms: self.ctx.clock.now_ms(),
        };
        match self.budgets.hold(&self.ctx.db, &self.out.lease, limits).await {
            Ok(Ok(hold)) => Ok(hold),
            Ok(Err(hit)) => {
                let (spent, limit, kind) = match hit {
                    LimitHit::Conversation { spent_usd, budget_usd } => (spent_usd, budget_usd, "conversation"),
                    LimitHit::AgentDaily { spent_usd, cap_usd } => (spent_usd, cap_usd, "agent daily"),
                };
                tracing::info!(conversation = %self.out.conversation_id, kind, spent, limit, "budget reached");
                Err(Stop::Limit(StreamCode::BudgetExceeded))
            }
            Err(e) => {
                tracing::error!(error = %e, "could not read today's spend");
                Err(Stop::Limit(StreamCode::InternalError))
            }
        }
    }

    /// Writes one upstream attempt to the ledger; returns its cost.
    fn record(&self, model: &str, outcome: &str, usage: Option<(u64, u64, u64)>, latency_ms: u64) -> f64 {
        let (input, output, cached) = usage.unwrap_or((0, 0, 0));
        let cost = self.prices.cost_usd(model, input, cached, output);
        let ctx = self.ctx;
        self.out.writer.usage(UsageRecord {
            agent_id: ctx.agent.id.clone(),
            conversation_id: Some(ctx.conversation_id.clone()),
            message_id: Some(ctx.message_id.clone()),
            provider: self.model.provider().to_owned(),
            model: model.to_owned(),
            outcome: outcome.to_owned(),
            input_tokens: input,
            output_tokens: output,
            cached_tokens: cached,
            cost_usd: cost,
            latency_ms,
            created_at: ctx.clock.now_ms(),
        });
        cost
    }

    /// One streaming model call: tokens go out as they come; tool calls are collected. Every
    /// attempt is written to the ledger; the hold is settled with the call's cost.
    async fn call(
        &self,
        mut request: ModelRequest,
        hold: Hold,
        mut filter: Option<&mut StateFilter>,
        text: &mut String,
    ) -> Result<HopEnd, Stop> {
        let out = self.out;
        let attempts = AttemptLog::default();
        let started = Instant::now();
        let mut result = self.model.stream(request.clone(), &attempts).await;
        if let Err(error) = &result
            && wants_fallback(error)
            && let Some(fallback) = self.ctx.agent.provider.fallback_model.as_deref().filter(|f| *f != request.model)
        {
            tracing::info!(code = error.code(), from = %request.model, to = fallback, "using the fallback model");
            request.model = fallback.to_owned();
            if !self.prices.lookup(fallback).is_some_and(|p| p.vision) {
                attachments::drop_images(&mut request.messages);
            }
            result = self.model.stream(request.clone(), &attempts).await;
        }
        let model_name = request.model;
        for attempt in attempts.take() {
            self.record(&attempt.model, attempt.outcome, None, attempt.latency_ms);
        }
        let mut stream = result.map_err(Stop::Provider)?;
        let mut calls = Vec::new();
        let mut usage = None;
        let mut finished = false;
        while let Some(item) = stream.next().await {
            match item {
                Ok(ModelEvent::Text(t)) => match filter.as_deref_mut() {
                    Some(filter) => {
                        let visible = filter.push(&t);
                        if !visible.is_empty() {
                            text.push_str(&visible);
                            out.emit(StreamEvent::Token(Token { text: visible }));
                        }
                    }
                    None => text.push_str(&t),
                },
                Ok(ModelEvent::ToolCall(call)) => calls.push(call),
                Ok(ModelEvent::Usage(u)) => usage = Some(u),
                Ok(ModelEvent::Finished(_)) => finished = true,
                Err(e) => {
                    let cost = self.record(
                        &model_name,
                        e.code(),
                        usage.map(|u| (u.input, u.output, u.cached)),
                        started.elapsed().as_millis() as u64,
                    );
                    hold.settle(cost);
                    return Err(Stop::Provider(e));
                }
            }
        }
        if !finished {
            self.record(&model_name, ProviderError::Truncated.code(), None, started.elapsed().as_millis() as u64);
            return Err(Stop::Provider(ProviderError::Truncated));
        }
        let u = usage.unwrap_or_default();
        let cost =
            self.record(&model_name, "ok", Some((u.input, u.output, u.cached)), started.elapsed().as_millis() as u64);
        let total = hold.settle(cost);
        out.emit(StreamEvent::Usage(Usage {
            model: model_name.clone(),
            input_tokens: u.input,
            output_tokens: u.output,
            cached_tokens: u.cached,
            cost_usd: cost,
            conversation_cost_usd: total,
        }));
        Ok(if calls.is_empty() { HopEnd::Done } else { HopEnd::Tools(calls) })
    }
}

/// Whether a failed call should be tried once more on the agent's fallback model.
fn wants_fallback(error: &ProviderError) -> bool {
    matches!(error, ProviderError::Server { .. } | ProviderError::Timeout(_) | ProviderError::Connect(_))
        || matches!(error, ProviderError::StreamError(m) if m.contains("overloaded"))
}
