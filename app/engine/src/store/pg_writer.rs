//! The stream writer's PostgreSQL connection (tokio-postgres). Through sqlx each statement of a
//! batch waits for the server's answer before the next is sent: `BEGIN`, the statements and
//! `COMMIT` were as many round trips, and a visitor's turn waited for all of them before its
//! model call. Here a batch's statements go out pipelined and their answers come back together:
//! one round trip a batch (one more the first time a statement's shape is seen, to prepare it).
//! Parameters are declared with the types sqlx gives them (text, int8, float8), so the server
//! reads the statements alike; errors come back as sqlx's, with PostgreSQL's SQLSTATE, so the
//! writer's retry and refusal rules read them alike.

use std::collections::HashMap;
use std::pin::Pin;

use futures::future::join_all;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, NoTls, Statement};

use super::script::{Arg, Stmt};
use super::{DbError, refusal};

/// Statements kept prepared (distinct statement texts: table × rows in the statement); past it
/// the cache starts again (their server-side statements are closed as they are dropped).
const CACHED_STATEMENTS: usize = 512;

type Pending<'a> = Pin<Box<dyn Future<Output = Result<u64, tokio_postgres::Error>> + Send + 'a>>;

/// A connection of the writer's own; its connection task ends when this is dropped.
pub struct PgWriter {
    client: Client,
    prepared: HashMap<(String, Vec<Type>), Statement>,
}

impl PgWriter {
    /// Connects to `url` (plain TCP or a Unix socket, like the sqlx pools: no TLS). A URL this
    /// client does not read is a configuration error (the caller keeps the pool's connection).
    pub async fn connect(url: &str) -> Result<PgWriter, DbError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| DbError::Configuration(Box::new(e)))?;
        if config.get_connect_timeout().is_none() {
            // Like the pool's acquire timeout: an unreachable server is an error, not a hang.
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        let (client, connection) = config.connect(NoTls).await.map_err(to_db_error)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "the stream writer's PostgreSQL connection ended");
            }
        });
        Ok(PgWriter { client, prepared: HashMap::new() })
    }

    /// The connection is gone (the server closed it or the network failed): open a new one.
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Runs `stmts` in one transaction, all or nothing, sent pipelined.
    pub async fn run(&mut self, stmts: &[Stmt]) -> Result<(), DbError> {
        if stmts.is_empty() {
            return Ok(());
        }
        let keys: Vec<(String, Vec<Type>)> = stmts.iter().map(|s| (s.sql.clone(), types(&s.args))).collect();
        self.prepare(&keys).await?;
        let params: Vec<Vec<&(dyn ToSql + Sync)>> = stmts.iter().map(|s| s.args.iter().map(param).collect()).collect();
        let client = &self.client;
        let mut pending: Vec<Pending<'_>> = Vec::with_capacity(stmts.len() + 2);
        pending.push(Box::pin(async move { client.batch_execute("BEGIN").await.map(|()| 0) }));
        for (key, params) in keys.iter().zip(&params) {
            let statement = &self.prepared[key];
            pending.push(Box::pin(client.execute_raw(statement, params.iter().copied())));
        }
        // After a failed statement the server answers the rest "transaction aborted" and turns
        // the COMMIT into a rollback: the first error is the one to report.
        pending.push(Box::pin(async move { client.batch_execute("COMMIT").await.map(|()| 0) }));
        let results = join_all(pending).await;
        match results.into_iter().find_map(Result::err) {
            None => Ok(()),
            Some(e) => {
                if !self.client.is_closed() {
                    // Whatever state the failure left, no transaction stays open.
                    let _ = self.client.batch_execute("ROLLBACK").await;
                }
                Err(to_db_error(e))
            }
        }
    }

    /// Prepares the statements not prepared yet, pipelined.
    async fn prepare(&mut self, keys: &[(String, Vec<Type>)]) -> Result<(), DbError> {
        let new = |prepared: &HashMap<(String, Vec<Type>), Statement>| {
            let mut seen = std::collections::HashSet::new();
            keys.iter().filter(|k| !prepared.contains_key(*k) && seen.insert(*k)).collect::<Vec<_>>()
        };
        let mut missing = new(&self.prepared);
        if missing.is_empty() {
            return Ok(());
        }
        if self.prepared.len() + missing.len() > CACHED_STATEMENTS {
            // Starting again: this batch's statements that were kept are prepared again too.
            self.prepared.clear();
            missing = new(&self.prepared);
        }
        let client = &self.client;
        let made = join_all(missing.iter().map(|(sql, types)| client.prepare_typed(sql, types))).await;
        for (key, statement) in missing.into_iter().zip(made) {
            self.prepared.insert(key.clone(), statement.map_err(to_db_error)?);
        }
        Ok(())
    }
}

/// The types sqlx declares for these values.
fn types(args: &[Arg]) -> Vec<Type> {
    args.iter()
        .map(|a| match a {
            Arg::Text(_) | Arg::MaybeText(_) => Type::TEXT,
            Arg::Int(_) | Arg::MaybeInt(_) => Type::INT8,
            Arg::Float(_) => Type::FLOAT8,
        })
        .collect()
}

fn param(a: &Arg) -> &(dyn ToSql + Sync) {
    match a {
        Arg::Text(v) => v,
        Arg::MaybeText(v) => v,
        Arg::Int(v) => v,
        Arg::MaybeInt(v) => v,
        Arg::Float(v) => v,
    }
}

/// A tokio-postgres error as sqlx's: the server's refusal with its SQLSTATE, anything else (the
/// connection lost, refused, timed out) as an I/O error, which the writer waits out.
fn to_db_error(e: tokio_postgres::Error) -> DbError {
    match e.as_db_error() {
        Some(db) => refusal::refused(db.code().code().to_owned(), db.message().to_owned(), kind),
        None => DbError::Io(std::io::Error::other(e)),
    }
}

fn kind(sqlstate: &str) -> sqlx::error::ErrorKind {
    match sqlstate {
        "23505" => sqlx::error::ErrorKind::UniqueViolation,
        "23503" => sqlx::error::ErrorKind::ForeignKeyViolation,
        "23502" => sqlx::error::ErrorKind::NotNullViolation,
        "23514" => sqlx::error::ErrorKind::CheckViolation,
        _ => sqlx::error::ErrorKind::Other,
    }
}
