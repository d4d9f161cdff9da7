//! The turn loop: one visitor message in, one streamed assistant answer out.
//!
//! No tools → exactly one streaming model call. With tools → the model is called with the tools,
//! streaming: text it writes goes to the visitor at once; the tool calls it makes are validated and
//! run concurrently with a timeout, announced as `tool_call` events, their blocks sent as `block`
//! events, their results appended as tool messages, and the model is called again, up to the
//! agent's `max_turns` tool hops; after that the answer is requested once without tools, and a
//! model that still wants tools ends the turn with `MAX_TURNS_REACHED`.
//!
//! Guards (seed 003): before every model call room for it is held in the conversation's budget
//! and the agent's daily cap (`BUDGET_EXCEEDED` when there is none); the visitor's stop ends the
//! turn at once (`USER_ABORTED`, the partial answer kept as `stopped`). A turn ended by a limit
//! says so politely and offers the hand-off to a person. An overloaded or failing model is
//! replaced by the agent's fallback model. The `<consulting_state>` tag a coordinator appends is
//! kept out of the visible text, stored on the conversation and sent as `state_update`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use parley_widget::protocol::{
    AgentProgress, Block, BlockEvent, ErrorEvent, MessageEnd, MessageStatus, StateUpdate, StreamEvent, Token, ToolCall,
    ToolCallStatus, Usage,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::budget::{Budgets, Hold, LimitHit, Limits};
use super::context::{self, Compaction};
use super::experts::{self, Expert, INVOKE};
use super::hub::Lease;
use super::pricing::Prices;
use super::provider::{AttemptLog, ChatModel, ModelEvent, ModelMessage, ModelRequest, ModelToolCall, ProviderError};
use super::state_tag::StateFilter;
use super::tools::escalate_to_human::escalation_block;
use super::tools::registry::AgentTools;
use super::tools::{ToolContext, ToolError, ToolOutput};
use super::writer::Writer;
use crate::server::store::batch::FinishedMessage;
use crate::server::store::conversations;
use crate::server::store::tool_calls::ToolCallRecord;
use crate::server::store::usage::UsageRecord;

/// Limits of the loop.
#[derive(Clone, Debug)]
pub struct TurnLimits {
    pub max_hops: u32,
    pub tool_timeout: Duration,
    pub max_tokens: Option<u32>,
}

/// Everything one turn needs.
pub struct Turn {
    pub lease: Lease,
    pub writer: Writer,
    pub model: Arc<dyn ChatModel>,
    pub model_name: String,
    pub tools: AgentTools,
    pub tool_ctx: ToolContext,
    /// The model's context: instructions, earlier messages, the visitor's new message.
    pub messages: Vec<ModelMessage>,
    pub limits: TurnLimits,
    pub cancel: CancellationToken,
    /// The visitor writes Chinese: errors are said in Chinese.
    pub chinese: bool,
    pub prices: Prices,
    pub budgets: Budgets,
    /// A coordinator's experts (empty for other agents).
    pub experts: Arc<Vec<Expert>>,
    /// Older turns to summarise before answering.
    pub compaction: Option<Compaction>,
}

/// Sends events of the assistant message to the channel and the writer.
struct Out {
    lease: Lease,
    writer: Writer,
    conversation_id: Arc<str>,
    message_id: Arc<str>,
}

impl Out {
    fn emit(&self, event: StreamEvent) {
        let frame = self.lease.emit(event);
        self.writer.event(&self.conversation_id, frame);
    }
}

