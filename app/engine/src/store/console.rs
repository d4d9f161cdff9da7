//! Read models of the admin console: conversation lists, dashboard figures, orders. Portable
//! SQL; anything date-shaped is computed in Rust from Unix milliseconds.

use sqlx::AnyConnection;

use super::{Db, DbError};

crate::store::row_struct! {
    /// A conversation with its agent's and holder's names and its counts.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ConversationRow {
        pub id: String,
        pub agent_id: String,
        pub agent_name: String,
        pub visitor_id: String,
        pub status: String,
        pub claimed_by: Option<String>,
        pub claimed_by_name: Option<String>,
        pub lead_submitted: i64,
        pub created_at: i64,
        pub updated_at: i64,
        pub last_message: Option<String>,
        pub messages: i64,
        /// The host site's user, when it identified the visitor: id, name, email.
        pub user_subject: Option<String>,
        pub user_name: Option<String>,
        pub user_email: Option<String>,
        /// The team whose queue it is in, and the person it is assigned to (issue 43).
        pub team_id: Option<String>,
        pub team_name: Option<String>,
        pub assignee_id: Option<String>,
        pub assignee_name: Option<String>,
        /// The name operators gave the contact (issue 43, part 5).
        pub contact_name: Option<String>,
    }
}

/// The identified user of a conversation's visitor (joined as `eu`), its team (`t`) and assignee (`ua`).
const USER_JOIN: &str = "LEFT JOIN end_users eu ON eu.visitor_id = c.visitor_id \
     LEFT JOIN teams t ON t.id = c.team_id LEFT JOIN users ua ON ua.id = c.assignee_id";
const USER_COLUMNS: &str = "eu.subject AS user_subject, eu.name AS user_name, eu.email AS user_email, \
     c.team_id, t.name AS team_name, c.assignee_id, ua.name AS assignee_name, \
     (SELECT k.contact_name FROM visitors cv JOIN visitors k ON k.id = COALESCE(cv.merged_into, cv.id) \
      WHERE cv.id = c.visitor_id) AS contact_name";

/// The inbox's views (issue 43).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// Every conversation (the list as it always was).
    #[default]
    All,
    /// Assigned to me and not closed.
    Mine,
    /// Waiting for or held by a person, assigned to nobody.
    Unassigned,
    /// In the queue of one of my teams and not closed.
    MyTeams,
}

impl View {
    pub fn parse(raw: &str) -> Option<View> {
        match raw {
            "" | "all" => Some(View::All),
            "mine" => Some(View::Mine),
            "unassigned" => Some(View::Unassigned),
            "my_teams" => Some(View::MyTeams),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            View::All => "all",
            View::Mine => "mine",
            View::Unassigned => "unassigned",
            View::MyTeams => "my_teams",
        }
    }

    /// The view's condition (`$4`: who is asking); a fixed string, never user text.
    fn sql(self) -> &'static str {
        match self {
            View::All => "",
            View::Mine => " AND c.assignee_id = $4 AND c.status <> 'closed'",
            View::Unassigned => " AND c.assignee_id IS NULL AND c.status IN ('waiting_human','human')",
            View::MyTeams => {
                " AND c.status <> 'closed' AND c.team_id IN (SELECT tm.team_id FROM team_members tm WHERE tm.user_id = $4)"
            }
        }
    }
}

/// What a conversation list is filtered by (each `None`: any).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConversationFilter<'a> {
    pub agent_id: Option<&'a str>,
    pub status: Option<&'a str>,
    /// The host site's user id (`sub`) of an identified visitor.
    pub user: Option<&'a str>,
    pub view: View,
    /// Who is asking (the views *Mine* and *My teams*).
    pub me: Option<&'a str>,
    pub team_id: Option<&'a str>,
    pub label_id: Option<&'a str>,
    /// Started at or after / before (Unix ms).
    pub created_from: Option<i64>,
    pub created_to: Option<i64>,
    /// Only what this console user may see ([`visible`]); `None`: everything.
    pub visible_to: Option<&'a str>,
}

