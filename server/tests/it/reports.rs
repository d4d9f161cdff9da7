//! Reports (issue 45, part 1) on SQLite and PostgreSQL. A fixture whose right answers are worked
//! out by hand (in `docs/reports.md`'s terms): conversations in Paris across a clock change and a
//! weekend with business hours, hand-overs of each reason, ratings, spend, orders, a trial, a
//! merged contact; every figure of the period and the one before, by day and week, in another
//! time zone, filtered by agent, team, operator and version; the CSV and JSON exports match the
//! page's report; a person deleted leaves the figures. Then the real path: a visitor's
//! conversation through the fake OpenAI, the contact form, an operator's claim, reply and close,
//! and a rating, as the report counts them.

use chrono::TimeZone;
use chrono_tz::Europe::Paris;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{conversations as c, hours as h, reports as r};
use parley_protocol::report::{Report, ReportQuery};
use serde_json::json;

use crate::harness::fixtures::{ADMIN, OSCAR};
use crate::harness::*;

const MIN: i64 = 60_000;

/// Paris wall-clock time in Unix ms.
fn paris(m: u32, d: u32, hh: u32, mm: u32) -> i64 {
    Paris.with_ymd_and_hms(2026, m, d, hh, mm, 0).unwrap().timestamp_millis()
}

/// Literal SQL for the fixture (both databases read it the same).
fn q(s: Option<&str>) -> String {
    s.map(|s| format!("'{s}'")).unwrap_or_else(|| "NULL".into())
}

struct Fixture {
    sql: Vec<String>,
    n: u32,
}

impl Fixture {
    fn visitor(&mut self, id: &str, agent: &str, merged_into: Option<&str>) {
        self.sql.push(format!(
            "INSERT INTO visitors (id, agent_id, token_hash, created_at, last_seen_at, merged_into) \
             VALUES ('{id}', '{agent}', 'hash-{id}', 0, 0, {})",
            q(merged_into)
        ));
    }

    fn conversation(&mut self, id: &str, agent: &str, visitor: &str, at: i64, status: &str, team: Option<&str>) {
        self.sql.push(format!(
            "INSERT INTO conversations (id, agent_id, visitor_id, status, lead_submitted, created_at, updated_at, \
             team_id, trial) VALUES ('{id}', '{agent}', '{visitor}', '{status}', 0, {at}, {at}, {}, 0)",
            q(team)
        ));
    }

    /// A message; its id is returned.
    fn message(
        &mut self,
        conv: &str,
        role: &str,
        status: &str,
        at: i64,
        version: Option<i64>,
        author: (Option<&str>, Option<&str>),
    ) -> String {
        self.n += 1;
        let id = format!("m{}", self.n);
        self.sql.push(format!(
            "INSERT INTO messages (id, conversation_id, role, content, blocks, status, start_seq, created_at, \
             updated_at, author, author_id, agent_version) VALUES ('{id}', '{conv}', '{role}', 'text', '[]', \
             '{status}', 0, {at}, {at}, {}, {}, {})",
            q(author.0),
            q(author.1),
            version.map(|v| v.to_string()).unwrap_or_else(|| "NULL".into())
        ));
        id
    }

    fn handoff(&mut self, conv: &str, to: &str, at: i64) {
        self.n += 1;
        let seq = self.n;
        self.sql.push(format!(
            "INSERT INTO events (conversation_id, seq, last_seq, name, data, created_at) \
             VALUES ('{conv}', {seq}, {seq}, 'handoff', '{{\"to\":\"{to}\"}}', {at})"
        ));
    }

    fn tool(&mut self, conv: &str, message: &str, name: &str, result: &str, at: i64) {
        self.n += 1;
        self.sql.push(format!(
            "INSERT INTO tool_calls (id, message_id, conversation_id, call_id, hop, name, arguments, result, status, \
             created_at) VALUES ('t{}', '{message}', '{conv}', 'call', 0, '{name}', '{{}}', '{result}', 'done', {at})",
            self.n
        ));
    }

    fn rating(&mut self, agent: &str, conv: &str, message: &str, score: i64, at: i64) {
        self.n += 1;
        self.sql.push(format!(
            "INSERT INTO ratings (id, agent_id, conversation_id, message_id, score, created_at, updated_at) \
             VALUES ('r{}', '{agent}', '{conv}', '{message}', {score}, {at}, {at})",
            self.n
        ));
    }

