//! Reports (issue 45, part 1): how the agents and the people did over a period, compared with
//! the period before, by local day or week, split by the agent's version. Every figure is
//! defined in `docs/reports.md`. They are read off a roll-up of one row per conversation
//! (`store/reports`), which [`Engine::refresh_reports`] keeps up to date: a job does it every
//! minute and each report first catches up with what changed since.

pub mod csv;
pub mod facts;
pub mod period;

use std::collections::{BTreeMap, HashMap};

use parley_protocol::report::{
    Bucket, CurrencyOrders, Durations, Figures, ModelSpend, OperatorRow, Report, ReportQuery, Topic, VersionRow,
};

use super::Engine;
use super::answers::{QuestionGroup, group, terms};
use super::knowledge::embeddings::cosine;
use crate::store::reports::query::{self, BucketRow, Filter};
use crate::store::reports::{self as store, Facts};
use crate::store::{DbError, hours, unanswered};
use period::{Period, monday_of};

/// A conversation counts as settled (and abandoned, if unreplied) after this long idle.
pub const IDLE_MS: i64 = 30 * 60_000;
/// Changes are read again this far back, for writes stamped before a refresh but committed after.
const MARGIN_MS: i64 = 120_000;
/// Unanswered-question signals read for a report at most.
const SIGNALS: i64 = 2_000;
/// Topics of unanswered questions shown.
const TOPICS: usize = 10;