/// What the console user `$n` may see: the conversations of the agents their teams handle, and
/// those assigned to them (the caller passes `None` for admins and users in no team).
pub(crate) fn visible(n: usize) -> String {
    format!(
        "(${n} IS NULL OR c.assignee_id = ${n} OR c.agent_id IN (SELECT ta.agent_id FROM team_agents ta \
         JOIN team_members tm ON tm.team_id = ta.team_id WHERE tm.user_id = ${n}))"
    )
}

/// One page of conversations, most recently active first, and how many match.
pub async fn conversations(
    db: &Db,
    filter: ConversationFilter<'_>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<ConversationRow>, i64), DbError> {
    let filters = format!(
        "WHERE c.trial = 0 AND ($1 IS NULL OR c.agent_id = $1) AND ($2 IS NULL OR c.status = $2) \
         AND ($3 IS NULL OR eu.subject = $3) AND ($5 IS NULL OR c.team_id = $5) \
         AND ($6 IS NULL OR EXISTS (SELECT 1 FROM conversation_labels cl WHERE cl.conversation_id = c.id AND cl.label_id = $6)) \
         AND ($7 IS NULL OR c.created_at >= $7) AND ($8 IS NULL OR c.created_at < $8) AND {} \
         AND ($4 IS NULL OR $4 IS NOT NULL){}",
        // (`$4`, who is asking, is named even when the view does not use it: every bound
        // parameter must appear in the statement.)
        visible(9),
        filter.view.sql()
    );
    let sql = format!(
        "SELECT c.id, c.agent_id, a.name AS agent_name, c.visitor_id, c.status, c.claimed_by, u.name AS claimed_by_name, \
         c.lead_submitted, c.created_at, c.updated_at, \
         (SELECT m.content FROM messages m WHERE m.conversation_id = c.id AND m.content <> '' \
          ORDER BY m.created_at DESC, m.id DESC LIMIT 1) AS last_message, \
         (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS messages, {USER_COLUMNS} \
         FROM conversations c JOIN agents a ON a.id = c.agent_id LEFT JOIN users u ON u.id = c.claimed_by {USER_JOIN} \
         {filters} ORDER BY c.updated_at DESC, c.id LIMIT $10 OFFSET $11"
    );
    let me = filter.me.or(Some(""));
    let rows = sqlx::query_as(&sql)
        .bind(filter.agent_id)
        .bind(filter.status)
        .bind(filter.user)
        .bind(me)
        .bind(filter.team_id)
        .bind(filter.label_id)
        .bind(filter.created_from)
        .bind(filter.created_to)
        .bind(filter.visible_to)
        .bind(limit)
        .bind(offset)
        .fetch_all(&mut *db.read().await?)
        .await?;
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM conversations c {USER_JOIN} {filters}"))
        .bind(filter.agent_id)
        .bind(filter.status)
        .bind(filter.user)
        .bind(me)
        .bind(filter.team_id)
        .bind(filter.label_id)
        .bind(filter.created_from)
        .bind(filter.created_to)
        .bind(filter.visible_to)
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok((rows, total))
}

/// How many conversations waiting for or held by a person each view holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InboxCounts {
    pub mine: i64,
    pub unassigned: i64,
    pub my_teams: i64,
    pub all: i64,
}

