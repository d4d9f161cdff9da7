//! Whose a conversation is (issue 43): assigned to a person by hand, handed to a team, or given
//! out automatically, round-robin, to a member of its team who is online and under their limit.
//!
//! Assignment is not a claim: the model stops only when someone claims. But a claim assigns the
//! conversation to the claimer (`conversations::claim`), and reassigning a held conversation moves
//! the claim to the new assignee. Every change is reported to the agent's webhooks
//! (`conversation.assigned`) in its own transaction.
//!
//! Automatic assignment is safe across replicas on PostgreSQL: it first bumps the team's
//! `assign_seq` (a row lock that runs the team's assignments one at a time), then bumps the chosen
//! user's `last_assigned_at` (a row lock per user, so a member of two teams is counted once at a
//! time) and recounts their open conversations, and finally assigns with a conditional update.
//! The lock order is always team, then user, so no two transactions wait on each other in a circle.

use serde_json::{Value, json};

use super::{Db, DbError, hours, operator_notifications, webhooks};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

/// Who made an assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By<'a> {
    /// A console user, by hand.
    Operator(&'a str),
    /// The round-robin.
    Auto,
}

/// What an assignment changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Assigned {
    pub agent_id: String,
    /// The new assignee (`None`: unassigned).
    pub assignee: Option<String>,
    /// The new holder's name when the claim moved with the assignment (tell the visitor).
    pub claim_moved_to: Option<String>,
}

