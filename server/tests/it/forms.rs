//! Forms (issue 44, part 3): the model asks for details with the built-in `ask_form`; the
//! visitor's answers are checked against the stored form (forged or wrong submissions are refused
//! and change nothing) and reach the model as the result of a `form_answers` call — through the
//! fake OpenAI upstream over real HTTP (the exact shape) and through the offline demo model.

use crate::harness::fixtures::{agent, openai_provider};
use crate::harness::*;
use parley_engine::store::messages;
use parley_protocol::{Block, Form, StreamEvent};
use serde_json::{Value, json};

fn form_of(events: &[(u64, StreamEvent)]) -> Form {
    events
        .iter()
        .find_map(|(_, e)| match e {
            StreamEvent::Block(b) => match &b.block {
                Block::Form(f) => Some(f.clone()),
                _ => None,
            },
            _ => None,
        })
        .expect("a form block")
}

fn booking() -> Value {
    json!({"title": "Book a call", "fields": [
        {"name": "name", "label": "Your name", "type": "text", "required": true},
        {"name": "email", "label": "Email", "type": "email", "required": true},
        {"name": "topic", "label": "Topic", "type": "select", "options": ["Sales", "Support"], "required": true},
        {"name": "day", "label": "Preferred day", "type": "date"}
    ]})
}

fn submission(agent: &str, conv: &str, form_id: &str, values: &[(&str, &str)]) -> Value {
    let values: Vec<Value> = values.iter().map(|(n, v)| json!({"name": n, "value": v})).collect();
    json!({"agent": agent, "conversation_id": conv, "message": "", "form": {"form_id": form_id, "values": values}})
}

