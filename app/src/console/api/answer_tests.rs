//! An agent's answer tests (administrators only): the cases, runs on the published version or the
//! draft (in the background; the page polls), cancelling, and a run's results beside the run
//! before with what changed marked.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{CaseForm, PreviewReply, TestOutcome, TestRunItem, TestRunView, TestsView};

/// How many runs the page lists.
#[cfg(feature = "ssr")]
const RUNS_LISTED: i64 = 10;

/// The tests page: the cases and the latest runs.
#[server]
pub async fn answer_tests(id: String) -> Result<TestsView, ConsoleError> {
    use parley_engine::engine::answer_tests::JUDGE_PROMPT;
    use parley_engine::store::agents::{self, versions};
    use parley_engine::store::answer_tests as store;
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &id).await?.ok_or(ConsoleError::NotFound)?;
    let cases = store::cases(db, &id).await?.iter().map(ssr::form_of).collect();
    let runs = store::runs(db, &id, RUNS_LISTED).await?.iter().map(ssr::run_item).collect();
    let mut tools: Vec<String> = state.engine.catalogue().into_iter().map(|(name, _)| name).collect();
    tools.sort();
    tools.dedup();
    Ok(TestsView {
        has_draft: versions::draft(db, &id).await?.is_some(),
        published: agent.version,
        agent_id: agent.id,
        agent_name: agent.name,
        cases,
        runs,
        tools,
        judge_prompt: JUDGE_PROMPT.to_owned(),
    })
}

/// The latest runs (the page reads them again while one is going).
#[server]
pub async fn answer_test_runs(id: String) -> Result<Vec<TestRunItem>, ConsoleError> {
    use parley_engine::store::answer_tests as store;
    let AdminUser { state, .. } = AdminUser::extract().await?;
    Ok(store::runs(state.engine.db(), &id, RUNS_LISTED).await?.iter().map(ssr::run_item).collect())
}

/// Saves a case (new without an id); field errors come back and nothing is written.
#[server(input = Json)]
pub async fn save_answer_test(id: String, case: CaseForm) -> Result<TestOutcome, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let input = match ssr::input_of(&case) {
        Ok(input) => input,
        Err(errors) => return Ok(TestOutcome { ok: false, message: String::new(), errors, run_id: None }),
    };
    let saved = state.engine.save_answer_test(&id, case.id.as_deref(), &input).await;
    ssr::outcome(saved.map(|_| format!("Saved “{}”.", input.name.trim())))
}

/// Deletes a case (its results in earlier runs stay).
#[server]
pub async fn delete_answer_test(id: String, case_id: String) -> Result<TestOutcome, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    ssr::outcome(state.engine.delete_answer_test(&id, &case_id).await.map(|()| "Test case deleted.".to_owned()))
}

/// Starts a run of every case on `target` (`published` or `draft`).
#[server]
pub async fn run_answer_tests(id: String, target: String) -> Result<TestOutcome, ConsoleError> {
    use parley_engine::engine::answer_tests::Target;
    let AdminUser { state, user } = AdminUser::extract().await?;
    let target = Target::parse(&target)
        .ok_or_else(|| ConsoleError::invalid("target", "Run on the published version or the draft."))?;
    match state.engine.start_answer_tests(&id, target, Some(&user.email)).await {
        Ok(run_id) => Ok(TestOutcome {
            ok: true,
            message: "The run started; results appear as each case ends.".into(),
            errors: vec![],
            run_id: Some(run_id),
        }),
        Err(e) => ssr::outcome(Err(e)),
    }
}

/// Stops a run after the case under way.
#[server]
pub async fn cancel_answer_tests(id: String, run_id: String) -> Result<TestOutcome, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let done = state.engine.cancel_answer_tests(&id, &run_id).await;
    ssr::outcome(done.map(|()| "Cancelling: the case under way ends, the rest do not run.".to_owned()))
}

