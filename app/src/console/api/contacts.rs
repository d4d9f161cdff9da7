//! Contacts (issue 43, part 5): the list, one contact's page, operators' details, merging and
//! separating. An operator in a team sees the contacts of their teams' agents and of
//! conversations assigned to them (`docs/inbox.md`, "Contacts").

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
use crate::console::types::{ContactDetail, ContactItem, Page};

#[cfg(feature = "ssr")]
fn item(r: &parley_engine::store::contacts::ContactRow) -> ContactItem {
    ContactItem {
        id: r.id.clone(),
        agent_name: r.agent_name.clone(),
        name: r.display_name(),
        email: r.email(),
        phone: r.phone(),
        user_id: r.user_subject.clone(),
        conversations: r.conversations,
        last_seen_at: r.last_seen_at,
    }
}

/// Contacts a page at a time, most recently seen first; `q` is part of a name, email or phone
/// (or a whole id), `agent` an agent's id (empty: any).
#[server]
pub async fn contacts(
    #[server(default)] q: Option<String>,
    #[server(default)] agent: Option<String>,
    page: i64,
) -> Result<Page<ContactItem>, ConsoleError> {
    use super::paging::{Paging, filter};
    use parley_engine::store::contacts::{self, ContactFilter};
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let paging = Paging::new(page);
    let (q, agent) = (filter(q), filter(agent));
    if q.as_ref().is_some_and(|q| q.chars().count() > 200) {
        return Err(ConsoleError::invalid("q", "Search for at most 200 characters."));
    }
    let visible_to = state.engine.visible_to(&user).await?;
    let by = ContactFilter { agent_id: agent.as_deref(), query: q.as_deref(), visible_to: visible_to.as_deref() };
    let (rows, total) = contacts::page(state.engine.db(), by, paging.offset(), paging.limit()).await?;
    Ok(paging.of(rows.iter().map(item).collect(), total))
}

/// Everything about the contact that the visitor row `id` belongs to (a merged contact's row
/// leads to the one it was merged into).
#[server]
pub async fn contact(id: String) -> Result<ContactDetail, ConsoleError> {
    use crate::console::types::{
        BrowserItem, ContactConversationItem, ContactLeadItem, ContactOrderItem, ContactRatingItem,
    };
    use parley_engine::engine::contacts::browser_label;
    use parley_engine::store::contacts;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let db = state.engine.db();
    let visible_to = state.engine.visible_to(&user).await?;
    let Some(primary) = contacts::contact_of(db, &id).await? else { return Err(ConsoleError::NotFound) };
    let Some(row) = contacts::get(db, &primary, visible_to.as_deref()).await? else {
        return Err(ConsoleError::NotFound);
    };
    let (attributes, browsers, conversations, leads, orders, ratings, memories, merged) = tokio::try_join!(
        contacts::attributes(db, &primary),
        contacts::browsers(db, &primary),
        contacts::conversations(db, &primary, visible_to.as_deref()),
        contacts::leads(db, &primary),
        contacts::orders(db, &primary),
        contacts::ratings(db, &primary),
        contacts::memories(db, &primary),
        contacts::merged(db, &primary),
    )?;
    let attributes = attributes
        .and_then(|json| serde_json::from_str::<serde_json::Value>(&json).ok())
        .map(|v| match v {
            serde_json::Value::Object(map) => map
                .into_iter()
                .map(|(k, v)| (k, v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())))
                .collect(),
            other => vec![("context".to_owned(), other.to_string())],
        })
        .unwrap_or_default();
    let first_seen_at = browsers.iter().map(|b| b.created_at).chain([row.created_at]).min().unwrap_or_default();
    let last_seen_at = browsers.iter().map(|b| b.last_seen_at).chain([row.last_seen_at]).max().unwrap_or_default();
    let mut summary = item(&row);
    summary.last_seen_at = last_seen_at;
    Ok(ContactDetail {
        item: summary,
        agent_id: row.agent_id.clone(),
        contact_name: row.contact_name.clone().unwrap_or_default(),
        contact_email: row.contact_email.clone().unwrap_or_default(),
        contact_phone: row.contact_phone.clone().unwrap_or_default(),
        user_name: row.user_name.clone(),
        user_email: row.user_email.clone(),
        lead_name: row.lead_name.clone(),
        lead_email: row.lead_email.clone(),
        lead_phone: row.lead_phone.clone(),
        attributes,
        first_seen_at,
        browsers: browsers
            .into_iter()
            .map(|b| BrowserItem {
                label: b.user_agent.as_deref().map(browser_label).unwrap_or_else(|| "Not recorded".to_owned()),
                user_agent: b.user_agent,
                language: b.language,
                country: b.country,
                site: b.host_origin,
                first_seen_at: b.created_at,
                last_seen_at: b.last_seen_at,
                signed_out: b.revoked_at.is_some(),
            })
            .collect(),
        conversations: conversations
            .into_iter()
            .map(|c| ContactConversationItem {
                id: c.id,
                status: c.status,
                updated_at: c.updated_at,
                messages: c.messages,
                last_message: c.last_message.unwrap_or_default().chars().take(140).collect(),
                rating: c.rating,
            })
            .collect(),
        leads: leads
            .into_iter()
            .map(|l| ContactLeadItem {
                conversation_id: l.conversation_id,
                name: l.name,
                email: l.email,
                phone: l.phone,
                message: l.message,
                status: l.status,
                created_at: l.created_at,
            })
            .collect(),
        orders: orders
            .into_iter()
            .map(|o| ContactOrderItem {
                conversation_id: o.conversation_id,
                service: o.service_type,
                amount: parley_widget::protocol::format_amount(o.amount_minor, &o.currency),
                status: o.status,
                created_at: o.created_at,
            })
            .collect(),
        ratings: ratings
            .into_iter()
            .map(|r| ContactRatingItem {
                conversation_id: r.conversation_id,
                what: if r.message_id.is_empty() {
                    format!("Rated the conversation {} of 5", r.score)
                } else if r.score > 0 {
                    "An answer was helpful".to_owned()
                } else {
                    "An answer was not helpful".to_owned()
                },
                comment: r.comment,
                updated_at: r.updated_at,
            })
            .collect(),
        memories: memories.into_iter().map(|m| (m.content, m.category)).collect(),
        merged: merged.iter().map(item).collect(),
    })
}

