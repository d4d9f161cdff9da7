//! Drafts, publishing and history (issue 45, part 3). What an agent *does* — its instructions,
//! model, fallback model, capabilities (its tools, the expert team, the knowledge base) and
//! narrowed tools: its [`Behaviour`] — is published in numbered versions. Changes wait in a
//! draft (one per agent) while the `agents` row keeps serving the published version; publishing
//! writes the row and the version in one transaction, and restoring an earlier version publishes
//! its behaviour again, exactly, as a new version. The look, the sites and the credentials are
//! not versioned: they change on save.
//!
//! An agent's row says which version it holds (`agents.version`); 0 means none was recorded yet
//! (agents from before versions, or made by a seed): its behaviour becomes version 1 when the first
//! change is published, so [`super::Agent::version`] reads 0 as 1.

use super::super::{Db, DbError, from_json_text, to_json_text};
use super::Agent;

pub use super::behaviour::{Behaviour, BehaviourInput, MAX_PROMPT_CHARS};

/// One published version.
#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    pub version: i64,
    pub behaviour: Behaviour,
    /// The console user who published it (`None`: made before versions were kept, or by a seed).
    pub published_by: Option<String>,
    pub published_at: i64,
    /// Why: the publisher's note, or how it came about.
    pub note: String,
    /// What changed from the version before (see [`Behaviour::changes_from`]), comma-separated.
    pub changes: String,
    /// The version this one brought back.
    pub restored_from: Option<i64>,
}

/// An agent's draft.
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    pub behaviour: Behaviour,
    /// The published version the draft started from.
    pub base_version: i64,
    pub updated_by: Option<String>,
    pub updated_at: i64,
}

/// Why a version was not published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("There is no such agent.")]
    NoAgent,
    #[error("There is no draft to publish.")]
    NoDraft,
    #[error("There is no such version.")]
    NoVersion,
    #[error("Nothing would change: the published version already does this.")]
    Unchanged,
    /// Someone else published in between.
    #[error("The agent was published by someone else meanwhile; look again and retry.")]
    Changed,
    #[error(transparent)]
    Db(#[from] DbError),
}

crate::store::row_struct! {
    struct VersionRow {
        version: i64,
        behaviour: String,
        published_by: Option<String>,
        published_at: i64,
        note: String,
        changes: String,
        restored_from: Option<i64>,
    }
}

impl From<VersionRow> for Version {
    fn from(r: VersionRow) -> Version {
        Version {
            version: r.version,
            behaviour: from_json_text(&r.behaviour),
            published_by: r.published_by,
            published_at: r.published_at,
            note: r.note,
            changes: r.changes,
            restored_from: r.restored_from,
        }
    }
}

const VERSION_COLUMNS: &str = "version, behaviour, published_by, published_at, note, changes, restored_from";

/// An agent's published versions, newest first (empty: none recorded yet).
pub async fn list(db: &Db, agent_id: &str) -> Result<Vec<Version>, DbError> {
    let sql = format!("SELECT {VERSION_COLUMNS} FROM agent_versions WHERE agent_id = $1 ORDER BY version DESC");
    let rows: Vec<VersionRow> = sqlx::query_as(&sql).bind(agent_id).fetch_all(&mut *db.read().await?).await?;
    Ok(rows.into_iter().map(Version::from).collect())
}

/// One published version.
pub async fn get(db: &Db, agent_id: &str, version: i64) -> Result<Option<Version>, DbError> {
    let sql = format!("SELECT {VERSION_COLUMNS} FROM agent_versions WHERE agent_id = $1 AND version = $2");
    let row: Option<VersionRow> =
        sqlx::query_as(&sql).bind(agent_id).bind(version).fetch_optional(&mut *db.read().await?).await?;
    Ok(row.map(Version::from))
}

/// The agent's draft, if it has one.
pub async fn draft(db: &Db, agent_id: &str) -> Result<Option<Draft>, DbError> {
    let row: Option<(String, i64, Option<String>, i64)> =
        sqlx::query_as("SELECT behaviour, base_version, updated_by, updated_at FROM agent_drafts WHERE agent_id = $1")
            .bind(agent_id)
            .fetch_optional(&mut *db.read().await?)
            .await?;
    Ok(row.map(|(behaviour, base_version, updated_by, updated_at)| Draft {
        behaviour: from_json_text(&behaviour),
        base_version,
        updated_by,
        updated_at,
    }))
}

/// Stores the agent's draft (replacing the one it had); the base version is kept from the first
/// save, so the console can say when the published version moved on meanwhile.
pub async fn save_draft(
    db: &Db,
    agent: &Agent,
    behaviour: &Behaviour,
    by: Option<&str>,
    now: i64,
) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO agent_drafts (agent_id, behaviour, base_version, updated_by, updated_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (agent_id) DO UPDATE SET behaviour = $2, updated_by = $4, \
         updated_at = $5",
    )
    .bind(&agent.id)
    .bind(to_json_text(behaviour))
    .bind(agent.version)
    .bind(by)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// Throws the draft away; `false` when there was none.
