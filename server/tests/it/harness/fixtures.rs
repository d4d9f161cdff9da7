//! Fixtures: the providers and agents the tests talk to, and the console's users. The only place
//! the tests build a `ProviderConfig` or a `NewAgent` by hand.

use parley_app::console::types::ModelPriceForm;
use parley_engine::store::agents::{NewAgent, ProviderConfig, ProviderKind};
use parley_engine::store::users::Role;
use parley_protocol::Theme;
use parley_server::fake_openai::FakeOpenAi;

/// The fake OpenAI upstream (key `sk-test-secret`, model `gpt-4o-mini`, which reads images).
pub fn openai_provider(fake: &FakeOpenAi) -> ProviderConfig {
    ProviderConfig {
        kind: ProviderKind::OpenAi,
        base_url: Some(fake.base_url()),
        api_key: parley_engine::secret::ApiKey::new("sk-test-secret"),
        model: "gpt-4o-mini".into(),
        fallback_model: None,
    }
}

/// A fake Anthropic upstream at `base_url` with Anthropic's native Messages API (key
/// `sk-ant-test-secret`, model `claude-sonnet-4-20250514`, which reads images).
pub fn anthropic_provider(base_url: &str) -> ProviderConfig {
    ProviderConfig {
        kind: ProviderKind::Anthropic,
        base_url: Some(base_url.to_owned()),
        api_key: parley_engine::secret::ApiKey::new("sk-ant-test-secret"),
        model: "claude-sonnet-4-20250514".into(),
        fallback_model: None,
    }
}

/// A help-center agent with public key `key` on `provider`: no capabilities, every tool its
/// capabilities allow, any origin, the demo immigration agent's domain. Insert it with [`super::TestApp::insert_agent`].
pub fn agent(key: &str, provider: ProviderConfig) -> AgentFixture {
    AgentFixture(NewAgent {
        public_key: key.into(),
        name: format!("Agent {key}"),
        vertical: "help_center".into(),
        capabilities: Vec::new(),
        enabled_tools: None,
        provider,
        system_prompt: "You are a test agent.".into(),
        greeting: "Hi".into(),
        theme: Theme::default(),
        language: Default::default(),
        placeholder: String::new(),
        starters: Vec::new(),
        prechat: Default::default(),
        allowed_origins: Vec::new(),
        // The demo immigration agent's services, sites and reference news: the categories and
        // prices the consulting tools' tests use (`.domain(Domain::default())` for none).
        domain: parley_engine::seed::immigration_domain(),
    })
}

/// An agent to insert, built from [`agent`].
pub struct AgentFixture(NewAgent);

impl AgentFixture {
    pub fn capabilities(mut self, capabilities: &[&str]) -> Self {
        self.0.capabilities = capabilities.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Its pre-chat form.
    pub fn prechat(mut self, prechat: parley_protocol::Prechat) -> Self {
        self.0.prechat = prechat;
        self
    }

    /// Only these tools (among those its capabilities allow).
    pub fn enabled_tools(mut self, tools: &[&str]) -> Self {
        self.0.enabled_tools = Some(tools.iter().map(|s| s.to_string()).collect());
        self
    }

    /// The model the agent asks for.
    pub fn model(mut self, model: &str) -> Self {
        self.0.provider.model = model.into();
        self
    }

    /// The only origins whose pages may embed the agent.
    pub fn origins(mut self, origins: &[&str]) -> Self {
        self.0.allowed_origins = origins.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Its services, sites and reference news (the demo immigration agent's, say).
    pub fn domain(mut self, domain: parley_engine::store::agents::Domain) -> Self {
        self.0.domain = domain;
        self
    }

    pub fn build(self) -> NewAgent {
        self.0
    }
}

/// A user of the console; every one has the password [`PASSWORD`].
#[derive(Clone, Copy, Debug)]
pub struct User {
    pub email: &'static str,
    pub name: &'static str,
    pub role: Role,
}

pub const PASSWORD: &str = "a long password";

pub const ADMIN: User = User { email: "admin@example.com", name: "Ada", role: Role::Admin };
/// An operator (who may not manage agents, knowledge, tokens, prices or experts).
pub const OPERATOR: User = User { email: "op@example.com", name: "Olive", role: Role::Operator };
/// Two operators who may both want the same conversation.
pub const OLIVE: User = User { email: "olive@example.com", name: "Olive", role: Role::Operator };
pub const OSCAR: User = User { email: "oscar@example.com", name: "Oscar", role: Role::Operator };

/// The console's price form for `prefix` with an input price of `input` (per million tokens).
pub fn price_form(prefix: &str, input: &str) -> ModelPriceForm {
    ModelPriceForm {
        model_prefix: prefix.into(),
        input_per_mtok: input.into(),
        cached_per_mtok: "0.05".into(),
        output_per_mtok: "0.8".into(),
        context_window: "128000".into(),
        vision: true,
    }
}

/// `n` pieces of text for the fake upstream to stream: `w0 `, `w1 `, …
pub fn words(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("w{i} ")).collect()
}

/// An answer of `n` words (`w0 `, `w1 `, …) streamed `ms` milliseconds apart.
pub fn slow_words(n: usize, ms: u64) -> parley_server::fake_openai::Reply {
    parley_server::fake_openai::Reply::Content {
        pieces: (0..n).map(|i| format!("w{i} ")).collect(),
        delay: std::time::Duration::from_millis(ms),
    }
}