/// Why a report cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A field of the query is wrong: (field, message).
    #[error("{1}")]
    Invalid(&'static str, String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl Engine {
    /// Brings the reports' roll-up up to date with the conversations, messages, ratings and
    /// spend changed since the last refresh; the number of conversations rebuilt.
    pub async fn refresh_reports(&self) -> Result<usize, DbError> {
        self.refresh_reports_since(None).await
    }

    /// Rebuilds the roll-up of every conversation changed since `since` (Unix ms; `i64::MIN`:
    /// all), whatever the last refresh read: after data was imported or restored with earlier
    /// times, and once a day over the last two days for writes that reached the database late
    /// (a writer retrying through a database outage keeps its events' times).
    pub async fn rebuild_reports_since(&self, since: i64) -> Result<usize, DbError> {
        self.refresh_reports_since(Some(since)).await
    }

    async fn refresh_reports_since(&self, since: Option<i64>) -> Result<usize, DbError> {
        let _one = self.0.report_refresh.lock().await;
        let db = self.db();
        let now = self.now_ms();
        let since = match since {
            Some(s) => s,
            None => store::cursor(db).await?.saturating_sub(MARGIN_MS),
        };
        let ids = store::changed_since(db, since).await?;
        let user_ids: HashMap<String, String> = store::users_by_name(db).await?.into_iter().collect();
        let mut hours_of: HashMap<String, Option<hours::BusinessHours>> = HashMap::new();
        for chunk in ids.chunks(store::CHUNK) {
            let raws = store::read(db, chunk).await?;
            let mut facts: Vec<Facts> = Vec::with_capacity(raws.len());
            for raw in raws {
                let Some(agent) = raw.conv.as_ref().map(|c| c.agent_id.clone()) else { continue };
                if !hours_of.contains_key(&agent) {
                    let h = hours::of_agent(db, &agent).await?;
                    hours_of.insert(agent.clone(), h);
                }
                if let Some(f) = facts::compute(raw, hours_of[&agent].as_ref(), &user_ids) {
                    facts.push(f);
                }
            }
            store::store(db, chunk, &facts, now).await?;
        }
        store::advance_cursor(db, now).await?;
        Ok(ids.len())
    }

    /// The report `q` asks for, after catching up with the latest changes.
    pub async fn report(&self, q: &ReportQuery) -> Result<Report, ReportError> {
        let period = Period::parse(&q.from, &q.to, &q.time_zone, &q.by).map_err(|(f, m)| ReportError::Invalid(f, m))?;
        let none_if_empty = |s: &str| Some(s.trim()).filter(|s| !s.is_empty()).map(str::to_owned);
        let (agent, team, operator) =
            (none_if_empty(&q.agent_id), none_if_empty(&q.team_id), none_if_empty(&q.operator_id));
        let filter = Filter {
            agent_id: agent.as_deref(),
            team_id: team.as_deref(),
            operator_id: operator.as_deref(),
            version: q.version,
        };
        let mut lap = Lap::start();
        self.refresh_reports().await?;
        lap.at("refresh");
        let db = self.db();
        let now = self.now_ms();
        let (cur, prev) = (period.current_ms(), period.previous_ms());
        let span = (prev.0, cur.1);
        let by_day = period.local_days(false);

        // Conversations, by local day and version, both periods in one scan.
        let rows = query::buckets(db, &by_day, span, now - IDLE_MS, &filter).await?;
        lap.at("conversations");
        let buckets = period.buckets();
        let index: HashMap<i64, usize> = buckets.iter().enumerate().map(|(i, (n, _))| (*n, i)).collect();
        let mut out: Vec<Bucket> = buckets
            .iter()
            .map(|(n, first)| Bucket {
                start: if period.weeks { monday_of(*n).max(*first) } else { *first }.to_string(),
                ..Bucket::default()
            })
            .collect();
        let (mut current, mut previous) = (Figures::default(), Figures::default());
        let mut versions: BTreeMap<Option<i64>, Figures> = BTreeMap::new();
        for r in &rows {
            if period.is_current(r.bucket) {
                add(&mut current, r);
                add(versions.entry(r.version).or_default(), r);
                if let Some(&i) = index.get(&period.bucket_of(r.bucket)) {
                    add(&mut out[i].figures, r);
                }
            } else {
                add(&mut previous, r);
            }
        }

        // Distinct people: per bucket and over each period.
        let (per, all) = query::visitors(db, &period.local_days(period.weeks), cur, &filter).await?;
        current.visitors = all;
        for (n, people) in per {
            if let Some(&i) = index.get(&n) {
                out[i].figures.visitors = people;
            }
        }
        previous.visitors = query::visitors(db, &by_day, prev, &filter).await?.1;
        for (version, people) in query::people_by_version(db, cur, &filter).await? {
            versions.entry(version).or_default().visitors = people;
        }
        lap.at("people");

        // Operators' times: those whose first response or close fell in each period.
        let times = query::times(db, span, &filter).await?;
        lap.at("times");
        let within = |t: Option<i64>, (a, b): (i64, i64)| t.is_some_and(|t| a <= t && t < b);
        let frt = |range: (i64, i64), version: Option<Option<i64>>, by: Option<&str>| {
            durations(
                times
                    .iter()
                    .filter(|t| {
                        within(t.first_response_at, range)
                            && version.is_none_or(|v| t.version == v)
                            && by.is_none_or(|b| t.first_response_by.as_deref() == Some(b))
                    })
                    .map(|t| {
                        (t.first_response_at.unwrap_or_default() - t.handed_over_at, t.first_response_business_ms)
                    }),
            )
        };
        let resolution = |range: (i64, i64), version: Option<Option<i64>>| {
            durations(
                times
                    .iter()
                    .filter(|t| within(t.closed_by_person_at, range) && version.is_none_or(|v| t.version == v))
                    .map(|t| (t.closed_by_person_at.unwrap_or_default() - t.handed_over_at, t.resolution_business_ms)),
            )
        };
        current.first_response = frt(cur, None, None);
        current.resolution = resolution(cur, None);
        previous.first_response = frt(prev, None, None);
        previous.resolution = resolution(prev, None);
        let versions: Vec<VersionRow> = versions
            .into_iter()
            .map(|(version, mut figures)| {
                figures.first_response = frt(cur, Some(version), None);
                figures.resolution = resolution(cur, Some(version));
                VersionRow { version, figures }
            })
            .collect();
        let operators: Vec<OperatorRow> = query::operators(db, cur, &filter)
            .await?
            .into_iter()
            .map(|o| OperatorRow {
                first_response: frt(cur, None, Some(&o.user_id)),
                user_id: o.user_id,
                name: o.name,
                handled: o.handled,
                rated: o.rated,
                rated_good: o.rated_good,
            })
            .collect();

        // Money: the ledger by day and model; orders by currency.
        lap.at("operators");
        let spend = query::spend(db, &by_day, span, &filter).await?;
        lap.at("spend");
        let mut models: BTreeMap<String, ModelSpend> = BTreeMap::new();
        for s in spend.iter().filter(|s| period.is_current(s.bucket)) {
            let m = models
                .entry(s.model.clone())
                .or_insert_with(|| ModelSpend { model: s.model.clone(), ..ModelSpend::default() });
            m.usd += s.usd;
            if s.trial != 0 {
                m.trial_usd += s.usd;
            }
        }
        let mut spend_by_model: Vec<ModelSpend> = models.into_values().collect();
        spend_by_model.sort_by(|a, b| b.usd.total_cmp(&a.usd).then(a.model.cmp(&b.model)));
        let model_names: Vec<String> = spend_by_model.iter().map(|m| m.model.clone()).collect();
        for b in &mut out {
            b.spend_by_model = vec![0.0; model_names.len()];
        }
        for s in spend.iter().filter(|s| period.is_current(s.bucket)) {
            let (Some(&i), Some(m)) =
                (index.get(&period.bucket_of(s.bucket)), model_names.iter().position(|m| *m == s.model))
            else {
                continue;
            };
            out[i].spend_by_model[m] += s.usd;
        }
        let mut orders: BTreeMap<String, CurrencyOrders> = BTreeMap::new();
        for o in query::orders(db, &by_day, cur, &filter).await? {
            let c = orders
                .entry(o.currency.clone())
                .or_insert_with(|| CurrencyOrders { currency: o.currency.clone(), ..CurrencyOrders::default() });
            c.orders += o.orders;
            c.paid += o.paid;
            c.paid_minor += o.paid_minor;
        }

        lap.at("orders");
        let unanswered = self.topics(agent.as_deref(), cur).await?;
        lap.at("unanswered");
        Ok(Report {
            query: ReportQuery {
                from: period.from.to_string(),
                to: period.to.to_string(),
                time_zone: period.tz.name().to_owned(),
                by: if period.weeks { "week" } else { "day" }.to_owned(),
                agent_id: agent.clone().unwrap_or_default(),
                team_id: team.unwrap_or_default(),
                operator_id: operator.unwrap_or_default(),
                version: q.version,
            },
            previous_from: period.previous().0.to_string(),
            previous_to: period.previous().1.to_string(),
            current,
            previous,
            buckets: out,
            models: model_names,
            spend_by_model,
            operators,
            orders: orders.into_values().collect(),
            unanswered,
            versions,
            generated_at: now,
        })
    }

    /// Unanswered questions of the period grouped by topic, most asked first: by shared terms,
    /// then, when embeddings are on, groups that mean the same merged.
    async fn topics(&self, agent: Option<&str>, (from, to): (i64, i64)) -> Result<Vec<Topic>, DbError> {
        let found = unanswered::since(self.db(), agent, from, SIGNALS).await?;
        let found: Vec<_> = found.into_iter().filter(|u| u.at < to).collect();
        let mut groups = group(found);
        groups.truncate(EMBEDDED_GROUPS);
        let knowledge = &self.services().knowledge;
        if groups.len() > 1 && knowledge.has_embeddings() {
            let questions: Vec<String> = groups.iter().map(|g| g.question.clone()).collect();
            if let Some(vectors) = knowledge.embed_texts(&questions).await {
                groups = merge_by_meaning(groups, &vectors);
            }
        }
        Ok(groups
            .into_iter()
            .take(TOPICS)
            .map(|g| {
                let mut words: Vec<String> = terms(&g.question).into_iter().collect();
                words.sort_by(|a, b| b.chars().count().cmp(&a.chars().count()).then(a.cmp(b)));
                words.truncate(3);
                Topic {
                    gap: words.join(", "),
                    question: g.question,
                    count: g.count as i64,
                    reasons: g.reasons.into_iter().map(|(r, n)| (r.label().to_owned(), n as i64)).collect(),
                    conversations: g.conversations.into_iter().take(5).collect(),
                }
            })
            .collect())
    }
}

