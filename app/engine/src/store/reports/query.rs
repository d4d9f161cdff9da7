//! Reports read off the roll-up (`report_conversations`, `report_handlers`) and, for money, off
//! the usage ledger and the orders. Each query covers the period and the one before it at once
//! and groups by local day or week in SQL, so a 90-day report is a handful of aggregate scans.

use super::super::script::Arg;
use super::super::{Db, DbError, DbKind, row_struct};

/// Local days in SQL: a time zone's offsets over the report's span, as the instants each one
/// starts (the first from the beginning of time) and its offset from UTC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalDays {
    pub offsets: Vec<(i64, i64)>,
    /// Group by week (Monday first) instead of by day.
    pub weeks: bool,
}

impl LocalDays {
    /// The local day (days since 1970-01-01) — or week — of the time in column `col`, as SQL.
    /// The numbers are the engine's own (no input reaches this text).
    pub fn sql(&self, col: &str) -> String {
        let shift = match self.offsets.as_slice() {
            [] => "0".to_owned(),
            [(_, only)] => only.to_string(),
            [first, rest @ ..] => {
                let mut s = String::from("CASE");
                let mut prev = first.1;
                for (start, offset) in rest {
                    s.push_str(&format!(" WHEN {col} < {start} THEN {prev}"));
                    prev = *offset;
                }
                s.push_str(&format!(" ELSE {prev} END"));
                s
            }
        };
        let day = format!("(({col} + ({shift})) / 86400000)");
        if self.weeks { format!("(({day} + 3) / 7)") } else { day }
    }
}

/// Which conversations a report covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter<'a> {
    pub agent_id: Option<&'a str>,
    pub team_id: Option<&'a str>,
    pub operator_id: Option<&'a str>,
    pub version: Option<i64>,
}

impl Filter<'_> {
    /// ` AND …` over the roll-up's row `r`, its values appended to `args`.
    fn sql(&self, args: &mut Vec<Arg>) -> String {
        let mut s = String::new();
        let mut push = |cond: &str, arg: Arg, args: &mut Vec<Arg>| {
            args.push(arg);
            s.push_str(&cond.replace('?', &format!("${}", args.len())));
        };
        if let Some(a) = self.agent_id {
            push(" AND r.agent_id = ?", Arg::Text(a.to_owned()), args);
        }
        if let Some(t) = self.team_id {
            push(" AND r.team_id = ?", Arg::Text(t.to_owned()), args);
        }
        if let Some(o) = self.operator_id {
            push(
                " AND r.conversation_id IN (SELECT conversation_id FROM report_handlers WHERE user_id = ?)",
                Arg::Text(o.to_owned()),
                args,
            );
        }
        if let Some(v) = self.version {
            push(" AND r.version = ?", Arg::Int(v), args);
        }
        s
    }

    /// Whether only some of an agent's conversations count (money is then read through them).
    fn narrows_conversations(&self) -> bool {
        self.team_id.is_some() || self.operator_id.is_some() || self.version.is_some()
    }
}

fn bind<'q, O>(
    mut q: sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>>,
    args: &'q [Arg],
) -> sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>> {
    for a in args {
        q = match a {
            Arg::Text(v) => q.bind(v.as_str()),
            Arg::MaybeText(v) => q.bind(v.as_deref()),
            Arg::Int(v) => q.bind(*v),
            Arg::MaybeInt(v) => q.bind(*v),
            Arg::Float(v) => q.bind(*v),
        };
    }
    q
}

row_struct! {
    /// The conversations of one local day or week and first-answer version.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct BucketRow {
        pub bucket: i64,
        pub version: Option<i64>,
        pub conversations: i64,
        pub messages: i64,
        pub handed_over: i64,
        pub settled: i64,
        pub ai_resolved: i64,
        pub abandoned: i64,
        pub asked: i64,
        pub low_confidence: i64,
        pub business_rule: i64,
        pub thumbs_up: i64,
        pub thumbs_down: i64,
        pub rated: i64,
        pub rated_good: i64,
        pub spend_usd: f64,
    }
}

