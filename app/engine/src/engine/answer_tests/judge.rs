//! Checks that need judgement ("polite", "answers the question"): one call to a model the owner
//! names, through the agent's own provider, with [`JUDGE_PROMPT`] (shown on the tests page). Its
//! cost goes to the usage ledger and into the case's cost.

use std::time::Instant;

use futures::StreamExt;

use super::super::Engine;
use super::super::budget::Charge;
use super::super::context::message_tokens;
use super::super::pricing::estimate_tokens;
use super::super::provider::{AttemptLog, ModelEvent, ModelMessage, ModelRequest};
use crate::store::agents::Agent;

/// The grader's instructions; the criterion, the conversation and the answer follow as the
/// user's message.
pub const JUDGE_PROMPT: &str = "You grade one answer of a website's chat assistant against one criterion. \
Read the visitor's messages and the assistant's last answer, then decide whether the answer meets the \
criterion. Reply with PASS or FAIL on the first line and one short sentence saying why on the second.";

/// A judge's verdict.
pub struct Verdict {
    pub passed: bool,
    /// The judge's reason, or why there is no verdict.
    pub detail: String,
    pub cost_usd: f64,
}

impl Engine {
    /// Asks `model` (on the agent's provider) whether `answer` to `turns` meets `criterion`.
    pub(super) async fn judge(
        &self,
        agent: &Agent,
        model: &str,
        criterion: &str,
        turns: &[String],
        answer: &str,
    ) -> Verdict {
        let mut grader = agent.clone();
        grader.provider.model = model.to_owned();
        let client = self.model_for(&grader);
        let visitor = turns.iter().map(|t| format!("Visitor: {t}")).collect::<Vec<_>>().join("\n");
        let request = ModelRequest {
            model: model.to_owned(),
            messages: vec![
                ModelMessage::System(JUDGE_PROMPT.to_owned()),
                ModelMessage::User(format!("Criterion: {criterion}\n\n{visitor}\n\nAssistant's answer:\n{answer}")),
            ],
            tools: Vec::new(),
            max_tokens: Some(200),
        };
        let started = Instant::now();
        let mut text = String::new();
        let mut usage = None;
        let called = async {
            let mut stream = client.stream(request.clone(), &AttemptLog::default()).await?;
            while let Some(event) = stream.next().await {
                match event? {
                    ModelEvent::Text(t) => text.push_str(&t),
                    ModelEvent::Usage(u) => usage = Some(u),
                    ModelEvent::ToolCall(_) | ModelEvent::Finished(_) => {}
                }
            }
            Ok::<(), super::super::provider::ProviderError>(())
        };
        let outcome = tokio::time::timeout(self.settings().spend.answer_time_limit, called).await;
        let (input, output, cached, estimated) = match usage {
            Some(u) if u.input > 0 || u.output > 0 => (u.input, u.output, u.cached, false),
            _ => {
                let input = request.messages.iter().map(message_tokens).sum::<usize>() as u64;
                (input, estimate_tokens(&text), 0, true)
            }
        };
        let code = match &outcome {
            Ok(Ok(())) => "ok",
            Ok(Err(e)) => e.code(),
            Err(_) => "timeout",
        };
        let cost_usd = self.prices().cost_usd(model, input, cached, output);
        let row = Charge {
            agent_id: &agent.id,
            agent_key: &agent.public_key,
            conversation_id: None,
            message_id: None,
            visitor_id: None,
            provider: client.provider(),
            model,
            outcome: code,
            input_tokens: input,
            output_tokens: output,
            cached_tokens: cached,
            estimated,
            cost_usd,
            latency_ms: started.elapsed().as_millis() as u64,
            at: self.now_ms(),
        }
        .ledger_row(None);
        self.0.writer.usage(row);
        match outcome {
            Ok(Ok(())) => {
                let (passed, detail) = verdict(&text);
                Verdict { passed, detail, cost_usd }
            }
            Ok(Err(e)) => Verdict { passed: false, detail: format!("the judge could not be asked: {e}"), cost_usd },
            Err(_) => Verdict { passed: false, detail: "the judge did not answer in time".into(), cost_usd },
        }
    }
}

/// Reads a judge's reply: `PASS` or `FAIL` first, then why.
fn verdict(reply: &str) -> (bool, String) {
    let mut lines = reply.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    let why: String = lines.collect::<Vec<_>>().join(" ");
    let word = first.trim_start_matches(|c: char| !c.is_alphanumeric()).to_uppercase();
    let why = if why.is_empty() { first.to_owned() } else { why };
    if word.starts_with("PASS") {
        (true, why)
    } else if word.starts_with("FAIL") {
        (false, why)
    } else {
        (false, format!("the judge said neither PASS nor FAIL: {}", reply.trim().chars().take(200).collect::<String>()))
    }
}

#[cfg(test)]
mod tests {
    use super::verdict;

    #[test]
    fn reads_pass_fail_and_anything_else() {
        assert_eq!(verdict("PASS\nIt greets the visitor."), (true, "It greets the visitor.".into()));
        assert_eq!(verdict("**FAIL**\n\nRude."), (false, "Rude.".into()));
        assert!(!verdict("I think it is fine").0);
        assert!(verdict("I think it is fine").1.starts_with("the judge said neither"));
    }
}
