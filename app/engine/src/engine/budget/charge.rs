//! One model call's charge, as the turn and the operator's copilot both record it: the call
//! counters and the token and cost counters (Prometheus), and the usage ledger row that settles
//! the call's [`Hold`].

use super::Hold;
use crate::store::usage::UsageRecord;

/// What a model call cost and whom it is charged to.
pub struct Charge<'a> {
    pub agent_id: &'a str,
    /// The agent's public key (the metrics' label).
    pub agent_key: &'a str,
    pub conversation_id: Option<&'a str>,
    pub message_id: Option<&'a str>,
    pub visitor_id: Option<&'a str>,
    pub provider: &'static str,
    pub model: &'a str,
    pub outcome: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    /// The tokens were estimated from the text (the provider reported none).
    pub estimated: bool,
    pub cost_usd: f64,
    pub latency_ms: u64,
    pub at: i64,
}

impl Charge<'_> {
    /// Counts the call in the metrics and gives its ledger row, settling `hold` at the real cost.
    pub fn ledger_row(self, hold: Option<&Hold>) -> UsageRecord {
        metrics::counter!("parley_upstream_calls_total", "provider" => self.provider, "outcome" => self.outcome.to_owned())
            .increment(1);
        let labels = [("agent", self.agent_key.to_owned()), ("model", self.model.to_owned())];
        metrics::counter!("parley_input_tokens_total", &labels).increment(self.input_tokens);
        metrics::counter!("parley_output_tokens_total", &labels).increment(self.output_tokens);
        // Micro-dollars: counters count whole units.
        metrics::counter!("parley_cost_microusd_total", &labels)
            .increment((self.cost_usd * 1_000_000.0).round() as u64);
        UsageRecord {
            agent_id: self.agent_id.to_owned(),
            conversation_id: self.conversation_id.map(str::to_owned),
            message_id: self.message_id.map(str::to_owned),
            visitor_id: self.visitor_id.filter(|v| !v.is_empty()).map(str::to_owned),
            estimated: self.estimated,
            provider: self.provider.to_owned(),
            model: self.model.to_owned(),
            outcome: self.outcome.to_owned(),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cached_tokens: self.cached_tokens,
            cost_usd: self.cost_usd,
            latency_ms: self.latency_ms,
            created_at: self.at,
            settles: hold.map(|h| h.shared_settles(self.cost_usd)).unwrap_or_default(),
        }
    }
}
