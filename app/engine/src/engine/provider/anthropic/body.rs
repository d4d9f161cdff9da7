//! The Messages request body.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::super::{ModelMessage, ModelRequest};

/// `max_tokens` is required by the Messages API; this is used when the agent sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A tool call's arguments as the `input` object Anthropic wants (`{}` when unreadable).
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

/// The Messages request body.
///
/// Anthropic wants strictly alternating `user` / `assistant` turns, so neighbours of the same role
/// are merged into one message of several content blocks; the results of one hop's tool calls
/// become one `user` message of `tool_result` blocks. A request without tools may not carry
/// `tool_use` / `tool_result` blocks (the API rejects it), so then earlier tool calls and results
/// are given as plain text.
pub fn request_body(request: &ModelRequest) -> Value {
    let tools_offered = !request.tools.is_empty();
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::System(s) if !s.trim().is_empty() => Some(s.as_str()),
            _ => None,
        })
        .collect();
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in &request.messages {
        let (role, blocks) = match m {
            ModelMessage::System(_) => continue,
            ModelMessage::User(text) => ("user", text_block(text).into_iter().collect::<Vec<_>>()),
            // Images first, then the text about them.
            ModelMessage::UserImages { text, images } => {
                let mut blocks: Vec<Value> = images
                    .iter()
                    .map(|i| {
                        json!({"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": &*i.base64}})
                    })
                    .collect();
                blocks.extend(text_block(text));
                ("user", blocks)
            }
            ModelMessage::Assistant { content, tool_calls } => {
                let mut blocks: Vec<Value> = text_block(content).into_iter().collect();
                for call in tool_calls {
                    names.insert(&call.id, &call.name);
                    if tools_offered {
                        blocks.push(json!({
                            "type": "tool_use",
                            "id": call.id,
                            "name": call.name,
                            "input": tool_input(&call.arguments),
                        }));
                    } else {
                        let args = tool_input(&call.arguments);
                        blocks.extend(text_block(&format!("[called the tool {} with {args}]", call.name)));
                    }
                }
                ("assistant", blocks)
            }
            ModelMessage::Tool { call_id, content } => {
                let block = if tools_offered {
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content})
                } else {
                    let name = names.get(call_id.as_str()).copied().unwrap_or("tool");
                    json!({"type": "text", "text": format!("[result of the tool {name}: {content}]")})
                };
                ("user", vec![block])
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "stream": true,
        "messages": messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect::<Vec<_>>(),
    });
    // The agent's instructions (the first system text: the same for every visitor) are one
    // cached block, so the cache is shared across conversations; what is this visitor's own
    // (known facts, the summary of earlier turns) follows it, outside the cache.
    if let Some((instructions, visitor)) = system.split_first() {
        let mut blocks = vec![json!({"type": "text", "text": instructions, "cache_control": {"type": "ephemeral"}})];
        if !visitor.is_empty() {
            blocks.push(json!({"type": "text", "text": visitor.join("\n\n")}));
        }
        body["system"] = Value::Array(blocks);
    }
    if tools_offered {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

/// A text block; none for empty text (the API rejects empty text blocks).
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

#[cfg(test)]
mod tests {
    use super::super::super::{ModelToolCall, ToolSpec};
    use super::*;

    fn call(id: &str, name: &str, arguments: &str) -> ModelToolCall {
        ModelToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    fn tool_request(messages: Vec<ModelMessage>) -> ModelRequest {
        ModelRequest {
            model: "claude-sonnet-4-20250514".into(),
            messages,
            tools: vec![ToolSpec {
                name: "escalate_to_human".into(),
                description: "Offer a person.".into(),
                parameters: json!({"type": "object", "properties": {"reason": {"type": "string"}}}),
            }],
            max_tokens: None,
        }
    }

    #[test]
    fn body_has_a_cached_system_prompt_and_defaults() {
        let mut req = tool_request(vec![
            ModelMessage::System("You are Parley.".into()),
            ModelMessage::System("Context: shop hours 9-5.".into()),
            ModelMessage::User("hi".into()),
        ]);
        req.tools.clear();
        let body = request_body(&req);
        assert_eq!(body["model"], "claude-sonnet-4-20250514");
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(body["stream"], true);
        assert_eq!(
            body["system"],
            json!([
                {"type": "text", "text": "You are Parley.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "Context: shop hours 9-5."}
            ]),
            "the instructions are cached for everyone; the visitor's context follows, uncached"
        );
        assert_eq!(body["messages"], json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]));
        assert!(body.get("tools").is_none(), "no tools offered: {body}");

        req.max_tokens = Some(300);
        req.messages.retain(|m| !matches!(m, ModelMessage::System(_)));
        let body = request_body(&req);
        assert_eq!(body["max_tokens"], 300);
        assert!(body.get("system").is_none(), "no empty system block: {body}");
    }

    #[test]
    fn body_groups_tool_results_and_alternates_roles() {
        let req = tool_request(vec![
            ModelMessage::System("sys".into()),
            ModelMessage::Assistant { content: "Hi! How can I help?".into(), tool_calls: vec![] },
            ModelMessage::User("first".into()),
            ModelMessage::User("second".into()),
            ModelMessage::Assistant {
                content: "Checking.".into(),
                tool_calls: vec![
                    call("toolu_a", "escalate_to_human", "{\"reason\":\"x\"}"),
                    call("toolu_b", "escalate_to_human", "not json"),
                    call("toolu_c", "escalate_to_human", ""),
                ],
            },
            ModelMessage::Tool { call_id: "toolu_a".into(), content: "{\"ok\":true}".into() },
            ModelMessage::Tool { call_id: "toolu_b".into(), content: "{\"ok\":false}".into() },
            ModelMessage::Tool { call_id: "toolu_c".into(), content: "done".into() },
            ModelMessage::Assistant { content: String::new(), tool_calls: vec![] },
        ]);
        let body = request_body(&req);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "assistant", "content": [{"type": "text", "text": "Hi! How can I help?"}]},
                {"role": "user", "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_a", "name": "escalate_to_human", "input": {"reason": "x"}},
                    {"type": "tool_use", "id": "toolu_b", "name": "escalate_to_human", "input": {}},
                    {"type": "tool_use", "id": "toolu_c", "name": "escalate_to_human", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "{\"ok\":true}"},
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "{\"ok\":false}"},
                    {"type": "tool_result", "tool_use_id": "toolu_c", "content": "done"},
                ]},
            ])
        );
        assert_eq!(
            body["tools"],
            json!([{"name": "escalate_to_human", "description": "Offer a person.",
                "input_schema": {"type": "object", "properties": {"reason": {"type": "string"}}}}])
        );
        // Roles alternate.
        let roles: Vec<&str> =
            body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert!(roles.windows(2).all(|w| w[0] != w[1]), "{roles:?}");
    }

    #[test]
    fn body_without_tools_gives_earlier_tool_calls_as_text() {
        let mut req = tool_request(vec![
            ModelMessage::User("help".into()),
            ModelMessage::Assistant {
                content: String::new(),
                tool_calls: vec![call("toolu_a", "escalate_to_human", "{\"reason\":\"x\"}")],
            },
            ModelMessage::Tool { call_id: "toolu_a".into(), content: "{\"ok\":true}".into() },
        ]);
        req.tools.clear();
        let body = request_body(&req);
        let text = body.to_string();
        assert!(!text.contains("tool_use") && !text.contains("tool_result"), "{body}");
        assert_eq!(
            body["messages"][1],
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "[called the tool escalate_to_human with {\"reason\":\"x\"}]"}]})
        );
        assert_eq!(body["messages"][2]["content"][0]["text"], "[result of the tool escalate_to_human: {\"ok\":true}]");
    }

    #[test]
    fn images_are_base64_blocks_before_the_text() {
        let image = crate::engine::provider::ModelImage::new("image/jpeg", &[0xFF, 0xD8, 0xFF]);
        let mut req = tool_request(vec![
            ModelMessage::User("[image]".into()),
            ModelMessage::Assistant { content: "A cat.".into(), tool_calls: vec![] },
            ModelMessage::UserImages { text: "and this?".into(), images: vec![image.clone(), image] },
        ]);
        req.tools.clear();
        let body = request_body(&req);
        let block = json!({"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}});
        assert_eq!(
            body["messages"][2],
            json!({"role": "user", "content": [block.clone(), block, {"type": "text", "text": "and this?"}]})
        );
        assert_eq!(body["messages"][0]["content"], json!([{"type": "text", "text": "[image]"}]));
        // An image alone: no empty text block.
        req.messages = vec![ModelMessage::UserImages {
            text: String::new(),
            images: vec![crate::engine::provider::ModelImage::new("image/png", b"x")],
        }];
        let body = request_body(&req);
        assert_eq!(body["messages"][0]["content"].as_array().unwrap().len(), 1);
        assert_eq!(body["messages"][0]["content"][0]["type"], "image");
    }
}
