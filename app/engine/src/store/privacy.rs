//! Everything about one person, exported or deleted (issue 16), and conversations deleted past an
//! agent's retention period. "A person" is a visitor row: an anonymous visitor, or an identified
//! user's row (which holds what all their browsers did).

use base64::Engine as _;
use serde_json::{Value, json};

use sqlx::AnyConnection;

use super::{Db, DbError, placeholders};

/// A conversation as the export reads it: id, status, created, updated, summary, state, assessment.
type ConversationExportRow = (String, String, i64, i64, Option<String>, Option<String>, Option<String>);

/// Conversations handled per statement when many are deleted.
const CHUNK: usize = 100;

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

/// Everything stored about the person `visitor_id`: who they are, their conversations (messages,
/// events, tool calls), memories, leads, orders, images (base64) and usage. (Rows are read as
/// tuples and go straight into the JSON: a struct per table would only repeat the column lists.)
#[allow(clippy::type_complexity)]
pub async fn export(db: &Db, visitor_id: &str) -> Result<Option<Value>, DbError> {
    let mut conn = db.read().await?;
    let visitor: Option<(String, String, Option<String>, i64, i64)> =
        sqlx::query_as("SELECT id, agent_id, host_origin, created_at, last_seen_at FROM visitors WHERE id = $1")
            .bind(visitor_id)
            .fetch_optional(&mut *conn)
            .await?;
    let Some((id, agent_id, host_origin, created_at, last_seen_at)) = visitor else { return Ok(None) };
    // The contact (issue 43, part 5): what operators wrote, what the page set, what each browser said.
    let contact: (Option<String>, Option<String>, Option<String>, Option<String>) =
        sqlx::query_as("SELECT contact_name, contact_email, contact_phone, attributes FROM visitors WHERE id = $1")
            .bind(visitor_id)
            .fetch_one(&mut *conn)
            .await?;
    let browsers: Vec<(Option<String>, Option<String>, Option<String>, i64, i64)> = sqlx::query_as(
        "SELECT user_agent, language, country, created_at, last_seen_at FROM visitors WHERE id = $1 OR acts_as = $1 \
         ORDER BY created_at",
    )
    .bind(visitor_id)
    .fetch_all(&mut *conn)
    .await?;
    let user: Option<(String, Option<String>, Option<String>, i64)> =
        sqlx::query_as("SELECT subject, name, email, created_at FROM end_users WHERE visitor_id = $1")
            .bind(visitor_id)
            .fetch_optional(&mut *conn)
            .await?;
    let conversations: Vec<ConversationExportRow> = sqlx::query_as(
        "SELECT id, status, created_at, updated_at, summary, consulting_state, assessment FROM conversations \
             WHERE visitor_id = $1 ORDER BY created_at, id",
    )
    .bind(visitor_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut out_conversations = Vec::with_capacity(conversations.len());
    for row in conversations {
        out_conversations.push(export_conversation(&mut conn, row).await?);
    }
    let belongings = export_belongings(&mut conn, visitor_id).await?;
    let mut export = json!({
        "visitor": {"id": id, "agent_id": agent_id, "host_origin": host_origin, "created_at": created_at,
                    "last_seen_at": last_seen_at},
        "contact": {"name": contact.0, "email": contact.1, "phone": contact.2,
                    "attributes": contact.3.as_deref().map(parse)},
        "browsers": browsers.into_iter().map(|(ua, language, country, at, seen)| json!({
            "user_agent": ua, "language": language, "country": country, "created_at": at, "last_seen_at": seen,
        })).collect::<Vec<_>>(),
        "user": user.map(|(sub, name, email, at)| json!({"id": sub, "name": name, "email": email, "created_at": at})),
        "conversations": out_conversations,
    });
    if let Value::Object(out) = &mut export {
        out.extend(belongings);
    }
    Ok(Some(export))
}

/// One conversation of the export: its row, messages, events, ratings and tool calls.
#[allow(clippy::type_complexity)]
async fn export_conversation(conn: &mut AnyConnection, row: ConversationExportRow) -> Result<Value, DbError> {
    let (cid, status, created, updated, summary, state, assessment) = row;
    let messages: Vec<(String, String, String, String, String, Option<String>, i64)> = sqlx::query_as(
        "SELECT id, role, content, blocks, status, author, created_at FROM messages WHERE conversation_id = $1 \
         ORDER BY created_at, id",
    )
    .bind(&cid)
    .fetch_all(&mut *conn)
    .await?;
    let events: Vec<(i64, String, String, i64)> =
        sqlx::query_as("SELECT seq, name, data, created_at FROM events WHERE conversation_id = $1 ORDER BY seq")
            .bind(&cid)
            .fetch_all(&mut *conn)
            .await?;
    let ratings: Vec<(String, i64, Option<String>, i64)> = sqlx::query_as(
        "SELECT message_id, score, comment, updated_at FROM ratings WHERE conversation_id = $1 ORDER BY created_at",
    )
    .bind(&cid)
    .fetch_all(&mut *conn)
    .await?;
    let calls: Vec<(String, String, Option<String>, String, Option<String>, i64)> = sqlx::query_as(
        "SELECT name, arguments, result, status, error, created_at FROM tool_calls WHERE conversation_id = $1 \
         ORDER BY created_at, id",
    )
    .bind(&cid)
    .fetch_all(&mut *conn)
    .await?;
    // The team inbox (issue 43): whose it was, its labels and the operators' private notes about
    // the person (personal data for an access request; never shown in the visitor's panel).
    let whose: Option<(Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT t.name, u.name FROM conversations c LEFT JOIN teams t ON t.id = c.team_id \
         LEFT JOIN users u ON u.id = c.assignee_id WHERE c.id = $1",
    )
    .bind(&cid)
    .fetch_optional(&mut *conn)
    .await?;
    let (team, assignee) = whose.unwrap_or_default();
    let labels: Vec<String> = sqlx::query_scalar(
        "SELECT l.name FROM conversation_labels cl JOIN labels l ON l.id = cl.label_id \
         WHERE cl.conversation_id = $1 ORDER BY l.name_key",
    )
    .bind(&cid)
    .fetch_all(&mut *conn)
    .await?;
    let notes: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT author_name, body, created_at FROM conversation_notes WHERE conversation_id = $1 ORDER BY created_at, id",
    )
    .bind(&cid)
    .fetch_all(&mut *conn)
    .await?;
    // The copilot's hand-over summary (issue 43, part 7): written about them, so theirs to see.
    let handoff_summary: Option<Option<String>> =
        sqlx::query_scalar("SELECT handoff_summary FROM conversations WHERE id = $1")
            .bind(&cid)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(json!({
        "id": cid, "status": status, "created_at": created, "updated_at": updated, "summary": summary,
        "handoff_summary": handoff_summary.flatten(),
        "consulting_state": state, "assessment": assessment, "team": team, "assignee": assignee, "labels": labels,
        "notes": notes.into_iter().map(|(author, body, at)| json!({"author": author, "body": body, "created_at": at}))
            .collect::<Vec<_>>(),
        "messages": messages.into_iter().map(|(id, role, content, blocks, status, author, at)| json!({
            "id": id, "role": role, "content": content, "blocks": parse(&blocks), "status": status,
            "author": author, "created_at": at,
        })).collect::<Vec<_>>(),
        "events": events.into_iter().map(|(seq, name, data, at)| json!({
            "seq": seq, "name": name, "data": parse(&data), "created_at": at,
        })).collect::<Vec<_>>(),
        // `message_id` null: the rating of the whole conversation.
        "ratings": ratings.into_iter().map(|(message, score, comment, at)| json!({
            "message_id": Some(message).filter(|m| !m.is_empty()), "score": score, "comment": comment,
            "updated_at": at,
        })).collect::<Vec<_>>(),
        "tool_calls": calls.into_iter().map(|(name, args, result, status, error, at)| json!({
            "name": name, "arguments": parse(&args), "result": result.as_deref().map(parse), "status": status,
            "error": error, "created_at": at,
        })).collect::<Vec<_>>(),
    }))
}

