//! The offline demo model (provider `demo`): deterministic, no network, no key. It reads the
//! visitor's words (simple English and Chinese), picks tools the agent offers, and writes its
//! answer from the tools' results, streamed token by token. It exists so a newcomer can see every
//! tool and block work without an API key; the panel labels it plainly as the demo model.

mod compose;
mod copilot;
mod intents;

use intents::{INTENTS, clip};

use std::time::Duration;

use serde_json::Value;

use super::super::lang::Lang;

use super::{
    AttemptLog, ChatModel, FinishReason, ModelEvent, ModelMessage, ModelRequest, ModelStream, ModelToolCall,
    ProviderError, TokenUsage, ToolSpec,
};

/// The demo model.
#[derive(Clone, Debug)]
pub struct DemoModel {
    /// Pause between streamed tokens, so the answer visibly streams.
    pub token_delay: Duration,
}

/// What the demo model decided to do.
#[derive(Debug, PartialEq)]
pub enum DemoReply {
    CallTools(Vec<ModelToolCall>),
    Say(String),
}

/// Decides the reply to a request. Pure, so it is easy to test.
pub fn plan(request: &ModelRequest) -> DemoReply {
    // The demo cannot look at images; it says how many it received, before the rest of its answer.
    let images = match request.messages.iter().rev().find(|m| m.user_text().is_some()) {
        Some(ModelMessage::UserImages { images, .. }) => images.len(),
        _ => 0,
    };
    match decide(request, images) {
        DemoReply::Say(answer) if images > 0 => {
            let zh = Lang::of(request.messages.iter().rev().find_map(ModelMessage::user_text).unwrap_or("")).is_zh();
            let received = match (zh, images) {
                (true, n) => format!("（离线演示模型）我收到了 {n} 张图片。"),
                (false, 1) => "(Offline demo model) I received 1 image.".to_owned(),
                (false, n) => format!("(Offline demo model) I received {n} images."),
            };
            DemoReply::Say(format!("{received}\n\n{answer}"))
        }
        other => other,
    }
}

