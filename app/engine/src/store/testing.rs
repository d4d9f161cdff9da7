//! Fixtures for unit tests of the store and the engine: an agent as the engine sees it, and a
//! fresh SQLite database with one demo agent in it.

use parley_protocol::Theme;

use super::Db;
use super::agents::{self, Agent, AgentLimits, NewAgent, ProviderConfig, ProviderKind};

/// A help-center agent on the demo model (not stored), with these capabilities and, when given,
/// only these tools.
pub fn agent(capabilities: &[&str], enabled_tools: Option<&[&str]>) -> Agent {
    Agent {
        id: "a".into(),
        public_key: "k".into(),
        name: "A".into(),
        vertical: "help_center".into(),
        capabilities: capabilities.iter().map(|s| s.to_string()).collect(),
        enabled_tools: enabled_tools.map(|e| e.iter().map(|s| s.to_string()).collect()),
        provider: demo_provider(),
        system_prompt: "Be kind.".into(),
        greeting: String::new(),
        theme: Theme::default(),
        language: Default::default(),
        placeholder: String::new(),
        starters: Vec::new(),
        prechat: Default::default(),
        allowed_origins: vec![],
        limits: AgentLimits::default(),
        identity: super::agents::IdentitySettings::default(),
        domain: Default::default(),
        version: 1,
    }
}

fn demo_provider() -> ProviderConfig {
    ProviderConfig {
        kind: ProviderKind::Demo,
        base_url: None,
        api_key: None,
        model: "demo".into(),
        fallback_model: None,
    }
}

/// A database of its own (SQLite in a temporary directory, removed when the directory is
/// dropped) with an immigration agent `tools-test` (the demo agent's domain) stored in it.
pub async fn db_with_agent() -> (Db, Agent, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::connect(&format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display())).await.expect("db");
    let new = NewAgent {
        public_key: "tools-test".into(),
        name: "Tools test".into(),
        vertical: "immigration".into(),
        capabilities: vec![],
        enabled_tools: None,
        provider: demo_provider(),
        system_prompt: String::new(),
        greeting: String::new(),
        theme: Theme::default(),
        // The demo immigration agent's language and domain (its services, sites, reference news).
        language: parley_protocol::LanguageSetting::ZhHans,
        placeholder: String::new(),
        starters: Vec::new(),
        prechat: Default::default(),
        allowed_origins: vec![],
        domain: agents::Domain::parse(&agents::DomainText {
            services: crate::demo_data::IMMIGRATION_SERVICES.into(),
            sites: crate::demo_data::IMMIGRATION_SITES.into(),
            reference_news: crate::demo_data::IMMIGRATION_REFERENCE_NEWS.into(),
        })
        .expect("the demo domain parses"),
    };
    let agent = agents::insert(&db, &new, 0).await.expect("agent");
    (db, agent, dir)
}
