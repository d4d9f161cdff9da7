//! Contacts (issue 43, part 5): the people an agent talked with, as operators know them. A contact
//! is a visitor row that stands for itself (`acts_as` NULL): an anonymous visitor, or an
//! identified user's row. Contacts merged into it keep their rows and data (`merged_into` names
//! it): the contact's page reads what belongs to any of them, and no browser gains access to
//! another's conversations by a merge. Its browsers are the token rows acting as any of them.

mod merge;

pub use merge::{MergeError, edit, merge, separate};

use leads::Lead;
use memories::Memory;

use super::{Db, DbError, leads, memories};

/// The visitor rows of the contact `$n`: itself and those merged into it.
pub(crate) fn rows_of(n: usize) -> String {
    format!("(SELECT x.id FROM visitors x WHERE x.id = ${n} OR x.merged_into = ${n})")
}

/// What the console user `$n` may see of the contact `v`: everything for `NULL` (admins, users
/// in no team); else a contact of an agent one of their teams handles, or one with a
/// conversation assigned to them (as for conversations, `store::console::visible`).
fn visible(n: usize) -> String {
    format!(
        "(${n} IS NULL OR v.agent_id IN (SELECT ta.agent_id FROM team_agents ta JOIN team_members tm \
         ON tm.team_id = ta.team_id WHERE tm.user_id = ${n}) OR EXISTS (SELECT 1 FROM conversations c \
         WHERE c.assignee_id = ${n} AND c.visitor_id IN (SELECT x.id FROM visitors x WHERE x.id = v.id \
         OR x.merged_into = v.id)))"
    )
}

crate::store::row_struct! {
    /// A contact with what names it and how much it holds.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ContactRow {
        pub id: String,
        pub agent_id: String,
        pub agent_name: String,
        /// What operators set.
        pub contact_name: Option<String>,
        pub contact_email: Option<String>,
        pub contact_phone: Option<String>,
        /// The host site's user (identity claims), when it identified them.
        pub user_subject: Option<String>,
        pub user_name: Option<String>,
        pub user_email: Option<String>,
        /// The newest contact form's.
        pub lead_name: Option<String>,
        pub lead_email: Option<String>,
        pub lead_phone: Option<String>,
        pub created_at: i64,
        pub last_seen_at: i64,
        pub conversations: i64,
    }
}

impl ContactRow {
    /// The name to show: the operators', the website's, the contact form's, or a short id.
    pub fn display_name(&self) -> String {
        [&self.contact_name, &self.user_name, &self.lead_name]
            .into_iter()
            .flatten()
            .find(|n| !n.trim().is_empty())
            .cloned()
            .unwrap_or_else(|| format!("Visitor …{}", tail(&self.id)))
    }

    /// The email to show: the operators', the website's or the contact form's.
    pub fn email(&self) -> Option<String> {
        [&self.contact_email, &self.user_email, &self.lead_email].into_iter().flatten().next().cloned()
    }

    /// The phone to show: the operators' or the contact form's.
    pub fn phone(&self) -> Option<String> {
        [&self.contact_phone, &self.lead_phone].into_iter().flatten().next().cloned()
    }
}

/// The last six characters of an id.
pub fn tail(id: &str) -> String {
    let n = id.chars().count();
    id.chars().skip(n.saturating_sub(6)).collect()
}

/// The columns of [`ContactRow`] for the contact `v` (its agent joined as `a`, its user as `eu`).
const COLUMNS: &str = "v.id, v.agent_id, a.name AS agent_name, v.contact_name, v.contact_email, v.contact_phone, \
     eu.subject AS user_subject, eu.name AS user_name, eu.email AS user_email, \
     (SELECT l.name FROM leads l WHERE l.visitor_id = v.id ORDER BY l.created_at DESC LIMIT 1) AS lead_name, \
     (SELECT l.email FROM leads l WHERE l.visitor_id = v.id AND l.email IS NOT NULL ORDER BY l.created_at DESC LIMIT 1) AS lead_email, \
     (SELECT l.phone FROM leads l WHERE l.visitor_id = v.id AND l.phone IS NOT NULL ORDER BY l.created_at DESC LIMIT 1) AS lead_phone, \
     v.created_at, v.last_seen_at, \
     (SELECT COUNT(*) FROM conversations c WHERE c.visitor_id IN (SELECT x.id FROM visitors x WHERE x.id = v.id \
      OR x.merged_into = v.id)) AS conversations";
const FROM: &str = "FROM visitors v JOIN agents a ON a.id = v.agent_id LEFT JOIN end_users eu ON eu.visitor_id = v.id";

/// What a contact list is filtered by.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContactFilter<'a> {
    pub agent_id: Option<&'a str>,
    /// Part of a name, email or phone number (any case), or a whole id or website user id.
    pub query: Option<&'a str>,
    /// Only what this console user may see; `None`: everything.
    pub visible_to: Option<&'a str>,
}

