//! Agents: who answers on a website, with which model, tools and look. What a person types
//! becomes a [`NewAgent`] only through [`NewAgent::parse`] (in [`input`]); a key another agent
//! uses is refused by the database's unique constraint when the agent is written.

mod behaviour;
mod domain;
mod fields;
mod input;
mod row;
pub mod versions;

use parley_protocol::{LanguageSetting, Theme};

use sqlx::Any;
use sqlx::any::AnyArguments;
use sqlx::query::Query;

pub use self::domain::{Domain, DomainText, MAX_CODE_CHARS, ReferenceNews, Service, Site};
pub use self::fields::{AgentKey, AllowedOrigins, Capabilities, FieldError, ModelSettings, RawModel};
pub use self::input::{AgentInput, Catalogue};
use self::row::{AgentRow, COLUMNS, LookColumn};
pub(super) use self::row::{key_place, seal_key};
use super::{Db, DbError, new_id, to_json_text};
use crate::secret::ApiKey;

/// Which model client an agent uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    /// The built-in offline demo model.
    Demo,
    /// Any OpenAI-compatible Chat Completions endpoint (OpenAI, OpenRouter, Cloudflare Workers AI,
    /// Ollama, vLLM).
    OpenAi,
    /// Anthropic's native Messages API.
    Anthropic,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Demo => "demo",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "demo" => Some(ProviderKind::Demo),
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }
}

/// The model an agent talks to.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1`.
    pub base_url: Option<String>,
    pub api_key: Option<ApiKey>,
    pub model: String,
    pub fallback_model: Option<String>,
}

/// An agent as the engine uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    pub id: String,
    /// The key in the embed snippet (`data-agent`), public by design.
    pub public_key: String,
    pub name: String,
    pub vertical: String,
    pub capabilities: Vec<String>,
    /// When set, only these tools (among those the capabilities allow).
    pub enabled_tools: Option<Vec<String>>,
    pub provider: ProviderConfig,
    pub system_prompt: String,
    pub greeting: String,
    pub theme: Theme,
    /// The language of the panel's words.
    pub language: LanguageSetting,
    /// The input's placeholder; empty: the panel's own.
    pub placeholder: String,
    /// Questions offered as chips before the first message.
    pub starters: Vec<String>,
    /// The form filled in before the first message (asks for nothing: none).
    pub prechat: parley_protocol::Prechat,
    /// Origins allowed to embed the widget; empty means any.
    pub allowed_origins: Vec<String>,
    pub limits: AgentLimits,
    /// Signed identity from the host site (issue 16).
    pub identity: IdentitySettings,
    /// Its services with their prices, its official sites, its reference news.
    pub domain: Domain,
    /// The published version of its behaviour it serves ([`versions`]; at least 1).
    pub version: i64,
}

/// How an agent treats the host site's signed identity.
#[derive(Clone, Debug, PartialEq)]
pub struct IdentitySettings {
    /// Only identified visitors may chat.
    pub required: bool,
    /// The longest lifetime (`exp` - `iat`) of a token accepted, in seconds.
    pub max_age_secs: i64,
    /// Conversations last active longer ago than this are deleted; `None`: kept. (With the
    /// identity settings: both are about the people who chat.)
    pub retention_days: Option<i64>,
}

/// Shortest and longest retention period, in days.
pub const RETENTION_DAYS: std::ops::RangeInclusive<i64> = 1..=3650;

/// Shortest and longest token lifetime an agent may accept, in seconds (one minute to 30 days).
pub const IDENTITY_MAX_AGES: std::ops::RangeInclusive<i64> = 60..=30 * 24 * 3600;

/// The longest token lifetime a new agent accepts: ten minutes (a token is made for one page
/// load, so a copied one is soon worthless).
pub const DEFAULT_IDENTITY_MAX_AGE_SECS: i64 = 600;

impl Default for IdentitySettings {
    fn default() -> Self {
        IdentitySettings { required: false, max_age_secs: DEFAULT_IDENTITY_MAX_AGE_SECS, retention_days: None }
    }
}

/// The guards of an agent's turns (seed 003).
#[derive(Clone, Debug, PartialEq)]
pub struct AgentLimits {
    /// Spend limit of one conversation, in US dollars.
    pub budget_usd: f64,
    /// Tool hops per turn; `None`: 3 for help-center agents, 15 for coordinators.
    pub max_turns: Option<u32>,
    /// What the agent may spend per UTC day; `None`: no cap.
    pub daily_cap_usd: Option<f64>,
    /// `max_tokens` of every model call of its answers; `None`: the server's default.
    pub max_tokens: Option<u32>,
}

impl Default for AgentLimits {
    fn default() -> Self {
        AgentLimits { budget_usd: 0.5, max_turns: None, daily_cap_usd: None, max_tokens: None }
    }
}

