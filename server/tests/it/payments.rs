//! Payments that cannot be faked: the sandbox is on only where asked for, the pay page opens only
//! for its visitor or through a signed, expiring link, the sandbox's "Mark as paid" needs that link
//! and the same site, and webhooks are Standard Webhooks calls (signature over id, timestamp and
//! body; 5-minute window; each id once, across restarts; amount and currency must be the order's).

use std::io::BufRead;

use crate::harness::*;
use parley_engine::engine::clock::{Clock, ManualClock};
use parley_engine::engine::payments::links::LINK_GRACE_MS;
use parley_engine::store::orders::{self, Order};
use parley_protocol::{Block, PaymentQr};
use parley_server::config::TEST_WEBHOOK_SECRET;
use serde_json::{Value, json};

const AGENT: &str = "pay";

/// A server built by `builder` with an agent that may take payments, and a visitor's token.
async fn setup(builder: TestAppBuilder) -> (TestApp, String) {
    let app = builder.spawn().await;
    app.agent(AGENT, &["payments"]).await;
    let token = app.visitor(AGENT).await;
    (app, token)
}

/// A turn in which the model asks for a payment; the block the visitor got.
async fn pay_turn(app: &TestApp, token: &str) -> PaymentQr {
    app.fake.push_tool_call(
        "generate_payment",
        json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY"}),
    );
    app.fake.push_content("请扫码支付。");
    let events = app.send(token, AGENT, None, "I want to pay").await;
    match blocks(&events).into_iter().next() {
        Some(Block::PaymentQr(qr)) => qr,
        other => panic!("expected a payment block, got {other:?}"),
    }
}

async fn order(app: &TestApp, id: &str) -> Order {
    orders::by_id(app.db(), id).await.unwrap().expect("the order")
}