/// `%text%` for `LIKE … ESCAPE '\'`, lower case.
fn pattern(text: &str) -> String {
    let mut out = String::from("%");
    for c in text.trim().to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// One page of contacts (those with a conversation, a website identity or operators' details),
/// most recently seen first, and how many match.
pub async fn page(
    db: &Db,
    filter: ContactFilter<'_>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<ContactRow>, i64), DbError> {
    let like = "LIKE $3 ESCAPE '\\'";
    let filters = format!(
        "WHERE v.acts_as IS NULL AND v.merged_into IS NULL AND ($1 IS NULL OR v.agent_id = $1) \
         AND (EXISTS (SELECT 1 FROM conversations c WHERE c.visitor_id = v.id AND c.trial = 0) OR v.contact_at IS NOT NULL \
              OR eu.id IS NOT NULL) \
         AND ($2 IS NULL OR v.id = $2 OR eu.subject = $2 OR LOWER(v.contact_name) {like} \
              OR LOWER(v.contact_email) {like} OR v.contact_phone {like} OR LOWER(eu.name) {like} \
              OR LOWER(eu.email) {like} OR EXISTS (SELECT 1 FROM leads l WHERE l.visitor_id = v.id \
              AND (LOWER(l.name) {like} OR LOWER(l.email) {like} OR l.phone {like}))) \
         AND {}",
        visible(4)
    );
    let query = filter.query.map(str::trim).filter(|q| !q.is_empty());
    let like_arg = query.map(pattern).unwrap_or_default();
    let mut conn = db.read().await?;
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) {FROM} {filters}"))
        .bind(filter.agent_id)
        .bind(query)
        .bind(&like_arg)
        .bind(filter.visible_to)
        .fetch_one(&mut *conn)
        .await?;
    let rows = sqlx::query_as(&format!(
        "SELECT {COLUMNS} {FROM} {filters} ORDER BY v.last_seen_at DESC, v.id LIMIT $5 OFFSET $6"
    ))
    .bind(filter.agent_id)
    .bind(query)
    .bind(&like_arg)
    .bind(filter.visible_to)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *conn)
    .await?;
    Ok((rows, total))
}

/// The contact a visitor row belongs to (itself, or the one it was merged into); `None` for an
/// unknown row. A browser's token row of an identified user leads to the user's contact.
pub async fn contact_of(db: &Db, visitor_id: &str) -> Result<Option<String>, DbError> {
    sqlx::query_scalar(
        "SELECT COALESCE(p.merged_into, p.id) FROM visitors v JOIN visitors p ON p.id = COALESCE(v.acts_as, v.id) \
         WHERE v.id = $1",
    )
    .bind(visitor_id)
    .fetch_optional(&mut *db.read().await?)
    .await
}

/// The contact `id` (which must be one: not merged, not a browser's row) if `visible_to` may see it.
pub async fn get(db: &Db, id: &str, visible_to: Option<&str>) -> Result<Option<ContactRow>, DbError> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} {FROM} WHERE v.id = $1 AND v.acts_as IS NULL AND v.merged_into IS NULL AND {}",
        visible(2)
    ))
    .bind(id)
    .bind(visible_to)
    .fetch_optional(&mut *db.read().await?)
    .await
}

/// The contacts merged into `id`, each as a row of its own (their names, their counts).
pub async fn merged(db: &Db, id: &str) -> Result<Vec<ContactRow>, DbError> {
    sqlx::query_as(&format!("SELECT {COLUMNS} {FROM} WHERE v.merged_into = $1 ORDER BY v.merged_at, v.id"))
        .bind(id)
        .fetch_all(&mut *db.read().await?)
        .await
}

/// What the host page last set (`Parley.setContext`), as JSON, of the contact or the newest of
/// those merged into it.
pub async fn attributes(db: &Db, id: &str) -> Result<Option<String>, DbError> {
    let rows: Vec<Option<String>> = sqlx::query_scalar(&format!(
        "SELECT attributes FROM visitors WHERE id IN {} AND attributes IS NOT NULL ORDER BY last_seen_at DESC LIMIT 1",
        rows_of(1)
    ))
    .bind(id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.into_iter().flatten().next())
}

crate::store::row_struct! {
    /// A browser of the contact: a token row, with what its first request said.
    #[derive(Clone, Debug, PartialEq)]
    pub struct BrowserRow {
        pub id: String,
        pub user_agent: Option<String>,
        pub language: Option<String>,
        pub country: Option<String>,
        pub host_origin: Option<String>,
        pub created_at: i64,
        pub last_seen_at: i64,
        pub revoked_at: Option<i64>,
    }
}

/// Every browser of the contact, most recently seen first.
pub async fn browsers(db: &Db, id: &str) -> Result<Vec<BrowserRow>, DbError> {
    let rows = rows_of(1);
    sqlx::query_as(&format!(
        "SELECT id, user_agent, language, country, host_origin, created_at, last_seen_at, revoked_at FROM visitors \
         WHERE id IN {rows} OR acts_as IN {rows} ORDER BY last_seen_at DESC, id LIMIT 50"
    ))
    .bind(id)
    .fetch_all(&mut *db.read().await?)
    .await
}

