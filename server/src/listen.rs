//! Listening and serving: the socket (a backlog for bursts), one HTTP server task per listener
//! with a graceful stop, and the lock that keeps a second process off a SQLite file.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use tokio_util::sync::CancellationToken;

use crate::Config;

/// A listening socket with a backlog large enough for thousands of connections at once.
pub fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(4096)
}

/// On SQLite, takes an exclusive lock beside the database file, so that a second `parley serve`
/// on the same file is refused with a clear message (its turn slots, sequence numbers and
/// recovery assume one process; PostgreSQL is the database for replicas). The operating system
/// releases the lock when the process ends, however it ends.
pub(crate) fn lock_sqlite(config: &Config) -> anyhow::Result<Option<std::fs::File>> {
    let url = config.database_url();
    let Some(rest) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) else { return Ok(None) };
    let path = rest.split('?').next().unwrap_or(rest);
    if path.is_empty() || path == ":memory:" {
        return Ok(None);
    }
    if let Some(dir) = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let lock_path = format!("{path}.serve-lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {lock_path}"))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another `parley serve` is already using the SQLite database {path}: SQLite takes one server \
             process. Stop the other one, or run several replicas on PostgreSQL (DATABASE_URL=postgres://…)."
        ),
        Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {lock_path}")),
    }
}

/// How long a client may take to send a request's headers (HTTP/1): a connection that sends
/// them a byte at a time (slow-loris) is closed after this, whatever it holds.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `app` on `listener` in the background, with Nagle off so small SSE frames leave at once.
pub fn serve_in_background(listener: tokio::net::TcpListener, app: axum::Router, what: &'static str) {
    serve_until(listener, app, what, CancellationToken::new());
}

/// Like [`serve_in_background`]; once `stop` is cancelled no connection is accepted, the open
/// ones finish what they are doing (a graceful shutdown each), and the task ends when they have.
///
/// The accept loop is Parley's own rather than `axum::serve`, which gives hyper no timer: hyper's
/// header read timeout then never fires, and a client dribbling its headers keeps a connection
/// (and its memory) forever. Here every connection gets [`HEADER_READ_TIMEOUT`].
pub fn serve_until(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    what: &'static str,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let connections = tokio_util::task::TaskTracker::new();
        loop {
            let (tcp, peer) = tokio::select! {
                _ = stop.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors and the like: wait a moment rather than spin.
                        tracing::warn!(error = %e, "{what}: accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let _ = tcp.set_nodelay(true);
            connections.spawn(serve_connection(tcp, peer, app.clone(), stop.clone()));
        }
        connections.close();
        connections.wait().await;
    })
}

/// One connection: HTTP/1 or HTTP/2, the peer's address as `ConnectInfo`, the header timeout,
/// and a graceful shutdown when `stop` is cancelled.
async fn serve_connection(tcp: tokio::net::TcpStream, peer: SocketAddr, app: axum::Router, stop: CancellationToken) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use tower::ServiceExt;
    let service = app.map_request(move |mut request: http::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
        request.map(axum::body::Body::new)
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let connection = builder
        .serve_connection_with_upgrades(TokioIo::new(tcp), hyper_util::service::TowerToHyperService::new(service));
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = stop.cancelled() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}
