//! The console's preview of an agent: the owner writes to the draft (or the published version)
//! as a visitor would, in a trial conversation kept between messages (see [`super::trial`]):
//! the real turn, reaching no one. *Start over* deletes it; the hourly sweep deletes what a
//! preview left behind (and what a run stopped by a crash did) after an hour.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::super::Engine;
use super::{Target, TestError, TrialAnswer};
use crate::store::{conversations, privacy, visitors};

/// A trial conversation untouched this long is deleted by the sweep.
pub const TRIAL_IDLE: Duration = Duration::from_secs(3_600);

impl Engine {
    /// Sends `text` to the agent (`target`: its published version or its draft) in the preview
    /// conversation `conversation` (`None`: a new one); what the answer did, with the
    /// conversation's cost so far.
    pub async fn preview_message(
        &self,
        agent_id: &str,
        target: Target,
        conversation: Option<&str>,
        text: &str,
    ) -> Result<TrialAnswer, TestError> {
        let (agent, _) = self.agent_to_try(agent_id, target).await?;
        let visitor = match conversation {
            None => {
                let token = visitors::new_token();
                visitors::create(self.db(), agent_id, &token, None, &Default::default(), self.now_ms()).await?
            }
            Some(id) => {
                let visitor_id = self.preview_visitor(agent_id, id).await?;
                visitors::by_id(self.db(), &visitor_id).await?.ok_or(TestError::NoPreview)?
            }
        };
        let started_at = Instant::now();
        let turned = self.trial_turn(Arc::new(agent), &visitor, conversation, text).await;
        let (conversation_id, message_id) = match turned {
            Ok(ids) => ids,
            Err(e) => {
                if conversation.is_none() {
                    // Nothing to keep: the new trial visitor goes.
                    privacy::delete_person(self.db(), &visitor.id, self.now_ms()).await?;
                }
                return Err(TestError::Turn(e.to_string()));
            }
        };
        self.read_trial(&conversation_id, &message_id, started_at).await.map_err(|e| TestError::Turn(e.to_string()))
    }

    /// Deletes a preview conversation and its trial visitor.
    pub async fn end_preview(&self, agent_id: &str, conversation: &str) -> Result<(), TestError> {
        let visitor_id = self.preview_visitor(agent_id, conversation).await?;
        privacy::delete_person(self.db(), &visitor_id, self.now_ms()).await?;
        Ok(())
    }

    /// The trial visitor of the agent's trial conversation `id`; any other conversation is not a
    /// preview.
    async fn preview_visitor(&self, agent_id: &str, id: &str) -> Result<String, TestError> {
        match conversations::trial_of(self.db(), id).await? {
            Some((agent, visitor)) if agent == agent_id => Ok(visitor),
            _ => Err(TestError::NoPreview),
        }
    }

    /// Deletes the trial visitors whose conversations nobody touched for [`TRIAL_IDLE`] (a
    /// preview left open, a run stopped by a crash); how many.
    pub async fn delete_idle_trials(&self) -> Result<usize, crate::store::DbError> {
        let cutoff = self.now_ms() - TRIAL_IDLE.as_millis() as i64;
        let idle = conversations::idle_trial_visitors(self.db(), cutoff).await?;
        for visitor in &idle {
            privacy::delete_person(self.db(), visitor, self.now_ms()).await?;
        }
        Ok(idle.len())
    }
}
