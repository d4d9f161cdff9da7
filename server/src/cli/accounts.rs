//! `create-agent` and `create-user`.

use anyhow::Context;
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::store::agents::{self, AgentInput, NewAgent};
use parley_protocol::Theme;
use parley_server::Config;

use super::open_db;

#[derive(clap::Args)]
pub struct CreateAgent {
    /// Public key used in the embed snippet.
    #[arg(long)]
    key: String,
    #[arg(long)]
    name: String,
    #[arg(long, default_value = "help_center")]
    vertical: String,
    /// Comma-separated capabilities, e.g. `ticket_escalation,news`.
    #[arg(long, value_delimiter = ',')]
    capabilities: Vec<String>,
    /// Comma-separated tool names to narrow the capabilities' tools.
    #[arg(long, value_delimiter = ',')]
    enabled_tools: Option<Vec<String>>,
    /// `demo`, `openai` or `anthropic` (the last two need `--base-url`).
    #[arg(long, default_value = "demo")]
    provider: String,
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long, env = "PARLEY_AGENT_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    #[arg(long, default_value = "gpt-4o-mini")]
    model: String,
    #[arg(long)]
    fallback_model: Option<String>,
    #[arg(long, default_value = "You are a helpful assistant.")]
    system_prompt: String,
    #[arg(long, default_value = "Hi! How can I help?")]
    greeting: String,
    /// Comma-separated origins allowed to embed the agent (none: no website until one is listed;
    /// `*`: any).
    #[arg(long, value_delimiter = ',')]
    allowed_origins: Vec<String>,
}

#[derive(clap::Args)]
pub struct CreateUser {
    #[arg(long)]
    email: String,
    #[arg(long, default_value = "Administrator")]
    name: String,
    /// `admin` (everything) or `operator` (conversations, leads, orders).
    #[arg(long, default_value = "admin", value_parser = ["admin", "operator"])]
    role: String,
    /// The password (10 characters or more); a random one is made and printed when absent.
    #[arg(long, env = "PARLEY_USER_PASSWORD", hide_env_values = true)]
    password: Option<String>,
}

pub async fn create_agent(config: &Config, a: CreateAgent) -> anyhow::Result<()> {
    let theme = Theme::default();
    let input = AgentInput {
        key: a.key,
        name: a.name,
        vertical: a.vertical,
        capabilities: a.capabilities,
        enabled_tools: a.enabled_tools,
        provider: a.provider,
        base_url: a.base_url.unwrap_or_default(),
        api_key: a.api_key.unwrap_or_default(),
        model: a.model,
        fallback_model: a.fallback_model.unwrap_or_default(),
        system_prompt: a.system_prompt,
        greeting: a.greeting,
        theme_color: theme.color,
        launcher_position: theme.position,
        allowed_origins: a.allowed_origins,
        ..AgentInput::default()
    };
    if input.provider != "demo" && !input.base_url.trim().is_empty() {
        parley_engine::engine::outbound::check_url(&input.base_url, config.outbound()?).map_err(|e| {
            anyhow::anyhow!("the agent was not created:\n  --base-url: {e} (list it in PARLEY_PRIVATE_ENDPOINTS to allow a local model)")
        })?;
    }
    let db = open_db(config).await?;
    let catalogue = parley_engine::seed::tool_catalogue(&db).await.context("reading the experts")?;
    let new = NewAgent::parse(&input, &catalogue).map_err(|errors| {
        let lines: Vec<String> =
            errors.iter().map(|e| format!("  --{}: {}", e.field.replace('_', "-"), e.message)).collect();
        anyhow::anyhow!("the agent was not created:\n{}", lines.join("\n"))
    })?;
    let agent = agents::insert(&db, &new, SystemClock.now_ms()).await.context("creating the agent")?;
    println!("created agent {} (key {})", agent.id, agent.public_key);
    if agent.allowed_origins.is_empty() {
        println!("no website may embed it yet: list the sites with --allowed-origins (or in the console)");
    }
    Ok(())
}

