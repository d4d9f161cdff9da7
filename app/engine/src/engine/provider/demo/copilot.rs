//! The demo model as the operator's copilot (`engine::copilot`): no model, so it extracts instead
//! of writing — the visitor's first and last words for a summary, the best passage for a draft,
//! tidied spaces and capitals, the first sentence. The console says so beside each result
//! (`copilot::demo_note`); the texts themselves stay clean, since an operator may send them.

use serde_json::Value;

/// The demo's answer to a copilot task (`rest`: the task's name, a newline, its JSON data).
pub(super) fn answer(rest: &str) -> String {
    let (task, data) = rest.split_once('\n').unwrap_or((rest, "{}"));
    let data: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    let draft = data["draft"].as_str().unwrap_or_default();
    match task.trim() {
        "summary" => summary(&data),
        "suggest" => suggestion(&data),
        "improve" => tidy(draft),
        "shorten" => first_sentence(&tidy(draft)),
        // It cannot translate: the draft comes back as it was (the console says why).
        _ => draft.to_owned(),
    }
}

fn summary(data: &Value) -> String {
    let turns = data["transcript"].as_array().cloned().unwrap_or_default();
    let said =
        |role: &str| turns.iter().filter(|t| t["role"] == role).filter_map(|t| t["text"].as_str()).collect::<Vec<_>>();
    let visitor = said("visitor");
    let mut lines = Vec::new();
    if let Some(first) = visitor.first() {
        lines.push(format!("- The visitor first wrote: \"{}\"", clip(first, 200)));
    }
    if visitor.len() > 1
        && let Some(last) = visitor.last()
    {
        lines.push(format!("- Their last message: \"{}\"", clip(last, 200)));
    }
    lines.push(format!(
        "- {} message(s) from the visitor, {} answer(s) from the assistant, {} from a person.",
        visitor.len(),
        said("assistant").len(),
        said("operator").len()
    ));
    if let Some(name) = data["lead"]["name"].as_str() {
        let message = data["lead"]["message"].as_str().unwrap_or_default();
        lines.push(format!("- Left their contact details as {name}: \"{}\"", clip(message, 200)));
    }
    lines.join("\n")
}

fn suggestion(data: &Value) -> String {
    match data["sources"].as_array().and_then(|s| s.first()) {
        Some(source) => {
            let text = source["text"].as_str().unwrap_or_default();
            let sentences: Vec<&str> = sentences(text).into_iter().take(2).collect();
            format!("{} [1]", sentences.join(" ").trim())
        }
        None => "I could not find this in our knowledge base; let me check and come back to you.".to_owned(),
    }
}

/// Spaces collapsed, each sentence begun with a capital, a final full stop.
fn tidy(draft: &str) -> String {
    let words = draft.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(words.len() + 1);
    let mut capital = true;
    for c in words.chars() {
        if capital && c.is_alphabetic() {
            out.extend(c.to_uppercase());
            capital = false;
        } else {
            out.push(c);
        }
        if matches!(c, '.' | '!' | '?') {
            capital = true;
        }
    }
    if out.chars().last().is_some_and(|c| c.is_alphanumeric()) {
        out.push('.');
    }
    out
}

/// Sentences ending in `.`, `!`, `?` or their CJK forms (the last may have no end mark).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？') {
            let end = i + c.len_utf8();
            let piece = text[start..end].trim();
            if !piece.is_empty() {
                out.push(piece);
            }
            start = end;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

fn first_sentence(text: &str) -> String {
    sentences(text).first().map(|s| (*s).to_owned()).unwrap_or_default()
}

fn clip(text: &str, max: usize) -> String {
    super::intents::clip(text, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_instead_of_writing() {
        let data = serde_json::json!({"transcript": [
            {"role": "visitor", "text": "I want a refund"},
            {"role": "assistant", "text": "Sorry to hear that."},
            {"role": "visitor", "text": "Order 42 arrived broken"}
        ], "lead": {"name": "Ann", "message": "call after 5"}});
        let s = answer(&format!("summary\n{data}"));
        assert!(s.contains("\"I want a refund\"") && s.contains("\"Order 42 arrived broken\""), "{s}");
        assert!(s.contains("2 message(s) from the visitor, 1 answer(s)") && s.contains("as Ann"), "{s}");
        let data = serde_json::json!({"sources": [{"n": 1, "title": "Refunds", "text": "Refunds take 5 days. Keep the box. More."}]});
        assert_eq!(answer(&format!("suggest\n{data}")), "Refunds take 5 days. Keep the box. [1]");
        let data = serde_json::json!({"draft": "hello   there. your order  ships today"});
        assert_eq!(answer(&format!("improve\n{data}")), "Hello there. Your order ships today.");
        assert_eq!(answer(&format!("shorten\n{data}")), "Hello there.");
        assert_eq!(answer(&format!("translate\n{data}")), "hello   there. your order  ships today");
        assert_eq!(first_sentence("退款需要五天。请保留包装。"), "退款需要五天。");
    }
}
