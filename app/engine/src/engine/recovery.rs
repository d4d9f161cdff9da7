//! Crash recovery. An answer whose process died (`kill -9`, power loss) is left `streaming`; it
//! is finished as `interrupted` with everything the visitor saw: the text and blocks from its
//! stored events, the tool calls it announced, and the usage of the model call that was under
//! way (estimated from the text, as the provider's figure never came). A closing `message_end`
//! ends resumed streams. Only answers of processes that are gone are touched: each process holds
//! a lease it renews (see `store::leases`); on PostgreSQL a survivor recovers a dead replica's
//! answers once its lease expires, on SQLite (one process per database) at the next start.

use std::collections::HashSet;
use std::time::Duration;

use parley_protocol::{Block, MessageEnd, MessageStatus, StreamEvent, ToolCallStatus};

use super::Engine;
use super::budget::DAY_MS;
use super::frame::expand;
use super::pricing::estimate_tokens;
use super::replay;
use crate::store::events::{self, EventRow};
use crate::store::leases::{self, Orphan};
use crate::store::spend::{self, SpendSettle};
use crate::store::tool_calls::{self, ToolCallRecord};
use crate::store::usage::{self, Spender, UsageRecord};
use crate::store::{DbError, DbKind, script, to_json_text};

/// How often a process renews its lease (and looks for answers of processes that are gone).
pub const LEASE_RENEW: Duration = Duration::from_secs(5);

/// What an interrupted answer had sent, rebuilt from its stored events.
#[derive(Debug, Default, PartialEq)]
pub struct Sent {
    pub text: String,
    pub blocks: Vec<Block>,
    /// Each announced tool call's last state, in announcement order.
    pub tool_calls: Vec<parley_protocol::ToolCall>,
    /// Text produced since the last model call that was metered (`usage` event): the call under
    /// way when the process died. `None` when no call was under way.
    pub unmetered: Option<String>,
}

/// Rebuilds what the answer `message_id` sent from the stored events after its start.
pub fn sent(message_id: &str, rows: &[EventRow]) -> Sent {
    let mut out = Sent::default();
    let mut calls: Vec<parley_protocol::ToolCall> = Vec::new();
    let mut since_usage = String::new();
    let mut metered_once = false;
    let mut ended = false;
    for row in rows {
        for (_, event) in expand(row) {
            match event {
                StreamEvent::Token(t) => {
                    out.text.push_str(&t.text);
                    since_usage.push_str(&t.text);
                }
                StreamEvent::Block(b) if b.message_id == message_id => out.blocks.push(b.block),
                StreamEvent::ToolCall(c) => match calls.iter_mut().find(|k| k.call_id == c.call_id) {
                    Some(known) => *known = c,
                    None => calls.push(c),
                },
                StreamEvent::Usage(_) => {
                    metered_once = true;
                    since_usage.clear();
                }
                StreamEvent::MessageEnd(e) if e.message_id == message_id => ended = true,
                _ => {}
            }
        }
    }
    out.tool_calls = calls;
    // A call was under way if text came after the last metered call, or none was metered yet.
    if !ended && (!since_usage.is_empty() || !metered_once) {
        out.unmetered = Some(since_usage);
    }
    out
}

impl Engine {
    /// This process's id (its lease).
    pub fn process_id(&self) -> &str {
        &self.0.process_id
    }

    /// Takes this process's lease. Called once at start, before [`Engine::recover`].
    pub async fn register_process(&self) -> Result<(), DbError> {
        leases::register(self.db(), self.process_id(), &host_name(), std::process::id(), self.now_ms()).await
    }

    /// Finishes the answers of processes that are gone as `interrupted` (at start: on SQLite
    /// every answer left `streaming`, as one process owns the database). Returns how many.
    pub async fn recover(&self) -> Result<usize, DbError> {
        let every_other = self.db().kind() == DbKind::Sqlite;
        self.recover_orphans(every_other).await
    }

    async fn recover_orphans(&self, every_other: bool) -> Result<usize, DbError> {
        let ttl = i64::try_from(self.settings().lease_ttl.as_millis()).unwrap_or(i64::MAX);
        let cutoff = self.now_ms().saturating_sub(ttl);
        let orphans = leases::orphans(self.db(), self.process_id(), cutoff, every_other).await?;
        let mut done = 0;
        for orphan in &orphans {
            if self.interrupt(orphan).await? {
                done += 1;
            }
        }
        leases::forget_expired(self.db(), cutoff, self.process_id()).await?;
        Ok(done)
    }

