//! The tool registry: every tool Parley ships, checked once at start-up, and the per-agent view
//! the turn loop uses.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolOutput, names};
use crate::engine::knowledge::Scope;
use crate::engine::provider::ToolSpec;
use crate::store::agents::Agent;

struct Registered {
    tool: Arc<dyn Tool>,
    validator: jsonschema::Validator,
    spec: ToolSpec,
}

/// All tools, by name.
#[derive(Clone)]
pub struct Registry {
    tools: Arc<Vec<Arc<Registered>>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.iter().map(|t| &t.spec.name)).finish()
    }
}

/// Why a set of tools cannot be a registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(transparent)]
    Name(#[from] names::NameError),
    #[error("two tools are named `{0}`")]
    Duplicate(String),
    #[error("the schema of `{0}` must describe an object")]
    NotAnObject(String),
    #[error("the schema of `{0}` does not compile: {1}")]
    Schema(String, String),
}

/// Checks one tool: its name (SEP-986) and its argument schema.
fn register(tool: Arc<dyn Tool>) -> Result<Registered, RegistryError> {
    let name = tool.name().to_owned();
    names::check(&name)?;
    let schema = tool.schema();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(RegistryError::NotAnObject(name));
    }
    let validator =
        jsonschema::validator_for(&schema).map_err(|e| RegistryError::Schema(name.clone(), e.to_string()))?;
    let spec = ToolSpec { name, description: tool.description().to_owned(), parameters: schema };
    Ok(Registered { tool, validator, spec })
}

impl Registry {
    /// Builds a registry; fails on a name that breaks SEP-986, a duplicate name or a schema that
    /// does not compile.
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Result<Self, RegistryError> {
        Registry { tools: Arc::default() }.with(tools)
    }

    /// These tools and `more` after them (the owner's tools after the built-in ones); fails as
    /// [`Registry::new`] does, and on a name already taken.
    pub fn with(&self, more: Vec<Arc<dyn Tool>>) -> Result<Self, RegistryError> {
        let mut seen: HashSet<String> = self.tools.iter().map(|t| t.spec.name.clone()).collect();
        let mut out: Vec<Arc<Registered>> = self.tools.iter().cloned().collect();
        for tool in more {
            let registered = register(tool)?;
            if !seen.insert(registered.spec.name.clone()) {
                return Err(RegistryError::Duplicate(registered.spec.name));
            }
            out.push(Arc::new(registered));
        }
        Ok(Registry { tools: Arc::new(out) })
    }

    /// Whether a tool of this name is registered.
    pub fn has(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.spec.name == name)
    }

    /// Every tool Parley ships (those that call other services use `http`).
    pub fn builtin(http: &reqwest::Client) -> Self {
        Registry::new(builtin_tools(http)).unwrap_or_else(|e| panic!("built-in tool registry is invalid: {e}"))
    }

    /// `(name, capability)` of every tool.
    pub fn catalogue(&self) -> Vec<(&str, &str)> {
        self.tools.iter().map(|t| (t.tool.name(), t.tool.capability())).collect()
    }

    /// The tools an agent may use: its capabilities allow them, and `enabled_tools` (when set)
    /// names them.
    pub fn for_agent(&self, agent: &Agent) -> AgentTools {
        let tools = self
            .tools
            .iter()
            .filter(|t| agent.has_capability(t.tool.capability()))
            .filter(|t| match &agent.enabled_tools {
                Some(enabled) => enabled.iter().any(|n| n == t.tool.name()),
                None => true,
            })
            .cloned()
            .collect::<Vec<Arc<Registered>>>();
        let narrowed = tools
            .iter()
            .filter_map(|t| {
                let parameters = t.tool.for_domain(&agent.domain)?;
                let spec = ToolSpec { name: t.spec.name.clone(), description: t.spec.description.clone(), parameters };
                Some((t.spec.name.clone(), spec))
            })
            .collect();
        AgentTools { tools, tailored: Arc::new(narrowed) }
    }
}

