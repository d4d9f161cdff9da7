//! Owner-defined tools (issue 18): an administrator defines a tool in the console, and Parley
//! calls the owner's endpoint — here a real HTTP server started by the test — with the model's
//! checked arguments, the sealed headers, a timeout and a size cap; private addresses are refused
//! unless the setting allows them.

use crate::harness::fixtures::{ADMIN, agent, openai_provider};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::http_tools as t;
use parley_app::console::types::{HttpToolForm, Saved};
use parley_protocol::{Block, QuickReplies, StreamEvent, ToolCallStatus};
use parley_server::fake_openai::Reply;
use serde_json::{Value, json};

const SCHEMA: &str = r#"{"type":"object","properties":{"order_id":{"type":"string","pattern":"^[A-Z]-[0-9]+$"},"verbose":{"type":"boolean"}},"required":["order_id"],"additionalProperties":false}"#;

fn form(name: &str, method: &str, url: &str) -> HttpToolForm {
    HttpToolForm {
        id: None,
        name: name.into(),
        description: format!("{name}: a tool of the Acme shop."),
        capability: "orders".into(),
        parameters: SCHEMA.into(),
        method: method.into(),
        url: url.into(),
        headers: String::new(),
        saved_headers: vec![],
        timeout_ms: String::new(),
    }
}

async fn save(admin: &mut Browser, form: &HttpToolForm) -> Saved {
    let (status, body) = admin.call_json(t::SaveHttpTool::PATH, json!({ "form": form })).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// The tool named `name` among those offered in an upstream request, if any.
fn offered<'a>(request: &'a Value, name: &str) -> Option<&'a Value> {
    request["tools"].as_array()?.iter().find(|t| t["function"]["name"] == name)
}

