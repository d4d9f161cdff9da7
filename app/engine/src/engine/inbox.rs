//! The team inbox (issue 43): whose a conversation is, the operators' private notes and labels.
//! Rules (also in `docs/inbox.md`):
//! - A conversation that starts needing a person goes to its agent's team's queue (in the same
//!   transaction as its status); an automatic team gives it at once to the member who is online,
//!   under their limit and got one longest ago ([`store::assignment::auto_assign`]); a sweeper
//!   retries what nobody could take.
//! - Any operator who may see a conversation may assign, reassign, unassign it or hand it to a
//!   team; a held conversation's claim follows its new assignee (the visitor is told the name).
//! - Notes never touch the stream, the messages, the events or the webhooks: they are stored and
//!   announced on the console's feed only (a mention to the mentioned colleague only).
//! - Visibility: admins and operators in no team see everything; an operator in a team sees the
//!   conversations of the agents their teams handle and those assigned to them.

use parley_protocol::{Handoff, StreamEvent};

use super::Engine;
use super::console::ConsoleEvent;
use super::takeover::TakeoverError;
use crate::store::assignment::{self, AssignError};
use crate::store::console::{self as console_store, InboxCounts};
use crate::store::labels::{self, SetError};
use crate::store::users::{self, Role, User};
use crate::store::{DbError, notes};

impl From<AssignError> for TakeoverError {
    fn from(e: AssignError) -> Self {
        match e {
            AssignError::NotFound => TakeoverError::NotFound,
            AssignError::Refused(why) => TakeoverError::Refused(why),
            AssignError::Db(e) => TakeoverError::Db(e),
        }
    }
}

/// Unassigned conversations of automatic teams handled per sweep.
const SWEEP: i64 = 100;

impl Engine {
    /// Whom a user's lists are limited to: `None` (everything) for admins and operators in no
    /// team; else the user's own id (see `store::console::ConversationFilter::visible_to`).
    pub async fn visible_to(&self, user: &User) -> Result<Option<String>, DbError> {
        if user.role == Role::Admin || !console_store::in_a_team(self.db(), &user.id).await? {
            return Ok(None);
        }
        Ok(Some(user.id.clone()))
    }

    /// Whether the user may see (and act on) the conversation; false when there is none.
    pub async fn may_see(&self, user: &User, conversation_id: &str) -> Result<bool, DbError> {
        let visible_to = self.visible_to(user).await?;
        console_store::may_see(self.db(), conversation_id, visible_to.as_deref()).await
    }

    async fn seen_by(&self, user: &User, conversation_id: &str) -> Result<(), TakeoverError> {
        if self.may_see(user, conversation_id).await? { Ok(()) } else { Err(TakeoverError::NotFound) }
    }

    /// The inbox's counts for the user.
    pub async fn inbox_counts(&self, user: &User) -> Result<InboxCounts, DbError> {
        let visible_to = self.visible_to(user).await?;
        console_store::inbox_counts(self.db(), &user.id, visible_to.as_deref()).await
    }

    /// Assigns the conversation to `to` (`None`: unassigns it).
    pub async fn assign(&self, conversation_id: &str, user: &User, to: Option<&str>) -> Result<(), TakeoverError> {
        self.seen_by(user, conversation_id).await?;
        let done = assignment::assign(self.db(), conversation_id, to, &user.id, self.now_ms()).await?;
        self.wake_outbox();
        if let Some(name) = done.claim_moved_to {
            self.emit_now(
                conversation_id,
                StreamEvent::Handoff(Handoff { to: "human".into(), operator_name: Some(name) }),
            )
            .await?;
        }
        self.console(ConsoleEvent::new(conversation_id, &done.agent_id, "assigned").for_user(to));
        Ok(())
    }

