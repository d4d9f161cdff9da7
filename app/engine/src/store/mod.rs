//! Storage: one sqlx `Any` pool that is SQLite by default and PostgreSQL when the database URL
//! says so. Every statement is written once in the SQL both accept (`$1` placeholders, `TEXT`,
//! `BIGINT`, `DOUBLE PRECISION`, times as Unix milliseconds, JSON as text) and the integration
//! tests run against both databases.

pub mod agents;
pub mod alerts;
pub mod answer_tests;
pub mod assignment;
pub mod attachments;
pub mod audit;
pub mod batch;
pub mod chunk_vectors;
pub mod console;
pub mod contacts;
pub mod conversations;
pub mod copilot;
pub mod credentials;
pub mod engage;
pub mod events;
pub mod experts;
pub mod hours;
pub mod http_tools;
pub mod identity;
pub mod jobs;
pub mod knowledge;
pub mod labels;
pub mod leads;
pub mod leases;
pub mod mail;
pub mod mail_confirm;
pub mod mcp_tokens;
pub mod memories;
pub mod messages;
mod migrations;
pub mod news;
pub mod notes;
pub mod notify_prefs;
pub mod operator_notifications;
pub mod orders;
pub mod pg_writer;
pub mod prices;
pub mod privacy;
pub mod push;
pub mod ratings;
mod refusal;
pub mod reports;
pub mod return_mail;
pub mod saved_replies;
#[cfg(test)]
mod schema_doc;
pub mod script;
pub mod search;
pub mod sessions;
pub mod slots;
pub mod spend;
pub mod sqlite_writer;
pub mod teams;
#[cfg(test)]
pub mod testing;
pub mod tool_calls;
pub mod unanswered;
pub mod usage;
pub mod users;
pub mod visitors;
pub mod webhooks;

use std::str::FromStr;
use std::time::Duration;

use std::sync::Arc;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Executor};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Read connections (SQLite).
const READERS: u32 = 8;

/// A kept read connection unused this long is pinged before it is used again.
const KEPT_UNTESTED: Duration = Duration::from_secs(2);

pub use sqlx::Error as DbError;

/// A row type read with `query_as`: the struct as written, plus sqlx's `FromRow` for `AnyRow`,
/// each field read by its name. (sqlx's derive needs its `macros` feature, which builds tokio,
/// sqlx and SQLite a second time for the compiler's host; see `migrations.rs`.)
macro_rules! row_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$field_meta])* $field_vis $field: $ty ),*
        }

        impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for $name {
            fn from_row(row: &'r sqlx::any::AnyRow) -> Result<Self, sqlx::Error> {
                use sqlx::Row as _;
                Ok(Self { $( $field: row.try_get(stringify!($field))? ),* })
            }
        }
    };
}
pub(crate) use row_struct;

/// The database cannot be reached or is overloaded right now (as opposed to refusing the data):
/// connection lost or refused, pool exhausted or closed, server shutting down, SQLite busy. Such
/// a failure is answered `503` and retried; the same work succeeds once the database is back.
pub fn is_unavailable(e: &DbError) -> bool {
    match e {
        DbError::Io(_)
        | DbError::Tls(_)
        | DbError::PoolTimedOut
        | DbError::PoolClosed
        | DbError::WorkerCrashed
        | DbError::Protocol(_) => true,
        DbError::Database(db) => {
            let code = db.code().unwrap_or_default();
            // PostgreSQL: connection exceptions (08…), shutdown / cannot connect now (57P…),
            // too many connections (53300). SQLite: busy (5) and locked (6), with their extended
            // codes (busy recovery 261, snapshot 517, timeout 773; locked shared cache 262).
            code.starts_with("08")
                || code.starts_with("57P")
                || matches!(code.as_ref(), "53300" | "5" | "6" | "261" | "517" | "773" | "262")
        }
        _ => false,
    }
}

/// Which database is behind the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbKind {
    Sqlite,
    Postgres,
}

