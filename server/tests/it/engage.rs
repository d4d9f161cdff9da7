//! Triggers and teasers (issue 44, part 1), on SQLite and PostgreSQL: rules are checked when
//! saved (a bad pattern is refused with the field named and changes nothing), only enabled ones
//! reach the loader's configuration, the loader's reports are counted per trigger (an unknown
//! trigger changes nothing) and show on the console, and the preview judges an address.

use leptos::server_fn::ServerFn;
use parley_app::console::api::{dashboard as d, engage as e};
use serde_json::{Value, json};

use crate::harness::fixtures::{ADMIN, OPERATOR};
use crate::harness::*;

fn teaser(name: &str, url: Value) -> String {
    json!({
        "name": name,
        "when": {"url": url, "seconds": 5},
        "show": {"kind": "teaser", "message": "Questions about plans?", "buttons": ["Compare plans", "Talk to sales"]},
        "every_days": 7
    })
    .to_string()
}

async fn loader_config(app: &TestApp) -> Value {
    reqwest::get(app.url("/api/v1/agents/shop/config")).await.unwrap().json().await.unwrap()
}

async fn report(app: &TestApp, body: &str) -> u16 {
    // As the loader sends it: a text body, no pre-flight.
    reqwest::Client::new()
        .post(app.url("/api/v1/agents/shop/engage"))
        .header("content-type", "text/plain;charset=UTF-8")
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn triggers_are_checked_on_save_reach_the_loader_and_are_counted() {
    let app = TestApp::builder().with_users(&[ADMIN, OPERATOR]).spawn().await;
    let agent = app.agent("shop", &[]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let save = async |admin: &mut Browser, previous: &str, enabled: &str, rule: String| {
        admin
            .call(
                e::SaveTrigger::PATH,
                &[("agent_id", agent.id.as_str()), ("previous", previous), ("enabled", enabled), ("rule", &rule)],
            )
            .await
    };

    // No trigger: the loader's configuration says nothing of them.
    assert!(loader_config(&app).await.get("triggers").is_none());

    // A pattern the browser could not run is refused, with the field named; nothing is stored.
    let (status, body) =
        save(&mut admin, "", "true", teaser("pricing", json!({"kind": "matches", "value": "/pricing/(unclosed"})))
            .await;
    assert_eq!(status, 422, "{body}");
    let fields: Value = serde_json::from_str(&body).unwrap();
    assert!(body.contains("\"url\"") && body.contains("not a valid pattern"), "{fields}");
    let (status, body) = save(&mut admin, "", "true", teaser("Pricing Page", Value::Null)).await;
    assert!(status == 422 && body.contains("\"name\""), "{body}");
    let (status, body) = save(&mut admin, "", "true", "{\"name\": 3}".into()).await;
    assert!(status == 422 && body.contains("\"rule\""), "{body}");
    assert_eq!(app.count("engage_triggers").await, 0);
    // Operators may not write triggers.
    let mut operator = app.signed_in(&OPERATOR).await;
    let (status, _) = save(&mut operator, "", "true", teaser("pricing", Value::Null)).await;
    assert_eq!(status, 403);
    assert_eq!(app.count("engage_triggers").await, 0);

    // A good one, and a second that is off.
    let good = teaser("pricing", json!({"kind": "starts_with", "value": "/pricing"}));
    let (status, body) = save(&mut admin, "", "true", good.clone()).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = save(&mut admin, "", "true", good.clone()).await;
    assert!(status == 422 && body.contains("another trigger"), "the name is taken: {body}");
    let later = json!({"name": "leaving", "when": {"exit_intent": true}, "show": {"kind": "open", "greeting": "Before you go…"}});
    let (status, body) = save(&mut admin, "", "false", later.to_string()).await;
    assert_eq!(status, 200, "{body}");

    // The loader gets the enabled one, exactly as saved; the panel's own fields are unchanged.
    let config = loader_config(&app).await;
    let triggers = config["triggers"].as_array().unwrap();
    assert_eq!(triggers.len(), 1);
    assert_eq!(triggers[0], serde_json::from_str::<Value>(&good).unwrap());
    assert_eq!(config["key"], "shop");
    let _: parley_protocol::PublicAgentConfig = serde_json::from_value(config.clone()).unwrap();

    // Turned on (rewritten in place, renamed): both reach the loader, in the owner's order.
    let renamed =
        json!({"name": "exit", "when": {"exit_intent": true}, "show": {"kind": "open", "greeting": "Before you go…"}});
    let (status, body) = save(&mut admin, "leaving", "true", renamed.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let config = loader_config(&app).await;
    let names: Vec<&str> = config["triggers"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["pricing", "exit"]);

    // The loader's reports: counted per trigger; an unknown trigger or a bad body changes nothing.
    assert_eq!(report(&app, r#"{"trigger":"pricing","event":"shown"}"#).await, 204);
    assert_eq!(report(&app, r#"{"trigger":"pricing","event":"shown"}"#).await, 204);
    assert_eq!(report(&app, r#"{"trigger":"pricing","event":"clicked"}"#).await, 204);
    assert_eq!(report(&app, r#"{"trigger":"nope","event":"shown"}"#).await, 404);
    assert_eq!(report(&app, r#"{"trigger":"pricing","event":"liked"}"#).await, 422);
    assert_eq!(report(&app, "not json").await, 422);
    let rows: Vec<(String, i64, i64)> = sqlx::query_as("SELECT trigger_name, shown, clicked FROM engage_counts")
        .fetch_all(app.db().pool())
        .await
        .unwrap();
    assert_eq!(rows, [("pricing".to_owned(), 2, 1)]);

    // The console shows them: on the trigger's row and on the dashboard.
    let (status, body) = admin.call(e::EngageRules::PATH, &[("agent_id", agent.id.as_str())]).await;
    assert_eq!(status, 200, "{body}");
    let view: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(view["rules"][0]["shown"], 2);
    assert_eq!(view["rules"][0]["clicked"], 1);
    assert_eq!(view["rules"][1]["enabled"], true);
    let (status, body) = admin.call(d::DashboardFigures::PATH, &[]).await;
    assert_eq!(status, 200, "{body}");
    let dash: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(dash["teasers"], json!([{"agent": agent.name, "trigger": "pricing", "shown": 2, "clicked": 1}]));

    // The preview judges an address and gives a link that shows the trigger there.
    let preview = async |admin: &mut Browser, address: &str| {
        let (status, body) = admin
            .call(
                e::PreviewTrigger::PATH,
                &[("agent_id", agent.id.as_str()), ("name", "pricing"), ("address", address)],
            )
            .await;
        (status, serde_json::from_str::<Value>(&body).unwrap_or(Value::Null), body)
    };
    let (status, p, body) = preview(&mut admin, "https://shop.example/pricing/team?x=1").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(p["passes"], true);
    assert_eq!(p["link"], "https://shop.example/pricing/team?x=1#parley-preview=pricing");
    assert!(p["notes"].to_string().contains("5 seconds"), "{p}");
    let (_, p, _) = preview(&mut admin, "https://shop.example/blog").await;
    assert_eq!(p["passes"], false);
    let (status, _, body) = preview(&mut admin, "javascript:alert(1)").await;
    assert!(status == 422 && body.contains("\"address\""), "{body}");

    // Removed: gone from the loader; its counts stay; its reports are no longer counted.
    let (status, _) = admin.call(e::RemoveTrigger::PATH, &[("agent_id", agent.id.as_str()), ("name", "pricing")]).await;
    assert_eq!(status, 200);
    let config = loader_config(&app).await;
    assert_eq!(config["triggers"].as_array().unwrap().len(), 1);
    assert_eq!(report(&app, r#"{"trigger":"pricing","event":"shown"}"#).await, 404);
    assert_eq!(app.count("engage_counts").await, 1);
    let audit: Vec<(String,)> =
        sqlx::query_as("SELECT action FROM audit_log WHERE action LIKE 'engage.%' ORDER BY at, action")
            .fetch_all(app.db().pool())
            .await
            .unwrap();
    assert_eq!(audit.len(), 4, "{audit:?}");
}
