//! The fallback model of agents that name none: one per provider, a setting
//! (`PARLEY_FALLBACK_MODELS`). Seed 003 drops an overloaded Claude model to Haiku; Anthropic's
//! API names its models the same for everyone, so that is the default. OpenAI-compatible servers
//! (OpenAI, OpenRouter, Ollama, vLLM) each name theirs differently: no default, set one.

use crate::store::agents::{ProviderConfig, ProviderKind};

/// `PARLEY_FALLBACK_MODELS` when it is not set.
pub const DEFAULT_FALLBACK_MODELS: &str = "anthropic=claude-3-5-haiku-latest";

/// The default fallback model of each provider.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DefaultFallbacks {
    pub openai: Option<String>,
    pub anthropic: Option<String>,
}

impl DefaultFallbacks {
    /// `provider=model` pairs separated by commas (`anthropic=claude-3-5-haiku-latest,openai=gpt-4o-mini`);
    /// an empty model or an empty text means none.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut out = DefaultFallbacks::default();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((provider, model)) = pair.split_once('=') else {
                return Err(format!("`{pair}` is not provider=model"));
            };
            let model = model.trim();
            if model.len() > 120 || model.chars().any(char::is_control) {
                return Err(format!("`{model}` is not a model name"));
            }
            let model = (!model.is_empty()).then(|| model.to_owned());
            match ProviderKind::parse(provider.trim()) {
                Some(ProviderKind::OpenAi) => out.openai = model,
                Some(ProviderKind::Anthropic) => out.anthropic = model,
                _ => return Err(format!("unknown provider `{}` (want openai or anthropic)", provider.trim())),
            }
        }
        Ok(out)
    }

    /// The agent's own fallback model, else its provider's default.
    pub fn for_provider(&self, provider: &ProviderConfig) -> Option<String> {
        provider
            .fallback_model
            .clone()
            .or_else(|| match provider.kind {
                ProviderKind::OpenAi => self.openai.clone(),
                ProviderKind::Anthropic => self.anthropic.clone(),
                ProviderKind::Demo => None,
            })
            .filter(|m| *m != provider.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(kind: ProviderKind, own: Option<&str>) -> ProviderConfig {
        ProviderConfig {
            kind,
            base_url: None,
            api_key: None,
            model: "big-model".into(),
            fallback_model: own.map(str::to_owned),
        }
    }

    #[test]
    fn an_agent_without_a_fallback_takes_its_providers_default() {
        let d = DefaultFallbacks::parse(DEFAULT_FALLBACK_MODELS).unwrap();
        assert_eq!(
            d.for_provider(&provider(ProviderKind::Anthropic, None)).as_deref(),
            Some("claude-3-5-haiku-latest")
        );
        assert_eq!(d.for_provider(&provider(ProviderKind::OpenAi, None)), None, "no default for compatible servers");
        assert_eq!(d.for_provider(&provider(ProviderKind::Anthropic, Some("own"))).as_deref(), Some("own"));
        assert_eq!(d.for_provider(&provider(ProviderKind::Demo, None)), None);
        let both = DefaultFallbacks::parse(" openai = gpt-4o-mini , anthropic= ").unwrap();
        assert_eq!(both.for_provider(&provider(ProviderKind::OpenAi, None)).as_deref(), Some("gpt-4o-mini"));
        assert_eq!(both.for_provider(&provider(ProviderKind::Anthropic, None)), None, "turned off");
        let same = DefaultFallbacks::parse("openai=big-model").unwrap();
        assert_eq!(same.for_provider(&provider(ProviderKind::OpenAi, None)), None, "never the model itself");
        assert_eq!(DefaultFallbacks::parse(""), Ok(DefaultFallbacks::default()));
        assert!(DefaultFallbacks::parse("gemini=flash").unwrap_err().contains("gemini"));
        assert!(DefaultFallbacks::parse("openai").unwrap_err().contains("provider=model"));
    }
}
