//! Access tokens of the MCP server. A token belongs to one agent and carries a default feature
//! set and output format; only its SHA-256 hash is stored, so the token is shown once, when it is
//! created. The admin console and the CLI call these functions directly.

use super::visitors::hash_token;
use super::{Db, DbError, new_id};

/// Which tool definitions an MCP client gets (seed 004).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureSet {
    /// `ListAvailableKnowledgeBases` plus a general `SearchKnowledgeBase(knowledge_base_id, query)`.
    #[default]
    Base,
    /// One `SearchKnowledgeBase-<first 8 characters of the id>` tool per knowledge base.
    Detail,
}

impl FeatureSet {
    pub fn as_str(self) -> &'static str {
        match self {
            FeatureSet::Base => "base",
            FeatureSet::Detail => "detail",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "base" => Some(FeatureSet::Base),
            "detail" => Some(FeatureSet::Detail),
            _ => None,
        }
    }
}

/// How tool results are written for the client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// The result as JSON text.
    #[default]
    Raw,
    /// Readable Markdown.
    Text,
}

impl OutputFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Raw => "raw",
            OutputFormat::Text => "text",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "raw" => Some(OutputFormat::Raw),
            "text" => Some(OutputFormat::Text),
            _ => None,
        }
    }
}

/// A part of an agent's tools a token may be limited to (seed 004's modules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Module {
    /// `ListAvailableKnowledgeBases` and the `SearchKnowledgeBase` tools.
    Knowledge,
    /// `GetNewsForDate`.
    News,
    /// `GetTrendingQuestions`.
    Trending,
    /// The agent's other tools (date and time, web search, exchange rates, off-topic check).
    Tools,
}

impl Module {
    pub const ALL: [Module; 4] = [Module::Knowledge, Module::News, Module::Trending, Module::Tools];

    pub fn as_str(self) -> &'static str {
        match self {
            Module::Knowledge => "knowledge",
            Module::News => "news",
            Module::Trending => "trending",
            Module::Tools => "tools",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Module::ALL.into_iter().find(|m| m.as_str() == s.trim().to_ascii_lowercase())
    }

    /// Modules as typed (`news, knowledge`); empty or `all`: every module (`None`).
    pub fn parse_list(text: &str) -> Result<Option<Vec<Module>>, String> {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("all") {
            return Ok(None);
        }
        let mut modules = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let module = Module::parse(part)
                .ok_or_else(|| format!("unknown module `{part}` (want knowledge, news, trending or tools)"))?;
            if !modules.contains(&module) {
                modules.push(module);
            }
        }
        if modules.is_empty() {
            return Err("name at least one module, or none for all".into());
        }
        Ok(Some(modules))
    }

    /// As stored: comma-separated.
    pub fn join(modules: &[Module]) -> String {
        modules.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(",")
    }
}

/// A stored token (never the token itself).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct McpToken {
    pub id: String,
    pub agent_id: String,
    /// The agent's public key.
    pub agent_key: String,
    pub name: String,
    /// The first characters of the token, to recognise it.
    pub token_prefix: String,
    pub feature_set: FeatureSet,
    pub output_format: OutputFormat,
    /// The modules it may use; `None`: every module of its agent.
    pub modules: Option<Vec<Module>>,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

impl McpToken {
    /// Whether the token may use a module.
    pub fn allows(&self, module: Module) -> bool {
        self.modules.as_ref().is_none_or(|m| m.contains(&module))
    }
}

crate::store::row_struct! {
    struct Row {
        id: String,
        agent_id: String,
        agent_key: String,
        name: String,
        token_prefix: String,
        feature_set: String,
        output_format: String,
        modules: Option<String>,
        created_at: i64,
        last_used_at: Option<i64>,
        revoked_at: Option<i64>,
    }
}

impl From<Row> for McpToken {
    fn from(r: Row) -> Self {
        McpToken {
            id: r.id,
            agent_id: r.agent_id,
            agent_key: r.agent_key,
            name: r.name,
            token_prefix: r.token_prefix,
            feature_set: FeatureSet::parse(&r.feature_set).unwrap_or_default(),
            output_format: OutputFormat::parse(&r.output_format).unwrap_or_default(),
            // A stored list that no longer reads (a module renamed) grants only what still reads.
            modules: r.modules.map(|m| m.split(',').filter_map(Module::parse).collect()),
            created_at: r.created_at,
            last_used_at: r.last_used_at,
            revoked_at: r.revoked_at,
        }
    }
}

const SELECT: &str = "SELECT t.id, t.agent_id, a.public_key AS agent_key, t.name, t.token_prefix, t.feature_set, \
    t.output_format, t.modules, t.created_at, t.last_used_at, t.revoked_at FROM mcp_tokens t JOIN agents a ON a.id = t.agent_id";

/// Characters of the token kept in clear for lists.
const PREFIX_CHARS: usize = 10;

