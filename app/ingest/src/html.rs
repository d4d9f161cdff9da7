//! A web page's main content as Markdown, and what a crawler needs from its head.
//!
//! The main content is found by `dom_smoothie`, a Rust port of Mozilla's Readability (the
//! algorithm behind Firefox's reader view): it scores blocks by their text and link density and
//! keeps the best one with its siblings. Picked over `readability` (unmaintained, pulls `reqwest`)
//! and `llm_readability` (a fork of it) because it is maintained, follows Readability.js closely
//! (its test suite is Mozilla's pages), and is built on `dom_query`, whose own Markdown writer
//! (headings, lists, GFM tables, links) turns the result into Markdown: one HTML parser
//! (html5ever) for both steps. `htmd`, the other good HTML-to-Markdown crate, would have brought
//! a second, different version of html5ever into the build.
//!
//! Before the algorithm runs, the boilerplate that pages mark as such is removed by rule
//! ([`BOILERPLATE_TAGS`], [`BOILERPLATE_ROLES`], [`BOILERPLATE_WORDS`]): Readability keeps a
//! cookie banner or a breadcrumb trail when it sits inside the article's container. And
//! Readability wants some 500 characters of text to trust its pick, so on short pages (one
//! paragraph, a few lines of Chinese) it can return little or nothing: then the `<main>`,
//! `<article>` or `<body>` with the same removals is used instead.

use std::collections::HashSet;

use dom_query::{Document, NodeRef, Selection};
use dom_smoothie::{Config, Readability, TextMode};
use url::Url;

/// A web page after main-content extraction.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// `<title>`, else `og:title`, else the first `<h1>`, trimmed; never empty (else the URL's path).
    pub title: String,
    /// `<html lang>`, else detected from the text ("zh", "en", ...).
    pub lang: Option<String>,
    /// `<link rel=canonical href>` resolved against the page URL.
    pub canonical: Option<Url>,
    /// Every `<a href>` of the whole document (navigation included), resolved, without fragment,
    /// http(s) only, each once, in document order: what a crawler follows.
    pub links: Vec<Url>,
    /// The main content only, as Markdown: headings, lists, tables and links (absolute) kept.
    pub markdown: String,
    /// `<meta name=robots content=noindex>` (or `none`): do not index this page.
    pub noindex: bool,
    /// `<meta name=robots content=nofollow>` (or `none`): do not follow its links.
    pub nofollow: bool,
}

/// Elements that are never main content.
pub const BOILERPLATE_TAGS: &str =
    "nav, header, footer, aside, script, style, noscript, form, template, iframe, dialog, [hidden]";

/// ARIA landmarks that are never main content.
pub const BOILERPLATE_ROLES: &[&str] = &["navigation", "banner", "contentinfo", "complementary", "search"];

/// Words in an element's `id` or `class` that mark it as boilerplate.
pub const BOILERPLATE_WORDS: &[&str] =
    &["cookie", "consent", "gdpr", "banner", "breadcrumb", "sidebar", "menu", "share", "social"];

/// Deeper trees skip Readability (see [`too_deep`]).
const MAX_DEPTH: usize = 256;

/// Readability gives up on documents with more elements than this (the fallback is used).
const MAX_ELEMENTS: usize = 50_000;

/// Below this many characters, Readability's pick is not trusted over the whole `<main>`.
const SHORT_ARTICLE: usize = 140;

/// Reads a page fetched from `url`. Never fails: a page with nothing in it gives an empty
/// `markdown` and the URL's path as its title.
pub fn html_page(html: &str, url: &Url) -> Page {
    let doc = Document::from(html);
    let base = base_url(&doc, url);
    let (noindex, nofollow) = robots_meta(&doc);
    let title = title(&doc, url);
    let canonical = doc
        .select("link[rel~=canonical][href], link[rel~=Canonical][href]")
        .attr("href")
        .and_then(|href| resolve(&base, &href));
    let links = links(&doc, &base);
    let html_lang = doc.select("html[lang]").attr("lang").map(|l| l.trim().to_owned()).filter(|l| !l.is_empty());

    let markdown = main_markdown(doc, &base);
    let lang = html_lang.or_else(|| crate::lang::detect(&markdown));
    Page { title, lang, canonical, links, markdown, noindex, nofollow }
}

/// The main content of an HTML document as Markdown (for uploaded HTML files too).
pub(crate) fn main_markdown(doc: Document, base: &Url) -> String {
    remove_boilerplate(&doc);
    absolutize(&doc, base);
    let fallback = fallback_markdown(&doc);
    if too_deep(&doc) {
        return fallback;
    }
    let h1 = doc.select("h1").nodes().first().map(|n| collapse(&n.text())).filter(|t| !t.is_empty());
    let config = Config { text_mode: TextMode::Markdown, max_elements_to_parse: MAX_ELEMENTS, ..Config::default() };
    let article = Readability::with_document(doc, Some(base.as_str()), Some(config))
        .ok()
        .and_then(|mut readability| readability.parse().ok())
        .map(|article| tidy(&article.text_content));
    let Some(mut md) =
        article.filter(|md| !md.is_empty() && md.chars().count() >= SHORT_ARTICLE.min(fallback.chars().count()))
    else {
        return fallback;
    };
    // Readability drops the heading that repeats the page's title; the passages want it back.
    if let Some(h1) = h1
        && !md.starts_with('#')
        && !md.contains(&h1)
    {
        md = format!("# {h1}\n\n{md}");
    }
    md
}

