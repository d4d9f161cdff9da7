//! Teams of console users (issue 43): who handles which agents' conversations that need a person,
//! and whether the team's queue is shared out automatically (`auto`) or by hand (`manual`).
//! An agent belongs to one team at most; a user may be in several.

use super::{Db, DbError, new_id};

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

crate::store::row_struct! {
    /// A team as stored.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Team {
        pub id: String,
        pub name: String,
        /// `manual` or `auto`.
        pub assign_mode: String,
        pub created_at: i64,
    }
}

/// Longest team name.
pub const MAX_NAME_CHARS: usize = 60;

/// A team name as stored (trimmed), or why it cannot be one.
pub fn name(raw: &str) -> Result<String, &'static str> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err("A team name has 1 to 60 characters.");
    }
    Ok(name.to_owned())
}

/// An assignment mode as stored, or why it cannot be one.
pub fn mode(raw: &str) -> Result<&'static str, &'static str> {
    match raw.trim() {
        "manual" => Ok("manual"),
        "auto" => Ok("auto"),
        _ => Err("The assignment mode is manual or auto."),
    }
}

/// Why a team was not saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("another team has this name")]
    NameTaken,
    #[error("no such team")]
    NotFound,
    #[error("no such {0}")]
    Unknown(&'static str),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Every team, by name.
pub async fn list(db: &Db) -> Result<Vec<Team>, DbError> {
    sqlx::query_as("SELECT id, name, assign_mode, created_at FROM teams ORDER BY name, id")
        .fetch_all(&mut *db.read().await?)
        .await
}

/// One team.
pub async fn by_id(db: &Db, id: &str) -> Result<Option<Team>, DbError> {
    sqlx::query_as("SELECT id, name, assign_mode, created_at FROM teams WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// What a team is made of when saved.
#[derive(Clone, Debug, Default)]
pub struct TeamForm<'a> {
    pub name: &'a str,
    /// `manual` or `auto` (already parsed by [`mode`]).
    pub mode: &'a str,
    pub members: &'a [String],
    pub agents: &'a [String],
}

/// Creates a team (`id` `None`) or rewrites one, with its members and agents, in one transaction;
/// its id. A member kept keeps their place in the round-robin; an agent listed moves to this team.
pub async fn save(db: &Db, id: Option<&str>, form: &TeamForm<'_>, now: i64) -> Result<String, SaveError> {
    let mut tx = db.begin_write().await?;
    let id = match id {
        None => {
            let id = new_id();
            let done = sqlx::query(
                "INSERT INTO teams (id, name, assign_mode, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)",
            )
            .bind(&id)
            .bind(form.name)
            .bind(form.mode)
            .bind(now)
            .execute(&mut *tx)
            .await;
            unique(done)?;
            id
        }
        Some(id) => {
            let done = sqlx::query("UPDATE teams SET name = $2, assign_mode = $3, updated_at = $4 WHERE id = $1")
                .bind(id)
                .bind(form.name)
                .bind(form.mode)
                .bind(now)
                .execute(&mut *tx)
                .await;
            if unique(done)?.rows_affected() != 1 {
                return Err(SaveError::NotFound);
            }
            id.to_owned()
        }
    };
    for user in form.members {
        let known: Option<(String,)> =
            sqlx::query_as("SELECT id FROM users WHERE id = $1").bind(user).fetch_optional(&mut *tx).await?;
        if known.is_none() {
            return Err(SaveError::Unknown("console user"));
        }
        sqlx::query(
            "INSERT INTO team_members (team_id, user_id) VALUES ($1, $2) ON CONFLICT (team_id, user_id) DO NOTHING",
        )
        .bind(&id)
        .bind(user)
        .execute(&mut *tx)
        .await?;
    }
    let kept: Vec<(String,)> =
        sqlx::query_as("SELECT user_id FROM team_members WHERE team_id = $1").bind(&id).fetch_all(&mut *tx).await?;
    for (user,) in kept.into_iter().filter(|(u,)| !form.members.contains(u)) {
        sqlx::query("DELETE FROM team_members WHERE team_id = $1 AND user_id = $2")
            .bind(&id)
            .bind(user)
            .execute(&mut *tx)
            .await?;
    }
    for agent in form.agents {
        let known: Option<(String,)> =
            sqlx::query_as("SELECT id FROM agents WHERE id = $1").bind(agent).fetch_optional(&mut *tx).await?;
        if known.is_none() {
            return Err(SaveError::Unknown("agent"));
        }
        sqlx::query(
            "INSERT INTO team_agents (agent_id, team_id) VALUES ($1, $2) \
             ON CONFLICT (agent_id) DO UPDATE SET team_id = excluded.team_id",
        )
        .bind(agent)
        .bind(&id)
        .execute(&mut *tx)
        .await?;
    }
    let handled: Vec<(String,)> =
        sqlx::query_as("SELECT agent_id FROM team_agents WHERE team_id = $1").bind(&id).fetch_all(&mut *tx).await?;
    for (agent,) in handled.into_iter().filter(|(a,)| !form.agents.contains(a)) {
        sqlx::query("DELETE FROM team_agents WHERE agent_id = $1").bind(agent).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(id)
}

fn unique<T>(done: Result<T, DbError>) -> Result<T, SaveError> {
    done.map_err(|e| match e {
        DbError::Database(d) if d.is_unique_violation() => SaveError::NameTaken,
        e => SaveError::Db(e),
    })
}

/// Deletes a team (its conversations go back to no team); false when there was none.
pub async fn delete(db: &Db, id: &str) -> Result<bool, DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE conversations SET team_id = NULL WHERE team_id = $1").bind(id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM team_members WHERE team_id = $1").bind(id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM team_agents WHERE team_id = $1").bind(id).execute(&mut *tx).await?;
    let done = sqlx::query("DELETE FROM teams WHERE id = $1").bind(id).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(done.rows_affected() == 1)
}

/// A team's members: `(user id, name)`, by name.
pub async fn members(db: &Db, team_id: &str) -> Result<Vec<(String, String)>, DbError> {
    sqlx::query_as(
        "SELECT u.id, u.name FROM team_members m JOIN users u ON u.id = m.user_id WHERE m.team_id = $1 ORDER BY u.name, u.id",
    )
    .bind(team_id)
    .fetch_all(&mut *db.read().await?)
    .await
}

/// The agents a team handles.
pub async fn agents(db: &Db, team_id: &str) -> Result<Vec<String>, DbError> {
    sqlx::query_scalar("SELECT agent_id FROM team_agents WHERE team_id = $1 ORDER BY agent_id")
        .bind(team_id)
        .fetch_all(&mut *db.read().await?)
        .await
}

/// The teams a user is in.
pub async fn of_user(db: &Db, user_id: &str) -> Result<Vec<String>, DbError> {
    sqlx::query_scalar("SELECT team_id FROM team_members WHERE user_id = $1 ORDER BY team_id")
        .bind(user_id)
        .fetch_all(&mut *db.read().await?)
        .await
}

/// Routes a conversation that starts needing a person to its agent's team (unless it already has
/// one), inside the transaction that changes its status; the team it is in afterwards.
pub async fn route_in(tx: &mut Tx<'_>, conversation_id: &str) -> Result<Option<String>, DbError> {
    sqlx::query(
        "UPDATE conversations SET team_id = \
         (SELECT ta.team_id FROM team_agents ta WHERE ta.agent_id = conversations.agent_id) \
         WHERE id = $1 AND team_id IS NULL",
    )
    .bind(conversation_id)
    .execute(&mut **tx)
    .await?;
    let row: Option<(Option<String>,)> = sqlx::query_as("SELECT team_id FROM conversations WHERE id = $1")
        .bind(conversation_id)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.and_then(|(t,)| t))
}
