//! Answer tests (issue 45, part 2): an agent's test cases — a visitor's turns and the checks its
//! last answer must pass —, the runs of the set against the published agent or its draft, and
//! each case's result in a run. The checks are judged in `engine::answer_tests`.

use serde::{Deserialize, Serialize};

use super::{Db, DbError, from_json_text, new_id, to_json_text};

/// What a good answer must do. Text comparisons ignore case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    /// The answer contains this text.
    Contains { text: String },
    /// The answer does not contain this text.
    NotContains { text: String },
    /// The answer called this tool.
    CallsTool { tool: String },
    /// The answer did not call this tool.
    NotCallsTool { tool: String },
    /// The answer cites a source whose title or address contains this text.
    Cites { source: String },
    /// The answer offers a person (it called `escalate_to_human`).
    HandsOver,
    /// The answer does not offer a person.
    NoHandOver,
    /// The whole case (every turn) cost at most this many US dollars.
    MaxCost { usd: f64 },
    /// A model the owner names judges the answer against this criterion (`PASS` or `FAIL`).
    Judge { criterion: String, model: String },
}

impl Check {
    /// The check's kind as stored (`contains`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Check::Contains { .. } => "contains",
            Check::NotContains { .. } => "not_contains",
            Check::CallsTool { .. } => "calls_tool",
            Check::NotCallsTool { .. } => "not_calls_tool",
            Check::Cites { .. } => "cites",
            Check::HandsOver => "hands_over",
            Check::NoHandOver => "no_hand_over",
            Check::MaxCost { .. } => "max_cost",
            Check::Judge { .. } => "judge",
        }
    }

    /// The check in a few words, for pages and the command line.
    pub fn describe(&self) -> String {
        match self {
            Check::Contains { text } => format!("contains “{text}”"),
            Check::NotContains { text } => format!("does not contain “{text}”"),
            Check::CallsTool { tool } => format!("calls {tool}"),
            Check::NotCallsTool { tool } => format!("does not call {tool}"),
            Check::Cites { source } => format!("cites “{source}”"),
            Check::HandsOver => "offers a person".into(),
            Check::NoHandOver => "does not offer a person".into(),
            Check::MaxCost { usd } => format!("costs at most ${usd}"),
            Check::Judge { criterion, model } => format!("{model} judges: {criterion}"),
        }
    }
}

/// A test case.
#[derive(Clone, Debug, PartialEq)]
pub struct TestCase {
    pub id: String,
    pub agent_id: String,
    pub name: String,
    /// The visitor's messages, in order; the checks apply to the answer to the last.
    pub turns: Vec<String>,
    pub checks: Vec<Check>,
    pub created_at: i64,
    pub updated_at: i64,
}

crate::store::row_struct! {
    struct CaseRow {
        id: String,
        agent_id: String,
        name: String,
        turns: String,
        checks: String,
        created_at: i64,
        updated_at: i64,
    }
}