/// Whether the element tree is deeper than Readability handles in good time (its scoring walks
/// ancestors, so its time grows with the square of the depth: 5,000 nested `<div>`s took a
/// minute). Real pages stay under a hundred levels.
fn too_deep(doc: &Document) -> bool {
    let mut stack = vec![(doc.root(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return true;
        }
        stack.extend(node.children_it(false).filter(|c| c.is_element()).map(|c| (c, depth + 1)));
    }
    false
}

/// The `<main>`, else the `<article>`, else the `<body>` as Markdown.
fn fallback_markdown(doc: &Document) -> String {
    for selector in ["main", "[role=main]", "article", "body"] {
        let found = doc.select(selector);
        if let Some(node) = found.nodes().first() {
            let md = tidy(&node.md(None));
            if !md.is_empty() {
                return md;
            }
        }
    }
    tidy(&doc.root().md(None))
}

/// Removes the elements that pages mark as navigation, chrome or banners.
fn remove_boilerplate(doc: &Document) {
    doc.select(BOILERPLATE_TAGS).remove();
    for role in BOILERPLATE_ROLES {
        doc.select(&format!("[role={role}]")).remove();
    }
    let marked: Vec<NodeRef> = doc
        .select("[id], [class]")
        .nodes()
        .iter()
        .filter(|node| !matches!(node.node_name().as_deref(), Some("html" | "body" | "main" | "article")))
        .filter(|node| {
            let names = format!("{} {}", node.attr_or("id", ""), node.attr_or("class", "")).to_lowercase();
            BOILERPLATE_WORDS.iter().any(|word| names.contains(word))
        })
        .cloned()
        .collect();
    for node in marked {
        node.remove_from_parent();
    }
}

/// Makes links and image sources absolute, and drops links that lead nowhere a reader can go.
fn absolutize(doc: &Document, base: &Url) {
    for node in doc.select("a[href]").nodes() {
        match node.attr("href").and_then(|href| base.join(href.trim()).ok()) {
            Some(url) if matches!(url.scheme(), "http" | "https" | "mailto" | "tel") => {
                node.set_attr("href", url.as_str())
            }
            _ => node.remove_attr("href"),
        }
    }
    for node in doc.select("img[src]").nodes() {
        if let Some(url) = node.attr("src").and_then(|src| base.join(src.trim()).ok()) {
            node.set_attr("src", url.as_str());
        }
    }
}

/// Trims each line's end and folds runs of blank lines into one.
pub(crate) fn tidy(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut blank = 0;
    for line in md.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

/// The URL relative links resolve against: `<base href>` if there is one.
fn base_url(doc: &Document, url: &Url) -> Url {
    doc.select("base[href]").attr("href").and_then(|href| url.join(href.trim()).ok()).unwrap_or_else(|| url.clone())
}

/// `href` resolved against `base`, without fragment, if it is http(s).
fn resolve(base: &Url, href: &str) -> Option<Url> {
    let mut url = base.join(href.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.set_fragment(None);
    Some(url)
}

fn links(doc: &Document, base: &Url) -> Vec<Url> {
    let mut seen = HashSet::new();
    doc.select("a[href]")
        .nodes()
        .iter()
        .filter_map(|node| resolve(base, &node.attr("href")?))
        .filter(|url| seen.insert(url.clone()))
        .collect()
}

fn title(doc: &Document, url: &Url) -> String {
    let text = |sel: Selection| sel.nodes().first().map(|n| collapse(&n.text())).unwrap_or_default();
    let og = doc.select("meta[property='og:title'][content]").attr("content").map(|c| collapse(&c));
    [text(doc.select("title")), og.unwrap_or_default(), text(doc.select("h1"))]
        .into_iter()
        .find(|t| !t.is_empty())
        .unwrap_or_else(|| url_title(url))
}

/// A title from a URL's path ("/docs/getting-started" gives "docs/getting-started"), else its host.
pub(crate) fn url_title(url: &Url) -> String {
    let path = url.path().trim_matches('/');
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    if decoded.is_empty() { url.host_str().unwrap_or(url.as_str()).to_owned() } else { decoded.into_owned() }
}

/// Whitespace runs as one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `(noindex, nofollow)` from `<meta name=robots>` (any case; `none` means both).
fn robots_meta(doc: &Document) -> (bool, bool) {
    let (mut noindex, mut nofollow) = (false, false);
    for node in doc.select("meta[name][content]").nodes() {
        if !node.attr_or("name", "").trim().eq_ignore_ascii_case("robots") {
            continue;
        }
        for directive in node.attr_or("content", "").to_lowercase().split(',').map(str::trim) {
            noindex |= matches!(directive, "noindex" | "none");
            nofollow |= matches!(directive, "nofollow" | "none");
        }
    }
    (noindex, nofollow)
}
