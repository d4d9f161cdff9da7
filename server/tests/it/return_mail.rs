//! Visitors who left (issue 44, part 2), against a real SMTP server (`aiosmtpd`) for what Parley
//! sends and a real SMTP client (Python's `smtplib`) for what it receives, on SQLite and
//! PostgreSQL: an operator's reply to a visitor who is gone is mailed with a link back to the page
//! they wrote from and a reply address; the link opens that conversation only, and expires; the
//! visitor's mail answer goes into the conversation once; a wrong, used or expired token, or
//! another sender, changes nothing; the agent's answer to a mail goes back by mail; a visitor
//! whose panel is open gets no mail.

use leptos::server_fn::ServerFn;
use parley_app::console::api::conversations as c;
use parley_server::config::MailArgs;
use parley_server::fake_openai::Reply;
use serde_json::{Value, json};

use crate::harness::fixtures::OLIVE;
use crate::harness::*;

const DOMAIN: &str = "in.parley.test";
const PAGE: &str = "https://shop.example/cart?step=2";

fn mail(port: u16) -> MailArgs {
    MailArgs {
        smtp_host: Some("127.0.0.1".into()),
        smtp_port: Some(port),
        smtp_tls: Some("none".into()),
        mail_from: Some("Shop <help@shop.example>".into()),
        return_mail_after_secs: 0,
        inbound_mail_domain: Some(DOMAIN.into()),
        inbound_smtp_addr: Some("127.0.0.1:0".parse().unwrap()),
        ..MailArgs::default()
    }
}

/// The mails to `to` received so far.
fn mails_to(sink: &SmtpSink, to: &str) -> Vec<Value> {
    sink.received().into_iter().filter(|m| m["rcpt_tos"] == json!([to])).collect()
}

/// Waits (20 s at most) for the `n`-th mail to `to`.
async fn nth_mail_to(sink: &SmtpSink, to: &str, n: usize) -> Value {
    for _ in 0..200 {
        if let Some(m) = mails_to(sink, to).get(n - 1) {
            return m.clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("mail #{n} to {to} did not arrive: {:#?}", sink.received());
}

/// The token after `marker` in `text` (`[A-Za-z0-9_-]`).
fn token_after(text: &str, marker: &str) -> String {
    let at = text.find(marker).unwrap_or_else(|| panic!("{marker} in {text}")) + marker.len();
    text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect()
}

async fn texts(app: &TestApp, token: &str, conv: &str) -> Vec<(String, String)> {
    let r = app.get(token, &format!("/api/v1/conversations/{conv}")).await;
    assert_eq!(r.status(), 200);
    let t: Value = r.json().await.unwrap();
    t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap().to_owned(), m["text"].as_str().unwrap().to_owned()))
        .collect()
}

