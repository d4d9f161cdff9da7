//! An incremental parser for `text/event-stream` bodies (the WHATWG rules that matter here:
//! `event`, `data`, `id` fields, comments, CRLF or LF line ends, frames split anywhere). Used by
//! the panel in the browser, by the server's OpenAI-compatible client and by the tests.

/// Turns a byte stream into text, keeping a multi-byte character that is split across chunks
/// until its remaining bytes arrive.
#[derive(Debug, Default)]
pub struct Utf8Decoder {
    carry: Vec<u8>,
}

impl Utf8Decoder {
    /// The text completed by `bytes`; an error for bytes that can never be UTF-8.
    pub fn push(&mut self, bytes: &[u8]) -> Result<String, std::str::Utf8Error> {
        self.carry.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.carry) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => return Err(e),
        };
        let rest = self.carry.split_off(valid);
        let text = String::from_utf8(std::mem::replace(&mut self.carry, rest)).unwrap_or_default();
        Ok(text)
    }
}

/// One dispatched SSE frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseFrame {
    /// `event:` field; `None` means the default `message`.
    pub event: Option<String>,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// `id:` field, if the frame had one.
    pub id: Option<String>,
}

/// Feed it chunks of text as they arrive; it returns the frames completed so far.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: String,
    event: Option<String>,
    data: Vec<String>,
    id: Option<String>,
    has_field: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a chunk and returns every frame it completed.
    pub fn feed(&mut self, chunk: &str) -> Vec<SseFrame> {
        let mut frames = Vec::new();
        self.feed_with(chunk, |f| frames.push(f));
        frames
    }

    /// Adds a chunk and calls `on_frame` for every frame it completed.
    pub fn feed_with(&mut self, chunk: &str, mut on_frame: impl FnMut(SseFrame)) {
        self.buffer.push_str(chunk);
        let mut consumed = 0;
        let bytes = self.buffer.as_bytes();
        let mut start = 0;
        let mut lines: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => {
                    lines.push((start, i));
                    start = i + 1;
                    consumed = start;
                }
                b'\r' => {
                    // A lone CR at the very end may be the first half of CRLF: wait for more.
                    if i + 1 == bytes.len() {
                        break;
                    }
                    lines.push((start, i));
                    if bytes[i + 1] == b'\n' {
                        i += 1;
                    }
                    start = i + 1;
                    consumed = start;
                }
                _ => {}
            }
            i += 1;
        }
        let buffer = std::mem::take(&mut self.buffer);
        for (s, e) in lines {
            if let Some(frame) = self.line(&buffer[s..e]) {
                on_frame(frame);
            }
        }
        self.buffer = buffer[consumed..].to_owned();
    }

    fn line(&mut self, line: &str) -> Option<SseFrame> {
        if line.is_empty() {
            if !self.has_field {
                return None;
            }
            self.has_field = false;
            let frame = SseFrame {
                event: self.event.take(),
                data: std::mem::take(&mut self.data).join("\n"),
                id: self.id.take(),
            };
            return Some(frame);
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            "id" => self.id = Some(value.to_owned()),
            _ => return None,
        }
        self.has_field = true;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_frames_split_anywhere() {
        let text = "id: 1\nevent: token\ndata: {\"text\":\"a\"}\n\n: keep-alive\n\nid: 2\r\nevent: token\r\ndata: b\r\ndata: c\r\n\r\n";
        for split in 0..text.len() {
            let mut p = SseParser::new();
            let mut frames = p.feed(&text[..split]);
            frames.extend(p.feed(&text[split..]));
            assert_eq!(frames.len(), 2, "split at {split}");
            assert_eq!(frames[0].id.as_deref(), Some("1"));
            assert_eq!(frames[0].event.as_deref(), Some("token"));
            assert_eq!(frames[0].data, "{\"text\":\"a\"}");
            assert_eq!(frames[1].data, "b\nc");
        }
    }

    #[test]
    fn openai_style_data_only_frames() {
        let mut p = SseParser::new();
        let frames = p.feed("data: {\"x\":1}\n\ndata: [DONE]\n\n");
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].event, None);
        assert_eq!(frames[1].data, "[DONE]");
    }

    #[test]
    fn decoder_waits_for_split_characters() {
        let bytes = "a你b".as_bytes();
        let mut d = Utf8Decoder::default();
        assert_eq!(d.push(&bytes[..2]).unwrap(), "a");
        assert_eq!(d.push(&bytes[2..3]).unwrap(), "");
        assert_eq!(d.push(&bytes[3..]).unwrap(), "你b");
        assert!(Utf8Decoder::default().push(&[0xff, 0x41]).is_err());
    }

    #[test]
    fn comments_alone_dispatch_nothing() {
        let mut p = SseParser::new();
        assert!(p.feed(": ping\n\n: ping\n\n").is_empty());
    }
}
