//! Email (issue 17) against a real SMTP server (`aiosmtpd`) started by the test, on SQLite and
//! PostgreSQL: operators get the notifications they chose, in plain text and HTML, with a link
//! to the conversation; a visitor whose address is known gets the transcript (a few an hour);
//! mail waits in the outbox while the SMTP server is down and goes out when it is back.

use leptos::server_fn::ServerFn;
use parley_app::console::api::hours as h;
use parley_engine::engine::clock::ManualClock;
use parley_server::config::MailArgs;
use serde_json::{Value, json};

use crate::harness::fixtures::{ADMIN, OPERATOR};
use crate::harness::*;

fn smtp(port: u16) -> MailArgs {
    MailArgs {
        smtp_host: Some("127.0.0.1".into()),
        smtp_port: Some(port),
        smtp_tls: Some("none".into()),
        mail_from: Some("Parley <parley@example.com>".into()),
        ..MailArgs::default()
    }
}

/// A conversation with a lead from `email`; the conversation's id and the visitor.
async fn lead(app: &TestApp, email: &str) -> (String, String) {
    let visitor = app.visitor("shop").await;
    app.fake.push_content("We ship worldwide.");
    let conv = conversation_id(&app.send(&visitor, "shop", None, "Do you ship to Peru?").await);
    let form = json!({"name": "Ada <Lovelace>", "email": email, "message": "Call me after 5"});
    assert_eq!(app.post(&visitor, &format!("/api/v1/conversations/{conv}/lead"), form).await.status(), 201);
    (conv, visitor)
}

