//! One hop's tool calls: announced (`tool_call` started, or `agent_start` for an expert), run
//! concurrently — each registry tool in a task of its own with a timeout, experts inline a few at
//! a time — then announced again with their outcome and recorded for the console.

use std::time::{Duration, Instant};

use parley_protocol::{AgentProgress, StreamEvent, ToolCall, ToolCallStatus};
use serde_json::{Value, json};

use super::super::experts::{CONCURRENT, Expert, INVOKE};
use super::super::provider::{ModelToolCall, ToolSpec};
use super::super::tools::registry::AgentTools;
use super::super::tools::{ToolContext, ToolError, ToolOutput};
use super::Hops;
use super::call::Caller;
use crate::store::tool_calls::ToolCallRecord;

/// The tools offered to the model: the agent's, then its experts'.
pub(super) fn specs(tools: &AgentTools, experts: &[Expert]) -> Vec<ToolSpec> {
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

/// Runs one tool call in a task of its own, with a timeout: a panic or a hang stays inside it
/// and comes back as the tool's error. Dropping the future stops the tool.
pub(super) async fn call_contained(
    tools: &AgentTools,
    ctx: &ToolContext,
    call: &ModelToolCall,
    timeout: Duration,
) -> Result<ToolOutput, ToolError> {
    let (tools, ctx, call) = (tools.clone(), ctx.clone(), call.clone());
    let name = call.name.clone();
    let mut handle = tokio::spawn(async move { tools.call(&ctx, &call.name, &call.arguments).await });
    // A stopped turn drops this future: the tool stops with it.
    let _abort = AbortOnDrop(handle.abort_handle());
    match tokio::time::timeout(timeout, &mut handle).await {
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
    }
}

/// How many of one hop's tools run at once (the rest wait their turn).
pub const TOOLS_AT_ONCE: usize = 4;

/// Runs one hop's tool calls concurrently ([`TOOLS_AT_ONCE`] at a time, experts [`CONCURRENT`]),
/// each in its own task (a panic stays inside it) and with a timeout; a write the turn's gate
/// refuses is not run.
pub(super) async fn run(hops: &Hops<'_>, calls: &[ModelToolCall], hop: u32) -> Vec<Result<ToolOutput, ToolError>> {
    let (caller, tools, experts, model_name) = (hops.call, hops.tools, hops.experts, hops.model_name);
    let (timeout, writes) = (hops.limits.tool_timeout, hops.gate);
    let (out, ctx) = (caller.out, caller.ctx);
    let expert_of = |call: &ModelToolCall| {
        call.name.strip_prefix(INVOKE).and_then(|name| experts.iter().find(|e| e.role() == name))
    };
    let gate = tokio::sync::Semaphore::new(CONCURRENT);
    let tool_gate = tokio::sync::Semaphore::new(TOOLS_AT_ONCE);
    let arguments: Vec<Value> = calls
        .iter()
        .map(|c| serde_json::from_str(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.clone())))
        .collect();
    for (call, args) in calls.iter().zip(&arguments) {
        if let Some(expert) = expert_of(call) {
            out.emit(StreamEvent::AgentStart(AgentProgress { agent: expert.role().to_owned(), ok: None }));
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
        let tool_gate = &tool_gate;
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
                let task = super::experts::Task { expert, arguments: &call.arguments, call_id: &call.id };
                let result = super::experts::run(caller, &own_tools, task, model_name, timeout, writes)
                    .await
                    .map(|done| ToolOutput {
                        result: json!({"ok": true, "expert": expert.role(), "answer": done.answer}),
                        // What the expert's tools showed (its knowledge search's citations)
                        // reaches the visitor with the answer.
                        blocks: done.blocks,
                    })
                    .map_err(|e| ToolError::Failed(e.to_string()));
                // (Expert errors are fixed texts: no detail of a provider reaches anyone.)
                return (result, started.elapsed());
            }
            let Ok(_permit) = tool_gate.acquire().await else {
                return (Err(ToolError::Failed("cancelled".into())), started.elapsed());
            };
            if let Some(refused) = writes.refuse(&tools, &call) {
                return (Err(refused), started.elapsed());
            }
            (call_contained(&tools, &ctx, &call, timeout).await, started.elapsed())
        }
    });
    let results = futures::future::join_all(runs).await;
    writes.ran(tools, calls);
    let mut out_results = Vec::with_capacity(results.len());
    for ((call, args), (result, elapsed)) in calls.iter().zip(arguments).zip(results) {
        let duration_ms = elapsed.as_millis() as u64;
        let (status, error) = match &result {
            Ok(_) => (ToolCallStatus::Succeeded, None),
            Err(e) => (ToolCallStatus::Failed, Some(e.to_string())),
        };
        if let Some(expert) = expert_of(call) {
            out.emit(StreamEvent::AgentComplete(AgentProgress {
                agent: expert.role().to_owned(),
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
        record(caller, call, hop, &result, elapsed, None);
        out_results.push(result);
    }
    out_results
}

/// Records a tool call: its metrics, and its row for the console (written by the stream writer
/// with the answer). The one recorder of the turn's calls and of the experts' (whose calls name
/// the coordinator's call they ran under, `parent`).
pub(super) fn record(
    caller: &Caller<'_>,
    call: &ModelToolCall,
    hop: u32,
    result: &Result<ToolOutput, ToolError>,
    elapsed: Duration,
    parent: Option<&str>,
) {
    let status = if result.is_ok() { ToolCallStatus::Succeeded } else { ToolCallStatus::Failed };
    let duration_ms = elapsed.as_millis() as u64;
    metrics::counter!("parley_tool_calls_total", "tool" => call.name.clone(), "outcome" => status.as_str())
        .increment(1);
    metrics::histogram!("parley_tool_call_seconds", "tool" => call.name.clone()).record(elapsed.as_secs_f64());
    let ctx = caller.ctx;
    caller.out.writer.tool_call(ToolCallRecord {
        message_id: ctx.message_id.clone(),
        conversation_id: ctx.conversation_id.clone(),
        call_id: call.id.clone(),
        hop,
        name: call.name.clone(),
        arguments: call.arguments.clone(),
        result: result.as_ref().ok().map(|o| o.result.to_string()),
        status,
        error: result.as_ref().err().map(ToolError::for_console),
        duration_ms,
        created_at: ctx.clock.now_ms(),
        parent_call_id: parent.map(str::to_owned),
    });
}