/// Sets the operators' name, email and phone of a contact (empty: cleared).
#[server]
pub async fn save_contact(
    id: String,
    #[server(default)] name: String,
    #[server(default)] email: String,
    #[server(default)] phone: String,
) -> Result<(), ConsoleError> {
    use parley_engine::engine::contacts::Details;
    use parley_engine::store::contacts;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let details = Details::check(&name, &email, &phone).map_err(|(field, why)| ConsoleError::invalid(field, why))?;
    let visible_to = state.engine.visible_to(&user).await?;
    let db = state.engine.db();
    if contacts::get(db, &id, visible_to.as_deref()).await?.is_none() {
        return Err(ConsoleError::NotFound);
    }
    let (n, e, p) = (details.name.as_deref(), details.email.as_deref(), details.phone.as_deref());
    if !contacts::edit(db, &id, n, e, p, state.engine.now_ms()).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.audit(Some(&user), "contact.edit", Some(&id), "").await;
    Ok(())
}

/// Merges the contact `from` into `into` (their conversations, leads, orders, ratings and
/// memories show on `into`'s page from now on).
#[server]
pub async fn merge_contacts(into: String, from: String) -> Result<(), ConsoleError> {
    use parley_engine::store::contacts::MergeError;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    state.engine.merge_contacts(&user, &into, &from).await.map_err(|e| match e {
        MergeError::NotFound => ConsoleError::NotFound,
        MergeError::Db(e) => ConsoleError::internal(e),
        refused => ConsoleError::Conflict(refused.to_string()),
    })?;
    state.engine.audit(Some(&user), "contact.merge", Some(&into), &format!("merged {from}")).await;
    Ok(())
}

/// Separates the contact `from` from `into` again.
#[server]
pub async fn separate_contact(into: String, from: String) -> Result<(), ConsoleError> {
    use parley_engine::store::contacts;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let visible_to = state.engine.visible_to(&user).await?;
    let db = state.engine.db();
    if contacts::get(db, &into, visible_to.as_deref()).await?.is_none() {
        return Err(ConsoleError::NotFound);
    }
    if !contacts::separate(db, &into, &from, state.engine.now_ms()).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.audit(Some(&user), "contact.separate", Some(&into), &format!("separated {from}")).await;
    Ok(())
}
