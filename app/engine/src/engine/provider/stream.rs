//! How a streamed answer is read: bytes → server-sent events → a wire format's parser → model
//! events, with the first-byte and idle timeouts of the body (one timer for the whole body).

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use parley_protocol::sse::SseParser;

use super::transport::{TransportSettings, WireFormat, without_url};
use super::{ModelEvent, ProviderError};

/// Where a parser puts what it read.
#[derive(Default)]
pub struct Sink {
    pending: VecDeque<Result<ModelEvent, ProviderError>>,
    done: bool,
}

impl Sink {
    /// The next event of the answer.
    pub fn push(&mut self, event: ModelEvent) {
        self.pending.push_back(Ok(event));
    }

    /// The answer failed; nothing after this is read.
    pub fn fail(&mut self, error: ProviderError) {
        self.pending.push_back(Err(error));
        self.done = true;
    }

    /// The answer is complete; nothing after this is read.
    pub fn close(&mut self) {
        self.done = true;
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// What was read so far (tests).
    #[cfg(test)]
    pub fn drain(&mut self) -> Vec<Result<ModelEvent, ProviderError>> {
        self.pending.drain(..).collect()
    }

    #[cfg(test)]
    pub fn pop(&mut self) -> Option<Result<ModelEvent, ProviderError>> {
        self.pending.pop_front()
    }

    #[cfg(test)]
    pub fn pending(&self) -> &VecDeque<Result<ModelEvent, ProviderError>> {
        &self.pending
    }
}

/// Reads a streamed body: bytes → server-sent events (whole lines, checked as UTF-8) → the wire
/// format's parser → model events.
pub struct Reader<W> {
    parser: SseParser,
    wire: W,
    pub sink: Sink,
}

impl<W: WireFormat> Default for Reader<W> {
    fn default() -> Self {
        Reader { parser: SseParser::new(), wire: W::default(), sink: Sink::default() }
    }
}

impl<W: WireFormat> Reader<W> {
    /// Appends bytes (a chunk may end inside a character or a line) and parses the frames they
    /// complete.
    pub fn bytes(&mut self, chunk: &[u8]) {
        if self.sink.done {
            return;
        }
        let Reader { parser, wire, sink } = self;
        let parsed = parser.feed_bytes_with(chunk, |frame| {
            if !sink.done {
                wire.frame(frame, sink);
            }
        });
        if parsed.is_err() && !self.sink.done {
            self.sink.fail(ProviderError::Protocol("invalid UTF-8 in stream".into()));
        }
    }

