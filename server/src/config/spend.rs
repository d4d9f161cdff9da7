//! What model calls may spend (`SpendArgs`), a part of [`super::Config`].

use std::time::Duration;

use parley_engine::engine::budget::SpendSettings;

/// What model calls may spend and take, whatever an agent says. See `docs/security.md`.
#[derive(clap::Args, Clone, Debug)]
pub struct SpendArgs {
    /// What a model without a row in the price table costs, US dollars per million input tokens.
    #[arg(long, global = true, env = "PARLEY_UNPRICED_INPUT_PER_MTOK", default_value_t = SpendSettings::default().unpriced_input_per_mtok)]
    pub unpriced_input_per_mtok: f64,
    /// The same per million output tokens.
    #[arg(long, global = true, env = "PARLEY_UNPRICED_OUTPUT_PER_MTOK", default_value_t = SpendSettings::default().unpriced_output_per_mtok)]
    pub unpriced_output_per_mtok: f64,
    /// `max_tokens` of every answer's model calls when the agent sets none (16 to 100000).
    #[arg(long, global = true, env = "PARLEY_ANSWER_MAX_TOKENS", default_value_t = SpendSettings::default().answer_max_tokens)]
    pub answer_max_tokens: u32,
    /// Seconds one answer may take in all (model calls, tools, experts); then it ends with
    /// `TIME_LIMIT_REACHED`.
    #[arg(long, global = true, env = "PARLEY_ANSWER_TIME_LIMIT_SECS", default_value_t = SpendSettings::default().answer_time_limit.as_secs())]
    pub answer_time_limit_secs: u64,
    /// What an agent may spend per UTC day, US dollars, when the agent sets no cap of its own
    /// (0: no cap).
    #[arg(long, global = true, env = "PARLEY_AGENT_DAILY_CAP_USD", default_value_t = SpendSettings::default().agent_daily_cap_usd.unwrap_or(0.0))]
    pub agent_daily_cap_usd: f64,
    /// What one visitor's conversations may cost per UTC day, all together, US dollars (0: no cap).
    #[arg(long, global = true, env = "PARLEY_VISITOR_DAILY_CAP_USD", default_value_t = SpendSettings::default().visitor_daily_cap_usd.unwrap_or(0.0))]
    pub visitor_daily_cap_usd: f64,
    /// What every visitor from one address (an IPv4 address, an IPv6 /64) may cost per UTC day,
    /// all together, US dollars (0: no cap). Above the visitor cap: an office behind one address
    /// holds many visitors; a script minting free visitor tokens holds one address.
    #[arg(long, global = true, env = "PARLEY_ADDRESS_DAILY_CAP_USD", default_value_t = SpendSettings::default().address_daily_cap_usd.unwrap_or(0.0))]
    pub address_daily_cap_usd: f64,
}

impl SpendArgs {
    pub fn defaults() -> Self {
        let d = SpendSettings::default();
        SpendArgs {
            unpriced_input_per_mtok: d.unpriced_input_per_mtok,
            unpriced_output_per_mtok: d.unpriced_output_per_mtok,
            answer_max_tokens: d.answer_max_tokens,
            answer_time_limit_secs: d.answer_time_limit.as_secs(),
            agent_daily_cap_usd: d.agent_daily_cap_usd.unwrap_or(0.0),
            visitor_daily_cap_usd: d.visitor_daily_cap_usd.unwrap_or(0.0),
            address_daily_cap_usd: d.address_daily_cap_usd.unwrap_or(0.0),
        }
    }

    /// The settings, or what is wrong with them.
    pub fn settings(&self) -> anyhow::Result<SpendSettings> {
        let money = |name: &str, v: f64| {
            if v.is_finite() && (0.0..=1_000_000.0).contains(&v) {
                Ok(v)
            } else {
                Err(anyhow::anyhow!("{name} must be an amount from 0 to 1000000 US dollars (got {v})"))
            }
        };
        let cap = |name: &str, v: f64| money(name, v).map(|v| (v > 0.0).then_some(v));
        if !(16..=100_000).contains(&self.answer_max_tokens) {
            anyhow::bail!("PARLEY_ANSWER_MAX_TOKENS must be from 16 to 100000 (got {})", self.answer_max_tokens);
        }
        if !(1..=3600).contains(&self.answer_time_limit_secs) {
            anyhow::bail!("PARLEY_ANSWER_TIME_LIMIT_SECS must be from 1 to 3600 (got {})", self.answer_time_limit_secs);
        }
        Ok(SpendSettings {
            unpriced_input_per_mtok: money("PARLEY_UNPRICED_INPUT_PER_MTOK", self.unpriced_input_per_mtok)?,
            unpriced_output_per_mtok: money("PARLEY_UNPRICED_OUTPUT_PER_MTOK", self.unpriced_output_per_mtok)?,
            answer_max_tokens: self.answer_max_tokens,
            answer_time_limit: Duration::from_secs(self.answer_time_limit_secs),
            agent_daily_cap_usd: cap("PARLEY_AGENT_DAILY_CAP_USD", self.agent_daily_cap_usd)?,
            visitor_daily_cap_usd: cap("PARLEY_VISITOR_DAILY_CAP_USD", self.visitor_daily_cap_usd)?,
            address_daily_cap_usd: cap("PARLEY_ADDRESS_DAILY_CAP_USD", self.address_daily_cap_usd)?,
        })
    }
}
