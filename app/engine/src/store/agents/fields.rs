//! The parts of an agent that have rules of their own, each parsed once from what a person typed:
//! the public key, what the agent may do, the model it talks to, the sites that may embed it.
//! A value of one of these types has passed its rule.

use super::{Catalogue, ProviderConfig, ProviderKind};

/// What is wrong with one field of an input (the wire's type, so the console and the API pass
/// the store's words on unchanged).
pub use parley_protocol::FieldError;

/// The key in the embed snippet: 3 to 40 lower-case letters, digits and `-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentKey(String);

impl AgentKey {
    /// The key, trimmed, or why not.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let key = raw.trim();
        let allowed = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-';
        if !(3..=40).contains(&key.len()) || !key.bytes().all(allowed) {
            return Err(FieldError::new("key", "3 to 40 characters: lower-case letters, digits and '-'."));
        }
        Ok(AgentKey(key.to_owned()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The capabilities an agent has and, when it is narrowed, the tools it may use: every
/// capability is one the catalogue's tools need, every tool is in the catalogue and allowed by
/// a capability the agent has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capabilities {
    capabilities: Vec<String>,
    enabled_tools: Option<Vec<String>>,
}

impl Capabilities {
    /// The capabilities and tools, or what is wrong with them (`capabilities`: the first unknown
    /// one; `enabled_tools`: each wrong tool).
    pub fn parse(
        capabilities: &[String],
        enabled_tools: Option<&[String]>,
        catalogue: &Catalogue,
    ) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        if let Some(bad) = capabilities.iter().find(|c| !catalogue.iter().any(|(_, cap)| cap == *c)) {
            errors.push(FieldError::new("capabilities", format!("Unknown capability: {bad}.")));
        }
        for tool in enabled_tools.unwrap_or_default() {
            match catalogue.iter().find(|(name, _)| name == tool) {
                None => errors.push(FieldError::new("enabled_tools", format!("Unknown tool: {tool}."))),
                Some((_, cap)) if !capabilities.contains(cap) => {
                    errors.push(FieldError::new("enabled_tools", format!("{tool} needs the capability {cap}.")))
                }
                Some(_) => {}
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Capabilities { capabilities: capabilities.to_vec(), enabled_tools: enabled_tools.map(<[String]>::to_vec) })
    }

    /// The capabilities and the narrowed tools (`None`: every tool the capabilities allow).
    pub fn into_parts(self) -> (Vec<String>, Option<Vec<String>>) {
        (self.capabilities, self.enabled_tools)
    }
}

/// The model an agent talks to: a known provider, an http(s) base URL for the real ones, a
/// model name, and at most a fallback model and an API key of sensible length.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSettings(ProviderConfig);

/// The raw model settings of an input.
pub struct RawModel<'a> {
    /// `demo`, `openai` or `anthropic`.
    pub provider: &'a str,
    /// The API's base URL (empty: none).
    pub base_url: &'a str,
    /// The API key (empty: none).
    pub api_key: &'a str,
    /// The model's name.
    pub model: &'a str,
    /// The model used when the first fails (empty: none).
    pub fallback_model: &'a str,
}

impl ModelSettings {
    /// The settings, or what is wrong with them, by field.
    pub fn parse(raw: RawModel<'_>) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let kind = ProviderKind::parse(raw.provider);
        match kind {
            Some(ProviderKind::Demo) => {}
            Some(ProviderKind::OpenAi | ProviderKind::Anthropic) => {
                let url = raw.base_url.trim();
                if url::Url::parse(url).map(|u| !matches!(u.scheme(), "http" | "https")).unwrap_or(true) {
                    errors.push(FieldError::new("base_url", "An http(s) URL, e.g. https://api.openai.com/v1."));
                }
            }
            None => errors.push(FieldError::new("provider", "Choose demo, openai or anthropic.")),
        }
        if raw.model.trim().is_empty() || raw.model.len() > 120 {
            errors.push(FieldError::new("model", "A model name of 1 to 120 characters."));
        }
        if raw.fallback_model.len() > 120 {
            errors.push(FieldError::new("fallback_model", "At most 120 characters."));
        }
        if raw.api_key.len() > 500 {
            errors.push(FieldError::new("api_key", "At most 500 characters."));
        }
        let Some(kind) = kind.filter(|_| errors.is_empty()) else { return Err(errors) };
        Ok(ModelSettings(ProviderConfig {
            kind,
            base_url: optional(raw.base_url),
            api_key: crate::secret::ApiKey::new(raw.api_key),
            model: raw.model.trim().into(),
            fallback_model: optional(raw.fallback_model),
        }))
    }

    /// The provider configuration.
    pub fn into_inner(self) -> ProviderConfig {
        self.0
    }
}

/// The sites that may embed an agent: `*` or origins like `https://www.example.com`; empty
/// means any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedOrigins(Vec<String>);

impl AllowedOrigins {
    /// The origins without a trailing `/`, or the first that is not one.
    pub fn parse(raw: &[String]) -> Result<Self, FieldError> {
        let mut origins = Vec::with_capacity(raw.len());
        for origin in raw {
            let o = origin.trim().trim_end_matches('/');
            let ok = o == "*"
                || url::Url::parse(o).is_ok_and(|u| {
                    matches!(u.scheme(), "http" | "https")
                        && u.host_str().is_some()
                        && u.path() == "/"
                        && u.query().is_none()
                        && u.origin().ascii_serialization() == o
                });
            if !ok {
                let message = format!("Not an origin: {origin} (e.g. https://www.example.com).");
                return Err(FieldError::new("allowed_origins", message));
            }
            origins.push(o.to_owned());
        }
        Ok(AllowedOrigins(origins))
    }

    /// The origins.
    pub fn into_inner(self) -> Vec<String> {
        self.0
    }
}

/// Trimmed text, or `None` when that is empty.
pub(super) fn optional(s: &str) -> Option<String> {
    Some(s.trim().to_owned()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_short_lower_case_words() {
        assert_eq!(AgentKey::parse(" shop-help ").map(|k| k.as_str().to_owned()), Ok("shop-help".into()));
        for bad in ["ab", "Bad Key", "a_b_c", &"x".repeat(41)] {
            assert_eq!(AgentKey::parse(bad).map_err(|e| e.field), Err("key".to_owned()), "{bad}");
        }
    }

    #[test]
    fn origins_lose_their_slash_and_paths_are_refused() {
        let ok = AllowedOrigins::parse(&["https://a.example.com/".into(), "*".into()]).map(AllowedOrigins::into_inner);
        assert_eq!(ok, Ok(vec!["https://a.example.com".to_owned(), "*".to_owned()]));
        assert!(AllowedOrigins::parse(&["https://a.example.com/path".into()]).is_err());
        assert!(AllowedOrigins::parse(&["ftp://a.example.com".into()]).is_err());
    }

    #[test]
    fn real_providers_need_a_url() {
        let raw = |provider, base_url| RawModel { provider, base_url, api_key: "", model: "m", fallback_model: "" };
        assert!(ModelSettings::parse(raw("demo", "")).is_ok());
        let fields = |r| -> Vec<String> {
            ModelSettings::parse(r).err().unwrap_or_default().into_iter().map(|e| e.field).collect()
        };
        assert_eq!(fields(raw("openai", "not a url")), vec!["base_url"]);
        assert_eq!(fields(raw("teleport", "")), vec!["provider"]);
        let config = ModelSettings::parse(raw("anthropic", " https://api.anthropic.com/v1 ")).map(|m| m.into_inner());
        assert_eq!(config.map(|c| c.base_url), Ok(Some("https://api.anthropic.com/v1".into())));
    }
}