/// The capability that makes an agent a coordinator of expert agents.
pub const EXPERT_TEAM: &str = "expert_team";

impl Agent {
    /// A coordinator calls expert agents through tools; otherwise a help-center agent.
    pub fn is_coordinator(&self) -> bool {
        self.has_capability(EXPERT_TEAM)
    }

    /// Tool hops allowed per turn.
    pub fn max_turns(&self) -> u32 {
        self.limits.max_turns.unwrap_or(if self.is_coordinator() { 15 } else { 3 })
    }

    pub fn has_capability(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    /// Whether a page on `origin` may embed this agent.
    /// Whether a page of `origin` may use this agent. An agent allows no website until its
    /// owner lists one (`*` allows all); Parley's own pages need no listing.
    pub fn allows_origin(&self, origin: &str) -> bool {
        self.allowed_origins.iter().any(|o| o == "*" || o.trim_end_matches('/') == origin)
    }
}

/// What it takes to create an agent. Input from people goes through [`NewAgent::parse`]; the
/// fields stay public for code that builds a known-good agent (tests).
#[derive(Clone, Debug)]
pub struct NewAgent {
    pub public_key: String,
    pub name: String,
    pub vertical: String,
    pub capabilities: Vec<String>,
    pub enabled_tools: Option<Vec<String>>,
    pub provider: ProviderConfig,
    pub system_prompt: String,
    pub greeting: String,
    pub theme: Theme,
    pub language: LanguageSetting,
    pub placeholder: String,
    pub starters: Vec<String>,
    pub prechat: parley_protocol::Prechat,
    pub allowed_origins: Vec<String>,
    pub domain: Domain,
}

/// The agent with this embed key.
pub async fn by_public_key(db: &Db, key: &str) -> Result<Option<Agent>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM agents WHERE public_key = $1");
    let row: Option<AgentRow> = sqlx::query_as(&sql).bind(key).fetch_optional(&mut *db.read().await?).await?;
    row.map(|r| r.into_agent(db)).transpose()
}

/// The agent with this id.
pub async fn by_id(db: &Db, id: &str) -> Result<Option<Agent>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM agents WHERE id = $1");
    let row: Option<AgentRow> = sqlx::query_as(&sql).bind(id).fetch_optional(&mut *db.read().await?).await?;
    row.map(|r| r.into_agent(db)).transpose()
}

/// Every agent, oldest first.
pub async fn list(db: &Db) -> Result<Vec<Agent>, DbError> {
    let sql = format!("SELECT {COLUMNS} FROM agents ORDER BY created_at");
    let rows: Vec<AgentRow> = sqlx::query_as(&sql).fetch_all(&mut *db.read().await?).await?;
    rows.into_iter().map(|r| r.into_agent(db)).collect()
}

/// How many agents there are.
pub async fn count(db: &Db) -> Result<i64, DbError> {
    sqlx::query_scalar("SELECT COUNT(*) FROM agents").fetch_one(&mut *db.read().await?).await
}

/// Why an agent was not written.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// Another agent already uses the public key.
    #[error("Another agent already uses this key.")]
    KeyTaken,
    #[error(transparent)]
    Db(#[from] DbError),
}

impl SaveError {
    /// A unique-constraint violation is a taken key (the id is new and random; `public_key` is
    /// the only other unique column). SQLite and PostgreSQL both report it through `Any`.
    fn from_db(e: DbError) -> Self {
        match &e {
            DbError::Database(d) if d.is_unique_violation() => SaveError::KeyTaken,
            _ => SaveError::Db(e),
        }
    }
}

/// Writes a new agent (its behaviour is version 1, recorded at its first change);
/// [`SaveError::KeyTaken`] when its key is in use.
pub async fn insert(db: &Db, new: &NewAgent, now: i64) -> Result<Agent, SaveError> {
    let id = new_id();
    let sql = "INSERT INTO agents (id, public_key, name, vertical, capabilities, enabled_tools, provider, \
         base_url, api_key, model, fallback_model, system_prompt, greeting, theme_color, \
         launcher_position, allowed_origins, language, look, domain, created_at, updated_at, identity_max_age_secs) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20, $21)";
    let key = seal_key(db, &id, new.provider.api_key.as_ref())?;
    bind_editable(sqlx::query(sql).bind(&id), new, key)
        .bind(now)
        .bind(DEFAULT_IDENTITY_MAX_AGE_SECS)
        .execute(db.writer())
        .await
        .map_err(SaveError::from_db)?;
    Ok(by_id(db, &id).await?.ok_or(DbError::RowNotFound)?)
}

