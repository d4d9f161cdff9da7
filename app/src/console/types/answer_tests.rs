//! Answer tests of an agent (issue 45, part 2): the cases, the runs and a run's results beside
//! the run before.

use serde::{Deserialize, Serialize};

use super::DiffLine;

/// What the tests page needs, in one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestsView {
    pub agent_id: String,
    pub agent_name: String,
    /// The version visitors get.
    pub published: i64,
    /// The agent has a draft the set can run on.
    pub has_draft: bool,
    pub cases: Vec<CaseForm>,
    /// The latest runs, newest first.
    pub runs: Vec<TestRunItem>,
    /// The tools a check can name.
    pub tools: Vec<String>,
    /// The grader's instructions, shown for checks that need judgement.
    pub judge_prompt: String,
}

/// A test case as the form edits it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CaseForm {
    /// `None`: a new case.
    pub id: Option<String>,
    pub name: String,
    /// The visitor's messages, in order.
    pub turns: Vec<String>,
    pub checks: Vec<CheckForm>,
}

/// One check as the form edits it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckForm {
    /// `contains`, `not_contains`, `calls_tool`, `not_calls_tool`, `cites`, `hands_over`,
    /// `no_hand_over`, `max_cost`, `judge`.
    pub kind: String,
    /// The text, tool, source, dollar amount or criterion (empty for the hand-over checks).
    pub value: String,
    /// The judge's model (`judge` only).
    pub model: String,
}

/// The kinds of check, with their labels, in the form's order.
pub const CHECK_KINDS: &[(&str, &str)] = &[
    ("contains", "contains the text"),
    ("not_contains", "does not contain the text"),
    ("calls_tool", "calls the tool"),
    ("not_calls_tool", "does not call the tool"),
    ("cites", "cites the source"),
    ("hands_over", "offers a person"),
    ("no_hand_over", "does not offer a person"),
    ("max_cost", "costs at most (US$)"),
    ("judge", "a model judges"),
];

/// A run in the list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestRunItem {
    pub id: String,
    /// `published` or `draft`.
    pub target: String,
    pub version: i64,
    /// `running`, `cancelling`, `done`, `cancelled`, `failed`, `interrupted`.
    pub status: String,
    pub total: i64,
    pub done: i64,
    pub passed: i64,
    pub cost_usd: f64,
    pub started_by: Option<String>,
    pub started_at: i64,
    pub error: Option<String>,
}

impl TestRunItem {
    /// Still going.
    pub fn is_active(&self) -> bool {
        matches!(self.status.as_str(), "running" | "cancelling")
    }

    /// What was tried, in words.
    pub fn tried(&self) -> String {
        match self.target.as_str() {
            "draft" => format!("the draft (from version {})", self.version),
            _ => format!("version {}", self.version),
        }
    }
}

/// A run's page: its results beside the run before's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestRunView {
    pub agent_id: String,
    pub agent_name: String,
    pub run: TestRunItem,
    pub previous: Option<TestRunItem>,
    pub cases: Vec<CaseCompare>,
}

/// One case in a run and in the run before.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseCompare {
    pub name: String,
    pub turns: Vec<String>,
    /// `None`: not run (yet, or the run was cancelled first).
    pub now: Option<CaseOutcome>,
    /// `None`: the run before did not have the case.
    pub before: Option<CaseOutcome>,
    /// It passed before and fails now, or the other way.
    pub turned: Option<String>,
    /// The answer now against the answer before, line by line (empty when the same).
    pub answer_diff: Vec<DiffLine>,
}

/// A case's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseOutcome {
    pub passed: bool,
    pub answer: String,
    pub status: String,
    /// The tools called, with their arguments.
    pub tools: Vec<String>,
    pub sources: Vec<String>,
    pub handed_over: bool,
    pub cost_usd: f64,
    pub duration_ms: i64,
    pub checks: Vec<CheckLine>,
    pub error: Option<String>,
}

/// One check's outcome, and the same check's in the run before.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckLine {
    pub label: String,
    pub passed: bool,
    pub detail: String,
    /// `None`: the run before had no such check.
    pub was: Option<bool>,
}

/// What an action on the tests page came to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    pub ok: bool,
    pub message: String,
    pub errors: Vec<super::FieldError>,
    /// A started run's id.
    pub run_id: Option<String>,
}

/// A preview's answer (the versions page's *Try it*).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreviewReply {
    /// The preview conversation (the next message goes to it).
    pub conversation_id: String,
    pub answer: String,
    pub status: String,
    pub tools: Vec<String>,
    pub sources: Vec<String>,
    pub handed_over: bool,
    /// The preview conversation's cost so far.
    pub cost_usd: f64,
    pub duration_ms: i64,
}
