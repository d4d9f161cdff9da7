//! Owner content into passages for the knowledge index.
//!
//! What an owner gives an agent to know comes in three shapes: pages of their website (crawled
//! through `robots.txt` and sitemaps), files they upload (PDF, DOCX, HTML, Markdown, text, and
//! CSVs of questions and answers), and the passages both are cut into for search. This crate is
//! those conversions and nothing else: no database, no network, no async. The engine fetches,
//! stores and indexes; everything here is a pure function of bytes, so it is tested on fixtures.
//!
//! - [`html_page`]: a page's main content as Markdown, with its title, language, canonical URL,
//!   links and robots directives ([`html`] says how the main content is found).
//! - [`read_file`]: an uploaded file as a [`Document`], or a CSV as [`Snippet`]s.
//! - [`passages`]: Markdown cut along its headings into [`Passage`]s of bounded size.
//! - [`text_fragment`]: a link that scrolls a browser to a passage.
//! - [`content_hash`]: the same text twice is the same hash.
//! - [`robots`] and [`sitemap`]: what a crawler may fetch and where the pages are.
//!
//! Crates, each kept and each with default features off where it has any (the workspace
//! watches its build time):
//! - main content: `dom_smoothie` (Mozilla's Readability, ported) on `dom_query` (html5ever),
//!   whose Markdown writer also does the HTML-to-Markdown step, so there is one HTML parser;
//!   rule-based removals before it and a `<main>`/`<body>` fallback after it ([`html`]);
//! - PDF: `pdf-extract` (on `lopdf`), and `lopdf`'s own extractor for the CJK fonts it does
//!   not know; DOCX: `zip` + `quick-xml` (not `docx-rs`, a writer with a heavy reader);
//!   CSV: `csv`; text in GB18030: `encoding_rs`;
//! - language: Chinese/Japanese/Korean by script share, the rest by `whatlang`;
//! - `robots.txt`: `texting_robots`; sitemaps: `quick-xml` and `flate2`.

mod fragment;
pub mod html;
mod lang;
mod passages;
mod read;
pub mod robots;
pub mod sitemap;

pub use fragment::text_fragment;
pub use html::{Page, html_page};
pub use passages::{Passage, passages};
pub use read::{Document, Read, ReadError, Snippet, read_file};
pub use url::Url;

use sha2::{Digest, Sha256};

/// A stable hash of `markdown` for duplicate detection: the hex SHA-256 of its words joined by
/// single spaces, so re-wrapped lines, trailing spaces and CRLF endings do not make a new hash.
pub fn content_hash(markdown: &str) -> String {
    let mut hasher = Sha256::new();
    for (i, word) in markdown.split_whitespace().enumerate() {
        if i > 0 {
            hasher.update(b" ");
        }
        hasher.update(word.as_bytes());
    }
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::content_hash;

    #[test]
    fn content_hash_ignores_whitespace_shape() {
        let a = content_hash("# Fees\n\nTen  dollars\r\na month. ");
        assert_eq!(a, content_hash("# Fees Ten dollars a month."));
        assert_ne!(a, content_hash("# Fees Ten dollars a year."));
        assert_eq!(a.len(), 64);
    }
}
