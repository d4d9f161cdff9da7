//! Room taken in the database's daily totals (`spend_days`), with replicas on PostgreSQL.

use std::sync::Mutex;

use super::{DAY_MS, KnownDays, LimitHit, MAX_DAYS_KEPT, lock};
use crate::store::spend;
use crate::store::usage::Spender;
use crate::store::{Db, DbError};

/// Takes `estimate` of room in `who`'s row for `day` under `cap` (making the row first unless
/// `known` says it exists): the row's key, or the limit reached.
pub(super) async fn take(
    db: &Db,
    known: &Mutex<KnownDays>,
    who: &Spender,
    cap: f64,
    day: i64,
    estimate: f64,
) -> Result<Result<String, LimitHit>, DbError> {
    let key = spend::key(who);
    let row = (key.clone(), day);
    if !lock(known).contains(&row) {
        spend::ensure_day(db, who, day, day * DAY_MS).await?;
        let mut known = lock(known);
        if known.len() >= MAX_DAYS_KEPT {
            known.retain(|(_, d)| *d == day);
        }
        known.insert(row);
    }
    Ok(match spend::take(db, &key, day, cap, estimate).await? {
        Ok(()) => Ok(key),
        Err(spent_usd) => Err(LimitHit::daily(who, spent_usd, cap)),
    })
}

/// Gives back room taken in `keys`' rows for a call that is not made.
pub(super) async fn release(db: &Db, keys: &[String], day: i64, estimate: f64) {
    for key in keys {
        if let Err(e) = spend::release(db, key, day, estimate).await {
            tracing::warn!(error = %e, spender = %key, "could not give back budget room held for a call not made");
        }
    }
}