/// Why a turn ended early.
pub(super) enum Stop {
    /// The visitor stopped it.
    Aborted,
    /// The model failed.
    Provider(ProviderError),
    /// A guard: `MAX_TURNS_REACHED`, `BUDGET_EXCEEDED`, or an internal fault.
    Limit(&'static str),
}

pub(super) enum HopEnd {
    /// The model wants these tools run.
    Tools(Vec<ModelToolCall>),
    /// The answer is complete.
    Done,
}

impl Turn {
    /// Runs the turn to its end; never panics on provider or tool faults.
    pub async fn run(self) {
        let Turn {
            lease,
            writer,
            model,
            model_name,
            tools,
            tool_ctx,
            mut messages,
            limits,
            cancel,
            chinese,
            prices,
            budgets,
            experts,
            compaction,
        } = self;
        let out = Out {
            lease,
            writer,
            conversation_id: Arc::from(tool_ctx.conversation_id.as_str()),
            message_id: Arc::from(tool_ctx.message_id.as_str()),
        };
        let call = Caller { out: &out, ctx: &tool_ctx, model: model.as_ref(), prices: &prices, budgets: &budgets };
        let mut filter = StateFilter::default();
        let mut text = String::new();
        let mut blocks: Vec<Block> = Vec::new();
        let mut hop: u32 = 0;

        let stop: Option<Stop> = 'turn: {
            if let Some(compaction) = compaction {
                match compact(&call, &model_name, &compaction, &cancel).await {
                    Ok(Some(summary)) => context::apply(&mut messages, &compaction, &summary),
                    // The summary failed: answer from the turns as they are.
                    Ok(None) => {}
                    Err(stop) => break 'turn Some(stop),
                }
            }
            loop {
                let offer_tools = !(tools.is_empty() && experts.is_empty()) && hop < limits.max_hops;
                let request = ModelRequest {
                    model: model_name.clone(),
                    messages: messages.clone(),
                    tools: if offer_tools { tool_specs(&tools, &experts) } else { Vec::new() },
                    max_tokens: limits.max_tokens,
                };
                let mut hop_text = String::new();
                let outcome = tokio::select! {
                    _ = cancel.cancelled() => Err(Stop::Aborted),
                    r = call.model_call(request, Some(&mut filter), &mut hop_text) => r,
                };
                // What the filter still held is text once the call is over (or stopped).
                let rest = filter.finish();
                if !rest.is_empty() {
                    out.emit(StreamEvent::Token(Token { text: rest.clone() }));
                    hop_text.push_str(&rest);
                }
                text.push_str(&hop_text);
                match outcome {
                    Err(stop) => break Some(stop),
                    Ok(HopEnd::Done) => break None,
                    Ok(HopEnd::Tools(calls)) if !offer_tools => {
                        // Even after the last hop, with no tools offered, the model wants more.
                        tracing::info!(conversation = %out.conversation_id, calls = calls.len(), "tool hops used up");
                        break Some(Stop::Limit("MAX_TURNS_REACHED"));
                    }
                    Ok(HopEnd::Tools(calls)) => {
                        hop += 1;
                        messages.push(ModelMessage::Assistant { content: hop_text, tool_calls: calls.clone() });
                        let done = tokio::select! {
                            _ = cancel.cancelled() => None,
                            results = run_tools(&call, &tools, &experts, &model_name, &calls, hop, limits.tool_timeout) => Some(results),
                        };
                        let Some(results) = done else {
                            break Some(Stop::Aborted);
                        };
                        for (call, result) in calls.iter().zip(results) {
                            let content = match result {
                                Ok(output) => {
                                    for block in output.blocks {
                                        out.emit(StreamEvent::Block(BlockEvent {
                                            message_id: out.message_id.to_string(),
                                            block: block.clone(),
                                        }));
                                        blocks.push(block);
                                    }
                                    output.result.to_string()
                                }
                                Err(e) => json!({"ok": false, "error": e.to_string()}).to_string(),
                            };
                            messages.push(ModelMessage::Tool { call_id: call.id.clone(), content });
                        }
                    }
                }
            }
        };

        let status = match stop {
            None => MessageStatus::Complete,
            Some(Stop::Aborted) => {
                out.emit(StreamEvent::Error(ErrorEvent {
                    code: "USER_ABORTED".into(),
                    message: if chinese { "已停止。" } else { "Stopped." }.into(),
                }));
                MessageStatus::Stopped
            }
            Some(Stop::Provider(error)) => {
                tracing::warn!(conversation = %out.conversation_id, code = error.code(), error = %error, "model call failed");
                let event = friendly_error(&error, chinese);
                if text.is_empty() {
                    text = event.message.clone();
                }
                out.emit(StreamEvent::Error(event));
                MessageStatus::Failed
            }
            Some(Stop::Limit(code)) => {
                let event = limit_error(code, chinese);
                if !text.trim().is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(&event.message);
                out.emit(StreamEvent::Error(event));
                // Instead of more answers: a person.
                let block = escalation_block(chinese, Some(code.to_owned()));
                out.emit(StreamEvent::Block(BlockEvent {
                    message_id: out.message_id.to_string(),
                    block: block.clone(),
                }));
                blocks.push(block);
                MessageStatus::Failed
            }
        };

        if let Some(state) = filter.take_state() {
            out.emit(StreamEvent::StateUpdate(StateUpdate { state: state.clone() }));
            if let Err(e) = conversations::set_consulting_state(&tool_ctx.db, &tool_ctx.conversation_id, &state).await {
                tracing::warn!(conversation = %out.conversation_id, error = %e, "could not store the consulting state");
            }
        }