/// Conversations created in `[from, to)` by local day or week and version. A conversation is
/// settled when closed or idle since before `idle_before`.
pub async fn buckets(
    db: &Db,
    days: &LocalDays,
    (from, to): (i64, i64),
    idle_before: i64,
    filter: &Filter<'_>,
) -> Result<Vec<BucketRow>, DbError> {
    let mut args = vec![Arg::Int(from), Arg::Int(to), Arg::Int(idle_before)];
    let cond = filter.sql(&mut args);
    let bucket = days.sql("r.created_at");
    let settled = "(r.closed = 1 OR r.last_activity_at < $3)";
    let sql = format!(
        "SELECT {bucket} AS bucket, r.version AS version, COUNT(*) AS conversations, \
         CAST(SUM(r.messages) AS BIGINT) AS messages, \
         CAST(SUM(CASE WHEN r.handed_over_at IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS handed_over, \
         CAST(SUM(CASE WHEN {settled} THEN 1 ELSE 0 END) AS BIGINT) AS settled, \
         CAST(SUM(CASE WHEN {settled} AND r.handed_over_at IS NULL AND r.answered = 1 AND r.rated_down = 0 \
              THEN 1 ELSE 0 END) AS BIGINT) AS ai_resolved, \
         CAST(SUM(CASE WHEN r.unreplied_since IS NOT NULL AND r.last_activity_at < $3 THEN 1 ELSE 0 END) AS BIGINT) \
              AS abandoned, \
         CAST(SUM(CASE WHEN r.handover_reason = 'asked' THEN 1 ELSE 0 END) AS BIGINT) AS asked, \
         CAST(SUM(CASE WHEN r.handover_reason = 'low_confidence' THEN 1 ELSE 0 END) AS BIGINT) AS low_confidence, \
         CAST(SUM(CASE WHEN r.handover_reason = 'business_rule' THEN 1 ELSE 0 END) AS BIGINT) AS business_rule, \
         CAST(SUM(r.thumbs_up) AS BIGINT) AS thumbs_up, CAST(SUM(r.thumbs_down) AS BIGINT) AS thumbs_down, \
         CAST(SUM(CASE WHEN r.csat IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS rated, \
         CAST(SUM(CASE WHEN r.csat >= 4 THEN 1 ELSE 0 END) AS BIGINT) AS rated_good, \
         SUM(r.spend_usd) AS spend_usd \
         FROM report_conversations r WHERE r.created_at >= $1 AND r.created_at < $2{cond} \
         GROUP BY 1, 2"
    );
    bind(sqlx::query_as(&sql), &args).fetch_all(&mut *db.read().await?).await
}

/// `SELECT <key>, <distinct people>` over the roll-up rows matching `cond`, grouped by `key`
/// (none: one row). PostgreSQL hashes a `DISTINCT` subquery but can only sort for
/// `COUNT(DISTINCT …)`; SQLite is faster with the latter.
fn people_sql(kind: DbKind, key: Option<&str>, cond: &str) -> String {
    let range = format!("FROM report_conversations r WHERE r.created_at >= $1 AND r.created_at < $2{cond}");
    match (kind, key) {
        (DbKind::Postgres, Some(k)) => {
            format!("SELECT k, COUNT(*) FROM (SELECT DISTINCT {k} AS k, r.person_id {range}) AS d GROUP BY k")
        }
        (DbKind::Postgres, None) => format!("SELECT COUNT(*) FROM (SELECT DISTINCT r.person_id {range}) AS d"),
        (_, Some(k)) => format!("SELECT {k} AS k, COUNT(DISTINCT r.person_id) {range} GROUP BY 1"),
        (_, None) => format!("SELECT COUNT(DISTINCT r.person_id) {range}"),
    }
}

