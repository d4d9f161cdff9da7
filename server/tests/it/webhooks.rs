//! Outbound webhooks (issue 17) end to end, on SQLite and PostgreSQL, against a real HTTP
//! receiver: events reach the endpoints that chose them, signed as Standard Webhooks say (checked
//! with that project's own verifier); a failing endpoint is retried on the documented schedule
//! (a controllable clock), then disabled, and "send again" delivers the same message; a delivery
//! left by a killed server is sent by the next one; private addresses are refused unless allowed;
//! a slow endpoint holds a few senders at most and delays no other agent's deliveries.

use std::collections::HashMap;
use std::time::Duration;

use leptos::server_fn::ServerFn;
use parley_app::console::api::{conversations as c, webhooks as w};
use parley_engine::engine::clock::ManualClock;
use parley_engine::engine::webhooks::{PER_ENDPOINT, RETRY_DELAYS};
use parley_engine::store::webhooks::{self as store, DeliveryRow};
use parley_server::fake_openai::FakeOpenAi;
use serde_json::{Value, json};

use crate::harness::fixtures::{ADMIN, OPERATOR};
use crate::harness::*;

/// Adds an endpoint through the console: `(status, answer)`.
async fn add(admin: &mut Browser, agent_id: &str, url: &str, events: &str) -> (u16, Value) {
    let (status, body) =
        admin.call(w::AddWebhook::PATH, &[("agent_id", agent_id), ("url", url), ("events", events)]).await;
    (status, serde_json::from_str(&body).unwrap_or(Value::String(body)))
}

/// A conversation of a new visitor that ends with a lead; the conversation's id.
async fn lead(app: &TestApp, agent: &str, name: &str) -> String {
    let visitor = app.visitor(agent).await;
    app.fake.push_content("Of course.");
    let conv = conversation_id(&app.send(&visitor, agent, None, "please call me").await);
    let r = app
        .post(
            &visitor,
            &format!("/api/v1/conversations/{conv}/lead"),
            json!({"name": name, "email": "ada@example.com", "message": "call after 5"}),
        )
        .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    conv
}

