//! Storage: one sqlx `Any` pool that is SQLite by default and PostgreSQL when the database URL
//! says so. Every statement is written once in the SQL both accept (`$1` placeholders, `TEXT`,
//! `BIGINT`, `DOUBLE PRECISION`, times as Unix milliseconds, JSON as text) and the integration
//! tests run against both databases.

pub mod agents;
pub mod batch;
pub mod conversations;
pub mod events;
pub mod leads;
pub mod messages;
pub mod tool_calls;
pub mod usage;
pub mod visitors;

use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

pub use sqlx::Error as DbError;

/// Which database is behind the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbKind {
    Sqlite,
    Postgres,
}

/// The connection pool, shared by everything that stores or reads data.
#[derive(Clone, Debug)]
pub struct Db {
    pool: AnyPool,
    kind: DbKind,
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
        let pool = match kind {
            DbKind::Sqlite => {
                AnyPoolOptions::new()
                    .max_connections(8)
                    .min_connections(1)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            // WAL lets readers run beside the single writer; NORMAL sync is durable
                            // across application crashes (only an OS crash can lose the last commits).
                            conn.execute("PRAGMA journal_mode = WAL").await?;
                            conn.execute("PRAGMA synchronous = NORMAL").await?;
                            conn.execute("PRAGMA busy_timeout = 5000").await?;
                            conn.execute("PRAGMA foreign_keys = ON").await?;
                            Ok(())
                        })
                    })
                    .connect_with(options)
                    .await?
            }
            DbKind::Postgres => {
                AnyPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_with(options)
                    .await?
            }
        };
        let db = Db { pool, kind };
        sqlx::migrate!("../migrations").run(&db.pool).await.map_err(|e| DbError::Migrate(Box::new(e)))?;
        Ok(db)
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn kind(&self) -> DbKind {
        self.kind
    }

    /// Closes every connection (tests and shutdown).
    pub async fn close(&self) {
        self.pool.close().await;
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
