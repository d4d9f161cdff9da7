//! Markdown cut into passages, the unit the knowledge index stores and search returns.
//!
//! A passage belongs to one section (the text under one heading) and starts with that heading's
//! line, so a search for "fees" finds the paragraph under "## Fees" even when the paragraph never
//! says the word. Long sections are cut at the largest boundary that fits: blank lines
//! (paragraphs, whole tables and lists), then lines (a table row, a list item), then sentences
//! (`.!?` and `。！？`), then words, and only then inside a word. Sizes are counted in
//! characters, so a Chinese passage holds as many characters as an English one.

use crate::fragment::plain_text;

/// A piece of a page, as the index stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// The plain text of the section's heading, if the passage is under one.
    pub heading: Option<String>,
    /// The passage as Markdown, starting with its section's heading line when there is one.
    pub text: String,
}

/// Sections shorter than this (in characters, heading included) join the next one.
const TINY: usize = 80;

/// One heading and the lines under it up to the next heading.
struct Section {
    /// 0 for the text before the first heading, else the number of `#`.
    level: usize,
    /// The heading's Markdown line ("## Fees").
    line: Option<String>,
    body: String,
}

impl Section {
    fn text(&self) -> String {
        match (&self.line, self.body.is_empty()) {
            (Some(line), false) => format!("{line}\n\n{}", self.body),
            (Some(line), true) => line.clone(),
            (None, _) => self.body.clone(),
        }
    }
}

/// Cuts `markdown` along its headings into passages of at most `max_chars` characters (a
/// passage may only pass it when a single heading line does). Sections under ~80 characters
/// join the next section when it is a sibling or a child; no passage is empty.
pub fn passages(markdown: &str, max_chars: usize) -> Vec<Passage> {
    let max_chars = max_chars.max(1);
    let mut out = Vec::new();
    let mut pending: Option<(Section, String)> = None;
    for section in sections(markdown) {
        let text = section.text();
        if text.trim().is_empty() {
            continue;
        }
        let (section, text) = match pending.take() {
            Some((first, first_text))
                if section.level >= first.level && chars(&first_text) + 2 + chars(&text) <= max_chars =>
            {
                let merged = format!("{first_text}\n\n{text}");
                (first, merged)
            }
            Some((first, first_text)) => {
                emit(&mut out, &first, &first_text, max_chars);
                (section, text)
            }
            None => (section, text),
        };
        if chars(&text) < TINY {
            pending = Some((section, text));
        } else {
            emit(&mut out, &section, &text, max_chars);
        }
    }
    if let Some((section, text)) = pending {
        // A last heading with nothing under it says nothing to search.
        if out.is_empty() || !section.body.is_empty() || text != section.text() {
            emit(&mut out, &section, &text, max_chars);
        }
    }
    out
}

/// Adds a section's (possibly merged) text, cut to size, each piece starting with the heading.
fn emit(out: &mut Vec<Passage>, section: &Section, text: &str, max_chars: usize) {
    let heading = section.line.as_deref().map(heading_text);
    if chars(text) <= max_chars {
        out.push(Passage { heading, text: text.to_owned() });
        return;
    }
    let (prefix, rest) = match &section.line {
        Some(line) => (format!("{line}\n\n"), text.strip_prefix(line.as_str()).unwrap_or(text).trim_start()),
        None => (String::new(), text),
    };
    let budget = max_chars.saturating_sub(chars(&prefix)).max(max_chars / 2).max(1);
    for piece in split(rest, budget, 0) {
        out.push(Passage { heading: heading.clone(), text: format!("{prefix}{piece}") });
    }
}

/// Splits Markdown into sections at ATX headings outside fenced code.
fn sections(markdown: &str) -> Vec<Section> {
    let mut out = vec![Section { level: 0, line: None, body: String::new() }];
    let mut fence: Option<&str> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
        } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
        } else if let Some(level) = heading_level(line) {
            out.push(Section { level, line: Some(line.trim().to_owned()), body: String::new() });
            continue;
        }
        if let Some(last) = out.last_mut() {
            last.body.push_str(line);
            last.body.push('\n');
        }
    }
    for section in &mut out {
        section.body = section.body.trim().to_owned();
    }
    out
}

/// The level of an ATX heading line (`#` to `######` then a space), if it is one.
fn heading_level(line: &str) -> Option<usize> {
    if line.starts_with("    ") {
        return None;
    }
    let line = line.trim_start();
    let level = line.bytes().take_while(|&b| b == b'#').count();
    let rest = &line[level..];
    ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])) && !rest.trim().is_empty())
        .then_some(level)
}

/// The plain text of a heading line: "## [Fees](/fees) ##" gives "Fees".
pub(crate) fn heading_text(line: &str) -> String {
    let text = line.trim().trim_start_matches('#').trim();
    let open = text.trim_end_matches('#');
    plain_text(if open.ends_with([' ', '\t']) { open.trim_end() } else { text })
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Cuts `text` into pieces of at most `budget` characters at the largest boundary that fits.
/// Levels: 0 blocks (blank lines, fenced code kept whole), 1 lines, 2 sentences, 3 words.
fn split(text: &str, budget: usize, level: usize) -> Vec<String> {
    if chars(text) <= budget {
        return vec![text.trim().to_owned()].into_iter().filter(|t| !t.is_empty()).collect();
    }
    let (units, sep): (Vec<&str>, &str) = match level {
        0 => (blocks(text), "\n\n"),
        1 => (text.lines().collect(), "\n"),
        2 => (sentences(text), ""),
        3 => (text.split_inclusive(char::is_whitespace).collect(), ""),
        _ => return hard_cut(text, budget),
    };
    let mut out = Vec::new();
    let mut current = String::new();
    for unit in units {
        let parts = if chars(unit) > budget { split(unit, budget, level + 1) } else { vec![unit.to_owned()] };
        for part in parts {
            if current.trim().is_empty() {
                current = part;
            } else if chars(&current) + chars(sep) + chars(&part) <= budget {
                current.push_str(sep);
                current.push_str(&part);
            } else {
                out.push(std::mem::take(&mut current));
                current = part;
            }
        }
    }
    out.push(current);
    out.into_iter().map(|piece| piece.trim().to_owned()).filter(|piece| !piece.is_empty()).collect()
}

/// Paragraph-level blocks: runs of lines between blank lines, a fenced code block counted whole.
fn blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut offset, mut in_fence) = (None::<usize>, 0, false);
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if trimmed.is_empty() && !in_fence {
            if let Some(s) = start.take() {
                out.push(&text[s..offset]);
            }
        } else if start.is_none() {
            start = Some(offset);
        }
        offset += line.len();
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

/// Sentences, each with its end mark and the whitespace after it.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let ends = match c {
            '。' | '！' | '？' | '；' => next.is_none_or(|n| !matches!(n, '”' | '」' | '）')),
            '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        if ends {
            let mut end = i + c.len_utf8();
            while let Some(&(j, n)) = chars.peek() {
                if !n.is_whitespace() {
                    break;
                }
                end = j + n.len_utf8();
                chars.next();
            }
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The last resort: `budget` characters at a time.
fn hard_cut(text: &str, budget: usize) -> Vec<String> {
    let all: Vec<char> = text.chars().collect();
    all.chunks(budget).map(|chunk| chunk.iter().collect::<String>()).collect()
}