/// A run's results beside the run before's.
#[server]
pub async fn answer_test_run(id: String, run_id: String) -> Result<TestRunView, ConsoleError> {
    use parley_engine::store::agents;
    use parley_engine::store::answer_tests as store;
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let db = state.engine.db();
    let agent = agents::by_id(db, &id).await?.ok_or(ConsoleError::NotFound)?;
    let run = store::run(db, &id, &run_id).await?.ok_or(ConsoleError::NotFound)?;
    let previous = store::previous_run(db, &run).await?;
    let now = store::results(db, &run.id).await?;
    let before = match &previous {
        Some(p) => store::results(db, &p.id).await?,
        None => Vec::new(),
    };
    Ok(TestRunView {
        agent_id: agent.id,
        agent_name: agent.name,
        cases: ssr::compare(&now, &before),
        run: ssr::run_item(&run),
        previous: previous.as_ref().map(ssr::run_item),
    })
}

/// Sends a message to the agent (`target`: `draft` or `published`) in a preview conversation
/// (`conversation` empty: a new one) and waits for the answer.
#[server]
pub async fn preview_agent(
    id: String,
    target: String,
    conversation: String,
    text: String,
) -> Result<PreviewReply, ConsoleError> {
    use parley_engine::engine::answer_tests::{Target, TestError};
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let target = Target::parse(&target)
        .ok_or_else(|| ConsoleError::invalid("target", "Try the draft or the published version."))?;
    let conversation = (!conversation.is_empty()).then_some(conversation.as_str());
    match state.engine.preview_message(&id, target, conversation, &text).await {
        Ok(t) => Ok(PreviewReply {
            conversation_id: t.conversation_id,
            answer: t.answer,
            status: t.status,
            tools: t.tool_calls.iter().map(|c| c.name.clone()).collect(),
            sources: t.sources,
            handed_over: t.handed_over,
            cost_usd: t.cost_usd,
            duration_ms: t.duration_ms,
        }),
        Err(TestError::Db(e)) => Err(e.into()),
        Err(TestError::NoAgent) => Err(ConsoleError::NotFound),
        Err(TestError::Turn(message)) => Err(ConsoleError::invalid("text", message)),
        Err(other) => Err(ConsoleError::invalid("conversation", other.to_string())),
    }
}

/// Deletes a preview conversation (*Start over*).
#[server]
pub async fn end_agent_preview(id: String, conversation: String) -> Result<(), ConsoleError> {
    use parley_engine::engine::answer_tests::TestError;
    let AdminUser { state, .. } = AdminUser::extract().await?;
    match state.engine.end_preview(&id, &conversation).await {
        Ok(()) => Ok(()),
        Err(TestError::Db(e)) => Err(e.into()),
        Err(other) => Err(ConsoleError::invalid("conversation", other.to_string())),
    }
}

#[cfg(feature = "ssr")]
mod ssr {
    use parley_engine::engine::answer_tests::{CaseInput, TestError};
    use parley_engine::store::answer_tests::{CaseResult, Check, Run, TestCase};

    use crate::console::error::ConsoleError;
    use crate::console::types::{
        CaseCompare, CaseForm, CaseOutcome, CheckForm, CheckLine, FieldError, TestOutcome, TestRunItem,
    };

    /// A stored case in the form's shape.
    pub(super) fn form_of(case: &TestCase) -> CaseForm {
        CaseForm {
            id: Some(case.id.clone()),
            name: case.name.clone(),
            turns: case.turns.clone(),
            checks: case.checks.iter().map(check_form).collect(),
        }
    }

    fn check_form(check: &Check) -> CheckForm {
        let (value, model) = match check {
            Check::Contains { text } | Check::NotContains { text } => (text.clone(), String::new()),
            Check::CallsTool { tool } | Check::NotCallsTool { tool } => (tool.clone(), String::new()),
            Check::Cites { source } => (source.clone(), String::new()),
            Check::HandsOver | Check::NoHandOver => (String::new(), String::new()),
            Check::MaxCost { usd } => (usd.to_string(), String::new()),
            Check::Judge { criterion, model } => (criterion.clone(), model.clone()),
        };
        CheckForm { kind: check.kind().to_owned(), value, model }
    }