/// Groups whose questions' embeddings are at least this similar (cosine) are one topic.
const SAME_MEANING: f32 = 0.9;
/// Groups embedded for a report at most (the most asked).
const EMBEDDED_GROUPS: usize = 100;

/// Merges each group into the first (more asked) one that means the same (`vectors[i]` is group
/// `i`'s question's embedding), most asked first again.
pub fn merge_by_meaning(groups: Vec<QuestionGroup>, vectors: &[Vec<f32>]) -> Vec<QuestionGroup> {
    let mut kept: Vec<(usize, QuestionGroup)> = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        let same = vectors
            .get(i)
            .and_then(|v| kept.iter_mut().find(|(k, _)| vectors.get(*k).is_some_and(|w| cosine(v, w) >= SAME_MEANING)));
        match same {
            Some((_, into)) => {
                into.count += g.count;
                for (reason, n) in g.reasons {
                    *into.reasons.entry(reason).or_default() += n;
                }
                for c in g.conversations {
                    if !into.conversations.contains(&c) {
                        into.conversations.push(c);
                    }
                }
                into.last_at = into.last_at.max(g.last_at);
            }
            None => kept.push((i, g)),
        }
    }
    let mut out: Vec<QuestionGroup> = kept.into_iter().map(|(_, g)| g).collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(b.last_at.cmp(&a.last_at)));
    out
}

