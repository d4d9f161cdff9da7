//! How an agent is stored: its row, the `look` column's JSON, and its provider key sealed with
//! the database's secret key.

use parley_protocol::{ColorScheme, LanguageSetting, LauncherIcon, Theme};
use serde::{Deserialize, Serialize};

use super::super::{Db, DbError, from_json_text};
use super::{Agent, AgentLimits, IdentitySettings, NewAgent, ProviderConfig, ProviderKind};
use crate::secret::ApiKey;

/// The `look` column: the look beyond colour and side, and the panel's words, as JSON (every
/// field optional, so `{}` and rows written before a field existed read as the defaults).
#[derive(Default, Serialize, Deserialize)]
pub(super) struct LookColumn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text_color: Option<String>,
    #[serde(default)]
    scheme: ColorScheme,
    #[serde(default)]
    launcher_icon: LauncherIcon,
    #[serde(default)]
    launcher_label: String,
    #[serde(default)]
    width: Option<u32>,
    #[serde(default)]
    height: Option<u32>,
    #[serde(default)]
    placeholder: String,
    #[serde(default)]
    starters: Vec<String>,
    #[serde(default)]
    prechat: parley_protocol::Prechat,
}

impl LookColumn {
    pub(super) fn of(new: &NewAgent) -> LookColumn {
        let t = &new.theme;
        LookColumn {
            text_color: t.text_color.clone(),
            scheme: t.scheme,
            launcher_icon: t.launcher_icon,
            launcher_label: t.launcher_label.clone(),
            width: Some(t.width),
            height: Some(t.height),
            placeholder: new.placeholder.clone(),
            starters: new.starters.clone(),
            prechat: new.prechat.clone(),
        }
    }
}

crate::store::row_struct! {
    pub(super) struct AgentRow {
        id: String,
        public_key: String,
        name: String,
        vertical: String,
        capabilities: String,
        enabled_tools: Option<String>,
        provider: String,
        base_url: Option<String>,
        api_key: Option<String>,
        model: String,
        fallback_model: Option<String>,
        system_prompt: String,
        greeting: String,
        theme_color: String,
        launcher_position: String,
        language: String,
        look: String,
        allowed_origins: String,
        budget_usd: f64,
        max_turns: Option<i64>,
        daily_cap_usd: Option<f64>,
        max_tokens: Option<i64>,
        identity_required: i64,
        identity_max_age_secs: i64,
        retention_days: Option<i64>,
        domain: String,
        version: i64,
    }
}

impl AgentRow {
    /// The agent, its provider key opened with the database's secret key.
    pub(super) fn into_agent(self, db: &Db) -> Result<Agent, DbError> {
        let r = self;
        let api_key = match r.api_key {
            Some(stored) => open_key(db, &r.id, &stored)?,
            None => None,
        };
        let look: LookColumn = from_json_text(&r.look);
        let defaults = Theme::default();
        Ok(Agent {
            id: r.id,
            public_key: r.public_key,
            name: r.name,
            vertical: r.vertical,
            capabilities: from_json_text(&r.capabilities),
            enabled_tools: r.enabled_tools.as_deref().map(from_json_text),
            provider: ProviderConfig {
                kind: ProviderKind::parse(&r.provider).unwrap_or(ProviderKind::Demo),
                base_url: r.base_url,
                api_key,
                model: r.model,
                fallback_model: r.fallback_model,
            },
            system_prompt: r.system_prompt,
            greeting: r.greeting,
            theme: Theme {
                color: r.theme_color,
                position: r.launcher_position,
                text_color: look.text_color,
                scheme: look.scheme,
                launcher_icon: look.launcher_icon,
                launcher_label: look.launcher_label,
                width: look.width.unwrap_or(defaults.width),
                height: look.height.unwrap_or(defaults.height),
            },
            language: LanguageSetting::parse(&r.language).unwrap_or_default(),
            placeholder: look.placeholder,
            starters: look.starters,
            prechat: look.prechat,
            allowed_origins: from_json_text(&r.allowed_origins),
            limits: AgentLimits {
                budget_usd: r.budget_usd,
                max_turns: r.max_turns.and_then(|n| u32::try_from(n).ok()),
                daily_cap_usd: r.daily_cap_usd,
                max_tokens: r.max_tokens.and_then(|n| u32::try_from(n).ok()),
            },
            identity: IdentitySettings {
                required: r.identity_required != 0,
                max_age_secs: r.identity_max_age_secs,
                retention_days: r.retention_days,
            },
            domain: from_json_text(&r.domain),
            version: r.version.max(1),
        })
    }
}

/// A stored provider key as the engine uses it: a sealed one opened (refused when it does not
/// open), a plain one from before encryption as it is (sealed at the next start, see
/// [`super::super::credentials::prepare`]).
fn open_key(db: &Db, agent_id: &str, stored: &str) -> Result<Option<ApiKey>, DbError> {
    use crate::secret::SecretBox;
    if !SecretBox::is_sealed(stored) {
        return Ok(ApiKey::new(stored));
    }
    let secrets = db.secrets().ok_or_else(no_secret_key)?;
    let plain = secrets.open(stored, key_place(agent_id)).map_err(|e| DbError::Decode(Box::new(e)))?;
    Ok(ApiKey::new(plain))
}

/// A provider key as it is stored: sealed with the database's secret key to its agent's row.
pub(in crate::store) fn seal_key(db: &Db, agent_id: &str, key: Option<&ApiKey>) -> Result<Option<String>, DbError> {
    match key {
        None => Ok(None),
        Some(key) => Ok(Some(db.secrets().ok_or_else(no_secret_key)?.seal(key.expose(), key_place(agent_id)))),
    }
}

/// Where an agent's provider key is sealed to.
pub(in crate::store) fn key_place(agent_id: &str) -> crate::secret::Place<'_> {
    crate::secret::Place::new("agents", "api_key", agent_id)
}

fn no_secret_key() -> DbError {
    DbError::Configuration("no secret key to seal or open provider keys (see PARLEY_SECRET_KEY)".into())
}

pub(super) const COLUMNS: &str = "id, public_key, name, vertical, capabilities, enabled_tools, provider, base_url, \
    api_key, model, fallback_model, system_prompt, greeting, theme_color, launcher_position, language, look, \
    allowed_origins, budget_usd, max_turns, daily_cap_usd, max_tokens, identity_required, identity_max_age_secs, retention_days, domain, version";
