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
    /// Files (Markdown with a front matter, PDF, DOCX, HTML, Markdown, text, CSV of questions
    /// and answers) or directories of them.
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
    use parley_engine::store::knowledge;
    let engine = parley_server::cli_engine(&config).await?;
    let db = engine.db().clone();
    let base = base_of(&db, &a.agent, &a.base, a.description.as_deref(), a.topics.as_deref()).await?;
    let mut files = Vec::new();
    for path in &a.paths {
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            files.extend(entries.into_iter().filter(|p| p.is_file() && supported(p)));
        } else {
            files.push(path.clone());
        }
    }
    // Markdown with a front matter keeps its title, category, kind and source (hand-written
    // articles); every other file is read into the base's Files source.
    let mut articles = Vec::new();
    let mut uploads = Vec::new();
    for file in &files {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let text = std::str::from_utf8(&bytes).unwrap_or("");
        if file.extension().is_some_and(|e| e == "md") && text.trim_start_matches('\u{feff}').starts_with("---") {
            articles.push(knowledge::parse_markdown(text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?);
        } else {
            let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            uploads.push((name, bytes));
        }
    }
    let now = SystemClock.now_ms();
    if !articles.is_empty() {
        engine.services().knowledge.add_articles(&base.id, &articles, now).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        println!("added {} articles to \"{}\"", articles.len(), base.name);
    }
    let mut refused = 0;
    if !uploads.is_empty() {
        let bar = indicatif::ProgressBar::new(uploads.len() as u64);
        for chunk in uploads.chunks(1) {
            bar.set_message(chunk[0].0.clone());
            for r in engine.import_files(&base.id, chunk).await.map_err(super::sources::explain)? {
                match &r.error {
                    None => bar.println(format!("indexed {} ({} passages)", r.name, r.passages)),
                    Some(e) => {
                        refused += 1;
                        bar.println(format!("refused {e}"));
                    }
                }
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        println!("{} of {} files indexed into \"{}\"", uploads.len() - refused, uploads.len(), base.name);
    }
    if refused > 0 {
        anyhow::bail!("{refused} files could not be read");
    }
    Ok(())
}

/// A file `import-knowledge` reads from a folder.
fn supported(path: &std::path::Path) -> bool {
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    ["md", "markdown", "txt", "pdf", "docx", "html", "htm", "csv"].contains(&ext.as_str())
}

/// The agent's base of this name, made when missing; description and topics set when given.
pub async fn base_of(
    db: &parley_engine::store::Db,
    agent_key: &str,
    name: &str,
    description: Option<&str>,
    topics: Option<&str>,
) -> anyhow::Result<parley_engine::store::knowledge::KnowledgeBase> {
    use parley_engine::store::knowledge;
    let agent =
        agents::by_public_key(db, agent_key).await?.with_context(|| format!("no agent with key {agent_key}"))?;
    let now = SystemClock.now_ms();
    Ok(match knowledge::bases_of_agent(db, &agent.id).await?.into_iter().find(|b| b.name == name) {
        Some(base) => {
            if description.is_some() || topics.is_some() {
                let fields = knowledge::BaseFields {
                    name: &base.name,
                    description: description.unwrap_or(&base.description),
                    topics: topics.unwrap_or(&base.topics),
                };
                knowledge::update_base(db, &base.id, &fields, now).await?;
            }
            base
        }
        None => {
            let fields = knowledge::BaseFields {
                name,
                description: description.unwrap_or_default(),
                topics: topics.unwrap_or_default(),
            };
            knowledge::create_base(db, &agent.id, &fields, now).await?
        }
    })
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