    /// Renews the lease and recovers what dead replicas left, every [`LEASE_RENEW`].
    pub fn spawn_lease_keeper(&self) {
        let engine = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(LEASE_RENEW);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let host = host_name();
            loop {
                tick.tick().await;
                if engine.shutdown_state().streams_closing().is_cancelled() {
                    break;
                }
                match leases::heartbeat(engine.db(), engine.process_id(), &host, std::process::id(), engine.now_ms())
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => tracing::error!("this process's lease had expired (was it paused?); taken again"),
                    Err(e) => {
                        if crate::store::is_unavailable(&e) {
                            engine.db().connections_lost();
                        }
                        tracing::warn!(error = %e, "could not renew the process lease");
                    }
                }
                match engine.recover_orphans(false).await {
                    Ok(0) => {}
                    Ok(n) => tracing::warn!(answers = n, "answers of a process that is gone were marked `interrupted`"),
                    Err(e) => tracing::warn!(error = %e, "could not recover answers of processes that are gone"),
                }
            }
        });
    }

    /// Gives up the lease (clean shutdown, once this process's answers have ended).
    pub async fn release_process(&self) {
        if let Err(e) = leases::release(self.db(), self.process_id()).await {
            tracing::warn!(error = %e, "could not release the process lease");
        }
    }

    /// Finishes one orphaned answer in one transaction; false if another process got there first.
    async fn interrupt(&self, orphan: &Orphan) -> Result<bool, DbError> {
        let rows = events::after(self.db(), &orphan.conversation_id, orphan.start_seq).await?;
        let sent = sent(&orphan.message_id, &rows);
        let recorded: HashSet<String> =
            sqlx::query_scalar::<_, String>("SELECT call_id FROM tool_calls WHERE message_id = $1")
                .bind(&orphan.message_id)
                .fetch_all(&mut *self.db().read().await?)
                .await?
                .into_iter()
                .collect();
        let now = self.now_ms();
        let mut stmts = Vec::new();
        for call in sent.tool_calls.iter().filter(|c| !recorded.contains(&c.call_id)) {
            let unfinished = call.status == ToolCallStatus::Started;
            stmts.push(tool_calls::insert_stmt(&ToolCallRecord {
                message_id: orphan.message_id.clone(),
                conversation_id: orphan.conversation_id.clone(),
                call_id: call.call_id.clone(),
                hop: call.hop,
                name: call.name.clone(),
                arguments: call.arguments.to_string(),
                result: None,
                status: if unfinished { ToolCallStatus::Failed } else { call.status },
                error: if unfinished { Some("interrupted: the server stopped".into()) } else { call.error.clone() },
                duration_ms: call.duration_ms.unwrap_or(0),
                created_at: now,
                parent_call_id: None,
            }));
        }
        if let Some(unmetered) = &sent.unmetered {
            let usage = self.estimated_usage(orphan, unmetered, now).await?;
            stmts.push(usage::insert_stmt(&usage));
            stmts.extend(usage.settles.iter().map(crate::store::spend::settle_stmt));
        }
        let max = events::max_seq(self.db(), &orphan.conversation_id).await?;
        let end = StreamEvent::MessageEnd(MessageEnd {
            message_id: orphan.message_id.clone(),
            status: MessageStatus::Interrupted,
        });
        let end_row = EventRow {
            conversation_id: orphan.conversation_id.clone(),
            seq: max + replay::RESTART_GAP,
            last_seq: max + replay::RESTART_GAP,
            name: end.name().to_owned(),
            data: end.data_json(),
            created_at: now,
        };
        if self.db().kind() == DbKind::Postgres {
            // Streams open on any replica learn of the answer's end at commit.
            let only_end = crate::store::batch::Batch { events: vec![end_row.clone()], ..Default::default() };
            stmts.extend(crate::store::batch::notify_stmts(&only_end));
        }
        stmts.extend(events::insert_stmts(&[end_row]));
        let mut tx = self.db().begin_write().await?;
        // The claim: only one process finishes an answer.
        let claimed = sqlx::query(
            "UPDATE messages SET status = 'interrupted', content = $2, blocks = $3, updated_at = $4 \
             WHERE id = $1 AND status = 'streaming'",
        )
        .bind(&orphan.message_id)
        .bind(&sent.text)
        .bind(to_json_text(&sent.blocks))
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if claimed == 0 {
            tx.rollback().await?;
            return Ok(false);
        }
        script::run_each(&mut tx, &stmts).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The ledger row of the model call a dead process was waiting on: the conversation so far
    /// as its input, what it had written as its output, both estimated.
    async fn estimated_usage(&self, orphan: &Orphan, output_text: &str, now: i64) -> Result<UsageRecord, DbError> {
        let agent = self.agent_by_id(&orphan.agent_id).await?;
        let contents: Vec<String> =
            sqlx::query_scalar("SELECT content FROM messages WHERE conversation_id = $1 AND id <> $2")
                .bind(&orphan.conversation_id)
                .bind(&orphan.message_id)
                .fetch_all(&mut *self.db().read().await?)
                .await?;
        let prompt = agent.as_ref().map(|a| a.system_prompt.as_str()).unwrap_or("");
        let input = estimate_tokens(prompt) + contents.iter().map(|c| estimate_tokens(c)).sum::<u64>();
        let output = estimate_tokens(output_text);
        let (provider, model) = match &agent {
            Some(a) => (self.model_for(a).provider().to_owned(), a.provider.model.clone()),
            None => ("unknown".to_owned(), "unknown".to_owned()),
        };
        let cost = self.prices().cost_usd(&model, input, 0, output);
        Ok(UsageRecord {
            agent_id: orphan.agent_id.clone(),
            conversation_id: Some(orphan.conversation_id.clone()),
            message_id: Some(orphan.message_id.clone()),
            visitor_id: Some(orphan.visitor_id.clone()),
            provider,
            model,
            outcome: "interrupted".into(),
            input_tokens: input,
            output_tokens: output,
            cached_tokens: 0,
            cost_usd: cost,
            estimated: true,
            latency_ms: 0,
            created_at: now,
            // Today's totals shared by replicas (PostgreSQL) count the estimate too; the room the
            // dead process held for the call is not known and stays held until the day ends.
            settles: [Spender::Agent(orphan.agent_id.clone()), Spender::Visitor(orphan.visitor_id.clone())]
                .iter()
                .map(|who| SpendSettle {
                    spender: spend::key(who),
                    day: now.div_euclid(DAY_MS),
                    cost_usd: cost,
                    release_usd: 0.0,
                })
                .collect(),
        })
    }
}

