//! One model call of a turn (the coordinator's, an expert's or a summary): room for it is held in
//! the budgets first, the agent's fallback model is tried once when the model is overloaded or
//! failing, every upstream attempt goes into the usage ledger, and the hold is settled with the
//! call's real cost, announced in a `usage` event. A provider that reports no usage, a stream
//! that breaks, and a call stopped half-way (the visitor's stop, the answer's time limit) are
//! charged an estimate from the text sent and received: what was generated was paid for.

use std::time::Instant;

mod retry;
mod spend;

use futures::StreamExt;
use parley_protocol::{StreamEvent, Token, Usage};

use super::super::attachments;
use super::super::budget::{Budgets, Charge, Hold};
use super::super::canary::Visible;
use super::super::pricing::{Prices, estimate_tokens};
use super::super::provider::{
    AttemptLog, ChatModel, FinishReason, ModelEvent, ModelMessage, ModelRequest, ModelStream, ProviderError,
};
use super::super::tools::ToolContext;
use super::out::Out;
use super::{HopEnd, Stop};
use retry::{rejects_tools, toolless, wants_fallback};

/// `max_tokens` assumed for a call that sets none (seed 003's default).
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The daily caps a turn's calls count against (the agent's own or the server's default).
#[derive(Clone, Debug, Default)]
pub(super) struct DayCaps {
    pub(super) agent_usd: Option<f64>,
    pub(super) visitor_usd: Option<f64>,
    /// The cap of the visitor's address (IPv6 by /64), and the address (empty: unknown).
    pub(super) address_usd: Option<f64>,
    pub(super) address: String,
}

/// What a model call needs besides its request.
pub(super) struct Caller<'a> {
    pub(super) out: &'a Out,
    pub(super) ctx: &'a ToolContext,
    model: &'a dyn ChatModel,
    prices: &'a Prices,
    budgets: &'a Budgets,
    caps: DayCaps,
    fallback: Option<&'a str>,
}

impl<'a> Caller<'a> {
    pub(super) fn new(
        out: &'a Out,
        ctx: &'a ToolContext,
        model: &'a dyn ChatModel,
        prices: &'a Prices,
        budgets: &'a Budgets,
        caps: DayCaps,
        fallback: Option<&'a str>,
    ) -> Self {
        Caller { out, ctx, model, prices, budgets, caps, fallback }
    }

    /// Holds budget room, then makes the call (falling back to the agent's fallback model when the
    /// model is overloaded or failing). Visible text goes out through `filter` as it comes.
    /// Without a filter the text is only collected (an expert's answer is not streamed).
    pub(super) async fn model_call(
        &self,
        request: ModelRequest,
        filter: Option<&mut Visible>,
        text: &mut String,
    ) -> Result<HopEnd, Stop> {
        let hold = self.hold(&request).await?;
        let model = request.model.clone();
        let result = self.call(request, hold, filter, text).await;
        if let Err(Stop::Provider(e)) = &result
            && e.is_quota()
        {
            let detail = format!("{} refused a call of {model}: {e}", self.ctx.agent.provider.kind.as_str());
            self.alert(crate::store::alerts::QUOTA_EXHAUSTED, detail, serde_json::json!({"model": model}));
        }
        result
    }

    /// Writes one upstream attempt to the ledger; returns its cost.
    /// With `hold`, the call settles it: with shared daily totals (replicas on PostgreSQL) the
    /// ledger row carries the settlement, so both land in one transaction.
    fn record(&self, model: &str, outcome: &str, usage: Spent, latency_ms: u64, hold: Option<&Hold>) -> f64 {
        let (input, output, cached, written, estimated) = match usage {
            Spent::Nothing => (0, 0, 0, 0, false),
            Spent::Reported(u) => (u.input, u.output, u.cached, u.cache_written, false),
            Spent::Estimated { input, output } => (input, output, 0, 0, true),
        };
        let cost = self.prices.cost_with_cache_writes(model, input, cached, written, output);
        let ctx = self.ctx;
        let row = Charge {
            agent_id: &ctx.agent.id,
            agent_key: &ctx.agent.public_key,
            conversation_id: Some(&ctx.conversation_id),
            message_id: Some(&ctx.message_id),
            visitor_id: Some(&ctx.visitor_id),
            provider: self.model.provider(),
            model,
            outcome,
            input_tokens: input,
            output_tokens: output,
            cached_tokens: cached,
            estimated,
            cost_usd: cost,
            latency_ms,
            at: ctx.clock.now_ms(),
        }
        .ledger_row(hold);
        self.out.writer.usage(row);
        cost
    }

