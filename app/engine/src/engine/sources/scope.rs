//! Which URLs a website source may crawl: the start URL's host (scheme and port too), a path
//! prefix, include and exclude patterns (`*` stands for any text) on the path and query, and
//! never a URL with a user name or password.

use regex::Regex;
use url::Url;

use crate::store::knowledge::sources::SiteSettings;

/// The compiled scope of a website source.
#[derive(Clone, Debug)]
pub struct Scope {
    origin: url::Origin,
    prefix: String,
    include: Option<Regex>,
    exclude: Option<Regex>,
}

/// One regex matching any of the patterns, whole (`None` for no patterns).
fn any_of(patterns: &[String]) -> Result<Option<Regex>, String> {
    let parts: Vec<String> = patterns
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .map(|p| p.split('*').map(regex::escape).collect::<Vec<_>>().join(".*"))
        .collect();
    if parts.is_empty() {
        return Ok(None);
    }
    Regex::new(&format!("^(?:{})$", parts.join("|"))).map(Some).map_err(|e| e.to_string())
}

impl Scope {
    /// The scope of `settings` around its start URL (already checked to be a URL).
    pub fn new(start: &Url, settings: &SiteSettings) -> Result<Scope, String> {
        Ok(Scope {
            origin: start.origin(),
            prefix: settings.path_prefix.trim().to_owned(),
            include: any_of(&settings.include)?,
            exclude: any_of(&settings.exclude)?,
        })
    }

    /// The URL is within the scope (same origin, under the prefix, included and not excluded).
    pub fn contains(&self, url: &Url) -> bool {
        if url.origin() != self.origin || !url.username().is_empty() || url.password().is_some() {
            return false;
        }
        let path = url.path();
        if !path.starts_with(&self.prefix) {
            return false;
        }
        let target = match url.query() {
            Some(q) => format!("{path}?{q}"),
            None => path.to_owned(),
        };
        if self.include.as_ref().is_some_and(|r| !r.is_match(&target)) {
            return false;
        }
        !self.exclude.as_ref().is_some_and(|r| r.is_match(&target))
    }
}

/// The form in which a URL is stored and compared: no fragment, and no empty query.
pub fn normal(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_fragment(None);
    if url.query() == Some("") {
        url.set_query(None);
    }
    url
}

/// The start URL names a sitemap rather than a page.
pub fn is_sitemap(url: &Url) -> bool {
    let path = url.path().to_ascii_lowercase();
    path.ends_with(".xml") || path.ends_with(".xml.gz")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(start: &str, prefix: &str, include: &[&str], exclude: &[&str]) -> Scope {
        let settings = SiteSettings {
            start_url: start.into(),
            path_prefix: prefix.into(),
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            page_limit: 10,
        };
        Scope::new(&Url::parse(start).unwrap(), &settings).unwrap()
    }

    #[test]
    fn same_origin_prefix_and_patterns() {
        let s = scope("https://a.example/docs/", "/docs/", &[], &["*/draft/*", "*.zip"]);
        let yes = |u: &str| s.contains(&Url::parse(u).unwrap());
        assert!(yes("https://a.example/docs/setup.html"));
        assert!(!yes("https://a.example/blog/post.html"), "outside the prefix");
        assert!(!yes("http://a.example/docs/setup.html"), "another scheme");
        assert!(!yes("https://b.example/docs/setup.html"), "another host");
        assert!(!yes("https://a.example:8443/docs/x"), "another port");
        assert!(!yes("https://a.example/docs/draft/x.html"), "excluded");
        assert!(!yes("https://a.example/docs/all.zip"), "excluded");
        assert!(!yes("https://user:pw@a.example/docs/x"), "credentials");
        let only = scope("https://a.example/", "", &["/help/*", "/faq"], &[]);
        assert!(only.contains(&Url::parse("https://a.example/help/x?page=2").unwrap()));
        assert!(only.contains(&Url::parse("https://a.example/faq").unwrap()));
        assert!(!only.contains(&Url::parse("https://a.example/faq/more").unwrap()));
        // Regex characters in a pattern are literal.
        let dots = scope("https://a.example/", "", &["/a.b"], &[]);
        assert!(!dots.contains(&Url::parse("https://a.example/axb").unwrap()));
    }

    #[test]
    fn normal_form_and_sitemaps() {
        let u = Url::parse("https://a.example/x?#top").unwrap();
        assert_eq!(normal(&u).as_str(), "https://a.example/x");
        assert!(is_sitemap(&Url::parse("https://a.example/sitemap.xml").unwrap()));
        assert!(is_sitemap(&Url::parse("https://a.example/s/Sitemap.XML.gz").unwrap()));
        assert!(!is_sitemap(&Url::parse("https://a.example/").unwrap()));
    }
}
