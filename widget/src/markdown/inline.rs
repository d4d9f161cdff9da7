//! Spans inside a block: code, emphasis, strong, strikethrough, links, autolinks, backslash
//! escapes and line breaks. Every mark is ASCII, so byte positions are always on characters.

use std::ops::Range;

use super::{Out, escape, safe_url};

/// How far a closing mark or a link's end is looked for, in bytes: bounds the work per render
/// whatever the text holds.
const REACH: usize = 1_000;
/// How deeply spans nest.
const DEPTH: usize = 8;

/// Renders the spans of `text` (a paragraph, heading or table cell).
pub(super) fn inline(text: &str, out: &mut Out) {
    spans(text, out, 0);
}

fn spans(t: &str, out: &mut Out, depth: usize) {
    let b = t.as_bytes();
    let mut marks = Marks { b, found: vec![0; b.len()] };
    let (mut i, mut from) = (0, 0);
    while i < b.len() {
        // Each arm either writes the text before it and a whole span, moving `from`, or steps on.
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'\n') => {
                out.text(&t[from..i]);
                out.tag("<br />");
                out.s.push('\n');
                i += 2;
                from = i;
            }
            b'\\' if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                // The escaped character starts the next run of text.
                out.text(&t[from..i]);
                from = i + 1;
                i += 2;
            }
            b'\n' => {
                out.text(&t[from..i]);
                out.s.push(if out.html { '\n' } else { ' ' });
                i += 1;
                from = i;
            }
            b'`' => {
                let run = run(b, i, b'`');
                match code_end(b, i + run, run) {
                    Some(end) => {
                        out.text(&t[from..i]);
                        let code = t[i + run..end].replace('\n', " ");
                        let code = match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
                            Some(inner) if !inner.trim().is_empty() => inner,
                            _ => &code,
                        };
                        out.tag("<code>");
                        out.code(code);
                        out.tag("</code>");
                        i = end + run;
                        from = i;
                    }
                    None => i += run,
                }
            }
            ch @ (b'*' | b'_' | b'~') => {
                let run = run(b, i, ch);
                match marks.span(i, depth) {
                    Some(next) => {
                        out.text(&t[from..i]);
                        let (open, close) = match (ch, run) {
                            (b'~', _) => ("<del>", "</del>"),
                            (_, 1) => ("<em>", "</em>"),
                            (_, 2) => ("<strong>", "</strong>"),
                            _ => ("<em><strong>", "</strong></em>"),
                        };
                        out.tag(open);
                        spans(&t[i + run..next - run], out, depth + 1);
                        out.tag(close);
                        i = next;
                        from = i;
                    }
                    None => i += run,
                }
            }
            b'!' | b'[' => {
                let image = b[i] == b'!';
                match link(t, if image { i + 1 } else { i }).filter(|_| depth < DEPTH) {
                    Some(l) => {
                        out.text(&t[from..i]);
                        write_link(t, &l, out, depth);
                        i = l.next;
                        from = i;
                    }
                    None => i += 1,
                }
            }
            b'<' => match autolink(t, i) {
                Some(url) if safe_url(&t[url.clone()]) => {
                    out.text(&t[from..i]);
                    open_link(&t[url.clone()], None, out);
                    out.code(&t[url.clone()]);
                    out.tag("</a>");
                    i = url.end + 1;
                    from = i;
                }
                _ => i += 1,
            },
            _ => i += 1,
        }
    }
    out.text(&t[from..]);
}

/// The length of the run of `ch` starting at `i`.
fn run(b: &[u8], i: usize, ch: u8) -> usize {
    b[i..].iter().take_while(|&&c| c == ch).count()
}

/// Where a code span opened by `run` backticks ends (a run of exactly as many).
fn code_end(b: &[u8], from: usize, run_len: usize) -> Option<usize> {
    let limit = (from + REACH).min(b.len());
    let mut j = from;
    while j < limit {
        if b[j] == b'`' {
            let r = run(b, j, b'`');
            if r == run_len {
                return Some(j);
            }
            j += r;
        } else {
            j += 1;
        }
    }
    None
}

/// Past the code span (or the unmatched backtick run) starting at `j`: marks inside code are code.
fn after_code(b: &[u8], j: usize) -> usize {
    let r = run(b, j, b'`');
    code_end(b, j + r, r).map_or(j + r, |end| end + r)
}

/// Emphasis (`*`/`_`), strong (`**`/`__`), both (`***`) and strikethrough (`~~`), with the
/// spans found so far remembered so nested marks are never searched twice.
struct Marks<'a> {
    b: &'a [u8],
    /// Per position: 0 not searched, 1 no span, n + 2 a span ending before n.
    found: Vec<usize>,
}

