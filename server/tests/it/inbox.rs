//! The team inbox (issue 43) over real HTTP, on SQLite and PostgreSQL: teams route a
//! conversation that needs a person to their queue; automatic teams share it out round-robin among
//! members online and under their limit (safe across replicas); operators assign, reassign,
//! unassign and hand over, reported to webhooks; private notes never reach the visitor, the
//! stream, the model or a webhook, and a mention tells only the mentioned; labels are set,
//! filtered, carried in payloads and exports; the views count and filter.

use std::time::Duration;

use leptos::server_fn::ServerFn;
use parley_app::console::api::{conversations as c, hours as h, inbox as i, webhooks as w};
use parley_engine::store::{DbKind, users::Role};
use parley_protocol::StreamEvent;
use serde_json::{Value, json};

use crate::harness::fixtures::{ADMIN, OLIVE, OSCAR, User};
use crate::harness::*;

const PIA: User = User { email: "pia@example.com", name: "Pia", role: Role::Operator };
const DAN: User = User { email: "dan@example.com", name: "Dan", role: Role::Operator };
const ERIN: User = User { email: "erin@example.com", name: "Erin", role: Role::Operator };

/// A conversation of a new visitor of `agent` that ends with a lead: `(conversation, visitor token)`.
async fn lead_on(app: &TestApp, base: &str, agent: &str) -> (String, String) {
    let visitor = app.visitor(agent).await;
    app.fake.push_content("Of course.");
    let r = app.send_raw_on(base, &visitor, json!({"agent": agent, "message": "please call me"})).await;
    let conv = conversation_id(&read_events(r).await);
    let r = app
        .client
        .post(format!("{base}/api/v1/conversations/{conv}/lead"))
        .bearer_auth(&visitor)
        .json(&json!({"name": "Ann", "email": "ann@example.com", "message": "call after 5"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    (conv, visitor)
}

async fn lead(app: &TestApp, agent: &str) -> (String, String) {
    lead_on(app, &app.url(""), agent).await
}

/// A console user's id.
async fn id_of(app: &TestApp, user: &User) -> String {
    let (u, _) = parley_engine::store::users::with_hash(app.db(), user.email).await.unwrap().unwrap();
    u.id
}

/// `(assignee_id, team_id, claimed_by)` of a conversation.
async fn whose(app: &TestApp, conv: &str) -> (Option<String>, Option<String>, Option<String>) {
    sqlx::query_as("SELECT assignee_id, team_id, claimed_by FROM conversations WHERE id = $1")
        .bind(conv)
        .fetch_one(app.db().pool())
        .await
        .unwrap()
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_owned()))
}

/// Saves a team as the admin; its id.
async fn team(admin: &mut Browser, name: &str, mode: &str, members: &[&str], agents: &[&str]) -> String {
    let (members, agents) = (members.join(","), agents.join(","));
    let (status, body) = admin
        .call(i::SaveTeam::PATH, &[("name", name), ("mode", mode), ("members", &members), ("agents", &agents)])
        .await;
    assert_eq!(status, 200, "{body}");
    json_of(&body).as_str().unwrap().to_owned()
}

/// The console feed of a signed-in browser, open (its user counts as online) and read as it comes.
struct Feed {
    body: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    parser: parley_protocol::sse::SseParser,
    /// Every `change` event read so far.
    changes: Vec<Value>,
}

async fn feed(browser: &Browser) -> Feed {
    let r = browser.get("/admin/feed").await;
    assert_eq!(r.status(), 200, "the console feed");
    Feed { body: Box::pin(r.bytes_stream()), parser: Default::default(), changes: Vec::new() }
}

impl Feed {
    /// Reads for `secs` at most, until one event read so far satisfies `stop`; whether one did.
    async fn until(&mut self, secs: u64, stop: impl Fn(&Value) -> bool) -> bool {
        use futures::StreamExt;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            if self.changes.iter().any(&stop) {
                return true;
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Ok(Some(Ok(bytes))) => self.changes.extend(
                    self.parser
                        .feed_bytes(&bytes)
                        .expect("utf-8")
                        .into_iter()
                        .filter_map(|f| serde_json::from_str(&f.data).ok()),
                ),
                Ok(other) => panic!("the console feed ended: {other:?}"),
                Err(_) => return false,
            }
        }
    }
}

