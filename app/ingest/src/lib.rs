//! Placeholder of the ingest API (replaced by the `ingest` branch).
pub use url::Url;

pub struct Page {
    pub title: String,
    pub lang: Option<String>,
    pub canonical: Option<Url>,
    pub links: Vec<Url>,
    pub markdown: String,
    pub noindex: bool,
    pub nofollow: bool,
}
pub fn html_page(html: &str, url: &Url) -> Page {
    Page {
        title: url.path().into(),
        lang: None,
        canonical: None,
        links: vec![],
        markdown: html.into(),
        noindex: false,
        nofollow: false,
    }
}
pub struct Document {
    pub title: String,
    pub markdown: String,
    pub lang: Option<String>,
}
pub struct Snippet {
    pub question: String,
    pub answer: String,
}
pub enum Read {
    Document(Document),
    Snippets(Vec<Snippet>),
}
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}: unsupported")]
    Unsupported(String),
}
pub fn read_file(name: &str, bytes: &[u8]) -> Result<Read, ReadError> {
    let _ = bytes;
    Err(ReadError::Unsupported(name.into()))
}
pub struct Passage {
    pub heading: Option<String>,
    pub text: String,
}
pub fn passages(markdown: &str, max_chars: usize) -> Vec<Passage> {
    let _ = max_chars;
    vec![Passage { heading: None, text: markdown.into() }]
}
pub fn text_fragment(page: &Url, passage: &Passage) -> Url {
    let _ = passage;
    page.clone()
}
pub fn content_hash(markdown: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(markdown.as_bytes()))
}
pub mod robots {
    use url::Url;
    pub struct Robots;
    impl Robots {
        pub fn parse(user_agent: &str, body: &[u8]) -> Robots {
            let _ = (user_agent, body);
            Robots
        }
        pub fn allow_all() -> Robots {
            Robots
        }
        pub fn allows(&self, url: &Url) -> bool {
            let _ = url;
            true
        }
        pub fn sitemaps(&self) -> Vec<Url> {
            vec![]
        }
        pub fn crawl_delay(&self) -> Option<f32> {
            None
        }
    }
}
pub mod sitemap {
    use url::Url;
    pub struct Entry {
        pub loc: Url,
        pub lastmod: Option<String>,
    }
    pub enum Sitemap {
        Urls(Vec<Entry>),
        Index(Vec<Url>),
    }
    pub fn parse(bytes: &[u8]) -> Result<Sitemap, String> {
        let _ = bytes;
        Err("placeholder".into())
    }
}