/// Times a report's steps (`RUST_LOG=parley_engine::engine::reports=debug`).
struct Lap(std::time::Instant);

impl Lap {
    fn start() -> Lap {
        Lap(std::time::Instant::now())
    }

    fn at(&mut self, step: &'static str) {
        tracing::debug!(step, ms = self.0.elapsed().as_secs_f64() * 1000.0, "report step");
        self.0 = std::time::Instant::now();
    }
}

/// Adds a roll-up row's counts to `f`.
fn add(f: &mut Figures, r: &BucketRow) {
    f.conversations += r.conversations;
    f.messages += r.messages;
    f.handed_over += r.handed_over;
    f.settled += r.settled;
    f.ai_resolved += r.ai_resolved;
    f.abandoned += r.abandoned;
    f.asked_for_person += r.asked;
    f.low_confidence += r.low_confidence;
    f.business_rule += r.business_rule;
    f.thumbs_up += r.thumbs_up;
    f.thumbs_down += r.thumbs_down;
    f.rated += r.rated;
    f.rated_good += r.rated_good;
    f.spend_usd += r.spend_usd;
}

/// The median and 90th percentile (nearest rank) of wall-clock and business-hours times.
fn durations(items: impl Iterator<Item = (i64, Option<i64>)>) -> Durations {
    let (mut wall, mut business): (Vec<i64>, Vec<i64>) = (Vec::new(), Vec::new());
    for (w, b) in items {
        wall.push(w.max(0));
        business.push(b.unwrap_or(w).max(0));
    }
    Durations {
        count: wall.len() as i64,
        median_ms: nearest_rank(&mut wall, 50),
        p90_ms: nearest_rank(&mut wall, 90),
        business_median_ms: nearest_rank(&mut business, 50),
        business_p90_ms: nearest_rank(&mut business, 90),
    }
}

/// The `p`th percentile by the nearest-rank method: the smallest value with at least p % of the
/// values at or below it.
pub fn nearest_rank(values: &mut [i64], p: usize) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let rank = (p * values.len()).div_ceil(100).max(1);
    Some(values[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_that_mean_the_same_are_merged() {
        use crate::store::unanswered::Reason;
        let g = |q: &str, count: usize, at: i64| QuestionGroup {
            question: q.into(),
            count,
            reasons: BTreeMap::from([(Reason::NothingFound, count)]),
            conversations: vec![format!("c-{q}")],
            last_at: at,
        };
        let groups = vec![g("ship to Canada?", 3, 1), g("zebra", 2, 5), g("deliver in Canada", 2, 9)];
        let vectors = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![0.99, 0.05]];
        let merged = merge_by_meaning(groups, &vectors);
        assert_eq!(merged.len(), 2);
        assert_eq!((merged[0].question.as_str(), merged[0].count, merged[0].last_at), ("ship to Canada?", 5, 9));
        assert_eq!(merged[0].conversations, ["c-ship to Canada?", "c-deliver in Canada"]);
        assert_eq!(merged[0].reasons[&Reason::NothingFound], 5);
        assert_eq!(merged[1].question, "zebra");
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut v = vec![15, 20, 35, 40, 50];
        assert_eq!(nearest_rank(&mut v, 50), Some(35));
        assert_eq!(nearest_rank(&mut v, 90), Some(50));
        let mut ten: Vec<i64> = (1..=10).rev().collect();
        assert_eq!((nearest_rank(&mut ten, 50), nearest_rank(&mut ten, 90)), (Some(5), Some(9)));
        assert_eq!(nearest_rank(&mut [], 50), None);
    }
}