    fn spend(&mut self, agent: &str, conv: Option<&str>, model: &str, usd: f64, at: i64) {
        self.n += 1;
        self.sql.push(format!(
            "INSERT INTO usage_ledger (id, agent_id, conversation_id, message_id, provider, model, outcome, \
             input_tokens, output_tokens, cached_tokens, cost_usd, latency_ms, created_at) \
             VALUES ('u{}', '{agent}', {}, NULL, 'openai', '{model}', 'ok', 10, 10, 0, {usd}, 5, {at})",
            self.n,
            q(conv)
        ));
    }

    /// An order of `minor` units of `currency` (`status`: paid or pending).
    fn order(
        &mut self,
        (agent, conv, visitor): (&str, &str, &str),
        (minor, currency): (i64, &str),
        status: &str,
        at: i64,
    ) {
        self.n += 1;
        let n = self.n;
        self.sql.push(format!(
            "INSERT INTO orders (id, agent_id, conversation_id, visitor_id, message_id, service_type, category, \
             amount_minor, currency, method, status, provider, pay_url, idempotency_key, created_at, expires_at, \
             updated_at) VALUES ('o{n}', '{agent}', '{conv}', '{visitor}', 'm', 'ASSESSMENT', 'QMAS', {minor}, \
             '{currency}', 'CARD', '{status}', 'sandbox', 'https://pay.example/{n}', 'key{n}', {at}, {at}, {at})"
        ));
    }
}

