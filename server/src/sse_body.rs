//! SSE responses: frames rendered once by the engine are written as they come, with keep-alive
//! comments while nothing happens. Never compressed, never buffered by proxies.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use parley_app::server::engine::hub::Frame;

/// Keep-alive comment interval.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// An SSE response of `frames`; `hello` is written first when set (a comment, so nothing waits
/// for the first event to know the stream is open).
pub fn sse_response<S>(frames: S, hello: bool) -> Response
where
    S: Stream<Item = Arc<Frame>> + Send + 'static,
{
    let frames = Box::pin(frames);
    let start: Option<Bytes> = hello.then(|| Bytes::from_static(b": connected\n\n"));
    let body = futures::stream::unfold((frames, start), |(mut frames, start)| async move {
        if let Some(hello) = start {
            return Some((Ok::<Bytes, std::io::Error>(hello), (frames, None)));
        }
        match tokio::time::timeout(KEEP_ALIVE, frames.next()).await {
            Ok(Some(frame)) => Some((Ok(frame.sse.clone()), (frames, None))),
            Ok(None) => None,
            Err(_) => Some((Ok(Bytes::from_static(b": keep-alive\n\n")), (frames, None))),
        }
    });
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, no-transform"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