/// A new random token: `pm_` and 43 URL-safe characters (256 bits).
pub fn new_token() -> String {
    use base64::Engine;
    let bytes: [u8; 32] = rand::random();
    format!("pm_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Creates a token for an agent; returns it with the token itself, which is not stored.
pub async fn create(
    db: &Db,
    agent_id: &str,
    name: &str,
    feature_set: FeatureSet,
    output_format: OutputFormat,
    modules: Option<&[Module]>,
    now: i64,
) -> Result<(McpToken, String), DbError> {
    let token = new_token();
    let id = new_id();
    let prefix: String = token.chars().take(PREFIX_CHARS).collect();
    sqlx::query(
        "INSERT INTO mcp_tokens (id, agent_id, name, token_hash, token_prefix, feature_set, output_format, modules, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&id)
    .bind(agent_id)
    .bind(name)
    .bind(hash_token(&token))
    .bind(&prefix)
    .bind(feature_set.as_str())
    .bind(output_format.as_str())
    .bind(modules.map(Module::join))
    .bind(now)
    .execute(db.writer())
    .await?;
    let stored = by_id(db, &id).await?.ok_or(DbError::RowNotFound)?;
    Ok((stored, token))
}

pub async fn by_id(db: &Db, id: &str) -> Result<Option<McpToken>, DbError> {
    let row: Option<Row> =
        sqlx::query_as(&format!("{SELECT} WHERE t.id = $1")).bind(id).fetch_optional(&mut *db.read().await?).await?;
    Ok(row.map(McpToken::from))
}

/// The token a client presented, when it exists and is not revoked.
pub async fn by_token(db: &Db, token: &str) -> Result<Option<McpToken>, DbError> {
    let row: Option<Row> = sqlx::query_as(&format!("{SELECT} WHERE t.token_hash = $1 AND t.revoked_at IS NULL"))
        .bind(hash_token(token.trim()))
        .fetch_optional(&mut *db.read().await?)
        .await?;
    Ok(row.map(McpToken::from))
}

/// Tokens, newest first: of one agent, or of every agent when `agent_id` is `None`. Revoked
/// tokens are listed too (with `revoked_at`).
pub async fn list(db: &Db, agent_id: Option<&str>) -> Result<Vec<McpToken>, DbError> {
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "{SELECT} WHERE ($1 IS NULL OR t.agent_id = $1) ORDER BY t.created_at DESC, t.id DESC"
    ))
    .bind(agent_id)
    .fetch_all(&mut *db.read().await?)
    .await?;
    Ok(rows.into_iter().map(McpToken::from).collect())
}

/// Revokes a token (only one of `agent_id` when given). `false` when there was no such active token.
pub async fn revoke(db: &Db, id: &str, agent_id: Option<&str>, now: i64) -> Result<bool, DbError> {
    let done = sqlx::query(
        "UPDATE mcp_tokens SET revoked_at = $3 WHERE id = $1 AND revoked_at IS NULL AND ($2 IS NULL OR agent_id = $2)",
    )
    .bind(id)
    .bind(agent_id)
    .bind(now)
    .execute(db.writer())
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Notes that a token was used.
pub async fn touch(db: &Db, id: &str, now: i64) -> Result<(), DbError> {
    sqlx::query("UPDATE mcp_tokens SET last_used_at = $2 WHERE id = $1")
        .bind(id)
        .bind(now)
        .execute(db.writer())
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_prefixed() {
        let (a, b) = (new_token(), new_token());
        assert!(a.starts_with("pm_") && a.len() == 46, "{a}");
        assert_ne!(a, b);
        assert_eq!(FeatureSet::parse(" Detail "), Some(FeatureSet::Detail));
        assert_eq!(OutputFormat::parse("text"), Some(OutputFormat::Text));
        assert_eq!(FeatureSet::parse("full"), None);
    }

    #[test]
    fn modules_are_read_as_typed() {
        assert_eq!(Module::parse_list(""), Ok(None));
        assert_eq!(Module::parse_list(" All "), Ok(None));
        assert_eq!(Module::parse_list("news, Knowledge,news"), Ok(Some(vec![Module::News, Module::Knowledge])));
        assert!(Module::parse_list("news,billing").unwrap_err().contains("billing"));
        assert!(Module::parse_list(" , ").is_err());
        assert_eq!(Module::join(&[Module::Trending, Module::Tools]), "trending,tools");
    }

    #[tokio::test]
    async fn mcp_tokens_are_stored_hashed_and_revocable() {
        let (db, agent, _dir) = crate::store::testing::db_with_agent().await;
        let (db, agent) = (&db, &agent.id);
        let (row, token) = create(db, agent, "IDE", FeatureSet::Detail, OutputFormat::Text, None, 5).await.unwrap();
        assert_eq!(row.modules, None);
        assert!(Module::ALL.iter().all(|m| row.allows(*m)));
        let news_only = [Module::News];
        let (limited, _) =
            create(db, agent, "news", FeatureSet::Base, OutputFormat::Raw, Some(&news_only), 5).await.unwrap();
        assert_eq!(limited.modules.as_deref(), Some(&news_only[..]));
        assert!(limited.allows(Module::News) && !limited.allows(Module::Knowledge) && !limited.allows(Module::Tools));
        sqlx::query("DELETE FROM mcp_tokens WHERE id = $1").bind(&limited.id).execute(db.writer()).await.unwrap();
        assert_eq!(
            (row.feature_set, row.output_format, row.agent_key.as_str()),
            (FeatureSet::Detail, OutputFormat::Text, "tools-test")
        );
        assert!(token.starts_with(&row.token_prefix));
        let stored: String =
            sqlx::query_scalar("SELECT token_hash FROM mcp_tokens").fetch_one(db.pool()).await.unwrap();
        assert_eq!(stored, hash_token(&token));
        assert!(!stored.contains(&token));
        assert_eq!(by_token(db, &token).await.unwrap().unwrap().id, row.id);
        assert!(by_token(db, "pm_nope").await.unwrap().is_none());
        assert_eq!(list(db, Some(agent)).await.unwrap().len(), 1);
        assert_eq!(list(db, Some("other")).await.unwrap().len(), 0);
        assert!(!revoke(db, &row.id, Some("other"), 6).await.unwrap());
        assert!(revoke(db, &row.id, Some(agent), 6).await.unwrap());
        assert!(!revoke(db, &row.id, None, 7).await.unwrap());
        assert!(by_token(db, &token).await.unwrap().is_none());
        assert_eq!(list(db, None).await.unwrap()[0].revoked_at, Some(6));
    }
}