/// Why an assignment was not made.
#[derive(Debug, thiserror::Error)]
pub enum AssignError {
    #[error("conversation not found")]
    NotFound,
    #[error("{0}")]
    Refused(&'static str),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Conversations with these statuses count towards a user's limit.
const OPEN: &str = "('waiting_human','human')";

/// A user's open conversations (assigned to them, waiting for or held by a person).
pub async fn load(db: &Db, user_id: &str) -> Result<i64, DbError> {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM conversations WHERE assignee_id = $1 AND status IN {OPEN}"))
        .bind(user_id)
        .fetch_one(&mut *db.read().await?)
        .await
}

/// Sets the most open conversations automatic assignment gives the user; false when no such user.
pub async fn set_limit(db: &Db, user_id: &str, max_open: i64) -> Result<bool, DbError> {
    let done = sqlx::query("UPDATE users SET max_open = $2 WHERE id = $1")
        .bind(user_id)
        .bind(max_open)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// `(agent_id, status, claimed_by, team_id)` of a conversation, read inside `tx`.
async fn state_in(
    tx: &mut Tx<'_>,
    id: &str,
) -> Result<Option<(String, String, Option<String>, Option<String>)>, DbError> {
    sqlx::query_as("SELECT agent_id, status, claimed_by, team_id FROM conversations WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut **tx)
        .await
}

/// A team as payloads name it: `{"id", "name"}`, or null.
async fn team_json(tx: &mut Tx<'_>, team_id: Option<&str>) -> Result<Value, DbError> {
    let Some(team_id) = team_id else { return Ok(Value::Null) };
    let row: Option<(String,)> =
        sqlx::query_as("SELECT name FROM teams WHERE id = $1").bind(team_id).fetch_optional(&mut **tx).await?;
    Ok(match row {
        Some((name,)) => json!({"id": team_id, "name": name}),
        None => Value::Null,
    })
}

/// Writes the `conversation.assigned` webhook event inside `tx`.
pub async fn report_in(
    tx: &mut Tx<'_>,
    agent_id: &str,
    conversation_id: &str,
    assignee: Option<&str>,
    by: By<'_>,
    reason: &str,
    now: i64,
) -> Result<(), DbError> {
    let team: Option<(Option<String>,)> = sqlx::query_as("SELECT team_id FROM conversations WHERE id = $1")
        .bind(conversation_id)
        .fetch_optional(&mut **tx)
        .await?;
    let team = team_json(tx, team.and_then(|(t,)| t).as_deref()).await?;
    let assignee = match assignee {
        Some(user) => webhooks::operator(tx, user).await?,
        None => Value::Null,
    };
    let by = match by {
        By::Operator(user) => webhooks::operator(tx, user).await?,
        By::Auto => Value::Null,
    };
    let data =
        json!({"conversation_id": conversation_id, "assignee": assignee, "team": team, "by": by, "reason": reason});
    webhooks::emit(tx, agent_id, "conversation.assigned", Some(conversation_id), data, now).await?;
    Ok(())
}

/// Assigns a conversation to `to` by hand (`None`: unassigns it). Limits do not apply (the
/// console shows each person's load). A held conversation's claim moves to the new assignee;
/// unassigning a held one is refused (release it first). A closed one cannot be assigned.
pub async fn assign(
    db: &Db,
    conversation_id: &str,
    to: Option<&str>,
    by: &str,
    now: i64,
) -> Result<Assigned, AssignError> {
    let mut tx = db.begin_write().await?;
    let mut claim_moved_to = None;
    if let Some(user) = to {
        // The user's row lock: assignments to one person happen one at a time.
        let done = sqlx::query("UPDATE users SET last_assigned_at = $2 WHERE id = $1")
            .bind(user)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() != 1 {
            return Err(AssignError::Refused("no such console user"));
        }
    }
    let (agent_id, status, claimed_by, _) = state_in(&mut tx, conversation_id).await?.ok_or(AssignError::NotFound)?;
    if status == "closed" {
        return Err(AssignError::Refused("the conversation is closed"));
    }
    match (to, &claimed_by) {
        (None, Some(_)) => return Err(AssignError::Refused("someone holds this conversation: release it first")),
        (Some(user), Some(holder)) if user != holder => {
            sqlx::query("UPDATE conversations SET claimed_by = $2, claimed_at = $3 WHERE id = $1")
                .bind(conversation_id)
                .bind(user)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            let name: Option<(String,)> =
                sqlx::query_as("SELECT name FROM users WHERE id = $1").bind(user).fetch_optional(&mut *tx).await?;
            claim_moved_to = name.map(|(n,)| n);
        }
        _ => {}
    }
    let done = sqlx::query(
        "UPDATE conversations SET assignee_id = $2, assigned_at = $3, updated_at = $3 WHERE id = $1 AND status <> 'closed'",
    )
    .bind(conversation_id)
    .bind(to)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        return Err(AssignError::Refused("the conversation is closed"));
    }
    if let Some(user) = to.filter(|u| *u != by) {
        operator_notifications::insert_in(&mut tx, user, "assigned", conversation_id, None, Some(by), now).await?;
    }
    if to.is_none() {
        operator_notifications::queue_in(&mut tx, conversation_id, Some(by), now).await?;
    }
    let reason = if to.is_some() { "manual" } else { "unassigned" };
    report_in(&mut tx, &agent_id, conversation_id, to, By::Operator(by), reason, now).await?;
    tx.commit().await?;
    Ok(Assigned { agent_id, assignee: to.map(str::to_owned), claim_moved_to })
}

/// Hands a conversation to a team's queue (`None`: to no team); it is unassigned. A held or
/// closed conversation cannot be handed over.
pub async fn to_team(
    db: &Db,
    conversation_id: &str,
    team_id: Option<&str>,
    by: &str,
    now: i64,
) -> Result<Assigned, AssignError> {
    let mut tx = db.begin_write().await?;
    if let Some(team) = team_id {
        let known: Option<(String,)> =
            sqlx::query_as("SELECT id FROM teams WHERE id = $1").bind(team).fetch_optional(&mut *tx).await?;
        if known.is_none() {
            return Err(AssignError::Refused("no such team"));
        }
    }
    let (agent_id, status, claimed_by, _) = state_in(&mut tx, conversation_id).await?.ok_or(AssignError::NotFound)?;
    if status == "closed" {
        return Err(AssignError::Refused("the conversation is closed"));
    }
    if claimed_by.is_some() {
        return Err(AssignError::Refused("someone holds this conversation: release it first"));
    }
    sqlx::query(
        "UPDATE conversations SET team_id = $2, assignee_id = NULL, assigned_at = NULL, updated_at = $3 WHERE id = $1",
    )
    .bind(conversation_id)
    .bind(team_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    report_in(&mut tx, &agent_id, conversation_id, None, By::Operator(by), "team", now).await?;
    operator_notifications::queue_in(&mut tx, conversation_id, Some(by), now).await?;
    tx.commit().await?;
    Ok(Assigned { agent_id, assignee: None, claim_moved_to: None })
}

/// Gives an unassigned conversation that waits for a person to the next member of its team (if
/// the team is `auto`): online (not away, console seen since `now - ONLINE_WITHIN_MS`), under
/// their `max_open`, the one who got one of the team's conversations longest ago (ties: by id).
/// The member it went to, if any.
pub async fn auto_assign(db: &Db, conversation_id: &str, now: i64) -> Result<Option<(String, String)>, DbError> {
    let online_after = now - hours::ONLINE_WITHIN_MS;
    let mut tx = db.begin_write().await?;
    // 1. The team's lock (and: is it an automatic team at all?).
    let locked = sqlx::query(
        "UPDATE teams SET assign_seq = assign_seq + 1 WHERE assign_mode = 'auto' \
         AND id = (SELECT c.team_id FROM conversations c WHERE c.id = $1)",
    )
    .bind(conversation_id)
    .execute(&mut *tx)
    .await?;
    if locked.rows_affected() != 1 {
        tx.rollback().await?;
        return Ok(None);
    }
    // 2. Still waiting, unassigned, in a team (read after the lock: what the last winner committed).
    let row: Option<(String, String)> = sqlx::query_as(
        "SELECT agent_id, team_id FROM conversations WHERE id = $1 AND assignee_id IS NULL \
         AND status = 'waiting_human' AND team_id IS NOT NULL",
    )
    .bind(conversation_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((agent_id, team_id)) = row else {
        tx.rollback().await?;
        return Ok(None);
    };
    // 3. Candidates, in round-robin order.
    let candidates: Vec<(String, i64)> = sqlx::query_as(&format!(
        "SELECT m.user_id, u.max_open FROM team_members m JOIN users u ON u.id = m.user_id \
         WHERE m.team_id = $1 AND u.away = 0 AND u.last_seen_at IS NOT NULL AND u.last_seen_at >= $2 \
         AND (SELECT COUNT(*) FROM conversations o WHERE o.assignee_id = m.user_id AND o.status IN {OPEN}) < u.max_open \
         ORDER BY m.last_assigned_at, m.user_id"
    ))
    .bind(&team_id)
    .bind(online_after)
    .fetch_all(&mut *tx)
    .await?;
    // 4. The first whose recount (after their row lock) is still under the limit.
    let mut chosen = None;
    for (user, max_open) in candidates {
        sqlx::query("UPDATE users SET last_assigned_at = $2 WHERE id = $1")
            .bind(&user)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        let open: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM conversations WHERE assignee_id = $1 AND status IN {OPEN}"
        ))
        .bind(&user)
        .fetch_one(&mut *tx)
        .await?;
        if open < max_open {
            chosen = Some(user);
            break;
        }
    }
    let Some(user) = chosen else {
        tx.rollback().await?;
        return Ok(None);
    };
    // 5. The conditional update.
    let done = sqlx::query(
        "UPDATE conversations SET assignee_id = $2, assigned_at = $3 WHERE id = $1 AND assignee_id IS NULL \
         AND status <> 'closed'",
    )
    .bind(conversation_id)
    .bind(&user)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        tx.rollback().await?;
        return Ok(None);
    }
    // 6. The member's turn, their notification, the webhook.
    sqlx::query("UPDATE team_members SET last_assigned_at = $3 WHERE team_id = $1 AND user_id = $2")
        .bind(&team_id)
        .bind(&user)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    operator_notifications::insert_in(&mut tx, &user, "assigned", conversation_id, None, None, now).await?;
    report_in(&mut tx, &agent_id, conversation_id, Some(&user), By::Auto, "auto", now).await?;
    tx.commit().await?;
    Ok(Some((agent_id, user)))
}

/// Unassigned conversations waiting for a person in automatic teams, oldest first.
pub async fn waiting(db: &Db, limit: i64) -> Result<Vec<String>, DbError> {
    sqlx::query_scalar(
        "SELECT c.id FROM conversations c JOIN teams t ON t.id = c.team_id WHERE c.assignee_id IS NULL \
         AND c.status = 'waiting_human' AND t.assign_mode = 'auto' ORDER BY c.updated_at, c.id LIMIT $1",
    )
    .bind(limit)
    .fetch_all(&mut *db.read().await?)
    .await
}

crate::store::row_struct! {
    /// A console user with what assigning to them needs: presence and load.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Load {
        pub id: String,
        pub name: String,
        pub away: i64,
        pub last_seen_at: Option<i64>,
        pub max_open: i64,
        /// Open conversations assigned to them.
        pub open: i64,
    }
}

/// Every console user's presence and load, by name.
pub async fn loads(db: &Db) -> Result<Vec<Load>, DbError> {
    sqlx::query_as(&format!(
        "SELECT u.id, u.name, u.away, u.last_seen_at, u.max_open, \
         (SELECT COUNT(*) FROM conversations c WHERE c.assignee_id = u.id AND c.status IN {OPEN}) AS open \
         FROM users u ORDER BY u.name, u.id"
    ))
    .fetch_all(&mut *db.read().await?)
    .await
}