fn decide(request: &ModelRequest, images: usize) -> DemoReply {
    let last_user = request.messages.iter().rev().find_map(ModelMessage::user_text).unwrap_or("");
    // Asked by the operator's copilot, not by a visitor.
    if let Some(rest) = last_user.strip_prefix(super::COPILOT_TASK) {
        return DemoReply::Say(copilot::answer(rest));
    }
    let zh = Lang::of(last_user).is_zh();

    // Results of the tools called after the visitor's last message.
    let results = tool_results(&request.messages);
    let reports_state =
        request.messages.iter().any(|m| matches!(m, ModelMessage::System(t) if t.contains("<consulting_state>")));
    if !results.is_empty() {
        let mut answer = compose_from_results(&results, zh);
        if reports_state {
            answer.push_str(&state_tag(last_user, &results));
        }
        return DemoReply::Say(answer);
    }
    // Images without a word.
    if images > 0 && last_user.trim().is_empty() {
        let mut answer = "It cannot look at images; with a real model that reads images, the answer would describe \
                          them here."
            .to_owned();
        if reports_state {
            answer.push_str(&state_tag(last_user, &[]));
        }
        return DemoReply::Say(answer);
    }
    // Called as an expert: the demo has no expertise, and says so.
    if let Some(task) = last_user.strip_prefix(EXPERT_TASK) {
        let task = task.split_once('\n').map(|(_, t)| t).unwrap_or(task);
        let query = serde_json::from_str::<Value>(task)
            .ok()
            .and_then(|v| v.get("query").and_then(Value::as_str).map(str::to_owned));
        if let Some(query) = query.filter(|_| request.tools.iter().any(|t| t.name == "search_knowledge")) {
            return DemoReply::CallTools(vec![ModelToolCall {
                id: "demo_call_search_knowledge_0".into(),
                name: "search_knowledge".into(),
                arguments: serde_json::json!({"query": clip(&query, 500)}).to_string(),
            }]);
        }
        return DemoReply::Say(format!(
            "(Offline demo expert: no real analysis without a model.) Task received: {}",
            clip(task, 300)
        ));
    }
    // A coordinator: policy questions go to the policy expert, personal facts to the assessor.
    if request.tools.iter().any(|t| t.name == "invoke_policy_expert")
        && let Some(calls) = intents::expert_calls(&last_user.to_lowercase(), last_user)
    {
        return DemoReply::CallTools(calls);
    }

    if !request.tools.is_empty() {
        let lower = last_user.to_lowercase();
        let offered = |tool: &str| request.tools.iter().any(|t| t.name == tool);
        let matching: Vec<&intents::Intent> =
            INTENTS.iter().filter(|intent| offered(intent.tool) && (intent.applies)(&lower)).collect();
        // The most specific rule wins; details for an assessment may come with the wish to pay.
        let chosen: Vec<&intents::Intent> = match matching.as_slice() {
            [first, rest @ ..] if first.tool == "collect_assessment_info" => {
                std::iter::once(*first).chain(rest.iter().copied().filter(|i| i.tool == "generate_payment")).collect()
            }
            [first, ..] => vec![*first],
            [] => Vec::new(),
        };
        let mut calls: Vec<ModelToolCall> = chosen
            .iter()
            .enumerate()
            .map(|(i, intent)| ModelToolCall {
                id: format!("demo_call_{}_{i}", intent.tool),
                name: intent.tool.to_owned(),
                arguments: fit_to_offer(&request.tools, intent.tool, (intent.arguments)(last_user)).to_string(),
            })
            .collect();
        // A question the rules do not recognise, for an agent with knowledge: the owner's own
        // content (a crawled site, files) may answer it.
        if calls.is_empty() && offered("search_knowledge") && intents::is_question(&lower) {
            calls.push(ModelToolCall {
                id: "demo_call_search_knowledge_0".into(),
                name: "search_knowledge".into(),
                arguments: serde_json::json!({"query": clip(last_user, 300)}).to_string(),
            });
        }
        // A real question the rules do not recognise: is it off-topic?
        if calls.is_empty()
            && offered("check_off_topic")
            && !is_greeting(&lower)
            && last_user.trim().chars().count() >= 4
        {
            calls.push(ModelToolCall {
                id: "demo_call_check_off_topic_0".into(),
                name: "check_off_topic".into(),
                arguments: serde_json::json!({"question": clip(last_user, 500)}).to_string(),
            });
        }
        if !calls.is_empty() {
            return DemoReply::CallTools(calls);
        }
    }
    let mut answer = small_talk(last_user, zh, &request.tools);
    if reports_state {
        answer.push_str(&state_tag(last_user, &[]));
    }
    DemoReply::Say(answer)
}

/// How the engine begins an expert's task (see `engine::experts`).
const EXPERT_TASK: &str = "Task from the coordinator";

/// The state report a coordinator appends (the engine strips it from the visible text).
fn state_tag(last_user: &str, results: &[(String, Value)]) -> String {
    let stage = if results.iter().any(|(n, _)| n == "invoke_assessment_expert") {
        "assessment"
    } else if results.iter().any(|(n, _)| n.starts_with("invoke_")) {
        "needs"
    } else {
        "opening"
    };
    let mut collected = serde_json::Map::new();
    if let Some(c) = intents::category(&last_user.to_lowercase()) {
        collected.insert("target_category".into(), Value::String(c.into()));
    }
    let state = serde_json::json!({"stage": stage, "collected": collected});
    format!("\n\n<consulting_state>{state}</consulting_state>")
}

/// `(tool name, result JSON)` of the tool messages after the last visitor message.
fn tool_results(messages: &[ModelMessage]) -> Vec<(String, Value)> {
    let last_user = messages.iter().rposition(|m| m.user_text().is_some()).unwrap_or(0);
    let mut names = std::collections::HashMap::new();
    let mut out = Vec::new();
    for m in &messages[last_user..] {
        match m {
            ModelMessage::Assistant { tool_calls, .. } => {
                for c in tool_calls {
                    names.insert(c.id.clone(), c.name.clone());
                }
            }
            ModelMessage::Tool { call_id, content } => {
                let name = names.get(call_id).cloned().unwrap_or_default();
                let value = serde_json::from_str(content).unwrap_or(Value::String(content.clone()));
                out.push((name, value));
            }
            _ => {}
        }
    }
    out
}