impl Marks<'_> {
    /// Whether the run at `i` can open a span: followed by a non-space; `_` not inside a word.
    fn can_open(&self, i: usize, len: usize) -> bool {
        let b = self.b;
        b.get(i + len).is_some_and(|c| !c.is_ascii_whitespace())
            && (b[i] != b'_' || i == 0 || !b[i - 1].is_ascii_alphanumeric())
    }

    /// Whether the run at `i` can close one: after a non-space; `_` not inside a word.
    fn can_close(&self, i: usize, len: usize) -> bool {
        let b = self.b;
        i > 0
            && !b[i - 1].is_ascii_whitespace()
            && (b[i] != b'_' || b.get(i + len).is_none_or(|c| !c.is_ascii_alphanumeric()))
    }

    /// The end (after the closing mark) of the span opened at `i`, if it closes.
    fn span(&mut self, i: usize, depth: usize) -> Option<usize> {
        match self.found[i] {
            0 => {}
            1 => return None,
            n => return Some(n - 2),
        }
        if depth >= DEPTH {
            return None;
        }
        let found = self.search(i, depth);
        self.found[i] = found.map_or(1, |n| n + 2);
        found
    }

    fn search(&mut self, i: usize, depth: usize) -> Option<usize> {
        let b = self.b;
        let ch = b[i];
        let len = run(b, i, ch);
        if (ch == b'~' && len != 2) || len > 3 || !self.can_open(i, len) {
            return None;
        }
        let start = i + len;
        let limit = (start + REACH).min(b.len());
        let mut j = start;
        while j < limit {
            match b[j] {
                b'\\' => j += 2,
                b'`' => j = after_code(b, j),
                c if c == ch => {
                    let r = run(b, j, ch);
                    if j > start && r >= len && self.can_close(j, len) {
                        return Some(j + len);
                    }
                    // A span opening inside is skipped whole, so `*a **b** c*` nests.
                    match self.can_open(j, r).then(|| self.span(j, depth + 1)).flatten() {
                        Some(next) => j = next,
                        None => j += r,
                    }
                }
                _ => j += 1,
            }
        }
        None
    }
}

/// `[text](destination "title")`, found from the `[` at `open`.
struct Link {
    text: Range<usize>,
    dest: Range<usize>,
    title: Option<Range<usize>>,
    image: bool,
    next: usize,
}

fn link(t: &str, open: usize) -> Option<Link> {
    let b = t.as_bytes();
    if b.get(open) != Some(&b'[') {
        return None;
    }
    let limit = (open + REACH).min(b.len());
    let mut j = open + 1;
    let mut nested = 0usize;
    loop {
        match b[..limit].get(j)? {
            b'\\' => j += 1,
            b'`' => j = after_code(b, j) - 1,
            b'[' => nested += 1,
            b']' if nested == 0 => break,
            b']' => nested -= 1,
            _ => {}
        }
        j += 1;
    }
    let close = j;
    if b.get(close + 1) != Some(&b'(') {
        return None;
    }
    let mut k = skip_space(b, close + 2);
    let dest = if b.get(k) == Some(&b'<') {
        let end = k + 1 + b[k + 1..limit.max(k + 1)].iter().position(|&c| c == b'>' || c == b'\n')?;
        if b[end] != b'>' {
            return None;
        }
        let dest = k + 1..end;
        k = end + 1;
        dest
    } else {
        let start = k;
        let mut parens = 0usize;
        while k < b.len() && k < start + REACH {
            match b[k] {
                b' ' | b'\t' | b'\n' => break,
                b'(' => parens += 1,
                b')' if parens == 0 => break,
                b')' => parens -= 1,
                b'\\' => k += 1,
                _ => {}
            }
            k += 1;
        }
        k = k.min(b.len());
        start..k
    };
    k = skip_space(b, k);
    let mut title = None;
    if let Some(&quote @ (b'"' | b'\'' | b'(')) = b.get(k) {
        let closing = if quote == b'(' { b')' } else { quote };
        let end = k + 1 + b[k + 1..(k + 1 + REACH).min(b.len())].iter().position(|&c| c == closing)?;
        title = Some(k + 1..end);
        k = skip_space(b, end + 1);
    }
    (b.get(k) == Some(&b')')).then(|| Link {
        text: open + 1..close,
        dest,
        title,
        image: open > 0 && b[open - 1] == b'!',
        next: k + 1,
    })
}

fn skip_space(b: &[u8], mut k: usize) -> usize {
    while b.get(k).is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n')) {
        k += 1;
    }
    k
}

/// A link whose target is safe becomes one (an image becomes a link to it); otherwise only its
/// text is kept.
fn write_link(t: &str, l: &Link, out: &mut Out, depth: usize) {
    let dest = t[l.dest.clone()].trim();
    let safe = safe_url(dest);
    if safe {
        open_link(dest, l.title.clone().map(|r| &t[r]), out);
    }
    if l.image && !out.html {
        out.s.push_str(&t[l.text.clone()]);
    } else {
        spans(&t[l.text.clone()], out, depth + 1);
    }
    if safe {
        out.tag("</a>");
    }
}

fn open_link(dest: &str, title: Option<&str>, out: &mut Out) {
    if !out.html {
        return;
    }
    // Links open outside the panel's frame.
    out.s.push_str("<a target=\"_blank\" rel=\"noopener noreferrer nofollow\" href=\"");
    escape(&mut out.s, dest, false);
    if let Some(title) = title {
        out.s.push_str("\" title=\"");
        escape(&mut out.s, title, false);
    }
    out.s.push_str("\">");
}

/// `<scheme:…>` at `i`: the URL's range.
fn autolink(t: &str, i: usize) -> Option<Range<usize>> {
    let b = t.as_bytes();
    let start = i + 1;
    let end = start
        + b[start..(start + REACH).min(b.len())]
            .iter()
            .position(|&c| matches!(c, b'>' | b'<') || c.is_ascii_whitespace())?;
    let colon = t[start..end].find(':')?;
    let scheme = &b[start..start + colon];
    let is_scheme = (2..=32).contains(&scheme.len())
        && scheme[0].is_ascii_alphabetic()
        && scheme.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'));
    (b[end] == b'>' && is_scheme).then_some(start..end)
}