/// Distinct people behind the conversations created in `[from, to)`: per local day or week
/// (`days`), and over the whole span.
pub async fn visitors(
    db: &Db,
    days: &LocalDays,
    (from, to): (i64, i64),
    filter: &Filter<'_>,
) -> Result<(Vec<(i64, i64)>, i64), DbError> {
    let mut args = vec![Arg::Int(from), Arg::Int(to)];
    let cond = filter.sql(&mut args);
    let bucket = days.sql("r.created_at");
    let mut conn = db.read().await?;
    let per: Vec<(i64, i64)> =
        bind(sqlx::query_as(&people_sql(db.kind(), Some(&bucket), &cond)), &args).fetch_all(&mut *conn).await?;
    let (all,): (i64,) = bind(sqlx::query_as(&people_sql(db.kind(), None, &cond)), &args).fetch_one(&mut *conn).await?;
    Ok((per, all))
}

/// Distinct people behind the conversations created in `[from, to)`, by first-answer version.
pub async fn people_by_version(
    db: &Db,
    (from, to): (i64, i64),
    filter: &Filter<'_>,
) -> Result<Vec<(Option<i64>, i64)>, DbError> {
    let mut args = vec![Arg::Int(from), Arg::Int(to)];
    let cond = filter.sql(&mut args);
    let sql = people_sql(db.kind(), Some("r.version"), &cond);
    bind(sqlx::query_as(&sql), &args).fetch_all(&mut *db.read().await?).await
}

row_struct! {
    /// A handed-over conversation's times.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TimesRow {
        pub handed_over_at: i64,
        pub first_response_at: Option<i64>,
        pub first_response_by: Option<String>,
        pub first_response_business_ms: Option<i64>,
        pub closed_by_person_at: Option<i64>,
        pub resolution_business_ms: Option<i64>,
        pub version: Option<i64>,
    }
}

/// Handed-over conversations whose first response or close by a person fell in `[from, to)`.
pub async fn times(db: &Db, (from, to): (i64, i64), filter: &Filter<'_>) -> Result<Vec<TimesRow>, DbError> {
    let mut args = vec![Arg::Int(from), Arg::Int(to)];
    let cond = filter.sql(&mut args);
    let sql = format!(
        "SELECT r.handed_over_at, r.first_response_at, r.first_response_by, r.first_response_business_ms, \
         r.closed_by_person_at, r.resolution_business_ms, r.version FROM report_conversations r \
         WHERE r.handed_over_at IS NOT NULL AND r.created_at < $2 \
         AND ((r.first_response_at >= $1 AND r.first_response_at < $2) \
              OR (r.closed_by_person_at >= $1 AND r.closed_by_person_at < $2)){cond}"
    );
    bind(sqlx::query_as(&sql), &args).fetch_all(&mut *db.read().await?).await
}

row_struct! {
    /// One console user's conversations in a period.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct OperatorRow {
        pub user_id: String,
        pub name: String,
        pub handled: i64,
        pub rated: i64,
        pub rated_good: i64,
    }
}

/// Console users who wrote in conversations created in `[from, to)`, most conversations first.
/// (`CROSS JOIN`: SQLite then reads the few handlers' rows first and looks each conversation up,
/// instead of every conversation of the period; PostgreSQL plans it as it likes.)
pub async fn operators(db: &Db, (from, to): (i64, i64), filter: &Filter<'_>) -> Result<Vec<OperatorRow>, DbError> {
    let mut args = vec![Arg::Int(from), Arg::Int(to)];
    let cond = filter.sql(&mut args);
    let sql = format!(
        "SELECT h.user_id AS user_id, COALESCE(u.name, h.user_id) AS name, COUNT(*) AS handled, \
         CAST(SUM(CASE WHEN r.csat IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS rated, \
         CAST(SUM(CASE WHEN r.csat >= 4 THEN 1 ELSE 0 END) AS BIGINT) AS rated_good \
         FROM report_handlers h CROSS JOIN report_conversations r LEFT JOIN users u ON u.id = h.user_id \
         WHERE r.conversation_id = h.conversation_id AND r.created_at >= $1 AND r.created_at < $2{cond} \
         GROUP BY h.user_id, u.name ORDER BY COUNT(*) DESC, h.user_id"
    );
    bind(sqlx::query_as(&sql), &args).fetch_all(&mut *db.read().await?).await
}

