//! The stream writer's SQLite connection, on a thread of its own (rusqlite). Through sqlx every
//! statement of a batch is a hand-off to sqlx's worker thread and back, and a batch's script is
//! parsed anew each time (its text is new); here a batch is one hand-off each way, its statements
//! run one by one in one transaction, each prepared once per shape and kept (a batch's multi-row
//! statements repeat their shapes). The same file, pragmas and transaction as the sqlx path;
//! errors come back as sqlx's, with SQLite's extended result code, so the writer's retry and
//! refusal rules read them alike.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use super::script::{Arg, Stmt};
use super::{DbError, refusal};

/// Statements kept prepared (distinct statement texts: table × rows in the statement).
const CACHED_STATEMENTS: usize = 512;

type Job = (Vec<Stmt>, oneshot::Sender<Result<(), DbError>>);

/// Handle to the thread; the thread ends, closing its connection, when the handle is dropped.
pub struct SqliteWriter {
    jobs: mpsc::Sender<Job>,
}

impl SqliteWriter {
    /// Opens `path` (it exists: the pool created it and ran the migrations) with the write pool's
    /// pragmas, and starts the thread.
    pub fn open(path: &Path) -> Result<SqliteWriter, DbError> {
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(to_db_error)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; \
             PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0;",
        )
        .map_err(to_db_error)?;
        conn.set_prepared_statement_cache_capacity(CACHED_STATEMENTS);
        let (jobs, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                for (stmts, reply) in rx {
                    let _ = reply.send(transaction(&conn, &stmts));
                }
            })
            .map_err(DbError::Io)?;
        Ok(SqliteWriter { jobs })
    }

    /// Runs `stmts` in one transaction (`BEGIN IMMEDIATE`), all or nothing.
    pub async fn run(&self, stmts: Vec<Stmt>) -> Result<(), DbError> {
        if stmts.is_empty() {
            return Ok(());
        }
        let (tx, rx) = oneshot::channel();
        self.jobs.send((stmts, tx)).map_err(|_| DbError::WorkerCrashed)?;
        rx.await.map_err(|_| DbError::WorkerCrashed)?
    }
}

fn transaction(conn: &Connection, stmts: &[Stmt]) -> Result<(), DbError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(to_db_error)?;
    let result = stmts.iter().try_for_each(|s| one(conn, s)).and_then(|()| conn.execute_batch("COMMIT"));
    if result.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result.map_err(to_db_error)
}

fn one(conn: &Connection, s: &Stmt) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(&numbered(&s.sql))?;
    let wanted = stmt.parameter_count();
    for (i, a) in s.args.iter().enumerate().take(wanted) {
        let at = i + 1;
        match a {
            Arg::Text(v) => stmt.raw_bind_parameter(at, v.as_str())?,
            Arg::MaybeText(v) => stmt.raw_bind_parameter(at, v.as_deref())?,
            Arg::Int(v) => stmt.raw_bind_parameter(at, v)?,
            Arg::MaybeInt(v) => stmt.raw_bind_parameter(at, v)?,
            Arg::Float(v) => stmt.raw_bind_parameter(at, v)?,
        }
    }
    // Run to the end, whether it gives rows or not.
    let mut rows = stmt.raw_query();
    while rows.next()?.is_some() {}
    Ok(())
}