pub async fn discard_draft(db: &Db, agent_id: &str) -> Result<bool, DbError> {
    let done = sqlx::query("DELETE FROM agent_drafts WHERE agent_id = $1").bind(agent_id).execute(db.writer()).await?;
    Ok(done.rows_affected() == 1)
}

/// Publishes the draft as the next version (and deletes it); the version's number.
pub async fn publish_draft(
    db: &Db,
    agent_id: &str,
    by: Option<&str>,
    note: &str,
    now: i64,
) -> Result<i64, PublishError> {
    let draft = draft(db, agent_id).await?.ok_or(PublishError::NoDraft)?;
    let note = if note.trim().is_empty() { "Published the draft" } else { note.trim() };
    let mut tx = db.begin_write().await?;
    let version = publish_in(&mut tx, agent_id, &draft.behaviour, by, note, None, now).await?;
    sqlx::query("DELETE FROM agent_drafts WHERE agent_id = $1").bind(agent_id).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(version)
}

/// Publishes an earlier version's behaviour again, exactly, as the next version (a draft, if
/// any, stays); the new version's number.
pub async fn restore(db: &Db, agent_id: &str, version: i64, by: Option<&str>, now: i64) -> Result<i64, PublishError> {
    let old = get(db, agent_id, version).await?.ok_or(PublishError::NoVersion)?;
    let note = format!("Restored version {version}");
    let mut tx = db.begin_write().await?;
    let new = publish_in(&mut tx, agent_id, &old.behaviour, by, &note, Some(version), now).await?;
    tx.commit().await?;
    Ok(new)
}

type Tx = sqlx::Transaction<'static, sqlx::Any>;

crate::store::row_struct! {
    struct CurrentRow {
        system_prompt: String,
        model: String,
        fallback_model: Option<String>,
        capabilities: String,
        enabled_tools: Option<String>,
        version: i64,
    }
}

/// The agent's behaviour and version as stored (`None`: no such agent).
async fn current(tx: &mut Tx, agent_id: &str) -> Result<Option<(Behaviour, i64)>, DbError> {
    let row: Option<CurrentRow> = sqlx::query_as(
        "SELECT system_prompt, model, fallback_model, capabilities, enabled_tools, version FROM agents WHERE id = $1",
    )
    .bind(agent_id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|r| {
        let behaviour = Behaviour {
            system_prompt: r.system_prompt,
            model: r.model,
            fallback_model: r.fallback_model,
            capabilities: from_json_text(&r.capabilities),
            enabled_tools: r.enabled_tools.as_deref().map(from_json_text),
        };
        (behaviour, r.version)
    }))
}

/// Writes `behaviour` into the agent's row as the next version and records it; first records the
/// row's own behaviour as version 1 when no version was recorded yet.
async fn publish_in(
    tx: &mut Tx,
    agent_id: &str,
    behaviour: &Behaviour,
    by: Option<&str>,
    note: &str,
    restored_from: Option<i64>,
    now: i64,
) -> Result<i64, PublishError> {
    let (live, stored) = current(tx, agent_id).await?.ok_or(PublishError::NoAgent)?;
    let changes = behaviour.changes_from(&live);
    if changes.is_empty() {
        return Err(PublishError::Unchanged);
    }
    let base = record_first(tx, agent_id, &live, stored, now).await?;
    let next = base + 1;
    let done = sqlx::query(
        "UPDATE agents SET system_prompt = $3, model = $4, fallback_model = $5, capabilities = $6, \
         enabled_tools = $7, version = $8, updated_at = $9 WHERE id = $1 AND version = $2",
    )
    .bind(agent_id)
    .bind(base)
    .bind(&behaviour.system_prompt)
    .bind(&behaviour.model)
    .bind(&behaviour.fallback_model)
    .bind(to_json_text(&behaviour.capabilities))
    .bind(behaviour.enabled_tools.as_ref().map(to_json_text))
    .bind(next)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() != 1 {
        return Err(PublishError::Changed);
    }
    insert_version(tx, agent_id, next, behaviour, by, now, note, &changes.join(", "), restored_from).await?;
    Ok(next)
}

/// Records the row's behaviour as version 1 when the row has none yet (`stored` 0); the version
/// the row then holds. Also sets the row's version to 1.
async fn record_first(tx: &mut Tx, agent_id: &str, live: &Behaviour, stored: i64, now: i64) -> Result<i64, DbError> {
    if stored > 0 {
        return Ok(stored);
    }
    insert_version(
        tx,
        agent_id,
        1,
        live,
        None,
        now,
        "The first version (as the agent was before this change)",
        "",
        None,
    )
    .await?;
    sqlx::query("UPDATE agents SET version = 1 WHERE id = $1 AND version = 0")
        .bind(agent_id)
        .execute(&mut **tx)
        .await?;
    Ok(1)
}

