//! The offline demo model (provider `demo`): deterministic, no network, no key. It reads the
//! visitor's words (simple English and Chinese), picks tools the agent offers, and writes its
//! answer from the tools' results, streamed token by token. It exists so a newcomer can see every
//! tool and block work without an API key; the panel labels it plainly as the demo model.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    AttemptLog, ChatModel, FinishReason, ModelEvent, ModelMessage, ModelRequest, ModelStream, ModelToolCall,
    ProviderError, TokenUsage,
};

/// The demo model.
#[derive(Clone, Debug)]
pub struct DemoModel {
    /// Pause between streamed tokens, so the answer visibly streams.
    pub token_delay: Duration,
}

/// One intent the demo model recognises: a tool and the words that call for it.
struct Intent {
    tool: &'static str,
    words: &'static [&'static str],
    arguments: fn(&str) -> Value,
}

const INTENTS: &[Intent] = &[Intent {
    tool: "escalate_to_human",
    words: &[
        "human",
        "person",
        "operator",
        "representative",
        "real agent",
        "live agent",
        "talk to someone",
        "speak to someone",
        "support team",
        "人工",
        "真人",
        "客服",
        "转接",
        "联系人",
    ],
    arguments: |text| json!({"reason": clip(text, 200)}),
}];

fn clip(text: &str, max: usize) -> String {
    text.trim().chars().take(max).collect()
}

/// Whether the text is mostly Chinese (any CJK ideograph counts).
pub fn is_chinese(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

/// What the demo model decided to do.
#[derive(Debug, PartialEq)]
pub enum DemoReply {
    CallTools(Vec<ModelToolCall>),
    Say(String),
}

/// Decides the reply to a request. Pure, so it is easy to test.
pub fn plan(request: &ModelRequest) -> DemoReply {
    let last_user = request
        .messages
        .iter()
        .rev()
        .find_map(|m| if let ModelMessage::User(t) = m { Some(t.as_str()) } else { None })
        .unwrap_or("");
    let zh = is_chinese(last_user);

    // Results of the tools called after the visitor's last message.
    let results = tool_results(&request.messages);
    if !results.is_empty() {
        return DemoReply::Say(compose_from_results(&results, zh));
    }

    if !request.tools.is_empty() {
        let lower = last_user.to_lowercase();
        let calls: Vec<ModelToolCall> = INTENTS
            .iter()
            .filter(|intent| request.tools.iter().any(|t| t.name == intent.tool))
            .filter(|intent| intent.words.iter().any(|w| lower.contains(w)))
            .enumerate()
            .map(|(i, intent)| ModelToolCall {
                id: format!("demo_call_{}_{i}", intent.tool),
                name: intent.tool.to_owned(),
                arguments: (intent.arguments)(last_user).to_string(),
            })
            .collect();
        if !calls.is_empty() {
            return DemoReply::CallTools(calls);
        }
    }
    DemoReply::Say(small_talk(last_user, zh, &request.tools))
}

/// `(tool name, result JSON)` of the tool messages after the last visitor message.
fn tool_results(messages: &[ModelMessage]) -> Vec<(String, Value)> {
    let last_user = messages.iter().rposition(|m| matches!(m, ModelMessage::User(_))).unwrap_or(0);
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
    let mut parts = Vec::new();
    for (name, result) in results {
        if let Some(error) = result.get("error").and_then(Value::as_str) {
            parts.push(if zh {
                format!("抱歉，`{name}` 这一步没有成功（{error}）。")
            } else {
                format!("Sorry, the `{name}` step did not work ({error}).")
            });
            continue;
        }
        let text = match name.as_str() {
            "escalate_to_human" => {
                if zh {
                    "我已经通知了我们的团队。请点击下方的 **联系人工** 按钮留下您的联系方式，工作人员会尽快与您联系。"
                        .to_owned()
                } else {
                    "I've let our team know. Press **Talk to a person** below and leave your contact details — someone will get back to you shortly.".to_owned()
                }
            }
            _ => match result.get("message").and_then(Value::as_str) {
                Some(message) => message.to_owned(),
                None => {
                    if zh {
                        format!("`{name}` 已完成。")
                    } else {
                        format!("`{name}` is done.")
                    }
                }
            },
        };
        parts.push(text);
    }
    parts.join("\n\n")
}

fn small_talk(text: &str, zh: bool, tools: &[super::ToolSpec]) -> String {
    let lower = text.to_lowercase();
    let greeting = ["hello", "hi", "hey", "你好", "您好", "嗨"].iter().any(|g| {
        lower.trim() == *g
            || lower.starts_with(&format!("{g} "))
            || lower.starts_with(&format!("{g},"))
            || lower.starts_with(&format!("{g}!"))
    }) || (zh && (lower.starts_with("你好") || lower.starts_with("您好")));
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
        events.push(ModelEvent::Usage(TokenUsage { input, output, cached: 0 }));
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

#[cfg(test)]
mod tests {
    use super::super::ToolSpec;
    use super::*;

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
    fn tokens_keep_all_text() {
        for text in ["Hello there, friend!", "你好，世界。Parley 很好", ""] {
            assert_eq!(tokens(text).concat(), text);
        }
        assert_eq!(tokens("ab cd"), vec!["ab ", "cd"]);
        assert_eq!(tokens("你好世界"), vec!["你好", "世界"]);
    }
}
