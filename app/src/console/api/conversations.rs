//! Conversations: the live list, one transcript with its tool calls and usage, and human
//! takeover (claim, reply, typing, release, close).

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
use crate::console::types::{ConversationDetail, ConversationItem, Page};

/// The tool calls of an answer for the console: the answer's own, each expert's calls right after
/// the coordinator's call that ran it (an expert's calls are recorded before that call ends).
#[cfg(feature = "ssr")]
fn nest_expert_calls(
    calls: Vec<parley_engine::store::tool_calls::ToolCallRecord>,
) -> Vec<crate::console::types::ToolCallInfo> {
    use crate::console::types::ToolCallInfo;
    let info = |t: &parley_engine::store::tool_calls::ToolCallRecord, under: Option<String>| ToolCallInfo {
        name: t.name.clone(),
        arguments: t.arguments.clone(),
        result: t.result.clone(),
        status: t.status.as_str().into(),
        error: t.error.clone(),
        duration_ms: t.duration_ms,
        under,
    };
    let (own, by_experts): (Vec<_>, Vec<_>) = calls.iter().partition(|t| t.parent_call_id.is_none());
    let mut out = Vec::with_capacity(calls.len());
    for call in &own {
        out.push(info(call, None));
        for child in by_experts.iter().filter(|c| c.parent_call_id.as_deref() == Some(call.call_id.as_str())) {
            out.push(info(child, Some(call.name.clone())));
        }
    }
    // An expert's calls whose coordinator call was never recorded (a crash): listed at the end.
    for orphan in
        by_experts.iter().filter(|c| !own.iter().any(|o| Some(o.call_id.as_str()) == c.parent_call_id.as_deref()))
    {
        out.push(info(orphan, orphan.parent_call_id.clone()));
    }
    out
}

/// Conversations a page at a time; `agent`, `status` and `user` (the host site's user id of an
/// identified visitor) filter, and so do the inbox's `view` (`all`, `mine`, `unassigned`,
/// `my_teams`), `team`, `label` and the dates `from` / `to` (`YYYY-MM-DD`, UTC, both included).
/// An operator in a team sees only their teams' agents' conversations and their own.
#[server]
#[allow(clippy::too_many_arguments)]
pub async fn conversations(
    agent: Option<String>,
    status: Option<String>,
    page: i64,
    #[server(default)] user: Option<String>,
    #[server(default)] view: Option<String>,
    #[server(default)] team: Option<String>,
    #[server(default)] label: Option<String>,
    #[server(default)] from: Option<String>,
    #[server(default)] to: Option<String>,
) -> Result<Page<ConversationItem>, ConsoleError> {
    use super::paging::{Paging, filter};
    use parley_engine::store::console::{ConversationFilter, View};
    let ConsoleUser { state, user: me } = ConsoleUser::extract().await?;
    let paging = Paging::new(page);
    let (agent, status, user) = (filter(agent), filter(status), filter(user));
    let (team, label) = (filter(team), filter(label));
    let view = View::parse(view.as_deref().unwrap_or_default())
        .ok_or_else(|| ConsoleError::invalid("view", "The view is all, mine, unassigned or my_teams."))?;
    let day = |field: &str, raw: Option<String>, after: i64| -> Result<Option<i64>, ConsoleError> {
        let Some(raw) = filter(raw) else { return Ok(None) };
        let date = chrono::NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d")
            .map_err(|_| ConsoleError::invalid(field, "A date is written YYYY-MM-DD."))?;
        let start = date.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp_millis()).unwrap_or_default();
        Ok(Some(start + after))
    };
    let created_from = day("from", from, 0)?;
    let created_to = day("to", to, 86_400_000)?;
    let visible_to = state.engine.visible_to(&me).await?;
    let by = ConversationFilter {
        agent_id: agent.as_deref(),
        status: status.as_deref(),
        user: user.as_deref(),
        view,
        me: Some(&me.id),
        team_id: team.as_deref(),
        label_id: label.as_deref(),
        created_from,
        created_to,
        visible_to: visible_to.as_deref(),
    };
    let db = state.engine.db();
    let (rows, total) = parley_engine::store::console::conversations(db, by, paging.offset(), paging.limit()).await?;
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let mut labels = parley_engine::store::labels::of_conversations(db, &ids).await?;
    let items = rows
        .into_iter()
        .map(|r| {
            let tags = labels.remove(&r.id).unwrap_or_default();
            with_labels(item(r), tags)
        })
        .collect();
    Ok(paging.of(items, total))
}