/// Every tool Parley ships, in the order the model sees them.
pub fn builtin_tools(http: &reqwest::Client) -> Vec<Arc<dyn Tool>> {
    use super::*;
    vec![
        Arc::new(escalate_to_human::EscalateToHuman),
        Arc::new(offer_quick_replies::OfferQuickReplies),
        Arc::new(ask_form::AskForm),
        Arc::new(search_knowledge::SearchKnowledge),
        Arc::new(check_off_topic::CheckOffTopic),
        Arc::new(collect_assessment_info::CollectAssessmentInfo),
        Arc::new(generate_payment::GeneratePayment),
        Arc::new(save_user_memory::SaveUserMemory),
        Arc::new(get_user_context::GetUserContext),
        Arc::new(get_current_datetime::GetCurrentDatetime),
        Arc::new(web_search::WebSearch::from_env(http.clone())),
        Arc::new(get_exchange_rate::GetExchangeRate::from_env(http.clone())),
        Arc::new(fetch_immigration_news::FetchImmigrationNews),
    ]
}

/// The tools of one agent.
#[derive(Clone, Default)]
pub struct AgentTools {
    tools: Vec<Arc<Registered>>,
    /// Definitions written for this agent's knowledge, by tool name (see [`Tool::tailored`]).
    tailored: Arc<HashMap<String, ToolSpec>>,
}

impl AgentTools {
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Only the tools named (an expert's tools among its agent's).
    pub fn only(&self, names: &[String]) -> AgentTools {
        AgentTools {
            tools: self.tools.iter().filter(|t| names.iter().any(|n| n == t.tool.name())).cloned().collect(),
            tailored: self.tailored.clone(),
        }
    }

    /// The same tools, described for an agent whose knowledge covers `scope`.
    pub fn tailored(self, scope: &Scope) -> AgentTools {
        let mut tailored = (*self.tailored).clone();
        tailored.extend(self.tools.iter().filter_map(|t| {
            let (description, parameters) = t.tool.tailored(scope)?;
            Some((t.spec.name.clone(), ToolSpec { name: t.spec.name.clone(), description, parameters }))
        }));
        AgentTools { tools: self.tools, tailored: Arc::new(tailored) }
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.tool.name()).collect()
    }

    /// The tool definitions to offer the model.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| self.tailored.get(t.tool.name()).unwrap_or(&t.spec).clone()).collect()
    }

    /// What the tool of this name does; `None` for a name that is not one of these tools.
    pub fn effect(&self, name: &str) -> Option<super::effect::Effect> {
        self.find(name).ok().map(|t| t.tool.effect())
    }

    /// Parses and validates the model's arguments.
    pub fn check_arguments(&self, name: &str, raw: &str) -> Result<Value, ToolError> {
        let tool = self.find(name)?;
        parse_and_validate(&tool.validator, raw)
    }

    /// Runs a tool after checking its name and arguments.
    pub async fn call(&self, ctx: &ToolContext, name: &str, raw_arguments: &str) -> Result<ToolOutput, ToolError> {
        let tool = self.find(name)?;
        let args = parse_and_validate(&tool.validator, raw_arguments)?;
        tool.tool.execute(ctx, args).await
    }

    fn find(&self, name: &str) -> Result<&Arc<Registered>, ToolError> {
        self.tools.iter().find(|t| t.tool.name() == name).ok_or_else(|| ToolError::UnknownTool(name.to_owned()))
    }
}