/// This machine's name, for the lease row (operators see which host a process ran on).
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_owned()))
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use parley_protocol::{BlockEvent, Token, ToolCall, Usage};

    use super::*;
    use crate::engine::hub::Frame;

    fn row(seq: u64, event: StreamEvent) -> EventRow {
        let frame = Frame::new(seq, event);
        EventRow {
            conversation_id: "c".into(),
            seq,
            last_seq: seq,
            name: frame.event.name().to_owned(),
            data: if let StreamEvent::Token(t) = &frame.event {
                serde_json::to_string(&vec![t.text.clone()]).unwrap()
            } else {
                frame.event.data_json()
            },
            created_at: 0,
        }
    }

    fn token(t: &str) -> StreamEvent {
        StreamEvent::Token(Token { text: t.into() })
    }

    fn call(status: ToolCallStatus) -> StreamEvent {
        StreamEvent::ToolCall(ToolCall {
            call_id: "k1".into(),
            name: "escalate_to_human".into(),
            arguments: serde_json::json!({}),
            status,
            hop: 1,
            error: None,
            duration_ms: None,
        })
    }

    #[test]
    fn rebuilds_text_blocks_calls_and_the_unmetered_call() {
        let block = Block::EscalationButton(parley_protocol::EscalationButton {
            label: "Talk to a person".into(),
            reason: None,
            fallback_text: "Talk to a person".into(),
            away: false,
        });
        let rows = vec![
            row(2, token("Let me ")),
            row(3, StreamEvent::Usage(Usage::default())),
            row(4, call(ToolCallStatus::Started)),
            row(5, call(ToolCallStatus::Succeeded)),
            row(6, StreamEvent::Block(BlockEvent { message_id: "m".into(), block: block.clone() })),
            row(7, StreamEvent::Block(BlockEvent { message_id: "other".into(), block: block.clone() })),
            row(8, token("find a person.")),
        ];
        let s = sent("m", &rows);
        assert_eq!(s.text, "Let me find a person.");
        assert_eq!(s.blocks, vec![block]);
        assert_eq!(s.tool_calls.len(), 1);
        assert_eq!(s.tool_calls[0].status, ToolCallStatus::Succeeded);
        assert_eq!(s.unmetered.as_deref(), Some("find a person."));
    }

    #[test]
    fn a_call_metered_last_leaves_nothing_unmetered_but_a_first_call_in_flight_counts() {
        let metered = vec![row(2, token("Hi")), row(3, StreamEvent::Usage(Usage::default()))];
        assert_eq!(sent("m", &metered).unmetered, None);
        assert_eq!(sent("m", &[]).unmetered, Some(String::new()));
    }
}
