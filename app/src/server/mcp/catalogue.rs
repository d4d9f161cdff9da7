//! Which tools an MCP token sees, built at every `tools/list` and `tools/call` from the agent as
//! it is now (its capabilities, `enabled_tools` and knowledge bases).
//!
//! - Knowledge (when the agent's registry tools include `search_knowledge`, i.e. capability
//!   `knowledge_search` and not narrowed away by `enabled_tools`): feature set `base` gets
//!   `ListAvailableKnowledgeBases` and the general `SearchKnowledgeBase`; `detail` gets one
//!   `SearchKnowledgeBase-<id prefix>` per knowledge base instead. `search_knowledge` itself is
//!   not listed: these tools replace it.
//! - `GetNewsForDate` when the registry tools include `fetch_immigration_news` (capability `news`).
//! - `GetTrendingQuestions` always: it reads only the agent's own stored questions.
//! - Every other registry tool of the agent, except those bound to a widget visitor
//!   ([`VISITOR_BOUND`]): an MCP client is not a visitor, has no conversation, and cannot see
//!   widget blocks, so those tools would write rows about nobody or promise buttons nobody sees.
//!   (Creating a synthetic "MCP visitor" and conversation per token was rejected: it would pollute
//!   the console's conversations, the leads and the trending questions.)
//!
//! A token limited to some modules ([`Module`]: `knowledge`, `news`, `trending`, `tools`) gets
//! only their tools: the others are neither listed nor callable (a call looks the tool up in this
//! same list).
//!
//! Every name is checked against SEP-986 when the list is built; a name that fails is left out
//! (and logged), so a client never receives an invalid name.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

use super::builtin::{self, LIST_BASES, NEWS, SEARCH, SEARCH_PREFIX, TRENDING};
use super::format::Shape;
use super::{FeatureSet, McpAccess};
use parley_engine::engine::Engine;
use parley_engine::engine::tools::names;
use parley_engine::store::DbError;
use parley_engine::store::knowledge::{self, KnowledgeBase};
use parley_engine::store::mcp_tokens::Module;

/// Registry tools MCP does not offer, with the reason.
pub const VISITOR_BOUND: &[(&str, &str)] = &[
    ("escalate_to_human", "shows a contact button in the widget; an MCP client has no widget"),
    ("offer_quick_replies", "shows answer buttons in the widget; an MCP client has no widget"),
    ("ask_form", "shows a form in the widget; an MCP client has no widget"),
    ("generate_payment", "creates a payment order for a visitor's conversation"),
    ("save_user_memory", "stores a memory about the widget visitor"),
    ("get_user_context", "reads the widget visitor's memories"),
    ("collect_assessment_info", "stores the widget visitor's assessment answers"),
];

/// The registry tool the MCP knowledge tools stand for.
const KNOWLEDGE_TOOL: &str = "search_knowledge";
/// The registry tool whose capability gates `GetNewsForDate`.
const NEWS_TOOL: &str = "fetch_immigration_news";
/// Characters of a knowledge base's id in the name of its search tool (more when two share them).
pub const ID_CHARS: usize = 8;

/// What a listed tool runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    ListBases,
    SearchAny,
    SearchOne(KnowledgeBase),
    News,
    Trending,
    Registry(String),
}

impl Target {
    pub fn shape(&self) -> Shape {
        match self {
            Target::ListBases => Shape::KnowledgeBases,
            Target::SearchAny | Target::SearchOne(_) => Shape::Search,
            Target::News => Shape::News,
            Target::Trending => Shape::Trending,
            Target::Registry(_) => Shape::Other,
        }
    }
}

/// A tool as the client sees it, and what it runs.
#[derive(Clone, Debug)]
pub struct McpTool {
    pub tool: Tool,
    pub target: Target,
}

fn object(schema: Value) -> Arc<JsonObject> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// A tool; `read_only` marks Parley's own lookups (registry tools keep no annotations: some of
/// them reach the web).
fn entry(name: String, description: String, schema: Value, target: Target, read_only: bool) -> McpTool {
    let mut tool = Tool::new(name, description, object(schema));
    if read_only {
        tool = tool.with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    }
    McpTool { tool, target }
}

/// The shortest prefix (at least [`ID_CHARS`] characters) of each id that no other id shares.
/// Ids are time-ordered UUIDv7s, so bases created within about a minute share their first 8.
pub fn short_ids(ids: &[&str]) -> Vec<String> {
    ids.iter()
        .map(|id| {
            let chars: Vec<char> = id.chars().collect();
            let mut n = ID_CHARS.min(chars.len());
            loop {
                let prefix: String = chars[..n].iter().collect();
                let shared = ids.iter().any(|other| other != id && other.starts_with(&prefix));
                if !shared || n >= chars.len() {
                    // A prefix ending in `-` reads badly; take one more character.
                    if prefix.ends_with('-') && n < chars.len() {
                        n += 1;
                        continue;
                    }
                    return prefix;
                }
                n += 1;
            }
        })
        .collect()
}