/// The inbox's counts for `me` (only what `visible_to` may see; `None`: everything). Only
/// conversations that need a person count (a bounded set: every bot chat would swamp *All*).
pub async fn inbox_counts(db: &Db, me: &str, visible_to: Option<&str>) -> Result<InboxCounts, DbError> {
    let sql = format!(
        "SELECT COALESCE(SUM(CASE WHEN c.assignee_id = $1 THEN 1 ELSE 0 END), 0), \
         COALESCE(SUM(CASE WHEN c.assignee_id IS NULL THEN 1 ELSE 0 END), 0), \
         COALESCE(SUM(CASE WHEN c.team_id IN (SELECT tm.team_id FROM team_members tm WHERE tm.user_id = $1) \
             THEN 1 ELSE 0 END), 0), \
         COUNT(*) FROM conversations c WHERE c.trial = 0 AND c.status IN ('waiting_human','human') AND {}",
        visible(2)
    );
    let (mine, unassigned, my_teams, all): (i64, i64, i64, i64) =
        sqlx::query_as(&sql).bind(me).bind(visible_to).fetch_one(&mut *db.read().await?).await?;
    Ok(InboxCounts { mine, unassigned, my_teams, all })
}

/// One conversation as the list shows it (without its last message).
pub async fn conversation(db: &Db, id: &str) -> Result<Option<ConversationRow>, DbError> {
    let sql = format!(
        "SELECT c.id, c.agent_id, a.name AS agent_name, c.visitor_id, c.status, c.claimed_by, u.name AS claimed_by_name, \
         c.lead_submitted, c.created_at, c.updated_at, NULL AS last_message, \
         (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS messages, {USER_COLUMNS} \
         FROM conversations c JOIN agents a ON a.id = c.agent_id LEFT JOIN users u ON u.id = c.claimed_by {USER_JOIN} \
         WHERE c.id = $1"
    );
    sqlx::query_as(&sql).bind(id).fetch_optional(&mut *db.read().await?).await
}

/// Whether the console user `user_id` may see the conversation (see [`visible`]); `None` user:
/// sees everything. False when there is no such conversation.
pub async fn may_see(db: &Db, conversation_id: &str, visible_to: Option<&str>) -> Result<bool, DbError> {
    let sql = format!("SELECT COUNT(*) FROM conversations c WHERE c.id = $1 AND {}", visible(2));
    let n: i64 =
        sqlx::query_scalar(&sql).bind(conversation_id).bind(visible_to).fetch_one(&mut *db.read().await?).await?;
    Ok(n == 1)
}

/// Whether the console user is in any team (users in none see every conversation).
pub async fn in_a_team(db: &Db, user_id: &str) -> Result<bool, DbError> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM team_members WHERE user_id = $1")
        .bind(user_id)
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok(n > 0)
}

/// The dashboard's counts of the day that began at `today` (Unix ms) and of what is waiting.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    /// Conversations started today.
    pub conversations_today: i64,
    /// Messages written today.
    pub messages_today: i64,
    /// Leads nobody has handled yet.
    pub leads_waiting: i64,
    /// Orders paid, ever.
    pub orders_paid: i64,
    /// Orders paid today.
    pub orders_paid_today: i64,
    /// Conversations waiting for a person.
    pub waiting_for_human: i64,
}

/// The dashboard's counts.
pub async fn counts(db: &Db, today: i64) -> Result<Counts, DbError> {
    let mut held = db.read().await?;
    let conn = &mut *held;
    Ok(Counts {
        conversations_today: count(
            conn,
            "SELECT COUNT(*) FROM conversations WHERE trial = 0 AND created_at >= $1",
            Some(today),
        )
        .await?,
        messages_today: count(conn, "SELECT COUNT(*) FROM messages WHERE created_at >= $1", Some(today)).await?,
        leads_waiting: count(conn, "SELECT COUNT(*) FROM leads WHERE status = 'new'", None).await?,
        orders_paid: count(conn, "SELECT COUNT(*) FROM orders WHERE status = 'paid'", None).await?,
        orders_paid_today: count(
            conn,
            "SELECT COUNT(*) FROM orders WHERE status = 'paid' AND paid_at >= $1",
            Some(today),
        )
        .await?,
        waiting_for_human: count(conn, "SELECT COUNT(*) FROM conversations WHERE status = 'waiting_human'", None)
            .await?,
    })
}

