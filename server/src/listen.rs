//! Listening and serving: the socket (a backlog for bursts), one HTTP server task per listener
//! with a graceful stop, and the lock that keeps a second process off a SQLite file.

use std::net::SocketAddr;

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

/// Serves `app` on `listener` in the background, with Nagle off so small SSE frames leave at once.
pub fn serve_in_background(listener: tokio::net::TcpListener, app: axum::Router, what: &'static str) {
    serve_until(listener, app, what, CancellationToken::new());
}

/// Like [`serve_in_background`]; once `stop` is cancelled no connection is accepted and the task
/// ends when the open ones have.
pub fn serve_until(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    what: &'static str,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move {
        let served = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(stop.cancelled_owned());
        if let Err(e) = served.await {
            tracing::error!(error = %e, "{what} stopped");
        }
    })
}