        if status == MessageStatus::Complete && text.is_empty() && blocks.is_empty() {
            let fallback = if chinese {
                "抱歉，我暂时无法回答这个问题。"
            } else {
                "Sorry, I don't have an answer to that."
            };
            out.emit(StreamEvent::Token(Token { text: fallback.to_owned() }));
            text.push_str(fallback);
        }

        // `message_end` means "stored": the answer is written before it is announced, and the
        // announcement itself before the turn lets go of the conversation.
        out.writer.finish(FinishedMessage {
            conversation_id: out.conversation_id.to_string(),
            message_id: out.message_id.to_string(),
            content: text,
            blocks,
            status,
            at: tool_ctx.clock.now_ms(),
        });
        if !out.writer.flush().await {
            tracing::error!(conversation = %out.conversation_id, "the answer could not be stored");
        }
        out.lease.mark_finishing();
        out.emit(StreamEvent::MessageEnd(MessageEnd { message_id: out.message_id.to_string(), status }));
        out.lease.end_turn();
        // The channel stays until `message_end` is stored too.
        out.writer.release(out.lease);
    }
}

/// Summarises older turns (a model call like any: held, in the ledger, with a `usage` event) and
/// stores the summary. `Ok(None)` when no summary came; `Err` when the turn must end.
async fn compact(
    call: &Caller<'_>,
    model_name: &str,
    compaction: &Compaction,
    cancel: &CancellationToken,
) -> Result<Option<String>, Stop> {
    let request = ModelRequest {
        model: model_name.to_owned(),
        messages: compaction.request.clone(),
        tools: Vec::new(),
        max_tokens: Some(600),
    };
    let mut summary = String::new();
    let outcome = tokio::select! {
        _ = cancel.cancelled() => Err(Stop::Aborted),
        r = call.model_call(request, None, &mut summary) => r,
    };
    match outcome {
        Ok(_) if !summary.trim().is_empty() => {
            let summary = summary.trim().to_owned();
            let ctx = call.ctx;
            if let Err(e) = conversations::set_summary(&ctx.db, &ctx.conversation_id, &summary, compaction.until).await
            {
                tracing::warn!(conversation = %ctx.conversation_id, error = %e, "could not store the summary");
            }
            Ok(Some(summary))
        }
        Ok(_) => Ok(None),
        Err(Stop::Provider(e)) => {
            tracing::warn!(code = e.code(), "summarising older turns failed");
            Ok(None)
        }
        Err(stop) => Err(stop),
    }
}

/// What a model call needs besides its request.
pub(super) struct Caller<'a> {
    out: &'a Out,
    pub(super) ctx: &'a ToolContext,
    model: &'a dyn ChatModel,
    prices: &'a Prices,
    budgets: &'a Budgets,
}

impl Caller<'_> {
    /// Holds budget room, then makes the call (falling back to the agent's fallback model when the
    /// model is overloaded or failing). Visible text goes out through `filter` as it comes.
    /// Without a filter the text is only collected (an expert's answer is not streamed).
    pub(super) async fn model_call(
        &self,
        request: ModelRequest,
        filter: Option<&mut StateFilter>,
        text: &mut String,
    ) -> Result<HopEnd, Stop> {
        let agent = &self.ctx.agent;
        let limits = Limits {
            agent_id: &agent.id,
            budget_usd: agent.limits.budget_usd,
            daily_cap_usd: agent.limits.daily_cap_usd,
            floor_usd: self.prices.floor_usd(&request.model),
            now_ms: self.ctx.clock.now_ms(),
        };
        let hold = match self.budgets.hold(&self.ctx.db, &self.out.lease, limits).await {
            Ok(Ok(hold)) => hold,
            Ok(Err(hit)) => {
                let (spent, limit, kind) = match hit {
                    LimitHit::Conversation { spent_usd, budget_usd } => (spent_usd, budget_usd, "conversation"),
                    LimitHit::AgentDaily { spent_usd, cap_usd } => (spent_usd, cap_usd, "agent daily"),
                };
                tracing::info!(conversation = %self.out.conversation_id, kind, spent, limit, "budget reached");
                return Err(Stop::Limit("BUDGET_EXCEEDED"));
            }
            Err(e) => {
                tracing::error!(error = %e, "could not read today's spend");
                return Err(Stop::Limit("INTERNAL_ERROR"));
            }
        };
        call_model(self, request, hold, filter, text).await
    }
}