/// Waits until these users count as online.
async fn online(app: &TestApp, names: &[&str]) {
    within(10, "the members are online", async || {
        let now = app.engine().now_ms();
        let on = parley_engine::store::hours::online(app.db(), now).await.unwrap();
        names.iter().all(|n| on.iter().any(|(name, _)| name == n))
    })
    .await;
}

#[tokio::test]
async fn round_robin_skips_away_offline_and_full_members() {
    let app = TestApp::builder().with_users(&[ADMIN, OLIVE, OSCAR, PIA, DAN, ERIN]).spawn().await;
    let shop = app.agent("shop", &["ticket_escalation"]).await.id;
    let mut admin = app.signed_in(&ADMIN).await;
    let (olive, oscar, pia, dan, erin) = (
        id_of(&app, &OLIVE).await,
        id_of(&app, &OSCAR).await,
        id_of(&app, &PIA).await,
        id_of(&app, &DAN).await,
        id_of(&app, &ERIN).await,
    );

    // Erin may hold one and already holds one (assigned by hand before the team existed).
    assert_eq!(admin.call(i::SetLimit::PATH, &[("user_id", &erin), ("max_open", "1")]).await.0, 200);
    let (held, _) = lead(&app, "shop").await;
    assert_eq!(whose(&app, &held).await.1, None, "no team handles the agent yet");
    let (status, body) = admin.call(i::Assign::PATH, &[("id", &held), ("to", &erin)]).await;
    assert_eq!(status, 200, "{body}");
    // Bad limits are refused and change nothing.
    assert_eq!(admin.call(i::SetLimit::PATH, &[("user_id", &erin), ("max_open", "-1")]).await.0, 422);
    assert_eq!(admin.call(i::SetLimit::PATH, &[("user_id", "nobody"), ("max_open", "3")]).await.0, 404);

    // Everyone but Dan opens the console; Oscar is away.
    let (mut b_olive, mut b_oscar, b_pia, b_erin) = (
        app.signed_in(&OLIVE).await,
        app.signed_in(&OSCAR).await,
        app.signed_in(&PIA).await,
        app.signed_in(&ERIN).await,
    );
    let _feeds = (feed(&b_olive).await, feed(&b_oscar).await, feed(&b_pia).await, feed(&b_erin).await);
    assert_eq!(b_oscar.call(h::SetAway::PATH, &[("away", "true")]).await.0, 200);
    online(&app, &["Olive", "Pia", "Erin"]).await;

    team(&mut admin, "Support", "auto", &[&olive, &oscar, &pia, &dan, &erin], &[&shop]).await;
    let mut got = Vec::new();
    for _ in 0..4 {
        let (conv, _) = lead(&app, "shop").await;
        let (assignee, team_id, _) = whose(&app, &conv).await;
        assert!(team_id.is_some(), "routed to the agent's team");
        got.push(assignee.expect("assigned at once"));
    }
    assert!(got.iter().all(|u| *u == olive || *u == pia), "only Olive and Pia are free and online: {got:?}");
    assert_ne!(got[0], got[1], "round-robin");
    assert_eq!((&got[2], &got[3]), (&got[0], &got[1]), "round-robin: {got:?}");
    // Erin's held conversation is still hers, and nothing else.
    assert_eq!(whose(&app, &held).await.0.as_deref(), Some(erin.as_str()));
    let (_, body) = b_olive.call(i::Colleagues::PATH, &[]).await;
    let people = json_of(&body);
    let of = |name: &str| people.as_array().unwrap().iter().find(|p| p["name"] == name).unwrap().clone();
    assert_eq!((of("Oscar")["presence"].clone(), of("Dan")["presence"].clone()), (json!("away"), json!("offline")));
    assert_eq!((of("Erin")["open"].clone(), of("Erin")["max_open"].clone()), (json!(1), json!(1)));
    assert_eq!(of("Olive")["open"], 2);
}

