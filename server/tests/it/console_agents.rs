//! Agents and their knowledge in the admin console over real HTTP: the agent form is checked field
//! by field and API keys never come back; knowledge articles are created, edited, imported,
//! searched and deleted, and the search index follows.

use crate::harness::fixtures::ADMIN;
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{agents as a, knowledge as k};
use parley_app::console::types::{AgentForm, ArticleForm};
use serde_json::{Value, json};

#[tokio::test]
async fn agents_are_validated_field_by_field_and_keys_never_come_back() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let mut b = app.signed_in(&ADMIN).await;
    let before = app.count("agents").await;
    let bad = AgentForm {
        key: "demo-help".into(),
        name: "".into(),
        vertical: "help_center".into(),
        provider: "openai".into(),
        base_url: "not a url".into(),
        model: "gpt-x".into(),
        theme_color: "#4f46e5".into(),
        launcher_position: "right".into(),
        budget_usd: 0.5,
        max_tokens: "8".into(),
        ..Default::default()
    };
    let (status, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": bad })).await;
    assert_eq!(status, 200, "{body}");
    let saved: Value = serde_json::from_str(&body).unwrap();
    let fields: Vec<&str> = saved["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["name", "base_url", "max_tokens", "key"], "{body}");
    assert_eq!(app.count("agents").await, before, "nothing written");

    let good = AgentForm {
        key: "shop".into(),
        name: "Shop".into(),
        base_url: "https://api.example.com/v1".into(),
        new_api_key: "sk-secret-key-abcd1234".into(),
        capabilities: vec!["ticket_escalation".into()],
        enabled_tools: Some(vec!["escalate_to_human".into()]),
        allowed_origins: vec!["https://shop.example.com/".into()],
        budget_usd: 1.25,
        max_tokens: "2048".into(),
        ..bad
    };
    let (_, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": good })).await;
    let id = serde_json::from_str::<Value>(&body).unwrap()["id"].as_str().expect("saved").to_owned();
    let (_, body) = b.call(a::Agent::PATH, &[("id", &id)]).await;
    assert!(!body.contains("sk-secret"), "the key is never sent back: {body}");
    let form: AgentForm = serde_json::from_str(&body).unwrap();
    assert_eq!(form.api_key_hint.as_deref(), Some("••••1234"));
    assert_eq!(form.allowed_origins, ["https://shop.example.com"]);
    assert_eq!(form.budget_usd, 1.25);
    assert_eq!(form.max_tokens, "2048");
    // Saving again without a new key keeps the stored one; the widget never sees it.
    let (_, body) =
        b.call_json(a::SaveAgent::PATH, json!({ "form": AgentForm { name: "Shop 2".into(), ..form } })).await;
    assert!(body.contains(&id), "{body}");
    let stored = parley_engine::store::agents::by_id(app.db(), &id).await.unwrap().unwrap();
    assert_eq!(stored.provider.api_key.as_ref().map(|k| k.expose()), Some("sk-secret-key-abcd1234"));
    assert_eq!(stored.name, "Shop 2");
    let config = reqwest::get(app.url("/api/v1/agents/shop/config")).await.unwrap().text().await.unwrap();
    assert!(!config.contains("sk-secret"), "{config}");
}

#[tokio::test]
async fn knowledge_articles_are_created_edited_searched_and_deleted() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let mut b = app.signed_in(&ADMIN).await;
    let (_, body) = b.call(k::KnowledgeBases::PATH, &[]).await;
    let bases: Value = serde_json::from_str(&body).unwrap();
    let base = bases[0]["id"].as_str().unwrap().to_owned();
    let owner = bases[0]["agent_id"].as_str().unwrap().to_owned();
    let form = ArticleForm {
        knowledge_base_id: base.clone(),
        title: "Parking".into(),
        kind: "article".into(),
        body: "Visitors park in the **blue** garage.".into(),
        ..Default::default()
    };
    let (_, body) = b.call_json(k::SaveArticle::PATH, json!({ "form": form })).await;
    let id = serde_json::from_str::<Value>(&body).unwrap()["id"].as_str().expect("saved").to_owned();
    let (_, body) = b.call(k::Articles::PATH, &[("knowledge_base_id", &base), ("search", "BLUE"), ("page", "1")]).await;
    assert!(body.contains("Parking"), "{body}");
    let hits = app.engine().services().knowledge.search(&search(&owner, "blue garage")).await.unwrap();
    assert!(hits.iter().any(|h| h.title == "Parking"), "the index knows the new article");

    let (_, body) = b.call(k::Article::PATH, &[("id", &id)]).await;
    let mut edit: ArticleForm = serde_json::from_str(&body).unwrap();
    edit.body = "Visitors park in the green garage now.".into();
    let (_, body) = b.call_json(k::SaveArticle::PATH, json!({ "form": edit })).await;
    assert!(body.contains(&id), "{body}");
    let hits = app.engine().services().knowledge.search(&search(&owner, "green garage")).await.unwrap();
    assert!(hits.iter().any(|h| h.title == "Parking"), "the index follows edits");

    let bad = ArticleForm { title: "".into(), body: " ".into(), ..edit.clone() };
    let (_, body) = b.call_json(k::SaveArticle::PATH, json!({ "form": bad })).await;
    assert!(body.contains("\"title\"") && body.contains("\"body\""), "{body}");

    let (status, body) = b
        .call(
            k::ImportArticle::PATH,
            &[("knowledge_base_id", &base), ("file_name", "x.md"), ("text", "no front matter")],
        )
        .await;
    assert!(status != 200 && body.contains("x.md"), "{body}");
    let (status, _) = b
        .call(
            k::ImportArticle::PATH,
            &[
                ("knowledge_base_id", &base),
                ("file_name", "y.md"),
                ("text", "---\ntitle: Lockers\ncategory: FAQ\n---\nLockers are on floor 2.\n"),
            ],
        )
        .await;
    assert_eq!(status, 200);

    let (status, _) = b.call(k::DeleteArticle::PATH, &[("id", &id)]).await;
    assert_eq!(status, 200);
    let hits = app.engine().services().knowledge.search(&search(&owner, "green garage")).await.unwrap();
    assert!(hits.iter().all(|h| h.title != "Parking"), "deleted articles are not found");
    let chunks: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chunks WHERE article_id = $1")
        .bind(&id)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert_eq!(chunks, 0);
}

fn search<'a>(agent_id: &'a str, q: &'a str) -> parley_engine::engine::knowledge::SearchQuery<'a> {
    parley_engine::engine::knowledge::SearchQuery {
        agent_id,
        knowledge_base_ids: None,
        text: q,
        category: None,
        kind: None,
        limit: 5,
    }
}

/// A model provider's base URL keeps to the outbound rules (issue 41, item 8): no loopback,
/// private, link-local (cloud metadata) or other non-public address, IPv4 carried in IPv6
/// included, unless the setting allows private addresses; nothing is written when refused. A
/// name that resolves to such an address is refused when saved and again when connecting.
#[tokio::test]
async fn provider_base_urls_must_be_public() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let mut b = app.signed_in(&ADMIN).await;
    let before = app.count("agents").await;
    let form = |base_url: &str| AgentForm {
        key: "shop".into(),
        name: "Shop".into(),
        vertical: "help_center".into(),
        provider: "openai".into(),
        base_url: base_url.into(),
        model: "gpt-x".into(),
        new_api_key: "sk-secret-key-abcd1234".into(),
        theme_color: "#4f46e5".into(),
        launcher_position: "right".into(),
        budget_usd: 1.0,
        max_tokens: "512".into(),
        ..Default::default()
    };
    for url in [
        "https://169.254.169.254/latest/v1",
        "https://127.0.0.1:9/v1",
        "https://[::1]/v1",
        "https://[64:ff9b::a9fe:a9fe]/v1",
        "https://[2002:7f00:1::1]/v1",
        "https://[fec0::1]/v1",
        "https://localhost:9/v1",
        "http://api.example.com/v1",
    ] {
        let (status, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": form(url) })).await;
        assert_eq!(status, 200, "{body}");
        let saved: Value = serde_json::from_str(&body).unwrap();
        let fields: Vec<&str> =
            saved["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["base_url"], "{url}: {body}");
    }
    assert_eq!(app.count("agents").await, before, "nothing written");

    // Connecting: an agent whose base URL names the fake upstream by `localhost` (written past
    // the console) gets no answer from it, and the upstream hears nothing.
    let agent = app.agent("local", &[]).await;
    sqlx::query("UPDATE agents SET base_url = $1 WHERE id = $2")
        .bind(format!("http://localhost:{}/v1", app.fake.addr.port()))
        .bind(&agent.id)
        .execute(app.db().pool())
        .await
        .unwrap();
    app.engine().agents_changed();
    app.fake.push_content("You should not read this.");
    let token = app.visitor("local").await;
    let events = app.send(&token, "local", None, "Hello").await;
    assert!(!text(&events).contains("should not"), "{events:?}");
    assert_eq!(app.fake.served(), 0, "the upstream heard nothing");

    // With private addresses allowed (a model on this machine), the same URL saves.
    let open = TestApp::builder().with_users(&[ADMIN]).config(|c| c.allow_private_endpoints = true).spawn().await;
    let mut b = open.signed_in(&ADMIN).await;
    let (_, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": form("http://127.0.0.1:9/v1") })).await;
    assert!(serde_json::from_str::<Value>(&body).unwrap()["id"].is_string(), "{body}");
}