pub async fn create_user(config: &Config, a: CreateUser) -> anyhow::Result<()> {
    use parley_engine::{auth, store::users};
    let role = users::Role::parse(&a.role).context("--role must be `admin` or `operator`")?;
    if !a.email.contains('@') {
        anyhow::bail!("--email must be an email address");
    }
    let (password, generated) = match a.password {
        Some(p) if p.chars().count() >= 10 => (p, false),
        Some(_) => anyhow::bail!("the password needs at least 10 characters"),
        None => (auth::one_time_password(), true),
    };
    let db = open_db(config).await?;
    let hash = auth::hash_password(password.clone()).await;
    match users::with_hash(&db, &a.email).await? {
        Some((user, _)) => {
            users::set_password(&db, &user.id, &hash, SystemClock.now_ms()).await?;
            println!("new password set for {} ({})", user.email, user.role.as_str());
        }
        None => {
            let user = users::insert(&db, &a.email, &a.name, role, &hash, SystemClock.now_ms()).await?;
            println!("created {} {} ({})", user.role.as_str(), user.email, user.id);
        }
    }
    if generated {
        println!("password: {password}");
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct RevokeVisitor {
    /// The visitor's id.
    pub id: String,
}

pub async fn revoke_visitor(config: &Config, a: RevokeVisitor) -> anyhow::Result<()> {
    use parley_engine::store::visitors;
    let db = open_db(config).await?;
    if !visitors::revoke(&db, &a.id, SystemClock.now_ms()).await? {
        anyhow::bail!("no visitor with id {} whose token is still valid", a.id);
    }
    println!("revoked the token of visitor {}", a.id);
    Ok(())
}

#[derive(clap::Args)]
pub struct IdentitySecret {
    /// Public key of the agent.
    #[arg(long)]
    pub agent: String,
    /// Hours the secret it replaces is still accepted (0 to 720), so the site's servers can
    /// switch without signing anyone out.
    #[arg(long, default_value_t = parley_engine::engine::identity::DEFAULT_GRACE_HOURS)]
    pub grace_hours: i64,
    /// Only identified visitors may chat with the agent from now on (`--require false` lifts it).
    #[arg(long)]
    pub require: Option<bool>,
}

/// Creates (or rotates) an agent's identity secret and prints it, once.
pub async fn identity_secret(config: &Config, a: IdentitySecret) -> anyhow::Result<()> {
    use parley_engine::engine::identity::MAX_GRACE_HOURS;
    use parley_engine::store::identity;
    if !(0..=MAX_GRACE_HOURS).contains(&a.grace_hours) {
        anyhow::bail!("--grace-hours must be between 0 and {MAX_GRACE_HOURS}");
    }
    let db = open_db(config).await?;
    let now = SystemClock.now_ms();
    let agent =
        agents::by_public_key(&db, &a.agent).await?.with_context(|| format!("no agent with key {}", a.agent))?;
    let replaced = identity::list_secrets(&db, &agent.id).await?.iter().any(|s| s.expires_at.is_none());
    let (info, secret) = identity::rotate_secret(&db, &agent.id, a.grace_hours * 3_600_000, now).await?;
    if let Some(required) = a.require {
        let settings = agents::IdentitySettings { required, ..agent.identity.clone() };
        agents::set_identity(&db, &agent.id, &settings, now).await?;
    }
    let detail = format!("{}… (the previous one accepted {} h more)", info.prefix, a.grace_hours);
    parley_engine::store::audit::record(&db, None, "cli", "identity.secret", Some(&agent.public_key), &detail, now)
        .await?;
    println!("identity secret {} for agent {} (shown only now): {secret}", info.id, agent.public_key);
    if replaced {
        println!("the previous secret is still accepted for {} hours", a.grace_hours);
    }
    println!(
        "sign tokens with HS256: sub (your user id), exp and iat (at most {} s apart), aud = \"{}\", optional name and email",
        agent.identity.max_age_secs, agent.public_key
    );
    Ok(())
}
