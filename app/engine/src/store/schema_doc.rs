//! `docs/schema.sql` is the current schema of every table, as the migrations leave it on SQLite
//! (one `CREATE TABLE` per table, however many migrations changed it). This test fails when a
//! migration changes the schema and the document was not brought up to date; run it with
//! `PARLEY_WRITE_SCHEMA=1` to rewrite the document.

use super::Db;

const DOC: &str = include_str!("../../../../docs/schema.sql");
const HEADER: &str = "-- The current schema of every table, as the migrations in migrations/ leave it on SQLite\n\
-- (PostgreSQL has the same tables and columns). Generated: do not edit; a test in\n\
-- app/engine/src/store/schema_doc.rs checks it (PARLEY_WRITE_SCHEMA=1 rewrites it).\n";

/// The schema as SQLite prints it: tables in name order, each followed by its indexes.
async fn current(db: &Db) -> String {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' \
         AND name NOT LIKE '_sqlx%' ORDER BY tbl_name, CASE type WHEN 'table' THEN 0 ELSE 1 END, name",
    )
    .fetch_all(db.pool())
    .await
    .expect("schema");
    let mut out = HEADER.to_owned();
    for (sql,) in rows {
        out.push('\n');
        out.push_str(sql.trim());
        out.push_str(";\n");
    }
    out
}

#[tokio::test]
async fn the_schema_document_is_current() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::connect(&format!("sqlite://{}?mode=rwc", dir.path().join("s.db").display())).await.expect("db");
    let schema = current(&db).await;
    if std::env::var_os("PARLEY_WRITE_SCHEMA").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/schema.sql"), &schema).expect("write");
        return;
    }
    assert!(
        DOC == schema,
        "docs/schema.sql is out of date: run `PARLEY_WRITE_SCHEMA=1 cargo nextest run --release -p parley-engine \
         the_schema_document_is_current`"
    );
}
