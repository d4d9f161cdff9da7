//! Parley's engine: everything that runs only on the server and knows nothing of HTTP or of the
//! console's views — the turn loop and its providers, tools, live channels and jobs ([`engine`]),
//! storage ([`store`], below everything else here: it imports nothing from the engine), console
//! sign-in ([`auth`]), rate limits, the outbound fence, secrets, and the demo agents' seed.
//! The Leptos console (`parley-app`) and the binary (`parley-server`) sit on top of it.

pub mod auth;
pub mod demo_data;
pub mod engine;
pub mod lang;
#[cfg(test)]
mod layers;
pub mod limits;
pub mod mail_text;
pub mod mcp;
pub mod net;
pub mod secret;
pub mod seed;
pub mod store;

use parley_protocol::{MAX_MESSAGE_CHARS, PublicAgentConfig};

use engine::Engine;
use store::agents::{Agent, ProviderKind};

/// What the browser may know about an agent: never keys, prompts or provider URLs.
pub fn public_config(engine: &Engine, agent: &Agent) -> PublicAgentConfig {
    PublicAgentConfig {
        key: agent.public_key.clone(),
        name: agent.name.clone(),
        greeting: agent.greeting.clone(),
        theme: agent.theme.clone(),
        capabilities: {
            // The pre-chat form is drawn like the model's forms.
            let mut caps = agent.capabilities.clone();
            if agent.prechat.is_on() && !caps.iter().any(|c| c == "forms") {
                caps.push("forms".into());
            }
            caps
        },
        demo_model: agent.provider.kind == ProviderKind::Demo || agent.provider.base_url.is_none(),
        max_message_chars: MAX_MESSAGE_CHARS,
        accepts_images: engine.accepts_images(agent),
        language: agent.language,
        placeholder: agent.placeholder.clone(),
        starters: agent.starters.clone(),
        availability: None,
        mail_transcripts: engine.mail_enabled(),
        prechat: agent.prechat.form(),
    }
}

/// [`public_config`] with whether people are in now (the agent's business hours).
pub async fn public_config_now(engine: &Engine, agent: &Agent) -> PublicAgentConfig {
    use crate::engine::hours::Availability as Now;
    let mut config = public_config(engine, agent);
    config.availability = match engine.availability(&agent.id).await {
        Ok(Some((_, Now::Open))) => Some(parley_protocol::Availability { open: true, reopens_at: None }),
        Ok(Some((_, Now::Closed { reopens_at }))) => Some(parley_protocol::Availability { open: false, reopens_at }),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(error = %e, "reading business hours for the panel");
            None
        }
    };
    config
}
