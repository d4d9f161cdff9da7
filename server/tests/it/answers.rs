//! The answer quality loop (issue 17) on SQLite and PostgreSQL: visitors rate answers and closed
//! conversations (stored, shown, sent as webhooks, counted on the dashboard); unanswered
//! questions are grouped; a reply saved as an article is found by `search_knowledge` at once;
//! saved replies per agent.

use leptos::server_fn::ServerFn;
use parley_app::console::api::{answers as ans, conversations as c, dashboard};
use parley_protocol::Transcript;
use serde_json::{Value, json};

use crate::harness::fixtures::{ADMIN, OPERATOR};
use crate::harness::*;

async fn rate(app: &TestApp, visitor: &str, conv: &str, body: Value) -> (u16, Value) {
    let r = app.post(visitor, &format!("/api/v1/conversations/{conv}/rating"), body).await;
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn transcript(app: &TestApp, visitor: &str, conv: &str) -> Transcript {
    app.get(visitor, &format!("/api/v1/conversations/{conv}")).await.json().await.unwrap()
}

#[tokio::test]
async fn visitors_rate_answers_and_closed_conversations_and_the_owner_hears_of_it() {
    let app =
        TestApp::builder().with_users(&[ADMIN, OPERATOR]).config(|c| c.allow_private_endpoints = true).spawn().await;
    let receiver = Receiver::start().await;
    let agent = app.agent("shop", &["ticket_escalation"]).await;
    app.engine()
        .add_webhook(&agent.id, &receiver.url("/hook"), &["answer.rated".into(), "conversation.rated".into()])
        .await
        .unwrap();
    let visitor = app.visitor("shop").await;
    app.fake.push_content("It ships tomorrow.");
    let events = app.send(&visitor, "shop", None, "Where is my parcel?").await;
    let (conv, answer) = (conversation_id(&events), message_id(&events));
    app.engine().flush().await;

    // Wrong ratings are refused with a clear error and store nothing.
    let question_id = transcript(&app, &visitor, &conv).await.messages[0].id.clone();
    let long = "x".repeat(1001);
    for (body, status, says) in [
        (json!({"message_id": answer, "score": 0}), 422, "1 (helpful) or -1"),
        (json!({"message_id": answer, "score": 2}), 422, "1 (helpful) or -1"),
        (json!({"message_id": answer, "score": -1, "comment": long}), 422, "1000 characters"),
        (json!({"message_id": "no-such-message", "score": 1}), 404, "not found"),
        (json!({"message_id": question_id, "score": 1}), 404, "not found"),
        (json!({"score": 5}), 422, "once a person has closed it"),
        (json!({"message_id": answer, "score": 1, "stars": 3}), 422, "stars"),
    ] {
        let (got, error) = rate(&app, &visitor, &conv, body.clone()).await;
        assert_eq!(got, status, "{body}: {error}");
        assert!(error.to_string().contains(says), "{body}: {error}");
    }
    let stranger = app.visitor("shop").await;
    assert_eq!(rate(&app, &stranger, &conv, json!({"message_id": answer, "score": 1})).await.0, 404);
    assert_eq!(app.count("ratings").await, 0);

    // A thumbs down with a comment, then changed to a thumbs up: one rating, the last one.
    let (status, _) =
        rate(&app, &visitor, &conv, json!({"message_id": answer, "score": -1, "comment": " too vague "})).await;
    assert_eq!(status, 200);
    assert_eq!(transcript(&app, &visitor, &conv).await.messages[1].rating, Some(-1));
    assert_eq!(rate(&app, &visitor, &conv, json!({"message_id": answer, "score": 1})).await.0, 200);
    assert_eq!(app.count("ratings").await, 1);
    assert_eq!(transcript(&app, &visitor, &conv).await.messages[1].rating, Some(1));

    // A person closes the conversation; the visitor rates it.
    let mut olive = app.signed_in(&OPERATOR).await;
    assert_eq!(olive.call(c::Claim::PATH, &[("id", &conv)]).await.0, 200);
    assert_eq!(olive.call(c::CloseConversation::PATH, &[("id", &conv)]).await.0, 200);
    assert_eq!(rate(&app, &visitor, &conv, json!({"score": 6})).await.0, 422);
    assert_eq!(rate(&app, &visitor, &conv, json!({"score": 5, "comment": "great help"})).await.0, 200);
    let t = transcript(&app, &visitor, &conv).await;
    assert_eq!(t.rating, Some(5));

    // The owner's endpoint heard each rating.
    let got = receiver.wait_for("/hook", 3).await;
    let bodies: Vec<Value> = got.iter().map(|r| serde_json::from_str(&r.body).unwrap()).collect();
    let down = bodies.iter().find(|b| b["data"]["rating"] == "down").expect("the thumbs down");
    assert_eq!(down["type"], "answer.rated");
    assert_eq!(down["data"]["comment"], "too vague");
    assert_eq!(down["data"]["question"], "Where is my parcel?");
    assert_eq!(down["data"]["answer"], "It ships tomorrow.");
    assert_eq!(down["data"]["message_id"], answer.as_str());
    let closed = bodies.iter().find(|b| b["type"] == "conversation.rated").expect("the conversation's rating");
    assert_eq!((closed["data"]["score"].as_i64(), closed["data"]["comment"].as_str()), (Some(5), Some("great help")));

    // The transcript in the console and the dashboard show them.
    let (_, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["messages"][1]["rating"], json!([1, null]));
    assert_eq!(detail["rating"], json!([5, "great help"]));
    let (_, body) = olive.call(dashboard::DashboardFigures::PATH, &[]).await;
    let figures: Value = serde_json::from_str(&body).unwrap();
    let shop = figures["ratings"].as_array().unwrap().iter().find(|r| r["agent_id"] == agent.id.as_str()).unwrap();
    assert_eq!((shop["up"].as_i64(), shop["down"].as_i64()), (Some(1), Some(0)));
    assert_eq!((shop["conversations"].as_i64(), shop["average"].as_f64()), (Some(1), Some(5.0)));
}

#[tokio::test]
async fn unanswered_questions_are_grouped_with_their_reasons_and_conversations() {
    let app = TestApp::builder().with_users(&[OPERATOR]).spawn().await;
    app.agent("shop", &["knowledge_search", "ticket_escalation"]).await;
    let ask = async |question: &str, search: bool| {
        let visitor = app.visitor("shop").await;
        if search {
            app.fake.push_tool_call("search_knowledge", json!({"query": question}));
        }
        app.fake.push_content("I am not sure.");
        let events = app.send(&visitor, "shop", None, question).await;
        (visitor, conversation_id(&events), message_id(&events))
    };
    // Two visitors ask the same thing; the knowledge has nothing.
    let (_, first, _) = ask("Do you ship to Canada?", true).await;
    let (_, second, _) = ask("do you ship to canada", true).await;
    // One rates the answer not helpful.
    let (v3, third, answer) = ask("What are your opening hours on Sunday?", false).await;
    app.engine().flush().await;
    assert_eq!(rate(&app, &v3, &third, json!({"message_id": answer, "score": -1})).await.0, 200);
    // One asks for a person right after.
    let (v4, fourth, _) = ask("Can I return opened software?", false).await;
    let lead = json!({"name": "Ada", "email": "ada@example.com", "message": "call me"});
    assert_eq!(app.post(&v4, &format!("/api/v1/conversations/{fourth}/lead"), lead).await.status(), 201);
    // A question answered well is not listed.
    ask("Thanks, all good!", false).await;

    let mut olive = app.signed_in(&OPERATOR).await;
    let (status, body) = olive.call(ans::UnansweredQuestions::PATH, &[("agent_id", ""), ("days", "30")]).await;
    assert_eq!(status, 200, "{body}");
    let groups: Vec<Value> = serde_json::from_str(&body).unwrap();
    assert_eq!(groups.len(), 3, "{body}");
    assert_eq!(groups[0]["count"], 2);
    assert!(groups[0]["question"].as_str().unwrap().to_lowercase().contains("ship to canada"));
    assert_eq!(groups[0]["reasons"], json!([["nothing found in the knowledge", 2]]));
    let convs: Vec<&str> = groups[0]["conversations"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(convs.contains(&first.as_str()) && convs.contains(&second.as_str()), "{convs:?}");
    let reasons: Vec<String> = groups.iter().map(|g| g["reasons"][0][0].as_str().unwrap().to_owned()).collect();
    assert!(reasons.contains(&"rated not helpful".to_owned()) && reasons.contains(&"asked for a person".to_owned()));
    assert!(!body.contains("Thanks, all good"));
    let (status, _) = olive.call(ans::UnansweredQuestions::PATH, &[("agent_id", ""), ("days", "0")]).await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn a_reply_saved_as_an_article_is_found_by_search_knowledge_at_once() {
    let app = TestApp::builder().with_users(&[OPERATOR]).spawn().await;
    app.agent("shop", &["knowledge_search"]).await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("I don't know.");
    let conv = conversation_id(&app.send(&visitor, "shop", None, "Do you deliver to Canada?").await);
    let mut olive = app.signed_in(&OPERATOR).await;
    assert_eq!(olive.call(c::Claim::PATH, &[("id", &conv)]).await.0, 200);
    assert_eq!(olive.call(c::Reply::PATH, &[("id", &conv), ("text", "Yes, with DHL.")]).await.0, 200);
    let (_, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    let messages = detail["messages"].as_array().unwrap();
    let reply = messages.iter().find(|m| m["role"] == "operator").unwrap()["id"].as_str().unwrap().to_owned();
    let question = messages[0]["id"].as_str().unwrap().to_owned();

    let articles = app.count("articles").await;
    let save = |message: &str, title: &str| {
        vec![("conversation_id", conv.clone()), ("message_id", message.to_owned()), ("title", title.to_owned())]
    };
    let call = async |olive: &mut Browser, args: Vec<(&str, String)>, body: &str| {
        let mut form: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
        form.push(("body", body));
        olive.call(ans::SaveAsArticle::PATH, &form).await
    };
    let (status, body) = call(&mut olive, save(&question, "Q"), "text").await;
    assert!(status == 422 && body.contains("Only a reply or an answer"), "{body}");
    assert_eq!(call(&mut olive, save("nope", "Q"), "text").await.0, 404);
    let (status, body) = call(&mut olive, save(&reply, " "), "text").await;
    assert!(status == 422 && body.contains("title"), "{body}");
    assert_eq!(app.count("articles").await, articles, "nothing saved by a refusal");

    // Edited before saving; the agent had no knowledge base, so one is made.
    let edited = "We deliver to Canada within 5 working days, with DHL Express.";
    let (status, body) = call(&mut olive, save(&reply, "Delivery to Canada"), edited).await;
    assert_eq!(status, 200, "{body}");

    // The bot finds it at once.
    let other = app.visitor("shop").await;
    app.fake.push_tool_call("search_knowledge", json!({"query": "deliver Canada"}));
    app.fake.push_content("Yes, within 5 working days.");
    app.send(&other, "shop", None, "Delivery to Canada?").await;
    let requests = app.fake.requests();
    let tool_result = requests.last().unwrap()["messages"].to_string();
    assert!(tool_result.contains("DHL Express") && tool_result.contains("Delivery to Canada"), "{tool_result}");
}

#[tokio::test]
async fn saved_replies_are_kept_per_agent_and_offered_in_its_conversations() {
    let app = TestApp::builder().with_users(&[OPERATOR]).spawn().await;
    let shop = app.agent("shop", &[]).await;
    app.agent("other", &[]).await;
    let mut olive = app.signed_in(&OPERATOR).await;
    let (status, body) =
        olive.call(ans::SaveReply::PATH, &[("agent_id", &shop.id), ("shortcut", "Hours!"), ("body", "")]).await;
    assert!(status == 422 && body.contains("Letters, digits") && body.contains("1 to 4000"), "{body}");
    assert_eq!(app.count("saved_replies").await, 0);
    let hours = [("agent_id", shop.id.as_str()), ("shortcut", "/Hours"), ("body", "We are open 9 to 5.")];
    assert_eq!(olive.call(ans::SaveReply::PATH, &hours).await.0, 200);
    let again = [("agent_id", shop.id.as_str()), ("shortcut", "hours"), ("body", "We are open 8 to 6.")];
    assert_eq!(olive.call(ans::SaveReply::PATH, &again).await.0, 200);
    assert_eq!(app.count("saved_replies").await, 1, "the same shortcut is rewritten");

    let in_shop = {
        let v = app.visitor("shop").await;
        app.fake.push_content("Hi");
        conversation_id(&app.send(&v, "shop", None, "hi").await)
    };
    let in_other = {
        let v = app.visitor("other").await;
        app.fake.push_content("Hi");
        conversation_id(&app.send(&v, "other", None, "hi").await)
    };
    let (_, body) = olive.call(ans::ConversationReplies::PATH, &[("conversation_id", &in_shop)]).await;
    let replies: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(replies, json!([{"id": replies[0]["id"], "shortcut": "hours", "body": "We are open 8 to 6."}]));
    let (_, body) = olive.call(ans::ConversationReplies::PATH, &[("conversation_id", &in_other)]).await;
    assert_eq!(body, "[]");
    let id = replies[0]["id"].as_str().unwrap();
    assert_eq!(olive.call(ans::DeleteSavedReply::PATH, &[("id", id)]).await.0, 200);
    assert_eq!(olive.call(ans::DeleteSavedReply::PATH, &[("id", id)]).await.0, 404);
    assert_eq!(app.count("saved_replies").await, 0);
}