    /// The fallback model (the agent's own or its provider's default), unless `model` is it.
    fn fallback_for(&self, model: &str) -> Option<&str> {
        self.fallback.filter(|f| *f != model)
    }

    /// The request goes to the fallback model (without images it cannot read).
    fn switch_to_fallback(&self, request: &mut ModelRequest, fallback: &str, code: &str) {
        tracing::info!(code, from = %request.model, to = fallback, "using the fallback model");
        request.model = fallback.to_owned();
        if !self.prices.lookup(fallback).is_some_and(|p| p.vision) {
            attachments::drop_images(&mut request.messages);
        }
    }

    /// Opens the model's stream: the fallback model when the model is overloaded, failing or
    /// out of rate-limit retries; once more without tools when the model does not take them.
    async fn open(&self, request: &mut ModelRequest, attempts: &AttemptLog) -> Result<ModelStream, ProviderError> {
        let agent_id = &self.ctx.agent.id;
        if !request.tools.is_empty() && toolless::known(agent_id, &request.model) {
            request.tools.clear();
        }
        let mut result = self.model.stream(request.clone(), attempts).await;
        if let Err(error) = &result
            && wants_fallback(error)
            && let Some(fallback) = self.fallback_for(&request.model)
        {
            self.switch_to_fallback(request, fallback, error.code());
            // A fallback model known not to take tools gets none.
            if toolless::known(agent_id, &request.model) {
                request.tools.clear();
            }
            result = self.model.stream(request.clone(), attempts).await;
        }
        // A model that does not take tools (Ollama's "does not support tools") answers alone,
        // and is not offered tools again for a while.
        if let Err(error) = &result
            && !request.tools.is_empty()
            && rejects_tools(error)
        {
            tracing::warn!(model = %request.model, "the model does not take tools; answering without them");
            toolless::remember(agent_id, &request.model);
            request.tools.clear();
            result = self.model.stream(request.clone(), attempts).await;
        }
        result
    }

    /// One streaming model call: tokens go out as they come; tool calls are collected. Every
    /// attempt is written to the ledger; the hold is settled with the call's cost.
    async fn call(
        &self,
        mut request: ModelRequest,
        hold: Hold,
        mut filter: Option<&mut Visible>,
        text: &mut String,
    ) -> Result<HopEnd, Stop> {
        let out = self.out;
        let mut hold = Some(hold);
        'attempt: loop {
            let attempts = AttemptLog::default();
            let started = Instant::now();
            let result = self.open(&mut request, &attempts).await;
            for attempt in attempts.take() {
                self.record(&attempt.model, attempt.outcome, Spent::Nothing, attempt.latency_ms, None);
            }
            let mut stream = result.map_err(Stop::Provider)?;
            // From here the call is paid for, however it ends (dropped included: see `Meter`).
            let mut meter =
                Meter { caller: self, request: request.clone(), produced: String::new(), started, hold: hold.take() };
            let mut calls = Vec::new();
            let mut usage = None;
            let mut finished = None;
            while let Some(item) = stream.next().await {
                match item {
                    Ok(ModelEvent::Text(t)) => {
                        meter.produced.push_str(&t);
                        match filter.as_deref_mut() {
                            Some(filter) => {
                                // The canary: the call ends here, settled as stopped (`Meter`).
                                let Ok(visible) = filter.push(&t) else { return Err(Stop::Canary) };
                                if !visible.is_empty() {
                                    text.push_str(&visible);
                                    out.emit(StreamEvent::Token(Token { text: visible }));
                                    // A stalled database slows the answer instead of growing memory.
                                    out.writer.room().await;
                                }
                            }
                            None => text.push_str(&t),
                        }
                    }
                    Ok(ModelEvent::ToolCall(call)) => {
                        meter.produced.push_str(&call.name);
                        meter.produced.push_str(&call.arguments);
                        calls.push(call);
                    }
                    Ok(ModelEvent::Usage(u)) => usage = Some(u),
                    Ok(ModelEvent::Finished(reason)) => finished = Some(reason),
                    Err(e) => {
                        // Overloaded inside a 200 stream before anything was written (Anthropic's
                        // usual `overloaded_error`): nothing generated, nothing paid; the fallback
                        // model answers instead.
                        if meter.produced.is_empty()
                            && wants_fallback(&e)
                            && let Some(fallback) = self.fallback_for(&request.model)
                        {
                            let latency_ms = started.elapsed().as_millis() as u64;
                            self.record(&request.model, e.code(), Spent::Nothing, latency_ms, None);
                            hold = meter.hold.take();
                            self.switch_to_fallback(&mut request, fallback, e.code());
                            continue 'attempt;
                        }
                        meter.settle(e.code(), usage);
                        return Err(Stop::Provider(e));
                    }
                }
            }
            let Some(reason) = finished else {
                meter.settle(ProviderError::Truncated.code(), usage);
                return Err(Stop::Provider(ProviderError::Truncated));
            };
            if reason == FinishReason::Length && !calls.is_empty() {
                // The model ran out of tokens while writing a call: its arguments are cut short,
                // so nothing is run; the answer ends with what it said.
                tracing::warn!(model = %meter.request.model, calls = calls.len(), "tool call cut short by the token limit; not run");
                calls.clear();
            }
            let (spent, cost, total) = meter.settle("ok", usage);
            let (input, output, cached) = match spent {
                Spent::Reported(u) => (u.input, u.output, u.cached),
                Spent::Estimated { input, output } => (input, output, 0),
                Spent::Nothing => (0, 0, 0),
            };
            out.emit(StreamEvent::Usage(Usage {
                model: meter.request.model.clone(),
                input_tokens: input,
                output_tokens: output,
                cached_tokens: cached,
                cost_usd: cost,
                conversation_cost_usd: total,
            }));
            return Ok(if calls.is_empty() { HopEnd::Done } else { HopEnd::Tools(calls) });
        }
    }
}

