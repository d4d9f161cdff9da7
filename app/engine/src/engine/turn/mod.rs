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
//! and the agent's and the visitor's daily caps (`BUDGET_EXCEEDED` when there is none); every
//! call asks for at most `max_tokens`, and the whole answer has a time limit
//! (`TIME_LIMIT_REACHED`, the partial answer kept); the visitor's stop ends the turn at once
//! (`USER_ABORTED`, the partial answer kept as `stopped`). A turn ended by a limit
//! says so politely and offers the hand-off to a person. An overloaded or failing model is
//! replaced by the agent's fallback model. The `<consulting_state>` tag a coordinator appends is
//! kept out of the visible text, stored on the conversation and sent as `state_update`.
//!
//! The loop reads top to bottom here; each concern has a file of its own: [`call`] (one model
//! call: budget hold, fallback, ledger), [`tools`] (one hop's tools), [`experts`] (one expert's
//! nested calls), [`compact`] (summarising older turns), [`texts`] (what the visitor is told),
//! [`out`] (where events go), [`gate`] (write tools after outside results), [`canary`] (the
//! marker that cuts an answer repeating its instructions).

mod call;
mod compact;
mod experts;
mod gate;
mod out;
mod texts;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use parley_protocol::{Block, MessageEnd, MessageStatus, StateUpdate, StreamCode, StreamEvent, Token};
use tokio_util::sync::CancellationToken;

use super::budget::Budgets;
use super::canary::{self, Visible};
use super::context::{self, Compaction};
use super::experts::Expert;
use super::hub::Lease;
use super::lang::Lang;
use super::pricing::Prices;
use super::provider::{ChatModel, ModelMessage, ModelRequest, ModelToolCall, ProviderError};
use super::tools::registry::AgentTools;
use super::tools::{ToolContext, handoff_block};
use super::writer::Writer;
use crate::store::batch::FinishedMessage;
use call::{Caller, DayCaps};
use gate::Gate;
use out::Out;

/// Limits of the loop.
#[derive(Clone, Debug)]
pub struct TurnLimits {
    pub max_hops: u32,
    pub tool_timeout: Duration,
    /// `max_tokens` of each of the answer's model calls.
    pub max_tokens: Option<u32>,
    /// How long the whole answer may take: model calls, tools, experts.
    pub time_limit: Duration,
    /// The agent's spend per UTC day (its own cap or the server's default).
    pub agent_daily_cap_usd: Option<f64>,
    /// The visitor's spend per UTC day, all conversations together.
    pub visitor_daily_cap_usd: Option<f64>,
    /// The spend per UTC day of every visitor from the sender's address (IPv6 by /64), and that
    /// address ([`crate::net::address_group`]; empty: unknown, no cap).
    pub address_daily_cap_usd: Option<f64>,
    pub address: String,
    /// The model that takes over when the agent's is overloaded or failing (the agent's own, or
    /// its provider's default).
    pub fallback_model: Option<String>,
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
    /// Cancelled when a shutdown stops running answers: a stop then means `interrupted`.
    pub shutdown: CancellationToken,
    /// The language the visitor's own texts (stopped, limits, errors) are said in.
    pub lang: Lang,
    pub prices: Prices,
    pub budgets: Budgets,
    /// A coordinator's experts (empty for other agents).
    pub experts: Arc<Vec<Expert>>,
    /// Older turns to summarise before answering.
    pub compaction: Option<Compaction>,
}

/// Why a turn ended early.
enum Stop {
    /// The visitor stopped it.
    Aborted,
    /// The server is shutting down and the grace period is over.
    Shutdown,
    /// The model failed.
    Provider(ProviderError),
    /// A guard: `MAX_TURNS_REACHED`, `BUDGET_EXCEEDED`, or an internal fault (`INTERNAL_ERROR`).
    Limit(StreamCode),
    /// The model wrote the canary (see [`canary`]): the answer is cut and not stored.
    Canary,
}

/// How one model call ended.
enum HopEnd {
    /// The model wants these tools run.
    Tools(Vec<ModelToolCall>),
    /// The answer is complete.
    Done,
}

