//! What the fake upstreams ([`crate::fake_openai`], [`crate::fake_anthropic`]) share: cutting
//! text into streamed words, HTTP error answers with scripted headers, and SSE bodies whose
//! pieces arrive after scripted pauses.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

/// `text` cut after every space (each piece keeps its trailing space).
pub(crate) fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if c == ' ' {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A JSON answer with `status` and the scripted `headers` (ones that are not valid are left out).
pub(crate) fn status_reply(status: u16, headers: Vec<(String, String)>, body: String) -> Response {
    let mut r = (StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), body).into_response();
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k), HeaderValue::try_from(v)) {
            r.headers_mut().insert(k, v);
        }
    }
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// A body that sends each `(pause before, bytes)` item in turn.
pub(crate) fn timed_body(items: Vec<(Duration, Bytes)>) -> Body {
    let stream = futures::stream::unfold(items.into_iter(), |mut items| async move {
        let (pause, bytes) = items.next()?;
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        Some((Ok::<Bytes, std::io::Error>(bytes), items))
    });
    Body::from_stream(stream)
}

/// An event-stream answer with `body`.
pub(crate) fn sse(body: Body) -> Response {
    let mut r = Response::new(body);
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_their_spaces() {
        assert_eq!(split_words("Hello big world"), ["Hello ", "big ", "world"]);
        assert!(split_words("").is_empty());
    }
}
