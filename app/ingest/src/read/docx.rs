//! DOCX: `word/document.xml` out of the zip, walked with `quick-xml`, into Markdown.
//!
//! Not `docx-rs`: it is a writer first, its reader builds the whole object model and pulls in
//! `image` by default, for the few elements Markdown can show. Here: paragraphs, headings (by
//! the style's name in `styles.xml`, so a Chinese Word's style ids "1", "2" work too), bulleted
//! and numbered lists (list styles, or `numPr` with `numbering.xml`'s format), tables as GFM
//! pipes, hyperlinks with their targets, and the title from `docProps/core.xml`.

use std::collections::HashMap;
use std::io::{Cursor, Read as _};

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::{Document, ReadError, first_heading};

/// The most bytes read from one part of the zip: a zip bomb stops here.
const MAX_PART: u64 = 64 * 1024 * 1024;

pub(super) fn read(name: &str, stem: &str, bytes: &[u8]) -> Result<Document, ReadError> {
    let damaged = |reason: String| ReadError::Damaged { name: name.to_owned(), kind: "DOCX", reason };
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| damaged(e.to_string()))?;
    let mut part = |path: &str| -> Option<String> {
        let mut text = String::new();
        zip.by_name(path).ok()?.take(MAX_PART).read_to_string(&mut text).ok()?;
        Some(text)
    };
    let body = part("word/document.xml").ok_or_else(|| damaged("no word/document.xml".to_owned()))?;
    let styles = part("word/styles.xml").map(|xml| style_names(&xml)).unwrap_or_default();
    let numbering = part("word/numbering.xml").map(|xml| numbered_lists(&xml)).unwrap_or_default();
    let links = part("word/_rels/document.xml.rels").map(|xml| link_targets(&xml)).unwrap_or_default();
    let core_title = part("docProps/core.xml").and_then(|xml| core_title(&xml));
    let context = Context { styles, numbering, links };
    let markdown = markdown(&body, &context).map_err(damaged)?;
    let title = core_title.or_else(|| first_heading(&markdown)).unwrap_or_else(|| stem.to_owned());
    let lang = crate::lang::detect(&markdown);
    Ok(Document { title, markdown, lang })
}

/// What `document.xml` refers to in the other parts.
struct Context {
    /// Style id to its lowercased name ("Heading1" or "1" to "heading 1").
    styles: HashMap<String, String>,
    /// Numbering ids whose lists are numbered rather than bulleted (at level 0).
    numbering: HashMap<String, bool>,
    /// Relationship id to a hyperlink's target.
    links: HashMap<String, String>,
}

/// The paragraph being read.
#[derive(Default)]
struct Para {
    style: String,
    list_level: Option<usize>,
    num_id: Option<String>,
    text: String,
    link: Option<(String, usize)>,
}

/// The value of an attribute by its local name (`w:val` is `val`).
fn attr(element: &BytesStart, local: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
}