#[cfg(feature = "ssr")]
fn with_labels(mut item: ConversationItem, labels: Vec<parley_engine::store::labels::Label>) -> ConversationItem {
    item.labels = labels
        .into_iter()
        .map(|l| crate::console::types::LabelTag { id: l.id, name: l.name, color: l.color })
        .collect();
    item
}

#[cfg(feature = "ssr")]
fn item(r: parley_engine::store::console::ConversationRow) -> ConversationItem {
    ConversationItem {
        id: r.id,
        agent_name: r.agent_name,
        visitor: r.visitor_id.chars().rev().take(6).collect::<String>().chars().rev().collect(),
        visitor_id: r.visitor_id.clone(),
        status: r.status,
        claimed_by: r.claimed_by_name,
        last_message: r.last_message.unwrap_or_default().chars().take(140).collect(),
        messages: r.messages,
        lead_submitted: r.lead_submitted != 0,
        updated_at: r.updated_at,
        user: r.user_subject.map(|id| crate::console::types::UserLabel { id, name: r.user_name, email: r.user_email }),
        assignee_id: r.assignee_id,
        assignee: r.assignee_name,
        team_id: r.team_id,
        team: r.team_name,
        labels: Vec::new(),
        contact_name: r.contact_name,
    }
}

/// One conversation with everything that happened in it.
#[server]
pub async fn conversation(id: String) -> Result<ConversationDetail, ConsoleError> {
    use crate::console::types::{ConsoleMessage, UsageInfo};
    use parley_engine::store::{agents, console, messages, tool_calls, usage};
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let db = state.engine.db();
    if !state.engine.may_see(&user, &id).await? {
        return Err(ConsoleError::NotFound);
    }
    let row = console::conversation(db, &id).await?.ok_or(ConsoleError::NotFound)?;
    let agent = agents::by_id(db, &row.agent_id).await?;
    let mine = row.claimed_by.as_deref() == Some(user.id.as_str());
    let stored = messages::list(db, &id).await?;
    let ledger = usage::of_conversation(db, &id).await?;
    let sent_images = parley_engine::store::attachments::of_conversation(db, &id).await?;
    let ratings = parley_engine::store::ratings::of_conversation(db, &id).await?;
    let rating_of = |target: &str| {
        ratings.iter().find(|(m, _, _)| m == target).map(|(_, score, comment)| (*score, comment.clone()))
    };
    let mut out = Vec::with_capacity(stored.len());
    for m in stored {
        let tools = nest_expert_calls(tool_calls::of_message(db, &m.id).await?);
        let usage = ledger
            .iter()
            .filter(|u| u.message_id.as_deref() == Some(m.id.as_str()))
            .map(|u| UsageInfo {
                model: u.model.clone(),
                outcome: u.outcome.clone(),
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
                cost_usd: u.cost_usd,
            })
            .collect();
        let images = sent_images.iter().filter(|(mid, _)| *mid == m.id).map(|(_, a)| a.id.clone()).collect();
        let rating = rating_of(&m.id);
        out.push(ConsoleMessage {
            rating,
            id: m.id,
            role: m.role.as_str().into(),
            text: m.content,
            author: m.author,
            status: m.status.as_str().into(),
            created_at: m.created_at,
            agent_version: m.agent_version,
            images,
            blocks: m.blocks,
            tools,
            usage,
        });
    }
    let consulting = parley_engine::store::conversations::consulting_state(db, &id).await?;
    let knowledge_bases = parley_engine::store::knowledge::bases_of_agent(db, &row.agent_id)
        .await?
        .into_iter()
        .map(|b| (b.id, b.name))
        .collect();
    let notes = parley_engine::store::notes::of_conversation(db, &id)
        .await?
        .into_iter()
        .map(|n| crate::console::types::NoteItem {
            id: n.id,
            author: n.author_name,
            body: n.body,
            created_at: n.created_at,
        })
        .collect();
    let labels = parley_engine::store::labels::of_conversations(db, std::slice::from_ref(&id))
        .await?
        .remove(&id)
        .unwrap_or_default();
    let summary = parley_engine::store::copilot::summary(db, &id).await?.map(super::copilot::summary_item);
    Ok(ConversationDetail {
        summary,
        notes,
        cost_usd: ledger.iter().map(|u| u.cost_usd).sum(),
        capabilities: agent.map(|a| a.capabilities).unwrap_or_default(),
        mine,
        item: with_labels(item(row), labels),
        messages: out,
        consulting: consulting.as_ref().and_then(consulting_state),
        rating: rating_of(""),
        knowledge_bases,
    })
}

