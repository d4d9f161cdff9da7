//! The console's CSV exports: `/admin/leads.csv` and `/admin/conversations.csv`, with the list's
//! own filters, limited to what the signed-in person may see (an operator in a team: their
//! teams' agents and what is assigned to them). Each carries the conversations' labels.

use axum::Router;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use parley_app::server::state::AppState;
use parley_engine::auth::authorize;
use parley_engine::store::console::{self as console_store, ConversationFilter, View};
use parley_engine::store::labels::{self, Label};
use parley_protocol::ApiCode;
use serde::Deserialize;
use tower_sessions::Session;

use super::console::{download, refused};
use crate::api_error::ApiFailure;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/leads.csv", get(leads_csv))
        .route("/admin/conversations.csv", get(conversations_csv))
        .route("/admin/reports.csv", get(report_csv))
        .route("/admin/reports.json", get(report_json))
}

/// The report the Reports page shows for the same query (administrators only).
async fn report_of(
    state: &AppState,
    session: &Session,
    headers: &HeaderMap,
    q: &parley_protocol::report::ReportQuery,
) -> Result<parley_protocol::report::Report, ApiFailure> {
    use parley_engine::engine::reports::ReportError;
    use parley_engine::store::users::Role;
    authorize(&state.engine, session, headers, Some(Role::Admin)).await.map_err(refused)?;
    state.engine.report(q).await.map_err(|e| match e {
        ReportError::Invalid(field, message) => ApiFailure::new(ApiCode::InvalidBody, format!("{field}: {message}")),
        ReportError::Db(e) => e.into(),
    })
}

async fn report_csv(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Query(q): Query<parley_protocol::report::ReportQuery>,
) -> Result<Response, ApiFailure> {
    let report = report_of(&state, &session, &headers, &q).await?;
    let body = parley_engine::engine::reports::csv::to_csv(&report);
    Ok(download("text/csv; charset=utf-8", &format!("report-{}-{}.csv", report.query.from, report.query.to), body))
}

async fn report_json(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Query(q): Query<parley_protocol::report::ReportQuery>,
) -> Result<Response, ApiFailure> {
    let report = report_of(&state, &session, &headers, &q).await?;
    let body = serde_json::to_string_pretty(&report).map_err(|_| ApiFailure::internal())?;
    let name = format!("report-{}-{}.json", report.query.from, report.query.to);
    Ok(download("application/json; charset=utf-8", &name, body))
}

/// Rows one conversations export holds at most (the newest first).
const MAX_ROWS: i64 = 50_000;
/// Rows read per query.
const CHUNK: i64 = 1_000;

/// A cell that a spreadsheet must not read as a formula.
pub fn csv_cell(value: &str) -> String {
    let safe = if value.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{value}") } else { value.to_owned() };
    format!("\"{}\"", safe.replace('"', "\"\""))
}

/// A CSV line of `cells`.
fn line(out: &mut String, cells: &[String]) {
    out.push_str(&cells.iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(","));
    out.push('\n');
}

/// Label names `;`-joined (a label name holds no `;`).
fn names(labels: Option<&Vec<Label>>) -> String {
    labels.map(|ls| ls.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(";")).unwrap_or_default()
}

#[derive(Deserialize)]
struct LeadsFilter {
    status: Option<String>,
}

async fn leads_csv(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Query(filter): Query<LeadsFilter>,
) -> Result<Response, ApiFailure> {
    let me = authorize(&state.engine, &session, &headers, None).await.map_err(refused)?;
    let visible_to = state.engine.visible_to(&me).await?;
    let status = filter.status.as_deref().filter(|s| !s.is_empty());
    let db = state.engine.db();
    let leads = parley_engine::store::leads::all(db, status, visible_to.as_deref()).await?;
    let ids: Vec<String> = leads.iter().map(|l| l.conversation_id.clone()).collect();
    let labels = labels::of_conversations(db, &ids).await?;
    let mut out = String::from("created_at,name,email,phone,message,status,notes,conversation_id,labels\n");
    for l in leads {
        let tags = names(labels.get(&l.conversation_id));
        let row = [
            l.created_at.to_string(),
            l.name,
            l.email.unwrap_or_default(),
            l.phone.unwrap_or_default(),
            l.message,
            l.status,
            l.notes,
            l.conversation_id,
            tags,
        ];
        line(&mut out, &row);
    }
    Ok(download("text/csv; charset=utf-8", "leads.csv", out))
}