/// `$n` placeholders as SQLite's `?n`: the same number, the same value, wherever it appears
/// (SQLite numbers `$n` as names, in the order they first appear).
fn numbered(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A rusqlite error as sqlx's, keeping SQLite's extended result code (what
/// [`super::is_unavailable`] and the refusal rules read).
fn to_db_error(e: rusqlite::Error) -> DbError {
    match e {
        rusqlite::Error::SqliteFailure(f, message) => {
            refusal::refused(f.extended_code.to_string(), message.unwrap_or_else(|| f.to_string()), kind)
        }
        // Not the database's answer but a statement we built wrong: refused, never retried.
        other => refusal::refused("-1".into(), other.to_string(), kind),
    }
}

/// Extended codes of SQLITE_CONSTRAINT (19).
fn kind(code: &str) -> sqlx::error::ErrorKind {
    match code {
        "2067" | "1555" => sqlx::error::ErrorKind::UniqueViolation,
        "787" => sqlx::error::ErrorKind::ForeignKeyViolation,
        "1299" => sqlx::error::ErrorKind::NotNullViolation,
        "275" => sqlx::error::ErrorKind::CheckViolation,
        _ => sqlx::error::ErrorKind::Other,
    }
}

/// The database file behind a SQLite URL, when it is a file (not `:memory:`).
pub fn file_of(url: &str) -> Option<PathBuf> {
    use std::str::FromStr;
    if url.contains(":memory:") || url.contains("mode=memory") {
        return None;
    }
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(url).ok()?;
    Some(options.get_filename().to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollar_placeholders_become_numbered_ones() {
        assert_eq!(numbered("SELECT $2, $1, $2, '$x', $10"), "SELECT ?2, ?1, ?2, '$x', ?10");
        assert!(matches!(numbered("SELECT 1"), Cow::Borrowed(_)));
    }

    #[tokio::test]
    async fn a_batch_commits_whole_or_not_at_all_and_errors_keep_their_code() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
            .unwrap();
        let w = SqliteWriter::open(&path).unwrap();
        let insert = |id: i64, v: Option<&str>| {
            Stmt::new("INSERT INTO t (id, v) VALUES ($1, $2)", vec![Arg::Int(id), Arg::MaybeText(v.map(str::to_owned))])
        };
        w.run(vec![insert(1, Some("a")), insert(2, Some("b"))]).await.unwrap();
        // The second row breaks a rule: neither is stored, and the error says which rule.
        let e = w.run(vec![insert(3, Some("c")), insert(1, Some("again"))]).await.unwrap_err();
        let DbError::Database(db) = &e else { panic!("{e:?}") };
        assert_eq!(db.code().as_deref(), Some("1555"), "{e}");
        assert!(!super::super::is_unavailable(&e));
        let e = w.run(vec![insert(4, None)]).await.unwrap_err();
        assert!(matches!(&e, DbError::Database(db) if db.kind() == sqlx::error::ErrorKind::NotNullViolation), "{e:?}");
        // And the connection goes on after a failed batch.
        w.run(vec![insert(5, Some("e"))]).await.unwrap();
        let check = Connection::open(&path).unwrap();
        let ids: Vec<i64> = check
            .prepare("SELECT id FROM t ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(ids, [1, 2, 5]);
    }

    /// A write transaction that reads before it writes, while the stream writer commits through
    /// its own connection: it waits for the lock instead of failing at its first write with
    /// SQLite's busy snapshot (which a deferred `BEGIN` gave).
    #[tokio::test]
    async fn a_write_transaction_that_reads_first_is_not_undone_by_the_writers_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY)").unwrap();
        let db = super::super::Db::connect(&format!("sqlite://{}?mode=rwc", path.display())).await.unwrap();
        let w = SqliteWriter::open(&path).unwrap();
        let mut tx = db.begin_write().await.unwrap();
        let before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(&mut *tx).await.unwrap();
        let writer = tokio::spawn(async move { w.run(vec![Stmt::new("INSERT INTO t (id) VALUES (1)", vec![])]).await });
        // Time for the writer to commit, if it could.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        sqlx::query("INSERT INTO t (id) VALUES ($1)").bind(before + 2).execute(&mut *tx).await.expect("the write");
        tx.commit().await.unwrap();
        writer.await.unwrap().expect("the writer waited for the lock");
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM t ORDER BY id").fetch_all(db.writer()).await.unwrap();
        assert_eq!(ids, [1, 2]);
    }

    #[test]
    fn memory_urls_have_no_file() {
        assert_eq!(file_of("sqlite::memory:"), None);
        assert_eq!(file_of("sqlite:///tmp/x/parley.db?mode=rwc"), Some(PathBuf::from("/tmp/x/parley.db")));
    }
}
