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
