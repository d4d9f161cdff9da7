//! How tool results reach an MCP client: `raw` is the result as JSON text; `text` is Markdown
//! written for people, tailored per tool (knowledge hits as a numbered list with title, excerpt and
//! source link; news as a list; trending questions as grouped bullets; anything else as an outline
//! of bold labels and values).

use serde_json::Value;

use super::OutputFormat;
use crate::engine::tools::ToolError;

/// Which Markdown layout a result gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    KnowledgeBases,
    Search,
    News,
    Trending,
    Other,
}

/// Longest excerpt of a passage in `text` output, in characters.
const EXCERPT_CHARS: usize = 300;

/// A successful result in the requested format.
pub fn result(output: OutputFormat, shape: Shape, value: &Value) -> String {
    match output {
        OutputFormat::Raw => value.to_string(),
        OutputFormat::Text => match shape {
            Shape::KnowledgeBases => knowledge_bases(value),
            Shape::Search => search(value),
            Shape::News => news(value),
            Shape::Trending => trending(value),
            Shape::Other => outline(value),
        },
    }
}

/// A failed call: `{"error": kind, "message": …}` as JSON, or one Markdown line.
pub fn error(output: OutputFormat, e: &ToolError) -> String {
    let kind = match e {
        ToolError::UnknownTool(_) => "unknown_tool",
        ToolError::InvalidArguments(_) => "invalid_arguments",
        ToolError::Timeout => "timeout",
        ToolError::Failed(_) | ToolError::Internal(_) | ToolError::Withheld { .. } => "failed",
    };
    match output {
        OutputFormat::Raw => serde_json::json!({"error": kind, "message": e.to_string()}).to_string(),
        OutputFormat::Text => format!("**Error ({kind}):** {e}"),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// One line, Markdown-safe enough for a list item.
fn line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max { format!("{}…", flat.chars().take(max).collect::<String>()) } else { flat }
}

/// Any other tool's result as a Markdown outline: each field a bold label and its value, nested
/// objects and lists indented under their label, numbered when they hold objects.
fn outline(value: &Value) -> String {
    let mut out = String::new();
    outline_into(&mut out, value, "");
    match out.trim_end() {
        "" => "(no result)".to_owned(),
        text => text.to_owned(),
    }
}

fn outline_into(out: &mut String, value: &Value, indent: &str) {
    let nested = format!("{indent}   ");
    let scalar = |v: &Value| match v {
        Value::String(s) => line(s, 2000),
        Value::Bool(true) => "yes".to_owned(),
        Value::Bool(false) => "no".to_owned(),
        Value::Null => "—".to_owned(),
        other => other.to_string(),
    };
    let is_tree = |v: &Value| match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let label = key.replace('_', " ");
                if is_tree(v) {
                    out.push_str(&format!("{indent}- **{label}**:\n"));
                    outline_into(out, v, &nested);
                } else if matches!(v, Value::Array(_) | Value::Object(_)) {
                    out.push_str(&format!("{indent}- **{label}**: (none)\n"));
                } else {
                    out.push_str(&format!("{indent}- **{label}**: {}\n", scalar(v)));
                }
            }
        }
        Value::Array(list) => {
            for (i, v) in list.iter().enumerate() {
                if is_tree(v) {
                    out.push_str(&format!("{indent}{}.\n", i + 1));
                    outline_into(out, v, &nested);
                } else {
                    out.push_str(&format!("{indent}- {}\n", scalar(v)));
                }
            }
        }
        v => out.push_str(&format!("{indent}{}\n", scalar(v))),
    }
}

fn knowledge_bases(v: &Value) -> String {
    let bases = items(v, "knowledge_bases");
    if bases.is_empty() {
        return "No knowledge bases are available.".to_owned();
    }
    let mut out = String::from("## Knowledge bases\n");
    for b in bases {
        out.push_str(&format!("\n- **{}** — id `{}`", line(str_of(b, "name"), 100), str_of(b, "id")));
        let description = line(str_of(b, "description"), 200);
        if !description.is_empty() {
            out.push_str(&format!("\n  {description}"));
        }
    }
    out
}

