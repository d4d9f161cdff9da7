//! `passages` and `text_fragment`: cutting Markdown for the index, and links back into a page.

use parley_ingest::{Passage, Url, passages, text_fragment};

fn chars(s: &str) -> usize {
    s.chars().count()
}

const GUIDE: &str = "\
Intro line before any heading, long enough to stand as its own passage in the index of the site.

# Plans

Short.

## Fees

The basic plan costs ten dollars a month. The team plan costs thirty dollars a month and adds five agents. Yearly billing gives two months free.

## Refunds

Refunds are possible within fourteen days of purchase, no questions asked, through the orders page or by email.

```
# not a heading
```
";

#[test]
fn splits_along_headings_with_the_heading_in_the_text() {
    let out = passages(GUIDE, 1000);
    let headings: Vec<Option<&str>> = out.iter().map(|p| p.heading.as_deref()).collect();
    // "# Plans" with its one word is tiny: it joins its child "## Fees".
    assert_eq!(headings, [None, Some("Plans"), Some("Refunds")]);
    assert!(out[1].text.starts_with("# Plans\n\nShort.\n\n## Fees\n\nThe basic plan"));
    assert!(out[2].text.starts_with("## Refunds\n\nRefunds are possible"));
    assert!(out[2].text.contains("# not a heading"), "fenced code is not a heading");
    assert!(out.iter().all(|p| !p.text.trim().is_empty()));
}

#[test]
fn long_sections_are_cut_at_sentences_and_keep_their_heading() {
    let out = passages(GUIDE, 90);
    for p in &out {
        assert!(chars(&p.text) <= 90, "{} chars: {:?}", chars(&p.text), p.text);
        assert!(!p.text.trim().is_empty());
    }
    let fees: Vec<&Passage> = out.iter().filter(|p| p.heading.as_deref() == Some("Fees")).collect();
    assert!(fees.len() >= 2);
    assert!(fees.iter().all(|p| p.text.starts_with("## Fees\n\n")));
    assert!(fees[0].text.ends_with("ten dollars a month."), "cut at a sentence end: {:?}", fees[0].text);
}

#[test]
fn chinese_counts_characters_and_cuts_at_chinese_full_stops() {
    let sentence = "自收货之日起十四天内，未使用的商品可以申请全额退款。";
    let body = sentence.repeat(10);
    let md = format!("## 退款政策\n\n{body}");
    let out = passages(&md, 60);
    assert!(out.len() >= 5);
    for p in &out {
        assert!(chars(&p.text) <= 60, "{} chars: {}", chars(&p.text), p.text);
        assert!(p.text.starts_with("## 退款政策\n\n"));
        assert!(p.text.ends_with('。'), "cut at 。: {}", p.text);
        assert_eq!(p.heading.as_deref(), Some("退款政策"));
    }
    // Counted in characters: bytes would be three times more.
    assert!(md.len() > 3 * 60 && passages(&md, md.chars().count()).len() == 1);
}

#[test]
fn tables_and_lists_are_cut_between_rows_and_items() {
    let rows: String = (1..=20).map(|i| format!("| Plan {i} | {i} agents | ${i}0 |\n")).collect();
    let md =
        format!("## Prices\n\nEvery plan is billed monthly.\n\n| Plan | Agents | Price |\n| --- | --- | --- |\n{rows}");
    for p in passages(&md, 120) {
        assert!(chars(&p.text) <= 120);
        for line in p.text.lines().filter(|l| l.starts_with('|')) {
            assert!(line.ends_with('|'), "a row was cut: {line:?}");
        }
    }
    let items: String = (1..=30).map(|i| format!("- item number {i} of the list\n")).collect();
    for p in passages(&format!("# List\n\n{items}"), 100) {
        assert!(p.text.lines().skip(2).all(|l| l.starts_with("- item number") && l.ends_with("of the list")));
    }
}

#[test]
fn no_empty_passages_from_empty_or_odd_input() {
    assert!(passages("", 100).is_empty());
    assert!(passages("\n\n   \n", 100).is_empty());
    assert_eq!(passages("# Only a title", 100).len(), 1);
    let word = "x".repeat(50);
    let out = passages(&word, 10);
    assert_eq!(out.len(), 5);
    assert!(out.iter().all(|p| chars(&p.text) == 10));
    assert!(passages("#hashtag is not a heading\n\n####### nor this", 5).iter().all(|p| p.heading.is_none()));
}

fn page() -> Url {
    Url::parse("https://example.com/help/pricing?x=1#old").expect("test URL")
}

fn fragment(heading: Option<&str>, text: &str) -> String {
    let passage = Passage { heading: heading.map(str::to_owned), text: text.to_owned() };
    text_fragment(&page(), &passage).to_string()
}

#[test]
fn text_fragment_uses_the_heading() {
    assert_eq!(fragment(Some("Fees"), "## Fees\n\nTen dollars."), "https://example.com/help/pricing?x=1#:~:text=Fees");
    assert_eq!(
        fragment(Some("退款政策"), "## 退款政策\n\n..."),
        "https://example.com/help/pricing?x=1#:~:text=%E9%80%80%E6%AC%BE%E6%94%BF%E7%AD%96"
    );
    assert_eq!(
        fragment(Some("Pay-as-you-go, monthly & yearly"), ""),
        "https://example.com/help/pricing?x=1#:~:text=Pay%2Das%2Dyou%2Dgo%2C%20monthly%20%26%20yearly"
    );
}

#[test]
fn text_fragment_without_heading_uses_the_first_sentence() {
    assert_eq!(
        fragment(None, "We are **open** [Monday](https://e.com/m) to Friday. Closed on holidays."),
        "https://example.com/help/pricing?x=1#:~:text=We%20are%20open%20Monday%20to%20Friday."
    );
    // Long: the first and last four words of the sentence, as textStart,textEnd.
    assert_eq!(
        fragment(None, "- The basic plan costs ten dollars a month for three agents.\n- Second item"),
        "https://example.com/help/pricing?x=1#:~:text=The%20basic%20plan%20costs,month%20for%20three%20agents."
    );
    // Chinese: the first and last ten characters (自收货之日起十四天内, 品可以申请全额退款。).
    assert_eq!(
        fragment(None, "自收货之日起十四天内，未使用的商品可以申请全额退款。其他"),
        "https://example.com/help/pricing?x=1#:~:text=%E8%87%AA%E6%94%B6%E8%B4%A7%E4%B9%8B%E6%97%A5%E8%B5%B7%E5%8D%81%E5%9B%9B%E5%A4%A9%E5%86%85,%E5%93%81%E5%8F%AF%E4%BB%A5%E7%94%B3%E8%AF%B7%E5%85%A8%E9%A2%9D%E9%80%80%E6%AC%BE%E3%80%82"
    );
    assert_eq!(fragment(None, "```\ncode\n```"), "https://example.com/help/pricing?x=1");
}