crate::store::row_struct! {
    /// A conversation of the contact.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ContactConversation {
        pub id: String,
        pub status: String,
        pub created_at: i64,
        pub updated_at: i64,
        pub messages: i64,
        pub last_message: Option<String>,
        /// Its average rating of the whole conversation (1–5) or of answers (thumbs: -1/1), when rated.
        pub rating: Option<i64>,
    }
}

/// The contact's conversations that `visible_to` may see, newest first.
pub async fn conversations(db: &Db, id: &str, visible_to: Option<&str>) -> Result<Vec<ContactConversation>, DbError> {
    sqlx::query_as(&format!(
        "SELECT c.id, c.status, c.created_at, c.updated_at, \
         (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS messages, \
         (SELECT m.content FROM messages m WHERE m.conversation_id = c.id AND m.content <> '' \
          ORDER BY m.created_at DESC, m.id DESC LIMIT 1) AS last_message, \
         (SELECT r.score FROM ratings r WHERE r.conversation_id = c.id AND r.message_id = '' LIMIT 1) AS rating \
         FROM conversations c WHERE c.visitor_id IN {} AND {} ORDER BY c.updated_at DESC, c.id LIMIT 200",
        rows_of(1),
        super::console::visible(2)
    ))
    .bind(id)
    .bind(visible_to)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// The contact's leads, newest first.
pub async fn leads(db: &Db, id: &str) -> Result<Vec<Lead>, DbError> {
    sqlx::query_as(&format!(
        "SELECT id, agent_id, conversation_id, name, email, phone, message, status, notes, created_at FROM leads \
         WHERE visitor_id IN {} ORDER BY created_at DESC, id LIMIT 100",
        rows_of(1)
    ))
    .bind(id)
    .fetch_all(&mut *db.read().await?)
    .await
}

crate::store::row_struct! {
    /// An order of the contact.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ContactOrder {
        pub id: String,
        pub conversation_id: String,
        pub service_type: String,
        pub amount_minor: i64,
        pub currency: String,
        pub status: String,
        pub created_at: i64,
        pub paid_at: Option<i64>,
    }
}

/// The contact's orders, newest first.
pub async fn orders(db: &Db, id: &str) -> Result<Vec<ContactOrder>, DbError> {
    sqlx::query_as(&format!(
        "SELECT id, conversation_id, service_type, amount_minor, currency, status, created_at, paid_at FROM orders \
         WHERE visitor_id IN {} ORDER BY created_at DESC, id LIMIT 100",
        rows_of(1)
    ))
    .bind(id)
    .fetch_all(&mut *db.read().await?)
    .await
}

crate::store::row_struct! {
    /// A rating the contact gave.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ContactRating {
        pub conversation_id: String,
        /// Empty: the whole conversation (1–5); else an answer (thumbs: -1 or 1).
        pub message_id: String,
        pub score: i64,
        pub comment: Option<String>,
        pub updated_at: i64,
    }
}

/// The ratings the contact gave, newest first.
pub async fn ratings(db: &Db, id: &str) -> Result<Vec<ContactRating>, DbError> {
    sqlx::query_as(&format!(
        "SELECT r.conversation_id, r.message_id, r.score, r.comment, r.updated_at FROM ratings r \
         JOIN conversations c ON c.id = r.conversation_id WHERE c.visitor_id IN {} \
         ORDER BY r.updated_at DESC LIMIT 100",
        rows_of(1)
    ))
    .bind(id)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// What the agent remembers of the contact, most important first.
pub async fn memories(db: &Db, id: &str) -> Result<Vec<Memory>, DbError> {
    sqlx::query_as(&format!(
        "SELECT id, kind, content, category, importance, created_at FROM memories WHERE visitor_id IN {} \
         ORDER BY importance DESC, created_at DESC LIMIT 100",
        rows_of(1)
    ))
    .bind(id)
    .fetch_all(&mut *db.read().await?)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_pattern_escapes_like_wildcards_and_ignores_case() {
        assert_eq!(pattern(" Ann_50% "), "%ann\\_50\\%%");
        assert_eq!(pattern("张伟"), "%张伟%");
    }

    #[test]
    fn the_name_shown_prefers_the_operators_then_the_websites_then_the_form() {
        let mut row = ContactRow {
            id: "0123456789abcdef".into(),
            agent_id: "a".into(),
            agent_name: "A".into(),
            contact_name: None,
            contact_email: None,
            contact_phone: None,
            user_subject: None,
            user_name: None,
            user_email: None,
            lead_name: Some("Form Name".into()),
            lead_email: Some("form@example.com".into()),
            lead_phone: None,
            created_at: 0,
            last_seen_at: 0,
            conversations: 0,
        };
        assert_eq!(row.display_name(), "Form Name");
        row.user_name = Some("Site Name".into());
        assert_eq!(row.display_name(), "Site Name");
        row.contact_name = Some("Operator Name".into());
        row.contact_email = Some("op@example.com".into());
        assert_eq!(row.display_name(), "Operator Name");
        assert_eq!(row.email().as_deref(), Some("op@example.com"));
        row.contact_name = None;
        row.user_name = None;
        row.lead_name = None;
        assert_eq!(row.display_name(), "Visitor …abcdef");
    }
}