fn search(v: &Value) -> String {
    let base = v.get("knowledge_base").map(|b| str_of(b, "name")).unwrap_or_default();
    let query = str_of(v, "query");
    let hits = items(v, "results");
    if hits.is_empty() {
        return format!("Nothing in **{}** matches “{}”.", line(base, 100), line(query, 200));
    }
    let mut out = format!("## {} — results for “{}”\n", line(base, 100), line(query, 200));
    if str_of(v, "return") == "documents" {
        // Whole articles keep their own Markdown (headings, lists) under a heading each.
        for (i, h) in hits.iter().enumerate() {
            out.push_str(&format!(
                "\n### {}. {}\n\n{}\n",
                i + 1,
                line(str_of(h, "title"), 200),
                str_of(h, "text").trim()
            ));
            let url = str_of(h, "source_url");
            if !url.is_empty() {
                out.push_str(&format!("\nSource: <{url}>\n"));
            }
        }
        return out;
    }
    for (i, h) in hits.iter().enumerate() {
        // The passage keeps its Markdown (headings, lists, emphasis), indented under its item.
        let passage = crate::store::knowledge::excerpt(str_of(h, "text"), EXCERPT_CHARS).replace('\n', "\n   ");
        out.push_str(&format!("\n{}. **{}**\n   {}", i + 1, line(str_of(h, "title"), 200), passage));
        let url = str_of(h, "source_url");
        if !url.is_empty() {
            out.push_str(&format!("\n   Source: <{url}>"));
        }
    }
    out
}

fn news(v: &Value) -> String {
    let date = str_of(v, "date");
    let of = match str_of(v, "news_date") {
        "" => String::new(),
        day => format!(" (the news of {day})"),
    };
    let list = items(v, "items");
    if list.is_empty() {
        let mut out = format!("The digest for {date}{of} is empty.");
        if let Some(latest) = v.get("latest_date").and_then(Value::as_str) {
            out.push_str(&format!(" The latest digest with news is {latest}."));
        }
        return out;
    }
    let mut out = format!("## News digest for {date}{of}\n");
    for n in list {
        out.push_str(&format!(
            "\n- **{}** ({}, {})",
            line(str_of(n, "title"), 200),
            str_of(n, "source"),
            str_of(n, "category")
        ));
        let summary = line(str_of(n, "summary"), EXCERPT_CHARS);
        if !summary.is_empty() {
            out.push_str(&format!(" — {summary}"));
        }
        let url = str_of(n, "url");
        if !url.is_empty() {
            out.push_str(&format!(" [link]({url})"));
        }
    }
    out
}

fn trending(v: &Value) -> String {
    let groups = items(v, "categories");
    let days = v.get("days").and_then(Value::as_i64).unwrap_or(30);
    if groups.is_empty() {
        return format!("Visitors asked no questions in the last {days} days.");
    }
    let mut out = format!("## Trending questions (last {days} days)\n");
    for g in groups {
        out.push_str(&format!("\n**{}**\n", str_of(g, "category")));
        for q in items(g, "questions") {
            let count = q.get("count").and_then(Value::as_u64).unwrap_or(1);
            out.push_str(&format!("- {} (×{count})\n", line(str_of(q, "question"), 200)));
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn raw_is_json_and_text_is_markdown_per_tool() {
        let hits = json!({
            "knowledge_base": {"id": "kb", "name": "Immigration"},
            "query": "QMAS",
            "results": [
                {"title": "QMAS — eligibility", "text": "Applicants must be 18.", "source_url": "https://immd.example/q"}
            ]
        });
        assert_eq!(serde_json::from_str::<Value>(&result(OutputFormat::Raw, Shape::Search, &hits)).unwrap(), hits);
        let text = result(OutputFormat::Text, Shape::Search, &hits);
        assert!(text.contains("1. **QMAS — eligibility**") && text.contains("<https://immd.example/q>"), "{text}");

        let item = json!({"title": "T", "source": "S", "category": "QMAS", "summary": "x", "url": "https://n.example"});
        let news = json!({"date": "2025-03-05", "news_date": "2025-03-04", "items": [item]});
        let text = result(OutputFormat::Text, Shape::News, &news);
        assert!(
            text.starts_with("## News digest for 2025-03-05 (the news of 2025-03-04)")
                && text.contains("- **T** (S, QMAS) — x [link](https://n.example)")
        );

        let group = json!({"category": "QMAS", "questions": [{"question": "优才？", "count": 3}]});
        let trending = json!({"days": 30, "categories": [group]});
        assert!(result(OutputFormat::Text, Shape::Trending, &trending).contains("**QMAS**\n- 优才？ (×3)"));
        // (Keys in alphabetical order: the order serde_json keeps either way.)
        let other = json!({"currency": "HKD", "live": true, "rates": [{"rate": 0.92, "to": "CNY"}], "warnings": []});
        assert_eq!(
            result(OutputFormat::Text, Shape::Other, &other),
            "- **currency**: HKD\n- **live**: yes\n- **rates**:\n   1.\n      - **rate**: 0.92\n      - **to**: CNY\n- **warnings**: (none)"
        );
        assert_eq!(result(OutputFormat::Text, Shape::Other, &json!({})), "(no result)");

        let e = ToolError::InvalidArguments("query: missing".into());
        assert_eq!(serde_json::from_str::<Value>(&error(OutputFormat::Raw, &e)).unwrap()["error"], "invalid_arguments");
        assert!(error(OutputFormat::Text, &e).starts_with("**Error (invalid_arguments):**"));
    }
}
