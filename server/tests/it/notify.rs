//! Operators' notifications (issue 43 part 6) over real HTTP, on SQLite and PostgreSQL: `queue`
//! and `reply` notifications follow teams and each user's preferences; Web Push reaches every
//! browser a user subscribed, checked by a push service the test starts (`push_receiver.py`:
//! it verifies the VAPID JWT and decrypts the payload with the browser's keys, using PyPI's
//! `cryptography` and `http_ece`); a subscription the push service calls gone is deleted; a user
//! who turned push off gets none; the mail digest (to a real `aiosmtpd`) lists what stayed unread
//! past the user's delay, once.

use leptos::server_fn::ServerFn;
use parley_app::console::api::{inbox as i, notify as n};
use parley_engine::engine::clock::ManualClock;
use parley_engine::store::users::Role;
use parley_server::config::MailArgs;
use serde_json::{Value, json};

use crate::harness::fixtures::{ADMIN, OLIVE, OSCAR, User};
use crate::harness::*;

const PIA: User = User { email: "pia@example.com", name: "Pia", role: Role::Operator };
const ERIN: User = User { email: "erin@example.com", name: "Erin", role: Role::Operator };

/// A conversation of a new visitor of `agent` that ends with a lead: `(conversation, visitor)`.
async fn lead(app: &TestApp, agent: &str) -> (String, String) {
    let visitor = app.visitor(agent).await;
    app.fake.push_content("Of course.");
    let conv = conversation_id(&app.send(&visitor, agent, None, "please call me").await);
    let form = json!({"name": "Ann", "email": "ann@example.com", "message": "call after 5"});
    assert_eq!(app.post(&visitor, &format!("/api/v1/conversations/{conv}/lead"), form).await.status(), 201);
    (conv, visitor)
}

async fn id_of(app: &TestApp, user: &User) -> String {
    parley_engine::store::users::with_hash(app.db(), user.email).await.unwrap().unwrap().0.id
}

/// `(user email, kind, conversation)` of every notification, in a stable order.
async fn notifications(app: &TestApp) -> Vec<(String, String, String)> {
    sqlx::query_as(
        "SELECT u.email, n.kind, n.conversation_id FROM operator_notifications n JOIN users u ON u.id = n.user_id \
         ORDER BY u.email, n.kind, n.conversation_id",
    )
    .fetch_all(app.db().pool())
    .await
    .unwrap()
}

fn has(all: &[(String, String, String)], email: &str, kind: &str, conv: &str) -> bool {
    all.iter().any(|(e, k, c)| e == email && k == kind && c == conv)
}

async fn subscribe(browser: &mut Browser, sub: &Value) -> (u16, String) {
    let field = |k: &str| sub[k].as_str().unwrap().to_owned();
    let (endpoint, p256dh, auth) = (field("endpoint"), field("p256dh"), field("auth"));
    browser.call(n::PushSubscribe::PATH, &[("endpoint", &endpoint), ("p256dh", &p256dh), ("auth", &auth)]).await
}

async fn prefs(browser: &mut Browser, kinds: &str, push: bool, digest: bool, delay: &str) -> (u16, String) {
    let (push, digest) = (push.to_string(), digest.to_string());
    let form = [
        ("kinds", kinds),
        ("in_console", "true"),
        ("push", push.as_str()),
        ("digest", digest.as_str()),
        ("digest_delay_min", delay),
    ];
    browser.call(n::SaveNotificationPrefs::PATH, &form).await
}

