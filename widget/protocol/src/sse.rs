//! An incremental parser for `text/event-stream` bodies (the WHATWG rules that matter here:
//! `event`, `data`, `id` fields, comments, CRLF or LF line ends, frames split anywhere). Used by
//! the panel in the browser, by the server's OpenAI-compatible client and by the tests.

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

/// Feed it chunks of text (or bytes) as they arrive; it returns the frames completed so far.
/// Lines are cut where they end and handled in place: a chunk costs no copy of the text beyond
/// the unfinished line it leaves in the buffer, and a frame's fields are its only allocations.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The start of a line not yet ended (bytes, so a chunk may end inside a character).
    buffer: Vec<u8>,
    event: Option<String>,
    /// `data:` lines joined with `\n` as they come.
    data: String,
    has_data: bool,
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

    /// Adds a chunk of bytes, which may end inside a character, and returns every frame it
    /// completed; an error for a line that is not UTF-8 (see [`SseParser::feed_bytes_with`]).
    pub fn feed_bytes(&mut self, chunk: &[u8]) -> Result<Vec<SseFrame>, std::str::Utf8Error> {
        let mut frames = Vec::new();
        self.feed_bytes_with(chunk, |f| frames.push(f))?;
        Ok(frames)
    }

    /// Adds a chunk and calls `on_frame` for every frame it completed.
    pub fn feed_with(&mut self, chunk: &str, on_frame: impl FnMut(SseFrame)) {
        // Whole characters in, whole lines out: every line is valid UTF-8.
        let _ = self.feed_bytes_with(chunk.as_bytes(), on_frame);
    }

    /// Adds a chunk of bytes, which may end inside a character, and calls `on_frame` for every
    /// frame it completed. A line that is not UTF-8 is an error (the frames before it were
    /// dispatched; the parser is then of no further use).
    pub fn feed_bytes_with(
        &mut self,
        chunk: &[u8],
        mut on_frame: impl FnMut(SseFrame),
    ) -> Result<(), std::str::Utf8Error> {
        let mut buffer = std::mem::take(&mut self.buffer);
        // When the previous chunk ended on a line end (the usual case), this one is read where it
        // is, not copied.
        let whole = buffer.is_empty();
        if !whole {
            buffer.extend_from_slice(chunk);
        }
        let bytes: &[u8] = if whole { chunk } else { &buffer };
        let mut start = 0;
        let mut result = Ok(());
        while let Some(offset) = memchr::memchr2(b'\n', b'\r', &bytes[start..]) {
            let end = start + offset;
            let next = if bytes[end] == b'\r' {
                match bytes.get(end + 1) {
                    // A lone CR at the very end may be the first half of CRLF: wait for more.
                    None => break,
                    Some(b'\n') => end + 2,
                    Some(_) => end + 1,
                }
            } else {
                end + 1
            };
            match std::str::from_utf8(&bytes[start..end]) {
                Ok(line) => {
                    if let Some(frame) = self.line(line) {
                        on_frame(frame);
                    }
                }
                Err(e) => {
                    result = Err(e);
                    start = bytes.len();
                    break;
                }
            }
            start = next;
        }
        if whole {
            buffer.extend_from_slice(&chunk[start..]);
        } else {
            buffer.drain(..start);
        }
        self.buffer = buffer;
        result
    }

    fn line(&mut self, line: &str) -> Option<SseFrame> {
        if line.is_empty() {
            if !self.has_field {
                return None;
            }
            self.has_field = false;
            self.has_data = false;
            let frame = SseFrame { event: self.event.take(), data: std::mem::take(&mut self.data), id: self.id.take() };
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
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
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
    fn bytes_split_inside_characters_and_line_ends() {
        let text = "event: token\r\ndata: 你好\r\ndata: é\r\n\r\ndata: x\n\n".as_bytes();
        for split in 0..text.len() {
            let mut p = SseParser::new();
            let mut frames = Vec::new();
            p.feed_bytes_with(&text[..split], |f| frames.push(f)).unwrap();
            p.feed_bytes_with(&text[split..], |f| frames.push(f)).unwrap();
            assert_eq!(frames.len(), 2, "split at {split}");
            assert_eq!(frames[0].event.as_deref(), Some("token"));
            assert_eq!(frames[0].data, "你好\né");
            assert_eq!(frames[1].event, None);
            assert_eq!(frames[1].data, "x");
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error_after_the_frames_before_it() {
        let mut p = SseParser::new();
        let mut frames = Vec::new();
        let result = p.feed_bytes_with(b"data: a\n\ndata: \xff\n\n", |f| frames.push(f));
        assert!(result.is_err());
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].data, "a");
    }

    #[test]
    fn an_empty_data_line_counts() {
        let mut p = SseParser::new();
        let frames = p.feed("data:\ndata: b\n\ndata\n\n");
        assert_eq!(frames.iter().map(|f| f.data.as_str()).collect::<Vec<_>>(), ["\nb", ""]);
    }

    #[test]
    fn comments_alone_dispatch_nothing() {
        let mut p = SseParser::new();
        assert!(p.feed(": ping\n\n: ping\n\n").is_empty());
    }
}
