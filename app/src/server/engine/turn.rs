//! The turn loop: one visitor message in, one streamed assistant answer out.
//!
//! No tools → exactly one streaming model call. With tools → the model is called with the tools,
//! streaming: text it writes goes to the visitor at once; the tool calls it makes are validated and
//! run concurrently with a timeout, announced as `tool_call` events, their blocks sent as `block`
//! events, their results appended as tool messages, and the model is called again, up to
//! `max_hops` tool hops; after that the answer is requested without tools.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use parley_widget::protocol::{
    Block, BlockEvent, ErrorEvent, MessageEnd, MessageStatus, StreamEvent, Token, ToolCall, ToolCallStatus, Usage,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::hub::Lease;
use super::pricing;
use super::provider::{AttemptLog, ChatModel, ModelEvent, ModelMessage, ModelRequest, ModelToolCall, ProviderError};
use super::tools::registry::AgentTools;
use super::tools::{ToolContext, ToolError, ToolOutput};
use super::writer::Writer;
use crate::server::store::batch::FinishedMessage;
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

enum HopEnd {
    /// The model wants these tools run.
    Tools(Vec<ModelToolCall>),
    /// The answer is complete.
    Done,
}

impl Turn {
    /// Runs the turn to its end; never panics on provider or tool faults.
    pub async fn run(self) {
        let Turn { lease, writer, model, model_name, tools, tool_ctx, mut messages, limits, cancel, chinese } = self;
        let out = Out {
            lease,
            writer,
            conversation_id: Arc::from(tool_ctx.conversation_id.as_str()),
            message_id: Arc::from(tool_ctx.message_id.as_str()),
        };
        let mut text = String::new();
        let mut blocks: Vec<Block> = Vec::new();
        let mut status = MessageStatus::Complete;
        let mut hop: u32 = 0;

        loop {
            let offer_tools = !tools.is_empty() && hop < limits.max_hops;
            let request = ModelRequest {
                model: model_name.clone(),
                messages: messages.clone(),
                tools: if offer_tools { tools.specs() } else { Vec::new() },
                max_tokens: limits.max_tokens,
            };
            let mut hop_text = String::new();
            let outcome = tokio::select! {
                _ = cancel.cancelled() => Err(None),
                r = call_model(&out, &tool_ctx, model.as_ref(), request, &mut hop_text) => r.map_err(Some),
            };
            text.push_str(&hop_text);
            match outcome {
                Err(None) => {
                    status = MessageStatus::Stopped;
                    break;
                }
                Err(Some(error)) => {
                    tracing::warn!(conversation = %out.conversation_id, code = error.code(), error = %error, "model call failed");
                    out.emit(StreamEvent::Error(friendly_error(&error, chinese)));
                    if text.is_empty() {
                        text = friendly_error(&error, chinese).message;
                    }
                    status = MessageStatus::Failed;
                    break;
                }
                Ok(HopEnd::Done) => break,
                Ok(HopEnd::Tools(calls)) if !offer_tools => {
                    // Tools were not offered (hop limit); whatever text came is the answer.
                    tracing::info!(conversation = %out.conversation_id, calls = calls.len(), "model asked for tools after the hop limit");
                    break;
                }
                Ok(HopEnd::Tools(calls)) => {
                    hop += 1;
                    messages.push(ModelMessage::Assistant { content: hop_text, tool_calls: calls.clone() });
                    let done = tokio::select! {
                        _ = cancel.cancelled() => None,
                        results = run_tools(&out, &tools, &tool_ctx, &calls, hop, limits.tool_timeout) => Some(results),
                    };
                    let Some(results) = done else {
                        status = MessageStatus::Stopped;
                        break;
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

        if status == MessageStatus::Complete && text.trim().is_empty() && blocks.is_empty() {
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

/// One streaming model call: tokens go out as they come; tool calls are collected.
async fn call_model(
    out: &Out,
    ctx: &ToolContext,
    model: &dyn ChatModel,
    request: ModelRequest,
    text: &mut String,
) -> Result<HopEnd, ProviderError> {
    let attempts = AttemptLog::default();
    let model_name = request.model.clone();
    let started = Instant::now();
    let result = model.stream(request, &attempts).await;
    let record = |outcome: &str, usage: Option<(u64, u64, u64)>, latency_ms: u64| {
        let (input, output, cached) = usage.unwrap_or((0, 0, 0));
        let cost = pricing::cost_usd(&model_name, input, cached, output);
        out.writer.usage(UsageRecord {
            agent_id: ctx.agent.id.clone(),
            conversation_id: Some(ctx.conversation_id.clone()),
            message_id: Some(ctx.message_id.clone()),
            provider: model.provider().to_owned(),
            model: model_name.clone(),
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
        record(attempt.outcome, None, attempt.latency_ms);
    }
    let mut stream = result?;
    let mut calls = Vec::new();
    let mut usage = None;
    let mut finished = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(ModelEvent::Text(t)) => {
                text.push_str(&t);
                out.emit(StreamEvent::Token(Token { text: t }));
            }
            Ok(ModelEvent::ToolCall(call)) => calls.push(call),
            Ok(ModelEvent::Usage(u)) => usage = Some(u),
            Ok(ModelEvent::Finished(_)) => finished = true,
            Err(e) => {
                record(e.code(), usage.map(|u| (u.input, u.output, u.cached)), started.elapsed().as_millis() as u64);
                return Err(e);
            }
        }
    }
    if !finished {
        record(ProviderError::Truncated.code(), None, started.elapsed().as_millis() as u64);
        return Err(ProviderError::Truncated);
    }
    let u = usage.unwrap_or_default();
    let cost = record("ok", Some((u.input, u.output, u.cached)), started.elapsed().as_millis() as u64);
    let total = out.lease.add_cost(cost);
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

/// Runs one hop's tool calls concurrently, each in its own task (a panic stays inside it) and
/// with a timeout.
async fn run_tools(
    out: &Out,
    tools: &AgentTools,
    ctx: &ToolContext,
    calls: &[ModelToolCall],
    hop: u32,
    timeout: Duration,
) -> Vec<Result<ToolOutput, ToolError>> {
    let arguments: Vec<Value> = calls
        .iter()
        .map(|c| serde_json::from_str(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.clone())))
        .collect();
    for (call, args) in calls.iter().zip(&arguments) {
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
        let tools = tools.clone();
        let ctx = ctx.clone();
        let call = call.clone();
        async move {
            let started = Instant::now();
            let name = call.name.clone();
            let mut handle = tokio::spawn(async move { tools.call(&ctx, &call.name, &call.arguments).await });
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
        out.emit(StreamEvent::ToolCall(ToolCall {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: args,
            status,
            hop,
            error: error.clone(),
            duration_ms: Some(duration_ms),
        }));
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
