//! Model prices in US dollars per million tokens, for the cost of each upstream call, with each
//! model's context window and whether it reads images. The table lives in the database
//! (`model_prices`, editable in the console) and in memory here; a model is matched by the longest
//! prefix of its name (a provider prefix such as `openai/` is ignored). A model without a row is
//! charged a conservative default price (a setting), so no budget is ever blind to a model; the
//! console warns about such agents. When a provider reports no usage, the tokens are estimated
//! from the text sent and received ([`estimate_tokens`]).

use std::sync::{Arc, RwLock};

pub use crate::store::prices::ModelPrice;

/// What writing a token to the prompt cache costs, as a multiple of the input price (Anthropic's
/// 5-minute cache: 1.25).
pub const CACHE_WRITE_FACTOR: f64 = 1.25;

impl ModelPrice {
    /// Cost of one call.
    pub fn cost_usd(&self, input: u64, cached: u64, output: u64) -> f64 {
        self.cost_with_cache_writes(input, cached, 0, output)
    }

    /// Cost of one call of which `written` input tokens were written to the prompt cache.
    pub fn cost_with_cache_writes(&self, input: u64, cached: u64, written: u64, output: u64) -> f64 {
        let fresh = input.saturating_sub(cached).saturating_sub(written) as f64;
        (fresh * self.input_per_mtok
            + cached as f64 * self.cached_per_mtok
            + written as f64 * self.input_per_mtok * CACHE_WRITE_FACTOR
            + output as f64 * self.output_per_mtok)
            / 1_000_000.0
    }
}

/// The price of a model without a row, per million tokens: about the dearest models on sale
/// (2026), so an unknown model trips budgets early rather than never.
pub const DEFAULT_INPUT_PER_MTOK: f64 = 15.0;
pub const DEFAULT_OUTPUT_PER_MTOK: f64 = 75.0;

/// The price table as the engine reads it on every call.
#[derive(Clone, Debug)]
pub struct Prices {
    rows: Arc<RwLock<Vec<ModelPrice>>>,
    /// What a model without a row is charged.
    unpriced: Arc<ModelPrice>,
}

impl Default for Prices {
    fn default() -> Self {
        Prices::with_default(DEFAULT_INPUT_PER_MTOK, DEFAULT_OUTPUT_PER_MTOK)
    }
}

impl Prices {
    pub fn new(rows: Vec<ModelPrice>) -> Self {
        let p = Prices::default();
        p.replace(rows);
        p
    }

    /// An empty table whose unpriced models cost these (US dollars per million tokens).
    pub fn with_default(input_per_mtok: f64, output_per_mtok: f64) -> Self {
        Prices {
            rows: Arc::default(),
            unpriced: Arc::new(ModelPrice {
                model_prefix: String::new(),
                input_per_mtok,
                cached_per_mtok: input_per_mtok,
                output_per_mtok,
                context_window: 0,
                vision: false,
            }),
        }
    }

    /// The price charged for a model without a row.
    pub fn default_price(&self) -> &ModelPrice {
        &self.unpriced
    }

    /// Swaps in a new table (after an edit in the console).
    pub fn replace(&self, mut rows: Vec<ModelPrice>) {
        // Longest prefix first, so the first match is the most specific.
        rows.sort_by(|a, b| b.model_prefix.len().cmp(&a.model_prefix.len()).then(a.model_prefix.cmp(&b.model_prefix)));
        *self.rows.write().unwrap_or_else(|p| p.into_inner()) = rows;
    }

    /// The row for a model, if any.
    pub fn lookup(&self, model: &str) -> Option<ModelPrice> {
        let m = model.rsplit('/').next().unwrap_or(model);
        let rows = self.rows.read().unwrap_or_else(|p| p.into_inner());
        rows.iter().find(|r| m.starts_with(&r.model_prefix)).cloned()
    }

    /// Whether a model has a row of its own (otherwise it is charged the default price).
    pub fn is_priced(&self, model: &str) -> bool {
        self.lookup(model).is_some()
    }

    /// Cost of one call; a model without a row costs the default price.
    pub fn cost_usd(&self, model: &str, input: u64, cached: u64, output: u64) -> f64 {
        self.cost_with_cache_writes(model, input, cached, 0, output)
    }