/// The rest of the export: memories, leads, orders, images (base64) and usage.
#[allow(clippy::type_complexity)]
async fn export_belongings(
    conn: &mut AnyConnection,
    visitor_id: &str,
) -> Result<serde_json::Map<String, Value>, DbError> {
    let memories: Vec<(String, String, Option<String>, i64, i64)> = sqlx::query_as(
        "SELECT kind, content, category, importance, created_at FROM memories WHERE visitor_id = $1 ORDER BY created_at",
    )
    .bind(visitor_id)
    .fetch_all(&mut *conn)
    .await?;
    let leads: Vec<(String, String, String, Option<String>, Option<String>, String, String, i64)> = sqlx::query_as(
        "SELECT id, conversation_id, name, email, phone, message, status, created_at FROM leads WHERE visitor_id = $1 \
         ORDER BY created_at",
    )
    .bind(visitor_id)
    .fetch_all(&mut *conn)
    .await?;
    let orders: Vec<(String, String, String, i64, String, String, String, i64, Option<i64>)> = sqlx::query_as(
        "SELECT id, conversation_id, service_type, amount_minor, currency, method, status, created_at, paid_at \
         FROM orders WHERE visitor_id = $1 ORDER BY created_at",
    )
    .bind(visitor_id)
    .fetch_all(&mut *conn)
    .await?;
    let images: Vec<(String, Option<String>, String, Vec<u8>, i64)> = sqlx::query_as(
        "SELECT id, conversation_id, mime, data, created_at FROM attachments WHERE visitor_id = $1 ORDER BY created_at",
    )
    .bind(visitor_id)
    .fetch_all(&mut *conn)
    .await?;
    let usage: Vec<(Option<String>, String, i64, i64, f64, i64)> = sqlx::query_as(
        "SELECT conversation_id, model, input_tokens, output_tokens, cost_usd, created_at FROM usage_ledger \
         WHERE visitor_id = $1 ORDER BY created_at",
    )
    .bind(visitor_id)
    .fetch_all(&mut *conn)
    .await?;
    let belongings = json!({
        "memories": memories.into_iter().map(|(kind, content, category, importance, at)| json!({
            "kind": kind, "content": content, "category": category, "importance": importance, "created_at": at,
        })).collect::<Vec<_>>(),
        "leads": leads.into_iter().map(|(id, conv, name, email, phone, message, status, at)| json!({
            "id": id, "conversation_id": conv, "name": name, "email": email, "phone": phone, "message": message,
            "status": status, "created_at": at,
        })).collect::<Vec<_>>(),
        "orders": orders.into_iter().map(|(id, conv, service, amount, currency, method, status, at, paid)| json!({
            "id": id, "conversation_id": conv, "service_type": service, "amount_minor": amount, "currency": currency,
            "method": method, "status": status, "created_at": at, "paid_at": paid,
        })).collect::<Vec<_>>(),
        "images": images.into_iter().map(|(id, conv, mime, data, at)| json!({
            "id": id, "conversation_id": conv, "mime": mime, "created_at": at,
            "data_base64": base64::engine::general_purpose::STANDARD.encode(data),
        })).collect::<Vec<_>>(),
        "usage": usage.into_iter().map(|(conv, model, input, output, cost, at)| json!({
            "conversation_id": conv, "model": model, "input_tokens": input, "output_tokens": output,
            "cost_usd": cost, "created_at": at,
        })).collect::<Vec<_>>(),
    });
    let Value::Object(map) = belongings else { unreachable!("a JSON object literal") };
    Ok(map)
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// What a deletion removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deleted {
    pub conversations: u64,
    pub rows: u64,
}

