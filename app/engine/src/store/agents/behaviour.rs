//! What an agent does — the part of it that is published in versions ([`super::versions`]):
//! its instructions, model, fallback model, capabilities and narrowed tools, with the agent
//! form's rules for them.

use serde::{Deserialize, Serialize};

use super::fields::{Capabilities, FieldError, optional};
use super::{Agent, Catalogue};

/// The versioned part of an agent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Behaviour {
    pub system_prompt: String,
    pub model: String,
    #[serde(default)]
    pub fallback_model: Option<String>,
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// `None`: every tool the capabilities allow.
    #[serde(default)]
    pub enabled_tools: Option<Vec<String>>,
}

/// A behaviour as a person typed it (the draft form).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BehaviourInput {
    pub system_prompt: String,
    pub model: String,
    pub fallback_model: String,
    pub capabilities: Vec<String>,
    pub enabled_tools: Option<Vec<String>>,
}

/// The longest instructions an agent takes (the agent form's rule too).
pub const MAX_PROMPT_CHARS: usize = 20_000;

impl Behaviour {
    /// The behaviour an agent has now.
    pub fn of(agent: &Agent) -> Behaviour {
        Behaviour {
            system_prompt: agent.system_prompt.clone(),
            model: agent.provider.model.clone(),
            fallback_model: agent.provider.fallback_model.clone(),
            capabilities: agent.capabilities.clone(),
            enabled_tools: agent.enabled_tools.clone(),
        }
    }

    /// The behaviour of an agent as saved by the agent form.
    pub fn of_new(new: &super::NewAgent) -> Behaviour {
        Behaviour {
            system_prompt: new.system_prompt.clone(),
            model: new.provider.model.clone(),
            fallback_model: new.provider.fallback_model.clone(),
            capabilities: new.capabilities.clone(),
            enabled_tools: new.enabled_tools.clone(),
        }
    }

    /// The behaviour typed, or what is wrong with it by field (the agent form's rules).
    pub fn parse(input: &BehaviourInput, catalogue: &Catalogue) -> Result<Behaviour, Vec<FieldError>> {
        let mut errors = Vec::new();
        if input.system_prompt.chars().count() > MAX_PROMPT_CHARS {
            errors.push(FieldError::new("system_prompt", "At most 20,000 characters."));
        }
        let model = input.model.trim();
        if model.is_empty() || model.len() > 120 {
            errors.push(FieldError::new("model", "A model name of 1 to 120 characters."));
        }
        if input.fallback_model.len() > 120 {
            errors.push(FieldError::new("fallback_model", "At most 120 characters."));
        }
        let can = match Capabilities::parse(&input.capabilities, input.enabled_tools.as_deref(), catalogue) {
            Ok(can) => Some(can),
            Err(e) => {
                errors.extend(e);
                None
            }
        };
        let Some(can) = can.filter(|_| errors.is_empty()) else { return Err(errors) };
        let (capabilities, enabled_tools) = can.into_parts();
        Ok(Behaviour {
            system_prompt: input.system_prompt.clone(),
            model: model.to_owned(),
            fallback_model: optional(&input.fallback_model),
            capabilities,
            enabled_tools,
        })
    }

    /// The agent with this behaviour instead of its own (a draft's preview and answer tests).
    pub fn apply(&self, agent: &Agent) -> Agent {
        let mut out = agent.clone();
        out.system_prompt = self.system_prompt.clone();
        out.provider.model = self.model.clone();
        out.provider.fallback_model = self.fallback_model.clone();
        out.capabilities = self.capabilities.clone();
        out.enabled_tools = self.enabled_tools.clone();
        out
    }

    /// The names of the parts that differ from `other`, in the form's order.
    pub fn changes_from(&self, other: &Behaviour) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.system_prompt != other.system_prompt {
            out.push("instructions");
        }
        if self.model != other.model {
            out.push("model");
        }
        if self.fallback_model != other.fallback_model {
            out.push("fallback model");
        }
        if self.capabilities != other.capabilities {
            out.push("capabilities");
        }
        if self.enabled_tools != other.enabled_tools {
            out.push("tools");
        }
        out
    }
}