/// The hand-worked fixture (see each conversation's comment); returns nothing, the figures are
/// asserted below.
async fn fill(app: &TestApp, a: &str, b: &str, ada: &str) {
    let mut f = Fixture { sql: Vec::new(), n: 0 };
    let fx = &mut f;
    fx.sql.push("INSERT INTO teams (id, name, created_at, updated_at) VALUES ('t1', 'Sales', 0, 0)".into());
    for (v, agent, merged) in [
        ("v1", a, None),
        ("v2", a, None),
        ("v3", a, Some("v2")),
        ("v4", a, None),
        ("v5", a, None),
        ("v6", a, None),
        ("v7", b, None),
        ("v8", a, None),
    ] {
        fx.visitor(v, agent, merged);
    }
    let none = (None, None);
    // c1: Tuesday 3 Nov, answered (version 1), thumbs up: AI-resolved.
    let t = paris(11, 3, 10, 0);
    fx.conversation("c1", a, "v1", t, "bot", None);
    fx.message("c1", "visitor", "complete", t, None, none);
    let m = fx.message("c1", "assistant", "complete", t + 30_000, Some(1), none);
    fx.rating(a, "c1", &m, 1, t + MIN);
    fx.spend(a, Some("c1"), "gpt-a", 0.01, t + 30_000);
    // c2: 00:30 on Wednesday 4 Nov in Paris (still the 3rd in UTC), the same person, version 2,
    // thumbs down: not resolved.
    let t = paris(11, 4, 0, 30);
    fx.conversation("c2", a, "v1", t, "bot", None);
    fx.message("c2", "visitor", "complete", t, None, none);
    let m = fx.message("c2", "assistant", "complete", t + 30_000, Some(2), none);
    fx.rating(a, "c2", &m, -1, t + MIN);
    fx.spend(a, Some("c2"), "gpt-a", 0.02, t + 30_000);
    // c3: Thursday 5 Nov 10:00, team Sales; the escalation tool, the contact form (waiting) a
    // minute later, Ada claims, answers at 10:06 and closes at 10:21; rated 5. Asked for a person,
    // first response 5 minutes, resolution 20. A paid order of $50.
    let t = paris(11, 5, 10, 0);
    fx.conversation("c3", a, "v2", t, "closed", Some("t1"));
    fx.message("c3", "visitor", "complete", t, None, none);
    let m = fx.message("c3", "assistant", "complete", t + 30_000, Some(1), none);
    fx.tool("c3", &m, "escalate_to_human", r#"{"ok":true}"#, t + 20_000);
    fx.handoff("c3", "waiting", t + MIN);
    fx.handoff("c3", "human", t + 2 * MIN);
    fx.message("c3", "operator", "complete", t + 6 * MIN, None, (Some("Ada"), Some(ada)));
    fx.handoff("c3", "closed", t + 21 * MIN);
    fx.rating(a, "c3", "", 5, t + 22 * MIN);
    fx.spend(a, Some("c3"), "gpt-b", 0.03, t + 30_000);
    fx.order((a, "c3", "v2"), (5000, "USD"), "paid", t + 40_000);
    // c4: Friday 6 Nov 16:50, team Sales; knowledge search found nothing, Oscar claims at 16:55
    // and answers on Monday at 09:05 (his name only: a reply from before ids were kept); rated 2.
    // Low confidence; first response 64 h 10 min, 10 minutes of business hours.
    let t = paris(11, 6, 16, 50);
    fx.conversation("c4", a, "v4", t, "human", Some("t1"));
    fx.message("c4", "visitor", "complete", t, None, none);
    let m = fx.message("c4", "assistant", "complete", t + 30_000, Some(1), none);
    fx.tool("c4", &m, "search_knowledge", r#"{"success":true,"sources":[]}"#, t + 10_000);
    fx.handoff("c4", "human", t + 5 * MIN);
    fx.message("c4", "operator", "complete", paris(11, 9, 9, 5), None, (Some("Oscar"), None));
    fx.rating(a, "c4", "", 2, paris(11, 9, 10, 0));
    // c5: Saturday 7 Nov, the answer failed and nobody replied: abandoned.
    let t = paris(11, 7, 11, 0);
    fx.conversation("c5", a, "v5", t, "bot", None);
    fx.message("c5", "visitor", "complete", t, None, none);
    fx.message("c5", "assistant", "failed", t + 10_000, None, none);
    // c6: Tuesday 10 Nov 14:00, a merged contact (v3 is v2), version 2; knowledge found
    // something, Ada steps in at 14:01 (a business rule), answers at 14:31, closes at 15:01.
    // A pending order.
    let t = paris(11, 10, 14, 0);
    fx.conversation("c6", a, "v3", t, "closed", None);
    fx.message("c6", "visitor", "complete", t, None, none);
    let m = fx.message("c6", "assistant", "complete", t + 30_000, Some(2), none);
    fx.tool("c6", &m, "search_knowledge", r#"{"success":true,"sources":[{"title":"Refunds"}]}"#, t + 10_000);
    fx.handoff("c6", "human", t + MIN);
    fx.message("c6", "operator", "complete", t + 31 * MIN, None, (Some("Ada"), Some(ada)));
    fx.handoff("c6", "closed", t + 61 * MIN);
    fx.spend(a, Some("c6"), "gpt-b", 0.05, t + 30_000);
    fx.order((a, "c6", "v3"), (2000, "USD"), "pending", t + 40_000);
    // c7: a trial (an answer test): never counted.
    let t = paris(11, 10, 15, 0);
    fx.conversation("c7", a, "v6", t, "bot", None);
    fx.sql.push("UPDATE conversations SET trial = 1 WHERE id = 'c7'".into());
    fx.message("c7", "visitor", "complete", t, None, none);
    fx.message("c7", "assistant", "complete", t + 1000, Some(1), none);
    // A judge's call: spend with no conversation.
    fx.spend(a, None, "gpt-a", 0.007, t);
    // c8: the other agent, Thursday 12 Nov, resolved; a paid order of HK$100.
    let t = paris(11, 12, 9, 0);
    fx.conversation("c8", b, "v7", t, "bot", None);
    fx.message("c8", "visitor", "complete", t, None, none);
    fx.message("c8", "assistant", "complete", t + 30_000, Some(1), none);
    fx.spend(b, Some("c8"), "gpt-a", 0.004, t + 30_000);
    fx.order((b, "c8", "v7"), (10000, "HKD"), "paid", t + 40_000);
    // The period before (19 Oct – 1 Nov; summer time ends on 25 Oct).
    // p1: Monday 26 Oct, resolved.
    let t = paris(10, 26, 12, 0);
    fx.conversation("p1", a, "v8", t, "bot", None);
    fx.message("p1", "visitor", "complete", t, None, none);
    fx.message("p1", "assistant", "complete", t + 30_000, Some(1), none);
    fx.spend(a, Some("p1"), "gpt-a", 0.04, t + 30_000);
    // p2: Tuesday 20 Oct (summer time), the contact form, Ada answers 2 minutes later.
    let t = paris(10, 20, 12, 0);
    fx.conversation("p2", a, "v1", t, "waiting_human", None);
    fx.message("p2", "visitor", "complete", t, None, none);
    fx.message("p2", "assistant", "complete", t + 30_000, Some(1), none);
    fx.handoff("p2", "waiting", t + MIN);
    fx.message("p2", "operator", "complete", t + 3 * MIN, None, (Some("Ada"), Some(ada)));
    for sql in &f.sql {
        sqlx::query(sql).execute(app.db().writer()).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
    }
    // Rows written with earlier times than the last refresh read (as an import would be).
    app.engine().rebuild_reports_since(i64::MIN).await.unwrap();
}

fn query(from: &str, to: &str, tz: &str, by: &str) -> ReportQuery {
    ReportQuery { from: from.into(), to: to.into(), time_zone: tz.into(), by: by.into(), ..ReportQuery::default() }
}

async fn report(b: &mut Browser, q: &ReportQuery) -> Report {
    let (status, body) = b.call_json(r::Report::PATH, json!({ "query": q })).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

fn day(r: &Report, date: &str) -> i64 {
    r.buckets.iter().find(|b| b.start == date).map(|b| b.figures.conversations).unwrap_or(0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[tokio::test]
async fn every_figure_of_a_hand_worked_fixture_with_time_zones_business_hours_and_the_period_before() {
    let app = TestApp::builder().with_users(&[ADMIN, OSCAR]).spawn().await;
    let a = app.agent("shop", &["ticket_escalation"]).await;
    let b_agent = app.agent("other", &[]).await;
    let (ada,): (String,) =
        sqlx::query_as("SELECT id FROM users WHERE name = 'Ada'").fetch_one(app.db().pool()).await.unwrap();
    let (oscar,): (String,) =
        sqlx::query_as("SELECT id FROM users WHERE name = 'Oscar'").fetch_one(app.db().pool()).await.unwrap();
    let mut admin = app.signed_in(&ADMIN).await;
    // The shop's people work Monday to Friday, 09:00–17:00 in Paris.
    let mut hours: Vec<(&str, String)> = vec![("agent_id", a.id.clone()), ("time_zone", "Europe/Paris".into())];
    for d in 0..7 {
        hours.push((
            ["day0", "day1", "day2", "day3", "day4", "day5", "day6"][d],
            if d < 5 { "09:00-17:00" } else { "" }.into(),
        ));
    }
    hours.push(("closed_dates", String::new()));
    let form: Vec<(&str, &str)> = hours.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, body) = admin.call(h::SaveHours::PATH, &form).await;
    assert_eq!(status, 200, "{body}");
    fill(&app, &a.id, &b_agent.id, &ada).await;

    let r = report(&mut admin, &query("2026-11-02", "2026-11-15", "Europe/Paris", "day")).await;
    assert_eq!((r.previous_from.as_str(), r.previous_to.as_str()), ("2026-10-19", "2026-11-01"));
    let f = &r.current;
    assert_eq!((f.conversations, f.visitors, f.messages), (7, 5, 17), "{f:?}");
    assert_eq!((f.settled, f.ai_resolved, f.handed_over, f.abandoned), (7, 2, 3, 1), "{f:?}");
    assert_eq!((f.asked_for_person, f.low_confidence, f.business_rule), (1, 1, 1), "{f:?}");
    assert_eq!((f.thumbs_up, f.thumbs_down, f.rated, f.rated_good), (1, 1, 2, 1), "{f:?}");
    assert!(close(f.ai_resolution_rate().unwrap(), 2.0 / 7.0));
    assert_eq!(f.csat(), Some(0.5));
    // First responses: 5 min, 30 min and 64 h 10 min (of which 10 minutes in business hours).
    let frt = &f.first_response;
    assert_eq!(frt.count, 3);
    assert_eq!((frt.median_ms, frt.p90_ms), (Some(30 * MIN), Some((64 * 60 + 10) * MIN)), "{frt:?}");
    assert_eq!((frt.business_median_ms, frt.business_p90_ms), (Some(10 * MIN), Some(30 * MIN)), "{frt:?}");
    let res = &f.resolution;
    assert_eq!((res.count, res.median_ms, res.p90_ms), (2, Some(20 * MIN), Some(60 * MIN)), "{res:?}");
    // Spend on the period's conversations, and per resolved one.
    assert!(close(f.spend_usd, 0.114), "{}", f.spend_usd);
    assert!(close(f.spend_per_resolved().unwrap(), 0.057));
    // Local days: c2 is on the 4th in Paris.
    assert_eq!((day(&r, "2026-11-03"), day(&r, "2026-11-04"), day(&r, "2026-11-10")), (1, 1, 1));
    assert_eq!(r.buckets.len(), 14);
    assert_eq!(r.buckets.iter().map(|b| b.figures.conversations).sum::<i64>(), 7);
    // The period before: two conversations across the clock change, one resolved, one asked.
    let p = &r.previous;
    assert_eq!(
        (p.conversations, p.visitors, p.ai_resolved, p.handed_over, p.asked_for_person),
        (2, 2, 1, 1, 1),
        "{p:?}"
    );
    assert_eq!((p.first_response.count, p.first_response.median_ms), (1, Some(2 * MIN)));
    // Money by model from the ledger (the judge's call apart), orders by currency.
    let models: Vec<(&str, f64, f64)> =
        r.spend_by_model.iter().map(|m| (m.model.as_str(), m.usd, m.trial_usd)).collect();
    assert_eq!(models.len(), 2, "{models:?}");
    assert!(models[0].0 == "gpt-b" && close(models[0].1, 0.08) && close(models[0].2, 0.0), "{models:?}");
    assert!(models[1].0 == "gpt-a" && close(models[1].1, 0.041) && close(models[1].2, 0.007), "{models:?}");
    assert_eq!(r.models, ["gpt-b", "gpt-a"]);
    let nov5 = r.buckets.iter().find(|b| b.start == "2026-11-05").unwrap();
    assert!(close(nov5.spend_by_model[0], 0.03) && close(nov5.spend_by_model[1], 0.0), "{nov5:?}");
    let orders: Vec<(&str, i64, i64, i64)> =
        r.orders.iter().map(|o| (o.currency.as_str(), o.orders, o.paid, o.paid_minor)).collect();
    assert_eq!(orders, [("HKD", 1, 1, 10000), ("USD", 2, 1, 5000)]);
    // Operators: Ada (c3, c6), Oscar (c4, known by his name).
    let ops: Vec<(&str, i64, Option<i64>, i64, i64)> = r
        .operators
        .iter()
        .map(|o| (o.name.as_str(), o.handled, o.first_response.median_ms, o.rated, o.rated_good))
        .collect();
    assert_eq!(ops, [("Ada", 2, Some(5 * MIN), 1, 1), ("Oscar", 1, Some((64 * 60 + 10) * MIN), 1, 0)]);
    // By version (both agents): 1 → c1, c3, c4, c8; 2 → c2, c6; none → c5.
    let versions: Vec<(Option<i64>, i64, i64)> =
        r.versions.iter().map(|v| (v.version, v.figures.conversations, v.figures.ai_resolved)).collect();
    assert_eq!(versions, [(None, 1, 0), (Some(1), 4, 2), (Some(2), 2, 0)]);

    // Unanswered: c4 (nothing found), c2 (rated down) and c3 (asked for a person) asked "text".
    let topics: Vec<(&str, i64, &str)> =
        r.unanswered.iter().map(|t| (t.question.as_str(), t.count, t.gap.as_str())).collect();
    assert_eq!(topics, [("text", 3, "text")]);

    // By week (Monday first): 2–8 Nov and 9–15 Nov, each with its own people.
    let w = report(&mut admin, &query("2026-11-02", "2026-11-15", "Europe/Paris", "week")).await;
    let weeks: Vec<(&str, i64, i64)> =
        w.buckets.iter().map(|b| (b.start.as_str(), b.figures.conversations, b.figures.visitors)).collect();
    assert_eq!(weeks, [("2026-11-02", 5, 4), ("2026-11-09", 2, 2)]);
    // In UTC, c2 falls on the 3rd.
    let u = report(&mut admin, &query("2026-11-02", "2026-11-15", "UTC", "day")).await;
    assert_eq!((day(&u, "2026-11-03"), day(&u, "2026-11-04")), (2, 0));

    // Filters: an agent, a team, an operator, a version.
    let mut only = query("2026-11-02", "2026-11-15", "Europe/Paris", "day");
    only.agent_id = b_agent.id.clone();
    let other = report(&mut admin, &only).await;
    assert_eq!((other.current.conversations, other.current.ai_resolved), (1, 1));
    assert_eq!(other.spend_by_model.iter().map(|m| m.model.as_str()).collect::<Vec<_>>(), ["gpt-a"]);
    assert_eq!(other.orders.iter().map(|o| o.currency.as_str()).collect::<Vec<_>>(), ["HKD"]);
    only.agent_id = a.id.clone();
    only.version = Some(2);
    let v2 = report(&mut admin, &only).await;
    assert_eq!((v2.current.conversations, v2.current.handed_over), (2, 1));
    assert!(close(v2.current.spend_usd, 0.07));
    let mut team = query("2026-11-02", "2026-11-15", "Europe/Paris", "day");
    team.team_id = "t1".into();
    let t = report(&mut admin, &team).await;
    assert_eq!((t.current.conversations, t.current.handed_over, t.current.low_confidence), (2, 2, 1));
    let mut op = query("2026-11-02", "2026-11-15", "Europe/Paris", "day");
    op.operator_id = oscar.clone();
    let o = report(&mut admin, &op).await;
    assert_eq!((o.current.conversations, o.current.first_response.count), (1, 1));

    // The exports are the page's report.
    let whole = query("2026-11-02", "2026-11-15", "Europe/Paris", "day");
    let qs = "from=2026-11-02&to=2026-11-15&time_zone=Europe/Paris&by=day";
    let (status, body) = admin.page(&format!("/admin/reports.json?{qs}")).await;
    assert_eq!(status, 200, "{body}");
    let mut exported: Report = serde_json::from_str(&body).unwrap();
    let page = report(&mut admin, &whole).await;
    exported.generated_at = page.generated_at;
    assert_eq!(exported, page);
    let (status, csv) = admin.page(&format!("/admin/reports.csv?{qs}")).await;
    assert_eq!(status, 200);
    assert_eq!(csv, parley_engine::engine::reports::csv::to_csv(&page));
    for line in [
        "summary,current,conversations,7",
        "summary,current,ai_resolution_rate,0.2857",
        "summary,current,first_response_business_median_ms,600000",
        "summary,previous,conversations,2",
        "day,2026-11-04,conversations,1",
        "model,gpt-a,trial_usd,0.007000",
        "orders,USD,paid_minor,5000",
    ] {
        assert!(csv.lines().any(|l| l == line), "{line} in\n{csv}");
    }

    // Bad queries name their field and change nothing; operators may not read reports.
    for (q, field) in [
        (query("2026-11-x", "2026-11-15", "", ""), "from"),
        (query("2026-11-15", "2026-11-02", "", ""), "to"),
        (query("2025-01-01", "2026-11-02", "", ""), "to"),
        (query("2026-11-02", "2026-11-15", "Mars/Olympus", ""), "time_zone"),
        (query("2026-11-02", "2026-11-15", "", "month"), "by"),
    ] {
        let (status, body) = admin.call_json(r::Report::PATH, json!({ "query": q })).await;
        assert!(status >= 400 && body.contains(field), "{field}: {status} {body}");
    }
    let (status, body) = admin.page("/admin/reports.csv?from=2026-11-02&to=x").await;
    assert!(status == 422 && body.contains("to: `x` is not a date"), "{status} {body}");
    let mut operator = app.signed_in(&OSCAR).await;
    let (status, _) = operator.call_json(r::Report::PATH, json!({ "query": whole })).await;
    assert_eq!(status, 403);
    assert_eq!(operator.page(&format!("/admin/reports.csv?{qs}")).await.0, 403);

    // A person deleted leaves the figures (the roll-up's rows go with the conversation), even
    // when a refresh read their conversation just before and stores its facts just after.
    use parley_engine::store::reports as roll_up;
    let ids = vec!["c5".to_owned()];
    let raws = roll_up::read(app.db(), &ids).await.unwrap();
    let facts: Vec<_> = raws
        .into_iter()
        .filter_map(|raw| parley_engine::engine::reports::facts::compute(raw, None, &Default::default()))
        .collect();
    assert_eq!(facts.len(), 1);
    app.engine()
        .delete_person(&parley_engine::engine::privacy::Person::Visitor("v5".into()))
        .await
        .unwrap()
        .expect("deleted");
    roll_up::store(app.db(), &ids, &facts, app.engine().now_ms()).await.unwrap();
    assert_eq!(app.count("report_conversations WHERE conversation_id = 'c5'").await, 0);
    assert_eq!(app.count("report_conversations WHERE person_id = 'v5'").await, 0);
    let after = report(&mut admin, &whole).await;
    assert_eq!((after.current.conversations, after.current.abandoned), (6, 0));
}

#[tokio::test]
async fn a_real_conversation_handed_over_answered_closed_and_rated_is_counted_at_once() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    app.agent("shop", &["ticket_escalation"]).await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("Our prices start at $10.");
    let conv = conversation_id(&app.send(&visitor, "shop", None, "How much is it?").await);
    let lead = json!({"name": "Vi", "email": "vi@example.com", "message": "call me"});
    assert_eq!(app.post(&visitor, &format!("/api/v1/conversations/{conv}/lead"), lead).await.status(), 201);
    let mut admin = app.signed_in(&ADMIN).await;
    assert_eq!(admin.call(c::Claim::PATH, &[("id", &conv)]).await.0, 200);
    let (status, body) = admin.call(c::Reply::PATH, &[("id", &conv), ("text", "Hello, Ada here.")]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(admin.call(c::CloseConversation::PATH, &[("id", &conv)]).await.0, 200);
    let r = app.post(&visitor, &format!("/api/v1/conversations/{conv}/rating"), json!({"score": 4})).await;
    assert_eq!(r.status(), 200);
    app.engine().flush().await;

    let today = Paris.timestamp_millis_opt(app.engine().now_ms()).unwrap().date_naive().to_string();
    let rep = report(&mut admin, &query(&today, &today, "Europe/Paris", "day")).await;
    let f = &rep.current;
    assert_eq!((f.conversations, f.visitors, f.messages, f.handed_over, f.asked_for_person), (1, 1, 3, 1, 1), "{f:?}");
    assert_eq!((f.settled, f.ai_resolved, f.rated, f.rated_good), (1, 0, 1, 1), "{f:?}");
    assert_eq!((f.first_response.count, f.resolution.count), (1, 1), "{f:?}");
    assert_eq!(rep.operators.len(), 1);
    assert_eq!((rep.operators[0].name.as_str(), rep.operators[0].handled), ("Ada", 1));
    assert_eq!(rep.versions.len(), 1, "{:?}", rep.versions);
}

#[tokio::test]
async fn with_embeddings_on_unanswered_questions_that_mean_the_same_are_one_topic() {
    let receiver = Receiver::start().await;
    let endpoint = receiver.url("");
    let listed = receiver.addr.to_string();
    let app = TestApp::builder()
        .with_users(&[ADMIN])
        .config(move |c| {
            c.embeddings_base_url = Some(endpoint);
            c.private_endpoints = format!("{},{listed}", c.private_endpoints);
        })
        .spawn()
        .await;
    let a = app.agent("shop", &["knowledge_search"]).await;
    // Three questions with no word in common; the receiver's embeddings count letters, so the
    // first two (the same letters) mean the same to it.
    let mut f = Fixture { sql: Vec::new(), n: 0 };
    for (i, question) in ["listen silent", "enlist tinsel", "zebra quokka"].iter().enumerate() {
        let (v, c) = (format!("v{i}"), format!("c{i}"));
        let t = paris(11, 3 + i as u32, 10, 0);
        f.visitor(&v, &a.id, None);
        f.conversation(&c, &a.id, &v, t, "bot", None);
        f.sql.push(format!(
            "INSERT INTO messages (id, conversation_id, role, content, blocks, status, start_seq, created_at, updated_at) \
             VALUES ('q{i}', '{c}', 'visitor', '{question}', '[]', 'complete', 0, {t}, {t})"
        ));
        let m = f.message(&c, "assistant", "complete", t + 30_000, Some(1), (None, None));
        f.tool(&c, &m, "search_knowledge", r#"{"success":true,"sources":[]}"#, t + 10_000);
    }
    for sql in &f.sql {
        sqlx::query(sql).execute(app.db().writer()).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
    }
    app.engine().rebuild_reports_since(i64::MIN).await.unwrap();
    let mut admin = app.signed_in(&ADMIN).await;
    let r = report(&mut admin, &query("2026-11-02", "2026-11-15", "Europe/Paris", "day")).await;
    let topics: Vec<(i64, usize)> = r.unanswered.iter().map(|t| (t.count, t.conversations.len())).collect();
    assert_eq!(topics, [(2, 2), (1, 1)], "{:?}", r.unanswered);
    assert_eq!(r.unanswered[1].question, "zebra quokka");
    let asked: Vec<String> = receiver.received_at("/embeddings").into_iter().map(|q| q.body).collect();
    assert!(asked.iter().any(|b| b.contains("enlist tinsel") && b.contains("zebra quokka")), "{asked:?}");
}
