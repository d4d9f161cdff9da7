//! Runs of an agent's tests, in the background: one case after another, each case's result stored
//! (and counted in its run) as soon as it is judged, so the console's progress bar reads the run's
//! row. A cancel (the row's status, and this process's token) stops the run between cases. A run
//! whose process stops reads as interrupted (`store::answer_tests::Run::status`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::super::Engine;
use super::checks::evaluate;
use crate::store::agents::Agent;
use crate::store::answer_tests::{self as store, CaseResult, Check, CheckOutcome, TestCase};

/// The runs this process is running, with their stop tokens.
#[derive(Default)]
pub struct AnswerRuns(Mutex<HashMap<String, CancellationToken>>);

impl AnswerRuns {
    fn start(&self, run_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(run_id.to_owned(), token.clone());
        token
    }

    fn end(&self, run_id: &str) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(run_id);
    }

    /// Stops the run after its current case (if this process runs it).
    pub fn cancel(&self, run_id: &str) {
        if let Some(token) = self.0.lock().unwrap_or_else(|p| p.into_inner()).get(run_id) {
            token.cancel();
        }
    }
}

impl Engine {
    pub(super) fn spawn_run(&self, run_id: String, agent: Agent, cases: Vec<TestCase>) {
        let token = self.0.answer_runs.start(&run_id);
        let engine = self.clone();
        tokio::spawn(async move {
            let status = engine.run_cases(&run_id, Arc::new(agent), &cases, &token).await;
            let (status, error) = match &status {
                Ok(status) => (*status, None),
                Err(e) => ("failed", Some(e.to_string())),
            };
            if let Err(e) = store::finish_run(engine.db(), &run_id, status, error.as_deref(), engine.now_ms()).await {
                tracing::error!(run = %run_id, error = %e, "an answer-test run's end could not be stored");
            }
            engine.0.answer_runs.end(&run_id);
        });
    }

    /// Runs the cases in order; `done` or `cancelled`.
    async fn run_cases(
        &self,
        run_id: &str,
        agent: Arc<Agent>,
        cases: &[TestCase],
        token: &CancellationToken,
    ) -> Result<&'static str, crate::store::DbError> {
        for (position, case) in cases.iter().enumerate() {
            // Another replica's console may have asked: the row says so.
            if token.is_cancelled() || store::cancel_requested(self.db(), run_id).await? {
                return Ok("cancelled");
            }
            let result = self.run_case(run_id, position as i64, &agent, case).await;
            store::record_result(self.db(), &result).await?;
        }
        Ok("done")
    }

    /// One case: its trial, then each check (a judge's cost counted in the case's).
    async fn run_case(&self, run_id: &str, position: i64, agent: &Arc<Agent>, case: &TestCase) -> CaseResult {
        let mut result = CaseResult {
            run_id: run_id.to_owned(),
            test_id: case.id.clone(),
            position,
            name: case.name.clone(),
            turns: case.turns.clone(),
            passed: false,
            answer: String::new(),
            status: "not run".into(),
            tool_calls: Vec::new(),
            sources: Vec::new(),
            handed_over: false,
            cost_usd: 0.0,
            duration_ms: 0,
            checks: Vec::new(),
            error: None,
        };
        let trial = match self.trial_answer(agent.clone(), &case.turns).await {
            Ok(trial) => trial,
            Err(e) => {
                result.error = Some(format!("the case could not run: {e}"));
                return result;
            }
        };
        let mut cost = trial.cost_usd;
        for check in &case.checks {
            let outcome = if let Check::Judge { criterion, model } = check {
                let verdict = self.judge(agent, model, criterion, &case.turns, &trial.answer).await;
                cost += verdict.cost_usd;
                CheckOutcome { check: check.clone(), passed: verdict.passed, detail: verdict.detail }
            } else if let Some(outcome) = evaluate(check, &trial) {
                outcome
            } else {
                continue;
            };
            result.checks.push(outcome);
        }
        result.passed = trial.status == "complete" && result.checks.iter().all(|c| c.passed);
        result.answer = trial.answer;
        result.status = trial.status;
        result.tool_calls = trial.tool_calls;
        result.sources = trial.sources;
        result.handed_over = trial.handed_over;
        result.cost_usd = cost;
        result.duration_ms = trial.duration_ms;
        result
    }
}
