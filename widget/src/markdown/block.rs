//! Blocks: what a line starts decides what it is; a paragraph runs until a blank line or a
//! line that starts another block.

use super::Out;
use super::inline::inline;

/// How deeply quotes and lists nest; deeper markers are text (a hostile answer of thousands of
/// `>` must not exhaust the stack).
const NESTING: usize = 16;

/// Renders `lines` as blocks, `depth` quotes or lists deep. In a tight list item a paragraph has
/// no `<p>`.
pub(super) fn blocks(lines: &[&str], tight: bool, depth: usize, out: &mut Out) {
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        if t.is_empty() {
            i += 1;
        } else if let Some(fence) = Fence::open(t) {
            i = code_block(lines, i, indent(line), fence, out);
        } else if let Some((level, text)) = heading(t) {
            const OPEN: [&str; 6] = ["<h1>", "<h2>", "<h3>", "<h4>", "<h5>", "<h6>"];
            const CLOSE: [&str; 6] = ["</h1>", "</h2>", "</h3>", "</h4>", "</h5>", "</h6>"];
            out.tag(OPEN[level - 1]);
            inline(text, out);
            out.end(CLOSE[level - 1]);
            i += 1;
        } else if is_rule(t) {
            out.tag("<hr />\n");
            i += 1;
        } else if t.starts_with('>') && depth < NESTING {
            i = quote(lines, i, depth, out);
        } else if let Some(marker) = Marker::parse(t).filter(|_| depth < NESTING) {
            i = list(lines, i, marker, depth, out);
        } else if let Some(aligns) = table_start(lines, i) {
            i = table(lines, i, &aligns, out);
        } else {
            let start = i;
            i += 1;
            while i < lines.len() && !ends_paragraph(lines, i) {
                i += 1;
            }
            paragraph(&lines[start..i], tight, out);
        }
    }
}

/// Whether line `i` ends the paragraph above it.
fn ends_paragraph(lines: &[&str], i: usize) -> bool {
    let t = lines[i].trim_start();
    t.is_empty()
        || Fence::open(t).is_some()
        || heading(t).is_some()
        || is_rule(t)
        || t.starts_with('>')
        || Marker::parse(t).is_some_and(|m| m.interrupts)
        || table_start(lines, i).is_some()
}

fn paragraph(lines: &[&str], tight: bool, out: &mut Out) {
    // Lines joined by `\n`; a line ending in two spaces or a backslash ends with a hard break
    // (written as the backslash-newline `inline` knows).
    let mut text = String::new();
    for (n, line) in lines.iter().enumerate() {
        let line = line.trim_start();
        if n + 1 == lines.len() {
            text.push_str(line.trim_end());
        } else if line.ends_with("  ") {
            text.push_str(line.trim_end());
            text.push_str("\\\n");
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    if tight {
        inline(&text, out);
        if !out.html {
            out.s.push('\n');
        }
    } else {
        out.tag("<p>");
        inline(&text, out);
        out.end("</p>");
    }
}

/// Leading columns of white space (a tab counts four).
fn indent(line: &str) -> usize {
    let mut n = 0;
    for b in line.bytes() {
        match b {
            b' ' => n += 1,
            b'\t' => n += 4,
            _ => break,
        }
    }
    n
}

/// `line` without up to `n` columns of leading white space.
fn dedent(line: &str, n: usize) -> &str {
    let mut cols = 0;
    for (i, b) in line.bytes().enumerate() {
        if cols >= n {
            return &line[i..];
        }
        match b {
            b' ' => cols += 1,
            b'\t' => cols += 4,
            _ => return &line[i..],
        }
    }
    ""
}

#[derive(Clone, Copy)]
struct Fence {
    ch: u8,
    len: usize,
}

impl Fence {
    fn open(t: &str) -> Option<Fence> {
        let ch = *t.as_bytes().first()?;
        if ch != b'`' && ch != b'~' {
            return None;
        }
        let len = t.bytes().take_while(|&b| b == ch).count();
        // A backtick fence's info string has no backtick (else it is inline code).
        (len >= 3 && !(ch == b'`' && t[len..].contains('`'))).then_some(Fence { ch, len })
    }

    fn closes(self, t: &str) -> bool {
        let n = t.bytes().take_while(|&b| b == self.ch).count();
        n >= self.len && t[n..].trim().is_empty()
    }
}

/// A fenced code block; an unclosed fence (an answer still being written) runs to the end.
fn code_block(lines: &[&str], start: usize, indent: usize, fence: Fence, out: &mut Out) -> usize {
    let info = lines[start].trim_start()[fence.len..].trim();
    let lang = info.split_whitespace().next().unwrap_or("");
    out.tag("<pre><code");
    if !lang.is_empty() && lang.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'+' | b'#')) {
        out.tag(" class=\"language-");
        out.tag(lang);
        out.tag("\"");
    }
    out.tag(">");
    let mut i = start + 1;
    while i < lines.len() {
        if fence.closes(lines[i].trim_start()) {
            i += 1;
            break;
        }
        out.code(dedent(lines[i], indent));
        out.code("\n");
        i += 1;
    }
    out.end("</code></pre>");
    i
}

