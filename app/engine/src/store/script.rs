//! Statements built at run time and executed together. On SQLite a whole batch runs as one
//! script — `BEGIN; …; COMMIT;` in a single call — because every call is a round trip to sqlx's
//! SQLite worker thread (50–100 µs here), which dominated the cost of storing a turn. On
//! PostgreSQL the same statements run one by one inside a transaction.

use sqlx::AnyConnection;

use super::{DbError, DbKind};

/// A bound value.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Text(String),
    MaybeText(Option<String>),
    Int(i64),
    /// A whole number or NULL (bound as an integer, so PostgreSQL takes it for a BIGINT column).
    MaybeInt(Option<i64>),
    Float(f64),
}

impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Text(v.to_owned())
    }
}

impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Text(v)
    }
}

impl From<&String> for Arg {
    fn from(v: &String) -> Self {
        Arg::Text(v.clone())
    }
}

impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Self {
        Arg::MaybeText(v)
    }
}

impl From<&Option<String>> for Arg {
    fn from(v: &Option<String>) -> Self {
        Arg::MaybeText(v.clone())
    }
}

impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}

impl From<u64> for Arg {
    fn from(v: u64) -> Self {
        Arg::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Arg {
    fn from(v: f64) -> Self {
        Arg::Float(v)
    }
}

/// One statement with `$1`, `$2`, … placeholders and their values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stmt {
    pub sql: String,
    pub args: Vec<Arg>,
}

impl Stmt {
    pub fn new(sql: impl Into<String>, args: Vec<Arg>) -> Stmt {
        Stmt { sql: sql.into(), args }
    }
}

/// Replaces NUL characters in the statement's text values with U+FFFD (PostgreSQL refuses
/// them in text columns).
pub fn repair(stmt: &mut Stmt) {
    for a in &mut stmt.args {
        match a {
            Arg::Text(v) | Arg::MaybeText(Some(v)) if v.contains('\0') => *v = v.replace('\0', "\u{fffd}"),
            _ => {}
        }
    }
}

/// Parameters per SQLite script (each statement may have up to 32,766).
const MAX_SCRIPT_ARGS: usize = 30_000;

/// Appends `sql` with its `$n` placeholders turned into positional `?`, and the matching values
/// in order. (Numbered placeholders across a long script make sqlx look each one up by name, which
/// SQLite does by walking a list: quadratic in the number of parameters.)
fn to_positional(sql: &str, args: &[Arg], out_sql: &mut String, out_args: &mut Vec<Arg>) {
    let bytes = sql.as_bytes();
    let mut i = 0;
    let mut plain_from = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            if end > start {
                let n: usize = sql[start..end].parse().unwrap_or(0);
                out_sql.push_str(&sql[plain_from..i]);
                out_sql.push('?');
                out_args.push(args.get(n.wrapping_sub(1)).cloned().unwrap_or(Arg::MaybeText(None)));
                i = end;
                plain_from = end;
                continue;
            }
        }
        i += 1;
    }
    out_sql.push_str(&sql[plain_from..]);
}

fn bind_all<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    args: &'q [Arg],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    for a in args {
        query = match a {
            Arg::Text(v) => query.bind(v.as_str()),
            Arg::MaybeText(v) => query.bind(v.as_deref()),
            Arg::Int(v) => query.bind(*v),
            Arg::MaybeInt(v) => query.bind(*v),
            Arg::Float(v) => query.bind(*v),
        };
    }
    query
}

/// Runs the statements one by one on `conn`, inside a transaction the caller holds.
pub async fn run_each(conn: &mut AnyConnection, stmts: &[Stmt]) -> Result<(), DbError> {
    for s in stmts {
        bind_all(sqlx::query(&s.sql), &s.args).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Runs the statements atomically (per script on SQLite when they need more parameters than one
/// script can hold).
pub async fn run(conn: &mut AnyConnection, kind: DbKind, stmts: &[Stmt]) -> Result<(), DbError> {
    if stmts.is_empty() {
        return Ok(());
    }
    match kind {
        DbKind::Postgres => {
            let mut tx = sqlx::Connection::begin(&mut *conn).await?;
            for s in stmts {
                bind_all(sqlx::query(&s.sql), &s.args).execute(&mut *tx).await?;
            }
            tx.commit().await
        }
        DbKind::Sqlite => {
            let mut start = 0;
            while start < stmts.len() {
                let mut sql = String::from("BEGIN IMMEDIATE;\n");
                let mut args: Vec<Arg> = Vec::new();
                let mut end = start;
                while end < stmts.len() && (end == start || args.len() + stmts[end].args.len() <= MAX_SCRIPT_ARGS) {
                    to_positional(&stmts[end].sql, &stmts[end].args, &mut sql, &mut args);
                    sql.push_str(";\n");
                    end += 1;
                }
                sql.push_str("COMMIT;");
                // A script is written for its batch and never runs again: not kept prepared (sqlx
                // would cache every statement of every batch on the writer's connection).
                let result = bind_all(sqlx::query(&sql), &args).persistent(false).execute(&mut *conn).await;
                if let Err(e) = result {
                    // The script stopped half-way: end its transaction before anything else runs.
                    let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
                    return Err(e);
                }
                start = end;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Arg, to_positional};

    #[test]
    fn numbered_placeholders_become_positional_in_order() {
        let mut sql = String::new();
        let mut args = vec![Arg::Int(0)];
        let given = [Arg::from("a"), Arg::from("b")];
        to_positional("UPDATE t SET x = x || $2, y = 'naïve $' WHERE id = $1 OR id2 = $1", &given, &mut sql, &mut args);
        assert_eq!(sql, "UPDATE t SET x = x || ?, y = 'naïve $' WHERE id = ? OR id2 = ?");
        assert_eq!(args, vec![Arg::Int(0), Arg::from("b"), Arg::from("a"), Arg::from("a")]);
    }
}
