//! Assistant text is markdown written by a model, which may repeat whatever a visitor or a web
//! page told it. It is rendered to HTML with everything dangerous removed by construction: all
//! text is escaped (raw HTML shows as the text it is), links keep only http(s) and mailto
//! targets, and images become plain links (no remote images load inside the panel).
//!
//! The renderer is our own rather than pulldown-cmark: the panel's bundle is downloaded on every
//! visitor's first visit, and pulldown-cmark with its entity and case-folding tables was 58 KB of
//! its 275 KB (brotli). It covers what models write — paragraphs, headings, bullet and numbered
//! lists (nested), block quotes, fenced code, rules, GFM tables, emphasis, strong, strikethrough,
//! code spans, links, autolinks, escapes and hard breaks — with CommonMark's rules simplified
//! where models do not go (no indented code, no reference links, no setext headings). Every
//! search is bounded, so a hostile answer costs linear time per render.

mod block;
mod inline;

use crate::html::Html;

/// Renders untrusted markdown to safe HTML.
pub fn render(markdown: &str) -> Html {
    let mut out = Out { html: true, s: String::with_capacity(markdown.len() * 3 / 2) };
    block::blocks(&markdown.lines().collect::<Vec<_>>(), false, 0, &mut out);
    Html::sanitised(out.s)
}

/// The text of markdown as a reader hears it: no markup, paragraphs and items on their own lines
/// (what screen readers are told when an answer is finished).
pub fn plain(markdown: &str) -> String {
    let mut out = Out { html: false, s: String::with_capacity(markdown.len()) };
    block::blocks(&markdown.lines().collect::<Vec<_>>(), false, 0, &mut out);
    out.s.trim().to_owned()
}

/// Only absolute http(s) and mailto URLs survive.
pub fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with("mailto:")
}

/// Where rendered text goes: HTML, or the plain words a screen reader is given.
struct Out {
    html: bool,
    s: String,
}

impl Out {
    /// Markup: written only to HTML.
    fn tag(&mut self, tag: &str) {
        if self.html {
            self.s.push_str(tag);
        }
    }

    /// Text as written by the model: escaped for HTML, except that a character reference such
    /// as `&amp;` or `&#8364;` stays one (it can only ever stand for text).
    fn text(&mut self, text: &str) {
        if self.html {
            escape(&mut self.s, text, true);
        } else {
            self.s.push_str(text);
        }
    }

    /// Text taken literally (code): every `&` is escaped.
    fn code(&mut self, text: &str) {
        if self.html {
            escape(&mut self.s, text, false);
        } else {
            self.s.push_str(text);
        }
    }

    /// The end of a block: a closing tag in HTML, a line break in plain text.
    fn end(&mut self, tag: &str) {
        if self.html {
            self.s.push_str(tag);
        }
        self.s.push('\n');
    }
}

use parley_protocol::html::escape_into as escape;

#[cfg(test)]
mod tests;