#[tokio::test]
async fn queue_and_reply_notifications_follow_teams_and_preferences() {
    let app = TestApp::builder().with_users(&[ADMIN, PIA, ERIN, OSCAR]).spawn().await;
    let shop = app.agent("shop", &["ticket_escalation"]).await;
    app.agent("other", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let (pia, erin) = (id_of(&app, &PIA).await, id_of(&app, &ERIN).await);
    let members = [("name", "Shop"), ("mode", "manual"), ("members", pia.as_str()), ("agents", shop.id.as_str())];
    assert_eq!(admin.call(i::SaveTeam::PATH, &members).await.0, 200);
    let other = [("name", "Other"), ("mode", "manual"), ("members", erin.as_str()), ("agents", "")];
    assert_eq!(admin.call(i::SaveTeam::PATH, &other).await.0, 200);

    // The lead puts it in Shop's queue: Shop's member, the admin and Oscar (in no team) hear
    // of it; Erin (another team) does not.
    let (conv, visitor) = lead(&app, "shop").await;
    let all = notifications(&app).await;
    for email in [PIA.email, ADMIN.email, OSCAR.email] {
        assert!(has(&all, email, "queue", &conv), "{email}: {all:?}");
    }
    assert!(!all.iter().any(|(e, ..)| e == ERIN.email), "{all:?}");

    // Preferences are checked, and a kind turned off is not written at all.
    let mut pia_browser = app.signed_in(&PIA).await;
    let (status, body) = prefs(&mut pia_browser, "assigned,spam", true, false, "15").await;
    assert!(status == 422 && body.contains("unknown kind of notification `spam`"), "{body}");
    let (status, body) = prefs(&mut pia_browser, "assigned", true, false, "0").await;
    assert!(status == 422 && body.contains("1 to 1440 minutes"), "{body}");
    let (status, body) = prefs(&mut pia_browser, "assigned", true, true, "15").await;
    assert!(status == 422 && body.contains("Email is not set up"), "{body}");
    assert_eq!(app.count("operator_notify_prefs").await, 0, "a refused change changes nothing");
    assert_eq!(prefs(&mut pia_browser, "assigned,reply", true, false, "15").await.0, 200);
    let (conv2, _) = lead(&app, "shop").await;
    let all = notifications(&app).await;
    assert!(has(&all, ADMIN.email, "queue", &conv2) && !has(&all, PIA.email, "queue", &conv2), "{all:?}");

    // Assigned to Pia: the visitor writing tells her (`reply`), once until she reads it.
    assert_eq!(admin.call(i::Assign::PATH, &[("id", &conv), ("to", &pia)]).await.0, 200);
    for text in ["are you there?", "hello?"] {
        app.fake.push_content("Someone will answer.");
        app.send(&visitor, "shop", Some(&conv), text).await;
    }
    let all = notifications(&app).await;
    let replies = all.iter().filter(|(e, k, c)| e == PIA.email && k == "reply" && *c == conv).count();
    assert_eq!(replies, 1, "{all:?}");
    assert!(has(&all, PIA.email, "assigned", &conv), "{all:?}");

    // Her page lists them unread; "mark all read" empties it, and the next reply is new.
    let (status, body) = pia_browser.call(n::NotificationsPage::PATH, &[]).await;
    assert_eq!(status, 200, "{body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    let kinds: Vec<&str> = page["unread"].as_array().unwrap().iter().map(|u| u["kind"].as_str().unwrap()).collect();
    // (The queue notification came before she turned `queue` off.)
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert!(["reply", "assigned", "queue"].iter().all(|k| kinds.contains(k)), "{kinds:?}");
    assert_eq!(page["kinds"], json!(["assigned", "reply"]));
    assert_eq!(page["vapid_public_key"].as_str().unwrap().len(), 87, "65 bytes, base64url");
    let (status, body) = pia_browser.call(n::MarkNotificationsRead::PATH, &[("ids", "")]).await;
    assert_eq!((status, body.as_str()), (200, "3"));
    assert_eq!(pia_browser.call(n::UnreadCount::PATH, &[]).await.1, r#"{"count":0,"in_console":true}"#);
    app.fake.push_content("Still here.");
    app.send(&visitor, "shop", Some(&conv), "one more thing").await;
    assert_eq!(pia_browser.call(n::UnreadCount::PATH, &[]).await.1, r#"{"count":1,"in_console":true}"#);
}

#[tokio::test]
async fn web_push_reaches_each_subscribed_browser_and_a_gone_one_is_forgotten() {
    if !push_receiver_available("web_push_reaches_each_subscribed_browser_and_a_gone_one_is_forgotten") {
        return;
    }
    let push = PushReceiver::start(&["olive_laptop", "olive_phone", "oscar"]).await;
    let port = push.port;
    let app = TestApp::builder()
        .with_users(&[ADMIN, OLIVE, OSCAR])
        // The test's push service is a listed private destination, as a webhook receiver is.
        .config(move |c| c.private_endpoints = format!("{},127.0.0.1:{port}", c.private_endpoints))
        .spawn()
        .await;
    app.agent("shop", &["ticket_escalation"]).await;
    let (mut olive, mut oscar) = (app.signed_in(&OLIVE).await, app.signed_in(&OSCAR).await);
    let laptop = &push.subscriptions["olive_laptop"];

    // Subscriptions are checked: a public https endpoint (or a listed private one), a P-256
    // public key, a 16-byte secret. Nothing is stored when one is refused.
    let mut bad = laptop.clone();
    bad["endpoint"] = json!("http://192.168.1.20/push/x");
    let (status, body) = subscribe(&mut olive, &bad).await;
    assert!(status == 422 && (body.contains("private") || body.contains("https")), "{body}");
    let mut bad = laptop.clone();
    bad["p256dh"] = json!("BAAA");
    let (status, body) = subscribe(&mut olive, &bad).await;
    assert!(status == 422 && body.contains("P-256"), "{body}");
    let mut bad = laptop.clone();
    bad["auth"] = json!("c2hvcnQ");
    let (status, body) = subscribe(&mut olive, &bad).await;
    assert!(status == 422 && body.contains("16 bytes"), "{body}");
    assert_eq!(app.count("push_subscriptions").await, 0);

    assert_eq!(subscribe(&mut olive, laptop).await.0, 200);
    // The phone's push service will answer 410 Gone (the browser unsubscribed).
    let mut phone = push.subscriptions["olive_phone"].clone();
    phone["endpoint"] = json!(format!("http://127.0.0.1:{port}/gone/olive_phone"));
    assert_eq!(subscribe(&mut olive, &phone).await.0, 200);
    assert_eq!(subscribe(&mut oscar, &push.subscriptions["oscar"]).await.0, 200);
    assert_eq!(prefs(&mut oscar, "assigned,mention,queue,reply", false, false, "15").await.0, 200);

    // The lead enters the queue: Olive and Oscar (in no team) are told; Olive's browsers get a
    // push, Oscar's none (push off).
    let (conv, _) = lead(&app, "shop").await;
    let got = push.wait_for(2).await;
    let laptop_got = got.iter().find(|p| p["name"] == "olive_laptop").expect("the laptop's push");
    assert_eq!(laptop_got["ok"], true, "{laptop_got:#}");
    let payload = &laptop_got["payload"];
    assert_eq!((payload["kind"].as_str(), payload["conversation_id"].as_str()), (Some("queue"), Some(conv.as_str())));
    assert_eq!(payload["url"], json!(format!("{}/admin/conversations/{conv}", app.url("").trim_end_matches('/'))));
    assert_eq!(laptop_got["claims"]["aud"], json!(format!("http://127.0.0.1:{port}")));
    assert_eq!(laptop_got["encoding"], "aes128gcm");
    assert!(laptop_got["ttl"].as_str().unwrap().parse::<u64>().unwrap() > 0, "{laptop_got:#}");
    assert_eq!(laptop_got["urgency"], "normal");
    assert!(!payload.to_string().contains("please call me"), "ids only, never the transcript");

    // The phone's 410 deleted its subscription; the laptop's stays.
    within(10, "the gone subscription is deleted", async || app.count("push_subscriptions").await == 2).await;
    let endpoints: Vec<String> = sqlx::query_scalar("SELECT endpoint FROM push_subscriptions ORDER BY endpoint")
        .fetch_all(app.db().pool())
        .await
        .unwrap();
    assert!(endpoints.iter().all(|e| !e.contains("/gone/")), "{endpoints:?}");

    // Assigned to Olive by the admin: one push, to the laptop only, urgent.
    let mut admin = app.signed_in(&ADMIN).await;
    let olive_id = id_of(&app, &OLIVE).await;
    assert_eq!(admin.call(i::Assign::PATH, &[("id", &conv), ("to", &olive_id)]).await.0, 200);
    let got = push.wait_for(3).await;
    let assigned = got.iter().find(|p| p["payload"]["kind"] == "assigned").expect("the assigned push");
    assert_eq!((assigned["name"].as_str(), assigned["ok"].as_bool()), (Some("olive_laptop"), Some(true)));
    assert_eq!(assigned["payload"]["conversation_id"], json!(conv));
    assert_eq!(assigned["urgency"], "high");

    // Oscar has his notification in the console, and no push was ever queued or sent for him.
    assert!(has(&notifications(&app).await, OSCAR.email, "queue", &conv));
    let oscar_pushes: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM push_deliveries d JOIN push_subscriptions s ON s.id = d.subscription_id \
         JOIN users u ON u.id = s.user_id WHERE u.email = $1",
    )
    .bind(OSCAR.email)
    .fetch_one(app.db().pool())
    .await
    .unwrap();
    assert_eq!(oscar_pushes, 0);
    assert!(push.received().iter().all(|p| p["name"] != "oscar"), "{:#?}", push.received());
    assert!(push.received().iter().all(|p| p["ok"] == true || p["name"] == "olive_phone"), "{:#?}", push.received());

    // Unsubscribing stops the pushes to that browser.
    let (status, body) =
        olive.call(n::PushUnsubscribe::PATH, &[("endpoint", laptop["endpoint"].as_str().unwrap())]).await;
    assert_eq!((status, body.as_str()), (200, "true"));
    assert_eq!(app.count("push_subscriptions").await, 1);
}

fn smtp(port: u16) -> MailArgs {
    MailArgs {
        smtp_host: Some("127.0.0.1".into()),
        smtp_port: Some(port),
        smtp_tls: Some("none".into()),
        mail_from: Some("Parley <parley@example.com>".into()),
        ..MailArgs::default()
    }
}

#[tokio::test]
async fn the_digest_mails_what_stayed_unread_past_the_delay_once() {
    if !smtp_available("the_digest_mails_what_stayed_unread_past_the_delay_once") {
        return;
    }
    let sink = SmtpSink::start().await;
    let port = sink.port;
    let clock = ManualClock::new();
    let app = TestApp::builder()
        .clock(clock.clone())
        .with_users(&[OLIVE, OSCAR])
        .config(move |c| c.mail = smtp(port))
        .spawn()
        .await;
    app.agent("shop", &["ticket_escalation"]).await;
    let (mut olive, mut oscar) = (app.signed_in(&OLIVE).await, app.signed_in(&OSCAR).await);
    assert_eq!(prefs(&mut olive, "queue,assigned", true, true, "10").await.0, 200);
    assert_eq!(prefs(&mut oscar, "queue,assigned", true, true, "10").await.0, 200);
    let (conv, _) = lead(&app, "shop").await;

    // Before the delay: nothing. Oscar reads his; Olive does not.
    clock.advance_ms(5 * 60_000);
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    assert!(sink.received().is_empty(), "{:#?}", sink.received());
    assert_eq!(oscar.call(n::MarkNotificationsRead::PATH, &[("ids", "")]).await.1, "1");

    clock.advance_ms(6 * 60_000);
    let got = sink.wait_for(1).await;
    assert_eq!(got[0]["rcpt_tos"], json!([OLIVE.email]), "only Olive left hers unread: {got:#?}");
    assert_eq!(got[0]["subject"], "Parley: 1 unread notification");
    let text = got[0]["text"].as_str().unwrap();
    let link = format!("{}/admin/conversations/{conv}", app.url("").trim_end_matches('/'));
    assert!(text.contains("New in the unassigned queue") && text.contains(&link), "{text}");
    assert!(!text.contains("please call me") && !text.contains("call after 5"), "no transcript text: {text}");

    // Once per notification: later runs send nothing more about it.
    clock.advance_ms(30 * 60_000);
    tokio::time::sleep(std::time::Duration::from_secs(7)).await;
    assert_eq!(sink.received().len(), 1, "{:#?}", sink.received());
    let digests: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mail_outbox WHERE kind = 'digest'")
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert_eq!(digests, 1);
}

#[tokio::test]
async fn the_console_serves_its_notification_scripts_and_page() {
    let app = TestApp::builder().with_users(&[OLIVE]).spawn().await;
    // The service worker and the helpers are plain scripts, at /admin/ (the worker's scope).
    for (path, needle) in [("/admin/push-sw.js", "showNotification"), ("/admin/console-notify.js", "parleyNotify")] {
        let r = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let kind = r.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(kind.starts_with("text/javascript"), "{path}: {kind}");
        assert!(r.text().await.unwrap().contains(needle), "{path}");
    }
    let olive = app.signed_in(&OLIVE).await;
    let r = olive.get("/admin/notifications").await;
    assert_eq!(r.status(), 200);
    let html = r.text().await.unwrap();
    assert!(html.contains("/admin/console-notify.js") && html.contains("Notifications"), "{html}");
}