#[tokio::test]
async fn operators_get_what_they_chose_and_visitors_their_transcript() {
    if !smtp_available("operators_get_what_they_chose_and_visitors_their_transcript") {
        return;
    }
    let sink = SmtpSink::start().await;
    let port = sink.port;
    let app = TestApp::builder()
        .with_users(&[ADMIN, OPERATOR])
        .payments_sandbox()
        .config(move |c| c.mail = smtp(port))
        .spawn()
        .await;
    app.agent("shop", &["ticket_escalation", "payments"]).await;
    let mut olive = app.signed_in(&OPERATOR).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let (status, body) = olive.call(h::SaveNotifications::PATH, &[("events", "lead,spam")]).await;
    assert!(status == 422 && body.contains("unknown notification `spam`"), "{body}");
    assert_eq!(olive.call(h::SaveNotifications::PATH, &[("events", "waiting_human,lead")]).await.0, 200);
    assert_eq!(admin.call(h::SaveNotifications::PATH, &[("events", "order_paid,daily_summary")]).await.0, 200);
    let (_, body) = olive.call(h::MyNotifications::PATH, &[]).await;
    let mine: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((mine["mail_enabled"].as_bool(), &mine["events"]), (Some(true), &json!(["waiting_human", "lead"])));

    let (conv, visitor) = lead(&app, "ada@example.com").await;
    let got = sink.wait_for(2).await;
    assert!(got.iter().all(|m| m["rcpt_tos"] == json!([OPERATOR.email])), "only Olive asked: {got:#?}");
    let new_lead = got.iter().find(|m| m["subject"].as_str().unwrap().contains("New lead")).expect("the lead mail");
    assert_eq!(new_lead["from"], "Parley <parley@example.com>");
    assert_eq!(new_lead["multipart"], "multipart/alternative");
    let text = new_lead["text"].as_str().unwrap();
    assert!(text.contains("Email: ada@example.com") && text.contains("Call me after 5"), "{text}");
    let link = format!("{}/admin/conversations/{conv}", app.url(""));
    assert!(text.contains(&link), "the console's own address: {text}");
    let html = new_lead["html"].as_str().unwrap();
    assert!(html.contains("Ada &lt;Lovelace&gt;") && html.contains(&format!("href=\"{link}\"")), "{html}");
    assert!(got.iter().any(|m| m["subject"].as_str().unwrap().contains("waiting for a person")), "{got:#?}");

    // A second lead in the same conversation: Olive already heard of this one (batched).
    let again = json!({"name": "Ada", "email": "ada@example.com", "message": "Still waiting"});
    assert_eq!(app.post(&visitor, &format!("/api/v1/conversations/{conv}/lead"), again).await.status(), 201);
    assert_eq!(app.count("leads").await, 2);
    let lead_mails: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mail_outbox WHERE kind = 'lead'")
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap();
    assert_eq!(lead_mails, 1, "one lead mail per conversation per interval");

    // The visitor asks for the transcript: the address they typed gets a code first, and
    // nothing of the conversation.
    let path = format!("/api/v1/conversations/{conv}/transcript-email");
    let r = app.post(&visitor, &path, json!(null)).await;
    assert_eq!(r.status(), 202);
    assert_eq!(r.json::<Value>().await.unwrap()["code_sent_to"], "a***@example.com");
    let got = sink.wait_for(3).await;
    let code_mail = got.iter().find(|m| m["rcpt_tos"] == json!(["ada@example.com"])).expect("the code");
    let text = code_mail["text"].as_str().unwrap();
    assert!(!text.contains("Peru") && !text.contains("Lovelace"), "nothing the visitor typed: {text}");
    let code: String = code_mail["subject"].as_str().unwrap().chars().filter(char::is_ascii_digit).collect();
    assert_eq!(code.len(), 6, "{code_mail:#?}");
    assert!(text.contains(&code));
    // A wrong code sends nothing; the right one confirms the address and sends the transcript.
    let wrong = if code == "000000" { "000001" } else { "000000" };
    let r = app.post(&visitor, &path, json!({ "code": wrong })).await;
    assert_eq!(r.status(), 422);
    assert!(r.text().await.unwrap().contains("wrong or has expired"));
    let r = app.post(&visitor, &path, json!({ "code": code })).await;
    assert_eq!(r.status(), 202);
    assert_eq!(r.json::<Value>().await.unwrap()["sent_to"], "a***@example.com");
    let got = sink.wait_for(4).await;
    let transcript = got
        .iter()
        .find(|m| {
            m["rcpt_tos"] == json!(["ada@example.com"])
                && m["subject"].as_str().unwrap().starts_with("Your conversation")
        })
        .expect("the transcript");
    let text = transcript["text"].as_str().unwrap();
    assert!(text.contains("Do you ship to Peru?") && text.contains("We ship worldwide."), "{text}");
    // Confirmed once: the next goes straight out; a few an hour to one address, codes included.
    let r = app.post(&visitor, &path, json!(null)).await;
    assert_eq!(r.status(), 202);
    assert_eq!(r.json::<Value>().await.unwrap()["sent_to"], "a***@example.com");
    let r = app.post(&visitor, &path, json!(null)).await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    // Nobody to write to: a visitor who left no address.
    let stranger = app.visitor("shop").await;
    app.fake.push_content("Hello.");
    let other = conversation_id(&app.send(&stranger, "shop", None, "hi").await);
    let r = app.post(&stranger, &format!("/api/v1/conversations/{other}/transcript-email"), json!(null)).await;
    assert_eq!(r.status(), 422);
    assert!(r.text().await.unwrap().contains("no email address"));
    // Another visitor's conversation is not found.
    assert_eq!(app.post(&stranger, &path, json!(null)).await.status(), 404);

    // An order paid mails the administrator, who also gets the daily summary.
    app.fake
        .push_tool_call(
            "generate_payment",
            json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY"}),
        )
        .push_content("Please pay.");
    app.send(&visitor, "shop", Some(&conv), "I want to pay").await;
    let order: (String,) = sqlx::query_as("SELECT id FROM orders").fetch_one(app.db().pool()).await.unwrap();
    assert!(app.engine().order_paid(&order.0).await.unwrap());
    let arrived = async |what: &str| -> Value {
        let mut found = Value::Null;
        within(15, what, async || {
            found = sink
                .received()
                .into_iter()
                .find(|m| m["subject"].as_str().unwrap_or_default().contains(what))
                .unwrap_or(Value::Null);
            !found.is_null()
        })
        .await;
        found
    };
    let paid = arrived("Order paid").await;
    assert_eq!(paid["rcpt_tos"], json!([ADMIN.email]));
    assert_eq!(app.engine().send_daily_summary().await.unwrap(), 1, "one person asked for it");
    let summary = arrived("Parley: the last 24 hours").await;
    assert_eq!(summary["rcpt_tos"], json!([ADMIN.email]));
    let text = summary["text"].as_str().unwrap();
    assert!(text.contains("2 conversations, 2 leads, 1 waiting for a person, 1 orders paid"), "{text}");
}

#[tokio::test]
async fn mail_waits_while_the_smtp_server_is_down_and_goes_out_when_it_is_back() {
    if !smtp_available("mail_waits_while_the_smtp_server_is_down_and_goes_out_when_it_is_back") {
        return;
    }
    let port = free_port();
    let clock = ManualClock::new();
    let app = TestApp::builder()
        .clock(clock.clone())
        .with_users(&[OPERATOR])
        .config(move |c| c.mail = smtp(port))
        .spawn()
        .await;
    app.agent("shop", &["ticket_escalation"]).await;
    let mut olive = app.signed_in(&OPERATOR).await;
    assert_eq!(olive.call(h::SaveNotifications::PATH, &[("events", "lead")]).await.0, 200);
    lead(&app, "ada@example.com").await;
    // Nothing listens: the attempt fails and the mail waits.
    let mut row: (String, i64, Option<String>) = Default::default();
    within(10, "the first attempt is recorded", async || {
        row = sqlx::query_as("SELECT status, attempts, last_error FROM mail_outbox")
            .fetch_one(&mut *app.db().read().await.unwrap())
            .await
            .unwrap();
        row.1 == 1
    })
    .await;
    assert_eq!(row.0, "pending", "{row:?}");
    assert!(row.2.is_some());
    // The server is back; the retry is due 5 s later.
    let sink = SmtpSink::start_on(port).await;
    clock.advance_ms(5_000);
    let got = sink.wait_for(1).await;
    assert!(got[0]["subject"].as_str().unwrap().contains("New lead"));
    assert_eq!(app.count("mail_outbox").await, 1, "sent once");
}

