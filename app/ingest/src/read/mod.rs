//! Files an owner uploads, read into Markdown (or question/answer snippets for a CSV).
//!
//! The kind comes from the file name's extension, checked against the first bytes where a wrong
//! name would otherwise give garbage (`%PDF` for a PDF, a zip header for a DOCX); a file with
//! an unknown extension is still read when its bytes say PDF or DOCX. Every failure is a
//! [`ReadError`] whose message names the file and says what to do, since the owner reads it.

mod docx;
mod pdf;
mod text;

/// A file an owner uploaded, as Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The document's own title (PDF metadata, first heading, front matter), else the file name
    /// without its extension.
    pub title: String,
    /// The content as Markdown.
    pub markdown: String,
    /// The language the document declares, else the one detected from its text.
    pub lang: Option<String>,
}

/// What a file holds: a document, or question/answer pairs from a CSV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    Document(Document),
    Snippets(Vec<Snippet>),
}

/// One question and its answer, from a CSV of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    pub question: String,
    pub answer: String,
}

/// Why a file could not be read; each message starts with the file's name.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{name}: not a supported type (PDF, DOCX, HTML, Markdown, text, CSV)")]
    Unsupported { name: String },
    #[error("{name}: the file is empty")]
    Empty { name: String },
    #[error("{name}: no text layer (a scanned PDF?)")]
    NoText { name: String },
    #[error("{name}: not a readable {kind} file ({reason})")]
    Damaged { name: String, kind: &'static str, reason: String },
    #[error("{name}: not text in UTF-8 or GB18030")]
    Encoding { name: String },
    #[error("{name}: {reason}")]
    Csv { name: String, reason: String },
}

/// The kinds of file read, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pdf,
    Docx,
    Html,
    Markdown,
    Text,
    Csv,
}

/// Reads an uploaded file named `name` (its kind from the extension, case-insensitive, and the
/// bytes where it matters). Never panics on bad bytes.
pub fn read_file(name: &str, bytes: &[u8]) -> Result<Read, ReadError> {
    let named = || name.to_owned();
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ReadError::Empty { name: named() });
    }
    let kind = kind(name, bytes).ok_or_else(|| ReadError::Unsupported { name: named() })?;
    let stem = stem(name);
    let document = match kind {
        Kind::Pdf => pdf::read(name, &stem, bytes)?,
        Kind::Docx => docx::read(name, &stem, bytes)?,
        Kind::Csv => return text::read_csv(name, &decode(name, bytes)?).map(Read::Snippets),
        Kind::Html => text::read_html(&stem, &decode(name, bytes)?),
        Kind::Markdown => text::read_markdown(&stem, &decode(name, bytes)?),
        Kind::Text => text::read_text(&stem, &decode(name, bytes)?),
    };
    if document.markdown.trim().is_empty() {
        return Err(match kind {
            Kind::Pdf => ReadError::NoText { name: named() },
            _ => ReadError::Empty { name: named() },
        });
    }
    Ok(Read::Document(document))
}

/// The kind of a file: the extension's, unless the bytes say otherwise; sniffed without one.
fn kind(name: &str, bytes: &[u8]) -> Option<Kind> {
    let extension = name.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()).unwrap_or_default();
    let is_pdf = bytes.len() >= 5 && bytes[..bytes.len().min(1024)].windows(5).any(|w| w == b"%PDF-");
    let is_zip = bytes.starts_with(b"PK\x03\x04");
    let by_name = match extension.as_str() {
        "pdf" => Some(Kind::Pdf),
        "docx" => Some(Kind::Docx),
        "html" | "htm" | "xhtml" => Some(Kind::Html),
        "md" | "markdown" => Some(Kind::Markdown),
        "txt" | "text" => Some(Kind::Text),
        "csv" => Some(Kind::Csv),
        _ => None,
    };
    match by_name {
        // A binary file named as text is not read as text.
        Some(Kind::Html | Kind::Markdown | Kind::Text | Kind::Csv) if is_pdf => Some(Kind::Pdf),
        Some(Kind::Html | Kind::Markdown | Kind::Text | Kind::Csv) if is_zip => Some(Kind::Docx),
        Some(kind) => Some(kind),
        None if is_pdf => Some(Kind::Pdf),
        None if is_zip => Some(Kind::Docx),
        None => None,
    }
}

/// The file name without folders and without its extension.
fn stem(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = match base.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => base,
    };
    stem.trim().to_owned()
}

/// Text bytes as a string: UTF-8 (a BOM dropped), else GB18030 (what Chinese Windows saves
/// text in), else an error.
fn decode(name: &str, bytes: &[u8]) -> Result<String, ReadError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(text.to_owned());
    }
    encoding_rs::GB18030
        .decode_without_bom_handling_and_without_replacement(bytes)
        .map(|text| text.into_owned())
        .ok_or_else(|| ReadError::Encoding { name: name.to_owned() })
}

/// The first heading of some Markdown, as plain text.
fn first_heading(markdown: &str) -> Option<String> {
    markdown
        .lines()
        .find(|line| line.starts_with('#') && line.trim_start_matches('#').starts_with(' '))
        .map(crate::passages::heading_text)
        .filter(|title| !title.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name_and_bytes() {
        assert_eq!(kind("A.PDF", b"%PDF-1.7"), Some(Kind::Pdf));
        assert_eq!(kind("scan", b"%PDF-1.4 ..."), Some(Kind::Pdf));
        assert_eq!(kind("notes.txt", b"PK\x03\x04..."), Some(Kind::Docx));
        assert_eq!(kind("x.exe", b"MZ"), None);
        assert_eq!(stem("dir/Report 2024.final.pdf"), "Report 2024.final");
        assert_eq!(stem(".env"), ".env");
    }

    #[test]
    fn decodes_gb18030() {
        let (gbk, _, _) = encoding_rs::GB18030.encode("退款政策");
        assert_eq!(decode("a.txt", &gbk).ok().as_deref(), Some("退款政策"));
    }
}