row_struct! {
    /// Spend of one model on one local day or week; `trial` 1 for the ledger's rows with no
    /// conversation (answer tests, previews, their judges).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SpendRow {
        pub bucket: i64,
        pub model: String,
        pub trial: i64,
        pub usd: f64,
    }
}

/// The usage ledger's cost in `[from, to)` by local day or week and model. With a team, an
/// operator or a version chosen, only the spend on those conversations counts.
pub async fn spend(
    db: &Db,
    days: &LocalDays,
    (from, to): (i64, i64),
    filter: &Filter<'_>,
) -> Result<Vec<SpendRow>, DbError> {
    let mut args = vec![Arg::Int(from), Arg::Int(to)];
    let bucket = days.sql("l.created_at");
    let mut cond = String::new();
    if let Some(a) = filter.agent_id {
        args.push(Arg::Text(a.to_owned()));
        cond.push_str(&format!(" AND l.agent_id = ${}", args.len()));
    }
    if filter.narrows_conversations() {
        let inner = Filter { agent_id: None, ..*filter }.sql(&mut args);
        cond.push_str(&format!(
            " AND l.conversation_id IN (SELECT r.conversation_id FROM report_conversations r WHERE 1 = 1{inner})"
        ));
    }
    let sql = format!(
        "SELECT {bucket} AS bucket, l.model AS model, \
         CAST(CASE WHEN l.conversation_id IS NULL THEN 1 ELSE 0 END AS BIGINT) AS trial, SUM(l.cost_usd) AS usd \
         FROM usage_ledger l WHERE l.created_at >= $1 AND l.created_at < $2{cond} GROUP BY 1, 2, 3"
    );
    bind(sqlx::query_as(&sql), &args).fetch_all(&mut *db.read().await?).await
}

row_struct! {
    /// Orders in one currency on one local day or week.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct OrdersRow {
        pub bucket: i64,
        pub currency: String,
        pub orders: i64,
        pub paid: i64,
        pub paid_minor: i64,
    }
}

/// Orders created in `[from, to)`, by local day or week and currency.
pub async fn orders(
    db: &Db,
    days: &LocalDays,
    (from, to): (i64, i64),
    filter: &Filter<'_>,
) -> Result<Vec<OrdersRow>, DbError> {
    let mut args = vec![Arg::Int(from), Arg::Int(to)];
    let bucket = days.sql("o.created_at");
    let mut cond = String::new();
    if let Some(a) = filter.agent_id {
        args.push(Arg::Text(a.to_owned()));
        cond.push_str(&format!(" AND o.agent_id = ${}", args.len()));
    }
    if filter.narrows_conversations() {
        let inner = Filter { agent_id: None, ..*filter }.sql(&mut args);
        cond.push_str(&format!(
            " AND o.conversation_id IN (SELECT r.conversation_id FROM report_conversations r WHERE 1 = 1{inner})"
        ));
    }
    let sql = format!(
        "SELECT {bucket} AS bucket, o.currency AS currency, COUNT(*) AS orders, \
         CAST(SUM(CASE WHEN o.status = 'paid' THEN 1 ELSE 0 END) AS BIGINT) AS paid, \
         CAST(SUM(CASE WHEN o.status = 'paid' THEN o.amount_minor ELSE 0 END) AS BIGINT) AS paid_minor \
         FROM orders o WHERE o.created_at >= $1 AND o.created_at < $2{cond} GROUP BY 1, 2"
    );
    bind(sqlx::query_as(&sql), &args).fetch_all(&mut *db.read().await?).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_days_follow_the_offsets() {
        let one = LocalDays { offsets: vec![(i64::MIN, 3_600_000)], weeks: false };
        assert_eq!(one.sql("t"), "((t + (3600000)) / 86400000)");
        let two = LocalDays { offsets: vec![(i64::MIN, 3_600_000), (100, 7_200_000)], weeks: true };
        assert_eq!(two.sql("t"), "((((t + (CASE WHEN t < 100 THEN 3600000 ELSE 7200000 END)) / 86400000) + 3) / 7)");
    }
}
