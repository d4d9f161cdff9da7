//! Answer tests (issue 45, part 2): an owner keeps test cases per agent — a visitor's turns and
//! what a good answer must do ([`Check`]) — and runs the set against the published agent or its
//! draft. Each case is a *trial* ([`trial`]): the real turn, with the real tools against real
//! data, in a conversation that reaches no one (no inbox, search, webhooks, mail or operator
//! notifications; payments in the sandbox) and is deleted once read. Runs go on in the
//! background ([`runner`]), one case at a time, and can be cancelled between cases. The console's
//! preview ([`preview`]) is a trial kept between messages.

mod checks;
mod judge;
mod preview;
mod runner;
pub mod trial;

use crate::store::agents::{Agent, versions};
use crate::store::answer_tests::{self as store, Check, TestCase};
use crate::store::{DbError, agents};

pub use checks::evaluate;
pub use judge::JUDGE_PROMPT;
pub use preview::TRIAL_IDLE;
pub use runner::AnswerRuns;
pub use trial::TrialAnswer;

use super::Engine;

/// Most cases an agent keeps.
pub const MAX_CASES: usize = 100;
/// Most turns in one case.
pub const MAX_TURNS: usize = 10;
/// Most checks in one case.
pub const MAX_CHECKS: usize = 20;
/// Longest check text (a word, a source, a criterion).
pub const MAX_CHECK_CHARS: usize = 500;

/// What the run tries: the agent as visitors get it, or its draft.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Published,
    Draft,
}

impl Target {
    pub fn parse(raw: &str) -> Option<Target> {
        match raw {
            "published" => Some(Target::Published),
            "draft" => Some(Target::Draft),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Target::Published => "published",
            Target::Draft => "draft",
        }
    }
}

/// Why a case was not saved or a run not started.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    #[error("There is no such agent.")]
    NoAgent,
    #[error("There is no such test case.")]
    NoCase,
    #[error("There is no such run.")]
    NoRun,
    #[error("The agent has no draft to test; save one on its Versions page first.")]
    NoDraft,
    #[error("The agent has no test cases yet.")]
    NoCases,
    #[error("A run of this agent's tests is still going; wait for it or cancel it.")]
    Busy,
    #[error("The run has already ended.")]
    Ended,
    #[error("There is no such preview conversation; start over.")]
    NoPreview,
    /// The preview's message could not be answered.
    #[error("The message could not be answered: {0}")]
    Turn(String),
    /// The case as written breaks a rule: (field, message) pairs.
    #[error("The test case is not valid.")]
    Invalid(Vec<(&'static str, String)>),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// A case as the owner wrote it, before it is checked.
#[derive(Clone, Debug, Default)]
pub struct CaseInput {
    pub name: String,
    pub turns: Vec<String>,
    pub checks: Vec<Check>,
}

/// Checks a case against the rules and the tools the owner may name; gives it trimmed.
pub fn parse_case(input: &CaseInput, tools: &[String]) -> Result<CaseInput, TestError> {
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let name = input.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        errors.push(("name", "Give the case a name of 1 to 100 characters.".into()));
    }
    let turns: Vec<String> = input.turns.iter().map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).collect();
    if turns.is_empty() || turns.len() > MAX_TURNS {
        errors.push(("turns", format!("Write 1 to {MAX_TURNS} visitor messages.")));
    } else if turns.iter().any(|t| t.chars().count() > parley_protocol::MAX_MESSAGE_CHARS) {
        errors.push(("turns", format!("A message has at most {} characters.", parley_protocol::MAX_MESSAGE_CHARS)));
    }
    if input.checks.is_empty() || input.checks.len() > MAX_CHECKS {
        errors.push(("checks", format!("Give 1 to {MAX_CHECKS} checks.")));
    }
    let mut checks = Vec::with_capacity(input.checks.len());
    for check in &input.checks {
        match parse_check(check, tools) {
            Ok(check) => checks.push(check),
            Err(message) => errors.push(("checks", message)),
        }
    }
    if errors.is_empty() { Ok(CaseInput { name, turns, checks }) } else { Err(TestError::Invalid(errors)) }
}

