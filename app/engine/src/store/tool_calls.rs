//! Tool calls made while answering, with their arguments, results and timing.

use parley_protocol::{ToolCallStatus, ToolCallSummary};

use super::script::{Arg, Stmt};
use super::{Db, DbError, new_id};

/// A finished tool call to record.
#[derive(Clone, Debug)]
pub struct ToolCallRecord {
    pub message_id: String,
    pub conversation_id: String,
    pub call_id: String,
    pub hop: u32,
    pub name: String,
    pub arguments: String,
    pub result: Option<String>,
    pub status: ToolCallStatus,
    pub error: Option<String>,
    pub duration_ms: u64,
    pub created_at: i64,
    /// For a call an expert made: the `call_id` of the coordinator's `invoke_<expert>` call.
    pub parent_call_id: Option<String>,
}

const COLUMNS: &str = "tool_calls (id, message_id, conversation_id, call_id, hop, name, arguments, result, \
     status, error, duration_ms, created_at, parent_call_id)";

fn row(r: &ToolCallRecord) -> Vec<Arg> {
    vec![
        Arg::from(new_id()),
        Arg::from(&r.message_id),
        Arg::from(&r.conversation_id),
        Arg::from(&r.call_id),
        Arg::from(i64::from(r.hop)),
        Arg::from(&r.name),
        Arg::from(&r.arguments),
        Arg::from(&r.result),
        Arg::from(r.status.as_str()),
        Arg::from(&r.error),
        Arg::from(r.duration_ms),
        Arg::from(r.created_at),
        Arg::from(&r.parent_call_id),
    ]
}

/// The statement recording a tool call.
pub fn insert_stmt(r: &ToolCallRecord) -> Stmt {
    insert_stmts(std::slice::from_ref(r)).remove(0)
}

/// Statements recording many tool calls, 200 rows per statement.
pub fn insert_stmts(records: &[ToolCallRecord]) -> Vec<Stmt> {
    super::insert_rows(COLUMNS, 13, records.iter().map(row).collect(), 200)
}

/// Tool calls of every message in a conversation, as `(message_id, summary)` in call order: the
/// answer's own calls, as the visitor saw them (an expert's calls are the console's).
pub async fn of_conversation(db: &Db, conversation_id: &str) -> Result<Vec<(String, ToolCallSummary)>, DbError> {
    let rows: Vec<(String, String, String, String, Option<i64>)> = sqlx::query_as(
        "SELECT message_id, call_id, name, status, duration_ms FROM tool_calls \
         WHERE conversation_id = $1 AND parent_call_id IS NULL ORDER BY created_at, id",
    )
    .bind(conversation_id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(message_id, call_id, name, status, duration_ms)| {
            let summary = ToolCallSummary {
                call_id,
                name,
                status: ToolCallStatus::parse(&status).unwrap_or(ToolCallStatus::Failed),
                duration_ms: duration_ms.and_then(|d| u64::try_from(d).ok()),
            };
            (message_id, summary)
        })
        .collect())
}

/// Everything recorded about the tool calls of one message (for tests and the console).
pub async fn of_message(db: &Db, message_id: &str) -> Result<Vec<ToolCallRecord>, DbError> {
    crate::store::row_struct! {
        struct Row {
            message_id: String,
            conversation_id: String,
            call_id: String,
            hop: i64,
            name: String,
            arguments: String,
            result: Option<String>,
            status: String,
            error: Option<String>,
            duration_ms: Option<i64>,
            created_at: i64,
            parent_call_id: Option<String>,
        }
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT message_id, conversation_id, call_id, hop, name, arguments, result, status, error, \
         duration_ms, created_at, parent_call_id FROM tool_calls WHERE message_id = $1 ORDER BY created_at, id",
    )
    .bind(message_id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| ToolCallRecord {
            message_id: r.message_id,
            conversation_id: r.conversation_id,
            call_id: r.call_id,
            hop: u32::try_from(r.hop).unwrap_or(0),
            name: r.name,
            arguments: r.arguments,
            result: r.result,
            status: ToolCallStatus::parse(&r.status).unwrap_or(ToolCallStatus::Failed),
            error: r.error,
            duration_ms: r.duration_ms.and_then(|d| u64::try_from(d).ok()).unwrap_or(0),
            created_at: r.created_at,
            parent_call_id: r.parent_call_id,
        })
        .collect())
}
