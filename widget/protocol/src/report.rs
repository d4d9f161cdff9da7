//! A report (issue 45, part 1): what the console's Reports page shows and what its JSON export
//! is. Every figure is defined in `docs/reports.md`; the server computes it
//! (`parley_engine::engine::reports`), the console draws it and the CSV export flattens it.

use serde::{Deserialize, Serialize};

/// What a report covers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportQuery {
    /// First and last local day, `YYYY-MM-DD`, both counted.
    pub from: String,
    pub to: String,
    /// IANA time zone the days are in (`Europe/Paris`); `UTC` when empty.
    #[serde(default)]
    pub time_zone: String,
    /// `day` or `week` (weeks start on Monday).
    #[serde(default)]
    pub by: String,
    /// One agent (its id), team or operator (user id); empty: all.
    #[serde(default)]
    pub agent_id: String,
    #[serde(default)]
    pub team_id: String,
    #[serde(default)]
    pub operator_id: String,
    /// Only conversations whose first answer came from this version of the agent.
    #[serde(default)]
    pub version: Option<i64>,
}

/// The figures of one period, or of one version within it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub conversations: i64,
    pub visitors: i64,
    pub messages: i64,
    pub handed_over: i64,
    /// Closed, or idle for 30 minutes: the conversations a resolution rate counts.
    pub settled: i64,
    pub ai_resolved: i64,
    pub abandoned: i64,
    pub asked_for_person: i64,
    pub low_confidence: i64,
    pub business_rule: i64,
    pub thumbs_up: i64,
    pub thumbs_down: i64,
    /// Conversations rated (1 to 5), and those rated 4 or 5.
    pub rated: i64,
    pub rated_good: i64,
    pub first_response: Durations,
    pub resolution: Durations,
    pub spend_usd: f64,
}

impl Figures {
    /// AI-resolved ÷ settled conversations.
    pub fn ai_resolution_rate(&self) -> Option<f64> {
        ratio(self.ai_resolved, self.settled)
    }
    pub fn handover_rate(&self) -> Option<f64> {
        ratio(self.handed_over, self.conversations)
    }
    pub fn abandoned_rate(&self) -> Option<f64> {
        ratio(self.abandoned, self.conversations)
    }
    /// 👍 ÷ rated answers.
    pub fn thumbs_up_rate(&self) -> Option<f64> {
        ratio(self.thumbs_up, self.thumbs_up + self.thumbs_down)
    }
    /// Ratings of 4 or 5 ÷ rated conversations.
    pub fn csat(&self) -> Option<f64> {
        ratio(self.rated_good, self.rated)
    }
    pub fn spend_per_resolved(&self) -> Option<f64> {
        (self.ai_resolved > 0).then(|| self.spend_usd / self.ai_resolved as f64)
    }
}

/// `part ÷ whole`, none of nothing.
pub fn ratio(part: i64, whole: i64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// A time's median and 90th percentile (nearest rank), in wall-clock time and in business hours.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Durations {
    pub count: i64,
    pub median_ms: Option<i64>,
    pub p90_ms: Option<i64>,
    pub business_median_ms: Option<i64>,
    pub business_p90_ms: Option<i64>,
}

/// One day or week of the period.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Its first local day, `YYYY-MM-DD`.
    pub start: String,
    pub figures: Figures,
    /// Spend per model, in the order of [`Report::models`].
    pub spend_by_model: Vec<f64>,
}

/// One operator's work in the period.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OperatorRow {
    pub user_id: String,
    pub name: String,
    /// Conversations they wrote in.
    pub handled: i64,
    /// Conversations they answered first after the hand-over.
    pub first_response: Durations,
    pub rated: i64,
    pub rated_good: i64,
}

/// Spend of one model over the period.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelSpend {
    pub model: String,
    pub usd: f64,
    /// Of it, answer tests, previews and their judges (no visitor's conversation).
    pub trial_usd: f64,
}

/// Orders in one currency.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrencyOrders {
    pub currency: String,
    pub orders: i64,
    pub paid: i64,
    /// Paid amounts, in minor units (cents).
    pub paid_minor: i64,
}

/// Unanswered questions of one topic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topic {
    /// The question as most recently asked.
    pub question: String,
    pub count: i64,
    /// Why they went unanswered, with how often.
    pub reasons: Vec<(String, i64)>,
    /// The knowledge the group points at: the words its questions share.
    pub gap: String,
    pub conversations: Vec<String>,
}

/// The figures of the conversations one version of the agent answered first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VersionRow {
    /// `None`: no answer yet (a visitor who wrote to a person only).
    pub version: Option<i64>,
    pub figures: Figures,
}

/// A whole report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub query: ReportQuery,
    /// The period before, of the same length (local days, both counted).
    pub previous_from: String,
    pub previous_to: String,
    pub current: Figures,
    pub previous: Figures,
    pub buckets: Vec<Bucket>,
    /// Models in order of spend.
    pub models: Vec<String>,
    pub spend_by_model: Vec<ModelSpend>,
    pub operators: Vec<OperatorRow>,
    pub orders: Vec<CurrencyOrders>,
    pub unanswered: Vec<Topic>,
    pub versions: Vec<VersionRow>,
    /// When the figures were read (Unix ms).
    pub generated_at: i64,
}