    /// Hands the conversation to a team's queue (`None`: to no team), unassigned; an automatic
    /// team gives it out at once.
    pub async fn hand_to_team(
        &self,
        conversation_id: &str,
        user: &User,
        team_id: Option<&str>,
    ) -> Result<(), TakeoverError> {
        self.seen_by(user, conversation_id).await?;
        let done = assignment::to_team(self.db(), conversation_id, team_id, &user.id, self.now_ms()).await?;
        self.wake_outbox();
        self.console(ConsoleEvent::new(conversation_id, &done.agent_id, "queue"));
        self.auto_assign(conversation_id).await;
        Ok(())
    }

    /// Gives the conversation to the next member of its automatic team, if anyone can take it;
    /// whom. A failure is logged (the sweeper tries again).
    pub async fn auto_assign(&self, conversation_id: &str) -> Option<String> {
        match assignment::auto_assign(self.db(), conversation_id, self.now_ms()).await {
            Ok(Some((agent_id, user))) => {
                self.wake_outbox();
                self.console(ConsoleEvent::new(conversation_id, &agent_id, "assigned").for_user(Some(&user)));
                Some(user)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "could not assign a conversation automatically");
                None
            }
        }
    }

    /// Gives out what waits in automatic teams' queues (after capacity freed up, someone came
    /// back, and periodically); how many it assigned.
    pub async fn assign_waiting(&self) -> usize {
        let waiting = match assignment::waiting(self.db(), SWEEP).await {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the teams' queues");
                return 0;
            }
        };
        let mut assigned = 0;
        for id in waiting {
            if self.auto_assign(&id).await.is_some() {
                assigned += 1;
            }
        }
        assigned
    }

    /// Adds a private note; `mentions` are the colleagues' ids the console's `@` menu picked
    /// (only those whose `@Name` is still in the text count). Its id.
    pub async fn add_note(
        &self,
        conversation_id: &str,
        user: &User,
        body: &str,
        mentions: &[String],
    ) -> Result<String, TakeoverError> {
        let body = body.trim();
        if body.is_empty() || body.chars().count() > notes::MAX_BODY_CHARS {
            return Err(TakeoverError::Refused("a note has 1 to 4000 characters"));
        }
        self.seen_by(user, conversation_id).await?;
        let agent_id = self.conversation_agent(conversation_id).await?.0;
        let mut mentioned: Vec<String> = Vec::new();
        for id in mentions {
            if mentioned.contains(id) || *id == user.id {
                continue;
            }
            let Some(colleague) = users::by_id(self.db(), id).await? else {
                return Err(TakeoverError::Refused("a mentioned colleague does not exist"));
            };
            if body.contains(&format!("@{}", colleague.name)) {
                mentioned.push(colleague.id);
            }
        }
        let id =
            notes::add(self.db(), conversation_id, (&user.id, &user.name), body, &mentioned, self.now_ms()).await?;
        self.console(ConsoleEvent::new(conversation_id, &agent_id, "note"));
        for colleague in &mentioned {
            self.console(ConsoleEvent::new(conversation_id, &agent_id, "mention").for_user(Some(colleague)));
        }
        Ok(id)
    }

    /// A conversation's notes (for someone who may see it).
    pub async fn notes(&self, conversation_id: &str, user: &User) -> Result<Vec<notes::Note>, TakeoverError> {
        self.seen_by(user, conversation_id).await?;
        Ok(notes::of_conversation(self.db(), conversation_id).await?)
    }

    /// Makes the conversation's labels exactly `label_ids`.
    pub async fn set_labels(
        &self,
        conversation_id: &str,
        user: &User,
        label_ids: &[String],
    ) -> Result<labels::Changed, TakeoverError> {
        self.seen_by(user, conversation_id).await?;
        let changed = labels::set_on(self.db(), conversation_id, label_ids, &user.id, self.now_ms()).await.map_err(
            |e| match e {
                SetError::NotFound => TakeoverError::NotFound,
                SetError::UnknownLabel => TakeoverError::Refused("no such label"),
                SetError::Db(e) => TakeoverError::Db(e),
            },
        )?;
        if !changed.added.is_empty() || !changed.removed.is_empty() {
            self.wake_outbox();
            self.console(ConsoleEvent::new(conversation_id, &changed.agent_id, "labels"));
        }
        Ok(changed)
    }
}