    /// Cost of one call of which `written` input tokens were written to the prompt cache.
    pub fn cost_with_cache_writes(&self, model: &str, input: u64, cached: u64, written: u64, output: u64) -> f64 {
        match self.lookup(model) {
            Some(p) => p.cost_with_cache_writes(input, cached, written, output),
            None => self.unpriced.cost_with_cache_writes(input, cached, written, output),
        }
    }

    /// What a call is expected to cost at least, before anything is known of it: 1,000 tokens
    /// in, 200 out. Used to hold room in a budget for a call under way.
    pub fn floor_usd(&self, model: &str) -> f64 {
        self.cost_usd(model, 1_000, 0, 200)
    }

    pub fn rows(&self) -> Vec<ModelPrice> {
        let mut rows = self.rows.read().unwrap_or_else(|p| p.into_inner()).clone();
        rows.sort_by(|a, b| a.model_prefix.cmp(&b.model_prefix));
        rows
    }
}

/// Tokens a text is likely to be, for a provider that reports none: a token per four bytes of
/// ASCII and one per other character (CJK text is about one token a character), rounded up —
/// on the high side of what tokenizers give, so an estimate does not undercharge.
pub fn estimate_tokens(text: &str) -> u64 {
    let (ascii, other) =
        text.chars().fold((0u64, 0u64), |(a, o), c| if c.is_ascii() { (a + 1, o) } else { (a, o + 1) });
    ascii.div_ceil(4) + other
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(prefix: &str, i: f64, c: f64, o: f64) -> ModelPrice {
        ModelPrice {
            model_prefix: prefix.into(),
            input_per_mtok: i,
            cached_per_mtok: c,
            output_per_mtok: o,
            context_window: 128_000,
            vision: false,
        }
    }

    #[test]
    fn costs_by_longest_prefix() {
        let p = Prices::new(vec![row("gpt-4o", 2.5, 1.25, 10.0), row("gpt-4o-mini", 0.15, 0.075, 0.60)]);
        assert!((p.cost_usd("gpt-4o-mini", 1_000_000, 0, 1_000_000) - 0.75).abs() < 1e-9);
        assert!((p.cost_usd("openai/gpt-4o-mini-2024", 1_000_000, 1_000_000, 0) - 0.075).abs() < 1e-9);
        assert!((p.cost_usd("gpt-4o-2024-08-06", 0, 0, 1_000_000) - 10.0).abs() < 1e-9);
        p.replace(vec![row("demo", 1.0, 1.0, 1.0)]);
        assert!(p.cost_usd("demo", 1_000_000, 0, 0) > 0.99);
        assert!(p.is_priced("demo") && !p.is_priced("gpt-4o-mini"));
    }

    #[test]
    fn a_model_without_a_row_costs_the_default_price() {
        let p = Prices::with_default(10.0, 40.0);
        p.replace(vec![row("gpt-4o-mini", 0.15, 0.075, 0.60), row("parley-demo", 0.0, 0.0, 0.0)]);
        assert!((p.cost_usd("anthropic/claude-3.5-sonnet", 1_000_000, 0, 1_000_000) - 50.0).abs() < 1e-9);
        assert!((p.cost_usd("@cf/meta/llama-3-8b", 0, 0, 1_000_000) - 40.0).abs() < 1e-9);
        assert!(p.floor_usd("gpt-5") > 0.0, "an unknown model holds room in a budget");
        assert_eq!(p.cost_usd("parley-demo", 1_000, 0, 1_000), 0.0, "a zero row is a price too");
        // Cache writes cost 1.25 times the input price; reads the cached price.
        let sonnet = p.cost_with_cache_writes("anthropic/claude-3.5-sonnet", 1_000_000, 0, 1_000_000, 0);
        let plain = p.cost_usd("anthropic/claude-3.5-sonnet", 1_000_000, 0, 0);
        assert!((sonnet - plain * CACHE_WRITE_FACTOR).abs() < 1e-9, "{sonnet} vs {plain}");
        assert!((Prices::default().default_price().output_per_mtok - DEFAULT_OUTPUT_PER_MTOK).abs() < 1e-9);
    }

    #[test]
    fn token_estimates_round_up_and_count_cjk_per_character() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("优才计划"), 4);
        assert_eq!(estimate_tokens("hi 你好"), 3);
    }
}
