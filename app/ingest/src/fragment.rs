//! Links that scroll a browser to a passage: URL text fragments (`#:~:text=`), as the WICG
//! "URL Fragment Text Directives" spec defines them (Chrome, Edge, Safari and Firefox follow it).
//!
//! A directive only matches text inside what the browser sees as one run of text, and at word
//! boundaries. A heading is one element, so its whole text is the safest target. Without one,
//! the first sentence of the passage's first block is used: whole when short, else as
//! `textStart,textEnd` (the first and last few words of that sentence): the start of a block and
//! the end of a sentence are word boundaries in every script, a cut in the middle of Chinese
//! text may not be.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use url::Url;

use crate::passages::Passage;

/// What a text directive's value must percent-encode: all but the spec's unreserved characters
/// (`-`, `,` and `&` have a meaning in the directive; spaces and non-ASCII are encoded as usual).
const DIRECTIVE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b'.')
    .remove(b'/')
    .remove(b':')
    .remove(b';')
    .remove(b'=')
    .remove(b'?')
    .remove(b'@')
    .remove(b'_')
    .remove(b'~');

/// A whole sentence is used up to this many words (English and other spaced scripts) ...
const MAX_WORDS: usize = 8;
/// ... or this many characters (Chinese, Japanese).
const MAX_CJK: usize = 20;

/// `page` with a text fragment that makes a browser scroll to (and highlight) `passage`; any
/// fragment `page` had is replaced. With nothing to point at, `page` without fragment.
pub fn text_fragment(page: &Url, passage: &Passage) -> Url {
    let mut url = page.clone();
    let directive = match passage.heading.as_deref().filter(|h| !h.trim().is_empty()) {
        Some(heading) => Some(encode(heading.trim())),
        None => first_sentence(&passage.text).map(|sentence| sentence_directive(&sentence)),
    };
    match directive {
        Some(value) if !value.is_empty() => url.set_fragment(Some(&format!(":~:text={value}"))),
        _ => url.set_fragment(None),
    }
    url
}

fn encode(text: &str) -> String {
    utf8_percent_encode(text, DIRECTIVE).to_string()
}

/// `sentence` whole when short, else `start,end`.
fn sentence_directive(sentence: &str) -> String {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let cjk = sentence.chars().filter(|&c| is_cjk(c)).count();
    if cjk * 2 > sentence.chars().count() {
        if sentence.chars().count() <= MAX_CJK {
            return encode(sentence);
        }
        let all: Vec<char> = sentence.chars().collect();
        let start: String = all[..MAX_CJK / 2].iter().collect();
        let end: String = all[all.len() - MAX_CJK / 2..].iter().collect();
        return format!("{},{}", encode(start.trim()), encode(end.trim()));
    }
    if words.len() <= MAX_WORDS {
        return encode(&words.join(" "));
    }
    let half = MAX_WORDS / 2;
    format!("{},{}", encode(&words[..half].join(" ")), encode(&words[words.len() - half..].join(" ")))
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// The plain first sentence of the first block of `markdown` that is not a heading or code.
fn first_sentence(markdown: &str) -> Option<String> {
    let block = markdown
        .split("\n\n")
        .map(str::trim)
        .find(|b| !b.is_empty() && !b.starts_with('#') && !b.starts_with("```") && !b.starts_with("~~~"))?;
    let line = block.lines().map(unmark_line).find(|l| !l.is_empty())?;
    let text = plain_text(&line);
    let end = text
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '。' | '！' | '？')
                || (matches!(c, '.' | '!' | '?') && text[i + 1..].starts_with(char::is_whitespace))
        })
        .map_or(text.len(), |(i, c)| i + c.len_utf8());
    let sentence = text[..end].trim();
    (!sentence.is_empty()).then(|| sentence.to_owned())
}

/// A block's line without its list, quote or table syntax (a table gives its first cell).
fn unmark_line(line: &str) -> String {
    let mut line = line.trim();
    if line.starts_with('|') {
        return line
            .split('|')
            .map(str::trim)
            .find(|cell| !cell.is_empty() && !cell.chars().all(|c| matches!(c, '-' | ':' | ' ')))
            .unwrap_or_default()
            .to_owned();
    }
    loop {
        let before = line;
        line = line.trim_start_matches('>').trim_start();
        for marker in ["- ", "* ", "+ "] {
            line = line.strip_prefix(marker).unwrap_or(line);
        }
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") ")) {
            line = &line[digits + 2..];
        }
        if line == before {
            return line.trim().to_owned();
        }
    }
}

/// Markdown inline syntax removed: links and images keep their text, emphasis and code marks
/// go, backslash escapes are undone, whitespace runs become one space.
pub(crate) fn plain_text(markdown: &str) -> String {
    let chars: Vec<char> = markdown.chars().collect();
    let mut out = String::with_capacity(markdown.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if chars.get(i + 1).is_some_and(char::is_ascii_punctuation) => {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            '!' if chars.get(i + 1) == Some(&'[') => {}
            '[' => {
                if let Some((text_end, after)) = link_end(&chars, i) {
                    out.push_str(&plain_text(&chars[i + 1..text_end].iter().collect::<String>()));
                    i = after;
                    continue;
                }
                out.push('[');
            }
            '*' | '`' => {}
            '_' if chars.get(i + 1) == Some(&'_') => i += 1,
            '~' if chars.get(i + 1) == Some(&'~') => i += 1,
            c => out.push(c),
        }
        i += 1;
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// For a `[` at `open`, the index of its `]` and the index after the link's `(...)`.
fn link_end(chars: &[char], open: usize) -> Option<(usize, usize)> {
    let mut depth = 0;
    let mut close = None;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let close = close?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let mut depth = 0;
    for (j, &c) in chars.iter().enumerate().skip(close + 1) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((close, j + 1));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passages::heading_text;

    #[test]
    fn plain_text_drops_inline_syntax() {
        assert_eq!(plain_text("See **[our fees](https://e.com/a_(b))** and `code`"), "See our fees and code");
        assert_eq!(plain_text("![logo](x.png) C\\# and snake_case"), "logo C# and snake_case");
        assert_eq!(heading_text("## Title ##"), "Title");
        assert_eq!(heading_text("# C#"), "C#");
    }
}
