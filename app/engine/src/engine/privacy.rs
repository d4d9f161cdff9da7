//! A person's data exported or deleted on request, and conversations deleted past their agent's
//! retention period (issue 16). See [`crate::store::privacy`].

use serde_json::Value;

use super::Engine;
use crate::store::privacy::{self, Deleted};
use crate::store::{DbError, agents, identity, visitors};

/// Milliseconds in a day.
const DAY_MS: i64 = 24 * 3600 * 1000;

/// Whom a request is about.
#[derive(Clone, Debug, PartialEq)]
pub enum Person {
    /// An identified user of an agent, by the website's user id.
    User { agent_id: String, subject: String },
    /// A visitor, by id (as the console's conversations show it).
    Visitor(String),
}

impl Person {
    /// The person a request names: a visitor id, or else a user id of an agent (blank fields
    /// count as absent); `None` when it names nobody.
    pub fn named(agent_id: &str, user: &str, visitor: &str) -> Option<Person> {
        match (visitor.trim(), user.trim(), agent_id.trim()) {
            (v, _, _) if !v.is_empty() => Some(Person::Visitor(v.to_owned())),
            (_, u, a) if !u.is_empty() && !a.is_empty() => {
                Some(Person::User { agent_id: a.to_owned(), subject: u.to_owned() })
            }
            _ => None,
        }
    }

    /// How the audit log names the person: a digest of their id, so that the log itself keeps
    /// no trace of someone whose data was deleted, yet someone who knows the id can find it.
    pub fn audit_label(&self) -> String {
        use sha2::{Digest, Sha256};
        let (kind, id) = match self {
            Person::User { subject, .. } => ("user", subject.as_str()),
            Person::Visitor(id) => ("visitor", id.as_str()),
        };
        let digest = Sha256::digest(id.as_bytes());
        let short: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        format!("{kind} #{short}")
    }
}

impl Engine {
    /// The visitor row holding the person's data; `None` when there is no such person.
    pub async fn person_row(&self, person: &Person) -> Result<Option<String>, DbError> {
        match person {
            Person::User { agent_id, subject } => {
                Ok(identity::user_by_subject(self.db(), agent_id, subject).await?.map(|u| u.visitor_id))
            }
            // A browser of an identified user stands for the user.
            Person::Visitor(id) => visitors::person_of(self.db(), id).await,
        }
    }

    /// Everything stored about the person, as JSON; `None` when there is no such person.
    pub async fn export_person(&self, person: &Person) -> Result<Option<Value>, DbError> {
        let Some(row) = self.person_row(person).await? else { return Ok(None) };
        privacy::export(self.db(), &row).await
    }

    /// Deletes everything about the person; `None` when there is no such person.
    pub async fn delete_person(&self, person: &Person) -> Result<Option<Deleted>, DbError> {
        let Some(row) = self.person_row(person).await? else { return Ok(None) };
        let deleted = privacy::delete_person(self.db(), &row, self.now_ms()).await?;
        self.visitors_changed();
        metrics::counter!("parley_people_deleted_total").increment(1);
        Ok(Some(deleted))
    }

    /// Deletes every agent's conversations past its retention period.
    pub async fn apply_retention(&self) -> Result<u64, DbError> {
        let now = self.now_ms();
        let mut deleted = 0;
        for (agent_id, days) in agents::with_retention(self.db()).await? {
            let before = now.saturating_sub(days.max(1).saturating_mul(DAY_MS));
            let done = privacy::delete_conversations_before(self.db(), &agent_id, before).await?;
            if done.conversations > 0 {
                tracing::info!(agent = %agent_id, conversations = done.conversations, "deleted conversations past retention");
            }
            deleted += done.conversations;
        }
        metrics::counter!("parley_retention_deleted_total").increment(deleted);
        Ok(deleted)
    }
}

impl Engine {
    /// Records a console user's action in the audit log (`None`: the command line). A failure to
    /// record is logged; it never undoes the action.
    pub async fn audit(
        &self,
        user: Option<&crate::store::users::User>,
        action: &str,
        target: Option<&str>,
        detail: &str,
    ) {
        let (id, actor) = match user {
            Some(u) => (Some(u.id.as_str()), u.email.as_str()),
            None => (None, "cli"),
        };
        self.audit_as(id, actor, action, target, detail).await;
    }

    /// [`Engine::audit`] with the actor given as it is (a failed sign-in's address).
    pub async fn audit_as(
        &self,
        actor_id: Option<&str>,
        actor: &str,
        action: &str,
        target: Option<&str>,
        detail: &str,
    ) {
        let now = self.now_ms();
        if let Err(e) = crate::store::audit::record(self.db(), actor_id, actor, action, target, detail, now).await {
            tracing::warn!(error = %e, action, "could not record an action in the audit log");
        }
    }
}
