//! One fence for every outbound call (issue 41, item 8): a provider's base URL that is a private
//! address (written past the console's check, by the CLI or in the database) is refused before
//! connecting unless `PARLEY_PRIVATE_ENDPOINTS` names it; a listed one is used. The harness lists
//! its fake upstreams' `127.0.0.1:<port>` and nothing else.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use leptos::server_fn::ServerFn;
use parley_app::console::api::agents as a;
use parley_app::console::types::AgentForm;
use serde_json::{Value, json};

use crate::harness::fixtures::ADMIN;
use crate::harness::*;

/// A real listener on 127.0.0.1 that counts the connections it accepts (and closes them).
async fn counting_listener() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (addr, accepted)
}

async fn point_at(app: &TestApp, agent_id: &str, base_url: &str) {
    sqlx::query("UPDATE agents SET base_url = $1 WHERE id = $2")
        .bind(base_url)
        .bind(agent_id)
        .execute(app.db().pool())
        .await
        .unwrap();
    app.engine().agents_changed();
}

fn form(base_url: &str) -> AgentForm {
    AgentForm {
        key: "local-model".into(),
        name: "Local model".into(),
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
    }
}

#[tokio::test]
async fn a_private_address_off_the_list_is_refused_at_save_and_before_connecting() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let (addr, accepted) = counting_listener().await;
    let agent = app.agent("local", &[]).await;
    point_at(&app, &agent.id, &format!("http://{addr}/v1")).await;
    let token = app.visitor("local").await;
    let events = app.send(&token, "local", None, "Hello").await;
    assert_eq!(shape(&events), ["message_start", "error:UPSTREAM_UNAVAILABLE", "message_end:failed"]);
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "no connection reached the unlisted port");
    let outcomes: Vec<(String,)> =
        sqlx::query_as("SELECT outcome FROM usage_ledger").fetch_all(app.db().pool()).await.unwrap();
    assert!(outcomes.iter().all(|(o,)| o == "connect_error"), "{outcomes:?}");

    // The console's save check uses the same list: the unlisted port is refused, the listed
    // fake upstream saves (over plain http, as a local model would).
    let mut b = app.signed_in(&ADMIN).await;
    let (_, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": form(&format!("http://{addr}/v1")) })).await;
    let saved: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(saved["errors"][0]["field"], "base_url", "{body}");
    let listed = format!("http://{}/v1", app.fake.addr);
    let (_, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": form(&listed) })).await;
    assert!(serde_json::from_str::<Value>(&body).unwrap()["id"].is_string(), "{body}");
}

/// A host name on the list is used on its port; the same upstream by its address, unlisted now,
/// is refused, and so is the listed name on another port. (A name that resolves to loopback
/// without being listed: `console_agents::provider_base_urls_must_be_public`.)
#[tokio::test]
async fn a_listed_name_is_used_and_its_address_alone_is_not() {
    let app = TestApp::builder()
        .config(|c| c.private_endpoints = c.private_endpoints.replace("127.0.0.1", "localhost"))
        .spawn()
        .await;
    let port = app.fake.addr.port();
    let agent = app.agent("local", &[]).await;
    point_at(&app, &agent.id, &format!("http://127.0.0.1:{port}/v1")).await;
    app.fake.push_content("You should not read this.");
    let token = app.visitor("local").await;
    let events = app.send(&token, "local", None, "Hello").await;
    assert_eq!(shape(&events), ["message_start", "error:UPSTREAM_UNAVAILABLE", "message_end:failed"]);
    assert_eq!(app.fake.served(), 0);

    point_at(&app, &agent.id, &format!("http://localhost:{port}/v1")).await;
    let events = app.send(&token, "local", None, "Hello again").await;
    assert_eq!(text(&events), "You should not read this.", "the listed name reaches the upstream");

    // The listed name on another port is refused before connecting.
    let (addr, accepted) = counting_listener().await;
    point_at(&app, &agent.id, &format!("http://localhost:{}/v1", addr.port())).await;
    let events = app.send(&token, "local", None, "Once more").await;
    assert_eq!(shape(&events), ["message_start", "error:UPSTREAM_UNAVAILABLE", "message_end:failed"]);
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}
