//! Model prices in US dollars per million tokens, for the cost of each upstream call. Unknown
//! models cost nothing here (and say so in the ledger by a zero cost).

/// `(input, cached input, output)` per million tokens.
pub fn price_per_million(model: &str) -> Option<(f64, f64, f64)> {
    let m = model.rsplit('/').next().unwrap_or(model);
    Some(match m {
        _ if m.starts_with("gpt-4o-mini") => (0.15, 0.075, 0.60),
        _ if m.starts_with("gpt-4o") => (2.50, 1.25, 10.0),
        _ if m.starts_with("gpt-4.1-mini") => (0.40, 0.10, 1.60),
        _ if m.starts_with("gpt-4.1-nano") => (0.10, 0.025, 0.40),
        _ if m.starts_with("gpt-4.1") => (2.00, 0.50, 8.00),
        _ if m.starts_with("claude-3-5-haiku") || m.starts_with("claude-haiku") => (0.80, 0.08, 4.00),
        _ if m.starts_with("claude-sonnet") || m.starts_with("claude-3-5-sonnet") => (3.00, 0.30, 15.0),
        _ => return None,
    })
}

/// Cost of one call.
pub fn cost_usd(model: &str, input: u64, cached: u64, output: u64) -> f64 {
    match price_per_million(model) {
        Some((i, c, o)) => {
            let fresh = input.saturating_sub(cached) as f64;
            (fresh * i + cached as f64 * c + output as f64 * o) / 1_000_000.0
        }
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs() {
        assert!((cost_usd("gpt-4o-mini", 1_000_000, 0, 1_000_000) - 0.75).abs() < 1e-9);
        assert!((cost_usd("openai/gpt-4o-mini", 1_000_000, 1_000_000, 0) - 0.075).abs() < 1e-9);
        assert_eq!(cost_usd("demo", 10, 0, 10), 0.0);
    }
}