impl From<CaseRow> for TestCase {
    fn from(r: CaseRow) -> TestCase {
        TestCase {
            id: r.id,
            agent_id: r.agent_id,
            name: r.name,
            turns: from_json_text(&r.turns),
            checks: from_json_text(&r.checks),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

const CASE_COLUMNS: &str = "id, agent_id, name, turns, checks, created_at, updated_at";

/// An agent's cases, oldest first.
pub async fn cases(db: &Db, agent_id: &str) -> Result<Vec<TestCase>, DbError> {
    let sql = format!("SELECT {CASE_COLUMNS} FROM answer_tests WHERE agent_id = $1 ORDER BY created_at, id");
    let rows: Vec<CaseRow> = sqlx::query_as(&sql).bind(agent_id).fetch_all(&mut *db.read().await?).await?;
    Ok(rows.into_iter().map(TestCase::from).collect())
}

/// One case of an agent.
pub async fn case(db: &Db, agent_id: &str, id: &str) -> Result<Option<TestCase>, DbError> {
    let sql = format!("SELECT {CASE_COLUMNS} FROM answer_tests WHERE agent_id = $1 AND id = $2");
    let row: Option<CaseRow> =
        sqlx::query_as(&sql).bind(agent_id).bind(id).fetch_optional(&mut *db.read().await?).await?;
    Ok(row.map(TestCase::from))
}

/// Stores a checked case: a new one (`id` `None`; its id is returned) or an agent's existing one
/// (`None` returned when there is no such case).
pub async fn save_case(
    db: &Db,
    agent_id: &str,
    id: Option<&str>,
    (name, turns, checks): (&str, &[String], &[Check]),
    now: i64,
) -> Result<Option<String>, DbError> {
    let (turns, checks) = (to_json_text(&turns), to_json_text(&checks));
    match id {
        None => {
            let id = new_id();
            sqlx::query(
                "INSERT INTO answer_tests (id, agent_id, name, turns, checks, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $6)",
            )
            .bind(&id)
            .bind(agent_id)
            .bind(name)
            .bind(turns)
            .bind(checks)
            .bind(now)
            .execute(db.writer())
            .await?;
            Ok(Some(id))
        }
        Some(id) => {
            let done = sqlx::query(
                "UPDATE answer_tests SET name = $3, turns = $4, checks = $5, updated_at = $6 \
                 WHERE agent_id = $1 AND id = $2",
            )
            .bind(agent_id)
            .bind(id)
            .bind(name)
            .bind(turns)
            .bind(checks)
            .bind(now)
            .execute(db.writer())
            .await?;
            Ok((done.rows_affected() == 1).then(|| id.to_owned()))
        }
    }
}

/// Deletes an agent's case (its results in earlier runs stay); false if there was none.
pub async fn delete_case(db: &Db, agent_id: &str, id: &str) -> Result<bool, DbError> {
    let done = sqlx::query("DELETE FROM answer_tests WHERE agent_id = $1 AND id = $2")
        .bind(agent_id)
        .bind(id)
        .execute(db.writer())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// One run of an agent's tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub id: String,
    pub agent_id: String,
    /// `published` or `draft`.
    pub target: String,
    /// The published version tried, or the one the draft started from.
    pub version: i64,
    /// `running`, `cancelling`, `done`, `cancelled`, `failed`; `interrupted`: it was running in
    /// a process that is gone.
    pub status: String,
    pub total: i64,
    pub done: i64,
    pub passed: i64,
    pub cost_usd: f64,
    pub started_by: Option<String>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub error: Option<String>,
}

impl Run {
    /// Still going (or asked to stop and not yet stopped).
    pub fn is_active(&self) -> bool {
        matches!(self.status.as_str(), "running" | "cancelling")
    }
}

crate::store::row_struct! {
    struct RunRow {
        id: String,
        agent_id: String,
        target: String,
        version: i64,
        status: String,
        total: i64,
        done: i64,
        passed: i64,
        cost_usd: f64,
        started_by: Option<String>,
        started_at: i64,
        finished_at: Option<i64>,
        error: Option<String>,
    }
}

impl From<RunRow> for Run {
    fn from(r: RunRow) -> Run {
        Run {
            id: r.id,
            agent_id: r.agent_id,
            target: r.target,
            version: r.version,
            status: r.status,
            total: r.total,
            done: r.done,
            passed: r.passed,
            cost_usd: r.cost_usd,
            started_by: r.started_by,
            started_at: r.started_at,
            finished_at: r.finished_at,
            error: r.error,
        }
    }
}

/// A run's columns, an active run of a process that is gone read as `interrupted`.
const RUN_COLUMNS: &str = "r.id, r.agent_id, r.target, r.version, \
    CASE WHEN r.status IN ('running', 'cancelling') AND NOT EXISTS \
    (SELECT 1 FROM processes p WHERE p.id = r.process) THEN 'interrupted' ELSE r.status END AS status, \
    r.total, r.done, r.passed, r.cost_usd, r.started_by, r.started_at, r.finished_at, r.error";

/// A run about to start.
pub struct NewRun<'a> {
    pub agent_id: &'a str,
    pub target: &'a str,
    pub version: i64,
    pub total: i64,
    pub started_by: Option<&'a str>,
    pub now: i64,
    /// The process that runs it.
    pub process: &'a str,
}

/// Starts a run unless one of the agent's is still going (in a live process); its id.
pub async fn start_run(db: &Db, new: &NewRun<'_>) -> Result<Option<String>, DbError> {
    let id = new_id();
    let done = sqlx::query(
        "INSERT INTO answer_test_runs (id, agent_id, target, version, status, total, done, passed, cost_usd, \
         started_by, started_at, process) SELECT $1, $2, $3, $4, 'running', $5, 0, 0, 0.0, $6, $7, $8 \
         WHERE NOT EXISTS (SELECT 1 FROM answer_test_runs r WHERE r.agent_id = $2 \
         AND r.status IN ('running', 'cancelling') AND EXISTS (SELECT 1 FROM processes p WHERE p.id = r.process))",
    )
    .bind(&id)
    .bind(new.agent_id)
    .bind(new.target)
    .bind(new.version)
    .bind(new.total)
    .bind(new.started_by)
    .bind(new.now)
    .bind(new.process)
    .execute(db.writer())
    .await?;
    Ok((done.rows_affected() == 1).then_some(id))
}

/// A run of an agent.
pub async fn run(db: &Db, agent_id: &str, id: &str) -> Result<Option<Run>, DbError> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM answer_test_runs r WHERE r.agent_id = $1 AND r.id = $2");
    let row: Option<RunRow> =
        sqlx::query_as(&sql).bind(agent_id).bind(id).fetch_optional(&mut *db.read().await?).await?;
    Ok(row.map(Run::from))
}

/// An agent's latest runs, newest first.
pub async fn runs(db: &Db, agent_id: &str, limit: i64) -> Result<Vec<Run>, DbError> {
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM answer_test_runs r WHERE r.agent_id = $1 ORDER BY r.started_at DESC, r.id DESC LIMIT $2"
    );
    let rows: Vec<RunRow> = sqlx::query_as(&sql).bind(agent_id).bind(limit).fetch_all(&mut *db.read().await?).await?;
    Ok(rows.into_iter().map(Run::from).collect())
}