/// Converts `document.xml`'s body to Markdown.
fn markdown(xml: &str, context: &Context) -> Result<String, String> {
    let mut reader = Reader::from_str(xml);
    let mut blocks: Vec<(String, bool)> = Vec::new();
    let mut para: Option<Para> = None;
    // Open tables, innermost last: rows of cells.
    let mut tables: Vec<Vec<Vec<String>>> = Vec::new();
    let mut in_text = false;
    loop {
        let event = reader.read_event().map_err(|e| format!("bad XML: {e}"))?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                match e.local_name().as_ref() {
                    "p" if !empty => para = Some(Para::default()),
                    "pStyle" => set(&mut para, |p| p.style = attr(e, "val").unwrap_or_default()),
                    "ilvl" => set(&mut para, |p| p.list_level = attr(e, "val").and_then(|v| v.parse().ok())),
                    "numId" => set(&mut para, |p| p.num_id = attr(e, "val")),
                    "t" if !empty => in_text = true,
                    "ta" => set(&mut para, |p| p.text.push(' ')),
                    "br" | "cr" => set(&mut para, |p| p.text.push(' ')),
                    "hyperlink" if !empty => {
                        let target = attr(e, "id").and_then(|id| context.links.get(&id).cloned());
                        set(&mut para, |p| p.link = target.map(|t| (t, p.text.len())));
                    }
                    "tbl" if !empty => tables.push(Vec::new()),
                    "tr" if !empty => tables.last_mut().into_iter().for_each(|t| t.push(Vec::new())),
                    "tc" if !empty => {
                        tables.last_mut().and_then(|t| t.last_mut()).into_iter().for_each(|r| r.push(String::new()))
                    }
                    _ => {}
                }
            }
            Event::Text(t) if in_text => set(&mut para, |p| p.text.push_str(&t.xml10_content())),
            Event::GeneralRef(r) if in_text => {
                let c = r.resolve_char_ref().ok().flatten().map(String::from);
                let s = c.or_else(|| quick_xml::escape::resolve_xml_entity(&r).map(str::to_owned));
                set(&mut para, |p| p.text.push_str(&s.unwrap_or_default()));
            }
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "hyperlink" => set(&mut para, |p| {
                    if let Some((target, start)) = p.link.take()
                        && let Some(label) = p.text.get(start..).map(str::trim).filter(|l| !l.is_empty())
                    {
                        let link = format!("[{label}]({target})");
                        p.text.truncate(start);
                        p.text.push_str(&link);
                    }
                }),
                "p" => {
                    let Some(p) = para.take() else { continue };
                    let cell = tables.last_mut().and_then(|t| t.last_mut()).and_then(|r| r.last_mut());
                    match cell {
                        Some(cell) => append_cell(cell, &p.text),
                        None => blocks.extend(paragraph(p, context)),
                    }
                }
                "tbl" => {
                    if let Some(rows) = tables.pop() {
                        let table = gfm_table(&rows);
                        match tables.last_mut().and_then(|t| t.last_mut()).and_then(|r| r.last_mut()) {
                            Some(cell) => append_cell(cell, &table.replace('\n', " ")),
                            None if !table.is_empty() => blocks.push((table, false)),
                            None => {}
                        }
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(join_blocks(&blocks))
}

/// Runs `f` on the open paragraph, if there is one.
fn set(para: &mut Option<Para>, f: impl FnOnce(&mut Para)) {
    if let Some(p) = para {
        f(p);
    }
}

fn append_cell(cell: &mut String, text: &str) {
    let text = text.trim();
    if !text.is_empty() {
        if !cell.is_empty() {
            cell.push(' ');
        }
        cell.push_str(text);
    }
}

/// A paragraph as a Markdown block: `(text, is a list item)`.
fn paragraph(p: Para, context: &Context) -> Option<(String, bool)> {
    let text = p.text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return None;
    }
    let style = context.styles.get(&p.style).cloned().unwrap_or_else(|| p.style.to_lowercase());
    let style = style.replace(' ', "");
    if style == "title" {
        return Some((format!("# {text}"), false));
    }
    if let Some(level) = style.strip_prefix("heading").and_then(|n| n.parse::<usize>().ok()) {
        return Some((format!("{} {text}", "#".repeat(level.clamp(1, 6))), false));
    }
    let numbered = match (&p.num_id, style.as_str()) {
        (Some(id), _) if id != "0" => context.numbering.get(id).copied(),
        (_, s) if s.starts_with("listnumber") => Some(true),
        (_, s) if s.starts_with("listbullet") || s.starts_with("listparagraph") => Some(false),
        _ => None,
    };
    let Some(numbered) = numbered else { return Some((text, false)) };
    let depth = p.list_level.unwrap_or(0).min(8);
    let marker = if numbered { "1." } else { "-" };
    Some((format!("{}{marker} {text}", "  ".repeat(depth)), true))
}

/// Blocks joined by blank lines; consecutive list items by single newlines.
fn join_blocks(blocks: &[(String, bool)]) -> String {
    let mut out = String::new();
    let mut last_list = false;
    for (text, list) in blocks {
        if !out.is_empty() {
            out.push_str(if *list && last_list { "\n" } else { "\n\n" });
        }
        out.push_str(text);
        last_list = *list;
    }
    out
}

/// Rows as a GFM table, the first row as its header.
fn gfm_table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let line = |row: &[String]| {
        let cells: Vec<String> =
            (0..width).map(|i| row.get(i).map_or(String::new(), |c| c.replace('|', "\\|"))).collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut lines = vec![line(&rows[0]), format!("|{}", " --- |".repeat(width))];
    lines.extend(rows[1..].iter().map(|row| line(row)));
    lines.join("\n")
}

/// Reads every element of `xml` and hands start tags to `f`.
fn each_start(xml: &str, mut f: impl FnMut(&BytesStart, &mut Reader<&[u8]>)) {
    let mut reader = Reader::from_str(xml);
    while let Ok(event) = reader.read_event() {
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => f(e, &mut reader),
            Event::Eof => break,
            _ => {}
        }
    }
}

fn style_names(xml: &str) -> HashMap<String, String> {
    let mut names = HashMap::new();
    let mut current = None;
    each_start(xml, |e, _| match e.local_name().as_ref() {
        "style" => current = attr(e, "styleId"),
        "name" => {
            if let (Some(id), Some(name)) = (current.take(), attr(e, "val")) {
                names.insert(id, name.to_lowercase());
            }
        }
        _ => {}
    });
    names
}

/// `numId` to whether its level 0 is numbered (any format but `bullet`).
fn numbered_lists(xml: &str) -> HashMap<String, bool> {
    let mut abstract_numbered: HashMap<String, bool> = HashMap::new();
    let mut nums: Vec<(String, String)> = Vec::new();
    let (mut abstract_id, mut num_id, mut level) = (None, None, None);
    each_start(xml, |e, _| match e.local_name().as_ref() {
        "abstractNum" => abstract_id = attr(e, "abstractNumId"),
        "lvl" => level = attr(e, "ilvl"),
        "numFmt" if level.as_deref() == Some("0") => {
            if let Some(id) = abstract_id.clone() {
                abstract_numbered.insert(id, attr(e, "val").is_some_and(|v| v != "bullet"));
            }
        }
        "num" => num_id = attr(e, "numId"),
        "abstractNumId" => {
            if let (Some(num), Some(abs)) = (num_id.take(), attr(e, "val")) {
                nums.push((num, abs));
            }
        }
        _ => {}
    });
    nums.into_iter().map(|(num, abs)| (num, abstract_numbered.get(&abs).copied().unwrap_or(false))).collect()
}

/// Relationship id to target, for hyperlinks.
fn link_targets(xml: &str) -> HashMap<String, String> {
    let mut targets = HashMap::new();
    each_start(xml, |e, _| {
        if e.local_name().as_ref() == "Relationship"
            && attr(e, "Type").is_some_and(|t| t.ends_with("/hyperlink"))
            && let (Some(id), Some(target)) = (attr(e, "Id"), attr(e, "Target"))
        {
            targets.insert(id, target);
        }
    });
    targets
}

/// `dc:title` of `docProps/core.xml`.
fn core_title(xml: &str) -> Option<String> {
    let mut title = None;
    each_start(xml, |e, reader| {
        if e.local_name().as_ref() == "title"
            && let Ok(Event::Text(t)) = reader.read_event()
        {
            title = Some(t.xml10_content().split_whitespace().collect::<Vec<_>>().join(" "));
        }
    });
    title.filter(|t| !t.is_empty())
}
