//! `html_page` on fixture pages with known boilerplate: what must be kept, what must go.

use parley_ingest::{Url, html_page};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn url(s: &str) -> Url {
    Url::parse(s).expect("test URL")
}

/// Reads a fixture and checks that each `keep` line is in the Markdown and no `drop` line is.
fn check(name: &str, page_url: &str, keep: &[&str], drop: &[&str]) -> parley_ingest::Page {
    let page = html_page(&fixture(name), &url(page_url));
    for line in keep {
        assert!(page.markdown.contains(line), "{name}: {line:?} missing from:\n{}", page.markdown);
    }
    for line in drop {
        assert!(!page.markdown.contains(line), "{name}: boilerplate {line:?} kept in:\n{}", page.markdown);
    }
    page
}

#[test]
fn docs_page_keeps_the_guide_and_drops_the_chrome() {
    let page = check(
        "docs.html",
        "https://example.com/docs/install",
        &[
            "Installing the widget",
            "## Paste the script tag",
            "## Check the installation",
            "- make sure the script tag is inside the body, not the head,",
            "data-agent=\"help\"",
            "[configuring agents](https://example.com/docs/agents)",
            "Add every domain that serves the script tag",
        ],
        &[
            "cookies",
            "Accept all",
            "Documentation",
            "Sign in",
            "Configure agents",
            "Getting started",
            "Guides",
            "On this page",
            "Share on Twitter",
            "All rights reserved",
            "Terms of service",
        ],
    );
    assert_eq!(page.title, "Installing the widget · Parley Docs");
    assert_eq!(page.lang.as_deref(), Some("en"));
    assert!(!page.noindex && !page.nofollow && page.canonical.is_none());
    let links: Vec<&str> = page.links.iter().map(Url::as_str).collect();
    // Navigation links count for the crawler; fragments go, duplicates go, mailto goes.
    assert!(links.contains(&"https://example.com/pricing"));
    assert!(links.contains(&"https://example.com/docs/api"));
    assert!(links.contains(&"https://blog.example.com/"));
    assert!(links.contains(&"https://example.com/docs/install"));
    assert_eq!(links.iter().filter(|l| **l == "https://example.com/docs/agents").count(), 1);
    assert!(!links.iter().any(|l| l.starts_with("mailto:") || l.contains('#')));
}

#[test]
fn blog_post_keeps_the_article() {
    let page = check(
        "blog.html",
        "https://example.com/blog/languages",
        &[
            "When a visitor writes in Spanish",
            "> Half of our visitors do not write in English.",
            "rose from 61% to 74%",
            "[languages guide](https://example.com/docs/languages.html)",
        ],
        &["Subscribe", "Archive", "About the team", "Follow us", "Related posts", "Leave a comment", "Copyright"],
    );
    assert_eq!(page.title, "Blog");
}

#[test]
fn chinese_page() {
    let page = check(
        "zh.html",
        "https://shop.example.cn/refund",
        &["退款政策", "自收货之日起十四天内，未使用的商品可以申请全额退款。", "## 如何申请退款", "- 定制商品"],
        &["首页", "全部商品", "Cookie", "版权所有", "关于我们", "示例商城"],
    );
    assert_eq!(page.lang.as_deref(), Some("zh-CN"));
    assert_eq!(page.title, "退款政策 - 示例商城");
}

#[test]
fn table_page_keeps_a_gfm_table() {
    let page = check(
        "table.html",
        "https://example.com/pricing",
        &[
            "# Plans and pricing",
            "| Plan | Agents | Price |",
            "| Team | 5 | $30 |",
            "[Talk to sales](https://example.com/contact)",
        ],
        &["Home", "Docs", "Prices exclude VAT"],
    );
    // No lang attribute: detected from the text.
    assert_eq!(page.lang.as_deref(), Some("en"));
}

#[test]
fn tiny_page_still_gives_its_paragraph() {
    let page = check(
        "tiny.html",
        "https://example.com/hours",
        &["We are open Monday to Friday from nine to six."],
        &["Home", "Example Shop"],
    );
    assert_eq!(page.title, "Opening hours");
}

#[test]
fn canonical_robots_and_base() {
    let page = check(
        "canonical.html",
        "https://shop.example.com/p?id=3",
        &["Orders placed before noon ship the same day.", "[tracking page](https://shop.example.com/help/tracking)"],
        &[],
    );
    assert_eq!(page.title, "Shipping information");
    assert_eq!(page.canonical.as_ref().map(Url::as_str), Some("https://shop.example.com/help/shipping?ref=canonical"));
    assert!(page.noindex && page.nofollow);
    let links: Vec<&str> = page.links.iter().map(Url::as_str).collect();
    assert_eq!(links, ["https://shop.example.com/help/tracking", "https://shop.example.com/help/"]);
}

#[test]
fn title_falls_back_to_h1_then_url() {
    let page = html_page("<body><h1> Hello </h1><p>x</p></body>", &url("https://e.com/a/b"));
    assert_eq!(page.title, "Hello");
    let page = html_page("<p>no title</p>", &url("https://e.com/docs/getting%20started/"));
    assert_eq!(page.title, "docs/getting started");
    let page = html_page("", &url("https://e.com/"));
    assert_eq!((page.title.as_str(), page.markdown.as_str()), ("e.com", ""));
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "<<<>>></a></table><td><tr>\u{0}\u{fffd}",
        "<html><body><table><tr><td><table><tr><td>x",
        "<a href='http://[::1'>bad</a><a href='//'>x</a><a href='http://e.com:99999/'>y</a>",
        "<meta name=robots><link rel=canonical href='http://'>",
    ];
    for input in inputs {
        let _ = html_page(input, &url("https://e.com/"));
    }
    // Deeper than Readability is given (it is quadratic in depth); the fallback reads it.
    let deep = "<div>".repeat(300) + "deep text" + &"</div>".repeat(300);
    assert_eq!(html_page(&deep, &url("https://e.com/")).markdown, "deep text");
}

#[test]
fn a_page_becomes_passages_under_its_headings() {
    let page = html_page(&fixture("docs.html"), &url("https://example.com/docs/install"));
    let passages = parley_ingest::passages(&page.markdown, 400);
    let headings: Vec<Option<&str>> = passages.iter().map(|p| p.heading.as_deref()).collect();
    assert_eq!(
        headings,
        [
            Some("Installing the widget"),
            Some("Paste the script tag"),
            Some("Check the installation"),
            Some("Allowed origins")
        ]
    );
    let link = parley_ingest::text_fragment(&page_url_of(&page), &passages[1]);
    assert_eq!(link.as_str(), "https://example.com/docs/install#:~:text=Paste%20the%20script%20tag");
}

fn page_url_of(page: &parley_ingest::Page) -> Url {
    page.canonical.clone().unwrap_or_else(|| url("https://example.com/docs/install"))
}