/// The answer as it grows.
#[derive(Default)]
struct Answer {
    text: String,
    blocks: Vec<Block>,
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
            messages,
            limits,
            cancel,
            shutdown,
            lang,
            prices,
            budgets,
            experts,
            compaction,
        } = self;
        let out = Out::new(lease, writer, &tool_ctx);
        metrics::counter!("parley_turns_started_total", "agent" => out.agent.to_string()).increment(1);
        let caps = DayCaps {
            agent_usd: limits.agent_daily_cap_usd,
            visitor_usd: limits.visitor_daily_cap_usd,
            address_usd: limits.address_daily_cap_usd,
            address: limits.address.clone(),
        };
        let call =
            Caller::new(&out, &tool_ctx, model.as_ref(), &prices, &budgets, caps, limits.fallback_model.as_deref());
        let mut filter = Visible::default();
        let mut answer = Answer::default();
        let deadline = Instant::now() + limits.time_limit;
        let gate = Gate::new(&messages);
        let hops = Hops {
            call: &call,
            tools: &tools,
            experts: &experts,
            model_name: &model_name,
            limits: &limits,
            deadline,
            gate: &gate,
        };
        // A panic anywhere in the loop ends this answer (`INTERNAL_ERROR`, stored, the turn slot
        // freed) instead of the task, which would leave the conversation busy.
        let run = std::panic::AssertUnwindSafe(hops.run(messages, compaction, &cancel, &mut filter, &mut answer));
        let stop = match futures::FutureExt::catch_unwind(run).await {
            Ok(stop) => stop,
            Err(_) => {
                tracing::error!(conversation = %out.conversation_id, "the turn panicked");
                Some(Stop::Limit(StreamCode::InternalError))
            }
        };
        let stop = match stop {
            Some(Stop::Aborted) if shutdown.is_cancelled() => Some(Stop::Shutdown),
            other => other,
        };
        let status = end(&out, stop, lang, &mut answer);
        metrics::counter!("parley_turns_total", "agent" => out.agent.to_string(), "outcome" => status.as_str())
            .increment(1);
        metrics::histogram!("parley_turn_seconds", "agent" => out.agent.to_string())
            .record(out.started.elapsed().as_secs_f64());

        // Stored with the answer, in the same transaction.
        let consulting_state = filter.take_state().map(|state| {
            out.emit(StreamEvent::StateUpdate(StateUpdate { state: state.clone() }));
            state.to_string()
        });
        if status == MessageStatus::Complete && answer.text.is_empty() && answer.blocks.is_empty() {
            let fallback = texts::no_answer(lang);
            out.emit(StreamEvent::Token(Token { text: fallback.to_owned() }));
            answer.text.push_str(fallback);
        }
        finish(out, answer, status, consulting_state, tool_ctx.clock.now_ms()).await;
    }
}

/// The hops of one turn.
struct Hops<'a> {
    call: &'a Caller<'a>,
    tools: &'a AgentTools,
    experts: &'a [Expert],
    model_name: &'a str,
    limits: &'a TurnLimits,
    /// When the answer's time is up.
    deadline: Instant,
    /// Write tools after outside results.
    gate: &'a Gate,
}

impl Hops<'_> {
    /// Model call, tools, model call, … until the answer is complete or something stops it.
    async fn run(
        &self,
        mut messages: Vec<ModelMessage>,
        compaction: Option<Compaction>,
        cancel: &CancellationToken,
        filter: &mut Visible,
        answer: &mut Answer,
    ) -> Option<Stop> {
        let out_of_time = || {
            tracing::info!(conversation = %self.call.out.conversation_id, "the answer's time limit was reached");
            Stop::Limit(StreamCode::TimeLimitReached)
        };
        let time_up = tokio::time::sleep_until(self.deadline);
        tokio::pin!(time_up);
        if let Some(compaction) = compaction {
            let summary = tokio::select! {
                _ = &mut time_up => return Some(out_of_time()),
                r = compact::summarise(self.call, self.model_name, &compaction, cancel) => r,
            };
            match summary {
                Ok(Some(summary)) => context::apply(&mut messages, &compaction, &summary),
                // The summary failed: answer from the recent turns, trimmed to the window.
                Ok(None) => context::trim(&mut messages, &compaction),
                Err(stop) => return Some(stop),
            }
        }
        let out = self.call.out;
        let mut hop: u32 = 0;
        loop {
            let offer_tools = !(self.tools.is_empty() && self.experts.is_empty()) && hop < self.limits.max_hops;
            let request = ModelRequest {
                model: self.model_name.to_owned(),
                messages: messages.clone(),
                tools: if offer_tools { tools::specs(self.tools, self.experts) } else { Vec::new() },
                max_tokens: self.limits.max_tokens,
            };
            let mut hop_text = String::new();
            let outcome = tokio::select! {
                _ = cancel.cancelled() => Err(Stop::Aborted),
                _ = &mut time_up => Err(out_of_time()),
                r = self.call.model_call(request, Some(&mut *filter), &mut hop_text) => r,
            };
            if let Err(Stop::Canary) = outcome {
                return Some(Stop::Canary);
            }
            // What the filter still held is text once the call is over (or stopped).
            let rest = filter.finish();
            if !rest.is_empty() {
                out.emit(StreamEvent::Token(Token { text: rest.clone() }));
                hop_text.push_str(&rest);
            }
            answer.text.push_str(&hop_text);
            let calls = match outcome {
                Err(stop) => return Some(stop),
                Ok(HopEnd::Done) => return None,
                Ok(HopEnd::Tools(calls)) if !offer_tools => {
                    // Even after the last hop, with no tools offered, the model wants more.
                    tracing::info!(conversation = %out.conversation_id, calls = calls.len(), "tool hops used up");
                    return Some(Stop::Limit(StreamCode::MaxTurnsReached));
                }
                Ok(HopEnd::Tools(calls)) if canary::in_calls(&calls) => return Some(Stop::Canary),
                Ok(HopEnd::Tools(calls)) => calls,
            };
            hop += 1;
            messages.push(ModelMessage::Assistant { content: hop_text, tool_calls: calls.clone() });
            let run = tools::run(self, &calls, hop);
            let results = tokio::select! {
                _ = cancel.cancelled() => return Some(Stop::Aborted),
                _ = &mut time_up => return Some(out_of_time()),
                results = run => results,
            };
            for (call, result) in calls.iter().zip(results) {
                let content = crate::engine::tools::for_model(&result);
                if let Ok(output) = result {
                    for block in output.blocks {
                        out.block(block.clone());
                        answer.blocks.push(block);
                    }
                }
                messages.push(ModelMessage::Tool { call_id: call.id.clone(), content });
            }
        }
    }
}

