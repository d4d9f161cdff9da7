//! PDF: the text layer, read with `pdf-extract` (on `lopdf`), or `lopdf`'s own extractor.
//!
//! `pdf-extract` lays text out best (line and paragraph breaks from the glyphs' positions) and
//! maps glyphs back to characters through the fonts' ToUnicode maps, so Chinese in embedded
//! TrueType subsets (fpdf2, Word, browsers' "print to PDF") reads back. It does not know the
//! predefined CJK CMaps of the non-embedded Adobe fonts (`STSong-Light` with `UniGB-UCS2-H`,
//! as reportlab and older tools write): it panics on them. `lopdf::Document::extract_text`
//! decodes those, so a PDF with such a font goes to it instead (both kinds are in the tests).
//! Both parsers unwrap in places on damaged files, so each call runs under `catch_unwind`: a
//! bad upload gives an error, never a crashed worker.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pdf_extract::{Document as Pdf, Object, PlainTextOutput, output_doc};

use super::{Document, ReadError};
use crate::html::tidy;

pub(super) fn read(name: &str, stem: &str, bytes: &[u8]) -> Result<Document, ReadError> {
    let damaged = |reason: String| ReadError::Damaged { name: name.to_owned(), kind: "PDF", reason };
    let (title, text) = catch_unwind(AssertUnwindSafe(|| extract(bytes)))
        .map_err(|_| damaged("the parser gave up on it".to_owned()))?
        .map_err(damaged)?;
    let text = text.replace('\u{0}', "");
    let markdown = tidy(&text);
    if markdown.is_empty() {
        return Err(ReadError::NoText { name: name.to_owned() });
    }
    let lang = crate::lang::detect(&markdown);
    Ok(Document { title: title.unwrap_or_else(|| stem.to_owned()), markdown, lang })
}

/// `(metadata title, text)` of a PDF.
fn extract(bytes: &[u8]) -> Result<(Option<String>, String), String> {
    let mut pdf = Pdf::load_mem(bytes).map_err(|e| e.to_string())?;
    if pdf.is_encrypted() {
        // Many PDFs are "encrypted" with an empty password only to set permissions.
        pdf.decrypt("").map_err(|_| "it is protected by a password".to_owned())?;
    }
    let layout = || {
        let mut text = String::new();
        output_doc(&pdf, &mut PlainTextOutput::new(&mut text)).map(|()| text).map_err(|e| e.to_string())
    };
    let plain = || {
        let pages: Vec<u32> = pdf.get_pages().keys().copied().collect();
        pdf.extract_text(&pages).map_err(|e| e.to_string())
    };
    let text = if has_predefined_cjk_cmap(&pdf) {
        catch_unwind(AssertUnwindSafe(plain))
    } else {
        catch_unwind(AssertUnwindSafe(layout)).or_else(|_| catch_unwind(AssertUnwindSafe(plain)))
    };
    let text = text.map_err(|_| "the parser gave up on it".to_owned())??;
    Ok((title(&pdf), text))
}

/// Whether a composite font uses a predefined CMap other than Identity (`UniGB-UCS2-H`, ...).
fn has_predefined_cjk_cmap(pdf: &Pdf) -> bool {
    pdf.objects.values().any(|object| {
        let Object::Dictionary(dict) = object else { return false };
        let is_type0 = matches!(dict.get(b"Subtype"), Ok(Object::Name(name)) if name == b"Type0");
        let cmap = match dict.get(b"Encoding") {
            Ok(Object::Name(name)) => Some(name),
            _ => None,
        };
        is_type0 && cmap.is_some_and(|name| !name.starts_with(b"Identity"))
    })
}

/// The `/Title` of the document information dictionary.
fn title(pdf: &Pdf) -> Option<String> {
    let info = match pdf.trailer.get(b"Info").ok()? {
        Object::Reference(id) => pdf.get_dictionary(*id).ok()?,
        Object::Dictionary(dict) => dict,
        _ => return None,
    };
    let Object::String(bytes, _) = info.get(b"Title").ok()? else { return None };
    let title = text_string(bytes);
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    // Tools' placeholders say nothing: reportlab's "untitled", Word's "Microsoft Word - a.docx".
    let placeholder = title.is_empty() || title.to_lowercase().starts_with("untitled");
    let title = title.strip_prefix("Microsoft Word - ").map(str::to_owned).unwrap_or(title);
    (!placeholder).then_some(title)
}

/// A PDF text string: UTF-16BE after a byte order mark, UTF-8 after its mark (PDF 2.0), else
/// PDFDocEncoding (read as Latin-1, which it matches for letters).
fn text_string(bytes: &[u8]) -> String {
    if let Some(utf16) = bytes.strip_prefix(b"\xFE\xFF") {
        let units: Vec<u16> = utf16.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(utf8) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return String::from_utf8_lossy(utf8).into_owned();
    }
    bytes.iter().map(|&b| b as char).collect()
}