/// One check, trimmed, or why it is wrong.
fn parse_check(check: &Check, tools: &[String]) -> Result<Check, String> {
    let text = |what: &str, value: &str| -> Result<String, String> {
        let value = value.trim();
        if value.is_empty() || value.chars().count() > MAX_CHECK_CHARS {
            Err(format!("A check's {what} has 1 to {MAX_CHECK_CHARS} characters."))
        } else {
            Ok(value.to_owned())
        }
    };
    let tool = |name: &str| -> Result<String, String> {
        let name = name.trim();
        if tools.iter().any(|t| t == name) {
            Ok(name.to_owned())
        } else {
            Err(format!("There is no tool named “{name}”."))
        }
    };
    Ok(match check {
        Check::Contains { text: t } => Check::Contains { text: text("text", t)? },
        Check::NotContains { text: t } => Check::NotContains { text: text("text", t)? },
        Check::CallsTool { tool: t } => Check::CallsTool { tool: tool(t)? },
        Check::NotCallsTool { tool: t } => Check::NotCallsTool { tool: tool(t)? },
        Check::Cites { source } => Check::Cites { source: text("source", source)? },
        Check::HandsOver => Check::HandsOver,
        Check::NoHandOver => Check::NoHandOver,
        Check::MaxCost { usd } if usd.is_finite() && *usd >= 0.0 && *usd <= 100.0 => Check::MaxCost { usd: *usd },
        Check::MaxCost { .. } => return Err("A cost limit is between $0 and $100.".into()),
        Check::Judge { criterion, model } => {
            Check::Judge { criterion: text("criterion", criterion)?, model: text("model", model)? }
        }
    })
}

impl Engine {
    /// Saves a case of an agent (new when `id` is `None`); its id.
    pub async fn save_answer_test(
        &self,
        agent_id: &str,
        id: Option<&str>,
        input: &CaseInput,
    ) -> Result<String, TestError> {
        agents::by_id(self.db(), agent_id).await?.ok_or(TestError::NoAgent)?;
        let tools: Vec<String> = self.catalogue().into_iter().map(|(name, _)| name).collect();
        let case = parse_case(input, &tools)?;
        if id.is_none() && store::cases(self.db(), agent_id).await?.len() >= MAX_CASES {
            return Err(TestError::Invalid(vec![("name", format!("An agent keeps at most {MAX_CASES} test cases."))]));
        }
        store::save_case(self.db(), agent_id, id, (&case.name, &case.turns, &case.checks), self.now_ms())
            .await?
            .ok_or(TestError::NoCase)
    }

    /// Deletes a case of an agent.
    pub async fn delete_answer_test(&self, agent_id: &str, id: &str) -> Result<(), TestError> {
        if store::delete_case(self.db(), agent_id, id).await? { Ok(()) } else { Err(TestError::NoCase) }
    }

    /// The agent a run tries: as published (read afresh, not from the cache) or with its draft's
    /// behaviour; with the version it is (or started from).
    async fn agent_to_try(&self, agent_id: &str, target: Target) -> Result<(Agent, i64), TestError> {
        let agent = agents::by_id(self.db(), agent_id).await?.ok_or(TestError::NoAgent)?;
        match target {
            Target::Published => {
                let version = agent.version;
                Ok((agent, version))
            }
            Target::Draft => {
                let draft = versions::draft(self.db(), agent_id).await?.ok_or(TestError::NoDraft)?;
                Ok((draft.behaviour.apply(&agent), draft.base_version))
            }
        }
    }

    /// Starts a run of the agent's tests in the background; its id.
    pub async fn start_answer_tests(
        &self,
        agent_id: &str,
        target: Target,
        by: Option<&str>,
    ) -> Result<String, TestError> {
        let (agent, version) = self.agent_to_try(agent_id, target).await?;
        let cases: Vec<TestCase> = store::cases(self.db(), agent_id).await?;
        if cases.is_empty() {
            return Err(TestError::NoCases);
        }
        let new = store::NewRun {
            agent_id,
            target: target.as_str(),
            version,
            total: cases.len() as i64,
            started_by: by,
            now: self.now_ms(),
            process: self.process_id(),
        };
        let run_id = store::start_run(self.db(), &new).await?.ok_or(TestError::Busy)?;
        self.spawn_run(run_id.clone(), agent, cases);
        Ok(run_id)
    }

    /// Asks a run to stop: the case under way ends, the rest do not run.
    pub async fn cancel_answer_tests(&self, agent_id: &str, run_id: &str) -> Result<(), TestError> {
        let run = store::run(self.db(), agent_id, run_id).await?.ok_or(TestError::NoRun)?;
        if run.status != "running" || !store::request_cancel(self.db(), agent_id, run_id).await? {
            return Err(TestError::Ended);
        }
        self.0.answer_runs.cancel(run_id);
        Ok(())
    }
}