/// Says why the turn ended early (if it did) and gives the answer's status.
fn end(out: &Out, stop: Option<Stop>, lang: Lang, answer: &mut Answer) -> MessageStatus {
    match stop {
        None => MessageStatus::Complete,
        Some(Stop::Aborted) => {
            out.emit(StreamEvent::Error(texts::stopped(lang)));
            MessageStatus::Stopped
        }
        // No error event: `interrupted` is the answer's end, and the widget offers to ask again.
        Some(Stop::Shutdown) => MessageStatus::Interrupted,
        Some(Stop::Provider(error)) => {
            tracing::warn!(conversation = %out.conversation_id, code = error.code(), error = %error, "model call failed");
            let event = texts::provider_failed(&error, lang);
            if answer.text.is_empty() {
                answer.text = event.message.clone();
            }
            out.emit(StreamEvent::Error(event));
            MessageStatus::Failed
        }
        Some(Stop::Canary) => {
            tracing::warn!(
                conversation = %out.conversation_id,
                "the answer wrote the instructions' canary (a prompt leak): cut, its text not stored"
            );
            metrics::counter!("parley_canary_cuts_total", "agent" => out.agent.to_string()).increment(1);
            answer.text.clear();
            end(out, Some(Stop::Limit(StreamCode::InternalError)), lang, answer)
        }
        Some(Stop::Limit(code)) => {
            let event = texts::limit(&code, lang);
            if !answer.text.trim().is_empty() {
                answer.text.push_str("\n\n");
            }
            answer.text.push_str(&event.message);
            out.emit(StreamEvent::Error(event));
            // Instead of more answers: a person.
            let block = handoff_block(lang, Some(code.as_str().to_owned()), false);
            out.block(block.clone());
            answer.blocks.push(block);
            MessageStatus::Failed
        }
    }
}

/// Stores the answer, then announces it. `message_end` means "stored": the answer is written
/// before it is announced, and the announcement itself before the turn lets go of the
/// conversation.
async fn finish(out: Out, answer: Answer, status: MessageStatus, consulting_state: Option<String>, now: i64) {
    out.writer.finish(FinishedMessage {
        conversation_id: out.conversation_id.to_string(),
        message_id: out.message_id.to_string(),
        content: answer.text,
        blocks: answer.blocks,
        status,
        at: now,
        consulting_state,
    });
    if !out.writer.flush().await {
        tracing::error!(conversation = %out.conversation_id, "the answer could not be stored");
    }
    out.lease.mark_finishing();
    out.emit(StreamEvent::MessageEnd(MessageEnd { message_id: out.message_id.to_string(), status }));
    out.lease.end_turn();
    // The channel stays until `message_end` is stored too.
    let Out { lease, writer, .. } = out;
    writer.release(lease);
}
