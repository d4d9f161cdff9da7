//! Text formats: Markdown (with front matter), plain text, HTML and CSVs of questions.

use super::{Document, ReadError, Snippet, first_heading};
use crate::lang::detect;

/// Markdown as it is; a leading `---` front matter block is removed and its `title:` used.
pub(super) fn read_markdown(stem: &str, text: &str) -> Document {
    let text = text.replace("\r\n", "\n");
    let (front_title, body) = split_front_matter(&text);
    let markdown = body.trim().to_owned();
    let title = front_title.or_else(|| first_heading(&markdown)).unwrap_or_else(|| stem.to_owned());
    let lang = detect(&markdown);
    Document { title, markdown, lang }
}

/// `(title, body)` of a document that may start with YAML front matter between `---` lines.
fn split_front_matter(text: &str) -> (Option<String>, &str) {
    let Some(rest) = text.strip_prefix("---\n") else { return (None, text) };
    let Some(end) = rest.find("\n---\n").or_else(|| rest.ends_with("\n---").then(|| rest.len() - 4)) else {
        return (None, text);
    };
    let front = &rest[..end];
    let body = rest[end + 4..].strip_prefix('\n').unwrap_or(&rest[end + 4..]);
    let title = front
        .lines()
        .find_map(|line| line.strip_prefix("title:"))
        .map(|value| value.trim().trim_matches(['"', '\'']).trim().to_owned())
        .filter(|title| !title.is_empty());
    (title, body)
}

/// Plain text: paragraphs as they are (Markdown is a superset, near enough).
pub(super) fn read_text(stem: &str, text: &str) -> Document {
    let markdown = text.replace("\r\n", "\n").trim().to_owned();
    let lang = detect(&markdown);
    Document { title: stem.to_owned(), markdown, lang }
}

/// An HTML file: the same main-content extraction as a crawled page (links resolve against a
/// placeholder origin, so relative ones come out as `https://upload.invalid/...`).
pub(super) fn read_html(stem: &str, html: &str) -> Document {
    let base = url::Url::parse("https://upload.invalid/").ok();
    let page = match &base {
        Some(base) => crate::html::html_page(html, base),
        None => return Document { title: stem.to_owned(), markdown: String::new(), lang: None },
    };
    let has_title = !page.title.is_empty() && page.title != "upload.invalid";
    Document { title: if has_title { page.title } else { stem.to_owned() }, markdown: page.markdown, lang: page.lang }
}

/// Question/answer pairs: columns named `question` and `answer` (any case, Chinese 问题/答案
/// too), else the first two columns, with or without a header row.
pub(super) fn read_csv(name: &str, text: &str) -> Result<Vec<Snippet>, ReadError> {
    let error = |reason: String| ReadError::Csv { name: name.to_owned(), reason };
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut rows = reader.records();
    let Some(first) = rows.next() else { return Err(error("no rows".to_owned())) };
    let first = first.map_err(|e| error(format!("not CSV ({e})")))?;
    let cells: Vec<String> = first.iter().map(|c| c.trim().to_lowercase()).collect();
    let find = |names: &[&str]| cells.iter().position(|c| names.contains(&c.as_str()));
    let named = (find(&["question", "questions", "q", "问题"]), find(&["answer", "answers", "a", "答案", "回答"]));
    let (q, a, header) = match named {
        (Some(q), Some(a)) => (q, a, true),
        _ => (0, 1, false),
    };
    let mut snippets = Vec::new();
    let mut line_no = 1;
    let first_row = if header { None } else { Some(Ok(first)) };
    for row in first_row.into_iter().chain(rows) {
        let row = row.map_err(|e| error(format!("not CSV ({e})")))?;
        line_no = row.position().map_or(line_no + 1, |p| p.line());
        let cell = |i: usize| row.get(i).map(str::trim).unwrap_or_default().to_owned();
        let (question, answer) = (cell(q), cell(a));
        match (question.is_empty(), answer.is_empty()) {
            (true, true) => continue,
            (false, true) => return Err(error(format!("line {line_no} has no answer"))),
            (true, false) => return Err(error(format!("line {line_no} has no question"))),
            (false, false) => snippets.push(Snippet { question, answer }),
        }
    }
    if snippets.is_empty() {
        return Err(error("no question/answer rows".to_owned()));
    }
    Ok(snippets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_gives_the_title() {
        let doc = read_markdown("notes", "---\ntitle: \"Release Notes\"\n---\n# Version 2\n");
        assert_eq!((doc.title.as_str(), doc.markdown.as_str()), ("Release Notes", "# Version 2"));
        let doc = read_markdown("notes", "# Version 2\n\n---\n\nmore");
        assert_eq!(doc.title, "Version 2");
    }

    #[test]
    fn csv_without_header_uses_the_first_two_columns() {
        let snippets = read_csv("f.csv", "Hours?,Nine to six,extra\n\"Refunds, too?\",Yes\n").ok();
        let questions: Vec<_> = snippets.unwrap_or_default().into_iter().map(|s| s.question).collect();
        assert_eq!(questions, ["Hours?", "Refunds, too?"]);
    }
}
