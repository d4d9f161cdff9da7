//! Conversations and leads in the admin console over real HTTP: human takeover (the claim is
//! exclusive, stored, survives a restart, and keeps the model off), the consulting state shown as
//! text, leads updated with checked input and exported; visitor text is inert.

use crate::harness::fixtures::{OLIVE, OSCAR};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{conversations as c, leads};
use parley_protocol::StreamEvent;
use serde_json::{Value, json};

#[tokio::test]
async fn takeover_is_exclusive_stored_and_keeps_the_model_off() {
    let app = TestApp::builder().with_users(&[OLIVE, OSCAR]).spawn().await;
    app.agent("shop", &[]).await;
    let mut olive = app.signed_in(&OLIVE).await;
    let mut oscar = app.signed_in(&OSCAR).await;

    let visitor = app.visitor("shop").await;
    app.fake.push_content("Hello from the bot.");
    let first = app.send(&visitor, "shop", None, "<img src=x onerror=alert(1)> where is my order?").await;
    let conv = conversation_id(&first);
    assert_eq!(app.fake.served(), 1);

    // Two operators claim at once: exactly one wins.
    let args = [("id", conv.as_str())];
    let (r1, r2) = tokio::join!(olive.call(c::Claim::PATH, &args), oscar.call(c::Claim::PATH, &args));
    let mut outcomes = [r1.1.clone(), r2.1.clone()];
    outcomes.sort();
    assert_eq!(outcomes, ["false", "true"], "{r1:?} {r2:?}");
    let (mut holder, mut other) = if r1.1 == "true" { (olive, oscar) } else { (oscar, olive) };
    let (_, body) = other.call(c::Reply::PATH, &[("id", &conv), ("text", "me too")]).await;
    assert!(body.contains("another operator holds this conversation"), "{body}");
    let (_, body) = other.call(c::OperatorTyping::PATH, &[("id", &conv), ("active", "true")]).await;
    assert!(body.contains("claim the conversation first"), "{body}");
    let (status, body) = holder.call(c::OperatorTyping::PATH, &[("id", &conv), ("active", "true")]).await;
    assert_eq!(status, 200, "{body}");

    // The visitor writes: it goes to the person, the model is not called.
    let events = app.send(&visitor, "shop", Some(&conv), "are you a human?").await;
    assert_eq!(shape(&events), ["visitor_message"]);
    assert_eq!(app.fake.served(), 1, "the model stays off while a person holds the conversation");

    // The operator's reply reaches the visitor's stream.
    let after = events.last().unwrap().0;
    let (status, body) = holder.call(c::Reply::PATH, &[("id", &conv), ("text", "Yes, I'm Olive or Oscar.")]).await;
    assert_eq!(status, 200, "{body}");
    let r = app.get(&visitor, &format!("/api/v1/conversations/{conv}/events?after={after}")).await;
    Live::unchecked(r)
        .until(|e| {
            e.iter().any(|(_, e)| matches!(e, StreamEvent::OperatorMessage(m) if m.text.contains("I'm Olive or Oscar")))
        })
        .await;

    // The console's transcript shows who said what; visitor HTML stays text in the page.
    let (_, body) = holder.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["item"]["status"], "human");
    assert_eq!(detail["mine"], true);
    let roles: Vec<&str> = detail["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["visitor", "assistant", "visitor", "operator"]);
    let (status, html) = holder.page(&format!("/admin/conversations/{conv}")).await;
    assert_eq!(status, 200);
    assert!(!html.contains("<img src=x onerror"), "visitor text must be escaped");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "the text is shown");

    // A restart keeps the model off: a second server on the same database.
    let second = app.restart().await;
    let r = app
        .client
        .post(format!("{}/api/v1/chat", second.url()))
        .bearer_auth(&visitor)
        .json(&json!({"agent": "shop", "conversation_id": conv, "message": "still there?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(shape(&read_events(r).await), ["visitor_message"]);
    assert_eq!(app.fake.served(), 1, "after a restart too");

    // Released: the bot answers again.
    let (status, body) = holder.call(c::Release::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    app.fake.push_content("The bot is back.");
    let events = app.send(&visitor, "shop", Some(&conv), "thanks").await;
    assert!(text(&events).contains("The bot is back."), "{events:?}");
    assert_eq!(app.fake.served(), 2);

    // Closed: nobody can claim it any more.
    let (status, _) = other.call(c::CloseConversation::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200);
    assert_eq!(holder.call(c::Claim::PATH, &[("id", &conv)]).await.1, "false");
    let (_, body) = holder.call(c::Conversations::PATH, &[("status", "closed"), ("page", "1")]).await;
    assert!(body.contains(&conv), "{body}");
}

/// A claim that lands after a send read the conversation's status (the bot's) and before it took
/// the slot: the message goes to the person, the model is not called.
#[tokio::test]
async fn a_claim_between_a_sends_status_read_and_its_slot_keeps_the_model_off() {
    let app = TestApp::builder().with_users(&[OLIVE]).spawn().await;
    app.agent("shop", &[]).await;
    let mut olive = app.signed_in(&OLIVE).await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("Hello from the bot.");
    let first = app.send(&visitor, "shop", None, "hello").await;
    let conv = conversation_id(&first);
    assert_eq!(app.fake.served(), 1);

    let (reached, go) = app.engine().pause_next_send();
    app.fake.push_content("The bot must not say this.");
    let claim = async {
        assert_eq!(reached.await.expect("the send paused"), conv, "paused after reading the status");
        let (status, body) = olive.call(c::Claim::PATH, &[("id", conv.as_str())]).await;
        assert_eq!((status, body.as_str()), (200, "true"));
        go.send(()).expect("the send waits");
    };
    let (events, ()) = tokio::join!(app.send(&visitor, "shop", Some(&conv), "is anyone there?"), claim);
    assert_eq!(shape(&events), ["visitor_message"], "{events:?}");
    app.engine().flush().await;
    assert_eq!(app.fake.served(), 1, "the model is not called once a person holds the conversation");
    let (_, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    let roles: Vec<&str> = detail["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["visitor", "assistant", "visitor"], "stored for the person, no answer");
}

#[tokio::test]
async fn the_conversation_shows_the_consulting_state_as_text() {
    use parley_engine::store::conversations::set_consulting_state;
    let app = TestApp::builder().with_users(&[OLIVE]).spawn().await;
    app.agent("shop", &[]).await;
    let mut olive = app.signed_in(&OLIVE).await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("Hello.");
    let conv = conversation_id(&app.send(&visitor, "shop", None, "hi").await);

    let (status, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    assert!(serde_json::from_str::<Value>(&body).unwrap()["consulting"].is_null(), "no state yet: {body}");
    let (_, html) = olive.page(&format!("/admin/conversations/{conv}")).await;
    assert!(!html.contains("Consulting state"), "no card without a state");

    let state = json!({
        "stage": "info_collection",
        "collected": {"age": 34, "education": "<b>master</b>", "languages": ["en", "zh"], "nothing": null},
    });
    set_consulting_state(app.db(), &conv, &state).await.unwrap();
    let (_, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        detail["consulting"],
        json!({
            "stage": "info_collection",
            "facts": [["age", "34"], ["education", "<b>master</b>"], ["languages", "[\"en\",\"zh\"]"]],
            "note": null,
        })
    );
    let (status, html) = olive.page(&format!("/admin/conversations/{conv}")).await;
    assert_eq!(status, 200);
    assert!(html.contains("Consulting state") && html.contains("info collection"), "the card is rendered");
    assert!(!html.contains("<b>master</b>"), "values are text, never HTML");
    assert!(html.contains("&lt;b&gt;master&lt;/b&gt;"), "the value is shown");

    // A stage the console does not know is not shown; the facts still are.
    set_consulting_state(app.db(), &conv, &json!({"stage": "<script>", "collected": {"goal": "QMAS"}})).await.unwrap();
    let (_, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["consulting"], json!({"stage": null, "facts": [["goal", "QMAS"]], "note": null}));
}

#[tokio::test]
async fn leads_are_updated_with_checked_input_and_exported() {
    let app = TestApp::builder().with_users(&[OLIVE]).spawn().await;
    app.agent("shop", &["ticket_escalation"]).await;
    let mut olive = app.signed_in(&OLIVE).await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("ok");
    let conv = conversation_id(&app.send(&visitor, "shop", None, "call me").await);
    let r = app
        .post(
            &visitor,
            &format!("/api/v1/conversations/{conv}/lead"),
            json!({"name": "=HYPERLINK(\"x\")", "email": "v@example.com", "message": "+1 please call"}),
        )
        .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let (_, body) = olive.call(leads::Leads::PATH, &[("page", "1")]).await;
    let page: Value = serde_json::from_str(&body).unwrap();
    let id = page["items"][0]["id"].as_str().unwrap().to_owned();
    let (status, body) = olive.call(leads::UpdateLead::PATH, &[("id", &id), ("status", "lost"), ("notes", "x")]).await;
    assert!(status != 200 && body.contains("unknown status"), "{body}");
    let (status, _) =
        olive.call(leads::UpdateLead::PATH, &[("id", &id), ("status", "contacted"), ("notes", "called back")]).await;
    assert_eq!(status, 200);
    let (_, body) = olive.call(leads::Leads::PATH, &[("status", "contacted"), ("page", "1")]).await;
    assert!(body.contains("called back"), "{body}");
    let (status, csv) = olive.page("/admin/leads.csv").await;
    assert_eq!(status, 200);
    assert!(csv.contains("\"'=HYPERLINK(\"\"x\"\")\""), "formula cells are escaped: {csv}");
    assert!(csv.contains("'+1 please call"), "{csv}");
}
