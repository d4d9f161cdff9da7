//! The stream writer's own PostgreSQL connection (`store::pg_writer`): a batch sent pipelined
//! commits whole or not at all, the server's refusals keep their SQLSTATE (what the writer's
//! retry and repair rules read), and the connection goes on after a refused batch. PostgreSQL
//! pass only.

use parley_engine::store::DbError;
use parley_engine::store::pg_writer::PgWriter;
use parley_engine::store::script::{Arg, Stmt};
use sqlx::Connection;

use crate::harness::fresh_database;

fn insert(id: i64, v: Option<&str>) -> Stmt {
    Stmt::new(
        "INSERT INTO t (id, v, n) VALUES ($1, $2, $3)",
        vec![Arg::Int(id), Arg::MaybeText(v.map(str::to_owned)), Arg::MaybeInt(Some(id * 10))],
    )
}

fn code(e: &DbError) -> String {
    match e {
        DbError::Database(db) => db.code().unwrap_or_default().into_owned(),
        other => panic!("not the database's refusal: {other:?}"),
    }
}

#[tokio::test]
async fn a_pipelined_batch_commits_whole_or_not_at_all_and_refusals_keep_their_code() {
    if std::env::var("PARLEY_TEST_POSTGRES").unwrap_or_default().is_empty() {
        eprintln!("the writer's own PostgreSQL connection: this test runs in the PostgreSQL pass");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let mut check = sqlx::AnyConnection::connect(&url).await.unwrap();
    sqlx::query("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL, n BIGINT, x DOUBLE PRECISION)")
        .execute(&mut check)
        .await
        .unwrap();
    let mut w = PgWriter::connect(&url).await.unwrap();

    // Statements of several shapes, one repeated, with an int8 value into an INTEGER column (as
    // sqlx declares it) and a float.
    let float = Stmt::new("UPDATE t SET x = $2 WHERE id = $1", vec![Arg::Int(2), Arg::Float(0.5)]);
    w.run(&[insert(1, Some("a")), insert(2, Some("b")), float]).await.unwrap();
    // A broken rule in the second statement: neither row is stored, and the error names the rule.
    let e = w.run(&[insert(3, Some("c")), insert(1, Some("again")), insert(4, Some("d"))]).await.unwrap_err();
    assert_eq!(code(&e), "23505", "{e}");
    assert!(matches!(&e, DbError::Database(db) if db.kind() == sqlx::error::ErrorKind::UniqueViolation));
    assert!(!parley_engine::store::is_unavailable(&e));
    let e = w.run(&[insert(5, None)]).await.unwrap_err();
    assert_eq!(code(&e), "23502", "{e}");
    // PostgreSQL keeps no NUL in text: refused with 22021, which the writer repairs and retries.
    let e = w.run(&[insert(6, Some("nul\0here"))]).await.unwrap_err();
    assert_eq!(code(&e), "22021", "{e}");
    // The connection goes on after refused batches, with no transaction left open.
    w.run(&[insert(7, Some("g"))]).await.unwrap();
    assert!(!w.is_closed());
    let rows: Vec<(i64, String, Option<i64>, Option<f64>)> =
        sqlx::query_as("SELECT CAST(id AS BIGINT), v, n, x FROM t ORDER BY id").fetch_all(&mut check).await.unwrap();
    assert_eq!(
        rows,
        vec![(1, "a".into(), Some(10), None), (2, "b".into(), Some(20), Some(0.5)), (7, "g".into(), Some(70), None)]
    );

    // A server that goes away: an unreachable error (the writer waits it out and reconnects).
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        .execute(&mut check)
        .await
        .unwrap();
    let e = w.run(&[insert(8, Some("h"))]).await.unwrap_err();
    assert!(parley_engine::store::is_unavailable(&e), "{e:?}");
    assert!(w.is_closed());
    let mut w = PgWriter::connect(&url).await.unwrap();
    w.run(&[insert(8, Some("h"))]).await.unwrap();
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(&mut check).await.unwrap();
    assert_eq!(n, 4);

    // More statement shapes than are kept prepared: the cache starts again mid-batch, and the
    // batch's shape that was kept is prepared again with the new ones.
    for k in 0..600i64 {
        let shape = Stmt::new(format!("UPDATE t SET n = $2 + {k} WHERE id = $1"), vec![Arg::Int(8), Arg::Int(0)]);
        w.run(&[insert(100 + k, Some("k")), shape]).await.unwrap();
    }
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t").fetch_one(&mut check).await.unwrap();
    let last: Option<i64> = sqlx::query_scalar("SELECT n FROM t WHERE id = 8").fetch_one(&mut check).await.unwrap();
    assert_eq!((n, last), (604, Some(599)));
}