#[tokio::test]
async fn an_owner_defines_a_tool_and_the_model_calls_their_endpoint() {
    let receiver = Receiver::start().await;
    let app = TestApp::builder().with_users(&[ADMIN]).config(|c| c.allow_private_endpoints = true).spawn().await;
    app.insert_agent(agent("shop", openai_provider(&app.fake)).capabilities(&["orders"])).await;
    let mut admin = app.signed_in(&ADMIN).await;

    // Bad tools are refused field by field and nothing is stored.
    let good = HttpToolForm {
        headers: "Authorization: Bearer tool-secret-4242\nX-Shop: acme".into(),
        ..form("order_status", "GET", &receiver.url("/orders/{order_id}"))
    };
    let bad: Vec<(HttpToolForm, &str)> = vec![
        (HttpToolForm { name: "order status".into(), ..good.clone() }, "name"),
        (HttpToolForm { name: "search_knowledge".into(), ..good.clone() }, "name"),
        (HttpToolForm { parameters: "{\"type\": \"array\"}".into(), ..good.clone() }, "parameters"),
        (HttpToolForm { url: "ftp://127.0.0.1/orders".into(), ..good.clone() }, "url"),
        (HttpToolForm { url: receiver.url("/orders/{missing}"), ..good.clone() }, "url"),
        (HttpToolForm { headers: "Host: elsewhere".into(), ..good.clone() }, "headers"),
        (HttpToolForm { timeout_ms: "5".into(), ..good.clone() }, "timeout_ms"),
    ];
    for (form, field) in bad {
        let saved = save(&mut admin, &form).await;
        assert_eq!(saved.id, None);
        assert_eq!(saved.errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(), vec![field], "{saved:?}");
    }
    assert_eq!(app.count("http_tools").await, 0);

    let saved = save(&mut admin, &good).await;
    let id = saved.id.expect("saved");
    let again = save(&mut admin, &good).await;
    assert_eq!(again.errors[0].field, "name", "a name is taken once: {again:?}");
    // The header values are sealed at rest and never sent back to the browser.
    let stored: String = sqlx::query_scalar("SELECT headers FROM http_tools")
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap();
    assert!(stored.starts_with("enc:v2:") && !stored.contains("tool-secret"), "{stored}");
    let (status, body) = admin.call(t::HttpTool::PATH, &[("id", &id)]).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("tool-secret") && body.contains("Authorization: ••••4242"), "{body}");
    let (_, body) = admin.call(t::HttpTools::PATH, &[]).await;
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list[0]["header_names"], json!(["Authorization", "X-Shop"]));
    assert_eq!(list[0]["agents"], json!(["shop"]));

    // The model is offered the tool and calls it; the endpoint gets the arguments and headers.
    app.fake.push_tool_call("order_status", json!({"order_id": "A-1042", "verbose": true}));
    app.fake.push_content("Your order A-1042 has shipped.");
    let token = app.visitor("shop").await;
    let events = app.send(&token, "shop", None, "Where is my order A-1042?").await;
    let requests = app.fake.requests();
    let tool = offered(&requests[0], "order_status").expect("offered");
    assert_eq!(tool["function"]["parameters"]["required"], json!(["order_id"]));
    let seen = receiver.received();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!((seen[0].method.as_str(), seen[0].uri.as_str()), ("GET", "/orders/A-1042?verbose=true"));
    assert_eq!(seen[0].headers["authorization"], "Bearer tool-secret-4242");
    assert_eq!(seen[0].headers["x-shop"], "acme");
    assert_eq!(seen[0].headers["x-parley-agent"], "shop");
    assert_eq!(seen[0].headers["x-parley-conversation"], conversation_id(&events));
    let result = tool_results(&requests[1]).pop().expect("the tool's result");
    assert_eq!((result["order"].as_str(), result["status"].as_str()), (Some("A-1042"), Some("shipped")));
    let done = tool_calls(&events, ToolCallStatus::Succeeded);
    assert_eq!(done.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["order_status"]);
    assert_eq!(text(&events), "Your order A-1042 has shipped.");

    // Arguments that break the schema never reach the endpoint.
    app.fake.push_tool_call("order_status", json!({"order_id": "../admin"}));
    app.fake.push_content("Which order?");
    let events = app.send(&token, "shop", None, "Order ../admin").await;
    assert_eq!(receiver.received().len(), 1);
    let failed = tool_calls(&events, ToolCallStatus::Failed);
    assert!(failed[0].error.as_deref().unwrap().contains("invalid arguments"), "{failed:?}");

    // POST sends a JSON body; a text answer is given as text; slow, huge and failing endpoints
    // are the tool's error, each in words the model can use.
    for (name, method, path, timeout) in [
        ("book_demo", "POST", "/echo", ""),
        ("opening_hours", "GET", "/text", ""),
        ("slow_lookup", "GET", "/slow", "600"),
        ("huge_lookup", "GET", "/huge", ""),
        ("down_lookup", "GET", "/down", ""),
    ] {
        let f = HttpToolForm { timeout_ms: timeout.into(), ..form(name, method, &receiver.url(path)) };
        assert!(save(&mut admin, &f).await.errors.is_empty());
    }
    let args = r#"{"order_id": "B-7"}"#.to_owned();
    app.fake.push(Reply::ToolCalls(
        ["book_demo", "opening_hours", "slow_lookup", "huge_lookup", "down_lookup"]
            .iter()
            .map(|n| (n.to_string(), args.clone()))
            .collect(),
    ));
    app.fake.push_content("Done.");
    let events = app.send(&token, "shop", None, "Book a demo for order B-7").await;
    let results = tool_results(&app.fake.requests().pop().unwrap());
    let by_name = |name: &str| {
        let calls = tool_calls(&events, ToolCallStatus::Succeeded)
            .into_iter()
            .chain(tool_calls(&events, ToolCallStatus::Failed))
            .collect::<Vec<_>>();
        calls.into_iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{name} in {events:?}"))
    };
    let echoed = results.iter().find(|r| r.get("received").is_some()).expect("book_demo's result");
    assert_eq!((&echoed["received"], &echoed["method"]), (&json!({"order_id": "B-7"}), &json!("POST")));
    assert!(results.iter().any(|r| r["text"] == "Opening hours: 9:00 to 18:00"), "{results:?}");
    assert_eq!(by_name("slow_lookup").error.as_deref(), Some("the tool took too long"));
    assert!(by_name("huge_lookup").error.unwrap().contains("larger than 256 KiB"));
    // What the owner's service said stays with the owner: the visitor and the model read a
    // generic failure, the console's record of the call reads the service's answer.
    let down = by_name("down_lookup").error.unwrap();
    assert!(down.contains("HTTP 503") && !down.contains("maintenance"), "{down}");
    let model_read = results.iter().find(|r| r["ok"] == false && r["error"].as_str().unwrap_or("").contains("503"));
    assert!(model_read.is_some_and(|r| !r.to_string().contains("maintenance")), "{results:?}");
    let conversation = conversation_id(&events);
    let recorded = console_error(&app, &conversation, "down_lookup").await;
    assert!(recorded.contains("HTTP 503") && recorded.contains("down for maintenance"), "{recorded}");

    // Deleted: no longer offered.
    let (status, body) = admin.call(t::DeleteHttpTool::PATH, &[("id", &id)]).await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = admin.call(t::DeleteHttpTool::PATH, &[("id", &id)]).await;
    assert_eq!(status, 404);
    app.fake.push_content("Sorry.");
    app.send(&token, "shop", None, "Where is my order A-1042?").await;
    let last = app.fake.requests().pop().unwrap();
    assert!(offered(&last, "order_status").is_none());
    assert!(offered(&last, "book_demo").is_some());
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let receiver = Receiver::start().await;
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    app.insert_agent(agent("shop", openai_provider(&app.fake)).capabilities(&["orders"])).await;
    let mut admin = app.signed_in(&ADMIN).await;
    for url in [receiver.url("/orders/{order_id}"), format!("https://{}/orders/{{order_id}}", receiver.addr)] {
        let saved = save(&mut admin, &form("order_status", "GET", &url)).await;
        assert_eq!(saved.errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(), ["url"], "{url}: {saved:?}");
    }
    assert_eq!(app.count("http_tools").await, 0);

    // A host name is checked where it resolves: `localhost` is loopback.
    let url = format!("https://localhost:{}/orders/{{order_id}}", receiver.addr.port());
    assert!(save(&mut admin, &form("order_status", "GET", &url)).await.errors.is_empty());
    app.fake.push_tool_call("order_status", json!({"order_id": "A-1"}));
    app.fake.push_content("I could not look it up.");
    let token = app.visitor("shop").await;
    let events = app.send(&token, "shop", None, "Where is order A-1?").await;
    let failed = tool_calls(&events, ToolCallStatus::Failed);
    let error = failed[0].error.as_deref().unwrap();
    assert!(error.contains("not allowed") && !error.contains("127.0.0.1") && !error.contains("::1"), "{error}");
    let to_model = serde_json::to_string(&tool_results(&app.fake.requests().pop().unwrap())).unwrap();
    assert!(to_model.contains("not allowed") && !to_model.contains("private"), "{to_model}");
    let recorded = console_error(&app, &conversation_id(&events), "order_status").await;
    assert!(recorded.contains("refused") && recorded.contains("private"), "{recorded}");
    assert!(receiver.received().is_empty());
}