/// Deletes everything about the person `visitor_id` in one transaction: conversations with their
/// messages, events, tool calls, images, leads and orders; memories; the user; every token that
/// reached them. Usage rows stay for the accounts, with only their cost (no link to anyone).
///
/// Contacts an operator merged into this one (issue 43, part 5) are separated again, not deleted
/// (the merge was an operator's judgement, not the person's word), and their search documents
/// are read again at `now` so that nothing of this person's details stays in them.
pub async fn delete_person(db: &Db, visitor_id: &str, now: i64) -> Result<Deleted, DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE visitors SET merged_into = NULL, merged_at = NULL, contact_at = $2 WHERE merged_into = $1")
        .bind(visitor_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    let ids: Vec<(String,)> = sqlx::query_as("SELECT id FROM conversations WHERE visitor_id = $1")
        .bind(visitor_id)
        .fetch_all(&mut *tx)
        .await?;
    let ids: Vec<String> = ids.into_iter().map(|(id,)| id).collect();
    let mut done = purge_conversations(&mut tx, &ids).await?;
    for sql in [
        "DELETE FROM attachments WHERE visitor_id = $1",
        "DELETE FROM leads WHERE visitor_id = $1",
        "DELETE FROM orders WHERE visitor_id = $1",
        "UPDATE usage_ledger SET visitor_id = NULL, conversation_id = NULL, message_id = NULL WHERE visitor_id = $1",
        "DELETE FROM memories WHERE visitor_id = $1",
        "DELETE FROM mail_confirmations WHERE visitor_id = $1",
        "DELETE FROM mail_requests WHERE visitor_id = $1",
        "DELETE FROM end_users WHERE visitor_id = $1",
        "DELETE FROM visitors WHERE acts_as = $1",
        "DELETE FROM visitors WHERE id = $1",
    ] {
        done.rows += sqlx::query(sql).bind(visitor_id).execute(&mut *tx).await?.rows_affected();
    }
    let spender = super::spend::key(&super::usage::Spender::Visitor(visitor_id.to_owned()));
    done.rows +=
        sqlx::query("DELETE FROM spend_days WHERE spender = $1").bind(spender).execute(&mut *tx).await?.rows_affected();
    tx.commit().await?;
    Ok(done)
}