/// `# Title` … `###### Title` (closing `#`s dropped).
fn heading(t: &str) -> Option<(usize, &str)> {
    let level = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let text = rest.trim();
    let closed = text.trim_end_matches('#');
    let text = if closed.is_empty() || closed.ends_with([' ', '\t']) { closed.trim_end() } else { text };
    Some((level, text))
}

/// `---`, `***` or `___` (spaces allowed between).
fn is_rule(t: &str) -> bool {
    let mut marks = t.bytes().filter(|b| !matches!(b, b' ' | b'\t'));
    let Some(ch) = marks.next() else { return false };
    matches!(ch, b'-' | b'*' | b'_') && {
        let rest: Vec<u8> = marks.collect();
        rest.len() >= 2 && rest.iter().all(|&b| b == ch)
    }
}

/// `> quoted` lines (a following plain line continues the quote's paragraph).
fn quote(lines: &[&str], mut i: usize, depth: usize, out: &mut Out) -> usize {
    let mut inner: Vec<&str> = Vec::new();
    while i < lines.len() {
        let t = lines[i].trim_start();
        if let Some(rest) = t.strip_prefix('>') {
            inner.push(rest.strip_prefix(' ').unwrap_or(rest));
        } else if !t.is_empty() && inner.last().is_some_and(|l| !l.trim().is_empty()) && !ends_paragraph(lines, i) {
            inner.push(t);
        } else {
            break;
        }
        i += 1;
    }
    out.tag("<blockquote>\n");
    blocks(&inner, false, depth + 1, out);
    out.tag("</blockquote>\n");
    i
}

/// A list item's marker: `-`, `*`, `+`, or `1.` / `1)`.
#[derive(Clone, Copy)]
struct Marker {
    /// The bullet, or the delimiter after an ordered item's number.
    ch: u8,
    ordered: bool,
    start: u32,
    /// Bytes from the marker to the item's text.
    width: usize,
    /// Whether it may start a list in the middle of a paragraph (not empty; numbered from 1).
    interrupts: bool,
}

impl Marker {
    fn parse(t: &str) -> Option<Marker> {
        let b = t.as_bytes();
        let digits = b.iter().take_while(|b| b.is_ascii_digit()).count();
        let (ch, ordered, len) = match b.first()? {
            b'-' | b'*' | b'+' => (b[0], false, 1),
            _ if (1..=9).contains(&digits) && matches!(b.get(digits), Some(b'.' | b')')) => {
                (b[digits], true, digits + 1)
            }
            _ => return None,
        };
        let rest = &t[len..];
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            return None;
        }
        let spaces = rest.bytes().take_while(|&b| b == b' ').count();
        let empty = rest.trim().is_empty();
        let width = if empty || spaces > 4 { len + 1 } else { len + spaces };
        let start = if ordered { t[..digits].parse().unwrap_or(1) } else { 1 };
        Some(Marker { ch, ordered, start, width: width.min(t.len()), interrupts: !empty && start == 1 })
    }

    fn same_list(self, other: Marker) -> bool {
        self.ordered == other.ordered && self.ch == other.ch
    }
}