/// Whether a failed call should be tried once more on the agent's fallback model.
fn wants_fallback(error: &ProviderError) -> bool {
    matches!(error, ProviderError::Server { .. } | ProviderError::Timeout(_) | ProviderError::Connect(_))
        || matches!(error, ProviderError::StreamError(m) if m.contains("overloaded"))
}

/// One streaming model call: tokens go out as they come; tool calls are collected. Every attempt
/// is written to the ledger; the hold is settled with the call's cost.
async fn call_model(
    caller: &Caller<'_>,
    mut request: ModelRequest,
    hold: Hold,
    mut filter: Option<&mut StateFilter>,
    text: &mut String,
) -> Result<HopEnd, Stop> {
    let Caller { out, ctx, model, prices, .. } = *caller;
    let attempts = AttemptLog::default();
    let started = Instant::now();
    let mut result = model.stream(request.clone(), &attempts).await;
    if let Err(error) = &result
        && wants_fallback(error)
        && let Some(fallback) = ctx.agent.provider.fallback_model.as_deref().filter(|f| *f != request.model)
    {
        tracing::info!(code = error.code(), from = %request.model, to = fallback, "using the fallback model");
        request.model = fallback.to_owned();
        if !prices.lookup(fallback).is_some_and(|p| p.vision) {
            super::attachments::drop_images(&mut request.messages);
        }
        result = model.stream(request.clone(), &attempts).await;
    }
    let model_name = request.model;
    let record = |model_name: &str, outcome: &str, usage: Option<(u64, u64, u64)>, latency_ms: u64| {
        let (input, output, cached) = usage.unwrap_or((0, 0, 0));
        let cost = prices.cost_usd(model_name, input, cached, output);
        out.writer.usage(UsageRecord {
            agent_id: ctx.agent.id.clone(),
            conversation_id: Some(ctx.conversation_id.clone()),
            message_id: Some(ctx.message_id.clone()),
            provider: model.provider().to_owned(),
            model: model_name.to_owned(),
            outcome: outcome.to_owned(),
            input_tokens: input,
            output_tokens: output,
            cached_tokens: cached,
            cost_usd: cost,
            latency_ms,
            created_at: ctx.clock.now_ms(),
        });
        cost
    };
    for attempt in attempts.take() {
        record(&attempt.model, attempt.outcome, None, attempt.latency_ms);
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
                let cost = record(
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
        record(&model_name, ProviderError::Truncated.code(), None, started.elapsed().as_millis() as u64);
        return Err(Stop::Provider(ProviderError::Truncated));
    }
    let u = usage.unwrap_or_default();
    let cost = record(&model_name, "ok", Some((u.input, u.output, u.cached)), started.elapsed().as_millis() as u64);
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

/// The tools offered to the model: the agent's, then its experts'.
fn tool_specs(tools: &AgentTools, experts: &[Expert]) -> Vec<super::provider::ToolSpec> {
    let mut specs = tools.specs();
    specs.extend(experts.iter().map(Expert::spec));
    specs
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs one hop's tool calls concurrently, each in its own task (a panic stays inside it) and
/// with a timeout.
async fn run_tools(
    caller: &Caller<'_>,
    tools: &AgentTools,
    experts: &[Expert],
    model_name: &str,
    calls: &[ModelToolCall],
    hop: u32,
    timeout: Duration,
) -> Vec<Result<ToolOutput, ToolError>> {
    let (out, ctx) = (caller.out, caller.ctx);
    let expert_of =
        |call: &ModelToolCall| call.name.strip_prefix(INVOKE).and_then(|name| experts.iter().find(|e| e.name == name));
    let gate = tokio::sync::Semaphore::new(experts::CONCURRENT);
    let arguments: Vec<Value> = calls
        .iter()
        .map(|c| serde_json::from_str(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.clone())))
        .collect();
    for (call, args) in calls.iter().zip(&arguments) {
        if let Some(expert) = expert_of(call) {
            out.emit(StreamEvent::AgentStart(AgentProgress { agent: expert.name.clone(), ok: None }));
            continue;
        }
        out.emit(StreamEvent::ToolCall(ToolCall {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: args.clone(),
            status: ToolCallStatus::Started,
            hop,
            error: None,
            duration_ms: None,
        }));
    }
    let runs = calls.iter().map(|call| {
        let expert = expert_of(call);
        let gate = &gate;
        let tools = tools.clone();
        let ctx = ctx.clone();
        let call = call.clone();
        async move {
            let started = Instant::now();
            if let Some(expert) = expert {
                // Experts run here, not in a task of their own: they borrow the turn's caller,
                // and a stopped turn drops them (and their upstream calls) with it.
                let Ok(_permit) = gate.acquire().await else {
                    return (Err(ToolError::Failed("cancelled".into())), started.elapsed());
                };
                let own_tools = tools.only(&expert.tools);
                let result = experts::run(caller, &own_tools, expert, &call.arguments, model_name, timeout)
                    .await
                    .map(|answer| ToolOutput {
                        result: json!({"ok": true, "expert": expert.name, "answer": answer}),
                        blocks: Vec::new(),
                    })
                    .map_err(ToolError::Failed);
                return (result, started.elapsed());
            }
            let name = call.name.clone();
            let mut handle = tokio::spawn(async move { tools.call(&ctx, &call.name, &call.arguments).await });
            // A stopped turn drops this future: the tool stops with it.
            let _abort = AbortOnDrop(handle.abort_handle());
            let result = match tokio::time::timeout(timeout, &mut handle).await {
                Ok(Ok(r)) => r,
                Ok(Err(join)) if join.is_panic() => {
                    tracing::error!(tool = %name, "tool panicked");
                    Err(ToolError::Failed("the tool crashed".into()))
                }
                Ok(Err(_)) => Err(ToolError::Failed("the tool was cancelled".into())),
                Err(_) => {
                    handle.abort();
                    Err(ToolError::Timeout)
                }
            };
            (result, started.elapsed())
        }
    });
    let results = futures::future::join_all(runs).await;
    let mut out_results = Vec::with_capacity(results.len());
    for ((call, args), (result, elapsed)) in calls.iter().zip(arguments).zip(results) {
        let duration_ms = elapsed.as_millis() as u64;
        let (status, error) = match &result {
            Ok(_) => (ToolCallStatus::Succeeded, None),
            Err(e) => (ToolCallStatus::Failed, Some(e.to_string())),
        };
        if let Some(expert) = expert_of(call) {
            out.emit(StreamEvent::AgentComplete(AgentProgress {
                agent: expert.name.clone(),
                ok: Some(result.is_ok()),
            }));
        } else {
            out.emit(StreamEvent::ToolCall(ToolCall {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: args,
                status,
                hop,
                error: error.clone(),
                duration_ms: Some(duration_ms),
            }));
        }
        out.writer.tool_call(ToolCallRecord {
            message_id: ctx.message_id.clone(),
            conversation_id: ctx.conversation_id.clone(),
            call_id: call.id.clone(),
            hop,
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            result: result.as_ref().ok().map(|o| o.result.to_string()),
            status,
            error,
            duration_ms,
            created_at: ctx.clock.now_ms(),
        });
        out_results.push(result);
    }
    out_results
}

/// What the visitor is told when the model fails: no provider details, ever.
fn friendly_error(error: &ProviderError, chinese: bool) -> ErrorEvent {
    let code = match error {
        ProviderError::RateLimited { .. } => "RATE_LIMITED",
        ProviderError::Client { .. } => "UPSTREAM_REJECTED",
        _ => "UPSTREAM_UNAVAILABLE",
    };
    let message = if chinese {
        "抱歉，系统暂时出了点问题。请稍后再试，或联系我们的人工客服。"
    } else {
        "Sorry, I can't answer right now. Please try again in a moment, or ask to talk to a person."
    };
    ErrorEvent { code: code.to_owned(), message: message.to_owned() }
}

/// What the visitor is told when a guard ends the turn.
fn limit_error(code: &'static str, chinese: bool) -> ErrorEvent {
    let message = match (code, chinese) {
        ("MAX_TURNS_REACHED", true) => "这个问题需要更多步骤，我无法独立完成。我们的顾问可以继续帮您——请点击下方按钮。",
        ("MAX_TURNS_REACHED", false) => {
            "This needs more steps than I can take on my own. A person from our team can take it from here: press the button below."
        }
        ("BUDGET_EXCEEDED", true) => "本次对话的自动回复额度已用完。我们的人工顾问可以继续为您服务——请点击下方按钮。",
        ("BUDGET_EXCEEDED", false) => {
            "This conversation has reached its limit for automatic answers. A person from our team can take it from here: press the button below."
        }
        (_, true) => "抱歉，系统暂时出了点问题。请稍后再试，或联系我们的人工顾问。",
        (_, false) => {
            "Sorry, something went wrong on our side. Please try again in a moment, or ask to talk to a person."
        }
    };
    ErrorEvent { code: code.to_owned(), message: message.to_owned() }
}