    /// The body ended.
    pub fn end(&mut self) {
        if !self.sink.done {
            self.wire.end(&mut self.sink);
            self.sink.done = true;
        }
    }
}

/// The stream of model events of a streamed body, with the first-byte and idle timeouts.
pub(super) fn drive<S, W>(
    body: S,
    settings: TransportSettings,
    started: Instant,
) -> impl Stream<Item = Result<ModelEvent, ProviderError>> + Send
where
    S: Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static,
    W: WireFormat,
{
    let first = tokio::time::Instant::from_std(started + settings.first_byte_timeout);
    Body {
        body,
        reader: Reader::<W>::default(),
        timer: Box::pin(tokio::time::sleep_until(first)),
        last_activity: None,
        yielded: false,
        idle: settings.idle_timeout,
    }
}

/// A streamed body read as model events: a hand-written [`Stream`], so that relaying a chunk
/// moves none of this state (a burst relays tens of thousands of chunks a second).
///
/// One timer serves the whole body: it is not re-armed for every chunk; when it fires early,
/// because chunks came meanwhile, it is set again from the last chunk (or the last time the
/// answer asked for more).
struct Body<S, W> {
    body: S,
    reader: Reader<W>,
    /// The first-byte deadline, then the idle one (moved on lazily).
    timer: Pin<Box<tokio::time::Sleep>>,
    /// The last chunk, or the last time the answer asked for more after one.
    last_activity: Option<tokio::time::Instant>,
    /// An event was handed out and the answer has not asked for the next one yet.
    yielded: bool,
    idle: Duration,
}

impl<S, W> Stream for Body<S, W>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
    W: WireFormat,
{
    type Item = Result<ModelEvent, ProviderError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let st = self.get_mut();
        if std::mem::take(&mut st.yielded) && st.last_activity.is_some() {
            // Silence is the upstream's only while we are reading: the time the answer spent
            // elsewhere (waiting for room in the writer's queue) does not count.
            st.last_activity = Some(tokio::time::Instant::now());
        }
        loop {
            if let Some(item) = st.reader.sink.pending.pop_front() {
                st.yielded = true;
                return Poll::Ready(Some(item));
            }
            if st.reader.sink.done {
                return Poll::Ready(None);
            }
            // The body first: a chunk that is ready counts even when the deadline has passed.
            match st.body.poll_next_unpin(cx) {
                Poll::Ready(None) => st.reader.end(),
                Poll::Ready(Some(Err(e))) => st.reader.sink.fail(ProviderError::Connect(without_url(&e))),
                Poll::Ready(Some(Ok(bytes))) => {
                    let now = tokio::time::Instant::now();
                    if st.last_activity.replace(now).is_none() {
                        // From the first-byte deadline to the idle one.
                        st.timer.as_mut().reset(now + st.idle);
                    }
                    st.reader.bytes(&bytes);
                }
                Poll::Pending => match st.timer.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(()) => match st.last_activity {
                        // Nothing came before the first-byte deadline.
                        None => st.reader.sink.fail(ProviderError::Timeout("idle")),
                        Some(last) if last.elapsed() >= st.idle => st.reader.sink.fail(ProviderError::Timeout("idle")),
                        // Chunks came meanwhile: wait from the last one (polled again above).
                        Some(last) => st.timer.as_mut().reset(last + st.idle),
                    },
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::openai::OpenAiWire;

    /// A token chunk of an OpenAI-compatible stream.
    fn token(text: &str) -> Bytes {
        Bytes::from(format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n"))
    }

    /// A body whose chunks come after the given pauses (then it stays open, silent).
    fn body_after(pauses: Vec<(u64, Bytes)>) -> impl Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            for (ms, chunk) in pauses {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                if tx.send(chunk).is_err() {
                    return;
                }
            }
            // Held open: the body never ends by itself.
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(tx);
        });
        channel_body(rx)
    }

    /// A body made of the chunks sent on `rx`; it ends when every sender is gone.
    fn channel_body(
        rx: tokio::sync::mpsc::UnboundedReceiver<Bytes>,
    ) -> impl Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static {
        Box::pin(futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (Ok(b), rx)) }))
    }

    fn settings(first_ms: u64, idle_ms: u64) -> TransportSettings {
        TransportSettings {
            first_byte_timeout: Duration::from_millis(first_ms),
            idle_timeout: Duration::from_millis(idle_ms),
            ..TransportSettings::default()
        }
    }

    fn is_idle_timeout(item: &Option<Result<ModelEvent, ProviderError>>) -> bool {
        matches!(item, Some(Err(ProviderError::Timeout("idle"))))
    }

    #[tokio::test]
    async fn a_body_that_never_starts_fails_at_the_first_byte_deadline() {
        let started = Instant::now();
        let mut events = Box::pin(drive::<_, OpenAiWire>(body_after(vec![]), settings(150, 5_000), started));
        assert!(is_idle_timeout(&events.next().await));
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(150) && took < Duration::from_secs(3), "{took:?}");
    }

    #[tokio::test]
    async fn silence_after_a_chunk_fails_after_the_idle_timeout_not_the_first_byte_one() {
        let started = Instant::now();
        let body = body_after(vec![(10, token("a"))]);
        let mut events = Box::pin(drive::<_, OpenAiWire>(body, settings(10_000, 150), started));
        assert!(matches!(events.next().await, Some(Ok(ModelEvent::Text(t))) if t == "a"));
        let after_chunk = Instant::now();
        assert!(is_idle_timeout(&events.next().await));
        let silent = after_chunk.elapsed();
        assert!(silent >= Duration::from_millis(140) && silent < Duration::from_secs(3), "{silent:?}");
    }

    #[tokio::test]
    async fn chunks_closer_than_the_idle_timeout_never_time_out_however_long_the_body() {
        let pauses = (0..12).map(|i| (60, token(&i.to_string()))).collect();
        let mut events = Box::pin(drive::<_, OpenAiWire>(body_after(pauses), settings(1_000, 150), Instant::now()));
        for i in 0..12 {
            assert!(matches!(events.next().await, Some(Ok(ModelEvent::Text(t))) if t == i.to_string()), "chunk {i}");
        }
    }

    #[tokio::test]
    async fn time_the_answer_spends_elsewhere_is_not_the_upstreams_silence() {
        // The answer waits 400 ms between two tokens (a full writer queue); the next chunk then
        // comes 50 ms after it asks: the upstream was silent 50 ms, not 450.
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
        let mut events = Box::pin(drive::<_, OpenAiWire>(channel_body(rx), settings(1_000, 200), Instant::now()));
        tx.send(token("a")).unwrap();
        assert!(matches!(events.next().await, Some(Ok(ModelEvent::Text(t))) if t == "a"));
        tokio::time::sleep(Duration::from_millis(400)).await;
        let sender = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            tx.send(token("b")).unwrap();
            tx
        });
        assert!(matches!(events.next().await, Some(Ok(ModelEvent::Text(t))) if t == "b"));
        drop(sender.await);
    }

    #[test]
    fn a_stream_that_is_not_utf8_fails_as_a_protocol_error() {
        let mut reader = Reader::<OpenAiWire>::default();
        reader.bytes(&token("a"));
        reader.bytes(b"data: \xff\xfe\n\n");
        reader.bytes(&token("b"));
        let events = reader.sink.drain();
        assert!(matches!(&events[0], Ok(ModelEvent::Text(t)) if t == "a"));
        assert!(matches!(&events[1], Err(ProviderError::Protocol(_))), "{events:?}");
        assert_eq!(events.len(), 2, "nothing after the error: {events:?}");
    }
}