/// The tokens of one attempt as the ledger gets them.
#[derive(Clone, Copy, Debug)]
enum Spent {
    /// The attempt failed before any answer (nothing generated).
    Nothing,
    /// The provider's own count.
    Reported(super::super::provider::TokenUsage),
    /// The provider sent none: estimated from the text sent and received.
    Estimated { input: u64, output: u64 },
}

/// A call under way: what it was sent and has produced, and its budget hold. Settled once —
/// by the call's end, or when dropped half-way (the visitor's stop, the time limit), then with
/// an estimate and the outcome `stopped`.
struct Meter<'c, 'a> {
    caller: &'c Caller<'a>,
    /// What was sent; its tokens are estimated only if the provider never says.
    request: ModelRequest,
    produced: String,
    started: Instant,
    hold: Option<Hold>,
}

impl Meter<'_, '_> {
    /// Records the attempt and settles the hold; returns what was charged, its cost and the
    /// conversation's total.
    fn settle(&mut self, outcome: &str, usage: Option<super::super::provider::TokenUsage>) -> (Spent, f64, f64) {
        let spent = match usage {
            Some(u) if u.input > 0 || u.output > 0 => Spent::Reported(u),
            _ => Spent::Estimated { input: estimate_input(&self.request), output: estimate_tokens(&self.produced) },
        };
        let latency_ms = self.started.elapsed().as_millis() as u64;
        let cost = self.caller.record(&self.request.model, outcome, spent, latency_ms, self.hold.as_ref());
        let total = self.hold.take().map(|h| h.settle(cost)).unwrap_or_default();
        (spent, cost, total)
    }
}

impl Drop for Meter<'_, '_> {
    fn drop(&mut self) {
        if self.hold.is_some() {
            self.settle("stopped", None);
        }
    }
}

/// Tokens a request is likely to be: its texts, tool calls and tool descriptions, and about a
/// thousand per image (a high-detail image is 765 to 1,105 tokens at OpenAI).
fn estimate_input(request: &ModelRequest) -> u64 {
    const PER_IMAGE: u64 = 1_000;
    let messages: u64 = request
        .messages
        .iter()
        .map(|m| match m {
            ModelMessage::System(t) | ModelMessage::User(t) | ModelMessage::Tool { content: t, .. } => {
                estimate_tokens(t)
            }
            ModelMessage::UserImages { text, images } => estimate_tokens(text) + PER_IMAGE * images.len() as u64,
            ModelMessage::Assistant { content, tool_calls } => {
                estimate_tokens(content)
                    + tool_calls.iter().map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments)).sum::<u64>()
            }
        })
        .sum();
    let tools: u64 = request
        .tools
        .iter()
        .map(|t| {
            estimate_tokens(&t.name) + estimate_tokens(&t.description) + estimate_tokens(&t.parameters.to_string())
        })
        .sum();
    messages + tools
}
