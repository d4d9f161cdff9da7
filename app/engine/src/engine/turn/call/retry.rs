//! What a failed model call leads to: the agent's fallback model (the model is failing or
//! overloaded), or the same call without tools (the model said it cannot use them; remembered a
//! while per agent and model).

use super::super::super::provider::ProviderError;

/// A refusal that says the model cannot use tools.
pub(super) fn rejects_tools(error: &ProviderError) -> bool {
    match error {
        ProviderError::Client { status: 400 | 404 | 422, detail } => {
            let detail = detail.to_ascii_lowercase();
            detail.contains("tool")
                && ["not support", "unsupported", "not supported", "does not accept", "not available"]
                    .iter()
                    .any(|s| detail.contains(s))
        }
        _ => false,
    }
}

/// Models found not to take tools, per agent, remembered for an hour (then tried again: the
/// model behind a name can change). Process-wide: each replica finds out for itself.
pub(super) mod toolless {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    use std::time::{Duration, Instant};

    const REMEMBERED: Duration = Duration::from_secs(3600);
    static FOUND: LazyLock<Mutex<HashMap<(String, String), Instant>>> = LazyLock::new(Default::default);

    pub(in super::super) fn remember(agent_id: &str, model: &str) {
        if let Ok(mut found) = FOUND.lock() {
            found.retain(|_, at| at.elapsed() < REMEMBERED);
            found.insert((agent_id.to_owned(), model.to_owned()), Instant::now());
        }
    }

    pub(in super::super) fn known(agent_id: &str, model: &str) -> bool {
        FOUND.lock().is_ok_and(|found| {
            found.get(&(agent_id.to_owned(), model.to_owned())).is_some_and(|at| at.elapsed() < REMEMBERED)
        })
    }
}

/// Failures the fallback model is tried for: the model is failing, overloaded (also when said
/// inside a 200 stream) or still rate limited after its retries.
pub(super) fn wants_fallback(error: &ProviderError) -> bool {
    matches!(
        error,
        ProviderError::Server { .. }
            | ProviderError::Timeout(_)
            | ProviderError::Connect(_)
            | ProviderError::RateLimited { .. }
    ) || matches!(error, ProviderError::StreamError(m) if m.to_ascii_lowercase().contains("overloaded"))
}
