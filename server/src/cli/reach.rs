//! `add-webhook`: an outbound webhook endpoint from the command line (scripts, set-up).

use anyhow::Context;
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::engine::outbound::OutboundSettings;
use parley_engine::engine::webhooks::add_endpoint;
use parley_engine::store::{agents, audit};
use parley_server::Config;

use super::open_db;

#[derive(clap::Args)]
pub struct AddWebhook {
    /// Public key of the agent.
    #[arg(long)]
    pub agent: String,
    /// Where to send the events: a public https address (any http address, private ones
    /// included, with PARLEY_ALLOW_PRIVATE_ENDPOINTS).
    #[arg(long)]
    pub url: String,
    /// Comma-separated events: lead.created, conversation.waiting_human, conversation.claimed,
    /// conversation.assigned, conversation.labeled, conversation.closed, order.paid,
    /// order.expired, answer.rated, conversation.rated, agent.cap_reached,
    /// provider.quota_exhausted.
    #[arg(long, value_delimiter = ',')]
    pub events: Vec<String>,
}

/// Adds the endpoint and prints its signing secret, once.
pub async fn add_webhook(config: &Config, a: AddWebhook) -> anyhow::Result<()> {
    let db = open_db(config).await?;
    let now = SystemClock.now_ms();
    let agent =
        agents::by_public_key(&db, &a.agent).await?.with_context(|| format!("no agent with key {}", a.agent))?;
    let settings: OutboundSettings = config.outbound()?;
    let (endpoint, secret) = add_endpoint(&db, settings, &agent.id, &a.url, &a.events, now).await?;
    let events = endpoint.events().join(", ");
    let detail = format!("{} ({events})", endpoint.url);
    audit::record(&db, None, "cli", "webhook.add", Some(&agent.public_key), &detail, now).await?;
    println!("webhook {} for agent {} -> {} ({events})", endpoint.id, agent.public_key, endpoint.url);
    println!("signing secret (shown only now): {secret}");
    Ok(())
}