/// The agent's run that started last before `run` (what a run is compared with).
pub async fn previous_run(db: &Db, run: &Run) -> Result<Option<Run>, DbError> {
    let sql = format!(
        "SELECT {RUN_COLUMNS} FROM answer_test_runs r WHERE r.agent_id = $1 AND r.id <> $2 \
         AND (r.started_at < $3 OR (r.started_at = $3 AND r.id < $2)) ORDER BY r.started_at DESC, r.id DESC LIMIT 1"
    );
    let row: Option<RunRow> = sqlx::query_as(&sql)
        .bind(&run.agent_id)
        .bind(&run.id)
        .bind(run.started_at)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.map(Run::from))
}

/// Asks a running run to stop after its current case; false if it was not running.
pub async fn request_cancel(db: &Db, agent_id: &str, id: &str) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE answer_test_runs SET status = 'cancelling' WHERE agent_id = $1 AND id = $2 AND status = 'running'",
    )
    .bind(agent_id)
    .bind(id)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Whether someone asked the run to stop.
pub async fn cancel_requested(db: &Db, id: &str) -> Result<bool, DbError> {
    let status: Option<String> = sqlx::query_scalar("SELECT status FROM answer_test_runs WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(status.as_deref() != Some("running"))
}

/// Ends a run: `done`, `cancelled` or `failed` (with why).
pub async fn finish_run(db: &Db, id: &str, status: &str, error: Option<&str>, now: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE answer_test_runs SET status = $2, error = $3, finished_at = $4 WHERE id = $1")
        .bind(id)
        .bind(status)
        .bind(error)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// A tool the answer called.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalledTool {
    pub name: String,
    /// The arguments as the model sent them (JSON text).
    pub arguments: String,
    /// `succeeded` or `failed`.
    pub status: String,
}

/// One check's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    pub check: Check,
    pub passed: bool,
    /// Why, in a few words (what was found, or the judge's words).
    pub detail: String,
}

