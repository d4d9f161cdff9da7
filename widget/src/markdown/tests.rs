use super::*;

/// The rendered markup as text, to compare.
fn render(markdown: &str) -> String {
    super::render(markdown).into_string()
}

const LINK: &str = "<a target=\"_blank\" rel=\"noopener noreferrer nofollow\" href=";

#[test]
fn keeps_ordinary_markdown() {
    let html = render("**bold** and [docs](https://example.com/a?b=1&c=2)\n\n- one\n- two");
    assert!(html.contains("<strong>bold</strong>"));
    assert!(html.contains("href=\"https://example.com/a?b=1&amp;c=2\""));
    assert!(html.contains("target=\"_blank\""));
    assert!(html.contains("<li>two</li>"));
}

#[test]
fn blocks_render_as_models_write_them() {
    let md = "## 优才计划：基本申请条件\n\nThe **年龄** rule:\n1. First\n2. Second\n   - nested *one*\n   - nested two\n\n> quoted\nlazily\n\n---\n```rust\nlet a = 1 < 2;\n```\n";
    assert_eq!(
        render(md),
        "<h2>优才计划：基本申请条件</h2>\n<p>The <strong>年龄</strong> rule:</p>\n<ol>\n<li>First</li>\n<li>Second<ul>\n<li>nested <em>one</em></li>\n<li>nested two</li>\n</ul>\n</li>\n</ol>\n<blockquote>\n<p>quoted\nlazily</p>\n</blockquote>\n<hr />\n<pre><code class=\"language-rust\">let a = 1 &lt; 2;\n</code></pre>\n"
    );
}

#[test]
fn lists_nest_by_two_spaces_start_anywhere_and_loosen_with_blank_lines() {
    assert_eq!(render("3. c\n4. d"), "<ol start=\"3\">\n<li>c</li>\n<li>d</li>\n</ol>\n");
    assert_eq!(render("1. a\n  - b\n2. c"), "<ol>\n<li>a<ul>\n<li>b</li>\n</ul>\n</li>\n<li>c</li>\n</ol>\n");
    assert_eq!(render("- a\n\n- b"), "<ul>\n<li><p>a</p>\n</li>\n<li><p>b</p>\n</li>\n</ul>\n");
    // A different marker starts another list; text after a blank line ends it.
    assert_eq!(render("- a\n1. b\n\nafter"), "<ul>\n<li>a</li>\n</ul>\n<ol>\n<li>b</li>\n</ol>\n<p>after</p>\n");
    // A number in a sentence's middle line is not a list; `2.` cannot interrupt a paragraph.
    assert_eq!(render("in\n2024. it"), "<p>in\n2024. it</p>\n");
}

#[test]
fn tables_with_alignment_and_escaped_pipes() {
    // As in GFM, a pipe splits cells even inside code (extra cells are dropped, missing ones empty).
    let html = render("Fees:\n| Plan | Fee |\n|:-----|----:|\n| A \\| B | `1|2` |\n| C |\n\nend");
    assert_eq!(
        html,
        "<p>Fees:</p>\n<table><thead><tr><th style=\"text-align: left\">Plan</th><th style=\"text-align: right\">Fee</th></tr></thead><tbody>\n<tr><td style=\"text-align: left\">A | B</td><td style=\"text-align: right\">`1</td></tr>\n<tr><td style=\"text-align: left\">C</td><td style=\"text-align: right\"></td></tr>\n</tbody></table>\n<p>end</p>\n"
    );
    // Without a delimiter row, pipes are text.
    assert_eq!(render("a | b\nc | d"), "<p>a | b\nc | d</p>\n");
}

#[test]
fn spans_nest_and_stay_literal_when_unclosed() {
    assert_eq!(render("*a **b** c*"), "<p><em>a <strong>b</strong> c</em></p>\n");
    assert_eq!(render("**a *b***"), "<p><strong>a <em>b</em></strong></p>\n");
    assert_eq!(render("***both*** ~~gone~~"), "<p><em><strong>both</strong></em> <del>gone</del></p>\n");
    assert_eq!(render("snake_case_name and 2 * 3 * 4"), "<p>snake_case_name and 2 * 3 * 4</p>\n");
    assert_eq!(render("**still being written"), "<p>**still being written</p>\n");
    assert_eq!(render("`a *b* c` \\*not\\* line  \nbreak"), "<p><code>a *b* c</code> *not* line<br />\nbreak</p>\n");
    assert_eq!(render("AT&T &amp; &#8364; &bogus"), "<p>AT&amp;T &amp; &#8364; &amp;bogus</p>\n");
}

#[test]
fn links_keep_parentheses_titles_and_autolinks() {
    assert_eq!(
        render("[w](https://en.wikipedia.org/wiki/A_(b) \"T\") <https://x.example/?a=1>"),
        format!(
            "<p>{LINK}\"https://en.wikipedia.org/wiki/A_(b)\" title=\"T\">w</a> {LINK}\"https://x.example/?a=1\">https://x.example/?a=1</a></p>\n"
        )
    );
    assert_eq!(render("[not a link] (x)"), "<p>[not a link] (x)</p>\n");
}

#[test]
fn an_unclosed_fence_shows_what_has_come() {
    assert_eq!(render("```\nline < 1"), "<pre><code>line &lt; 1\n</code></pre>\n");
}

#[test]
fn plain_text_has_no_markup() {
    assert_eq!(
        plain("**Opening hours**: 9 to 5, see [the page](https://x.y)\n\n- Mon\n- Tue"),
        "Opening hours: 9 to 5, see the page\nMon\nTue"
    );
    assert_eq!(plain("# Title\n| a | b |\n|---|---|\n| 1 | 2 |"), "Title\na b\n1 2");
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
        "[x](&#106;avascript:alert(1))",
        "[x]( javascript:alert(1))",
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
    for md in [
        "[x](https://a.example/\"onmouseover=\"alert(1))",
        "[x](https://a.example/ \"t\" onmouseover=\"alert(1)\")",
        "<https://a.example/\"onclick=\"x>",
    ] {
        let html = render(md);
        assert!(!html.contains("\"onmouseover") && !html.contains("\"onclick"), "{md} -> {html}");
    }
}

#[test]
fn hostile_text_renders_in_bounded_work() {
    // Thousands of openers without closers, brackets without ends, backticks without partners:
    // each is searched a bounded distance once, so this finishes at once (and without deep
    // recursion) instead of in quadratic or exponential time.
    for unit in ["*a ", "**a ", "_a ", "[a ", "`a ", "![a](", "~~a ", "<a "] {
        let md = unit.repeat(5_000);
        let html = render(&md);
        assert!(html.len() >= md.len(), "{unit}");
    }
    // Quotes and lists nest a bounded depth (deeper markers stay text): no stack overflow.
    for deep in
        [">".repeat(50_000), "- ".repeat(20_000) + "x", (0..300).map(|n| format!("{}- x\n", "  ".repeat(n))).collect()]
    {
        assert!(render(&deep).matches("<blockquote>").count() <= 16);
        assert!(render(&deep).matches("<ul>").count() <= 16);
    }
    let nested = "*a ".repeat(200) + &" b*".repeat(200);
    assert!(render(&nested).contains("<em>"));
}
