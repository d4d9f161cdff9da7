//! Labels (issue 43): owner-defined, coloured tags that operators put on conversations, filter the
//! inbox by, and that webhook payloads and exports carry (by name).

use std::collections::HashMap;

use serde_json::json;

use super::{Db, DbError, new_id, placeholders, webhooks};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

crate::store::row_struct! {
    /// A label as stored.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Label {
        pub id: String,
        pub name: String,
        /// `#rrggbb`.
        pub color: String,
    }
}

/// Longest label name.
pub const MAX_NAME_CHARS: usize = 40;

/// A label name as stored (trimmed), or why it cannot be one.
pub fn name(raw: &str) -> Result<String, &'static str> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err("A label name has 1 to 40 characters.");
    }
    if name.contains(';') || name.chars().any(char::is_control) {
        return Err("A label name cannot hold ';' or control characters.");
    }
    Ok(name.to_owned())
}

/// A colour as stored (`#rrggbb`, lower case), or why it cannot be one.
pub fn color(raw: &str) -> Result<String, &'static str> {
    let raw = raw.trim();
    match raw.strip_prefix('#') {
        Some(hex) if hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit()) => Ok(raw.to_lowercase()),
        _ => Err("A colour is written #rrggbb."),
    }
}

/// Why a label was not saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("another label has this name")]
    NameTaken,
    #[error("no such label")]
    NotFound,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Every label, by name.
pub async fn list(db: &Db) -> Result<Vec<Label>, DbError> {
    sqlx::query_as("SELECT id, name, color FROM labels ORDER BY name_key, id").fetch_all(&mut *db.read().await?).await
}

/// Creates a label (`id` `None`) or renames / recolours one; its id. `name` and `color` are
/// already parsed by [`name`] and [`color`].
pub async fn save(db: &Db, id: Option<&str>, name: &str, color: &str, now: i64) -> Result<String, SaveError> {
    let key = name.to_lowercase();
    let done = match id {
        None => {
            let id = new_id();
            sqlx::query(
                "INSERT INTO labels (id, name, name_key, color, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)",
            )
            .bind(&id)
            .bind(name)
            .bind(&key)
            .bind(color)
            .bind(now)
            .execute(db.writer())
            .await
            .map(|_| Some(id))
        }
        Some(id) => {
            sqlx::query("UPDATE labels SET name = $2, name_key = $3, color = $4, updated_at = $5 WHERE id = $1")
                .bind(id)
                .bind(name)
                .bind(&key)
                .bind(color)
                .bind(now)
                .execute(db.writer())
                .await
                .map(|d| (d.rows_affected() == 1).then(|| id.to_owned()))
        }
    };
    match done {
        Ok(Some(id)) => Ok(id),
        Ok(None) => Err(SaveError::NotFound),
        Err(DbError::Database(d)) if d.is_unique_violation() => Err(SaveError::NameTaken),
        Err(e) => Err(SaveError::Db(e)),
    }
}

/// Deletes a label (and takes it off every conversation); false when there was none.
pub async fn delete(db: &Db, id: &str) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query("DELETE FROM conversation_labels WHERE label_id = $1").bind(id).execute(&mut *tx).await?;
    let done = sqlx::query("DELETE FROM labels WHERE id = $1").bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(done.rows_affected() == 1)
}

/// What [`set_on`] changed: the names of the labels added and removed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changed {
    pub agent_id: String,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// Why labels were not set.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    #[error("conversation not found")]
    NotFound,
    #[error("no such label")]
    UnknownLabel,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Makes the conversation's labels exactly `label_ids`, in one transaction that also reports the
/// change to the agent's webhooks (`conversation.labeled`) when there is one.
pub async fn set_on(
    db: &Db,
    conversation_id: &str,
    label_ids: &[String],
    by: &str,
    now: i64,
) -> Result<Changed, SetError> {
    let mut tx = db.begin_write().await?;
    let agent = webhooks::agent_of_conversation(&mut tx, conversation_id).await?.ok_or(SetError::NotFound)?;
    let mut wanted: Vec<(String, String)> = Vec::new();
    for id in label_ids {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT name FROM labels WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?;
        let (name,) = row.ok_or(SetError::UnknownLabel)?;
        if !wanted.iter().any(|(w, _)| w == id) {
            wanted.push((id.clone(), name));
        }
    }
    let had: Vec<(String, String)> = sqlx::query_as(
        "SELECT l.id, l.name FROM conversation_labels cl JOIN labels l ON l.id = cl.label_id \
         WHERE cl.conversation_id = $1",
    )
    .bind(conversation_id)
    .fetch_all(&mut *tx)
    .await?;
    let mut changed = Changed { agent_id: agent.clone(), ..Changed::default() };
    for (id, name) in &had {
        if !wanted.iter().any(|(w, _)| w == id) {
            sqlx::query("DELETE FROM conversation_labels WHERE conversation_id = $1 AND label_id = $2")
                .bind(conversation_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            changed.removed.push(name.clone());
        }
    }
    for (id, name) in &wanted {
        if !had.iter().any(|(h, _)| h == id) {
            sqlx::query(
                "INSERT INTO conversation_labels (conversation_id, label_id, added_by, added_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(conversation_id)
            .bind(id)
            .bind(by)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            changed.added.push(name.clone());
        }
    }
    if changed.added.is_empty() && changed.removed.is_empty() {
        tx.rollback().await?;
        return Ok(changed);
    }
    let data = json!({
        "conversation_id": conversation_id, "added": changed.added, "removed": changed.removed,
        "by": webhooks::operator(&mut tx, by).await?,
    });
    webhooks::emit(&mut tx, &agent, "conversation.labeled", Some(conversation_id), data, now).await?;
    tx.commit().await?;
    Ok(changed)
}

/// The labels of each of `conversation_ids` (a page of a list), by name.
pub async fn of_conversations(db: &Db, conversation_ids: &[String]) -> Result<HashMap<String, Vec<Label>>, DbError> {
    let mut out: HashMap<String, Vec<Label>> = HashMap::new();
    for chunk in conversation_ids.chunks(100) {
        let list = &placeholders(1, chunk.len());
        let sql = format!(
            "SELECT cl.conversation_id, l.id, l.name, l.color FROM conversation_labels cl \
             JOIN labels l ON l.id = cl.label_id WHERE cl.conversation_id IN {list} ORDER BY l.name_key, l.id"
        );
        let mut q = sqlx::query_as::<_, (String, String, String, String)>(&sql);
        for id in chunk {
            q = q.bind(id);
        }
        for (conversation, id, name, color) in q.fetch_all(&mut *db.read().await?).await? {
            out.entry(conversation).or_default().push(Label { id, name, color });
        }
    }
    Ok(out)
}

/// The names of a conversation's labels, read inside `tx` (for webhook payloads).
pub async fn names_in(tx: &mut Tx<'_>, conversation_id: &str) -> Result<Vec<String>, DbError> {
    sqlx::query_scalar(
        "SELECT l.name FROM conversation_labels cl JOIN labels l ON l.id = cl.label_id \
         WHERE cl.conversation_id = $1 ORDER BY l.name_key, l.id",
    )
    .bind(conversation_id)
    .fetch_all(&mut **tx)
    .await
}