async fn error_code(r: reqwest::Response) -> String {
    r.json::<Value>().await.unwrap()["error"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn order_ids_are_unguessable_and_the_link_is_signed() {
    let (app, token) = setup(TestApp::builder().payments_sandbox()).await;
    let qr = pay_turn(&app, &token).await;
    let hex = qr.order_id.strip_prefix("ORD_").expect("ORD_ prefix");
    assert_eq!(hex.len(), 32, "128 bits: {}", qr.order_id);
    assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
    let (id, query) = link_parts(&qr.pay_url);
    assert_eq!(id, qr.order_id);
    assert!(query.starts_with("exp=") && query.contains("&sig="), "{query}");
    assert_eq!(order(&app, &qr.order_id).await.pay_url, qr.pay_url, "the QR code encodes the signed link");
}

#[tokio::test]
async fn an_anonymous_or_cross_site_confirm_is_refused_and_changes_nothing() {
    let (app, token) = setup(TestApp::builder().payments_sandbox()).await;
    let qr = pay_turn(&app, &token).await;
    let (id, query) = link_parts(&qr.pay_url);
    let no_redirect = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let post = |path: String| no_redirect.post(app.url(&path));

    // Anonymous: the bare URL of the old sandbox, a forged signature, a visitor's token.
    let bare = post(format!("/pay/{id}/confirm")).send().await.unwrap();
    assert_eq!(bare.status(), 404);
    let forged = query.replace("sig=", "sig=A");
    assert_eq!(post(format!("/pay/{id}/confirm?{forged}")).send().await.unwrap().status(), 404);
    let with_token = post(format!("/pay/{id}/confirm")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(with_token.status(), 404, "confirming needs the link, not just the visitor");

    // Cross-site, with the right link: another site's form, or a fetch the browser marks cross-site.
    let evil_origin =
        post(format!("/pay/{id}/confirm?{query}")).header("origin", "https://evil.example").send().await.unwrap();
    assert_eq!(evil_origin.status(), 403);
    assert_eq!(error_code(evil_origin).await, "cross_site");
    let evil_fetch =
        post(format!("/pay/{id}/confirm?{query}")).header("sec-fetch-site", "cross-site").send().await.unwrap();
    assert_eq!(evil_fetch.status(), 403);
    let same_site =
        post(format!("/pay/{id}/confirm?{query}")).header("sec-fetch-site", "same-site").send().await.unwrap();
    assert_eq!(same_site.status(), 403, "a sibling subdomain is another site for this form");

    let unchanged = order(&app, &id).await;
    assert_eq!((unchanged.status.as_str(), unchanged.paid_at), ("pending", None), "nothing changed");

    // The pay page's own form.
    let ok = app.confirm(&qr.pay_url).await;
    assert_eq!(ok.status(), 303);
    let back = ok.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(back, format!("/pay/{id}?{query}"));
    assert_eq!(order(&app, &id).await.status, "paid");
}

#[tokio::test]
async fn another_visitor_cannot_see_the_pay_page() {
    let (app, token) = setup(TestApp::builder().payments_sandbox()).await;
    let qr = pay_turn(&app, &token).await;
    let id = &qr.order_id;
    let other = app.visitor(AGENT).await;
    let page = |bearer: Option<&str>| {
        let r = app.client.get(app.url(&format!("/pay/{id}")));
        match bearer {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
        .send()
    };
    let nobody = page(None).await.unwrap();
    assert_eq!(nobody.status(), 404);
    let stranger = page(Some(&other)).await.unwrap();
    assert_eq!(stranger.status(), 404);
    assert_eq!(error_code(stranger).await, "not_found", "the same answer as for an order that does not exist");
    let bad_token = page(Some("not-a-token")).await.unwrap();
    assert_eq!(bad_token.status(), 404);

    let owner = page(Some(&token)).await.unwrap();
    assert_eq!(owner.status(), 200);
    let html = owner.text().await.unwrap();
    assert!(html.contains(id.as_str()) && html.contains("¥99.00"));
    assert!(!html.contains("Mark as paid"), "the button needs the signed link");

    let linked = app.client.get(&qr.pay_url).send().await.unwrap();
    assert_eq!(linked.status(), 200);
    assert_eq!(linked.headers()["referrer-policy"], "no-referrer");
    assert!(linked.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    assert!(linked.text().await.unwrap().contains("Mark as paid (sandbox)"));
}

#[tokio::test]
async fn an_expired_or_forged_link_is_refused() {
    let clock = ManualClock::new();
    let (app, token) = setup(TestApp::builder().payments_sandbox().clock(clock.clone())).await;
    let qr = pay_turn(&app, &token).await;
    let second = {
        // Another order of the same visitor, to borrow its signature.
        app.fake.push_tool_call(
            "generate_payment",
            json!({"serviceType": "ASSESSMENT", "category": "IANG", "paymentMethod": "WECHAT"}),
        );
        app.fake.push_content("ok");
        let events = app.send(&token, AGENT, None, "another one").await;
        match blocks(&events).into_iter().next() {
            Some(Block::PaymentQr(qr)) => qr,
            other => panic!("{other:?}"),
        }
    };
    let (id, query) = link_parts(&qr.pay_url);
    let (_, second_query) = link_parts(&second.pay_url);
    let get = |path: String| app.client.get(app.url(&path)).send();

    // Forged: another order's signature, a later expiry, a changed signature.
    assert_eq!(get(format!("/pay/{id}?{second_query}")).await.unwrap().status(), 404);
    let exp: i64 = query.split('&').next().unwrap().strip_prefix("exp=").unwrap().parse().unwrap();
    let sig = query.split_once("&sig=").unwrap().1;
    assert_eq!(get(format!("/pay/{id}?exp={}&sig={sig}", exp + 86_400)).await.unwrap().status(), 404);
    assert_eq!(get(format!("/pay/{id}?exp={exp}&sig={}", sig.to_lowercase())).await.unwrap().status(), 404);
    assert_eq!(app.confirm(&format!("/pay/{id}?{second_query}")).await.status(), 404);

    // Expired while the order can still be paid: a link this server signed that ran out a second ago.
    let now_s = clock.now_ms() / 1000;
    let stale = app.engine().services().payments.links.query(&id, now_s - 1);
    let r = get(format!("/pay/{id}?{stale}")).await.unwrap();
    assert_eq!(r.status(), 410);
    assert_eq!(error_code(r).await, "link_expired");
    let r = app.confirm(&format!("/pay/{id}?{stale}")).await;
    assert_eq!(r.status(), 410);
    assert_eq!(order(&app, &id).await.status, "pending", "nothing changed");

    // The real link runs out an hour after the order's 30 minutes.
    assert_eq!(get(format!("/pay/{id}?{query}")).await.unwrap().status(), 200);
    clock.advance_ms(30 * 60 * 1000 + LINK_GRACE_MS + 1000);
    assert_eq!(get(format!("/pay/{id}?{query}")).await.unwrap().status(), 410);
    // Its visitor still sees it.
    assert_eq!(app.get(&token, &format!("/pay/{id}")).await.status(), 200);
}

#[tokio::test]
async fn a_good_webhook_marks_the_order_paid_once() {
    let (app, token) = setup(TestApp::builder().payments_sandbox()).await;
    let qr = pay_turn(&app, &token).await;
    let id = &qr.order_id;
    let r = app.webhook("msg_good", &webhook_body(id, "paid", 9900, "CNY")).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["changed"], true);
    let paid = order(&app, id).await;
    assert_eq!(paid.status, "paid");
    // Another delivery about the same payment: accepted, changes nothing.
    let r = app.webhook("msg_good_2", &webhook_body(id, "paid", 9900, "CNY")).await;
    assert_eq!(r.json::<Value>().await.unwrap()["changed"], false);
    assert_eq!(order(&app, id).await.paid_at, paid.paid_at);
    assert_eq!(app.count("payment_webhooks").await, 2);
}

#[tokio::test]
async fn a_replayed_webhook_is_refused_and_changes_nothing_even_after_a_restart() {
    let (app, token) = setup(TestApp::builder().payments_sandbox()).await;
    let qr = pay_turn(&app, &token).await;
    let id = &qr.order_id;
    let now_s = app.engine().now_ms() / 1000;
    // A provider says the payment failed; the call is captured and replayed.
    let failed = webhook_body(id, "failed", 9900, "CNY");
    let r = app.webhook_with(TEST_WEBHOOK_SECRET, "msg_1", now_s, &failed).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["changed"], false);
    let replay = app.webhook_with(TEST_WEBHOOK_SECRET, "msg_1", now_s, &failed).await;
    assert_eq!(replay.status(), 409);
    assert_eq!(error_code(replay).await, "webhook_replayed");

    // The payment itself, then its replay on a restarted server.
    let paid = webhook_body(id, "paid", 9900, "CNY");
    let r = app.webhook_with(TEST_WEBHOOK_SECRET, "msg_2", now_s, &paid).await;
    assert_eq!(r.json::<Value>().await.unwrap()["changed"], true);
    let before = order(&app, id).await;
    let second = app.restart().await;
    let body = paid.to_string();
    let mut request = app.client.post(format!("{}/api/v1/payments/webhook", second.url())).body(body.clone());
    for (name, value) in webhook_headers(TEST_WEBHOOK_SECRET, "msg_2", now_s, &body) {
        request = request.header(name, value);
    }
    let r = request.send().await.unwrap();
    assert_eq!(r.status(), 409, "the id is remembered in the database");
    assert_eq!(order(&app, id).await, before);
    assert_eq!(app.count("payment_webhooks").await, 2);
}

#[tokio::test]
async fn a_stale_or_future_webhook_is_refused() {
    let clock = ManualClock::new();
    let (app, token) = setup(TestApp::builder().payments_sandbox().clock(clock.clone())).await;
    let qr = pay_turn(&app, &token).await;
    let body = webhook_body(&qr.order_id, "paid", 9900, "CNY");
    let now_s = clock.now_ms() / 1000;
    for (n, at) in [now_s - 301, now_s + 301].into_iter().enumerate() {
        let r = app.webhook_with(TEST_WEBHOOK_SECRET, &format!("msg_{n}"), at, &body).await;
        assert_eq!(r.status(), 401, "timestamp {at} vs {now_s}");
        assert_eq!(error_code(r).await, "bad_signature");
    }
    assert_eq!(order(&app, &qr.order_id).await.status, "pending");
    assert_eq!(app.count("payment_webhooks").await, 0);
    // A call made 4 minutes ago, received now, is fine.
    let r = app.webhook_with(TEST_WEBHOOK_SECRET, "msg_ok", now_s - 240, &body).await;
    assert_eq!(r.status(), 200);
    assert_eq!(order(&app, &qr.order_id).await.status, "paid");
}

#[tokio::test]
async fn a_webhook_with_another_amount_or_currency_is_refused_and_changes_nothing() {
    let (app, token) = setup(TestApp::builder().payments_sandbox()).await;
    let qr = pay_turn(&app, &token).await;
    let id = &qr.order_id;
    for (n, body) in [
        webhook_body(id, "paid", 1, "CNY"),
        webhook_body(id, "paid", 9900, "USD"),
        webhook_body(id, "paid", 990_000, "CNY"),
    ]
    .iter()
    .enumerate()
    {
        let r = app.webhook(&format!("msg_{n}"), body).await;
        assert_eq!(r.status(), 422, "{body}");
        assert_eq!(error_code(r).await, "order_mismatch");
    }
    // Without amount and currency the call is not a payment event (the old body).
    let r = app.webhook("msg_old", &json!({"order_id": id, "status": "paid"})).await;
    assert_eq!(r.status(), 422);
    assert_eq!(error_code(r).await, "invalid_body");
    // An order that does not exist.
    let r = app.webhook("msg_nope", &webhook_body("ORD_nope", "paid", 9900, "CNY")).await;
    assert_eq!(r.status(), 404);
    let unchanged = order(&app, id).await;
    assert_eq!((unchanged.status.as_str(), unchanged.paid_at), ("pending", None));
    assert_eq!(app.count("payment_webhooks").await, 0, "refused calls are not recorded");
    // The right amount and currency still pay it.
    assert_eq!(app.webhook("msg_0", &webhook_body(id, "paid", 9900, "CNY")).await.status(), 200);
    assert_eq!(order(&app, id).await.status, "paid");
}

#[tokio::test]
async fn without_a_secret_there_is_no_webhook_route() {
    let (app, token) = setup(TestApp::builder().payments_sandbox().webhook_secret(None)).await;
    let qr = pay_turn(&app, &token).await;
    let r = app.webhook("msg_1", &webhook_body(&qr.order_id, "paid", 9900, "CNY")).await;
    assert_eq!(r.status(), 404);
    assert_eq!(order(&app, &qr.order_id).await.status, "pending");
    // The sandbox page still works.
    assert_eq!(app.confirm(&qr.pay_url).await.status(), 303);
}

#[tokio::test]
async fn a_malformed_webhook_secret_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = parley_server::Config::for_tests(fresh_database(dir.path()).await, dir.path().to_path_buf());
    config.payment_webhook_secret = "test-webhook-secret".into();
    let err = parley_server::spawn(config).await.err().expect("refused");
    assert!(format!("{err:#}").contains("whsec_"), "{err:#}");
}

#[tokio::test]
async fn without_the_sandbox_no_order_is_made_and_nothing_can_be_confirmed() {
    let (app, token) = setup(TestApp::builder()).await;
    app.fake.push_tool_call(
        "generate_payment",
        json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY"}),
    );
    app.fake.push_content("Payments are not available.");
    let events = app.send(&token, AGENT, None, "I want to pay").await;
    assert!(shape(&events).contains(&"tool_call:generate_payment:failed".to_owned()), "{:?}", shape(&events));
    assert_eq!(app.count("orders").await, 0);
    let r = app.client.post(app.url("/pay/ORD_x/confirm")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let r = app.webhook("msg_1", &webhook_body("ORD_x", "paid", 9900, "CNY")).await;
    assert_eq!(r.status(), 404, "no provider: no webhook route either");
}

/// `parley serve` as an operator starts it, with nothing about payments set: no sandbox, and it
/// says so at start.
#[tokio::test]
async fn plain_serve_has_no_sandbox_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let database_url = fresh_database(dir.path()).await;
    /// Stops the server however the test ends.
    struct Server(std::process::Child);
    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .arg("serve")
        .env_clear()
        .env("PARLEY_ADDR", "127.0.0.1:0")
        .env("PARLEY_DATA_DIR", dir.path())
        .env("DATABASE_URL", &database_url)
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start parley serve");
    let stdout = child.stdout.take().unwrap();
    let _server = Server(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let running = line.contains("Parley is running at");
            seen.push(line);
            if running {
                let _ = tx.send(seen.clone());
            }
        }
    });
    let lines = rx.recv_timeout(std::time::Duration::from_secs(60));
    let outcome = async {
        let lines = lines.expect("the server says it is running");
        let text = lines.join("\n");
        assert!(text.contains("payments are off"), "start-up says the sandbox is off:\n{text}");
        let url = lines.last().unwrap().split("running at ").nth(1).unwrap().trim().to_owned();
        let client = reqwest::Client::new();
        let r = client.post(format!("{url}/pay/ORD_x/confirm")).send().await.unwrap();
        assert_eq!(r.status(), 404, "no sandbox confirm route");
        let r = client.post(format!("{url}/api/v1/payments/webhook")).body("{}").send().await.unwrap();
        assert_eq!(r.status(), 404, "no webhook route");
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), outcome).await.expect("in time");
}