fn compose_from_results(results: &[(String, Value)], zh: bool) -> String {
    results.iter().map(|(name, result)| compose::from_result(name, result, zh)).collect::<Vec<_>>().join("\n\n")
}

fn is_greeting(lower: &str) -> bool {
    let lower = lower.trim();
    ["hello", "hi", "hey"].iter().any(|g| {
        lower == *g
            || lower.starts_with(&format!("{g} "))
            || lower.starts_with(&format!("{g},"))
            || lower.starts_with(&format!("{g}!"))
    }) || lower.starts_with("你好")
        || lower.starts_with("您好")
        || lower.starts_with('嗨')
}

fn small_talk(text: &str, zh: bool, tools: &[super::ToolSpec]) -> String {
    let greeting = is_greeting(&text.to_lowercase());
    let can = tools.iter().map(|t| format!("`{}`", t.name)).collect::<Vec<_>>().join(", ");
    match (zh, greeting) {
        (true, true) => "您好！我是 Parley 的离线演示模型。您可以问我问题，或者说“转人工”来联系真人客服。".to_owned(),
        (false, true) => {
            "Hello! I'm Parley's offline demo model. Ask me something, or say \"talk to a person\" to reach a human."
                .to_owned()
        }
        (true, false) if can.is_empty() => {
            format!("（离线演示模型）我收到了您的消息：“{}”。接入真实模型后，这里会是完整的回答。", clip(text, 80))
        }
        (true, false) => format!(
            "（离线演示模型）我收到了您的消息：“{}”。我可以使用这些工具：{can}。比如，说“转人工”即可联系真人客服。",
            clip(text, 80)
        ),
        (false, false) if can.is_empty() => format!(
            "(Offline demo model) I got your message: \"{}\". With a real model configured, a full answer would appear here.",
            clip(text, 80)
        ),
        (false, false) => format!(
            "(Offline demo model) I got your message: \"{}\". I can use these tools: {can}. For example, say \"talk to a person\" to reach a human.",
            clip(text, 80)
        ),
    }
}

