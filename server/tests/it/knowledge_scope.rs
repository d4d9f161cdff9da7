//! Knowledge for any agent (issue 18): a help-center agent's bases, made in the console, are how
//! its knowledge tools are described to the model (names, descriptions, categories), and the
//! off-topic check goes by its words, not the immigration agent's.

use crate::harness::fixtures::{ADMIN, agent, openai_provider};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::knowledge as k;
use parley_app::console::types::ArticleForm;
use serde_json::{Value, json};

/// The tool named `name` among those offered in an upstream request.
fn offered<'a>(request: &'a Value, name: &str) -> &'a Value {
    request["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["function"]["name"] == name))
        .unwrap_or_else(|| panic!("{name} offered in {request}"))
}

#[tokio::test]
async fn a_help_center_agent_gets_knowledge_tools_written_for_its_bases() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let acme = app.insert_agent(agent("acme", openai_provider(&app.fake)).capabilities(&["knowledge_search"])).await;
    let mut admin = app.signed_in(&ADMIN).await;

    // A bad base is refused and changes nothing.
    let bases_before = app.count("knowledge_bases").await;
    let long = "x".repeat(2001);
    for (name, topics) in [(" ", ""), ("Acme", long.as_str())] {
        let (status, body) = admin
            .call(
                k::CreateKnowledgeBase::PATH,
                &[("agent_id", &acme.id), ("name", name), ("description", ""), ("topics", topics)],
            )
            .await;
        assert_eq!(status, 422, "{body}");
    }
    assert_eq!(app.count("knowledge_bases").await, bases_before);

    let (status, body) = admin
        .call(
            k::CreateKnowledgeBase::PATH,
            &[
                ("agent_id", &acme.id),
                ("name", "Acme Help Center"),
                ("description", "Orders, shipping and refunds at the Acme store"),
                ("topics", "order, refund, delivery"),
            ],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let base: String = serde_json::from_str(&body).unwrap();
    for (title, category, text) in [
        ("Refunds", "Billing", "Refunds are paid back to the original card within five working days."),
        ("Delivery times", "Shipping", "Parcels leave the warehouse within one day and arrive within three."),
    ] {
        let form = ArticleForm {
            id: None,
            knowledge_base_id: base.clone(),
            title: title.into(),
            category: category.into(),
            kind: "article".into(),
            body: text.into(),
            source_url: String::new(),
        };
        let (status, body) = admin.call_json(k::SaveArticle::PATH, json!({ "form": form })).await;
        assert_eq!(status, 200, "{body}");
    }

    // A question from another field: the model checks it and declines.
    let question = "How do I apply for a Hong Kong work visa as a graduate?";
    app.fake.push_tool_call("check_off_topic", json!({ "question": question }));
    app.fake.push_content("Sorry, I can only help with the Acme store.");
    let token = app.visitor("acme").await;
    app.send(&token, "acme", None, question).await;
    let requests = app.fake.requests();
    let search = &offered(&requests[0], "search_knowledge")["function"];
    let description = search["description"].as_str().unwrap();
    assert!(description.contains("Acme Help Center — Orders, shipping and refunds at the Acme store"), "{description}");
    assert!(description.contains("Categories: Billing, Shipping."), "{description}");
    assert_eq!(search["parameters"]["properties"]["category"]["enum"], json!(["Billing", "Shipping"]));
    let check = offered(&requests[0], "check_off_topic")["function"]["description"].as_str().unwrap();
    assert!(check.contains("Acme Help Center"), "{check}");
    for tool in requests[0]["tools"].as_array().unwrap() {
        let text = tool.to_string().to_lowercase();
        assert!(!text.contains("immigration") && !text.contains("hong kong"), "{text}");
    }
    let result = tool_results(&requests[1]).pop().expect("the check's result");
    assert_eq!(result["isOffTopic"], true, "{result}");
    let suggestion = result["suggestion"].as_str().unwrap();
    assert!(suggestion.contains("Acme Help Center") && suggestion.contains("Billing, Shipping"), "{suggestion}");

    // Renamed in the console: the next turn's tools say so (the index is rebuilt).
    let (status, body) = admin
        .call(
            k::UpdateKnowledgeBase::PATH,
            &[("id", &base), ("name", "Acme Support"), ("description", "Orders and refunds"), ("topics", "order")],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = admin
        .call(
            k::UpdateKnowledgeBase::PATH,
            &[("id", "no-such-base"), ("name", "X"), ("description", ""), ("topics", "")],
        )
        .await;
    assert_eq!(status, 404);
    let (_, body) = admin.call(k::KnowledgeBase::PATH, &[("id", &base)]).await;
    let stored: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((stored["name"].as_str(), stored["topics"].as_str()), (Some("Acme Support"), Some("order")));
    app.fake.push_content("Your order ships today.");
    app.send(&token, "acme", None, "When does my order ship?").await;
    let last = app.fake.requests().pop().unwrap();
    let description = offered(&last, "search_knowledge")["function"]["description"].as_str().unwrap().to_owned();
    assert!(description.contains("Acme Support — Orders and refunds"), "{description}");
}

/// Articles stored while the embeddings endpoint fails are embedded in the background once it
/// answers, and the console shows how far that is; search then blends vectors in (issue 18).
#[tokio::test]
async fn knowledge_stored_without_embeddings_gets_them_in_the_background() {
    let receiver = Receiver::start().await;
    receiver.set_down(true);
    let endpoint = receiver.url("");
    let listed = receiver.addr.to_string();
    let app = TestApp::builder()
        .with_users(&[ADMIN])
        .config(move |c| {
            c.embeddings_base_url = Some(endpoint);
            c.private_endpoints = format!("{},{listed}", c.private_endpoints);
        })
        .spawn()
        .await;
    let acme = app.insert_agent(agent("acme", openai_provider(&app.fake)).capabilities(&["knowledge_search"])).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let (status, body) = admin
        .call(
            k::CreateKnowledgeBase::PATH,
            &[("agent_id", &acme.id), ("name", "Acme Help"), ("description", "Orders"), ("topics", "")],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let base: String = serde_json::from_str(&body).unwrap();
    for (title, text) in [
        ("Refunds", "Refunds are paid back to the original card within five working days."),
        ("Delivery", "Parcels leave the warehouse within one day and arrive within three."),
        ("Returns", "Unused items can be sent back within thirty days with the receipt."),
    ] {
        let form = ArticleForm {
            id: None,
            knowledge_base_id: base.clone(),
            title: title.into(),
            category: "Help".into(),
            kind: "article".into(),
            body: text.into(),
            source_url: String::new(),
        };
        let (status, body) = admin.call_json(k::SaveArticle::PATH, json!({ "form": form })).await;
        assert_eq!(status, 200, "{body}");
    }
    let mut progress = async || -> Value {
        let (status, body) = admin.call(k::EmbeddingStatus::PATH, &[]).await;
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    // Stored without vectors; the background runs fail and say why.
    let first = progress().await;
    assert_eq!((first["configured"].as_bool(), first["embedded"].as_i64()), (Some(true), Some(0)), "{first}");
    let chunks = first["chunks"].as_i64().unwrap();
    assert!(chunks >= 3, "{first}");
    eventually(async || progress().await["last_error"].as_str().is_some_and(|e| e.contains("503"))).await;

    // The endpoint is back: every passage gets its vector, and the error is gone.
    receiver.set_down(false);
    eventually(async || {
        let p = progress().await;
        // Stored, and in the search index.
        p["embedded"].as_i64() == Some(chunks) && p["indexed"].as_i64() == Some(chunks) && p["last_error"].is_null()
    })
    .await;
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chunks WHERE embedding IS NOT NULL")
        .fetch_one(&mut *app.db().read().await.unwrap())
        .await
        .unwrap();
    assert_eq!(stored, chunks);

    // Search embeds the question and ranks by both.
    let asked_before = receiver.received().len();
    app.fake.push_tool_call("search_knowledge", json!({ "query": "refund to my card" }));
    app.fake.push_content("Refunds take five working days.");
    let token = app.visitor("acme").await;
    app.send(&token, "acme", None, "How do refunds work?").await;
    let question = &receiver.received()[asked_before..];
    assert!(question.iter().any(|r| r.uri == "/embeddings" && r.body.contains("refund to my card")), "{question:?}");
    let result = tool_results(&app.fake.requests()[1]).pop().expect("the search's result");
    let hits = result["sources"].as_array().unwrap_or_else(|| panic!("{result}"));
    assert_eq!(hits[0]["title"], "Refunds", "{result}");
    let similarity = hits[0]["similarity"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&similarity), "{result}");
    let (status, html) = admin.page("/admin/knowledge").await;
    assert_eq!(status, 200);
    assert!(html.contains("Acme Help"), "{html}");
}