/// The connection pools, shared by everything that stores or reads data.
///
/// SQLite allows one writer at a time and makes other writers sleep and retry, which costs
/// milliseconds; so on SQLite every write goes through one connection (writers queue in memory
/// instead) and reads use a pool of their own. On PostgreSQL both are the same pool.
#[derive(Clone, Debug)]
pub struct Db {
    read: AnyPool,
    write: AnyPool,
    /// Read connections checked out of `read` and kept (see [`Held`]).
    held: Arc<HeldConnections>,
    kind: DbKind,
    /// The PostgreSQL URL, for the connection that listens for other replicas' notifications.
    listen_url: Option<ListenUrl>,
    /// Seals and opens provider keys at the store's boundary ([`Db::with_secrets`]); without it a
    /// provider key can be neither written nor read.
    secrets: Option<Arc<crate::secret::SecretBox>>,
    /// The SQLite database's file (none in memory, none on PostgreSQL): the stream writer opens
    /// its own connection to it ([`sqlite_writer`]).
    sqlite_file: Option<Arc<std::path::PathBuf>>,
}

/// A database URL that never shows its password in a log line.
#[derive(Clone)]
struct ListenUrl(Arc<str>);

impl std::fmt::Debug for ListenUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redact(&self.0))
    }
}

/// Connections kept out of sqlx's pool between uses. sqlx pings a connection every time it goes
/// back to its pool — a round trip to SQLite's worker thread or to the PostgreSQL server that
/// cost about 150 µs per query here — so reads take a connection from this stack and put it back
/// as it is. Queries never leave a transaction open on these connections.
#[derive(Debug)]
struct HeldConnections {
    /// Kept connections with when each was put back.
    idle: std::sync::Mutex<Vec<(PoolConnection<Any>, std::time::Instant)>>,
    permits: Arc<Semaphore>,
    /// Bumped when the database was found unreachable: connections taken before go back to
    /// sqlx's pool (which tests them) instead of the stack.
    generation: std::sync::atomic::AtomicU64,
    /// Set by [`Db::close`]: connections go back to the pool, which is waiting for them.
    closed: std::sync::atomic::AtomicBool,
}

/// A read connection; goes back to the stack when dropped.
pub struct Held {
    conn: Option<PoolConnection<Any>>,
    generation: u64,
    home: Arc<HeldConnections>,
    _permit: OwnedSemaphorePermit,
}

impl std::ops::Deref for Held {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        self.conn.as_deref().expect("held connection")
    }
}

impl std::ops::DerefMut for Held {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.conn.as_deref_mut().expect("held connection")
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.home.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        if self.home.generation.load(std::sync::atomic::Ordering::Acquire) != self.generation {
            return;
        }
        if let (Some(conn), Ok(mut idle)) = (self.conn.take(), self.home.idle.lock()) {
            idle.push((conn, std::time::Instant::now()));
        }
    }
}

