//! Blocks an owner's HTTP tool may return (issue 44, part 3): a JSON answer with a list
//! `parley_blocks` shows them under the answer, like Parley's own tools' blocks. Only display
//! blocks are taken (`quick_replies`, `news_card`, `choice_card`, `form`; payments, escalation and sources stay the
//! server's), each checked like the built-in tool that makes it and only when the agent has the
//! capability that renders it (`quick_replies`, `news`, `cards`, `forms`). All or nothing: one wrong block and none is shown; the model reads why.

use parley_protocol::{Block, CardButton, ChoiceCard, NewsCard, QuickReplies};
use serde_json::{Value, json};

/// At most this many blocks from one call.
pub const MAX_OWNER_BLOCKS: usize = 3;
/// The blocks an owner's tool may show.
pub const OWNER_BLOCK_KINDS: [&str; 4] = ["quick_replies", "news_card", "choice_card", "form"];

/// Takes `parley_blocks` out of a tool's JSON answer: the blocks to show, and the answer the model
/// reads (with `shown_to_visitor`, or `blocks_refused` and the reason).
pub fn take(result: &mut Value, capabilities: &[String]) -> Vec<Block> {
    let Some(list) = result.as_object_mut().and_then(|m| m.remove("parley_blocks")) else { return Vec::new() };
    match check(&list, capabilities) {
        Ok(blocks) => {
            result["shown_to_visitor"] = json!(blocks.iter().map(Block::kind).collect::<Vec<_>>());
            // A form's answers come back later under its id.
            let forms: Vec<&str> = blocks
                .iter()
                .filter_map(|b| if let Block::Form(f) = b { Some(f.form_id.as_str()) } else { None })
                .collect();
            if !forms.is_empty() {
                result["form_ids"] = json!(forms);
            }
            blocks
        }
        Err(why) => {
            result["blocks_refused"] = json!(format!("nothing was shown to the visitor: {why}"));
            Vec::new()
        }
    }
}

fn check(list: &Value, capabilities: &[String]) -> Result<Vec<Block>, String> {
    let items = list.as_array().ok_or("`parley_blocks` must be a list")?;
    if items.len() > MAX_OWNER_BLOCKS {
        return Err(format!("at most {MAX_OWNER_BLOCKS} blocks"));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
            if !OWNER_BLOCK_KINDS.contains(&kind) {
                return Err(format!(
                    "block {i}: `{kind}` is not a block a tool may show ({})",
                    OWNER_BLOCK_KINDS.join(", ")
                ));
            }
            let block = block(kind, item).map_err(|why| format!("block {i} ({kind}): {why}"))?;
            let needs = block.capability().unwrap_or_default();
            if !capabilities.iter().any(|c| c == needs) {
                return Err(format!("block {i}: the agent does not show `{kind}` blocks (capability `{needs}`)"));
            }
            Ok(block)
        })
        .collect()
}

fn text(item: &Value, field: &str, max: usize, required: bool) -> Result<String, String> {
    let value = match item.get(field) {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s.trim(),
        Some(_) => return Err(format!("`{field}` must be text")),
    };
    if required && value.is_empty() {
        return Err(format!("`{field}` is missing"));
    }
    if value.chars().count() > max {
        return Err(format!("`{field}` is longer than {max} characters"));
    }
    Ok(value.to_owned())
}

fn block(kind: &str, item: &Value) -> Result<Block, String> {
    let fallback = text(item, "fallback_text", 500, false)?;
    match kind {
        "quick_replies" => {
            let replies = super::offer_quick_replies::replies(&json!({ "replies": item.get("replies") }))
                .map_err(|e| e.to_string())?;
            let fallback_text = if fallback.is_empty() { replies.join(" · ") } else { fallback };
            Ok(Block::QuickReplies(QuickReplies { replies, fallback_text }))
        }
        "choice_card" => card(item, fallback),
        "form" => super::ask_form::form(item, crate::store::new_id()).map(Block::Form).map_err(|e| e.to_string()),
        _ => {
            let title = text(item, "title", 200, true)?;
            let summary = text(item, "summary", 1000, false)?;
            let url = Some(text(item, "url", 2000, false)?).filter(|u| !u.is_empty());
            if url.as_deref().is_some_and(|u| !u.starts_with("https://")) {
                return Err("`url` must be an https:// address".into());
            }
            let fallback_text = if fallback.is_empty() { format!("{title} — {summary}") } else { fallback };
            Ok(Block::NewsCard(NewsCard {
                date: text(item, "date", 40, false)?,
                source: text(item, "source", 100, false)?,
                title,
                summary,
                url,
                fallback_text,
            }))
        }
    }
}

