//! SSE responses: frames rendered once by the engine are written as they come, with keep-alive
//! comments while nothing happens. Never compressed, never buffered by proxies.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use parley_engine::engine::hub::Frame;
use tokio_util::sync::CancellationToken;

/// How long a closing stream still writes the frames already on their way.
const CLOSE_DELAY: Duration = Duration::from_millis(250);

/// Keep-alive comment interval.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Counts an open answer stream (the `parley_open_streams` gauge) while it lives.
struct OpenStream;

impl OpenStream {
    fn new() -> Self {
        metrics::gauge!("parley_open_streams").increment(1.0);
        crate::memory::stream_opened();
        OpenStream
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        metrics::gauge!("parley_open_streams").decrement(1.0);
        crate::memory::stream_closed();
    }
}

/// `frames`, holding `permit` (room in the stream limits) until the stream is dropped.
pub fn held_while_open<S, P>(frames: S, permit: P) -> impl Stream<Item = Arc<Frame>> + Send + 'static
where
    S: Stream<Item = Arc<Frame>> + Send + 'static,
    P: Send + Sync + 'static,
{
    let open = OpenStream::new();
    frames.map(move |frame| {
        let _held = (&permit, &open);
        frame
    })
}

/// `frames` until one of them is `idle` late (a stream with nothing to say ends; zero: never).
pub fn ends_when_idle<S>(frames: S, idle: Duration) -> std::pin::Pin<Box<dyn Stream<Item = Arc<Frame>> + Send>>
where
    S: Stream<Item = Arc<Frame>> + Send + 'static,
{
    if idle.is_zero() {
        return Box::pin(frames);
    }
    Box::pin(
        tokio_stream::StreamExt::timeout(frames, idle)
            .take_while(|next| futures::future::ready(next.is_ok()))
            .filter_map(|next| futures::future::ready(next.ok())),
    )
}

/// An SSE response of `frames`; `hello` is written first when set (a comment, so nothing waits
/// for the first event to know the stream is open).
///
/// The stream ends when `closing` is cancelled (a shutdown, once the answers have ended): the
/// client sees a clean end and resumes, on another replica, from its `Last-Event-ID`.
pub fn sse_response<S>(frames: S, hello: bool, closing: &CancellationToken) -> Response
where
    S: Stream<Item = Arc<Frame>> + Send + 'static,
{
    // Frames already sent to the stream (an answer's last events) still go out before it ends.
    let closing = closing.clone();
    let frames = frames.take_until(async move {
        closing.cancelled().await;
        tokio::time::sleep(CLOSE_DELAY).await;
    });
    // One periodic timer per stream (not one per event); a comment every interval keeps proxies
    // and browsers from closing a quiet stream.
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let keep_alive = futures::stream::unfold(ticks, |mut ticks| async move {
        ticks.tick().await;
        Some((Bytes::from_static(b": keep-alive\n\n"), ticks))
    });
    // Frames that are already waiting go out in one write: under load that saves a system call
    // (and a TCP segment) per event; when idle each frame still leaves at once.
    let frames = frames.ready_chunks(64).map(|chunk| match chunk.as_slice() {
        [one] => one.sse.clone(),
        many => {
            let mut joined = bytes::BytesMut::with_capacity(many.iter().map(|f| f.sse.len()).sum());
            for f in many {
                joined.extend_from_slice(&f.sse);
            }
            joined.freeze()
        }
    });
    // Ends with the frames (the keep-alive stream never ends by itself).
    let merged = futures::stream::select_with_strategy(
        frames.map(Some).chain(futures::stream::once(async { None })),
        keep_alive.map(Some),
        |_: &mut ()| futures::stream::PollNext::Left,
    )
    .take_while(|item| futures::future::ready(item.is_some()))
    .filter_map(futures::future::ready);
    let start = futures::stream::iter(hello.then(|| Bytes::from_static(b": connected\n\n")));
    let body = start.chain(merged).map(Ok::<Bytes, std::io::Error>);
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache, no-transform"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