/// A stored consulting state as the console shows it: a known stage, the collected facts as
/// text, a note. `None` when it says nothing of these.
#[cfg(feature = "ssr")]
pub fn consulting_state(state: &serde_json::Value) -> Option<crate::console::types::ConsultingState> {
    use parley_engine::engine::state_tag::STAGES;
    use serde_json::Value;
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let stage = state.get("stage").and_then(Value::as_str).filter(|s| STAGES.contains(s)).map(str::to_owned);
    let facts: Vec<(String, String)> = match state.get("collected") {
        Some(Value::Object(map)) => {
            map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), text(v))).collect()
        }
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![("collected".into(), text(other))],
    };
    let note = state.get("note").map(text).filter(|n| !n.trim().is_empty());
    if stage.is_none() && facts.is_empty() && note.is_none() {
        return None;
    }
    Some(crate::console::types::ConsultingState { stage, facts, note })
}

/// Refuses (as not found) a conversation the user may not see (an operator in a team sees only
/// their teams' agents' conversations and their own; `docs/inbox.md`).
#[cfg(feature = "ssr")]
async fn seen(
    state: &crate::server::state::AppState,
    user: &parley_engine::store::users::User,
    id: &str,
) -> Result<(), ConsoleError> {
    if state.engine.may_see(user, id).await? { Ok(()) } else { Err(ConsoleError::NotFound) }
}

#[cfg(feature = "ssr")]
pub(crate) fn takeover_error(e: parley_engine::engine::takeover::TakeoverError) -> ConsoleError {
    use parley_engine::engine::takeover::TakeoverError;
    match e {
        TakeoverError::NotFound => ConsoleError::NotFound,
        TakeoverError::Refused(why) => ConsoleError::Conflict(why.to_string()),
        TakeoverError::Db(e) => ConsoleError::internal(e),
    }
}

/// Takes the conversation over; `false` when someone else already holds it.
#[server]
pub async fn claim(id: String) -> Result<bool, ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    seen(&state, &user, &id).await?;
    let claimed = state.engine.claim(&id, &user).await.map_err(takeover_error)?;
    if claimed {
        state.engine.audit(Some(&user), "conversation.claim", Some(&id), "").await;
    }
    Ok(claimed)
}

/// Hands the conversation back to the model.
#[server]
pub async fn release(id: String) -> Result<(), ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    seen(&state, &user, &id).await?;
    state.engine.release(&id, &user).await.map_err(takeover_error)?;
    state.engine.audit(Some(&user), "conversation.release", Some(&id), "").await;
    Ok(())
}

/// Closes the conversation: nobody answers it any more.
#[server]
pub async fn close_conversation(id: String) -> Result<(), ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    seen(&state, &user, &id).await?;
    state.engine.close(&id, &user).await.map_err(takeover_error)?;
    state.engine.audit(Some(&user), "conversation.close", Some(&id), "").await;
    Ok(())
}

/// Sends the visitor a message from the person holding the conversation; the answer is its id.
#[server]
pub async fn reply(id: String, text: String) -> Result<String, ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    seen(&state, &user, &id).await?;
    let message = state.engine.operator_reply(&id, &user, &text).await.map_err(takeover_error)?;
    // Who replied where, never what.
    state.engine.audit(Some(&user), "conversation.reply", Some(&id), &format!("message {message}")).await;
    Ok(message)
}

/// Shows the visitor that the operator is typing.
#[server]
pub async fn operator_typing(id: String, active: bool) -> Result<(), ConsoleError> {
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    seen(&state, &user, &id).await?;
    // Only the person holding the conversation shows as typing to the visitor.
    let row =
        parley_engine::store::console::conversation(state.engine.db(), &id).await?.ok_or(ConsoleError::NotFound)?;
    if row.claimed_by.as_deref() != Some(user.id.as_str()) {
        return Err(ConsoleError::Conflict("claim the conversation first".into()));
    }
    state.engine.typing(&id, "operator", active);
    Ok(())
}