impl Db {
    /// Connects to `url` (`sqlite://path?mode=rwc` or `postgres://...`) and applies the migrations.
    pub async fn connect(url: &str) -> Result<Self, DbError> {
        sqlx::any::install_default_drivers();
        let kind = if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            DbKind::Postgres
        } else if url.starts_with("sqlite:") {
            DbKind::Sqlite
        } else {
            return Err(DbError::Configuration(
                format!("unsupported database URL (want sqlite:// or postgres://): {}", redact(url)).into(),
            ));
        };
        let options = AnyConnectOptions::from_str(url)?;
        let db = match kind {
            DbKind::Sqlite => {
                let sqlite = |max: u32, reader: bool| {
                    AnyPoolOptions::new()
                        .max_connections(max)
                        .min_connections(1)
                        // A ping on every acquire costs a round trip to SQLite's worker thread.
                        .test_before_acquire(false)
                        .after_connect(move |conn, _| {
                            Box::pin(async move {
                                // WAL lets readers run beside the writer; NORMAL sync is durable across
                                // application crashes (only an OS crash can lose the last commits).
                                conn.execute("PRAGMA journal_mode = WAL").await?;
                                conn.execute("PRAGMA synchronous = NORMAL").await?;
                                conn.execute("PRAGMA busy_timeout = 5000").await?;
                                conn.execute("PRAGMA foreign_keys = ON").await?;
                                if reader {
                                    // A small page cache each (the file is in the OS's cache):
                                    // less memory kept after a burst.
                                    conn.execute("PRAGMA cache_size = -512").await?;
                                } else {
                                    // Writers never stop to checkpoint; a background task does it.
                                    conn.execute("PRAGMA wal_autocheckpoint = 0").await?;
                                }
                                Ok(())
                            })
                        })
                };
                // The occasional other write's connection; the stream writer opens its own to a
                // file (`sqlite_writer`), else takes a second one here. One writer of each kind:
                // two of the pool's at once would make a read-then-write transaction fail when
                // the other commits in between (SQLite's busy snapshot), not wait.
                let file = sqlite_writer::file_of(url);
                let write = sqlite(if file.is_some() { 1 } else { 2 }, false).connect_with(options.clone()).await?;
                // The schema must exist before readers look at it.
                migrations::migrator().run(&write).await.map_err(|e| DbError::Migrate(Box::new(e)))?;
                // `read()` keeps up to READERS connections checked out between uses; two more
                // stay for whoever takes the pool directly (tests' checks, tools), which would
                // otherwise wait for ever once a burst of reads had parked all of them.
                let read = sqlite(READERS + 2, true).connect_with(options).await?;
                let mut db = Db::assemble(read, write, kind, None);
                db.sqlite_file = file.map(Arc::new);
                db.spawn_checkpoints();
                db
            }
            DbKind::Postgres => {
                // 15 here, the stream writer's own (`pg_writer`) and the listener: 17 a replica.
                let pool = AnyPoolOptions::new()
                    .max_connections(15)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_with(options)
                    .await?;
                migrations::migrator().run(&pool).await.map_err(|e| DbError::Migrate(Box::new(e)))?;
                Db::assemble(pool.clone(), pool, kind, Some(ListenUrl(Arc::from(url))))
            }
        };
        Ok(db)
    }

    fn assemble(read: AnyPool, write: AnyPool, kind: DbKind, listen_url: Option<ListenUrl>) -> Db {
        let held = Arc::new(HeldConnections {
            idle: std::sync::Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(READERS as usize)),
            closed: std::sync::atomic::AtomicBool::new(false),
            generation: std::sync::atomic::AtomicU64::new(0),
        });
        Db { read, write, held, kind, listen_url, secrets: None, sqlite_file: None }
    }

    /// Moves the SQLite write-ahead log into the database file every second, off the writers.
    fn spawn_checkpoints(&self) {
        let db = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if db.read.is_closed() {
                    return;
                }
                let Ok(mut conn) = db.read().await else { continue };
                if let Err(e) = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").await {
                    tracing::warn!(error = %e, "WAL checkpoint failed");
                }
            }
        });
    }

    /// A connection for reads (taken from the stack of kept connections).
    pub async fn read(&self) -> Result<Held, DbError> {
        let permit = self.held.permits.clone().acquire_owned().await.map_err(|_| DbError::PoolClosed)?;
        let generation = self.held.generation.load(std::sync::atomic::Ordering::Acquire);
        let kept = self.held.idle.lock().ok().and_then(|mut idle| idle.pop());
        let conn = match kept {
            Some((conn, at)) if at.elapsed() < KEPT_UNTESTED => conn,
            // Quiet for a while: the database may have gone away meanwhile; a ping tells.
            Some((mut conn, _)) => match sqlx::Connection::ping(&mut *conn).await {
                Ok(()) => conn,
                Err(_) => {
                    drop(conn);
                    self.read.acquire().await?
                }
            },
            None => self.read.acquire().await?,
        };
        Ok(Held { conn: Some(conn), generation, home: self.held.clone(), _permit: permit })
    }

    /// The database was found unreachable: kept read connections are let go (sqlx's pool tests
    /// them before they are used again).
    pub fn connections_lost(&self) {
        self.held.generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        if let Ok(mut idle) = self.held.idle.lock() {
            idle.clear();
        }
    }

    /// The read pool itself (tests, health checks).
    pub fn pool(&self) -> &AnyPool {
        &self.read
    }

    /// The pool for writes (one connection on SQLite).
    pub fn writer(&self) -> &AnyPool {
        &self.write
    }

    /// A write transaction. On SQLite it takes the write lock at once (`BEGIN IMMEDIATE`): the
    /// stream writer commits through a connection of its own, and a transaction that read first
    /// and wrote second would fail at its first write (SQLite's busy snapshot) whenever the writer
    /// had committed in between, where waiting for the lock is what is wanted.
    pub async fn begin_write(&self) -> Result<sqlx::Transaction<'static, Any>, DbError> {
        match self.kind {
            DbKind::Sqlite => self.write.begin_with("BEGIN IMMEDIATE").await,
            DbKind::Postgres => self.write.begin().await,
        }
    }

    /// The SQLite database's file, when it has one.
    pub fn sqlite_file(&self) -> Option<&std::path::Path> {
        self.sqlite_file.as_deref().map(|p| p.as_path())
    }

    /// The URL a PostgreSQL `LISTEN` connection uses (none on SQLite).
    pub fn listen_url(&self) -> Option<&str> {
        self.listen_url.as_ref().map(|u| &*u.0)
    }

    pub fn kind(&self) -> DbKind {
        self.kind
    }

    /// The same database, sealing provider keys with `secrets` when they are written and opening
    /// them when they are read.
    pub fn with_secrets(mut self, secrets: crate::secret::SecretBox) -> Db {
        self.secrets = Some(Arc::new(secrets));
        self
    }

    /// The key that seals provider keys, if one was given.
    pub fn secrets(&self) -> Option<&crate::secret::SecretBox> {
        self.secrets.as_deref()
    }

    /// Closes every connection (tests and shutdown).
    pub async fn close(&self) {
        self.held.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.held.permits.close();
        if let Ok(mut idle) = self.held.idle.lock() {
            idle.clear();
        }
        self.write.close().await;
        self.read.close().await;
    }
}