fn parse_and_validate(validator: &jsonschema::Validator, raw: &str) -> Result<Value, ToolError> {
    let raw = raw.trim();
    let args: Value = if raw.is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(raw).map_err(|e| ToolError::InvalidArguments(format!("not valid JSON ({e})")))?
    };
    let problems: Vec<String> = validator
        .iter_errors(&args)
        .take(5)
        .map(|e| {
            let path = e.instance_path().to_string();
            if path.is_empty() { e.to_string() } else { format!("{path}: {e}") }
        })
        .collect();
    if problems.is_empty() { Ok(args) } else { Err(ToolError::InvalidArguments(problems.join("; "))) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Fake(&'static str, &'static str);

    #[async_trait::async_trait]
    impl Tool for Fake {
        fn name(&self) -> &'static str {
            self.0
        }
        fn description(&self) -> &'static str {
            "test tool"
        }
        fn capability(&self) -> &'static str {
            self.1
        }
        fn effect(&self) -> super::super::effect::Effect {
            super::super::effect::Effect::READ
        }
        fn schema(&self) -> Value {
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false})
        }
        async fn execute(&self, _ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::result(args))
        }
    }

    fn agent(capabilities: &[&str], enabled: Option<&[&str]>) -> Agent {
        crate::store::testing::agent(capabilities, enabled)
    }

    fn registry() -> Registry {
        Registry::new(vec![
            Arc::new(Fake("a_one", "cap_a")),
            Arc::new(Fake("a_two", "cap_a")),
            Arc::new(Fake("b_one", "cap_b")),
        ])
        .unwrap()
    }

    #[test]
    fn capabilities_times_enabled_tools() {
        let r = registry();
        assert_eq!(r.for_agent(&agent(&["cap_a"], None)).names(), vec!["a_one", "a_two"]);
        assert_eq!(r.for_agent(&agent(&["cap_a", "cap_b"], None)).names(), vec!["a_one", "a_two", "b_one"]);
        assert_eq!(r.for_agent(&agent(&["cap_a", "cap_b"], Some(&["a_two", "b_one"]))).names(), vec!["a_two", "b_one"]);
        // enabled_tools cannot widen what the capabilities allow.
        assert_eq!(r.for_agent(&agent(&["cap_a"], Some(&["b_one"]))).names(), Vec::<&str>::new());
        assert!(r.for_agent(&agent(&["news"], None)).is_empty());
        assert!(r.for_agent(&agent(&[], None)).is_empty());
    }

    #[test]
    fn more_tools_join_after_and_cannot_take_a_name() {
        let r = registry();
        let more = r.with(vec![Arc::new(Fake("c_one", "cap_c"))]).unwrap();
        assert_eq!(more.catalogue().last(), Some(&("c_one", "cap_c")));
        assert!(more.has("c_one") && !r.has("c_one"), "the first registry is unchanged");
        assert!(
            matches!(r.with(vec![Arc::new(Fake("a_one", "cap_c"))]), Err(RegistryError::Duplicate(n)) if n == "a_one")
        );
        assert!(r.with(vec![Arc::new(Fake("no spaces", "cap_c"))]).is_err());
    }

    #[test]
    fn rejects_bad_names_and_duplicates() {
        assert!(Registry::new(vec![Arc::new(Fake("bad name", "c"))]).is_err());
        assert!(Registry::new(vec![Arc::new(Fake("dup", "c")), Arc::new(Fake("dup", "d"))]).is_err());
    }

    #[test]
    fn builtin_names_pass_sep_986_and_openai_rules() {
        let registry = Registry::builtin(&reqwest::Client::new());
        let all = registry.catalogue();
        assert_eq!(all.len(), 13);
        for (name, _) in all {
            assert!(names::check(name).is_ok());
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{name}");
        }
    }

    #[test]
    fn every_builtin_tool_says_whether_it_reads_outside_text_or_writes() {
        use super::super::effect::{Action, Effect};
        let registry = Registry::builtin(&reqwest::Client::new());
        let effects: Vec<(&str, Effect)> = registry.tools.iter().map(|t| (t.tool.name(), t.tool.effect())).collect();
        let writes: Vec<(&str, Option<Action>)> =
            effects.iter().filter(|(_, e)| e.write.is_some()).map(|(n, e)| (*n, e.write.clone())).collect();
        assert_eq!(
            writes,
            [
                ("collect_assessment_info", Some(Action::Details)),
                ("generate_payment", Some(Action::Payment)),
                ("save_user_memory", Some(Action::Memory)),
            ]
        );
        let outside: Vec<&str> = effects.iter().filter(|(_, e)| e.outside).map(|(n, _)| *n).collect();
        assert_eq!(outside, ["search_knowledge", "web_search", "get_exchange_rate", "fetch_immigration_news"]);
    }

    #[test]
    fn validates_arguments_against_the_schema() {
        let tools = registry().for_agent(&agent(&["cap_a"], None));
        assert_eq!(tools.check_arguments("a_one", "{\"n\": 3}").unwrap(), json!({"n": 3}));
        for bad in ["{\"n\": \"3\"}", "{\"n\": 3, \"extra\": true}", "{}", "[1]", "{n: 3}"] {
            assert!(matches!(tools.check_arguments("a_one", bad), Err(ToolError::InvalidArguments(_))), "{bad}");
        }
        assert_eq!(tools.check_arguments("nope", "{}"), Err(ToolError::UnknownTool("nope".into())));
    }
}
