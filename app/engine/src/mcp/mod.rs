//! The MCP server (seed 004): an agent's tools over the Model Context Protocol, for desktop
//! assistants, IDEs and other agents. It uses the same registry, capability rules and
//! `enabled_tools` as the widget's model, behind per-agent access tokens.
//!
//! - [`catalogue`]: which tools a token sees (feature sets `base` / `detail`, SEP-986 names).
//! - [`builtin`]: the MCP-only tools (knowledge bases, news of a day) and [`trending`] questions.
//! - [`format`]: results as JSON text (`raw`) or Markdown (`text`).
//! - [`service`]: the `rmcp` handler, the Streamable HTTP service and the stdio server.
//!
//! Tokens live in [`crate::store::mcp_tokens`]; the console and the CLI call its
//! functions (`create`, `list`, `revoke`) directly.

pub mod builtin;
pub mod format;
pub mod trending;

use std::sync::Arc;

use crate::engine::Engine;
use crate::store::agents::{self, Agent};
pub use crate::store::mcp_tokens::{FeatureSet, McpToken, OutputFormat};
use crate::store::{DbError, mcp_tokens};

/// Environment variable overriding every token's default feature set.
pub const FEATURE_SET_ENV: &str = "PARLEY_MCP_FEATURE_SET";
/// Environment variable overriding every token's default output format.
pub const OUTPUT_FORMAT_ENV: &str = "PARLEY_MCP_OUTPUT_FORMAT";

/// Who is calling, and how they want their tools: resolved once per request.
#[derive(Clone, Debug)]
pub struct McpAccess {
    pub token: McpToken,
    pub agent: Arc<Agent>,
    pub feature_set: FeatureSet,
    pub output: OutputFormat,
}

/// Per-request choices (the `feature_set` and `output` query parameters).
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct Overrides {
    pub feature_set: Option<String>,
    pub output: Option<String>,
}

/// Why a client was refused.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("an MCP access token is required (Authorization: Bearer pm_… or ?token=pm_…)")]
    Missing,
    #[error("this MCP access token is not valid or was revoked")]
    Invalid,
    #[error("{0}")]
    BadSetting(String),
    #[error("database error: {0}")]
    Db(#[from] DbError),
}

/// The setting in force: the request's, else the environment's, else the token's default.
fn choose<T: Copy>(
    what: &str,
    default: T,
    env: Option<&str>,
    request: Option<&str>,
    parse: fn(&str) -> Option<T>,
) -> Result<T, String> {
    if let Some(value) = request.filter(|v| !v.trim().is_empty()) {
        return parse(value).ok_or_else(|| format!("unknown {what} `{value}`"));
    }
    match env.filter(|v| !v.trim().is_empty()) {
        Some(value) => match parse(value) {
            Some(v) => Ok(v),
            None => {
                tracing::warn!(value, "ignoring an unknown {what} in the environment");
                Ok(default)
            }
        },
        None => Ok(default),
    }
}

/// The feature set and output format for a token, a process environment and a request.
pub fn resolve(
    token: &McpToken,
    env: (Option<&str>, Option<&str>),
    request: &Overrides,
) -> Result<(FeatureSet, OutputFormat), String> {
    let feature_set = choose(
        "feature set (want `base` or `detail`)",
        token.feature_set,
        env.0,
        request.feature_set.as_deref(),
        FeatureSet::parse,
    )?;
    let output = choose(
        "output format (want `raw` or `text`)",
        token.output_format,
        env.1,
        request.output.as_deref(),
        OutputFormat::parse,
    )?;
    Ok((feature_set, output))
}

/// Checks a presented token and resolves its settings. Notes the use (at most once a minute).
pub async fn authenticate(engine: &Engine, token: &str, request: &Overrides) -> Result<McpAccess, AuthError> {
    let token = token.trim();
    if token.is_empty() {
        return Err(AuthError::Missing);
    }
    let db = engine.db();
    let row = mcp_tokens::by_token(db, token).await?.ok_or(AuthError::Invalid)?;
    let agent = agents::by_id(db, &row.agent_id).await?.ok_or(AuthError::Invalid)?;
    let env_feature_set = std::env::var(FEATURE_SET_ENV).ok();
    let env_output = std::env::var(OUTPUT_FORMAT_ENV).ok();
    let (feature_set, output) =
        resolve(&row, (env_feature_set.as_deref(), env_output.as_deref()), request).map_err(AuthError::BadSetting)?;
    let now = engine.now_ms();
    if row.last_used_at.is_none_or(|t| now - t > 60_000)
        && let Err(e) = mcp_tokens::touch(db, &row.id, now).await
    {
        tracing::warn!(error = %e, "could not note the use of an MCP token");
    }
    Ok(McpAccess { token: row, agent: Arc::new(agent), feature_set, output })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(feature_set: FeatureSet, output_format: OutputFormat) -> McpToken {
        McpToken {
            id: "t".into(),
            agent_id: "a".into(),
            agent_key: "k".into(),
            name: "n".into(),
            token_prefix: "pm_x".into(),
            feature_set,
            output_format,
            modules: None,
            created_at: 0,
            last_used_at: None,
            revoked_at: None,
        }
    }

    #[test]
    fn mcp_settings_request_beats_environment_beats_token() {
        let t = token(FeatureSet::Base, OutputFormat::Raw);
        let none = Overrides::default();
        assert_eq!(resolve(&t, (None, None), &none), Ok((FeatureSet::Base, OutputFormat::Raw)));
        assert_eq!(resolve(&t, (Some("detail"), Some("text")), &none), Ok((FeatureSet::Detail, OutputFormat::Text)));
        let request = Overrides { feature_set: Some("base".into()), output: Some("raw".into()) };
        assert_eq!(resolve(&t, (Some("detail"), Some("text")), &request), Ok((FeatureSet::Base, OutputFormat::Raw)));
        // A bad environment value is ignored; a bad request value is refused.
        assert_eq!(resolve(&t, (Some("everything"), None), &none), Ok((FeatureSet::Base, OutputFormat::Raw)));
        let bad = Overrides { feature_set: Some("everything".into()), output: None };
        assert!(resolve(&t, (None, None), &bad).unwrap_err().contains("everything"));
        let t = token(FeatureSet::Detail, OutputFormat::Text);
        assert_eq!(resolve(&t, (Some(""), None), &none), Ok((FeatureSet::Detail, OutputFormat::Text)));
    }
}