/// Splits text into stream tokens: a word with its trailing space, or two CJK characters.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut cjk_run = 0;
    for c in text.chars() {
        let cjk = ('\u{3000}'..='\u{9fff}').contains(&c) || ('\u{ff00}'..='\u{ffef}').contains(&c);
        if cjk {
            if !current.is_empty() && cjk_run == 0 {
                out.push(std::mem::take(&mut current));
            }
            current.push(c);
            cjk_run += 1;
            if cjk_run == 2 {
                out.push(std::mem::take(&mut current));
                cjk_run = 0;
            }
        } else {
            if cjk_run > 0 {
                out.push(std::mem::take(&mut current));
                cjk_run = 0;
            }
            current.push(c);
            if c.is_whitespace() {
                out.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn estimate_tokens(request: &ModelRequest) -> u64 {
    let chars: usize = request
        .messages
        .iter()
        .map(|m| match m {
            ModelMessage::System(t) | ModelMessage::User(t) => t.chars().count(),
            // An image costs the model some hundreds of tokens.
            ModelMessage::UserImages { text, images } => text.chars().count() + images.len() * 1_000,
            ModelMessage::Assistant { content, .. } => content.chars().count(),
            ModelMessage::Tool { content, .. } => content.chars().count(),
        })
        .sum();
    (chars / 4).max(1) as u64
}

#[async_trait::async_trait]
impl ChatModel for DemoModel {
    fn provider(&self) -> &'static str {
        "demo"
    }

    async fn stream(&self, request: ModelRequest, _attempts: &AttemptLog) -> Result<ModelStream, ProviderError> {
        let input = estimate_tokens(&request);
        let mut events: Vec<ModelEvent> = Vec::new();
        let reason = match plan(&request) {
            DemoReply::CallTools(calls) => {
                events.extend(calls.into_iter().map(ModelEvent::ToolCall));
                FinishReason::ToolCalls
            }
            DemoReply::Say(text) => {
                events.extend(tokens(&text).into_iter().map(ModelEvent::Text));
                FinishReason::Stop
            }
        };
        let output = events.len() as u64;
        events.push(ModelEvent::Usage(TokenUsage { input, output, cached: 0, cache_written: 0 }));
        events.push(ModelEvent::Finished(reason));
        let delay = self.token_delay;
        let stream = futures::stream::unfold((events.into_iter(), true), move |(mut it, first)| async move {
            let next = it.next()?;
            if !first && matches!(next, ModelEvent::Text(_)) && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Some((Ok(next), (it, false)))
        });
        Ok(Box::pin(stream))
    }
}

/// `args` without the choices the offered tool does not list (the demo's immigration categories
/// for another agent's knowledge, whose categories are its own).
fn fit_to_offer(tools: &[ToolSpec], name: &str, mut args: Value) -> Value {
    let Some(spec) = tools.iter().find(|t| t.name == name) else { return args };
    let Some(properties) = spec.parameters.get("properties").and_then(Value::as_object) else { return args };
    if let Some(object) = args.as_object_mut() {
        object.retain(|key, value| match properties.get(key).and_then(|p| p.get("enum")).and_then(Value::as_array) {
            Some(choices) => choices.contains(value),
            None => true,
        });
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(messages: Vec<ModelMessage>, tools: &[&str]) -> ModelRequest {
        ModelRequest {
            model: "demo".into(),
            messages,
            tools: tools
                .iter()
                .map(|n| ToolSpec { name: (*n).into(), description: String::new(), parameters: json!({}) })
                .collect(),
            max_tokens: None,
        }
    }

    #[test]
    fn a_demo_coordinator_calls_experts_and_reports_its_state() {
        let system = ModelMessage::System("Coordinator. <consulting_state>".into());
        let user = ModelMessage::User("我32岁，硕士，想了解优才的申请条件".into());
        let tools = ["invoke_policy_expert", "invoke_assessment_expert", "escalate_to_human"];
        let DemoReply::CallTools(calls) = plan(&request(vec![system.clone(), user.clone()], &tools)) else {
            panic!("expected expert calls")
        };
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["invoke_policy_expert", "invoke_assessment_expert"]);
        assert!(calls[0].arguments.contains("QMAS"));

        let answered = vec![
            system,
            user,
            ModelMessage::Assistant { content: String::new(), tool_calls: calls.clone() },
            ModelMessage::Tool {
                call_id: calls[0].id.clone(),
                content: json!({"ok": true, "expert": "policy_expert", "answer": "QMAS needs a degree."}).to_string(),
            },
        ];
        let DemoReply::Say(text) = plan(&request(answered, &tools)) else { panic!("expected an answer") };
        assert!(text.contains("QMAS needs a degree."), "{text}");
        assert!(text.ends_with("</consulting_state>") && text.contains("\"stage\":\"needs\""), "{text}");

        // As an expert: searches the knowledge base when it may, else says what it is.
        let task = ModelMessage::User("Task from the coordinator (JSON):\n{\"query\":\"优才条件\"}".into());
        let DemoReply::CallTools(search) = plan(&request(vec![task.clone()], &["search_knowledge"])) else {
            panic!("expected a search")
        };
        assert_eq!(search[0].name, "search_knowledge");
        let DemoReply::Say(echo) = plan(&request(vec![task], &[])) else { panic!("expected text") };
        assert!(echo.starts_with("(Offline demo expert"), "{echo}");
    }

    #[test]
    fn asks_for_a_human_in_english_and_chinese() {
        for text in ["Can I talk to a real person?", "我要转人工"] {
            let reply = plan(&request(vec![ModelMessage::User(text.into())], &["escalate_to_human"]));
            match reply {
                DemoReply::CallTools(calls) => assert_eq!(calls[0].name, "escalate_to_human"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_consulting_tour_picks_the_right_tools() {
        let all = [
            "escalate_to_human",
            "search_knowledge",
            "check_off_topic",
            "collect_assessment_info",
            "generate_payment",
            "save_user_memory",
            "get_user_context",
            "get_current_datetime",
            "web_search",
            "get_exchange_rate",
            "fetch_immigration_news",
        ];
        let call = |text: &str| match plan(&request(vec![ModelMessage::User(text.into())], &all)) {
            DemoReply::CallTools(calls) => calls.into_iter().map(|c| (c.name, c.arguments)).collect::<Vec<_>>(),
            other => panic!("{text}: {other:?}"),
        };
        let (name, args) = &call("优才计划的条件是什么?")[0];
        assert_eq!(name, "search_knowledge");
        assert!(args.contains("\"category\":\"QMAS\""));
        let (name, args) = &call("港币兑人民币汇率")[0];
        assert_eq!((name.as_str(), args.as_str()), ("get_exchange_rate", "{\"from\":\"HKD\",\"to\":\"CNY\"}"));
        let (name, args) = &call("我想付费评估 QMAS, 用支付宝")[0];
        assert_eq!(name, "generate_payment");
        assert!(args.contains("ALIPAY") && args.contains("QMAS"));
        assert_eq!(call("最近的移民新闻")[0].0, "fetch_immigration_news");
        assert_eq!(call("现在香港几点")[0].0, "get_current_datetime");
        assert_eq!(call("推荐一部好看的电影吧")[0].0, "check_off_topic");
        let both: Vec<String> =
            call("我35岁，硕士，工作10年，想付费评估高才通，用微信").into_iter().map(|c| c.0).collect();
        assert_eq!(both, vec!["collect_assessment_info", "generate_payment"]);
    }

    #[test]
    fn never_calls_a_tool_it_was_not_offered() {
        let reply = plan(&request(vec![ModelMessage::User("talk to a person".into())], &[]));
        assert!(matches!(reply, DemoReply::Say(_)));
    }

    #[test]
    fn answers_from_tool_results() {
        let messages = vec![
            ModelMessage::User("我要转人工".into()),
            ModelMessage::Assistant {
                content: String::new(),
                tool_calls: vec![ModelToolCall {
                    id: "c1".into(),
                    name: "escalate_to_human".into(),
                    arguments: "{}".into(),
                }],
            },
            ModelMessage::Tool { call_id: "c1".into(), content: "{\"ok\":true}".into() },
        ];
        match plan(&request(messages, &["escalate_to_human"])) {
            DemoReply::Say(text) => assert!(text.contains("联系人工")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn says_how_many_images_it_received() {
        let image = super::super::ModelImage::new("image/png", b"x");
        let with =
            |text: &str, n: usize| vec![ModelMessage::UserImages { text: text.into(), images: vec![image.clone(); n] }];
        match plan(&request(with("hello", 1), &[])) {
            DemoReply::Say(text) => {
                assert!(text.starts_with("(Offline demo model) I received 1 image.\n\nHello!"), "{text}")
            }
            other => panic!("{other:?}"),
        }
        match plan(&request(with("", 2), &["escalate_to_human"])) {
            DemoReply::Say(text) => assert!(text.contains("I received 2 images.") && text.contains("cannot look")),
            other => panic!("{other:?}"),
        }
        match plan(&request(with("你好", 2), &[])) {
            DemoReply::Say(text) => assert!(text.starts_with("（离线演示模型）我收到了 2 张图片。"), "{text}"),
            other => panic!("{other:?}"),
        }
        // Earlier turns' images are only text: nothing to count.
        match plan(&request(vec![ModelMessage::User("[image] hello".into())], &[])) {
            DemoReply::Say(text) => assert!(!text.contains("received"), "{text}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tokens_keep_all_text() {
        for text in ["Hello there, friend!", "你好，世界。Parley 很好", ""] {
            assert_eq!(tokens(text).concat(), text);
        }
        assert_eq!(tokens("ab cd"), vec!["ab ", "cd"]);
        assert_eq!(tokens("你好世界"), vec!["你好", "世界"]);
    }
}
