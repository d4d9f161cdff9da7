//! What the dashboard shows: usage per day, today's figures, each agent's spend against its cap.

use serde::{Deserialize, Serialize};

/// Tokens and cost of one day.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DayUsage {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    pub tokens: i64,
    pub cost_usd: f64,
}

/// The dashboard's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dashboard {
    pub conversations_today: i64,
    pub messages_today: i64,
    pub leads_waiting: i64,
    pub orders_paid: i64,
    pub orders_paid_today: i64,
    pub waiting_for_human: i64,
    pub days: Vec<DayUsage>,
    pub top_questions: Vec<(String, i64)>,
    /// Each agent's spend today against its daily cap.
    pub spend_today: Vec<AgentSpend>,
    /// What a model without a price row is charged.
    pub unpriced: UnpricedPrice,
    /// Each rated agent's ratings, this week and the week before.
    #[serde(default)]
    pub ratings: Vec<AgentRatings>,
    /// Alerts of the last 7 days (a cap reached, a provider's quota exhausted), newest first.
    #[serde(default)]
    pub alerts: Vec<AlertItem>,
    /// Teasers shown and clicked in the last 30 days, per agent and trigger.
    #[serde(default)]
    pub teasers: Vec<TeaserCount>,
}

/// How often a trigger was shown and clicked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TeaserCount {
    /// The agent's name.
    pub agent: String,
    pub trigger: String,
    pub shown: i64,
    pub clicked: i64,
}

/// An alert as the dashboard shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlertItem {
    /// The agent's name.
    pub agent: String,
    /// `agent.cap_reached` or `provider.quota_exhausted`.
    pub kind: String,
    pub detail: String,
    /// `YYYY-MM-DD HH:MM` (UTC).
    pub at: String,
}

impl AlertItem {
    /// What the alert means, in words.
    pub fn meaning(&self) -> &'static str {
        match self.kind.as_str() {
            "agent.cap_reached" => {
                "Daily spending cap reached: no answers until tomorrow (UTC) unless the cap is raised"
            }
            "provider.quota_exhausted" => "The model provider's quota or balance is exhausted",
            _ => "Alert",
        }
    }
}

/// How visitors rated one agent: the last 7 days and the 7 before (the trend).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentRatings {
    pub agent_id: String,
    pub name: String,
    /// Answers rated helpful and not, this week and last week.
    pub up: i64,
    pub down: i64,
    pub up_before: i64,
    pub down_before: i64,
    /// Closed conversations rated this week, and their average (1 to 5).
    pub conversations: i64,
    pub average: Option<f64>,
}

impl AgentRatings {
    /// The share of answers rated helpful, in percent, if any was rated.
    pub fn helpful(up: i64, down: i64) -> Option<i64> {
        (up + down > 0).then(|| (up * 100 + (up + down) / 2) / (up + down))
    }
}

/// One agent's spend today (UTC), its daily cap, and whether its model has a price row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentSpend {
    pub agent_id: String,
    pub name: String,
    pub model: String,
    pub spent_usd: f64,
    /// The agent's own cap or the server's default; `None`: no cap.
    pub cap_usd: Option<f64>,
    /// The model has no row in the price table: it is charged the default price.
    pub unpriced: bool,
}

/// The default price of unpriced models and the server's default daily cap.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnpricedPrice {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    pub default_daily_cap_usd: Option<f64>,
}

impl UnpricedPrice {
    /// The console's warning about an agent whose model has no price row.
    pub fn warning(&self, model: &str) -> String {
        format!(
            "The model {model} has no row in the price table: it is charged the default price (US${} in, US${} out \
             per million tokens). Add its real price under Models.",
            self.input_per_mtok, self.output_per_mtok
        )
    }
}
