//! `import-knowledge` and `import-news`.

use anyhow::Context;
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::store::agents;
use parley_server::Config;

use super::open_db;

#[derive(clap::Args)]
pub struct ImportKnowledge {
    /// Public key of the agent.
    #[arg(long)]
    agent: String,
    /// Name of the knowledge base (created when the agent has none of this name).
    #[arg(long, default_value = "Knowledge")]
    base: String,
    /// What the base is about, for the knowledge tools' descriptions (sets it on an existing base too).
    #[arg(long)]
    description: Option<String>,
    /// Words and phrases, comma separated, that make a question on-topic for the off-topic
    /// check (sets them on an existing base too).
    #[arg(long)]
    topics: Option<String>,
    /// Markdown files or directories of them.
    paths: Vec<std::path::PathBuf>,
}

#[derive(clap::Args)]
pub struct ImportNews {
    /// Public key of the agent (all agents when omitted).
    #[arg(long)]
    agent: Option<String>,
    /// The JSON file.
    file: std::path::PathBuf,
}

pub async fn import_knowledge(config: Config, a: ImportKnowledge) -> anyhow::Result<()> {
    use parley_engine::engine::knowledge::Knowledge;
    use parley_engine::store::knowledge;
    let db = open_db(&config).await?;
    let agent =
        agents::by_public_key(&db, &a.agent).await?.with_context(|| format!("no agent with key {}", a.agent))?;
    let now = SystemClock.now_ms();
    let base = match knowledge::bases_of_agent(&db, &agent.id).await?.into_iter().find(|b| b.name == a.base) {
        Some(base) => {
            if a.description.is_some() || a.topics.is_some() {
                let fields = knowledge::BaseFields {
                    name: &base.name,
                    description: a.description.as_deref().unwrap_or(&base.description),
                    topics: a.topics.as_deref().unwrap_or(&base.topics),
                };
                knowledge::update_base(&db, &base.id, &fields, now).await?;
            }
            base
        }
        None => {
            let fields = knowledge::BaseFields {
                name: &a.base,
                description: a.description.as_deref().unwrap_or_default(),
                topics: a.topics.as_deref().unwrap_or_default(),
            };
            knowledge::create_base(&db, &agent.id, &fields, now).await?
        }
    };
    let mut files = Vec::new();
    for path in &a.paths {
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            files.extend(entries.into_iter().filter(|p| p.extension().is_some_and(|e| e == "md")));
        } else {
            files.push(path.clone());
        }
    }
    let mut articles = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        articles.push(knowledge::parse_markdown(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?);
    }
    let embedder = config.embedder(reqwest::Client::new());
    let index = Knowledge::new(db.clone(), embedder);
    index.add_articles(&base.id, &articles, now).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("added {} articles to \"{}\" of {}", articles.len(), base.name, agent.public_key);
    Ok(())
}

pub async fn import_news(config: &Config, a: ImportNews) -> anyhow::Result<()> {
    use parley_engine::store::news;
    let db = open_db(config).await?;
    let agent_id = match &a.agent {
        Some(key) => {
            Some(agents::by_public_key(&db, key).await?.with_context(|| format!("no agent with key {key}"))?.id)
        }
        None => None,
    };
    let text = std::fs::read_to_string(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let items: Vec<news::NewsItem> =
        serde_json::from_str(&text).context("the file must be a JSON array of news items")?;
    let n = news::import(&db, agent_id.as_deref(), &items, SystemClock.now_ms()).await?;
    println!("added {n} news items");
    Ok(())
}
