//! `mcp-token` (create, list, revoke) and `mcp-stdio`.

use anyhow::Context;
use clap::Subcommand;
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::store::agents;
use parley_server::Config;

use super::open_db;

#[derive(Subcommand)]
pub enum McpTokenCommand {
    /// Create a token for an agent and print it (it is shown only this once).
    Create(McpTokenCreate),
    /// List the tokens (never the tokens themselves).
    List {
        /// Only the tokens of this agent (public key).
        #[arg(long)]
        agent: Option<String>,
    },
    /// Revoke a token by its id.
    Revoke {
        /// The token's id (from `mcp-token list`).
        id: String,
    },
}

#[derive(clap::Args)]
pub struct McpTokenCreate {
    /// Public key of the agent.
    #[arg(long)]
    agent: String,
    /// Default tool definitions: `base` (list + general search) or `detail` (a search tool per base).
    #[arg(long, default_value = "base", value_parser = ["base", "detail"])]
    feature_set: String,
    /// Default output format: `raw` (JSON) or `text` (Markdown).
    #[arg(long, default_value = "raw", value_parser = ["raw", "text"])]
    output: String,
    /// A name to recognise the token by.
    #[arg(long, default_value = "MCP client")]
    name: String,
    /// The modules the token may use, comma-separated: knowledge, news, trending, tools (the
    /// agent's other tools). Empty: all of them.
    #[arg(long, default_value = "")]
    modules: String,
}

#[derive(clap::Args)]
pub struct McpStdio {
    /// The MCP access token (`pm_…`).
    #[arg(long, env = "PARLEY_MCP_TOKEN", hide_env_values = true)]
    token: String,
}

pub async fn mcp_token(config: &Config, command: McpTokenCommand) -> anyhow::Result<()> {
    use parley_engine::store::mcp_tokens::{self, FeatureSet, OutputFormat};
    let db = open_db(config).await?;
    let now = SystemClock.now_ms();
    match command {
        McpTokenCommand::Create(a) => {
            let agent = agents::by_public_key(&db, &a.agent)
                .await?
                .with_context(|| format!("no agent with key {}", a.agent))?;
            let feature_set = FeatureSet::parse(&a.feature_set).context("--feature-set must be base or detail")?;
            let output = OutputFormat::parse(&a.output).context("--output must be raw or text")?;
            let modules = mcp_tokens::Module::parse_list(&a.modules).map_err(|e| anyhow::anyhow!("--modules: {e}"))?;
            let (row, token) =
                mcp_tokens::create(&db, &agent.id, &a.name, feature_set, output, modules.as_deref(), now).await?;
            let base = config.public_url.clone().unwrap_or_else(|| format!("http://{}", config.addr));
            println!(
                "created MCP token {} for agent {} ({}, {})",
                row.id,
                agent.public_key,
                feature_set.as_str(),
                output.as_str()
            );
            println!("token (shown only now): {token}");
            if let Some(modules) = &row.modules {
                println!("modules: {}", mcp_tokens::Module::join(modules));
            }
            println!("URL: {}/mcp?token={token}", base.trim_end_matches('/'));
            println!(
                "SSE URL (older clients, transportType \"sse\"): {}/sse/mcp?token={token}",
                base.trim_end_matches('/')
            );
        }
        McpTokenCommand::List { agent } => {
            let agent_id = match &agent {
                Some(key) => {
                    Some(agents::by_public_key(&db, key).await?.with_context(|| format!("no agent with key {key}"))?.id)
                }
                None => None,
            };
            let tokens = mcp_tokens::list(&db, agent_id.as_deref()).await?;
            if tokens.is_empty() {
                println!("no MCP tokens");
            }
            for t in tokens {
                let state = if t.revoked_at.is_some() { "revoked" } else { "active" };
                let used = t.last_used_at.map_or("never used".to_owned(), |ms| {
                    format!("last used {}", parley_app::server::mcp::builtin::today(ms))
                });
                println!(
                    "{}  {}  {}…  {}  {}/{}  {state}  {used}",
                    t.id,
                    t.agent_key,
                    t.token_prefix,
                    t.name,
                    t.feature_set.as_str(),
                    t.output_format.as_str()
                );
            }
        }
        McpTokenCommand::Revoke { id } => {
            if !mcp_tokens::revoke(&db, &id, None, now).await? {
                anyhow::bail!("no active MCP token with id {id}");
            }
            println!("revoked MCP token {id}");
        }
    }
    Ok(())
}

pub async fn mcp_stdio(config: Config, a: McpStdio) -> anyhow::Result<()> {
    // Not `build_state`: it also recovers interrupted answers and seeds demo agents, which is the
    // server's business; this process may run beside a server on the same database.
    let engine = parley_server::cli_engine(&config).await?;
    parley_app::server::mcp::service::serve_stdio(engine, a.token).await.map_err(anyhow::Error::msg)
}
