//! XML sitemaps (sitemaps.org): a list of page URLs, or an index of more sitemaps.
//!
//! Read with `quick-xml` (a streaming pull parser: no tree, so a 50 MB sitemap costs no more
//! memory than its entries), after `flate2` has gunzipped a `.xml.gz` body: sites serve them
//! compressed without a `Content-Encoding`, so the gzip magic bytes decide, not the name.

use std::io::Read as _;

use flate2::read::GzDecoder;
use quick_xml::Reader;
use quick_xml::events::Event;
use url::Url;

/// The most entries a sitemap may list (the protocol's limit); the rest are ignored.
pub const MAX_ENTRIES: usize = 50_000;

/// The most bytes a sitemap may have once decompressed (the protocol says 50 MB).
const MAX_BYTES: u64 = 50 * 1024 * 1024;

/// One page of a `<urlset>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The page's absolute URL.
    pub loc: Url,
    /// `<lastmod>` as written (W3C datetime, e.g. "2024-05-01" or "2024-05-01T10:00:00+00:00").
    pub lastmod: Option<String>,
}

/// What a sitemap file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    /// A `<urlset>`: pages.
    Urls(Vec<Entry>),
    /// A `<sitemapindex>`: more sitemaps to fetch.
    Index(Vec<Url>),
}

/// Reads a sitemap, gzipped or not. `<loc>`s that are not absolute http(s) URLs are skipped.
/// Errors (for the crawl log) say what was wrong: not gzip after all, not XML, not a sitemap.
pub fn parse(bytes: &[u8]) -> Result<Sitemap, String> {
    let mut unzipped = Vec::new();
    let xml = if bytes.starts_with(&[0x1f, 0x8b]) {
        GzDecoder::new(bytes).take(MAX_BYTES).read_to_end(&mut unzipped).map_err(|e| format!("bad gzip data: {e}"))?;
        &unzipped[..]
    } else {
        bytes
    };
    let mut reader = Reader::from_reader(xml);
    let mut root: Option<String> = None;
    let mut urls = Vec::new();
    let mut entry: Option<(Option<Url>, Option<String>)> = None;
    let mut text = String::new();
    let mut buf = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| format!("not well-formed XML: {e}"))?;
        match event {
            Event::Start(start) => {
                let name = start.local_name().as_ref().to_ascii_lowercase();
                match name.as_str() {
                    "urlset" | "sitemapindex" if root.is_none() => root = Some(name),
                    "url" | "sitemap" => entry = Some((None, None)),
                    _ => {}
                }
                text.clear();
            }
            Event::Text(t) => text.push_str(&t.xml10_content()),
            Event::CData(t) => text.push_str(&t.xml10_content()),
            Event::GeneralRef(r) => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    text.push(c);
                } else if let Some(s) = quick_xml::escape::resolve_xml_entity(&r) {
                    text.push_str(s);
                }
            }
            Event::End(end) => {
                let name = end.local_name();
                match name.as_ref().to_ascii_lowercase().as_str() {
                    "url" | "sitemap" => {
                        if let Some((Some(loc), lastmod)) = entry.take()
                            && urls.len() < MAX_ENTRIES
                        {
                            urls.push(Entry { loc, lastmod });
                        }
                    }
                    "loc" => {
                        if let Some((loc, _)) = &mut entry {
                            *loc = Url::parse(text.trim()).ok().filter(|u| matches!(u.scheme(), "http" | "https"));
                        }
                    }
                    "lastmod" => {
                        if let Some((_, lastmod)) = &mut entry {
                            *lastmod = Some(text.trim().to_owned()).filter(|t| !t.is_empty());
                        }
                    }
                    _ => {}
                }
                text.clear();
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    match root.as_deref() {
        Some("urlset") => Ok(Sitemap::Urls(urls)),
        Some(_) => Ok(Sitemap::Index(urls.into_iter().map(|e| e.loc).collect())),
        None => Err("not a sitemap: no <urlset> or <sitemapindex>".to_owned()),
    }
}