#[allow(clippy::too_many_arguments)]
async fn insert_version(
    tx: &mut Tx,
    agent_id: &str,
    version: i64,
    behaviour: &Behaviour,
    by: Option<&str>,
    now: i64,
    note: &str,
    changes: &str,
    restored_from: Option<i64>,
) -> Result<(), DbError> {
    sqlx::query(
        "INSERT INTO agent_versions (agent_id, version, behaviour, published_by, published_at, note, changes, \
         restored_from) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(agent_id)
    .bind(version)
    .bind(to_json_text(behaviour))
    .bind(by)
    .bind(now)
    .bind(note)
    .bind(changes)
    .bind(restored_from)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Records a save of the agent form that changed the behaviour as a published version (inside
/// the save's transaction): the form publishes at once; the draft is the way to wait.
pub(super) async fn record_saved(
    tx: &mut Tx,
    agent_id: &str,
    before: &Behaviour,
    stored: i64,
    after: &Behaviour,
    by: Option<&str>,
    now: i64,
) -> Result<(), DbError> {
    let changes = after.changes_from(before);
    if changes.is_empty() {
        return Ok(());
    }
    let base = record_first(tx, agent_id, before, stored, now).await?;
    sqlx::query("UPDATE agents SET version = $2 WHERE id = $1")
        .bind(agent_id)
        .bind(base + 1)
        .execute(&mut **tx)
        .await?;
    insert_version(tx, agent_id, base + 1, after, by, now, "Saved in the agent form", &changes.join(", "), None).await
}

/// Reads the behaviour and version of an agent inside a transaction (for [`super::update`]).
pub(super) async fn current_in(tx: &mut Tx, agent_id: &str) -> Result<Option<(Behaviour, i64)>, DbError> {
    current(tx, agent_id).await
}

/// One line of a line-by-line comparison of two texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    Same(String),
    Added(String),
    Removed(String),
}

/// The lines of `new` compared with `old` (`similar`'s Myers diff). A last line is the same line
/// with or without its line break.
pub fn diff_lines(old: &str, new: &str) -> Vec<DiffLine> {
    use similar::{ChangeTag, TextDiff};
    let ended = |s: &str| if s.is_empty() || s.ends_with('\n') { s.to_owned() } else { format!("{s}\n") };
    let (old, new) = (ended(old), ended(new));
    TextDiff::from_lines(&old, &new)
        .iter_all_changes()
        .map(|c| {
            let text = c.value().trim_end_matches('\n').to_owned();
            match c.tag() {
                ChangeTag::Equal => DiffLine::Same(text),
                ChangeTag::Insert => DiffLine::Added(text),
                ChangeTag::Delete => DiffLine::Removed(text),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> Vec<(String, String)> {
        vec![("search_knowledge".into(), "knowledge".into()), ("web_search".into(), "web".into())]
    }

    fn input() -> BehaviourInput {
        BehaviourInput {
            system_prompt: "Be brief.".into(),
            model: " gpt-4o-mini ".into(),
            fallback_model: " ".into(),
            capabilities: vec!["knowledge".into()],
            enabled_tools: Some(vec!["search_knowledge".into()]),
        }
    }

    #[test]
    fn a_behaviour_keeps_to_the_agent_forms_rules() {
        let b = Behaviour::parse(&input(), &catalogue()).expect("good");
        assert_eq!((b.model.as_str(), b.fallback_model), ("gpt-4o-mini", None));
        let bad = BehaviourInput {
            system_prompt: "x".repeat(MAX_PROMPT_CHARS + 1),
            model: String::new(),
            enabled_tools: Some(vec!["web_search".into()]),
            ..input()
        };
        let fields: Vec<String> =
            Behaviour::parse(&bad, &catalogue()).err().unwrap_or_default().into_iter().map(|e| e.field).collect();
        assert_eq!(fields, ["system_prompt", "model", "enabled_tools"]);
    }

    #[test]
    fn changes_are_named_in_the_forms_order() {
        let a = Behaviour::parse(&input(), &catalogue()).expect("good");
        let b = Behaviour { system_prompt: "Be kind.".into(), enabled_tools: None, ..a.clone() };
        assert_eq!(b.changes_from(&a), ["instructions", "tools"]);
        assert!(a.changes_from(&a).is_empty());
    }

    #[test]
    fn the_prompt_diff_marks_lines() {
        let d = diff_lines("Be brief.\nAnswer in English.", "Be brief.\nAnswer in French.\n");
        assert_eq!(
            d,
            [
                DiffLine::Same("Be brief.".into()),
                DiffLine::Removed("Answer in English.".into()),
                DiffLine::Added("Answer in French.".into()),
            ]
        );
        let grown = diff_lines("Be brief.", "Be brief.\nBe kind.");
        assert_eq!(grown, [DiffLine::Same("Be brief.".into()), DiffLine::Added("Be kind.".into())]);
    }
}