/// Replaces every editable field of an agent; `false` when there is no such agent. A change of
/// its behaviour is recorded as the next published version, by `by` (see [`versions`]).
pub async fn update(db: &Db, id: &str, new: &NewAgent, by: Option<&str>, now: i64) -> Result<bool, SaveError> {
    let sql = "UPDATE agents SET public_key = $2, name = $3, vertical = $4, capabilities = $5, \
         enabled_tools = $6, provider = $7, base_url = $8, api_key = $9, model = $10, \
         fallback_model = $11, system_prompt = $12, greeting = $13, theme_color = $14, \
         launcher_position = $15, allowed_origins = $16, language = $17, look = $18, domain = $19, updated_at = $20 \
         WHERE id = $1";
    let key = seal_key(db, id, new.provider.api_key.as_ref())?;
    let mut tx = db.begin_write().await?;
    let Some((before, stored)) = versions::current_in(&mut tx, id).await? else { return Ok(false) };
    bind_editable(sqlx::query(sql).bind(id), new, key).bind(now).execute(&mut *tx).await.map_err(SaveError::from_db)?;
    versions::record_saved(&mut tx, id, &before, stored, &versions::Behaviour::of_new(new), by, now).await?;
    tx.commit().await?;
    Ok(true)
}

/// Binds the editable columns of an agent as `$2` to `$19` (`$1` is the id), in the order
/// [`insert`] and [`update`] both name them; `sealed_key` is the provider key as stored.
fn bind_editable<'q>(
    query: Query<'q, Any, AnyArguments<'q>>,
    new: &'q NewAgent,
    sealed_key: Option<String>,
) -> Query<'q, Any, AnyArguments<'q>> {
    query
        .bind(&new.public_key)
        .bind(&new.name)
        .bind(&new.vertical)
        .bind(to_json_text(&new.capabilities))
        .bind(new.enabled_tools.as_ref().map(to_json_text))
        .bind(new.provider.kind.as_str())
        .bind(&new.provider.base_url)
        .bind(sealed_key)
        .bind(&new.provider.model)
        .bind(&new.provider.fallback_model)
        .bind(&new.system_prompt)
        .bind(&new.greeting)
        .bind(&new.theme.color)
        .bind(&new.theme.position)
        .bind(to_json_text(&new.allowed_origins))
        .bind(new.language.as_str())
        .bind(to_json_text(&LookColumn::of(new)))
        .bind(to_json_text(&new.domain))
}

/// `(id, stored key)` of every agent with a provider key, as stored (for [`super::credentials`]).
pub(super) async fn stored_keys(db: &Db) -> Result<Vec<(String, String)>, DbError> {
    sqlx::query_as("SELECT id, api_key FROM agents WHERE api_key IS NOT NULL").fetch_all(&mut *db.read().await?).await
}

/// Replaces one agent's stored key (already sealed) if it is still `was`.
pub(super) async fn replace_stored_key(db: &Db, id: &str, was: &str, sealed: &str) -> Result<(), DbError> {
    sqlx::query("UPDATE agents SET api_key = $3 WHERE id = $1 AND api_key = $2")
        .bind(id)
        .bind(was)
        .bind(sealed)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Sets an agent's guards.
pub async fn set_limits(db: &Db, id: &str, limits: &AgentLimits) -> Result<(), DbError> {
    // No cap is bound as -1 and stored as NULL: sqlx 0.8.6's Any driver sends a NULL `f64` to
    // PostgreSQL as a `float4`, and the connection's cached statement then refuses a real cap
    // ("incorrect binary data format in bind parameter 4").
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE agents SET budget_usd = $2, max_turns = $3, daily_cap_usd = NULLIF($4, -1.0) WHERE id = $1")
        .bind(id)
        .bind(limits.budget_usd)
        .bind(limits.max_turns.map(i64::from))
        .bind(limits.daily_cap_usd.unwrap_or(-1.0))
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE agents SET max_tokens = $2 WHERE id = $1")
        .bind(id)
        .bind(limits.max_tokens.map(i64::from))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Stores an agent's identity settings; `false` when there is no such agent.
pub async fn set_identity(db: &Db, id: &str, settings: &IdentitySettings, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE agents SET identity_required = $2, identity_max_age_secs = $3, retention_days = $4, updated_at = $5 \
         WHERE id = $1",
    )
    .bind(id)
    .bind(i64::from(settings.required))
    .bind(settings.max_age_secs)
    .bind(settings.retention_days)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Agents with a retention period: `(id, days)`.
pub async fn with_retention(db: &Db) -> Result<Vec<(String, i64)>, DbError> {
    sqlx::query_as("SELECT id, retention_days FROM agents WHERE retention_days IS NOT NULL")
        .fetch_all(&mut *db.read().await?)
        .await
}
