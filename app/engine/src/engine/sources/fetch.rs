//! The crawler's requests: through the outbound fence (the client's resolver refuses private
//! addresses at connect time; IP literals and schemes are checked before each request), with a
//! named user agent, a time limit, a size limit read as the body arrives, conditional requests
//! on a re-sync, and redirects handed back to the crawl (which follows them only within scope).

use std::time::Duration;

use futures::StreamExt;
use url::Url;

use crate::engine::outbound::{self, OutboundSettings};

/// How the crawler fetches (`EngineSettings::crawl`).
#[derive(Clone, Debug, PartialEq)]
pub struct CrawlSettings {
    /// The name robots.txt rules are read for, and the start of the `User-Agent` header.
    pub user_agent: String,
    /// The most bytes of one page or file; a larger one is skipped.
    pub max_page_bytes: usize,
    /// Requests at once to one site.
    pub concurrency: usize,
    /// Pause after each request of a worker (a site's `Crawl-delay` wins when longer, up to 10 s).
    pub delay: Duration,
    /// The time limit of one request, body included.
    pub timeout: Duration,
    /// The most pages a website source's run may take when its owner set none.
    pub default_page_limit: u32,
    /// The highest page limit an owner may set.
    pub max_page_limit: u32,
    /// The most bytes of one uploaded file.
    pub max_file_bytes: usize,
    /// The most files (and snippets) one source may hold.
    pub max_files: i64,
}

impl Default for CrawlSettings {
    fn default() -> Self {
        CrawlSettings {
            user_agent: "ParleyBot".into(),
            max_page_bytes: 2 * 1024 * 1024,
            concurrency: 4,
            delay: Duration::from_millis(100),
            timeout: Duration::from_secs(20),
            default_page_limit: 500,
            max_page_limit: 10_000,
            max_file_bytes: 20 * 1024 * 1024,
            max_files: 1_000,
        }
    }
}

/// What one request gave.
#[derive(Debug)]
pub enum Fetched {
    /// The stored copy is current (`304`).
    NotModified,
    /// A body within the limits.
    Body { kind: BodyKind, body: Vec<u8>, etag: Option<String>, last_modified: Option<String> },
    /// `404` or `410`: the page is gone.
    Gone(u16),
    /// A redirect to this URL (resolved against the request's).
    Redirect(Url),
    /// The fence refused the address.
    Refused(String),
    /// A larger body than the limit.
    TooLarge(usize),
    /// Content that is neither a web page, a PDF nor text.
    Unsupported(String),
    /// No answer, a broken connection, another status.
    Failed(String),
}

/// What a body is, from its `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    Html,
    Pdf,
    Text,
    /// Anything (robots.txt, sitemaps: the caller reads them as they are).
    Raw,
}

fn kind_of(content_type: &str) -> Option<BodyKind> {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Some(BodyKind::Html),
        "application/pdf" => Some(BodyKind::Pdf),
        "text/plain" | "text/markdown" => Some(BodyKind::Text),
        _ => None,
    }
}

/// The crawler's HTTP client and limits.
#[derive(Clone, Debug)]
pub struct Fetcher {
    client: reqwest::Client,
    outbound: OutboundSettings,
    pub settings: CrawlSettings,
}

impl Fetcher {
    pub fn new(outbound: OutboundSettings, settings: CrawlSettings) -> Fetcher {
        let agent = format!("{}/{} (+knowledge crawler)", settings.user_agent, env!("CARGO_PKG_VERSION"));
        Fetcher { client: outbound::named_client(outbound, &agent, settings.timeout), outbound, settings }
    }

    /// GETs `url`; with validators, conditionally. `any` takes any content type (as `Raw`).
    pub async fn get(&self, url: &Url, etag: Option<&str>, last_modified: Option<&str>, any: bool) -> Fetched {
        if let Err(refused) = outbound::fence(url, self.outbound) {
            return Fetched::Refused(refused.to_string());
        }
        let mut request = self.client.get(url.clone());
        if let Some(etag) = etag {
            request = request.header(reqwest::header::IF_NONE_MATCH, etag);
        }
        if let Some(at) = last_modified {
            request = request.header(reqwest::header::IF_MODIFIED_SINCE, at);
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                return match outbound::refusal(&e) {
                    Some(refused) => Fetched::Refused(refused.to_string()),
                    None if e.is_timeout() => Fetched::Failed("no answer in time".into()),
                    None => Fetched::Failed(format!("could not connect: {}", e.without_url())),
                };
            }
        };
        let status = response.status();
        if status == reqwest::StatusCode::NOT_MODIFIED {
            return Fetched::NotModified;
        }
        if status.is_redirection() {
            let to = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|l| url.join(l).ok());
            return match to {
                Some(to) => Fetched::Redirect(to),
                None => Fetched::Failed(format!("HTTP {} without a usable Location", status.as_u16())),
            };
        }
        if status == reqwest::StatusCode::NOT_FOUND || status == reqwest::StatusCode::GONE {
            return Fetched::Gone(status.as_u16());
        }
        if !status.is_success() {
            return Fetched::Failed(format!("HTTP {}", status.as_u16()));
        }
        let header = |name: reqwest::header::HeaderName| {
            response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
        };
        let content_type = header(reqwest::header::CONTENT_TYPE).unwrap_or_default();
        let kind = match kind_of(&content_type) {
            Some(kind) => kind,
            None if any => BodyKind::Raw,
            None => {
                return Fetched::Unsupported(if content_type.is_empty() {
                    "no content type".into()
                } else {
                    content_type
                });
            }
        };
        let (etag, last_modified) = (header(reqwest::header::ETAG), header(reqwest::header::LAST_MODIFIED));
        let max = self.settings.max_page_bytes;
        if let Some(length) = response.content_length().and_then(|l| usize::try_from(l).ok())
            && length > max
        {
            return Fetched::TooLarge(length);
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(piece) = stream.next().await {
            match piece {
                Ok(bytes) if body.len() + bytes.len() > max => return Fetched::TooLarge(body.len() + bytes.len()),
                Ok(bytes) => body.extend_from_slice(&bytes),
                Err(e) => return Fetched::Failed(format!("the body broke off: {}", e.without_url())),
            }
        }
        Fetched::Body { kind, body, etag, last_modified }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        assert_eq!(kind_of("text/html; charset=utf-8"), Some(BodyKind::Html));
        assert_eq!(kind_of("Application/PDF"), Some(BodyKind::Pdf));
        assert_eq!(kind_of("text/plain"), Some(BodyKind::Text));
        assert_eq!(kind_of("application/octet-stream"), None);
        assert_eq!(kind_of(""), None);
    }
}