#[tokio::test]
async fn a_reply_reaches_a_visitor_who_left_and_their_mail_answer_comes_back() {
    if !smtp_available("a_reply_reaches_a_visitor_who_left_and_their_mail_answer_comes_back") {
        return;
    }
    let sink = SmtpSink::start().await;
    let port = sink.port;
    let app = TestApp::builder().with_users(&[OLIVE]).config(move |c| c.mail = mail(port)).spawn().await;
    app.agent("shop", &["ticket_escalation"]).await;
    app.agent("other", &[]).await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("Let me find someone.");
    let body = json!({"agent": "shop", "message": "Where is my order 1042?", "page_url": PAGE});
    let r = app.send_raw(&visitor, body).await;
    assert_eq!(r.status(), 200);
    let conv = conversation_id(&read_events(r).await);
    let form = json!({"name": "Ada", "email": "ada@example.com", "message": "Mail me"});
    assert_eq!(app.post(&visitor, &format!("/api/v1/conversations/{conv}/lead"), form).await.status(), 201);

    // Olive answers; the visitor has no panel open: the reply goes by mail.
    let mut olive = app.signed_in(&OLIVE).await;
    assert_eq!(olive.call(c::Claim::PATH, &[("id", &conv)]).await.1, "true");
    let (status, _) = olive.call(c::Reply::PATH, &[("id", &conv), ("text", "It ships on Tuesday.")]).await;
    assert_eq!(status, 200);
    let sent = nth_mail_to(&sink, "ada@example.com", 1).await;
    assert_eq!(sent["subject"], "Agent shop replied to you", "{sent:#?}");
    let text = sent["text"].as_str().unwrap();
    assert!(text.contains("Olive:") && text.contains("It ships on Tuesday."), "{text}");
    assert!(text.contains("https://shop.example/cart?step=2#parley-return=pr_"), "back to the page: {text}");
    let reply_to = sent["reply_to"].as_str().expect("a Reply-To");
    assert!(reply_to.starts_with("reply+pr_") && reply_to.ends_with(&format!("@{DOMAIN}")), "{reply_to}");
    let link = token_after(text, "#parley-return=");

    // The link opens this conversation (a new token standing for its visitor), for this agent.
    let open = |agent: &'static str, token: String| {
        let app = &app;
        async move {
            app.client
                .post(app.url("/api/v1/visitors/return"))
                .json(&json!({"agent": agent, "token": token}))
                .send()
                .await
                .unwrap()
        }
    };
    let r = open("shop", link.clone()).await;
    assert_eq!(r.status(), 200);
    let back: Value = r.json().await.unwrap();
    assert_eq!(back["conversation_id"], conv.as_str());
    let returned = back["token"].as_str().unwrap().to_owned();
    assert!(texts(&app, &returned, &conv).await.iter().any(|(_, t)| t == "It ships on Tuesday."));
    // Another agent's, a changed or an unknown token open nothing and make no visitor.
    let visitors_before = app.count("visitors").await;
    let mut changed = link.clone();
    changed.pop();
    changed.push(if link.ends_with('A') { 'B' } else { 'A' });
    for (agent, token) in [("other", link.clone()), ("shop", changed), ("shop", "pr_nothing".to_owned())] {
        let r = open(agent, token).await;
        assert_eq!(r.status(), 410, "{agent}");
        assert_eq!(r.json::<Value>().await.unwrap()["error"], "link_expired");
    }
    assert_eq!(app.count("visitors").await, visitors_before);
    // Another visitor's token does not reach the conversation.
    let stranger = app.visitor("shop").await;
    assert_eq!(app.get(&stranger, &format!("/api/v1/conversations/{conv}")).await.status(), 404);

    // The answer by mail: a stranger's mail to the address changes nothing and leaves it open.
    let smtp = app.smtp_port();
    let messages = app.count("messages").await;
    let quoted = "Tuesday is fine, thanks!\n\nOn Mon, Olive <help@shop.example> wrote:\n> It ships on Tuesday.\n";
    let r = smtp_send(smtp, "mallory@example.com", reply_to, "Re: shop replied to you", "Send it to me").await;
    assert_eq!((r["refused"].as_i64(), r["at"].as_str()), (Some(550), Some("data")), "{r}");
    assert_eq!(app.count("messages").await, messages);
    // A token that is not one: refused at RCPT.
    let r = smtp_send(smtp, "ada@example.com", &format!("reply+pr_bogus@{DOMAIN}"), "Re", "hi").await;
    assert_eq!((r["refused"].as_i64(), r["at"].as_str()), (Some(550), Some("rcpt")), "{r}");
    // Ada's answer goes in, without the quoted mail; Olive sees it, no model answers it.
    let r = smtp_send(smtp, "Ada <ada@example.com>", reply_to, "Re: shop replied to you", quoted).await;
    assert_eq!(r, json!({"sent": true}));
    let after = texts(&app, &returned, &conv).await;
    assert_eq!(after.last().unwrap(), &("visitor".to_owned(), "Tuesday is fine, thanks!".to_owned()), "{after:?}");
    assert_eq!(app.count("messages").await, messages + 1);
    let (_, detail) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    assert!(detail.contains("Tuesday is fine, thanks!"), "{detail}");
    // The same address again (a used token): refused, nothing added.
    let r = smtp_send(smtp, "ada@example.com", reply_to, "Re: again", "And one more thing").await;
    assert_eq!((r["refused"].as_i64(), r["at"].as_str()), (Some(550), Some("rcpt")), "{r}");
    assert_eq!(app.count("messages").await, messages + 1);

    // Handed back to the agent, the next mail answer is answered by it, and the answer is mailed.
    assert_eq!(olive.call(c::Release::PATH, &[("id", &conv)]).await.0, 200);
    let (_, _) = olive.call(c::Claim::PATH, &[("id", &conv)]).await;
    let (status, _) = olive.call(c::Reply::PATH, &[("id", &conv), ("text", "Anything else?")]).await;
    assert_eq!(status, 200);
    let second = nth_mail_to(&sink, "ada@example.com", 2).await;
    let second_reply_to = second["reply_to"].as_str().unwrap().to_owned();
    assert_ne!(second_reply_to, reply_to, "each mail has its own reply address");
    assert_eq!(olive.call(c::Release::PATH, &[("id", &conv)]).await.0, 200);
    // While an answer is being written the mail cannot go in: 451 (the sending server tries
    // again), the address stays good, and the mail sent again goes in.
    app.fake.push(Reply::Delayed(std::time::Duration::from_secs(4), Box::new(Reply::text("Still looking."))));
    let writing = app.send_raw(&visitor, json!({"agent": "shop", "conversation_id": conv, "message": "Hello?"}));
    let (writing, busy) = tokio::join!(writing, async {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        smtp_send(smtp, "ada@example.com", &second_reply_to, "Re", "Where is the invoice?").await
    });
    assert_eq!((busy["refused"].as_i64(), busy["at"].as_str()), (Some(451), Some("data")), "{busy}");
    assert_eq!(crate::harness::text(&read_events(writing).await), "Still looking.");
    app.fake.push_content("Your invoice is in your account.");
    let r = smtp_send(smtp, "ada@example.com", &second_reply_to, "Re", "Where is the invoice?").await;
    assert_eq!(r, json!({"sent": true}));
    let third = nth_mail_to(&sink, "ada@example.com", 3).await;
    assert!(third["text"].as_str().unwrap().contains("Your invoice is in your account."), "{third:#?}");

    // An expired link opens nothing.
    sqlx::query("UPDATE return_tokens SET expires_at = 0").execute(app.db().writer()).await.unwrap();
    assert_eq!(open("shop", link).await.status(), 410);
    let third_reply_to = third["reply_to"].as_str().unwrap();
    let r = smtp_send(smtp, "ada@example.com", third_reply_to, "Re", "late").await;
    assert_eq!(r["refused"].as_i64(), Some(550), "an expired reply address: {r}");
}

