//! Assistant text is markdown written by a model, which may repeat whatever a visitor or a web
//! page told it. It is rendered to HTML with everything dangerous removed by construction: raw
//! HTML becomes text, links keep only http(s) and mailto targets, and images become plain links
//! (no remote images load inside the panel).

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};

/// Renders untrusted markdown to safe HTML.
pub fn render(markdown: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TABLES);
    let mut in_bad_link = 0usize;
    let events = Parser::new_ext(markdown, options).filter_map(move |event| match event {
        // Raw HTML is shown as the text it is.
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            if safe_url(&dest_url) {
                Some(Event::Start(Tag::Link { link_type, dest_url, title, id }))
            } else {
                in_bad_link += 1;
                None
            }
        }
        Event::End(TagEnd::Link) if in_bad_link > 0 => {
            in_bad_link -= 1;
            None
        }
        // Images never load: they become a link to the image when the URL is safe, else text.
        Event::Start(Tag::Image { dest_url, title, id, .. }) => {
            if safe_url(&dest_url) {
                Some(Event::Start(Tag::Link { link_type: LinkType::Inline, dest_url, title, id }))
            } else {
                in_bad_link += 1;
                None
            }
        }
        Event::End(TagEnd::Image) => {
            if in_bad_link > 0 {
                in_bad_link -= 1;
                None
            } else {
                Some(Event::End(TagEnd::Link))
            }
        }
        other => Some(other),
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events);
    // Links open outside the panel's frame.
    out.replace("<a href=", "<a target=\"_blank\" rel=\"noopener noreferrer nofollow\" href=")
}

/// The text of markdown as a reader hears it: no markup, paragraphs and items on their own lines
/// (what screen readers are told when an answer is finished).
pub fn plain(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    for event in Parser::new_ext(markdown, Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES) {
        match event {
            Event::Text(t) | Event::Code(t) => out.push_str(&t),
            Event::Html(t) | Event::InlineHtml(t) => out.push_str(&t),
            Event::SoftBreak => out.push(' '),
            Event::HardBreak | Event::End(TagEnd::Paragraph | TagEnd::Item | TagEnd::Heading(_)) => out.push('\n'),
            _ => {}
        }
    }
    out.trim().to_owned()
}

/// Only absolute http(s) and mailto URLs survive.
pub fn safe_url(url: &CowStr<'_>) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with("mailto:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_ordinary_markdown() {
        let html = render("**bold** and [docs](https://example.com/a?b=1&c=2)\n\n- one\n- two");
        assert!(html.contains("<strong>bold</strong>"));
        assert!(html.contains("href=\"https://example.com/a?b=1&amp;c=2\""));
        assert!(html.contains("target=\"_blank\""));
        assert!(html.contains("<li>two</li>"));
    }

    #[test]
    fn plain_text_has_no_markup() {
        assert_eq!(
            plain("**Opening hours**: 9 to 5, see [the page](https://x.y)\n\n- Mon\n- Tue"),
            "Opening hours: 9 to 5, see the page\nMon\nTue"
        );
    }

    #[test]
    fn raw_html_is_text() {
        let html = render("hi <script>alert(1)</script> <img src=x onerror=alert(1)>");
        assert!(!html.contains("<script"));
        assert!(!html.contains("<img"));
        assert!(html.contains("&lt;script&gt;"));
    }

    #[test]
    fn dangerous_links_lose_their_target() {
        for md in [
            "[x](javascript:alert(1))",
            "[x](JavaScript:alert(1))",
            "[x](data:text/html;base64,PHNjcmlwdD4=)",
            "[x](vbscript:msgbox)",
            "<javascript:alert(1)>",
        ] {
            let html = render(md);
            assert!(!html.contains("href"), "{md} -> {html}");
        }
    }

    #[test]
    fn images_do_not_load() {
        let html = render("![cat](https://evil.example/cat.png) ![x](data:image/png;base64,AAAA)");
        assert!(!html.contains("<img"));
        assert!(html.contains("href=\"https://evil.example/cat.png\""));
        assert!(!html.contains("data:image"));
    }

    #[test]
    fn attribute_injection_is_escaped() {
        let html = render("[x](https://a.example/\"onmouseover=\"alert(1))");
        assert!(!html.contains("\"onmouseover"));
    }
}
