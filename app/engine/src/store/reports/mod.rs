//! The reports' roll-up (issue 45, part 1; `docs/reports.md`): one row of facts per
//! conversation in `report_conversations` (and its writers in `report_handlers`), rebuilt for the
//! conversations whose rows, messages, ratings or spend changed since the last refresh. What the
//! facts are is worked out in `engine/reports/facts.rs`; this module reads the raw rows and
//! stores the result. [`query`] reads reports off the roll-up.

pub mod query;

use super::script::{self, Arg, Stmt};
use super::{Db, DbError, DbKind, insert_rows, row_struct};

/// Conversations read and rebuilt per round.
pub const CHUNK: usize = 400;

row_struct! {
    /// A conversation as the roll-up needs it.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ConvRow {
        pub id: String,
        pub agent_id: String,
        pub team_id: Option<String>,
        pub person_id: String,
        pub status: String,
        pub created_at: i64,
        pub trial: i64,
    }
}

row_struct! {
    /// One message, without its text.
    #[derive(Clone, Debug, PartialEq)]
    pub struct MsgRow {
        pub conversation_id: String,
        pub role: String,
        pub status: String,
        pub author: Option<String>,
        pub author_id: Option<String>,
        pub agent_version: Option<i64>,
        pub created_at: i64,
    }
}

row_struct! {
    /// A status change (`handoff` stream event): `data` is its JSON (`{"to": …}`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct HandoffRow {
        pub conversation_id: String,
        pub data: String,
        pub created_at: i64,
    }
}

row_struct! {
    /// A tool call that says something about an answer's confidence or a request for a person.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ToolRow {
        pub conversation_id: String,
        pub name: String,
        pub result: Option<String>,
        pub created_at: i64,
    }
}

row_struct! {
    /// A rating: of an answer (`message_id`, ±1) or of the conversation (`''`, 1 to 5).
    #[derive(Clone, Debug, PartialEq)]
    pub struct RatingRow {
        pub conversation_id: String,
        pub message_id: String,
        pub score: i64,
    }
}

/// Everything the facts of one conversation are made of.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Raw {
    pub conv: Option<ConvRow>,
    pub messages: Vec<MsgRow>,
    pub handoffs: Vec<HandoffRow>,
    pub tools: Vec<ToolRow>,
    pub ratings: Vec<RatingRow>,
    pub spend_usd: f64,
}

/// One row of `report_conversations`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    pub conversation_id: String,
    pub agent_id: String,
    pub team_id: Option<String>,
    pub person_id: String,
    pub created_at: i64,
    pub version: Option<i64>,
    pub messages: i64,
    pub answered: bool,
    pub closed: bool,
    pub last_activity_at: i64,
    pub unreplied_since: Option<i64>,
    pub handed_over_at: Option<i64>,
    pub handover_reason: Option<&'static str>,
    pub first_response_at: Option<i64>,
    pub first_response_by: Option<String>,
    pub first_response_business_ms: Option<i64>,
    pub closed_by_person_at: Option<i64>,
    pub resolution_business_ms: Option<i64>,
    pub rated_down: bool,
    pub thumbs_up: i64,
    pub thumbs_down: i64,
    pub csat: Option<i64>,
    pub spend_usd: f64,
    /// The console users who wrote in it, with their first message's time.
    pub handlers: Vec<(String, i64)>,
}

/// Where the last refresh read up to.
pub async fn cursor(db: &Db) -> Result<i64, DbError> {
    let (upto,): (i64,) =
        sqlx::query_as("SELECT upto FROM report_refresh WHERE id = 1").fetch_one(&mut *db.read().await?).await?;
    Ok(upto)
}

/// Moves the cursor to `upto` (never back: a replica whose clock is behind leaves it).
pub async fn advance_cursor(db: &Db, upto: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE report_refresh SET upto = $1 WHERE id = 1 AND upto < $1")
        .bind(upto)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Conversations whose row, messages, ratings or spend changed at or after `since`.
pub async fn changed_since(db: &Db, since: i64) -> Result<Vec<String>, DbError> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT id FROM conversations WHERE updated_at >= $1 \
         UNION SELECT conversation_id FROM messages WHERE updated_at >= $1 \
         UNION SELECT conversation_id FROM ratings WHERE updated_at >= $1 \
         UNION SELECT conversation_id FROM usage_ledger WHERE created_at >= $1 AND conversation_id IS NOT NULL",
    )
    .bind(since)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// Console users by name (operator replies written before their author's id was kept).