/// The conversation list's filters (each empty: any).
#[derive(Deserialize, Default)]
#[serde(default)]
struct ListFilter {
    view: String,
    agent: String,
    status: String,
    team: String,
    label: String,
    from: String,
    to: String,
    user: String,
}

/// `YYYY-MM-DD` (UTC) as the Unix ms of its start plus `after`; empty: `None`.
fn day(field: &str, raw: &str, after: i64) -> Result<Option<i64>, ApiFailure> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    let start = parley_engine::engine::clock::utc_day_start_ms(raw)
        .ok_or_else(|| ApiFailure::new(ApiCode::InvalidBody, format!("{field}: a date is written YYYY-MM-DD.")))?;
    Ok(Some(start + after))
}

/// The conversations of the list as filtered, newest activity first: one line each with whose it
/// is, its labels and counts (at most [`MAX_ROWS`]).
async fn conversations_csv(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Query(f): Query<ListFilter>,
) -> Result<Response, ApiFailure> {
    let me = authorize(&state.engine, &session, &headers, None).await.map_err(refused)?;
    let view = View::parse(&f.view)
        .ok_or_else(|| ApiFailure::new(ApiCode::InvalidBody, "view: all, mine, unassigned or my_teams."))?;
    let (created_from, created_to) = (day("from", &f.from, 0)?, day("to", &f.to, 86_400_000)?);
    let visible_to = state.engine.visible_to(&me).await?;
    fn some(s: &str) -> Option<&str> {
        Some(s).filter(|s| !s.is_empty())
    }
    let by = ConversationFilter {
        agent_id: some(&f.agent),
        status: some(&f.status),
        user: some(&f.user),
        view,
        me: Some(&me.id),
        team_id: some(&f.team),
        label_id: some(&f.label),
        created_from,
        created_to,
        visible_to: visible_to.as_deref(),
    };
    let db = state.engine.db();
    let mut out = String::from(
        "id,created_at,updated_at,agent,status,contact,website_user,email,team,assignee,labels,messages,lead,last_message\n",
    );
    let mut offset = 0;
    while offset < MAX_ROWS {
        let (rows, total) = console_store::conversations(db, by, offset, CHUNK).await?;
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let labels = labels::of_conversations(db, &ids).await?;
        let n = rows.len() as i64;
        for r in rows {
            let contact = r.contact_name.clone().or_else(|| r.user_name.clone()).unwrap_or_default();
            let tags = names(labels.get(&r.id));
            let row = [
                r.id,
                r.created_at.to_string(),
                r.updated_at.to_string(),
                r.agent_name,
                r.status,
                contact,
                r.user_subject.unwrap_or_default(),
                r.user_email.unwrap_or_default(),
                r.team_name.unwrap_or_default(),
                r.assignee_name.unwrap_or_default(),
                tags,
                r.messages.to_string(),
                if r.lead_submitted != 0 { "yes" } else { "no" }.to_owned(),
                r.last_message.unwrap_or_default(),
            ];
            line(&mut out, &row);
        }
        offset += n;
        if n < CHUNK || offset >= total {
            break;
        }
    }
    Ok(download("text/csv; charset=utf-8", "conversations.csv", out))
}

#[cfg(test)]
mod tests {
    use super::{csv_cell, day};

    #[test]
    fn formulas_are_escaped() {
        assert_eq!(csv_cell("=SUM(A1)"), "\"'=SUM(A1)\"");
        assert_eq!(csv_cell("+1"), "\"'+1\"");
        assert_eq!(csv_cell("-2"), "\"'-2\"");
        assert_eq!(csv_cell("@cmd"), "\"'@cmd\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("plain"), "\"plain\"");
    }

    #[test]
    fn dates_are_whole_utc_days() {
        assert_eq!(day("from", "", 0).unwrap(), None);
        assert_eq!(day("from", "1970-01-02", 0).unwrap(), Some(86_400_000));
        assert!(day("to", "02/01/1970", 0).is_err());
    }
}