    /// The form's case for the engine's rules; a check whose kind or amount cannot be read is a
    /// field error here.
    pub(super) fn input_of(case: &CaseForm) -> Result<CaseInput, Vec<FieldError>> {
        let mut checks = Vec::with_capacity(case.checks.len());
        let mut errors = Vec::new();
        for c in &case.checks {
            let value = c.value.clone();
            let check = match c.kind.as_str() {
                "contains" => Check::Contains { text: value },
                "not_contains" => Check::NotContains { text: value },
                "calls_tool" => Check::CallsTool { tool: value },
                "not_calls_tool" => Check::NotCallsTool { tool: value },
                "cites" => Check::Cites { source: value },
                "hands_over" => Check::HandsOver,
                "no_hand_over" => Check::NoHandOver,
                "max_cost" => match value.trim().trim_start_matches('$').parse::<f64>() {
                    Ok(usd) => Check::MaxCost { usd },
                    Err(_) => {
                        errors.push(FieldError::new("checks", "A cost limit is a number of dollars, such as 0.01."));
                        continue;
                    }
                },
                "judge" => Check::Judge { criterion: value, model: c.model.clone() },
                _ => {
                    errors.push(FieldError::new("checks", "Choose what each check looks at."));
                    continue;
                }
            };
            checks.push(check);
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(CaseInput { name: case.name.clone(), turns: case.turns.clone(), checks })
    }

    /// An engine outcome as the page shows it.
    pub(super) fn outcome(result: Result<String, TestError>) -> Result<TestOutcome, ConsoleError> {
        match result {
            Ok(message) => Ok(TestOutcome { ok: true, message, errors: vec![], run_id: None }),
            Err(TestError::Db(e)) => Err(e.into()),
            Err(TestError::NoAgent) => Err(ConsoleError::NotFound),
            Err(TestError::Invalid(errors)) => Ok(TestOutcome {
                ok: false,
                message: String::new(),
                errors: errors.into_iter().map(|(field, message)| FieldError::new(field, message)).collect(),
                run_id: None,
            }),
            Err(other) => Ok(TestOutcome { ok: false, message: other.to_string(), errors: vec![], run_id: None }),
        }
    }

    pub(super) fn run_item(r: &Run) -> TestRunItem {
        TestRunItem {
            id: r.id.clone(),
            target: r.target.clone(),
            version: r.version,
            status: r.status.clone(),
            total: r.total,
            done: r.done,
            passed: r.passed,
            cost_usd: r.cost_usd,
            started_by: r.started_by.clone(),
            started_at: r.started_at,
            error: r.error.clone(),
        }
    }

    fn outcome_of(r: &CaseResult, before: Option<&CaseResult>) -> CaseOutcome {
        let checks = r
            .checks
            .iter()
            .map(|c| CheckLine {
                label: c.check.describe(),
                passed: c.passed,
                detail: c.detail.clone(),
                was: before.and_then(|b| b.checks.iter().find(|x| x.check == c.check)).map(|x| x.passed),
            })
            .collect();
        CaseOutcome {
            passed: r.passed,
            answer: r.answer.clone(),
            status: r.status.clone(),
            tools: r.tool_calls.iter().map(|c| format!("{}({})", c.name, c.arguments)).collect(),
            sources: r.sources.clone(),
            handed_over: r.handed_over,
            cost_usd: r.cost_usd,
            duration_ms: r.duration_ms,
            checks,
            error: r.error.clone(),
        }
    }

    /// Each case of the run (in its order) with the same case in the run before.
    pub(super) fn compare(now: &[CaseResult], before: &[CaseResult]) -> Vec<CaseCompare> {
        now.iter()
            .map(|r| {
                let old = before.iter().find(|b| b.test_id == r.test_id);
                let turned = old.filter(|o| o.passed != r.passed).map(|o| {
                    if o.passed {
                        "passed before, fails now".to_owned()
                    } else {
                        "failed before, passes now".to_owned()
                    }
                });
                let answer_diff = match old {
                    Some(o) if o.answer != r.answer => super::super::versions::ssr::text_diff(&o.answer, &r.answer),
                    _ => Vec::new(),
                };
                CaseCompare {
                    name: r.name.clone(),
                    turns: r.turns.clone(),
                    now: Some(outcome_of(r, old)),
                    before: old.map(|o| outcome_of(o, None)),
                    turned,
                    answer_diff,
                }
            })
            .collect()
    }
}
