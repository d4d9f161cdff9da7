//! Business hours and presence (issue 17) with a fixed clock, on SQLite and PostgreSQL: inside the
//! hours the escalation offers a person; outside, "Leave a message", the panel's configuration
//! says when people are back and the model is told nobody is online until then. Operators with
//! the console open are online unless away.

use chrono::{Datelike, Duration as Days, NaiveTime, TimeZone, Weekday};
use chrono_tz::Europe::Paris;
use leptos::server_fn::ServerFn;
use parley_app::console::api::hours as h;
use parley_engine::engine::clock::{Clock, ManualClock};
use parley_protocol::{Block, PublicAgentConfig, StreamEvent};
use serde_json::{Value, json};

use crate::harness::fixtures::{ADMIN, OPERATOR};
use crate::harness::*;

/// The next `weekday` at least two days from `now_ms`, at `hh:mm` in Paris, in Unix ms.
fn next(now_ms: i64, weekday: Weekday, hh: u32, mm: u32) -> i64 {
    let mut date = Paris.timestamp_millis_opt(now_ms).unwrap().date_naive() + Days::days(2);
    while date.weekday() != weekday {
        date += Days::days(1);
    }
    let at = date.and_time(NaiveTime::from_hms_opt(hh, mm, 0).unwrap());
    Paris.from_local_datetime(&at).unwrap().timestamp_millis()
}

async fn config(app: &TestApp) -> PublicAgentConfig {
    reqwest::get(app.url("/api/v1/agents/shop/config")).await.unwrap().json().await.unwrap()
}

/// A visitor asks for a person; the escalation block and what the model was told.
async fn escalate(app: &TestApp) -> (Block, String) {
    let visitor = app.visitor("shop").await;
    app.fake.push_tool_call("escalate_to_human", json!({"reason": "wants a person"}));
    app.fake.push_content("Press the button.");
    let events = app.send(&visitor, "shop", None, "I want to talk to a person").await;
    let block = events
        .iter()
        .find_map(|(_, e)| if let StreamEvent::Block(b) = e { Some(b.block.clone()) } else { None })
        .expect("a block");
    let told = app.fake.requests().last().unwrap()["messages"].to_string();
    (block, told)
}

#[tokio::test]
async fn outside_business_hours_the_visitor_leaves_a_message_and_learns_when_people_are_back() {
    let clock = ManualClock::new();
    let app = TestApp::builder().clock(clock.clone()).with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("shop", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;

    // No hours: always reachable, and the panel is told nothing.
    assert_eq!(config(&app).await.availability, None);

    // Bad hours are refused and change nothing.
    let form = |tz: &'static str, monday: &'static str| {
        let mut f = vec![("agent_id", agent.id.clone()), ("time_zone", tz.to_owned()), ("day0", monday.to_owned())];
        for d in ["day1", "day2", "day3", "day4"] {
            f.push((d, "09:00-17:00".to_owned()));
        }
        f.push(("closed_dates", String::new()));
        f
    };
    let call = async |admin: &mut Browser, f: Vec<(&'static str, String)>| {
        let args: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
        admin.call(h::SaveHours::PATH, &args).await
    };
    let (status, body) = call(&mut admin, form("Mars/Olympus", "09:00-17:00")).await;
    assert!(status == 422 && body.contains("not a time zone"), "{body}");
    let (status, body) = call(&mut admin, form("Europe/Paris", "17:00-09:00")).await;
    assert!(status == 422 && body.contains("Monday") && body.contains("ends before"), "{body}");
    assert_eq!(app.count("business_hours").await, 0);
    // Monday to Friday, 09:00 to 17:00, Paris time.
    let (status, body) = call(&mut admin, form("Europe/Paris", "09:00-12:00, 13:00-17:00")).await;
    assert_eq!(status, 200, "{body}");

    // Thursday 10:00 in Paris: open.
    let thursday = next(clock.now_ms(), Weekday::Thu, 10, 0);
    clock.advance_ms(thursday - clock.now_ms());
    let open = config(&app).await.availability.unwrap();
    assert!(open.open && open.reopens_at.is_none(), "{open:?}");
    let (block, told) = escalate(&app).await;
    let Block::EscalationButton(button) = block else { panic!("{block:?}") };
    assert_eq!((button.label.as_str(), button.away), ("Talk to a person", false));
    assert!(!told.contains("Nobody from the team is online"), "{told}");

    // Friday 18:00: closed until Monday 09:00. (Days later: the console session has ended, its
    // lifetime is a day; the administrator signs in again.)
    let friday = next(thursday - 2 * 86_400_000, Weekday::Fri, 18, 0);
    clock.advance_ms(friday - clock.now_ms());
    let mut admin = app.signed_in(&ADMIN).await;
    let monday = next(friday - 2 * 86_400_000, Weekday::Mon, 9, 0);
    let closed = config(&app).await.availability.unwrap();
    assert_eq!((closed.open, closed.reopens_at), (false, Some(monday)));
    let (block, told) = escalate(&app).await;
    let Block::EscalationButton(button) = block else { panic!("{block:?}") };
    assert_eq!((button.label.as_str(), button.away), ("Leave a message", true));
    assert!(told.contains("Nobody from the team is online now"), "{told}");
    assert!(told.contains("Monday") && told.contains("09:00 (Europe/Paris)"), "{told}");
    // The embed page carries it to the panel.
    let page = reqwest::get(app.url("/embed/shop")).await.unwrap().text().await.unwrap();
    assert!(page.contains(&format!("\"reopens_at\":{monday}")), "{page}");
    let (_, body) = admin.call(h::AgentHours::PATH, &[("agent_id", &agent.id)]).await;
    let view: Value = serde_json::from_str(&body).unwrap();
    assert!(view["now"].as_str().unwrap().starts_with("Closed now; back Monday"), "{view}");
    assert_eq!(view["days"][0], "09:00-12:00, 13:00-17:00");

    // Removed: reachable again.
    assert_eq!(admin.call(h::RemoveHours::PATH, &[("agent_id", &agent.id)]).await.0, 200);
    assert_eq!(config(&app).await.availability, None);
}

#[tokio::test]
async fn operators_with_the_console_open_are_online_unless_away() {
    let app = TestApp::builder().with_users(&[ADMIN, OPERATOR]).spawn().await;
    let mut admin = app.signed_in(&ADMIN).await;
    let mut olive = app.signed_in(&OPERATOR).await;
    let online = async |b: &mut Browser| -> Value {
        let (_, body) = b.call(h::Presence::PATH, &[]).await;
        serde_json::from_str(&body).unwrap()
    };
    assert_eq!(online(&mut admin).await["online"], json!([]), "nobody has the console open");
    // Olive's console opens its live feed.
    let feed = olive.get("/admin/feed").await;
    assert_eq!(feed.status(), 200);
    let mut seen = Value::Null;
    within(5, "Olive is online", async || {
        seen = online(&mut admin).await;
        seen["online"] == json!([["Olive", "operator"]])
    })
    .await;
    assert_eq!(seen["away"], false);
    // Away: not online; back: online again.
    assert_eq!(olive.call(h::SetAway::PATH, &[("away", "true")]).await.0, 200);
    assert_eq!(online(&mut olive).await["away"], true);
    assert_eq!(online(&mut admin).await["online"], json!([]));
    assert_eq!(olive.call(h::SetAway::PATH, &[("away", "false")]).await.0, 200);
    assert_eq!(online(&mut admin).await["online"], json!([["Olive", "operator"]]));
    drop(feed);
}