/// The refusal's code and the field it names.
async fn refusal(r: reqwest::Response) -> (u16, String, String) {
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap();
    (
        status,
        body["error"].as_str().unwrap_or_default().to_owned(),
        body["fields"][0]["field"].as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test]
async fn a_forms_answers_reach_the_model_as_a_tool_result_and_forgeries_change_nothing() {
    let (app, token) = spawn_chat("shop", &["forms"]).await;
    app.fake.push_tool_call("ask_form", booking());
    app.fake.push_content("Please fill in the form below.");
    let events = app.send(&token, "shop", None, "Can you call me back?").await;
    let form = form_of(&events);
    let conv = conversation_id(&events);
    // Offered with its schema; the model is told the form's id.
    let requests = app.fake.requests();
    let spec = requests[0]["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == "ask_form").cloned();
    assert_eq!(spec.expect("offered")["function"]["parameters"]["properties"]["fields"]["maxItems"], 8);
    let told: Value =
        serde_json::from_str(requests[1]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap())
            .unwrap();
    assert_eq!((&told["ok"], &told["form_id"]), (&json!(true), &json!(form.form_id)));

    // Forged and wrong submissions: refused with the field named; nothing stored, no model call.
    let stored = messages::list(app.db(), &conv).await.unwrap().len();
    let good = [("name", "Ann"), ("email", "ann@example.com"), ("topic", "Support")];
    for (values, form_id, field) in [
        (&good[..], "not-a-form", "form_id"),
        (&[("name", "Ann"), ("email", "ann@"), ("topic", "Support")][..], form.form_id.as_str(), "email"),
        (&[("name", "Ann"), ("email", "ann@example.com"), ("topic", "Refund")][..], form.form_id.as_str(), "topic"),
        (&[("email", "ann@example.com"), ("topic", "Sales")][..], form.form_id.as_str(), "name"),
        (
            &[("name", "Ann"), ("email", "a@b.co"), ("topic", "Sales"), ("admin", "1")][..],
            form.form_id.as_str(),
            "admin",
        ),
        (
            &[("name", "Ann"), ("email", "a@b.co"), ("topic", "Sales"), ("day", "2026-13-01")][..],
            form.form_id.as_str(),
            "day",
        ),
    ] {
        let r = app.send_raw(&token, submission("shop", &conv, form_id, values)).await;
        assert_eq!(refusal(r).await, (422, "invalid_form".into(), field.into()), "{field}");
    }
    // Another visitor cannot answer this conversation's form.
    let other = app.visitor("shop").await;
    let r = app.send_raw(&other, submission("shop", &conv, &form.form_id, &good)).await;
    assert_eq!(r.status(), 404);
    assert_eq!(messages::list(app.db(), &conv).await.unwrap().len(), stored);
    assert_eq!(app.fake.requests().len(), 2);

    // The good one: the visitor's message is written from the answers; the model reads them as
    // the result of a `form_answers` call.
    app.fake.push_content("Thanks Ann, we will call you.");
    let r = app
        .send_raw(
            &token,
            submission(
                "shop",
                &conv,
                &form.form_id,
                &[("day", ""), ("topic", "Support"), ("email", " ann@example.com "), ("name", "Ann")],
            ),
        )
        .await;
    assert_eq!(r.status(), 200);
    let answer = read_events(r).await;
    assert_eq!(text(&answer), "Thanks Ann, we will call you.");
    let requests = app.fake.requests();
    let sent = requests[2]["messages"].as_array().unwrap();
    let (call, result) = (&sent[sent.len() - 2], &sent[sent.len() - 1]);
    assert_eq!(call["role"], "assistant");
    assert_eq!(call["tool_calls"][0]["function"]["name"], "form_answers");
    let call_args: Value =
        serde_json::from_str(call["tool_calls"][0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(call_args, json!({"form_id": form.form_id}));
    assert_eq!(result["role"], "tool");
    assert_eq!(result["tool_call_id"], call["tool_calls"][0]["id"]);
    let values: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        values,
        json!({"form_id": form.form_id, "submitted": true,
               "values": {"name": "Ann", "email": "ann@example.com", "topic": "Support"}})
    );
    assert!(
        !sent
            .iter()
            .any(|m| m["role"] == "user" && m["content"].as_str().is_some_and(|c| c.contains("ann@example.com"))),
        "the answers never go as the visitor's free text"
    );
    let all = messages::list(app.db(), &conv).await.unwrap();
    let visitor = &all[all.len() - 2];
    assert_eq!(visitor.content, "Your name: Ann\nEmail: ann@example.com\nTopic: Support");
    assert!(
        matches!(visitor.blocks.as_slice(), [Block::FormAnswers(a)] if a.form_id == form.form_id && a.answers.len() == 3)
    );

    // Answered once.
    let r = app.send_raw(&token, submission("shop", &conv, &form.form_id, &good)).await;
    assert_eq!(refusal(r).await, (422, "invalid_form".into(), "form_id".into()));

    // Later turns still read the answers as the tool result, in their place.
    app.fake.push_content("Anything else?");
    app.send(&token, "shop", Some(&conv), "One more question").await;
    let requests = app.fake.requests();
    let later = requests[3]["messages"].as_array().unwrap();
    assert!(later.iter().any(|m| m["role"] == "tool" && m["content"].as_str().unwrap().contains("\"submitted\":true")));
    assert_eq!(later.last().unwrap()["content"], "One more question");
}

#[tokio::test]
async fn a_tool_cannot_show_a_bad_form() {
    let (app, token) = spawn_chat("shop", &["forms"]).await;
    app.fake.push_tool_call("ask_form", json!({"fields": [{"name": "size", "label": "Size", "type": "select"}]}));
    app.fake.push_content("Sorry.");
    let events = app.send(&token, "shop", None, "Form please").await;
    assert!(!events.iter().any(|(_, e)| matches!(e, StreamEvent::Block(_))));
    let requests = app.fake.requests();
    let last = requests[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(last["content"].as_str().unwrap().contains("select has 1 to 10 options"), "{last}");
}

#[tokio::test]
async fn the_demo_model_books_a_call_with_a_form() {
    let app = spawn_app().await;
    let key = parley_engine::seed::HELP_AGENT_KEY;
    let token = app.visitor(key).await;
    let events =
        read_events(app.send_raw(&token, json!({"agent": key, "message": "Can you book a call for me?"})).await).await;
    let form = form_of(&events);
    assert_eq!(form.fields.len(), 4);
    assert!(text(&events).contains("fill in the form"), "{}", text(&events));
    let conv = conversation_id(&events);
    let r = app
        .send_raw(
            &token,
            submission(
                key,
                &conv,
                &form.form_id,
                &[("name", "Ann"), ("email", "ann@example.com"), ("topic", "Sales"), ("day", "2027-01-15")],
            ),
        )
        .await;
    assert_eq!(r.status(), 200);
    let answer = text(&read_events(r).await);
    assert!(answer.contains("Thank you! I have your details") && answer.contains("day: 2027-01-15"), "{answer}");
}

#[tokio::test]
async fn an_agents_pre_chat_form_comes_before_the_first_message_and_reaches_the_model_as_a_tool_result() {
    use parley_protocol::{Ask, Prechat};
    let app = spawn_app().await;
    let prechat =
        Prechat { title: "Before we start".into(), name: Ask::Required, email: Ask::Optional, phone: Ask::Off };
    let stored = app.insert_agent(agent("pre", openai_provider(&app.fake)).capabilities(&[]).prechat(prechat)).await;
    // The panel is told the form (and may draw forms for it).
    let config = parley_engine::public_config(app.engine(), &stored);
    let form = config.prechat.expect("a pre-chat form");
    assert_eq!((form.form_id.as_str(), form.title.as_str()), ("prechat", "Before we start"));
    let fields: Vec<(&str, bool)> = form.fields.iter().map(|f| (f.name.as_str(), f.required)).collect();
    assert_eq!(fields, [("name", true), ("email", false)]);
    assert!(config.capabilities.iter().any(|c| c == "forms"));

    let token = app.visitor("pre").await;
    // A first message without it, or with it wrong: refused, nothing stored.
    let r = app.send_raw(&token, json!({"agent": "pre", "message": "Hello"})).await;
    assert_eq!(r.status(), 422);
    assert_eq!(r.json::<Value>().await.unwrap()["error"], "prechat_required");
    let answer = |values: &[(&str, &str)]| {
        let values: Vec<Value> = values.iter().map(|(n, v)| json!({"name": n, "value": v})).collect();
        json!({"agent": "pre", "message": "", "form": {"form_id": "prechat", "values": values}})
    };
    let r = app.send_raw(&token, answer(&[("email", "ann@example.com")])).await;
    assert_eq!(refusal(r).await, (422, "invalid_form".into(), "name".into()));
    let r = app.send_raw(&token, answer(&[("name", "Ann"), ("phone", "123456")])).await;
    assert_eq!(refusal(r).await, (422, "invalid_form".into(), "phone".into()));
    assert_eq!(app.count("conversations").await, 0);
    assert!(app.fake.requests().is_empty());

    // Filled in: the conversation starts; the model reads the answers as a tool result.
    app.fake.push_content("Hello Ann, how can I help?");
    let r = app.send_raw(&token, answer(&[("name", " Ann "), ("email", "ann@example.com")])).await;
    assert_eq!(r.status(), 200);
    let events = read_events(r).await;
    assert_eq!(text(&events), "Hello Ann, how can I help?");
    let conv = conversation_id(&events);
    let sent = app.fake.requests()[0]["messages"].as_array().unwrap().clone();
    assert!(!sent.iter().any(|m| m["role"] == "user"), "no free text: {sent:?}");
    let result: Value = serde_json::from_str(sent.last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        result,
        json!({"form_id": "prechat", "submitted": true, "values": {"name": "Ann", "email": "ann@example.com"}})
    );
    let all = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(all[0].content, "Name: Ann\nEmail: ann@example.com");

    // Then messages go as usual; the pre-chat form is not answered again in a conversation.
    app.fake.push_content("Sure.");
    assert_eq!(text(&app.send(&token, "pre", Some(&conv), "Where is my order?").await), "Sure.");
    let mut again = answer(&[("name", "Bob")]);
    again["conversation_id"] = json!(conv);
    assert_eq!(refusal(app.send_raw(&token, again).await).await, (422, "invalid_form".into(), "form_id".into()));

    // The address given is where replies go once the visitor has left.
    let visitor: String = sqlx::query_scalar("SELECT visitor_id FROM conversations WHERE id = $1")
        .bind(&conv)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert_eq!(messages::latest_form_email(app.db(), &visitor).await.unwrap().as_deref(), Some("ann@example.com"));
}