fn header_map(r: &Received) -> http::HeaderMap {
    let mut headers = http::HeaderMap::new();
    for (k, v) in &r.headers {
        headers.insert(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
    }
    headers
}

/// The request's `webhook-id`.
fn id_of(r: &Received) -> String {
    r.headers["webhook-id"].clone()
}

fn body_of(r: &Received) -> Value {
    serde_json::from_str(&r.body).unwrap()
}

/// Checks the signature with the Standard Webhooks verifier; the timestamp need not be near the
/// wall clock (a test's clock may have moved on), only what was signed.
fn assert_signed(secret: &str, r: &Received) {
    let verifier = standardwebhooks::Webhook::new(secret).unwrap();
    let ts: i64 = r.headers["webhook-timestamp"].parse().unwrap();
    let expected = verifier.sign(&id_of(r), ts, r.body.as_bytes()).unwrap();
    assert_eq!(r.headers["webhook-signature"], expected, "signature of {}", r.body);
    let wrong = standardwebhooks::Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    assert_ne!(wrong.sign(&id_of(r), ts, r.body.as_bytes()).unwrap(), expected);
}

/// The endpoint's one delivery, once `ready` says it is recorded.
async fn delivery(app: &TestApp, endpoint: &str, ready: impl Fn(&DeliveryRow) -> bool) -> DeliveryRow {
    let mut found = None;
    within(10, "the delivery is recorded", async || {
        let rows = store::deliveries(app.db(), endpoint, 10).await.unwrap();
        found = rows.into_iter().find(&ready);
        found.is_some()
    })
    .await;
    found.unwrap()
}

#[tokio::test]
async fn events_reach_the_endpoints_that_chose_them_signed_as_standard_webhooks() {
    let app =
        TestApp::builder().with_users(&[ADMIN, OPERATOR]).config(|c| c.allow_private_endpoints = true).spawn().await;
    let receiver = Receiver::start().await;
    let agent = app.agent("shop", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let events = "lead.created,conversation.waiting_human,conversation.claimed,conversation.closed";
    let (status, made) = add(&mut admin, &agent.id, &receiver.url("/hook"), events).await;
    assert_eq!(status, 200, "{made}");
    let secret = made["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    // The server never logs it.
    captured_logs().secret(&secret);
    // Another endpoint, for payments only: none of these events reach it.
    assert_eq!(add(&mut admin, &agent.id, &receiver.url("/echo"), "order.paid").await.0, 200);

    let conv = lead(&app, "shop", "Ada Lovelace").await;
    let got = receiver.wait_for("/hook", 2).await;
    // The wall-clock check too: this server's clock is the system's.
    let verifier = standardwebhooks::Webhook::new(&secret).unwrap();
    for r in &got {
        verifier.verify(r.body.as_bytes(), &header_map(r)).expect("a valid Standard Webhooks signature");
        assert_eq!(r.method, "POST");
        assert_eq!(r.headers["content-type"], "application/json");
    }
    let by_type: HashMap<String, Value> =
        got.iter().map(|r| (body_of(r)["type"].as_str().unwrap().to_owned(), body_of(r))).collect();
    let created = &by_type["lead.created"];
    assert_eq!(created["agent"], "shop");
    assert_eq!(created["data"]["conversation_id"], conv.as_str());
    assert_eq!(created["data"]["lead"]["name"], "Ada Lovelace");
    assert_eq!(created["data"]["lead"]["email"], "ada@example.com");
    assert_eq!(created["data"]["lead"]["message"], "call after 5");
    assert!(created["timestamp"].as_str().unwrap().ends_with('Z'), "{created}");
    let waiting = &by_type["conversation.waiting_human"];
    assert_eq!(
        (waiting["data"]["reason"].as_str(), waiting["data"]["conversation_id"].as_str()),
        (Some("lead"), Some(conv.as_str()))
    );
    assert_ne!(id_of(&got[0]), id_of(&got[1]), "one webhook-id per message");

    // An operator takes the conversation and closes it.
    let mut olive = app.signed_in(&OPERATOR).await;
    assert_eq!(olive.call(c::Claim::PATH, &[("id", &conv)]).await.0, 200);
    assert_eq!(olive.call(c::CloseConversation::PATH, &[("id", &conv)]).await.0, 200);
    let got = receiver.wait_for("/hook", 4).await;
    let bodies: Vec<Value> = got.iter().map(body_of).collect();
    let claimed = bodies.iter().find(|b| b["type"] == "conversation.claimed").expect("claimed");
    assert_eq!(claimed["data"]["operator"]["email"], OPERATOR.email);
    let closed = bodies.iter().find(|b| b["type"] == "conversation.closed").expect("closed");
    assert_eq!(closed["data"]["closed_by"]["email"], OPERATOR.email);
    for r in &got {
        assert_signed(&secret, r);
    }
    assert!(receiver.received_at("/echo").is_empty(), "the payments endpoint chose none of these");

    // The console's delivery log: four delivered, each with one attempt answered 204 (recorded
    // just after the receiver answered).
    within(10, "four deliveries recorded", async || {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'delivered'")
            .fetch_one(app.db().pool())
            .await
            .unwrap()
            == 4
    })
    .await;
    let (status, body) = admin.call(w::AgentWebhooks::PATH, &[("agent_id", &agent.id)]).await;
    assert_eq!(status, 200);
    let view: Value = serde_json::from_str(&body).unwrap();
    let hook = view["endpoints"].as_array().unwrap().iter().find(|e| e["url"] == receiver.url("/hook")).unwrap();
    assert_eq!(hook["enabled"], true);
    let deliveries = hook["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 4);
    assert!(deliveries.iter().all(|d| d["status"] == "delivered" && d["last_status"] == 204 && d["attempts"] == 1));
    assert_eq!(hook["attempts"].as_array().unwrap().len(), 4);
    // Operators do not manage webhooks.
    assert_eq!(olive.call(w::AgentWebhooks::PATH, &[("agent_id", &agent.id)]).await.0, 403);
}

#[tokio::test]
async fn a_failing_endpoint_is_retried_on_schedule_then_disabled_and_send_again_delivers() {
    let clock = ManualClock::new();
    let app = TestApp::builder()
        .clock(clock.clone())
        .with_users(&[ADMIN])
        .config(|c| c.allow_private_endpoints = true)
        .spawn()
        .await;
    let receiver = Receiver::start().await;
    receiver.set_hook_status(503);
    let agent = app.agent("shop", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let (_, made) = add(&mut admin, &agent.id, &receiver.url("/hook"), "lead.created").await;
    let secret = made["secret"].as_str().unwrap().to_owned();
    let endpoint = store::of_agent(app.db(), &agent.id).await.unwrap().remove(0);

    lead(&app, "shop", "Ada").await;
    receiver.wait_for("/hook", 1).await;
    for (i, wait) in RETRY_DELAYS.iter().enumerate() {
        let attempts = i as i64 + 1;
        let d = delivery(&app, &endpoint.id, |d| d.attempts == attempts).await;
        let wait_ms = wait.as_millis() as i64;
        assert_eq!(d.status, "pending");
        assert_eq!(d.last_status, Some(503));
        assert_eq!(d.next_attempt_at - d.last_attempt_at.unwrap(), wait_ms, "the wait after attempt {attempts}");
        if i == 0 {
            // Not a moment early.
            clock.advance_ms(wait_ms - 1_000);
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            assert_eq!(receiver.received_at("/hook").len(), 1, "no attempt before its time");
            clock.advance_ms(1_000);
        } else {
            clock.advance_ms(wait_ms);
        }
        receiver.wait_for("/hook", i + 2).await;
    }
    let d = delivery(&app, &endpoint.id, |d| d.status == "failed").await;
    assert_eq!(d.attempts, 8);
    let got = receiver.received_at("/hook");
    assert_eq!(got.len(), 8);
    assert!(got.iter().all(|r| id_of(r) == d.id), "every attempt carries the same webhook-id");
    let stamps: Vec<i64> = got.iter().map(|r| r.headers["webhook-timestamp"].parse().unwrap()).collect();
    assert!(stamps.windows(2).all(|p| p[1] > p[0]), "each attempt signed at its own time: {stamps:?}");
    for r in &got {
        assert_signed(&secret, r);
    }
    // A day of failures: the endpoint is off, and the console says why.
    let off = store::by_id(app.db(), &endpoint.id).await.unwrap().unwrap();
    assert!(!off.is_enabled());
    let reason = off.disabled_reason.clone().unwrap();
    assert!(reason.contains("for a day") && reason.contains("503"), "{reason}");
    let (_, body) = admin.call(w::AgentWebhooks::PATH, &[("agent_id", &agent.id)]).await;
    assert!(body.contains("every attempt failed for a day"), "{body}");
    // While it is off, new events are not queued for it.
    lead(&app, "shop", "Bea").await;
    assert_eq!(store::deliveries(app.db(), &endpoint.id, 10).await.unwrap().len(), 1);

    // Fixed and turned on again, "send again" delivers the same message.
    receiver.set_hook_status(200);
    let on = [("endpoint_id", endpoint.id.as_str()), ("enabled", "true")];
    assert_eq!(admin.call(w::SetWebhookEnabled::PATH, &on).await.0, 200);
    assert_eq!(admin.call(w::ResendWebhook::PATH, &[("delivery_id", &d.id)]).await.0, 200);
    let got = receiver.wait_for("/hook", 9).await;
    assert_eq!(id_of(&got[8]), d.id);
    assert_signed(&secret, &got[8]);
    let d = delivery(&app, &endpoint.id, |d| d.status == "delivered").await;
    assert_eq!((d.attempts, d.last_status), (1, Some(200)));
    assert_eq!(admin.call(w::ResendWebhook::PATH, &[("delivery_id", "no-such-delivery")]).await.0, 404);

    // 410 Gone: the endpoint is switched off at once.
    receiver.set_hook_status(410);
    lead(&app, "shop", "Cy").await;
    receiver.wait_for("/hook", 10).await;
    within(10, "the endpoint is disabled", async || {
        let e = store::by_id(app.db(), &endpoint.id).await.unwrap().unwrap();
        !e.is_enabled() && e.disabled_reason.is_some_and(|r| r.contains("410"))
    })
    .await;
}

#[tokio::test]
async fn a_delivery_left_by_a_killed_server_is_sent_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let fake = FakeOpenAi::start().await;
    prepare(&url, dir.path(), "durable", &["ticket_escalation"], &fake).await;
    let receiver = Receiver::start().await;
    receiver.set_hook_status(503);
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .args(["add-webhook", "--agent", "durable", "--url", &receiver.url("/hook"), "--events", "lead.created"])
        .env("DATABASE_URL", &url)
        .env("PARLEY_DATA_DIR", dir.path())
        .env("PARLEY_ALLOW_PRIVATE_ENDPOINTS", "true")
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let secret = stdout.split_whitespace().find(|w| w.starts_with("whsec_")).expect("the secret").to_owned();
    captured_logs().secret(&secret);

    let env = [("PARLEY_ALLOW_PRIVATE_ENDPOINTS", "true")];
    let mut first = start_parley(&url, dir.path(), &env).await;
    let token = first.visitor("durable").await;
    fake.push_content("Of course.");
    let conv = conversation_id(&read_events(first.send(&token, "durable", "call me").await).await);
    let r = reqwest::Client::new()
        .post(first.url(&format!("/api/v1/conversations/{conv}/lead")))
        .bearer_auth(&token)
        .json(&json!({"name": "Ada", "email": "ada@example.com", "message": "call me"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let failed = receiver.wait_for("/hook", 1).await;
    // Killed once the failed attempt is recorded (a sender killed mid-attempt lets go of the
    // delivery when its 60 s claim runs out).
    let db = parley_engine::store::Db::connect(&url).await.unwrap();
    within(10, "the attempt is recorded", async || {
        let rows: Vec<(i64,)> = sqlx::query_as("SELECT attempts FROM webhook_deliveries")
            .fetch_all(&mut *db.read().await.unwrap())
            .await
            .unwrap();
        rows == [(1,)]
    })
    .await;
    first.kill_9().await;
    receiver.set_hook_status(204);

    // The retry is due 5 s after the first attempt; the next server sends it.
    let _second = start_parley(&url, dir.path(), &env).await;
    let got = receiver.wait_for("/hook", 2).await;
    assert_eq!(id_of(&got[1]), id_of(&failed[0]), "the same message, not a new one");
    assert_eq!(got[1].body, failed[0].body);
    assert_signed(&secret, &got[1]);
    assert_eq!(body_of(&got[1])["data"]["lead"]["name"], "Ada");
}

#[tokio::test]
async fn addresses_inside_the_network_and_bad_choices_are_refused_unless_allowed() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("shop", &["ticket_escalation"]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    for (url, says) in [
        ("http://127.0.0.1:9/hook", "only https"),
        ("https://127.0.0.1/hook", "private"),
        ("https://10.0.0.5/hook", "private"),
        ("https://[::1]/hook", "private"),
        ("https://169.254.169.254/latest/meta-data", "private"),
        ("https://user:pw@93.184.216.34/hook", "user name"),
        ("ftp://example.com/hook", "only https"),
        ("not a url", "not a valid URL"),
    ] {
        let (status, body) = add(&mut admin, &agent.id, url, "lead.created").await;
        assert_eq!(status, 422, "{url}: {body}");
        assert!(body.to_string().contains(says), "{url}: {body}");
    }
    let public = "https://93.184.216.34/hook";
    let (status, body) = add(&mut admin, &agent.id, public, "").await;
    assert!(status == 422 && body.to_string().contains("at least one event"), "{body}");
    let (status, body) = add(&mut admin, &agent.id, public, "lead.created,lead.deleted").await;
    assert!(status == 422 && body.to_string().contains("unknown event `lead.deleted`"), "{body}");
    assert_eq!(app.count("webhook_endpoints").await, 0, "nothing refused was stored");
    let (status, body) = add(&mut admin, &agent.id, public, "order.paid, order.paid,order.expired").await;
    assert_eq!(status, 200, "{body}");
    let endpoints = store::of_agent(app.db(), &agent.id).await.unwrap();
    assert_eq!(endpoints[0].events(), ["order.paid", "order.expired"]);
    // The addition is in the audit log, the secret never.
    let (entries, _) = parley_engine::store::audit::list(app.db(), Some("webhook"), None, 0, 10).await.unwrap();
    assert_eq!(entries.len(), 1);
    assert!(entries[0].detail.contains(public), "{:?}", entries[0]);
    assert!(!entries[0].detail.contains(body["secret"].as_str().unwrap()));
}

/// A real endpoint that hangs: each request waits a minute before answering (the sender cuts it
/// first); `(its URL, how many requests began, the server)`.
async fn hanging_endpoint() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>, tokio::task::JoinHandle<()>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let begun = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = begun.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(60)).await;
                http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, begun, server)
}

/// Queues `n` `lead.created` events of an agent, as one transaction.
async fn queue_leads(app: &TestApp, agent_id: &str, n: usize) {
    let mut tx = app.db().writer().begin().await.unwrap();
    for i in 0..n {
        let data =
            json!({"lead": {"name": format!("Lead {i}"), "email": "ada@example.com", "phone": null, "message": "hi"}});
        store::emit(&mut tx, agent_id, "lead.created", None, data, app.engine().now_ms()).await.unwrap();
    }
    tx.commit().await.unwrap();
    app.engine().wake_outbox();
}

#[tokio::test]
async fn a_slow_endpoint_holds_a_few_senders_and_delays_no_other_agents_webhooks() {
    use std::sync::atomic::Ordering;
    let app = TestApp::builder().with_users(&[ADMIN]).config(|c| c.allow_private_endpoints = true).spawn().await;
    let fast = Receiver::start().await;
    let (slow_url, begun, _server) = hanging_endpoint().await;
    let slow_agent = app.agent("slow", &[]).await;
    let fast_agent = app.agent("fast", &[]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    assert_eq!(add(&mut admin, &slow_agent.id, &slow_url, "lead.created").await.0, 200);
    assert_eq!(add(&mut admin, &fast_agent.id, &fast.url("/hook"), "lead.created").await.0, 200);

    // Forty deliveries to the hanging endpoint, due first; its first requests hang.
    queue_leads(&app, &slow_agent.id, 40).await;
    let per_endpoint = usize::try_from(PER_ENDPOINT).unwrap();
    within(5, "the slow endpoint's requests began", async || begun.load(Ordering::SeqCst) >= per_endpoint).await;

    // Another agent's event goes out at once, beside the hanging ones.
    let queued = std::time::Instant::now();
    queue_leads(&app, &fast_agent.id, 1).await;
    let got = fast.wait_for("/hook", 1).await;
    assert!(queued.elapsed() < Duration::from_secs(3), "delivered after {:?}", queued.elapsed());
    assert_eq!(body_of(&got[0])["type"], "lead.created");
    assert_eq!(begun.load(Ordering::SeqCst), per_endpoint, "no more than {per_endpoint} in flight to the slow one");
}