/// The error the console's record of a call says (written with the answer, so waited for).
async fn console_error(app: &TestApp, conversation: &str, tool: &str) -> String {
    for _ in 0..100 {
        let found: Option<Option<String>> =
            sqlx::query_scalar("SELECT error FROM tool_calls WHERE conversation_id = $1 AND name = $2")
                .bind(conversation)
                .bind(tool)
                .fetch_optional(app.db().pool())
                .await
                .unwrap();
        if let Some(error) = found {
            return error.unwrap_or_default();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("no record of {tool} in {conversation}");
}

#[tokio::test]
async fn an_owner_tool_shows_blocks_it_returns_once_checked() {
    let receiver = Receiver::start().await;
    let app = TestApp::builder().with_users(&[ADMIN]).config(|c| c.allow_private_endpoints = true).spawn().await;
    app.insert_agent(agent("shop", openai_provider(&app.fake)).capabilities(&[
        "orders",
        "quick_replies",
        "news",
        "cards",
        "forms",
    ]))
    .await;
    let mut admin = app.signed_in(&ADMIN).await;
    let saved = save(
        &mut admin,
        &HttpToolForm {
            parameters: r#"{"type":"object","properties":{"reply":{"type":"object"}},"required":["reply"]}"#.into(),
            ..form("free_slots", "POST", &receiver.url("/blocks"))
        },
    )
    .await;
    assert!(saved.errors.is_empty(), "{saved:?}");

    // The owner's service answers with two slots as quick replies: shown, and the model reads
    // that they were (not the blocks themselves).
    let reply =
        json!({"slots": 2, "parley_blocks": [{"type": "quick_replies", "replies": ["Tue 10:00", "Wed 14:00"]}]});
    app.fake.push_tool_call("free_slots", json!({ "reply": reply }));
    app.fake.push_content("Which one suits you?");
    let token = app.visitor("shop").await;
    let events = app.send(&token, "shop", None, "When can I come in?").await;
    let shown: Vec<&Block> =
        events.iter().filter_map(|(_, e)| if let StreamEvent::Block(b) = e { Some(&b.block) } else { None }).collect();
    assert_eq!(
        shown,
        [&Block::QuickReplies(QuickReplies {
            replies: vec!["Tue 10:00".into(), "Wed 14:00".into()],
            fallback_text: "Tue 10:00 · Wed 14:00".into()
        })]
    );
    let result = tool_results(&app.fake.requests().pop().unwrap()).pop().unwrap();
    assert_eq!(result, json!({"slots": 2, "shown_to_visitor": ["quick_replies"]}));
    let conversation = conversation_id(&events);
    let stored = parley_engine::store::messages::list(app.db(), &conversation).await.unwrap();
    assert_eq!(stored.last().unwrap().blocks.len(), 1, "the block is kept with the answer");

    // A choice card and a form: shown; the model is told the form's id (its answers come back
    // under it).
    let reply = json!({"parley_blocks": [
        {"type": "choice_card", "title": "Oak chair", "text": "In stock", "image_url": "https://shop.example/chair.png",
         "buttons": [{"label": "Buy", "url": "https://shop.example/buy"}, {"label": "Other colours", "message": "Show me other colours"}]},
        {"type": "form", "title": "Delivery", "fields": [{"name": "zip", "label": "Postcode", "type": "text", "required": true}]}
    ]});
    app.fake.push_tool_call("free_slots", json!({ "reply": reply }));
    app.fake.push_content("Here it is.");
    let events = app.send(&token, "shop", Some(&conversation), "Show me the chair").await;
    let shown: Vec<&Block> =
        events.iter().filter_map(|(_, e)| if let StreamEvent::Block(b) = e { Some(&b.block) } else { None }).collect();
    let [Block::ChoiceCard(card), Block::Form(form)] = shown.as_slice() else { panic!("{shown:?}") };
    assert_eq!(card.buttons[1].message.as_deref(), Some("Show me other colours"));
    assert_eq!(card.fallback_text, "Oak chair — In stock — Buy: https://shop.example/buy");
    assert_eq!(form.fields[0].name, "zip");
    let result = tool_results(&app.fake.requests().pop().unwrap()).pop().unwrap();
    assert_eq!(result, json!({"shown_to_visitor": ["choice_card", "form"], "form_ids": [form.form_id]}));

    // A block the agent may not show (a payment) and a wrong one: nothing is shown, the model reads why.
    for bad in [
        json!([{"type": "payment_qr", "order_id": "o1"}]),
        json!([{"type": "quick_replies", "replies": ["ok"]}, {"type": "news_card", "title": "News", "url": "http://shop.example/n"}]),
        json!([{"type": "choice_card", "title": "Chair", "buttons": [{"label": "Buy", "url": "javascript:alert(1)"}]}]),
        json!([{"type": "choice_card", "title": "Chair", "image_url": "http://shop.example/c.png", "buttons": [{"label": "Buy", "message": "buy"}]}]),
        json!([{"type": "form", "fields": [{"name": "zip", "label": "Postcode", "type": "text", "onsubmit": "x"}]}]),
    ] {
        app.fake.push_tool_call("free_slots", json!({ "reply": {"slots": 0, "parley_blocks": bad} }));
        app.fake.push_content("None free, sorry.");
        let events = app.send(&token, "shop", Some(&conversation), "And next week?").await;
        assert!(!events.iter().any(|(_, e)| matches!(e, StreamEvent::Block(_))), "{bad}");
        let result = tool_results(&app.fake.requests().pop().unwrap()).pop().unwrap();
        assert_eq!(result["slots"], 0);
        assert!(result.get("parley_blocks").is_none());
        assert!(result["blocks_refused"].as_str().unwrap().starts_with("nothing was shown"), "{result}");
    }
}