/// One `COUNT(*)` statement, with `since` as `$1` when given.
async fn count(conn: &mut AnyConnection, sql: &'static str, since: Option<i64>) -> Result<i64, DbError> {
    let mut query = sqlx::query_scalar(sql);
    if let Some(since) = since {
        query = query.bind(since);
    }
    query.fetch_one(conn).await
}

/// `(created_at, input + output tokens, cost)` of every upstream call since `since`.
pub async fn usage_since(db: &Db, since: i64) -> Result<Vec<(i64, i64, f64)>, DbError> {
    sqlx::query_as(
        "SELECT created_at, input_tokens + output_tokens, cost_usd FROM usage_ledger WHERE created_at >= $1 AND provider <> 'mcp'",
    )
    .bind(since)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// Visitor messages since `since` (newest first, at most `limit`).
pub async fn visitor_texts_since(db: &Db, since: i64, limit: i64) -> Result<Vec<String>, DbError> {
    sqlx::query_scalar(
        "SELECT content FROM messages WHERE role = 'visitor' AND created_at >= $1 ORDER BY created_at DESC LIMIT $2",
    )
    .bind(since)
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// One page of orders, newest first, and how many match.
pub async fn orders(
    db: &Db,
    status: Option<&str>,
    visible_to: Option<&str>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<super::orders::Order>, i64), DbError> {
    // An operator in a team sees the orders of the conversations they may see (as the inbox).
    let filters = format!(
        "WHERE ($1 IS NULL OR status = $1) AND ($2 IS NULL OR EXISTS (SELECT 1 FROM conversations c \
         WHERE c.id = orders.conversation_id AND {}))",
        visible(2)
    );
    let rows = sqlx::query_as(&format!(
        "SELECT id, agent_id, conversation_id, visitor_id, message_id, service_type, category, amount_minor, currency, \
         method, status, provider, pay_url, created_at, expires_at, paid_at, facts FROM orders \
         {filters} ORDER BY created_at DESC, id LIMIT $3 OFFSET $4"
    ))
    .bind(status)
    .bind(visible_to)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *db.read().await?)
    .await?;
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM orders {filters}"))
        .bind(status)
        .bind(visible_to)
        .fetch_one(&mut *db.read().await?)
        .await?;
    Ok((rows, total))
}

/// Each agent's figures over `[from, to)`, for the daily summary mail.
pub async fn day_figures(db: &Db, from: i64, to: i64) -> Result<Vec<crate::mail_text::DayFigures>, DbError> {
    let rows: Vec<(String, i64, i64, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT a.name, \
         (SELECT COUNT(*) FROM conversations c WHERE c.agent_id = a.id AND c.trial = 0 AND c.created_at >= $1 AND c.created_at < $2), \
         (SELECT COUNT(*) FROM leads l WHERE l.agent_id = a.id AND l.created_at >= $1 AND l.created_at < $2), \
         (SELECT COUNT(*) FROM conversations c WHERE c.agent_id = a.id AND c.status = 'waiting_human'), \
         (SELECT COUNT(*) FROM orders o WHERE o.agent_id = a.id AND o.status = 'paid' AND o.paid_at >= $1 AND o.paid_at < $2), \
         (SELECT COUNT(*) FROM ratings r WHERE r.agent_id = a.id AND r.message_id <> '' AND r.score > 0 \
             AND r.updated_at >= $1 AND r.updated_at < $2), \
         (SELECT COUNT(*) FROM ratings r WHERE r.agent_id = a.id AND r.message_id <> '' AND r.score < 0 \
             AND r.updated_at >= $1 AND r.updated_at < $2) \
         FROM agents a ORDER BY a.name",
    )
    .bind(from)
    .bind(to)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(agent, conversations, leads, waiting, orders_paid, thumbs_up, thumbs_down)| {
            crate::mail_text::DayFigures { agent, conversations, leads, waiting, orders_paid, thumbs_up, thumbs_down }
        })
        .collect())
}