#[tokio::test]
async fn a_visitor_whose_panel_is_open_gets_no_mail() {
    if !smtp_available("a_visitor_whose_panel_is_open_gets_no_mail") {
        return;
    }
    let sink = SmtpSink::start().await;
    let port = sink.port;
    let app = TestApp::builder().with_users(&[OLIVE]).config(move |c| c.mail = mail(port)).spawn().await;
    app.agent("shop", &["ticket_escalation"]).await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("Someone will answer.");
    let conv = conversation_id(&app.send(&visitor, "shop", None, "Is anyone there?").await);
    let form = json!({"name": "Bo", "email": "bo@example.com", "message": "Here"});
    assert_eq!(app.post(&visitor, &format!("/api/v1/conversations/{conv}/lead"), form).await.status(), 201);
    // The panel follows the conversation: Bo is here.
    let stream = app.follow(&visitor, &conv, 0).await;
    assert_eq!(stream.status(), 200);
    let mut olive = app.signed_in(&OLIVE).await;
    assert_eq!(olive.call(c::Claim::PATH, &[("id", &conv)]).await.1, "true");
    assert_eq!(olive.call(c::Reply::PATH, &[("id", &conv), ("text", "Yes, I am.")]).await.0, 200);
    // The job runs every 2 s; a few runs later there is still no mail to Bo.
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    assert!(mails_to(&sink, "bo@example.com").is_empty(), "{:#?}", sink.received());
    drop(stream);
    // The server learns of it at its next write (a keep-alive comment at the latest).
    let mut gone = false;
    for _ in 0..300 {
        let here: i64 = sqlx::query_scalar("SELECT visitor_here FROM conversations WHERE id = $1")
            .bind(&conv)
            .fetch_one(&mut *app.db().read().await.unwrap())
            .await
            .unwrap();
        if here == 0 {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(gone, "the closed stream counts as gone within 30 s");
    // The reply came while Bo was here (the panel showed it): still no mail; a new reply, after
    // they left, is mailed.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(mails_to(&sink, "bo@example.com").is_empty(), "{:#?}", sink.received());
    assert_eq!(olive.call(c::Reply::PATH, &[("id", &conv), ("text", "Still there?")]).await.0, 200);
    let got = nth_mail_to(&sink, "bo@example.com", 1).await;
    let text = got["text"].as_str().unwrap();
    assert!(text.contains("Still there?") && !text.contains("Yes, I am."), "{text}");
    assert!(!text.contains("#parley-return="), "no page known, no link: {text}");
}