/// Service prices are the owner's: edited in the console's agent form, the next order is made at
/// the new price and currency; a wrong line is refused by field and changes nothing.
#[tokio::test]
async fn the_owner_edits_a_price_in_the_console_and_the_next_order_uses_it() {
    use crate::harness::fixtures::ADMIN;
    use leptos::server_fn::ServerFn;
    use parley_app::console::api::agents as a;
    use parley_app::console::types::AgentForm;

    let (app, token) = setup(TestApp::builder().payments_sandbox().with_users(&[ADMIN])).await;
    let first = pay_turn(&app, &token).await;
    assert_eq!((first.amount_minor, first.currency.as_str()), (9900, "CNY"), "the seeded price of QMAS");

    let mut b = app.signed_in(&ADMIN).await;
    let id = parley_engine::store::agents::by_public_key(app.db(), AGENT).await.unwrap().unwrap().id;
    let (_, body) = b.call(a::Agent::PATH, &[("id", &id)]).await;
    let form: AgentForm = serde_json::from_str(&body).unwrap();
    assert!(
        form.services.lines().any(|l| l.starts_with("QMAS | ") && l.contains("| 99.00 | CNY")),
        "{}",
        form.services
    );

    // A price without its currency: refused on its line, nothing written.
    let typo = form.services.replace("QMAS | 优秀人才入境计划（优才） | 99.00 | CNY", "QMAS | 优才 | 120 | ");
    let (_, body) =
        b.call_json(a::SaveAgent::PATH, json!({ "form": AgentForm { services: typo, ..form.clone() } })).await;
    let saved: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(saved["errors"][0]["field"], "services", "{body}");
    let message = saved["errors"][0]["message"].as_str().unwrap();
    assert!(message.starts_with("Line 2:") && message.contains("needs its currency"), "{body}");

    let edited = form.services.replace("QMAS | 优秀人才入境计划（优才） | 99.00 | CNY", "QMAS | 优才 | 120.50 | HKD");
    assert_ne!(edited, form.services);
    let (_, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": AgentForm { services: edited, ..form } })).await;
    assert!(serde_json::from_str::<Value>(&body).unwrap()["errors"].as_array().unwrap().is_empty(), "{body}");

    // A new conversation's answer: the order is at the owner's new price.
    let token = app.visitor(AGENT).await;
    let second = pay_turn(&app, &token).await;
    assert_eq!((second.amount_minor, second.currency.as_str()), (12050, "HKD"));
    assert_eq!(order(&app, &second.order_id).await.amount_minor, 12050);
}

/// An agent that lists no services sells nothing: the model is offered no category to pay for,
/// a category it makes up is refused, and no order is made.
#[tokio::test]
async fn an_agent_without_services_makes_no_order() {
    let app = TestApp::builder().payments_sandbox().spawn().await;
    let agent = fixtures::agent("plain", fixtures::openai_provider(&app.fake))
        .capabilities(&["payments"])
        .domain(parley_engine::store::agents::Domain::default());
    app.insert_agent(agent).await;
    let token = app.visitor("plain").await;
    app.fake.push_tool_call(
        "generate_payment",
        json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY"}),
    );
    app.fake.push_content("Sorry.");
    let events = app.send(&token, "plain", None, "I want to pay").await;
    assert!(blocks(&events).is_empty(), "no payment block");
    let requests = app.fake.requests();
    let offered = &requests[0]["tools"][0]["function"]["parameters"]["properties"]["category"];
    assert!(offered.get("enum").is_none(), "no codes to offer: {offered}");
    let answer = &tool_results(requests.last().unwrap())[0];
    assert!(answer["error"].as_str().unwrap().contains("no price for category QMAS"), "{answer}");
    assert_eq!(app.count("orders").await, 0);
}