/// Hides the password of a database URL for logs and errors.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_owned(),
    }
}

/// `INSERT INTO {into} VALUES (…), (…), …`: the rows (each `columns` values) in statements of
/// at most `per_statement` rows, so a batch of many rows is a few statements (one round trip
/// each on PostgreSQL, one statement to prepare each on SQLite) instead of one per row.
pub fn insert_rows(into: &str, columns: usize, rows: Vec<Vec<script::Arg>>, per_statement: usize) -> Vec<script::Stmt> {
    per_chunk(rows, columns, per_statement, |values| format!("INSERT INTO {into} VALUES {values}"))
}

/// `UPDATE {table} SET {set} FROM (VALUES (…), …) AS v WHERE {matches}`: one statement updating
/// many rows, each from its own values, which `set` and `matches` read as `v.column1`,
/// `v.column2`, … (the names SQLite and PostgreSQL both give a `VALUES` list's columns). A
/// target row must match at most one values row.
pub fn update_rows(
    table: &str,
    set: &str,
    matches: &str,
    columns: usize,
    rows: Vec<Vec<script::Arg>>,
    per_statement: usize,
) -> Vec<script::Stmt> {
    per_chunk(rows, columns, per_statement, |values| {
        format!("UPDATE {table} SET {set} FROM (VALUES {values}) AS v WHERE {matches}")
    })
}

/// One statement per `per_statement` rows, its SQL made by `sql` from the chunk's placeholders;
/// the rows' values are moved into it, not copied.
fn per_chunk(
    rows: Vec<Vec<script::Arg>>,
    columns: usize,
    per_statement: usize,
    sql: impl Fn(&str) -> String,
) -> Vec<script::Stmt> {
    let per = per_statement.max(1);
    let mut out = Vec::with_capacity(rows.len().div_ceil(per));
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let mut args = Vec::with_capacity(per * columns);
        let mut n = 0;
        for row in rows.by_ref().take(per) {
            debug_assert_eq!(row.len(), columns);
            args.extend(row);
            n += 1;
        }
        out.push(script::Stmt::new(sql(&placeholders(n, columns)), args));
    }
    out
}

/// `($1,$2,…),($n,…)`: placeholders for a multi-row insert.
pub fn placeholders(rows: usize, columns: usize) -> String {
    let mut sql = String::with_capacity(rows * columns * 5);
    for r in 0..rows {
        sql.push_str(if r == 0 { "(" } else { ",(" });
        for c in 0..columns {
            if c > 0 {
                sql.push(',');
            }
            sql.push('$');
            sql.push_str(&(r * columns + c + 1).to_string());
        }
        sql.push(')');
    }
    sql
}

/// A new time-ordered identifier.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Encodes a list as the JSON text stored in a column.
pub fn to_json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

/// Decodes a JSON text column, falling back to the type's default on bad data.
pub fn from_json_text<T: serde::de::DeserializeOwned + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}
