//! `robots` and `sitemap`: what a crawler may fetch and where the pages are.

use std::io::Write as _;

use parley_ingest::Url;
use parley_ingest::robots::Robots;
use parley_ingest::sitemap::{self, Entry, Sitemap};

fn url(s: &str) -> Url {
    Url::parse(s).expect("test URL")
}

const ROBOTS: &[u8] = b"\
User-agent: *
Disallow: /private/
Disallow: /search
Crawl-delay: 5

User-agent: ParleyBot
Disallow: /drafts/
Allow: /drafts/public$
Crawl-delay: 1.5

Sitemap: https://example.com/sitemap.xml
Sitemap: https://example.com/news.xml.gz
Sitemap: /relative.xml
";

#[test]
fn robots_named_agent_and_star() {
    let ours = Robots::parse("ParleyBot", ROBOTS);
    assert!(!ours.allows(&url("https://example.com/drafts/a")));
    assert!(ours.allows(&url("https://example.com/drafts/public")));
    // Our group replaces the * group: /private/ is not ours to avoid.
    assert!(ours.allows(&url("https://example.com/private/x")));
    assert_eq!(ours.crawl_delay(), Some(1.5));

    let other = Robots::parse("OtherBot", ROBOTS);
    assert!(!other.allows(&url("https://example.com/private/x")));
    assert!(!other.allows(&url("https://example.com/search?q=1")));
    assert!(other.allows(&url("https://example.com/drafts/a")));
    assert_eq!(other.crawl_delay(), Some(5.0));

    let sitemaps: Vec<String> = ours.sitemaps().iter().map(Url::to_string).collect();
    assert_eq!(sitemaps, ["https://example.com/sitemap.xml", "https://example.com/news.xml.gz"]);
}

#[test]
fn robots_missing_or_garbage_allows_all() {
    let all = Robots::allow_all();
    assert!(all.allows(&url("https://example.com/anything")));
    assert!(all.sitemaps().is_empty() && all.crawl_delay().is_none());
    for body in [&b"\xff\xfe\x00garbage\x00\x01"[..], b"<html><body>Not found</body></html>", b""] {
        assert!(Robots::parse("ParleyBot", body).allows(&url("https://example.com/x")));
    }
}

const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/</loc><lastmod>2024-05-01</lastmod></url>
  <url>
    <loc> https://example.com/docs?a=1&amp;b=2 </loc>
    <changefreq>weekly</changefreq>
  </url>
  <url><loc>not a url</loc></url>
  <url><loc><![CDATA[https://example.com/cdata]]></loc></url>
</urlset>"#;

#[test]
fn sitemap_urlset() {
    let expected = Sitemap::Urls(vec![
        Entry { loc: url("https://example.com/"), lastmod: Some("2024-05-01".to_owned()) },
        Entry { loc: url("https://example.com/docs?a=1&b=2"), lastmod: None },
        Entry { loc: url("https://example.com/cdata"), lastmod: None },
    ]);
    assert_eq!(sitemap::parse(URLSET.as_bytes()), Ok(expected));
}

#[test]
fn sitemap_index() {
    let xml = br#"<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://example.com/a.xml</loc><lastmod>2024-01-01</lastmod></sitemap>
      <sitemap><loc>https://example.com/b.xml.gz</loc></sitemap></sitemapindex>"#;
    assert_eq!(
        sitemap::parse(xml),
        Ok(Sitemap::Index(vec![url("https://example.com/a.xml"), url("https://example.com/b.xml.gz")]))
    );
}

#[test]
fn sitemap_gzipped() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(URLSET.as_bytes()).expect("gzip in memory");
    let bytes = gz.finish().expect("gzip in memory");
    let Ok(Sitemap::Urls(entries)) = sitemap::parse(&bytes) else { panic!("not read") };
    assert_eq!(entries.len(), 3);
}

#[test]
fn sitemap_caps_entries() {
    let mut xml = String::from("<urlset>");
    for i in 0..50_010 {
        xml.push_str(&format!("<url><loc>https://e.com/{i}</loc></url>"));
    }
    xml.push_str("</urlset>");
    let Ok(Sitemap::Urls(entries)) = sitemap::parse(xml.as_bytes()) else { panic!("not read") };
    assert_eq!(entries.len(), sitemap::MAX_ENTRIES);
}

#[test]
fn sitemap_errors_and_garbage() {
    assert!(sitemap::parse(b"<html><body>404</body></html>").is_err());
    assert!(sitemap::parse(b"\x1f\x8b\x08garbage").is_err());
    assert!(sitemap::parse(b"<urlset><url><loc>https://e.com/</loc></url>").is_ok());
    for garbage in [&b"\x00\xff<<<&&&;"[..], b"<urlset><url><loc>&bogus;</loc></url></urlset>", b"", b"<?xml"] {
        let _ = sitemap::parse(garbage);
    }
}
