//! The one HTML escaper: the panel's Markdown renderer, the server's own pages and mails.

/// `text` escaped for HTML text and quoted attribute values (`&`, `<`, `>`, `"`, `'`): the one
/// escaper of the server's own pages and mails as well.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    escape_into(&mut out, text, false);
    out
}

/// Appends `text` to `out` escaped as [`escape_html`] does; with `keep_references`, an `&` that
/// starts a character reference (`&amp;`, `&#123;`, `&#x1F600;`) is kept as it is (Markdown text).
pub fn escape_into(out: &mut String, text: &str, keep_references: bool) {
    let _ = escape_to(out, text, keep_references);
}

/// [`escape_into`] for any writer (a formatter: the panel's templates escape their arguments as
/// they are written, with this same code).
pub fn escape_to(out: &mut dyn core::fmt::Write, text: &str, keep_references: bool) -> core::fmt::Result {
    let mut from = 0;
    for (i, b) in text.bytes().enumerate() {
        let rep = match b {
            b'&' if keep_references && is_reference(&text[i..]) => continue,
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.write_str(&text[from..i])?;
        out.write_str(rep)?;
        from = i + 1;
    }
    out.write_str(&text[from..])
}

/// `&name;`, `&#123;` or `&#x1F600;` at the start of `s`.
fn is_reference(s: &str) -> bool {
    let body = &s.as_bytes()[1..];
    let end = body.iter().take(33).position(|&b| b == b';');
    match end {
        Some(n) if n > 0 => {
            let name = &body[..n];
            match name {
                [b'#', b'x' | b'X', hex @ ..] => !hex.is_empty() && hex.iter().all(u8::is_ascii_hexdigit),
                [b'#', dec @ ..] => !dec.is_empty() && dec.iter().all(u8::is_ascii_digit),
                _ => name.iter().all(u8::is_ascii_alphanumeric),
            }
        }
        _ => false,
    }
}