/// The knowledge tools of a feature set.
fn knowledge_tools(feature_set: FeatureSet, bases: &[KnowledgeBase]) -> Vec<McpTool> {
    match feature_set {
        FeatureSet::Base => vec![
            entry(
                LIST_BASES.into(),
                builtin::LIST_BASES_DESCRIPTION.into(),
                builtin::list_bases_schema(),
                Target::ListBases,
                true,
            ),
            entry(
                SEARCH.into(),
                builtin::SEARCH_DESCRIPTION.into(),
                builtin::search_schema(true),
                Target::SearchAny,
                true,
            ),
        ],
        FeatureSet::Detail => {
            let ids: Vec<&str> = bases.iter().map(|b| b.id.as_str()).collect();
            short_ids(&ids)
                .into_iter()
                .zip(bases)
                .map(|(short, base)| {
                    entry(
                        format!("{SEARCH_PREFIX}{short}"),
                        builtin::search_one_description(base),
                        builtin::search_schema(false),
                        Target::SearchOne(base.clone()),
                        true,
                    )
                    .with_title(&base.name)
                })
                .collect()
        }
    }
}

impl McpTool {
    fn with_title(mut self, title: &str) -> Self {
        self.tool = self.tool.with_title(title.trim());
        self
    }
}

/// Every tool the token may use now, in the order the client sees them.
pub async fn build(engine: &Engine, access: &McpAccess) -> Result<Vec<McpTool>, DbError> {
    let registry = engine.tools_for(&access.agent).await;
    let offered = registry.names();
    let allows = |module| access.token.allows(module);
    let mut tools = Vec::new();
    if offered.contains(&KNOWLEDGE_TOOL) && allows(Module::Knowledge) {
        let bases = match access.feature_set {
            FeatureSet::Detail => knowledge::bases_of_agent(engine.db(), &access.agent.id).await?,
            FeatureSet::Base => Vec::new(),
        };
        tools.extend(knowledge_tools(access.feature_set, &bases));
    }
    if offered.contains(&NEWS_TOOL) && allows(Module::News) {
        tools.push(entry(NEWS.into(), builtin::NEWS_DESCRIPTION.into(), builtin::news_schema(), Target::News, true));
    }
    if allows(Module::Trending) {
        tools.push(entry(
            TRENDING.into(),
            builtin::TRENDING_DESCRIPTION.into(),
            builtin::trending_schema(),
            Target::Trending,
            true,
        ));
    }
    for spec in registry.specs() {
        let module = if spec.name == NEWS_TOOL { Module::News } else { Module::Tools };
        if spec.name == KNOWLEDGE_TOOL || !allows(module) || VISITOR_BOUND.iter().any(|(n, _)| *n == spec.name) {
            continue;
        }
        let target = Target::Registry(spec.name.clone());
        tools.push(entry(spec.name, spec.description, spec.parameters, target, false));
    }
    tools.retain(|t| match names::check(&t.tool.name) {
        Ok(()) => true,
        Err(e) => {
            tracing::error!(error = %e, "an MCP tool name breaks SEP-986; it is not offered");
            false
        }
    });
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_engine::engine::tools::registry::Registry;

    #[test]
    fn short_ids_are_unique_and_at_least_eight_characters() {
        let ids = ["0190abcd-1111-7000-8000-000000000001", "0190abcd-2222-7000-8000-000000000002", "0190ffff-0000"];
        assert_eq!(short_ids(&ids), vec!["0190abcd-1", "0190abcd-2", "0190ffff"]);
        assert_eq!(short_ids(&["abc"]), vec!["abc"]);
    }

    #[test]
    fn every_mcp_tool_name_passes_sep_986() {
        let bases: Vec<KnowledgeBase> = (0..3)
            .map(|i| KnowledgeBase {
                id: format!("0190abcd-{i:04}-7000-8000-00000000000{i}"),
                agent_id: "a".into(),
                name: format!("Base {i}"),
                description: String::new(),
                topics: String::new(),
            })
            .collect();
        let mut all: Vec<String> = Vec::new();
        for set in [FeatureSet::Base, FeatureSet::Detail] {
            all.extend(knowledge_tools(set, &bases).into_iter().map(|t| t.tool.name.into_owned()));
        }
        all.extend([NEWS, TRENDING].map(String::from));
        all.extend(Registry::builtin(&reqwest::Client::new()).catalogue().into_iter().map(|(n, _)| n.to_owned()));
        assert!(all.iter().any(|n| n == "SearchKnowledgeBase-0190abcd-0001"), "{all:?}");
        for name in &all {
            assert!(names::check(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn every_builtin_tool_is_classified_for_mcp() {
        // A new tool must be looked at: offered over MCP as it is, or listed in VISITOR_BOUND.
        let exposed = ["check_off_topic", "get_current_datetime", "web_search", "get_exchange_rate", NEWS_TOOL];
        for (name, _) in Registry::builtin(&reqwest::Client::new()).catalogue() {
            let known =
                name == KNOWLEDGE_TOOL || exposed.contains(&name) || VISITOR_BOUND.iter().any(|(n, _)| *n == name);
            assert!(known, "decide whether `{name}` is offered over MCP");
        }
    }
}