#[tokio::test]
async fn transcript_mail_keeps_to_its_daily_limits_per_visitor_address_and_agent() {
    if !smtp_available("transcript_mail_keeps_to_its_daily_limits_per_visitor_address_and_agent") {
        return;
    }
    let sink = SmtpSink::start().await;
    let port = sink.port;
    let app = TestApp::builder()
        .config(move |c| {
            c.mail = MailArgs {
                transcripts_per_visitor_per_day: 2,
                transcripts_per_ip_per_day: 3,
                transcripts_per_agent_per_day: 4,
                ..smtp(port)
            };
            c.trusted_proxies = "127.0.0.1".into();
        })
        .spawn()
        .await;
    app.agent("shop", &["ticket_escalation"]).await;
    let ask = async |visitor: &str, conv: &str, ip: &str, body: Value| {
        app.client
            .post(app.url(&format!("/api/v1/conversations/{conv}/transcript-email")))
            .bearer_auth(visitor)
            .header("x-forwarded-for", ip)
            .json(&body)
            .send()
            .await
            .unwrap()
    };
    let code_of = async |n: usize, to: &str| -> String {
        let got = sink.wait_for(n).await;
        let m = got.iter().rev().find(|m| m["rcpt_tos"] == json!([to])).expect("a code");
        m["subject"].as_str().unwrap().chars().filter(char::is_ascii_digit).collect()
    };
    // One visitor: a code and a transcript, then their day is used up.
    let (conv, ada) = lead(&app, "ada@example.com").await;
    assert_eq!(ask(&ada, &conv, "198.51.100.1", json!(null)).await.status(), 202);
    let code = code_of(1, "ada@example.com").await;
    assert_eq!(ask(&ada, &conv, "198.51.100.1", json!({ "code": code })).await.status(), 202);
    assert_eq!(ask(&ada, &conv, "198.51.100.1", json!(null)).await.status(), 429, "two a day per visitor");
    // Another visitor from the same address: one more, then the address's day is used up.
    let (conv_b, bob) = lead(&app, "bob@example.com").await;
    assert_eq!(ask(&bob, &conv_b, "198.51.100.1", json!(null)).await.status(), 202);
    assert_eq!(ask(&bob, &conv_b, "198.51.100.1", json!(null)).await.status(), 429, "three a day per address");
    // From elsewhere: the agent's fourth, then the agent's day is used up for everyone.
    let (conv_c, cy) = lead(&app, "cy@example.com").await;
    assert_eq!(ask(&cy, &conv_c, "203.0.113.7", json!(null)).await.status(), 202);
    let (conv_d, di) = lead(&app, "di@example.com").await;
    let r = ask(&di, &conv_d, "192.0.2.9", json!(null)).await;
    assert_eq!(r.status(), 429, "four a day per agent");
    assert!(r.text().await.unwrap().contains("too many"));
    let sent: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mail_outbox")
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap();
    assert_eq!(sent, 4, "Ada's code and transcript, Bob's and Cy's codes");
}

#[tokio::test]
async fn without_smtp_settings_nothing_is_offered() {
    let app = TestApp::builder().with_users(&[OPERATOR]).spawn().await;
    app.agent("shop", &["ticket_escalation"]).await;
    let mut olive = app.signed_in(&OPERATOR).await;
    let (status, body) = olive.call(h::SaveNotifications::PATH, &[("events", "lead")]).await;
    assert!(status == 409 && body.contains("not set up"), "{body}");
    let config: Value = reqwest::get(app.url("/api/v1/agents/shop/config")).await.unwrap().json().await.unwrap();
    assert_eq!(config["mail_transcripts"], false);
    let (conv, visitor) = lead(&app, "ada@example.com").await;
    let r = app.post(&visitor, &format!("/api/v1/conversations/{conv}/transcript-email"), json!(null)).await;
    assert_eq!(r.status(), 503);
    assert_eq!(app.count("mail_outbox").await, 0);
}