pub async fn users_by_name(db: &Db) -> Result<Vec<(String, String)>, DbError> {
    sqlx::query_as("SELECT name, id FROM users ORDER BY created_at").fetch_all(&mut *db.read().await?).await
}

/// `IN (...)` over `ids`, its placeholders from `$first`.
fn list(first: usize, n: usize) -> String {
    (first..first + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(",")
}

/// The raw rows of the conversations `ids` (at most [`CHUNK`]), in the order given; a
/// conversation that is gone has `conv: None`.
pub async fn read(db: &Db, ids: &[String]) -> Result<Vec<Raw>, DbError> {
    let mut conn = db.read().await?;
    let within = list(1, ids.len());
    macro_rules! rows {
        ($ty:ty, $sql:expr) => {{
            let sql = $sql;
            let mut q = sqlx::query_as::<_, $ty>(&sql);
            for id in ids {
                q = q.bind(id);
            }
            q.fetch_all(&mut *conn).await?
        }};
    }
    let convs = rows!(
        ConvRow,
        format!(
            "SELECT c.id, c.agent_id, c.team_id, COALESCE(v.merged_into, v.id) AS person_id, c.status, \
             c.created_at, c.trial FROM conversations c JOIN visitors v ON v.id = c.visitor_id WHERE c.id IN ({within})"
        )
    );
    let messages = rows!(
        MsgRow,
        format!(
            "SELECT conversation_id, role, status, author, author_id, agent_version, created_at FROM messages \
             WHERE conversation_id IN ({within}) ORDER BY conversation_id, created_at, id"
        )
    );
    let handoffs = rows!(
        HandoffRow,
        format!(
            "SELECT conversation_id, data, created_at FROM events WHERE name = 'handoff' \
             AND conversation_id IN ({within}) ORDER BY conversation_id, seq"
        )
    );
    let tools = rows!(
        ToolRow,
        format!(
            "SELECT conversation_id, name, result, created_at FROM tool_calls WHERE conversation_id IN ({within}) \
             AND name IN ('search_knowledge', 'check_off_topic', 'escalate_to_human') ORDER BY conversation_id, created_at"
        )
    );
    let ratings = rows!(
        RatingRow,
        format!("SELECT conversation_id, message_id, score FROM ratings WHERE conversation_id IN ({within})")
    );
    let spend: Vec<(String, f64)> = {
        let sql = format!(
            "SELECT conversation_id, SUM(cost_usd) FROM usage_ledger WHERE conversation_id IN ({within}) \
             GROUP BY conversation_id"
        );
        let mut q = sqlx::query_as(&sql);
        for id in ids {
            q = q.bind(id);
        }
        q.fetch_all(&mut *conn).await?
    };
    let mut out: Vec<Raw> = vec![Raw::default(); ids.len()];
    let at: std::collections::HashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    for c in convs {
        if let Some(&i) = at.get(c.id.as_str()) {
            out[i].conv = Some(c);
        }
    }
    for m in messages {
        if let Some(&i) = at.get(m.conversation_id.as_str()) {
            out[i].messages.push(m);
        }
    }
    for h in handoffs {
        if let Some(&i) = at.get(h.conversation_id.as_str()) {
            out[i].handoffs.push(h);
        }
    }
    for t in tools {
        if let Some(&i) = at.get(t.conversation_id.as_str()) {
            out[i].tools.push(t);
        }
    }
    for r in ratings {
        if let Some(&i) = at.get(r.conversation_id.as_str()) {
            out[i].ratings.push(r);
        }
    }
    for (id, usd) in spend {
        if let Some(&i) = at.get(id.as_str()) {
            out[i].spend_usd = usd;
        }
    }
    Ok(out)
}

/// Replaces the roll-up rows of the conversations `ids` with `facts` (a conversation of `ids`
/// without facts, gone or a trial, loses its rows), in one transaction. A replica that stored
/// the same conversation a moment earlier keeps its row; a conversation deleted meanwhile keeps
/// none.
pub async fn store(db: &Db, ids: &[String], facts: &[Facts], now: i64) -> Result<(), DbError> {
    let within = list(1, ids.len());
    let ids_args = || ids.iter().map(|id| Arg::Text(id.clone())).collect::<Vec<_>>();
    let mut stmts = Vec::new();
    // A conversation deleted while its facts were worked out must not leave them behind. On
    // PostgreSQL the conversations are locked against deletion until this commits (a deletion
    // under way first ends); on SQLite writes take turns. Either way the rows of conversations
    // gone by now are removed at the end.
    if db.kind() == DbKind::Postgres {
        stmts.push(Stmt::new(format!("SELECT id FROM conversations WHERE id IN ({within}) FOR SHARE"), ids_args()));
    }
    stmts.push(Stmt::new(format!("DELETE FROM report_handlers WHERE conversation_id IN ({within})"), ids_args()));
    stmts.push(Stmt::new(format!("DELETE FROM report_conversations WHERE conversation_id IN ({within})"), ids_args()));
    let rows: Vec<Vec<Arg>> = facts
        .iter()
        .map(|f| {
            vec![
                Arg::Text(f.conversation_id.clone()),
                Arg::Text(f.agent_id.clone()),
                Arg::MaybeText(f.team_id.clone()),
                Arg::Text(f.person_id.clone()),
                Arg::Int(f.created_at),
                Arg::MaybeInt(f.version),
                Arg::Int(f.messages),
                Arg::Int(i64::from(f.answered)),
                Arg::Int(i64::from(f.closed)),
                Arg::Int(f.last_activity_at),
                Arg::MaybeInt(f.unreplied_since),
                Arg::MaybeInt(f.handed_over_at),
                Arg::MaybeText(f.handover_reason.map(str::to_owned)),
                Arg::MaybeInt(f.first_response_at),
                Arg::MaybeText(f.first_response_by.clone()),
                Arg::MaybeInt(f.first_response_business_ms),
                Arg::MaybeInt(f.closed_by_person_at),
                Arg::MaybeInt(f.resolution_business_ms),
                Arg::Int(i64::from(f.rated_down)),
                Arg::Int(f.thumbs_up),
                Arg::Int(f.thumbs_down),
                Arg::MaybeInt(f.csat),
                Arg::Float(f.spend_usd),
                Arg::Int(now),
            ]
        })
        .collect();
    for mut s in insert_rows(
        "report_conversations (conversation_id, agent_id, team_id, person_id, created_at, version, messages, \
         answered, closed, last_activity_at, unreplied_since, handed_over_at, handover_reason, first_response_at, \
         first_response_by, first_response_business_ms, closed_by_person_at, resolution_business_ms, rated_down, \
         thumbs_up, thumbs_down, csat, spend_usd, refreshed_at)",
        24,
        rows,
        100,
    ) {
        s.sql.push_str(" ON CONFLICT DO NOTHING");
        stmts.push(s);
    }
    let handlers: Vec<Vec<Arg>> = facts
        .iter()
        .flat_map(|f| {
            f.handlers
                .iter()
                .map(|(user, at)| vec![Arg::Text(f.conversation_id.clone()), Arg::Text(user.clone()), Arg::Int(*at)])
        })
        .collect();
    for mut s in insert_rows("report_handlers (conversation_id, user_id, first_at)", 3, handlers, 500) {
        s.sql.push_str(" ON CONFLICT DO NOTHING");
        stmts.push(s);
    }
    for table in ["report_handlers", "report_conversations"] {
        stmts.push(Stmt::new(
            format!(
                "DELETE FROM {table} WHERE conversation_id IN ({within}) \
                 AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.id = {table}.conversation_id)"
            ),
            ids_args(),
        ));
    }
    let mut conn = db.writer().acquire().await?;
    script::run(&mut conn, db.kind(), &stmts).await
}
