//! The inbound SMTP listener (issue 44, part 2): visitors' answers to return mails, sent to
//! `reply+TOKEN@PARLEY_INBOUND_MAIL_DOMAIN`. The SMTP conversation is `mailin`'s state machine
//! (a small, kept library that does the protocol and leaves I/O to us, so it runs on tokio);
//! every reply address is checked at `RCPT TO` (an unknown, expired or used token gets 550 and
//! nothing is taken), and the message is taken into its conversation before the final 250, so a
//! fault answers 451 and the sending server tries again. No relaying, no authentication, no TLS:
//! put it behind the domain's MX (or a relay that forwards these addresses) — see
//! docs/embed.md "Replies by mail".

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mailin::{Action, Handler, Response, SessionBuilder};
use parley_engine::engine::Engine;
use parley_engine::engine::mail::InboundError;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The largest message taken (1 MiB: text answers, not attachments).
const MAX_MESSAGE_BYTES: usize = 1024 * 1024;
/// A client silent this long is let go.
const IDLE: Duration = Duration::from_secs(120);
/// Connections served at once.
const MAX_CONNECTIONS: usize = 64;

/// One message as the session hands it over.
#[derive(Default)]
struct Envelope {
    to: Vec<String>,
    data: Vec<u8>,
    too_big: bool,
    done: bool,
}

/// `mailin`'s handler: keeps the envelope for the connection's loop (which does the async work).
struct Collect(Arc<Mutex<Envelope>>);

impl Collect {
    fn with<T>(&self, f: impl FnOnce(&mut Envelope) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

impl Handler for Collect {
    fn mail(&mut self, _ip: std::net::IpAddr, _domain: &str, _from: &str) -> Response {
        self.with(|e| *e = Envelope::default());
        mailin::response::OK
    }

    fn rcpt(&mut self, to: &str) -> Response {
        self.with(|e| e.to.push(to.to_owned()));
        mailin::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.with(|e| {
            if e.data.len() + buf.len() > MAX_MESSAGE_BYTES {
                e.too_big = true;
            } else {
                e.data.extend_from_slice(buf);
            }
        });
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        self.with(|e| e.done = true);
        mailin::response::OK
    }
}

/// Binds `addr` and serves until `stop`; the bound address (port 0 in tests).
pub async fn spawn(addr: SocketAddr, engine: Engine, stop: CancellationToken) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let room = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = stop.cancelled() => return,
                a = listener.accept() => a,
            };
            let Ok((stream, peer)) = accepted else { continue };
            let Ok(permit) = room.clone().try_acquire_owned() else {
                let mut stream = stream;
                let _ = stream.write_all(b"421 4.3.2 Too many connections, try again later\r\n").await;
                continue;
            };
            let engine = engine.clone();
            tokio::spawn(async move {
                if let Err(e) = serve(stream, peer, &engine).await {
                    tracing::debug!(error = %e, "an inbound SMTP connection ended");
                }
                drop(permit);
            });
        }
    });
    tracing::info!(%bound, "inbound mail (SMTP) listening");
    Ok(bound)
}

async fn serve(stream: TcpStream, peer: SocketAddr, engine: &Engine) -> anyhow::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let envelope = Arc::new(Mutex::new(Envelope::default()));
    let mut session = SessionBuilder::new("parley").build(peer.ip(), Collect(envelope.clone()));
    write.write_all(&session.greeting().buffer()?).await?;
    let mut in_data = false;
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        let n = tokio::time::timeout(IDLE, (&mut read).take(64 * 1024).read_until(b'\n', &mut line)).await??;
        if n == 0 {
            return Ok(());
        }
        if !in_data && let Some(to) = rcpt_address(&line) {
            let refusal = match engine.reply_address_open(to).await {
                Ok(true) => None,
                Ok(false) => Some("550 5.1.1 No such reply address here (unknown, expired or already used)\r\n"),
                Err(e) => {
                    tracing::warn!(error = %e, "checking an inbound reply address");
                    Some("451 4.3.0 Try again later\r\n")
                }
            };
            if let Some(refusal) = refusal {
                write.write_all(refusal.as_bytes()).await?;
                continue;
            }
        }
        let response = session.process(&line);
        if response.code == 354 {
            in_data = true;
        }
        let finished = {
            let mut e = envelope.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            e.done.then(|| std::mem::take(&mut *e))
        };
        if let Some(message) = finished {
            in_data = false;
            let answer = take(engine, &message).await;
            write.write_all(answer.as_bytes()).await?;
            continue;
        }
        match response.action {
            Action::Reply => write.write_all(&response.buffer()?).await?,
            Action::Close => {
                write.write_all(&response.buffer()?).await?;
                return Ok(());
            }
            Action::NoReply => {}
            Action::UpgradeTls => write.write_all(b"454 4.7.0 TLS not available\r\n").await?,
        }
    }
}

/// Takes a whole message into its conversations; the SMTP answer to its final dot.
async fn take(engine: &Engine, message: &Envelope) -> String {
    if message.too_big {
        return "552 5.3.4 Message too big for a reply\r\n".into();
    }
    let mut failure: Option<InboundError> = None;
    for to in &message.to {
        if let Err(e) = engine.receive_mail(to, &message.data).await {
            tracing::info!(error = %e, "an inbound mail was refused");
            failure = Some(e);
        }
    }
    match failure {
        None => "250 2.0.0 Taken into the conversation\r\n".into(),
        Some(e) if e.is_permanent() => format!("550 5.7.1 {e}\r\n"),
        Some(_) => "451 4.3.0 Try again later\r\n".into(),
    }
}

/// The address of a `RCPT TO:<…>` line.
fn rcpt_address(line: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(line).ok()?.trim_end();
    if text.len() < 8 || !text[..8].eq_ignore_ascii_case("RCPT TO:") {
        return None;
    }
    let rest = text[8..].trim_start();
    let rest = rest.strip_prefix('<')?;
    rest.split_once('>').map(|(a, _)| a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recipient_is_read_from_rcpt_lines_only() {
        assert_eq!(rcpt_address(b"RCPT TO:<reply+pr_x@in.example>\r\n"), Some("reply+pr_x@in.example"));
        assert_eq!(rcpt_address(b"rcpt to: <a@b> SIZE=10\r\n"), Some("a@b"));
        assert_eq!(rcpt_address(b"MAIL FROM:<a@b>\r\n"), None);
        assert_eq!(rcpt_address(b"RCPT TO:a@b\r\n"), None);
    }
}
