//! Model prices in US dollars per million tokens, for the cost of each upstream call, with each
//! model's context window and whether it reads images. The table lives in the database
//! (`model_prices`, editable in the console) and in memory here; a model is matched by the longest
//! prefix of its name (a provider prefix such as `openai/` is ignored). Unknown models cost
//! nothing (the ledger says so with a zero cost).

use std::sync::{Arc, RwLock};

pub use crate::server::store::prices::ModelPrice;

impl ModelPrice {
    /// Cost of one call.
    pub fn cost_usd(&self, input: u64, cached: u64, output: u64) -> f64 {
        let fresh = input.saturating_sub(cached) as f64;
        (fresh * self.input_per_mtok + cached as f64 * self.cached_per_mtok + output as f64 * self.output_per_mtok)
            / 1_000_000.0
    }
}

/// The price table as the engine reads it on every call.
#[derive(Clone, Debug, Default)]
pub struct Prices(Arc<RwLock<Vec<ModelPrice>>>);

impl Prices {
    pub fn new(rows: Vec<ModelPrice>) -> Self {
        let p = Prices::default();
        p.replace(rows);
        p
    }

    /// Swaps in a new table (after an edit in the console).
    pub fn replace(&self, mut rows: Vec<ModelPrice>) {
        // Longest prefix first, so the first match is the most specific.
        rows.sort_by(|a, b| b.model_prefix.len().cmp(&a.model_prefix.len()).then(a.model_prefix.cmp(&b.model_prefix)));
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = rows;
    }

    /// The row for a model, if any.
    pub fn lookup(&self, model: &str) -> Option<ModelPrice> {
        let m = model.rsplit('/').next().unwrap_or(model);
        let rows = self.0.read().unwrap_or_else(|p| p.into_inner());
        rows.iter().find(|r| m.starts_with(&r.model_prefix)).cloned()
    }

    /// Cost of one call; zero for a model without a price.
    pub fn cost_usd(&self, model: &str, input: u64, cached: u64, output: u64) -> f64 {
        self.lookup(model).map(|p| p.cost_usd(input, cached, output)).unwrap_or(0.0)
    }

    /// What a call is expected to cost at least, before anything is known of it: 1,000 tokens
    /// in, 200 out. Used to hold room in a budget for a call under way.
    pub fn floor_usd(&self, model: &str) -> f64 {
        self.cost_usd(model, 1_000, 0, 200)
    }

    pub fn rows(&self) -> Vec<ModelPrice> {
        let mut rows = self.0.read().unwrap_or_else(|p| p.into_inner()).clone();
        rows.sort_by(|a, b| a.model_prefix.cmp(&b.model_prefix));
        rows
    }
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
        assert_eq!(p.cost_usd("demo", 10, 0, 10), 0.0);
        p.replace(vec![row("demo", 1.0, 1.0, 1.0)]);
        assert!(p.cost_usd("demo", 1_000_000, 0, 0) > 0.99);
        assert_eq!(p.cost_usd("gpt-4o-mini", 10, 0, 10), 0.0);
    }
}
