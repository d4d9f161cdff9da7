//! The answer quality loop (every console user): unanswered questions, a reply saved as a
//! knowledge article, saved replies.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::ConsoleUser;
use crate::console::error::ConsoleError;
use crate::console::types::{SavedReplyItem, UnansweredGroup};

/// Signals of each kind read at most.
#[cfg(feature = "ssr")]
const SIGNALS: i64 = 2000;

/// Visitor questions of the last `days` days (1 to 90) that went unanswered, grouped by
/// similarity; for one agent, or all when `agent_id` is empty.
#[server]
pub async fn unanswered_questions(
    #[server(default)] agent_id: String,
    days: i64,
) -> Result<Vec<UnansweredGroup>, ConsoleError> {
    use parley_engine::engine::answers::group;
    use parley_engine::store::unanswered;
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    if !(1..=90).contains(&days) {
        return Err(ConsoleError::invalid("days", "From 1 to 90 days."));
    }
    let since = state.engine.now_ms() - days * 86_400_000;
    let agent = Some(agent_id.as_str()).filter(|a| !a.is_empty());
    let found = unanswered::since(state.engine.db(), agent, since, SIGNALS).await?;
    Ok(group(found)
        .into_iter()
        .take(200)
        .map(|g| UnansweredGroup {
            question: g.question,
            count: g.count,
            reasons: g.reasons.into_iter().map(|(r, n)| (r.label().to_owned(), n)).collect(),
            conversations: g.conversations.into_iter().take(10).collect(),
            last_at: g.last_at,
        })
        .collect())
}

/// Saves a reply (or an answer, as the operator edited it) as a knowledge article of the
/// conversation's agent; the article's id. Searchable at once.
#[server]
pub async fn save_as_article(
    conversation_id: String,
    message_id: String,
    #[server(default)] knowledge_base_id: String,
    title: String,
    body: String,
) -> Result<String, ConsoleError> {
    use parley_engine::engine::answers::SaveAnswerError;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let base = Some(knowledge_base_id.as_str()).filter(|b| !b.is_empty());
    let id =
        state.engine.save_answer_as_article(&conversation_id, &message_id, base, &title, &body).await.map_err(|e| {
            match e {
                SaveAnswerError::NotFound => ConsoleError::NotFound,
                SaveAnswerError::Invalid(field, message) => ConsoleError::invalid(field, message),
                SaveAnswerError::Db(e) => e.into(),
                SaveAnswerError::Knowledge(e) => ConsoleError::internal(e),
            }
        })?;
    state.engine.audit(Some(&user), "article.from_reply", Some(&id), title.trim()).await;
    Ok(id)
}

/// An agent's saved replies.
#[server]
pub async fn saved_replies(agent_id: String) -> Result<Vec<SavedReplyItem>, ConsoleError> {
    use parley_engine::store::saved_replies;
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    Ok(saved_replies::of_agent(state.engine.db(), &agent_id)
        .await?
        .into_iter()
        .map(|r| SavedReplyItem { id: r.id, shortcut: r.shortcut, body: r.body })
        .collect())
}

/// The saved replies of a conversation's agent (the reply box's `/`).
#[server]
pub async fn conversation_replies(conversation_id: String) -> Result<Vec<SavedReplyItem>, ConsoleError> {
    use parley_engine::store::{conversations, saved_replies};
    let ConsoleUser { state, .. } = ConsoleUser::extract().await?;
    let db = state.engine.db();
    let conv = conversations::by_id(db, &conversation_id).await?.ok_or(ConsoleError::NotFound)?;
    Ok(saved_replies::of_agent(db, &conv.agent_id)
        .await?
        .into_iter()
        .map(|r| SavedReplyItem { id: r.id, shortcut: r.shortcut, body: r.body })
        .collect())
}

/// Adds a saved reply, or rewrites the one with the same shortcut.
#[server]
pub async fn save_reply(agent_id: String, shortcut: String, body: String) -> Result<String, ConsoleError> {
    use crate::console::types::FieldError;
    use parley_engine::store::{agents, saved_replies};
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let shortcut = saved_replies::shortcut(&shortcut);
    let body = body.trim();
    let mut errors = Vec::new();
    if let Err(e) = &shortcut {
        errors.push(FieldError::new("shortcut", *e));
    }
    if body.is_empty() || body.chars().count() > saved_replies::MAX_BODY_CHARS {
        errors.push(FieldError::new("body", format!("1 to {} characters.", saved_replies::MAX_BODY_CHARS)));
    }
    let (Ok(shortcut), true) = (shortcut, errors.is_empty()) else { return Err(ConsoleError::Invalid(errors)) };
    let id = saved_replies::save(db, &agent.id, &shortcut, body, &user.id, state.engine.now_ms()).await?;
    state.engine.audit(Some(&user), "reply.save", Some(&agent.public_key), &format!("/{shortcut}")).await;
    Ok(id)
}

/// Deletes a saved reply.
#[server]
pub async fn delete_saved_reply(id: String) -> Result<(), ConsoleError> {
    use parley_engine::store::saved_replies;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    if !saved_replies::delete(state.engine.db(), &id).await? {
        return Err(ConsoleError::NotFound);
    }
    state.engine.audit(Some(&user), "reply.delete", None, &id).await;
    Ok(())
}