fn list(lines: &[&str], mut i: usize, first: Marker, depth: usize, out: &mut Out) -> usize {
    let base = indent(lines[i]);
    let mut items: Vec<Vec<&str>> = Vec::new();
    let mut loose = false;
    while i < lines.len() {
        let t = lines[i].trim_start();
        let Some(marker) = Marker::parse(t).filter(|m| m.same_list(first) && indent(lines[i]) < base + 2) else {
            break;
        };
        // Lines belong to the item while they are indented under it (two columns are enough:
        // models nest lists under `1.` with two spaces), or continue its paragraph lazily.
        let content = indent(lines[i]) + marker.width;
        let nested = content.min(base + 2);
        let mut item = vec![&t[marker.width..]];
        let mut blank = false;
        i += 1;
        while i < lines.len() {
            let line = lines[i];
            let lt = line.trim_start();
            let ind = indent(line);
            if lt.is_empty() {
                item.push("");
                blank = true;
            } else if ind >= nested {
                // Text after a blank line inside an item makes the list loose (a nested list
                // after one does not).
                loose |= blank && Marker::parse(lt).is_none();
                item.push(dedent(line, content.min(ind)));
                blank = false;
            } else if !blank && Marker::parse(lt).is_none() && !ends_paragraph(lines, i) {
                item.push(lt);
            } else {
                break;
            }
            i += 1;
        }
        while item.last().is_some_and(|l| l.is_empty()) {
            item.pop();
        }
        items.push(item);
        // A blank line between two items makes the list loose.
        loose |= blank
            && lines.get(i).is_some_and(|l| {
                indent(l) < base + 2 && Marker::parse(l.trim_start()).is_some_and(|m| m.same_list(first))
            });
    }
    if first.ordered {
        if first.start == 1 {
            out.tag("<ol>\n");
        } else {
            out.tag("<ol start=\"");
            out.tag(&first.start.to_string());
            out.tag("\">\n");
        }
    } else {
        out.tag("<ul>\n");
    }
    for item in &items {
        out.tag("<li>");
        blocks(item, !loose, depth + 1, out);
        out.tag("</li>\n");
    }
    out.tag(if first.ordered { "</ol>\n" } else { "</ul>\n" });
    i
}

#[derive(Clone, Copy)]
enum Align {
    None,
    Left,
    Center,
    Right,
}

/// A table starts at `i` when the line has a `|` and the next is a delimiter row with as many cells.
fn table_start(lines: &[&str], i: usize) -> Option<Vec<Align>> {
    let head = lines[i];
    let delims = lines.get(i + 1)?.trim();
    if !head.contains('|') || !delims.contains('-') {
        return None;
    }
    let aligns = cells(delims)
        .into_iter()
        .map(|c| {
            let dashes = c.trim_start_matches(':').trim_end_matches(':');
            if dashes.is_empty() || !dashes.bytes().all(|b| b == b'-') {
                return None;
            }
            Some(match (c.starts_with(':'), c.ends_with(':')) {
                (true, true) => Align::Center,
                (true, false) => Align::Left,
                (false, true) => Align::Right,
                (false, false) => Align::None,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    (cells(head).len() == aligns.len()).then_some(aligns)
}

/// A row's cells: split on `|` that is not escaped, outer pipes dropped.
fn cells(row: &str) -> Vec<&str> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = if row.ends_with('|') && !row.ends_with("\\|") { &row[..row.len() - 1] } else { row };
    let mut cells = Vec::new();
    let mut from = 0;
    let b = row.as_bytes();
    for i in 0..b.len() {
        if b[i] == b'|' && (i == 0 || b[i - 1] != b'\\') {
            cells.push(row[from..i].trim());
            from = i + 1;
        }
    }
    cells.push(row[from..].trim());
    cells
}

fn table(lines: &[&str], start: usize, aligns: &[Align], out: &mut Out) -> usize {
    out.tag("<table><thead><tr>");
    row(&cells(lines[start]), aligns, true, out);
    out.tag("</tr></thead><tbody>\n");
    let mut i = start + 2;
    while i < lines.len() && lines[i].contains('|') && !lines[i].trim().is_empty() {
        out.tag("<tr>");
        row(&cells(lines[i]), aligns, false, out);
        out.tag("</tr>\n");
        i += 1;
    }
    out.tag("</tbody></table>\n");
    i
}

fn row(cells: &[&str], aligns: &[Align], head: bool, out: &mut Out) {
    for (n, align) in aligns.iter().enumerate() {
        out.tag(if head { "<th" } else { "<td" });
        out.tag(match align {
            Align::None => ">",
            Align::Left => " style=\"text-align: left\">",
            Align::Center => " style=\"text-align: center\">",
            Align::Right => " style=\"text-align: right\">",
        });
        inline(cells.get(n).copied().unwrap_or(""), out);
        out.tag(if head { "</th>" } else { "</td>" });
        if !out.html {
            out.s.push(if n + 1 == aligns.len() { '\n' } else { ' ' });
        }
    }
}
