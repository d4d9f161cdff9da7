//! `offer_quick_replies` (capability `quick_replies`): up to six short answers shown as buttons
//! under the model's answer; the visitor taps one instead of typing, and it comes back as their
//! next message (block `quick_replies`).

use parley_protocol::{Block, MAX_QUICK_REPLIES, MAX_QUICK_REPLY_CHARS, QuickReplies};
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput};

pub struct OfferQuickReplies;

#[async_trait::async_trait]
impl Tool for OfferQuickReplies {
    fn name(&self) -> &'static str {
        "offer_quick_replies"
    }

    fn description(&self) -> &'static str {
        "Show the visitor up to 6 short answers as buttons under your reply, when the next answer \
         is one of a few choices (yes/no, a topic, an option). A tap is sent as the visitor's next \
         message. Still ask the question in your own reply."
    }

    fn capability(&self) -> &'static str {
        "quick_replies"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::READ
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "replies": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_QUICK_REPLIES,
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_QUICK_REPLY_CHARS},
                    "description": "The answers, each a few words, in the visitor's language."
                }
            },
            "required": ["replies"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, _ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let replies = replies(&args)?;
        let result = json!({
            "ok": true,
            "shown": replies,
            "message": "The buttons are shown under your reply; the visitor's tap comes back as their next message."
        });
        let block = Block::QuickReplies(QuickReplies { fallback_text: replies.join(" · "), replies });
        Ok(ToolOutput { result, blocks: vec![block] })
    }
}

/// The replies, checked: 1 to 6 distinct non-empty strings of at most 40 characters.
pub(super) fn replies(args: &Value) -> Result<Vec<String>, ToolError> {
    let bad = |why: &str| ToolError::InvalidArguments(why.to_owned());
    let list =
        args.get("replies").and_then(Value::as_array).ok_or_else(|| bad("`replies` must be a list of strings"))?;
    let mut replies: Vec<String> = Vec::new();
    for item in list {
        let text = item.as_str().ok_or_else(|| bad("every reply must be a string"))?.trim();
        if text.is_empty() {
            return Err(bad("a reply is empty"));
        }
        if text.chars().count() > MAX_QUICK_REPLY_CHARS {
            return Err(bad(&format!("a reply has more than {MAX_QUICK_REPLY_CHARS} characters: {text}")));
        }
        if !replies.iter().any(|r| r == text) {
            replies.push(text.to_owned());
        }
    }
    match replies.len() {
        0 => Err(bad("give at least one reply")),
        n if n > MAX_QUICK_REPLIES => Err(bad(&format!("at most {MAX_QUICK_REPLIES} replies"))),
        _ => Ok(replies),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn replies_become_a_block_and_the_model_is_told_they_are_shown() {
        let t = super::super::testing::context().await;
        let out = OfferQuickReplies
            .execute(&t.ctx, json!({"replies": [" Yes ", "No", "Yes", "Not sure"]}))
            .await
            .expect("shown");
        assert_eq!(out.result["shown"], json!(["Yes", "No", "Not sure"]));
        assert_eq!(out.result["ok"], true);
        let [Block::QuickReplies(b)] = out.blocks.as_slice() else { panic!("{:?}", out.blocks) };
        assert_eq!(b.replies, ["Yes", "No", "Not sure"]);
        assert_eq!(b.fallback_text, "Yes · No · Not sure");
    }

    #[test]
    fn wrong_replies_are_refused_with_the_reason() {
        for (args, why) in [
            (json!({}), "list"),
            (json!({"replies": []}), "at least one"),
            (json!({"replies": ["ok", 3]}), "string"),
            (json!({"replies": ["  "]}), "empty"),
            (json!({"replies": ["x".repeat(41)]}), "more than 40"),
            (json!({"replies": ["a", "b", "c", "d", "e", "f", "g"]}), "at most 6"),
        ] {
            match replies(&args) {
                Err(ToolError::InvalidArguments(m)) => assert!(m.contains(why), "{args}: {m}"),
                other => panic!("{args}: {other:?}"),
            }
        }
    }
}