#[tokio::test]
async fn a_teams_queue_holds_what_nobody_can_take_until_a_member_comes_online() {
    let app = TestApp::builder().with_users(&[ADMIN, OLIVE]).spawn().await;
    let shop = app.agent("shop", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let olive = id_of(&app, &OLIVE).await;
    team(&mut admin, "Night", "auto", &[&olive], &[&shop.id]).await;
    let (conv, _) = lead(&app, "shop").await;
    let (assignee, team_id, _) = whose(&app, &conv).await;
    assert!(team_id.is_some());
    assert_eq!(assignee, None, "Olive is offline: it waits in the queue");
    let mut b_olive = app.signed_in(&OLIVE).await;
    let (_, body) = b_olive.call(i::InboxCounts::PATH, &[]).await;
    assert_eq!(json_of(&body), json!({"mine": 0, "unassigned": 1, "my_teams": 1, "all": 1}));
    // Olive opens the console: the queue comes to her.
    let mut f = feed(&b_olive).await;
    within(10, "assigned to Olive once she is online", async || {
        whose(&app, &conv).await.0.as_deref() == Some(olive.as_str())
    })
    .await;
    assert!(f.until(5, |e| e["kind"] == "assigned" && e["user_id"] == json!(olive)).await, "{:?}", f.changes);
    let (_, body) = b_olive.call(i::InboxCounts::PATH, &[]).await;
    assert_eq!(json_of(&body), json!({"mine": 1, "unassigned": 0, "my_teams": 1, "all": 1}));
}

/// The webhook payloads of `event` queued so far, oldest first.
async fn payloads(app: &TestApp, event: &str) -> Vec<Value> {
    let rows: Vec<(String,)> =
        sqlx::query_as("SELECT payload FROM webhook_deliveries WHERE event = $1 ORDER BY created_at, id")
            .bind(event)
            .fetch_all(app.db().pool())
            .await
            .unwrap();
    rows.into_iter().map(|(p,)| serde_json::from_str(&p).unwrap()).collect()
}

#[tokio::test]
async fn manual_assign_reassign_unassign_and_hand_to_team_reach_webhooks_and_the_audit_log() {
    let app = TestApp::builder()
        .with_users(&[ADMIN, OLIVE, OSCAR])
        .config(|c| c.allow_private_endpoints = true)
        .spawn()
        .await;
    let receiver = Receiver::start().await;
    let shop = app.agent("shop", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let events = "conversation.assigned,conversation.labeled,conversation.claimed,lead.created";
    let (status, body) = admin
        .call(w::AddWebhook::PATH, &[("agent_id", &shop.id), ("url", &receiver.url("/hook")), ("events", events)])
        .await;
    assert_eq!(status, 200, "{body}");
    captured_logs().secret(json_of(&body)["secret"].as_str().unwrap());
    let (olive, oscar) = (id_of(&app, &OLIVE).await, id_of(&app, &OSCAR).await);
    let sales = team(&mut admin, "Sales", "manual", &[&olive, &oscar], &[&shop.id]).await;
    let (_, body) = admin.call(i::SaveLabel::PATH, &[("name", "VIP"), ("color", "#AA0000")]).await;
    let vip = json_of(&body).as_str().unwrap().to_owned();

    let (conv, visitor) = lead(&app, "shop").await;
    assert_eq!(whose(&app, &conv).await, (None, Some(sales.clone()), None), "in the manual team's queue");
    let mut b_olive = app.signed_in(&OLIVE).await;
    let mut b_oscar = app.signed_in(&OSCAR).await;
    assert_eq!(b_olive.call(i::SetConversationLabels::PATH, &[("id", &conv), ("labels", &vip)]).await.0, 200);

    // Olive gives it to Oscar.
    let (status, body) = b_olive.call(i::Assign::PATH, &[("id", &conv), ("to", &oscar)]).await;
    assert_eq!(status, 200, "{body}");
    let sent = payloads(&app, "conversation.assigned").await;
    assert_eq!(sent.len(), 1);
    let data = &sent[0]["data"];
    assert_eq!(data["conversation_id"], json!(conv));
    assert_eq!((&data["assignee"]["name"], &data["by"]["name"]), (&json!("Oscar"), &json!("Olive")));
    assert_eq!((&data["team"]["name"], &data["reason"]), (&json!("Sales"), &json!("manual")));
    assert_eq!(data["labels"], json!(["VIP"]), "labels ride along");
    assert_eq!(payloads(&app, "lead.created").await[0]["data"]["labels"], json!([]), "before the label");

    // Bad input changes nothing.
    assert_eq!(b_olive.call(i::Assign::PATH, &[("id", &conv), ("to", "nobody")]).await.0, 409);
    assert_eq!(b_olive.call(i::Assign::PATH, &[("id", "no-such"), ("to", &oscar)]).await.0, 404);
    assert_eq!(b_olive.call(i::HandToTeam::PATH, &[("id", &conv), ("team", "no-such")]).await.0, 409);
    assert_eq!(whose(&app, &conv).await, (Some(oscar.clone()), Some(sales.clone()), None));
    assert_eq!(payloads(&app, "conversation.assigned").await.len(), 1);

    // Oscar takes it; Olive takes it back: the claim moves, and the visitor is told who it is.
    assert_eq!(b_oscar.call(c::Claim::PATH, &[("id", &conv)]).await.1, "true");
    let claimed = payloads(&app, "conversation.claimed").await;
    assert_eq!(claimed[0]["data"]["assignee"]["name"], "Oscar");
    let (status, body) = b_olive.call(i::Assign::PATH, &[("id", &conv), ("to", &olive)]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(whose(&app, &conv).await, (Some(olive.clone()), Some(sales.clone()), Some(olive.clone())));
    let mut stream = Live::new(app.follow(&visitor, &conv, 0).await);
    stream
        .until_within(10, |e| {
            e.iter().any(|(_, e)| matches!(e, StreamEvent::Handoff(h) if h.operator_name.as_deref() == Some("Olive")))
        })
        .await;
    let (_, body) = b_olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail = json_of(&body);
    assert_eq!((&detail["mine"], &detail["item"]["assignee"]), (&json!(true), &json!("Olive")));
    assert_eq!(detail["item"]["labels"][0]["color"], "#aa0000");

    // Unassigning a held conversation is refused; released, it can be unassigned and handed over.
    let (status, body) = b_olive.call(i::Assign::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("release it first"), "{body}");
    assert_eq!(b_olive.call(c::Release::PATH, &[("id", &conv)]).await.0, 200);
    assert_eq!(whose(&app, &conv).await.0.as_deref(), Some(olive.as_str()), "release keeps the assignee");
    assert_eq!(b_olive.call(i::Assign::PATH, &[("id", &conv)]).await.0, 200);
    assert_eq!(b_oscar.call(i::HandToTeam::PATH, &[("id", &conv)]).await.0, 200);
    assert_eq!(whose(&app, &conv).await, (None, None, None));
    let sent = payloads(&app, "conversation.assigned").await;
    let reasons: Vec<&str> = sent.iter().map(|p| p["data"]["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["manual", "manual", "unassigned", "team"]);
    assert_eq!(sent[2]["data"]["assignee"], Value::Null);
    assert_eq!(sent[3]["data"]["team"], Value::Null);
    let labeled = payloads(&app, "conversation.labeled").await;
    assert_eq!((&labeled[0]["data"]["added"], &labeled[0]["data"]["removed"]), (&json!(["VIP"]), &json!([])));
    // They reach the endpoint too.
    receiver.wait_for("/hook", 7).await;

    let audited: Vec<(String,)> = sqlx::query_as(
        "SELECT action FROM audit_log WHERE target = $1 AND action LIKE 'conversation.%' ORDER BY at, id",
    )
    .bind(&conv)
    .fetch_all(app.db().pool())
    .await
    .unwrap();
    let audited: Vec<&str> = audited.iter().map(|(a,)| a.as_str()).collect();
    assert_eq!(
        audited,
        [
            "conversation.labels",
            "conversation.assign",
            "conversation.claim",
            "conversation.assign",
            "conversation.release",
            "conversation.unassign",
            "conversation.team"
        ]
    );
}

#[tokio::test]
async fn a_note_never_reaches_the_visitor_the_stream_the_model_or_webhooks_and_a_mention_tells_only_the_mentioned() {
    let app = TestApp::builder()
        .with_users(&[ADMIN, OLIVE, OSCAR])
        .config(|c| c.allow_private_endpoints = true)
        .spawn()
        .await;
    let receiver = Receiver::start().await;
    let shop = app.agent("shop", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let every = parley_engine::store::webhooks::EVENTS.join(",");
    let (status, body) = admin
        .call(w::AddWebhook::PATH, &[("agent_id", &shop.id), ("url", &receiver.url("/hook")), ("events", &every)])
        .await;
    assert_eq!(status, 200, "{body}");
    captured_logs().secret(json_of(&body)["secret"].as_str().unwrap());
    let oscar = id_of(&app, &OSCAR).await;
    let (conv, visitor) = lead(&app, "shop").await;
    let mut b_olive = app.signed_in(&OLIVE).await;
    let b_oscar = app.signed_in(&OSCAR).await;
    let mut admin_feed = feed(&admin).await;
    let mut oscar_feed = feed(&b_oscar).await;

    let needle = "zebra-needle-4711";
    let body = format!("@Oscar the visitor sounds upset, {needle}");
    // Bad notes change nothing.
    assert_eq!(b_olive.call(i::AddNote::PATH, &[("id", &conv), ("body", "  ")]).await.0, 422);
    assert_eq!(b_olive.call(i::AddNote::PATH, &[("id", &conv), ("body", &"x".repeat(4001))]).await.0, 422);
    assert_eq!(b_olive.call(i::AddNote::PATH, &[("id", &conv), ("body", "hi"), ("mentions", "nobody")]).await.0, 422);
    assert_eq!(b_olive.call(i::AddNote::PATH, &[("id", "no-such"), ("body", "hi")]).await.0, 404);
    assert_eq!(app.count("conversation_notes").await, 0);
    let (status, note) = b_olive.call(i::AddNote::PATH, &[("id", &conv), ("body", &body), ("mentions", &oscar)]).await;
    assert_eq!(status, 200, "{note}");

    // The mention reaches Oscar's console, and only his; everyone's list learns of a note.
    assert!(
        oscar_feed.until(10, |e| e["kind"] == "mention" && e["user_id"] == json!(oscar)).await,
        "{:?}",
        oscar_feed.changes
    );
    assert!(admin_feed.until(10, |e| e["kind"] == "note").await);
    assert!(!admin_feed.until(1, |e| e["kind"] == "mention").await, "{:?}", admin_feed.changes);
    let unread: Vec<(String, String)> =
        sqlx::query_as("SELECT user_id, kind FROM operator_notifications WHERE kind = 'mention'")
            .fetch_all(app.db().pool())
            .await
            .unwrap();
    assert_eq!(unread, [(oscar.clone(), "mention".to_owned())]);

    // The console shows it to operators, marked as private.
    let (_, detail) = b_olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    assert_eq!(json_of(&detail)["notes"][0]["body"], json!(body));
    let (status, html) = b_olive.page(&format!("/admin/conversations/{conv}")).await;
    assert_eq!(status, 200);
    assert!(html.contains("Private note") && html.contains(needle), "{html}");
    let (status, html) = b_olive.page("/admin/conversations?view=unassigned").await;
    assert_eq!(status, 200);
    assert!(html.contains("Unassigned") && html.contains("My teams"), "{html}");

    // The visitor: neither the transcript nor the stream (replayed from the start).
    let transcript = app.get(&visitor, &format!("/api/v1/conversations/{conv}")).await.text().await.unwrap();
    assert!(!transcript.contains(needle), "{transcript}");
    let mut stream = Live::new(app.follow(&visitor, &conv, 0).await);
    stream.until_within(5, |e| e.iter().any(|(_, e)| matches!(e, StreamEvent::Handoff(_)))).await;
    assert!(!format!("{:?}", stream.events).contains(needle));
    drop(stream);
    // The model: the next turn's request holds the whole context, never the note.
    app.fake.push_content("Noted.");
    let events = app.send(&visitor, "shop", Some(&conv), "any news?").await;
    assert!(text(&events).contains("Noted."), "{events:?}");
    let requests = serde_json::to_string(&app.fake.requests()).unwrap();
    assert!(requests.contains("any news?") && !requests.contains(needle));
    // Webhooks: every event of the conversation went out, none with the note.
    assert_eq!(b_olive.call(c::Claim::PATH, &[("id", &conv)]).await.1, "true");
    let got = receiver.wait_for("/hook", 3).await;
    assert!(got.iter().all(|r| !r.body.contains(needle)));
    // Stored: only in the note itself, and in the operators' search index as a note once the
    // background indexer has reached it (when it has is a matter of timing).
    let mut found = crate::privacy::mentions(&app, needle).await;
    if found.contains(&"search_docs.body: 1".to_owned()) {
        let kind: String = sqlx::query_scalar("SELECT kind FROM search_docs WHERE body LIKE $1")
            .bind(format!("%{needle}%"))
            .fetch_one(app.db().pool())
            .await
            .unwrap();
        assert_eq!(kind, "note", "indexed for operators as a note only");
        found.retain(|f| f != "search_docs.body: 1");
    }
    assert_eq!(found, ["conversation_notes.body: 1"]);
}

#[tokio::test]
async fn views_count_and_filter_and_an_operator_in_a_team_sees_only_their_teams_agents() {
    let app = TestApp::builder().with_users(&[ADMIN, OLIVE, OSCAR]).spawn().await;
    let shop = app.agent("shop", &["ticket_escalation"]).await;
    app.agent("other", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let (olive, oscar) = (id_of(&app, &OLIVE).await, id_of(&app, &OSCAR).await);
    let sales = team(&mut admin, "Sales", "manual", &[&olive], &[&shop.id]).await;
    let (_, body) = admin.call(i::SaveLabel::PATH, &[("name", "Refund"), ("color", "#00aa00")]).await;
    let refund = json_of(&body).as_str().unwrap().to_owned();
    // Labels are the owner's: an operator cannot define them; bad ones are refused.
    let mut b_olive = app.signed_in(&OLIVE).await;
    let mut b_oscar = app.signed_in(&OSCAR).await;
    assert_eq!(b_olive.call(i::SaveLabel::PATH, &[("name", "Mine"), ("color", "#000000")]).await.0, 403);
    assert_eq!(admin.call(i::SaveLabel::PATH, &[("name", "refund "), ("color", "#00aa00")]).await.0, 422);
    assert_eq!(admin.call(i::SaveLabel::PATH, &[("name", "Red"), ("color", "red")]).await.0, 422);
    assert_eq!(admin.call(i::SaveTeam::PATH, &[("name", "Sales"), ("mode", "auto")]).await.0, 422);
    assert_eq!(admin.call(i::SaveTeam::PATH, &[("name", "X"), ("mode", "sometimes")]).await.0, 422);
    assert_eq!(app.count("labels").await, 1);
    assert_eq!(app.count("teams").await, 1);
    // The admin's pages list them.
    let (status, html) = admin.page("/admin/teams").await;
    assert_eq!(status, 200);
    assert!(html.contains("Sales") && html.contains("Olive"), "{html}");
    let (status, html) = admin.page("/admin/labels").await;
    assert_eq!(status, 200);
    assert!(html.contains("Refund") && html.contains("#00aa00"), "{html}");

    let (a, _) = lead(&app, "shop").await; // Sales' queue, unassigned
    let (b, _) = lead(&app, "shop").await; // assigned to Olive, labelled
    let (d, _) = lead(&app, "other").await; // no team, assigned to Oscar
    let (e, _) = lead(&app, "other").await; // no team, unassigned
    assert_eq!(b_olive.call(i::Assign::PATH, &[("id", &b), ("to", &olive)]).await.0, 200);
    assert_eq!(b_olive.call(i::SetConversationLabels::PATH, &[("id", &b), ("labels", &refund)]).await.0, 200);
    assert_eq!(b_oscar.call(i::Assign::PATH, &[("id", &d), ("to", &oscar)]).await.0, 200);
    assert_eq!(b_olive.call(i::SetConversationLabels::PATH, &[("id", &b), ("labels", "no-such")]).await.0, 422);

    let list = async |b: &mut Browser, args: &[(&str, &str)]| -> Vec<String> {
        let mut form = vec![("page", "1")];
        form.extend_from_slice(args);
        let (status, body) = b.call(c::Conversations::PATH, &form).await;
        assert_eq!(status, 200, "{body}");
        let mut ids: Vec<String> =
            json_of(&body)["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_owned()).collect();
        ids.sort();
        ids
    };
    let sorted = |mut v: Vec<&String>| {
        v.sort();
        v.into_iter().cloned().collect::<Vec<_>>()
    };
    // Olive is in a team: she sees her team's agent only (and what is assigned to her).
    assert_eq!(list(&mut b_olive, &[]).await, sorted(vec![&a, &b]));
    assert_eq!(list(&mut b_olive, &[("view", "mine")]).await, std::slice::from_ref(&b));
    assert_eq!(list(&mut b_olive, &[("view", "unassigned")]).await, std::slice::from_ref(&a));
    assert_eq!(list(&mut b_olive, &[("view", "my_teams")]).await, sorted(vec![&a, &b]));
    assert_eq!(list(&mut b_olive, &[("label", &refund)]).await, std::slice::from_ref(&b));
    assert_eq!(list(&mut b_olive, &[("team", &sales)]).await, sorted(vec![&a, &b]));
    let (_, body) = b_olive.call(i::InboxCounts::PATH, &[]).await;
    assert_eq!(json_of(&body), json!({"mine": 1, "unassigned": 1, "my_teams": 2, "all": 2}));
    // What she may not see is not there for her.
    assert_eq!(b_olive.call(c::Conversation::PATH, &[("id", &d)]).await.0, 404);
    assert_eq!(b_olive.call(i::AddNote::PATH, &[("id", &d), ("body", "hi")]).await.0, 404);
    assert_eq!(b_olive.call(i::SetConversationLabels::PATH, &[("id", &d), ("labels", &refund)]).await.0, 404);
    assert_eq!(b_olive.call(i::Assign::PATH, &[("id", &e), ("to", &olive)]).await.0, 404);
    assert_eq!(b_olive.call(c::Claim::PATH, &[("id", &e)]).await.0, 404);
    assert_eq!(b_olive.call(c::CloseConversation::PATH, &[("id", &e)]).await.0, 404);
    assert_eq!(whose(&app, &e).await, (None, None, None), "untouched");
    // Oscar is in no team: he sees everything; so does the admin.
    assert_eq!(list(&mut b_oscar, &[]).await, sorted(vec![&a, &b, &d, &e]));
    assert_eq!(list(&mut b_oscar, &[("view", "unassigned")]).await, sorted(vec![&a, &e]));
    assert_eq!(list(&mut b_oscar, &[("view", "mine")]).await, std::slice::from_ref(&d));
    assert!(list(&mut b_oscar, &[("view", "my_teams")]).await.is_empty());
    assert_eq!(list(&mut b_oscar, &[("agent", &shop.id), ("status", "waiting_human")]).await, sorted(vec![&a, &b]));
    let (_, body) = admin.call(i::InboxCounts::PATH, &[]).await;
    assert_eq!(json_of(&body), json!({"mine": 0, "unassigned": 2, "my_teams": 0, "all": 4}));
    // Dates (UTC days, both ends included).
    let today = chrono::DateTime::from_timestamp_millis(app.engine().now_ms()).unwrap().date_naive();
    let (today, tomorrow) = (today.to_string(), today.succ_opt().unwrap().to_string());
    assert_eq!(list(&mut b_oscar, &[("from", &today), ("to", &today)]).await.len(), 4);
    assert!(list(&mut b_oscar, &[("from", &tomorrow)]).await.is_empty());
    assert_eq!(b_oscar.call(c::Conversations::PATH, &[("page", "1"), ("from", "yesterday")]).await.0, 422);
    assert_eq!(b_oscar.call(c::Conversations::PATH, &[("page", "1"), ("view", "theirs")]).await.0, 422);

    // Exports carry labels: leads.csv and a person's export.
    let (status, csv) = admin.page("/admin/leads.csv").await;
    assert_eq!(status, 200);
    assert!(csv.lines().next().unwrap().ends_with(",labels"), "{csv}");
    assert!(csv.lines().any(|l| l.contains(&b) && l.ends_with(",\"Refund\"")), "{csv}");
    let visitor: (String,) = sqlx::query_as("SELECT visitor_id FROM conversations WHERE id = $1")
        .bind(&b)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    let export = parley_engine::store::privacy::export(app.db(), &visitor.0).await.unwrap().unwrap();
    let c0 = &export["conversations"][0];
    assert_eq!((&c0["labels"], &c0["team"], &c0["assignee"]), (&json!(["Refund"]), &json!("Sales"), &json!("Olive")));
    // conversations.csv follows the list's filters and carries whose each is and its labels.
    let (status, csv) = admin.page(&format!("/admin/conversations.csv?label={refund}")).await;
    assert_eq!(status, 200, "{csv}");
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("id,created_at,updated_at,agent,status,contact,") && lines[0].contains(",labels,"));
    assert_eq!(lines.len(), 2, "{csv}");
    assert!(
        lines[1].starts_with(&format!("\"{b}\"")) && lines[1].contains("\"Refund\"") && lines[1].contains("\"Olive\"")
    );
    assert!(lines[1].contains("\"Sales\""), "{csv}");
    let (_, csv) = admin.page("/admin/conversations.csv").await;
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert_eq!(admin.page("/admin/conversations.csv?from=yesterday").await.0, 422);
    // An operator in a team exports, and lists leads, only what they may see.
    let (_, csv) = b_olive.page("/admin/conversations.csv").await;
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(!csv.contains(&d) && !csv.contains(&e), "{csv}");
    let (_, csv) = b_olive.page("/admin/leads.csv").await;
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(!csv.contains(&d), "{csv}");
    let (_, body) = b_olive.call(parley_app::console::api::leads::Leads::PATH, &[("status", ""), ("page", "1")]).await;
    assert_eq!(json_of(&body)["total"], 2, "{body}");
    let other_lead: String = sqlx::query_scalar("SELECT id FROM leads WHERE conversation_id = $1")
        .bind(&d)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    let (status, _) = b_olive
        .call(
            parley_app::console::api::leads::UpdateLead::PATH,
            &[("id", &other_lead), ("status", "closed"), ("notes", "")],
        )
        .await;
    assert_eq!(status, 404, "not hers to change");

    // A label deleted comes off; a team deleted leaves its conversations in no team.
    assert_eq!(admin.call(i::DeleteLabel::PATH, &[("id", &refund)]).await.0, 200);
    assert!(list(&mut b_oscar, &[("label", &refund)]).await.is_empty());
    assert_eq!(admin.call(i::DeleteTeam::PATH, &[("id", &sales)]).await.0, 200);
    assert_eq!(whose(&app, &a).await.1, None);
    assert_eq!(list(&mut b_olive, &[]).await.len(), 4, "in no team now: she sees everything");
}

#[tokio::test]
async fn two_servers_auto_assign_a_burst_without_passing_any_limit() {
    let app = TestApp::builder().with_users(&[ADMIN, OLIVE, OSCAR]).spawn().await;
    if app.db().kind() != DbKind::Postgres {
        eprintln!("replicas share PostgreSQL only: this test runs in the PostgreSQL pass");
        return;
    }
    let shop = app.agent("shop", &["ticket_escalation"]).await;
    let second = app.restart().await;
    let mut admin = app.signed_in(&ADMIN).await;
    let (olive, oscar) = (id_of(&app, &OLIVE).await, id_of(&app, &OSCAR).await);
    for user in [&olive, &oscar] {
        assert_eq!(admin.call(i::SetLimit::PATH, &[("user_id", user), ("max_open", "5")]).await.0, 200);
    }
    let (b_olive, b_oscar) = (app.signed_in(&OLIVE).await, app.signed_in(&OSCAR).await);
    let _feeds = (feed(&b_olive).await, feed(&b_oscar).await);
    online(&app, &["Olive", "Oscar"]).await;
    team(&mut admin, "Burst", "auto", &[&olive, &oscar], &[&shop.id]).await;
    // The fake upstream answers each visitor's first message.
    for _ in 0..20 {
        app.fake.push_content("Of course.");
    }
    let second_url = second.url();
    let first_url = app.url("");
    let leads = (0..20).map(|n| {
        let base = if n % 2 == 0 { first_url.clone() } else { second_url.clone() };
        let app = &app;
        async move {
            let visitor = app.visitor("shop").await;
            let r = app.send_raw_on(&base, &visitor, json!({"agent": "shop", "message": "hi"})).await;
            let conv = conversation_id(&read_events(r).await);
            let r = app
                .client
                .post(format!("{base}/api/v1/conversations/{conv}/lead"))
                .bearer_auth(&visitor)
                .json(&json!({"name": "Ann", "email": "ann@example.com", "message": "call"}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 201);
        }
    });
    futures::future::join_all(leads).await;
    // Each server's sweeper and each lead tried; give them a moment more, then count.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let counts: Vec<(Option<String>, i64)> = sqlx::query_as(
        "SELECT assignee_id, COUNT(*) FROM conversations WHERE status = 'waiting_human' GROUP BY assignee_id",
    )
    .fetch_all(app.db().pool())
    .await
    .unwrap();
    let of = |who: Option<&str>| counts.iter().find(|(a, _)| a.as_deref() == who).map(|(_, n)| *n).unwrap_or(0);
    assert_eq!((of(Some(&olive)), of(Some(&oscar)), of(None)), (5, 5, 10), "{counts:?}");
}
