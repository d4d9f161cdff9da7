//! An article's text: read from markdown with a front matter, split into the chunks the index
//! searches, and cut into the excerpts a result shows.

use super::NewArticle;

/// Reads an article from markdown with a front matter of `title`, `category`, `kind` and
/// `source_url` lines between `---` fences.
pub fn parse_markdown(text: &str) -> Result<NewArticle, String> {
    let text = text.trim_start_matches('\u{feff}');
    let rest = text.strip_prefix("---").ok_or("the file must start with a `---` front matter")?;
    let (front, body) = rest.split_once("\n---").ok_or("the front matter is not closed by `---`")?;
    let mut article = NewArticle {
        title: String::new(),
        category: None,
        kind: "article".into(),
        body: String::new(),
        source_url: None,
    };
    for line in front.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (key, value) = line.split_once(':').ok_or_else(|| format!("not a `key: value` line: {line}"))?;
        let value = value.trim().to_owned();
        match key.trim() {
            "title" => article.title = value,
            "category" => article.category = Some(value).filter(|v| !v.is_empty()),
            "kind" if value == "article" || value == "experience" => article.kind = value,
            "kind" => return Err(format!("kind must be `article` or `experience`, not `{value}`")),
            "source_url" => {
                article.source_url = Some(value).filter(|v| v.starts_with("http://") || v.starts_with("https://"))
            }
            other => return Err(format!("unknown front matter key `{other}`")),
        }
    }
    if article.title.is_empty() {
        return Err("the front matter needs a `title`".into());
    }
    article.body = body.trim_start_matches(['-', '\n', '\r']).trim().to_owned();
    if article.body.is_empty() {
        return Err("the article has no body".into());
    }
    Ok(article)
}

/// Largest chunk, in characters.
pub const CHUNK_CHARS: usize = 600;

/// Splits an article body into chunks at paragraph boundaries (a long paragraph is cut).
pub fn split(body: &str) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    for paragraph in body.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        if !current.is_empty() && current.chars().count() + paragraph.chars().count() > CHUNK_CHARS {
            chunks.push(std::mem::take(&mut current));
        }
        if paragraph.chars().count() > CHUNK_CHARS {
            let chars: Vec<char> = paragraph.chars().collect();
            for piece in chars.chunks(CHUNK_CHARS) {
                chunks.push(piece.iter().collect());
            }
            continue;
        }
        if !current.is_empty() {
            current.push_str("\n\n");
        }
        current.push_str(paragraph);
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// The start of a Markdown text, at most `max` characters, with its structure kept: whole
/// blocks and lines (headings, list items, paragraphs) while they fit; a line longer than that is
/// cut at a word boundary and never inside an emphasis, code or link span. `…` marks a cut.
pub fn excerpt(body: &str, max: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let mut cut = false;
    'blocks: for block in body.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
        let mut first_line = true;
        for line in block.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()) {
            let len = line.chars().count();
            let sep = if out.is_empty() {
                ""
            } else if first_line {
                "\n\n"
            } else {
                "\n"
            };
            if used + len <= max {
                out.push_str(sep);
                out.push_str(line);
                used += len;
            } else {
                // Nothing yet: the first line alone is too long, so it is cut inside.
                if out.is_empty() {
                    out.push_str(&cut_line(line, max));
                }
                cut = true;
                break 'blocks;
            }
            first_line = false;
        }
    }
    if cut {
        out.push('…');
    }
    out
}

/// `line` cut to at most `max` characters at a word boundary (any place in text without spaces),
/// then before an emphasis, code span or link it would leave open.
fn cut_line(line: &str, max: usize) -> String {
    let mut cut: String = line.chars().take(max).collect();
    if let Some(space) = cut.rfind(char::is_whitespace).filter(|at| *at > cut.len() / 2) {
        cut.truncate(space);
    }
    loop {
        let open_strong = cut.matches("**").count() % 2 == 1;
        let open_code = cut.matches('`').count() % 2 == 1;
        let open_link = cut.rfind('[').is_some_and(|at| !cut[at..].contains(')'));
        let back_to = if open_strong {
            cut.rfind("**")
        } else if open_code {
            cut.rfind('`')
        } else if open_link {
            cut.rfind('[')
        } else {
            break;
        };
        match back_to {
            Some(at) => cut.truncate(at),
            None => break,
        }
    }
    cut.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_keep_headings_lists_and_spans_whole() {
        let body = "## 优才计划：基本申请条件\n\n- **年龄**：18 岁或以上\n- **财政能力**：能独立负担生活\n- **学历**：一般须具备大学学位\n\n其他段落。";
        // Everything fits: the structure is kept as written.
        assert_eq!(excerpt(body, 500), body);
        // Whole lines while they fit, then the mark of a cut.
        assert_eq!(excerpt(body, 40), "## 优才计划：基本申请条件\n\n- **年龄**：18 岁或以上…");
        // A line cut inside never leaves `**`, a code span or a link open.
        assert_eq!(excerpt("申请人须 **具备良好的中文或英文能力**，并有学历。", 12), "申请人须…");
        assert_eq!(excerpt("Run `parley serve --addr` to start it now", 16), "Run…");
        assert_eq!(excerpt("See [the official page](https://immd.gov.hk) for more", 20), "See…");
        assert_eq!(excerpt("word word word word", 12), "word word…");
        assert_eq!(excerpt("", 10), "");
    }

    #[test]
    fn parses_front_matter() {
        let a = parse_markdown(
            "---\ntitle: QMAS — x\ncategory: QMAS\nkind: experience\nsource_url: https://a.example/x\n---\n正文\n",
        )
        .unwrap();
        assert_eq!(
            (a.title.as_str(), a.category.as_deref(), a.kind.as_str(), a.body.as_str()),
            ("QMAS — x", Some("QMAS"), "experience", "正文")
        );
        assert_eq!(a.source_url.as_deref(), Some("https://a.example/x"));
        assert!(parse_markdown("no front matter").is_err());
        assert!(parse_markdown("---\ncategory: QMAS\n---\nbody").is_err());
        assert!(parse_markdown("---\ntitle: t\nkind: poem\n---\nbody").is_err());
        let js = parse_markdown("---\ntitle: t\nsource_url: javascript:alert(1)\n---\nbody").unwrap();
        assert_eq!(js.source_url, None);
    }

    #[test]
    fn every_demo_article_parses() {
        for (name, text) in crate::demo_data::ARTICLES {
            let a = parse_markdown(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(a.category.is_some() && a.source_url.is_some(), "{name}");
        }
    }

    #[test]
    fn splits_at_paragraphs_and_cuts_long_ones() {
        let body = format!("第一段。\n\n第二段。\n\n{}", "长".repeat(CHUNK_CHARS + 10));
        let chunks = split(&body);
        assert_eq!(chunks[0], "第一段。\n\n第二段。");
        assert_eq!(chunks[1].chars().count(), CHUNK_CHARS);
        assert_eq!(chunks[2].chars().count(), 10);
        assert!(split("  \n\n ").is_empty());
    }
}
