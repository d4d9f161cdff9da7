//! A visitor's answers to a form shown under an answer (issue 44, part 3): checked against the
//! form as this conversation stored it — a form it never showed, a field the form does not have
//! or a wrong value is refused and nothing is stored — and answered once.

use parley_protocol::{Block, FormAnswers, FormSubmission, PRECHAT_FORM_ID, Role, answers_text};

use super::super::Engine;
use super::ChatError;
use super::send::SendRequest;
use crate::store::messages;

/// A refusal naming the field to correct.
fn refused(field: &str, why: &str) -> ChatError {
    ChatError::InvalidForm(vec![(field.to_owned(), why.to_owned())])
}

impl Engine {
    /// The answers of a submitted form and the visitor's message they stand for.
    pub(super) async fn form_answers(
        &self,
        req: &SendRequest<'_>,
        submission: &FormSubmission,
    ) -> Result<(FormAnswers, String), ChatError> {
        let form = match req.conversation_id {
            // The agent's pre-chat form: only as a conversation's first message.
            None if submission.form_id == PRECHAT_FORM_ID => req.agent.prechat.form(),
            None => None,
            Some(id) => {
                let conv = self.own_conversation(req.visitor, id).await?;
                let shown = messages::form_blocks(self.db(), &conv.id, Role::Assistant).await?;
                shown.into_iter().find_map(|b| match b {
                    Block::Form(f) if f.form_id == submission.form_id => Some(f),
                    _ => None,
                })
            }
        };
        let form = form.ok_or_else(|| refused("form_id", "is not a form of this conversation"))?;
        let answers = form.check(&submission.values).map_err(|(field, problem)| refused(&field, problem.english()))?;
        let text = answers_text(&answers);
        let fallback_text = text.clone();
        Ok((FormAnswers { form_id: form.form_id, answers, fallback_text }, text))
    }

    /// Refuses a form this conversation already has answers to.
    pub(super) async fn form_not_answered(&self, conversation_id: &str, form_id: &str) -> Result<(), ChatError> {
        let sent = messages::form_blocks(self.db(), conversation_id, Role::Visitor).await?;
        if sent.iter().any(|b| matches!(b, Block::FormAnswers(a) if a.form_id == form_id)) {
            return Err(refused("form_id", "was already sent"));
        }
        Ok(())
    }
}
