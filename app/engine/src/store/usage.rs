//! The usage ledger: one row per upstream model call attempt, failures included.

use super::script::{Arg, Stmt};
use super::{Db, DbError, new_id};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct UsageRecord {
    pub agent_id: String,
    pub conversation_id: Option<String>,
    pub message_id: Option<String>,
    /// The visitor the call answered (their daily cap counts it).
    pub visitor_id: Option<String>,
    pub provider: String,
    pub model: String,
    /// `ok`, or the error class of a failed attempt (`rate_limited`, `server_error`, ...).
    pub outcome: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    /// The provider sent no usage: the token counts are estimated from the text.
    pub estimated: bool,
    pub latency_ms: u64,
    pub created_at: i64,
    /// With replicas on PostgreSQL: the daily totals this call settles, in the ledger row's
    /// transaction (empty on SQLite, whose one process keeps them in memory).
    pub settles: Vec<super::spend::SpendSettle>,
}

const COLUMNS: &str = "usage_ledger (id, agent_id, conversation_id, message_id, provider, model, outcome, \
     input_tokens, output_tokens, cached_tokens, cost_usd, latency_ms, created_at, visitor_id, estimated)";

fn row(r: &UsageRecord) -> Vec<Arg> {
    vec![
        Arg::from(new_id()),
        Arg::from(&r.agent_id),
        Arg::from(&r.conversation_id),
        Arg::from(&r.message_id),
        Arg::from(&r.provider),
        Arg::from(&r.model),
        Arg::from(&r.outcome),
        Arg::from(r.input_tokens),
        Arg::from(r.output_tokens),
        Arg::from(r.cached_tokens),
        Arg::from(r.cost_usd),
        Arg::from(r.latency_ms),
        Arg::from(r.created_at),
        Arg::from(&r.visitor_id),
        Arg::from(i64::from(r.estimated)),
    ]
}

/// The statement recording one attempt.
pub fn insert_stmt(r: &UsageRecord) -> Stmt {
    insert_stmts(std::slice::from_ref(r)).remove(0)
}

/// Statements recording many attempts, 200 rows per statement.
pub fn insert_stmts(records: &[UsageRecord]) -> Vec<Stmt> {
    super::insert_rows(COLUMNS, 15, records.iter().map(row).collect(), 200)
}

/// The ledger rows of a conversation, oldest first.
pub async fn of_conversation(db: &Db, conversation_id: &str) -> Result<Vec<UsageRecord>, DbError> {
    crate::store::row_struct! {
        struct Row {
            agent_id: String,
            message_id: Option<String>,
            visitor_id: Option<String>,
            provider: String,
            model: String,
            outcome: String,
            input_tokens: i64,
            output_tokens: i64,
            cached_tokens: i64,
            cost_usd: f64,
            estimated: i64,
            latency_ms: i64,
            created_at: i64,
        }
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT agent_id, message_id, visitor_id, provider, model, outcome, input_tokens, output_tokens, \
         cached_tokens, cost_usd, estimated, latency_ms, created_at FROM usage_ledger WHERE conversation_id = $1 \
         ORDER BY created_at, id",
    )
    .bind(conversation_id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(rows
        .into_iter()
        .map(|r| UsageRecord {
            agent_id: r.agent_id,
            conversation_id: Some(conversation_id.to_owned()),
            message_id: r.message_id,
            visitor_id: r.visitor_id,
            provider: r.provider,
            model: r.model,
            outcome: r.outcome,
            input_tokens: n(r.input_tokens),
            output_tokens: n(r.output_tokens),
            cached_tokens: n(r.cached_tokens),
            cost_usd: r.cost_usd,
            estimated: r.estimated != 0,
            latency_ms: n(r.latency_ms),
            created_at: r.created_at,
            settles: Vec::new(),
        })
        .collect())
}

/// What a conversation has cost so far.
pub async fn conversation_cost(db: &Db, conversation_id: &str) -> Result<f64, DbError> {
    let total: Option<f64> = sqlx::query_scalar("SELECT SUM(cost_usd) FROM usage_ledger WHERE conversation_id = $1")
        .bind(conversation_id)
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok(total.unwrap_or(0.0))
}

/// Whose spend a daily total counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Spender {
    /// Every model call of the agent.
    Agent(String),
    /// Every model call answering the visitor, all conversations and agents together.
    Visitor(String),
    /// Every model call answering a visitor from one address (IPv6 by /64,
    /// [`crate::net::address_group`]): many free visitor tokens from one place share it. The
    /// ledger does not record addresses, so its day lives in `spend_days` alone, on either database.
    Address(String),
}

/// What a spender's model calls have cost since `since_ms`.
pub async fn spend_since(db: &Db, who: &Spender, since_ms: i64) -> Result<f64, DbError> {
    let (sql, id) = match who {
        Spender::Agent(id) => ("SELECT SUM(cost_usd) FROM usage_ledger WHERE agent_id = $1 AND created_at >= $2", id),
        Spender::Visitor(id) => {
            ("SELECT SUM(cost_usd) FROM usage_ledger WHERE visitor_id = $1 AND created_at >= $2", id)
        }
        // Not in the ledger: a new day row starts at nothing (see `Spender::Address`).
        Spender::Address(_) => return Ok(0.0),
    };
    let total: Option<f64> = sqlx::query_scalar(sql).bind(id).bind(since_ms).fetch_one(&mut *db.read().await?).await?;
    Ok(total.unwrap_or(0.0))
}

/// Each agent's spend since `since_ms` (the dashboard's today).
pub async fn spend_by_agent_since(db: &Db, since_ms: i64) -> Result<Vec<(String, f64)>, DbError> {
    let rows: Vec<(String, Option<f64>)> =
        sqlx::query_as("SELECT agent_id, SUM(cost_usd) FROM usage_ledger WHERE created_at >= $1 GROUP BY agent_id")
            .bind(since_ms)
            .fetch_all(&mut *db.read().await?)
            .await?;
    Ok(rows.into_iter().map(|(a, s)| (a, s.unwrap_or(0.0))).collect())
}