/// A `choice_card`: a title, an optional text and https image, 1 to 3 buttons each with either an
/// https `url` or a `message`.
fn card(item: &Value, fallback: String) -> Result<Block, String> {
    let title = text(item, "title", 80, true)?;
    let body = text(item, "text", 500, false)?;
    let image_url = Some(text(item, "image_url", 2000, false)?).filter(|u| !u.is_empty());
    if image_url.as_deref().is_some_and(|u| !u.starts_with("https://")) {
        return Err("`image_url` must be an https:// address".into());
    }
    let image_alt = Some(text(item, "image_alt", 200, false)?).filter(|a| !a.is_empty());
    let list = item.get("buttons").and_then(Value::as_array).ok_or("`buttons` must be a list")?;
    if list.is_empty() || list.len() > 3 {
        return Err("a card has 1 to 3 buttons".into());
    }
    let buttons = list
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let label = text(b, "label", 40, true).map_err(|e| format!("button {i}: {e}"))?;
            let url = Some(text(b, "url", 2000, false)?).filter(|u| !u.is_empty());
            let message = Some(text(b, "message", 200, false)?).filter(|m| !m.is_empty());
            match (&url, &message) {
                (Some(u), None) if !u.starts_with("https://") => {
                    Err(format!("button {i}: `url` must be an https:// address"))
                }
                (Some(_), None) | (None, Some(_)) => Ok(CardButton { label, url, message }),
                _ => Err(format!("button {i}: give either `url` or `message`")),
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    let fallback_text = if fallback.is_empty() {
        let links: Vec<String> =
            buttons.iter().filter_map(|b| b.url.as_ref().map(|u| format!("{}: {u}", b.label))).collect();
        [title.as_str(), body.as_str(), &links.join(" · ")]
            .iter()
            .filter(|t| !t.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" — ")
    } else {
        fallback
    };
    Ok(Block::ChoiceCard(ChoiceCard { image_url, image_alt, title, text: body, buttons, fallback_text }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps() -> Vec<String> {
        vec!["quick_replies".into(), "news".into(), "cards".into(), "forms".into()]
    }

    #[test]
    fn good_blocks_are_taken_out_and_named_to_the_model() {
        let mut result = json!({"slots": 2, "parley_blocks": [
            {"type": "quick_replies", "replies": ["Tuesday 10:00", " Wednesday 14:00 "]},
            {"type": "news_card", "title": "New opening hours", "summary": "From May on", "url": "https://shop.example/news"}
        ]});
        let blocks = take(&mut result, &caps());
        assert_eq!(blocks.len(), 2);
        assert_eq!(
            blocks[0],
            Block::QuickReplies(QuickReplies {
                replies: vec!["Tuesday 10:00".into(), "Wednesday 14:00".into()],
                fallback_text: "Tuesday 10:00 · Wednesday 14:00".into()
            })
        );
        assert_eq!(result, json!({"slots": 2, "shown_to_visitor": ["quick_replies", "news_card"]}));
        let mut plain = json!({"slots": 2});
        assert!(take(&mut plain, &caps()).is_empty());
        assert_eq!(plain, json!({"slots": 2}));
    }

    #[test]
    fn one_wrong_block_and_none_is_shown() {
        for (blocks, why) in [
            (json!([{"type": "payment_qr", "order_id": "x"}]), "not a block a tool may show"),
            (json!([{"type": "quick_replies", "replies": []}]), "block 0 (quick_replies)"),
            (
                json!([{"type": "quick_replies", "replies": ["ok"]}, {"type": "news_card", "title": "x", "url": "http://a"}]),
                "https",
            ),
            (json!({"type": "quick_replies"}), "must be a list"),
            (json!([{"type": "news_card"}]), "`title` is missing"),
            (json!([{"type": "choice_card", "title": "x", "buttons": []}]), "1 to 3 buttons"),
            (json!([{"type": "choice_card", "title": "x", "buttons": [{"label": "a"}]}]), "either `url` or `message`"),
            (
                json!([{"type": "choice_card", "title": "x", "buttons": [{"label": "a", "url": "https://a", "message": "m"}]}]),
                "either `url` or `message`",
            ),
            (json!([{"type": "choice_card", "title": "x", "buttons": [{"label": "a", "url": "ftp://a"}]}]), "https"),
            (json!([{"type": "form", "fields": [{"name": "a", "label": "A", "type": "select"}]}]), "block 0 (form)"),
        ] {
            let mut result = json!({"parley_blocks": blocks});
            assert!(take(&mut result, &caps()).is_empty());
            let said = result["blocks_refused"].as_str().unwrap();
            assert!(said.contains(why), "{said}");
        }
        let mut result = json!({"parley_blocks": [{"type": "news_card", "title": "x"}]});
        assert!(take(&mut result, &["quick_replies".to_owned()]).is_empty());
        assert!(result["blocks_refused"].as_str().unwrap().contains("does not show `news_card`"));
    }
}