/// A case's result in a run.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    pub run_id: String,
    pub test_id: String,
    /// The case's place in the set.
    pub position: i64,
    pub name: String,
    pub turns: Vec<String>,
    /// Every check passed (and the case ran).
    pub passed: bool,
    /// The answer to the last turn.
    pub answer: String,
    /// That answer's status (`complete`, `failed`, …).
    pub status: String,
    /// The tools that answer called.
    pub tool_calls: Vec<CalledTool>,
    /// The sources it cited (titles, and addresses where known).
    pub sources: Vec<String>,
    pub handed_over: bool,
    /// Every turn's model calls and any judge's.
    pub cost_usd: f64,
    pub duration_ms: i64,
    pub checks: Vec<CheckOutcome>,
    /// Why the case could not run.
    pub error: Option<String>,
}

crate::store::row_struct! {
    struct ResultRow {
        run_id: String,
        test_id: String,
        position: i64,
        name: String,
        turns: String,
        passed: i64,
        answer: String,
        status: String,
        tool_calls: String,
        sources: String,
        handed_over: i64,
        cost_usd: f64,
        duration_ms: i64,
        checks: String,
        error: Option<String>,
    }
}

impl From<ResultRow> for CaseResult {
    fn from(r: ResultRow) -> CaseResult {
        CaseResult {
            run_id: r.run_id,
            test_id: r.test_id,
            position: r.position,
            name: r.name,
            turns: from_json_text(&r.turns),
            passed: r.passed != 0,
            answer: r.answer,
            status: r.status,
            tool_calls: from_json_text(&r.tool_calls),
            sources: from_json_text(&r.sources),
            handed_over: r.handed_over != 0,
            cost_usd: r.cost_usd,
            duration_ms: r.duration_ms,
            checks: from_json_text(&r.checks),
            error: r.error,
        }
    }
}

/// Stores a case's result and counts it in its run, in one transaction.
pub async fn record_result(db: &Db, r: &CaseResult) -> Result<(), DbError> {
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "INSERT INTO answer_test_results (run_id, test_id, position, name, turns, passed, answer, status, \
         tool_calls, sources, handed_over, cost_usd, duration_ms, checks, error) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    )
    .bind(&r.run_id)
    .bind(&r.test_id)
    .bind(r.position)
    .bind(&r.name)
    .bind(to_json_text(&r.turns))
    .bind(i64::from(r.passed))
    .bind(&r.answer)
    .bind(&r.status)
    .bind(to_json_text(&r.tool_calls))
    .bind(to_json_text(&r.sources))
    .bind(i64::from(r.handed_over))
    .bind(r.cost_usd)
    .bind(r.duration_ms)
    .bind(to_json_text(&r.checks))
    .bind(&r.error)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE answer_test_runs SET done = done + 1, passed = passed + $2, cost_usd = cost_usd + $3 WHERE id = $1",
    )
    .bind(&r.run_id)
    .bind(i64::from(r.passed))
    .bind(r.cost_usd)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A run's results, in the set's order.
pub async fn results(db: &Db, run_id: &str) -> Result<Vec<CaseResult>, DbError> {
    let rows: Vec<ResultRow> = sqlx::query_as(
        "SELECT run_id, test_id, position, name, turns, passed, answer, status, tool_calls, sources, handed_over, \
         cost_usd, duration_ms, checks, error FROM answer_test_results WHERE run_id = $1 ORDER BY position, test_id",
    )
    .bind(run_id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.into_iter().map(CaseResult::from).collect())
}