/// Deletes an agent's conversations last active before `before` (Unix ms) with everything
/// attached to them; the visitors and their memories stay.
pub async fn delete_conversations_before(db: &Db, agent_id: &str, before: i64) -> Result<Deleted, DbError> {
    let mut total = Deleted::default();
    loop {
        let mut tx = db.begin_write().await?;
        let ids: Vec<(String,)> = sqlx::query_as(
            "SELECT id FROM conversations WHERE agent_id = $1 AND updated_at < $2 ORDER BY updated_at LIMIT $3",
        )
        .bind(agent_id)
        .bind(before)
        .bind(CHUNK as i64)
        .fetch_all(&mut *tx)
        .await?;
        if ids.is_empty() {
            return Ok(total);
        }
        let ids: Vec<String> = ids.into_iter().map(|(id,)| id).collect();
        let done = purge_conversations(&mut tx, &ids).await?;
        tx.commit().await?;
        total.conversations += done.conversations;
        total.rows += done.rows;
        if ids.len() < CHUNK {
            return Ok(total);
        }
    }
}

/// Deletes the conversations `ids` and what hangs on them, inside `tx`; usage rows lose their
/// link to them.
async fn purge_conversations(tx: &mut Tx<'_>, ids: &[String]) -> Result<Deleted, DbError> {
    let mut done = Deleted::default();
    for chunk in ids.chunks(CHUNK) {
        let list = &placeholders(1, chunk.len())[1..];
        let list = &list[..list.len() - 1];
        // Children before parents (foreign keys).
        for sql in [
            format!("DELETE FROM events WHERE conversation_id IN ({list})"),
            format!(
                "DELETE FROM webhook_attempts WHERE delivery_id IN \
                 (SELECT id FROM webhook_deliveries WHERE conversation_id IN ({list}))"
            ),
            format!("DELETE FROM webhook_deliveries WHERE conversation_id IN ({list})"),
            format!("DELETE FROM ratings WHERE conversation_id IN ({list})"),
            format!("DELETE FROM conversation_notes WHERE conversation_id IN ({list})"),
            format!("DELETE FROM conversation_labels WHERE conversation_id IN ({list})"),
            format!("DELETE FROM operator_notifications WHERE conversation_id IN ({list})"),
            format!("DELETE FROM mail_outbox WHERE conversation_id IN ({list})"),
            format!("DELETE FROM return_tokens WHERE conversation_id IN ({list})"),
            format!("DELETE FROM tool_calls WHERE conversation_id IN ({list})"),
            format!("DELETE FROM attachments WHERE conversation_id IN ({list})"),
            format!("DELETE FROM leads WHERE conversation_id IN ({list})"),
            format!("DELETE FROM orders WHERE conversation_id IN ({list})"),
            format!(
                "UPDATE usage_ledger SET visitor_id = NULL, conversation_id = NULL, message_id = NULL \
                 WHERE conversation_id IN ({list})"
            ),
            format!("DELETE FROM messages WHERE conversation_id IN ({list})"),
            format!("DELETE FROM conversations WHERE id IN ({list})"),
            // After the conversations: a report refresh that read them first waits for this
            // deletion and then finds them gone (`store/reports`).
            format!("DELETE FROM report_handlers WHERE conversation_id IN ({list})"),
            format!("DELETE FROM report_conversations WHERE conversation_id IN ({list})"),
        ] {
            let mut q = sqlx::query(&sql);
            for id in chunk {
                q = q.bind(id);
            }
            let n = q.execute(&mut **tx).await?.rows_affected();
            if sql.starts_with("DELETE FROM conversations") {
                done.conversations += n;
            }
            done.rows += n;
        }
    }
    Ok(done)
}
