//! Today's spend of each agent and visitor in the database (table `spend_days`), for replicas on
//! one PostgreSQL (issue 14): a daily cap holds across processes because room is taken with one
//! conditional `UPDATE` that the database applies to one caller at a time (the row lock), and a
//! call's cost lands in the same transaction as its ledger row. Each statement is also valid on
//! SQLite (the tests run them on both).

use super::script::{Arg, Stmt};
use super::usage::{self, Spender};
use super::{Db, DbError};

/// `held` at or under this is nothing held (what is left of adding and taking back floats).
const NOTHING_HELD: f64 = 1e-9;

/// A spender's row key: `agent:<id>`, `visitor:<id>` or `address:<address or /64>`.
pub fn key(who: &Spender) -> String {
    match who {
        Spender::Agent(id) => format!("agent:{id}"),
        Spender::Visitor(id) => format!("visitor:{id}"),
        Spender::Address(group) => format!("address:{group}"),
    }
}

/// A settled call's cost and the room it held, applied to one spender's day with its ledger row.
#[derive(Clone, Debug, PartialEq)]
pub struct SpendSettle {
    pub spender: String,
    pub day: i64,
    pub cost_usd: f64,
    pub release_usd: f64,
}

/// Makes the spender's row for `day` (which starts at `since_ms`) from the ledger, unless another
/// call or replica made it first.
pub async fn ensure_day(db: &Db, who: &Spender, day: i64, since_ms: i64) -> Result<(), DbError> {
    let spent = usage::spend_since(db, who, since_ms).await?;
    sqlx::query("INSERT INTO spend_days (spender, day, spent, held) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING")
        .bind(key(who))
        .bind(day)
        .bind(spent)
        .execute(db.writer())
        .await?;
    Ok(())
}

/// Takes `estimate` of room in the spender's day under `cap`: `Ok(())`, or `Err(spent)` when the
/// cap is reached. The first call may go while nothing is held (its cost is not known before it
/// is made); after that, room is taken only while everything held fits under the cap.
pub async fn take(db: &Db, spender: &str, day: i64, cap: f64, estimate: f64) -> Result<Result<(), f64>, DbError> {
    let taken: Option<f64> = sqlx::query_scalar(&format!(
        "UPDATE spend_days SET held = held + $3 WHERE spender = $1 AND day = $2 AND spent < $4 \
         AND (held <= {NOTHING_HELD:e} OR spent + held + $3 <= $4) RETURNING spent"
    ))
    .bind(spender)
    .bind(day)
    .bind(estimate)
    .bind(cap)
    .fetch_optional(db.writer())
    .await?;
    if taken.is_some() {
        return Ok(Ok(()));
    }
    Ok(Err(spent(db, spender, day).await?.unwrap_or(0.0)))
}

/// Gives back room taken for a call that was not made.
pub async fn release(db: &Db, spender: &str, day: i64, amount: f64) -> Result<(), DbError> {
    sqlx::query(
        "UPDATE spend_days SET held = CASE WHEN held > $3 THEN held - $3 ELSE 0 END WHERE spender = $1 AND day = $2",
    )
    .bind(spender)
    .bind(day)
    .bind(amount)
    .execute(db.writer())
    .await?;
    Ok(())
}

/// The statement settling a call (run by the stream writer with the call's ledger row).
pub fn settle_stmt(s: &SpendSettle) -> Stmt {
    Stmt::new(
        "UPDATE spend_days SET spent = spent + $3, held = CASE WHEN held > $4 THEN held - $4 ELSE 0 END \
         WHERE spender = $1 AND day = $2",
        vec![Arg::from(&s.spender), Arg::from(s.day), Arg::from(s.cost_usd), Arg::from(s.release_usd)],
    )
}

/// The statements settling many calls: one per spender and day, the calls' costs and releases
/// summed (the same result as settling them one by one, since releases are never negative), in
/// the order of spender and day so that concurrent transactions take the rows' locks in one order.
pub fn settle_stmts<'a>(settles: impl IntoIterator<Item = &'a SpendSettle>) -> Vec<Stmt> {
    let mut sums: std::collections::BTreeMap<(&str, i64), (f64, f64)> = std::collections::BTreeMap::new();
    for s in settles {
        let sum = sums.entry((s.spender.as_str(), s.day)).or_insert((0.0, 0.0));
        sum.0 += s.cost_usd;
        sum.1 += s.release_usd.max(0.0);
    }
    sums.into_iter()
        .map(|((spender, day), (cost_usd, release_usd))| {
            settle_stmt(&SpendSettle { spender: spender.to_owned(), day, cost_usd, release_usd })
        })
        .collect()
}

/// What the spender spent on `day`, if its row exists.
pub async fn spent(db: &Db, spender: &str, day: i64) -> Result<Option<f64>, DbError> {
    sqlx::query_scalar("SELECT spent FROM spend_days WHERE spender = $1 AND day = $2")
        .bind(spender)
        .bind(day)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// `(spent, held)` of the spender's day (tests, the console).
pub async fn day(db: &Db, spender: &str, day: i64) -> Result<Option<(f64, f64)>, DbError> {
    sqlx::query_as("SELECT spent, held FROM spend_days WHERE spender = $1 AND day = $2")
        .bind(spender)
        .bind(day)
        .fetch_optional(&mut *db.read().await?)
        .await
}

/// Deletes the daily totals of days before `day` (they are never read again).
pub async fn prune(db: &Db, day: i64) -> Result<u64, DbError> {
    Ok(sqlx::query("DELETE FROM spend_days WHERE day < $1").bind(day).execute(db.writer()).await?.rows_affected())
}
