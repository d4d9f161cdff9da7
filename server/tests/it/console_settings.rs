//! The price table and the experts in the admin console over real HTTP: administrators only, every
//! wrong field named and nothing written, and the engine charges and runs what was saved at once.

use crate::harness::fixtures::{ADMIN, OPERATOR, price_form};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{experts as x, models as m};
use parley_app::console::types::{ExpertForm, ModelPriceForm};
use serde_json::{Value, json};

/// The price table and the experts as stored, and what the engine charges for a model.
async fn models_and_experts(app: &TestApp) -> (Vec<String>, Vec<String>, f64) {
    use parley_engine::store::{experts, prices};
    let rows = prices::list(app.db()).await.unwrap().iter().map(|p| format!("{p:?}")).collect();
    let experts = experts::list(app.db()).await.unwrap().iter().map(|e| format!("{e:?}")).collect();
    (rows, experts, app.engine().prices().cost_usd("gpt-4o-mini", 1_000_000, 0, 0))
}

fn error_fields(body: &str) -> Vec<String> {
    let saved: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{body}"));
    assert!(saved["id"].is_null(), "{body}");
    saved["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn prices_and_experts_are_refused_to_strangers_and_operators() {
    let app = TestApp::builder().with_users(&[OPERATOR]).spawn().await;
    let before = models_and_experts(&app).await;
    let good_expert = ExpertForm {
        name: "policy_expert".into(),
        description: "Changed".into(),
        system_prompt: "Changed".into(),
        tools: vec![],
        model: String::new(),
        max_tokens: "100".into(),
        enabled: false,
        input_schema: "{\"type\":\"object\"}".into(),
        copy_of: None,
    };
    let mut anon = app.browser();
    let mut op = app.signed_in(&OPERATOR).await;
    for (who, expected) in [(&mut anon, "unauthorized"), (&mut op, "forbidden")] {
        for (path, args) in [
            (m::ModelPrices::PATH, vec![]),
            (m::DeleteModelPrice::PATH, vec![("prefix", "gpt-4o-mini")]),
            (x::Experts::PATH, vec![]),
            (x::ExpertEditor::PATH, vec![("name", "policy_expert")]),
        ] {
            let (status, body) = who.call(path, &args).await;
            assert!(status != 200 && body.contains(expected), "{path}: {status} {body}");
        }
        let (status, body) =
            who.call_json(m::SaveModelPrice::PATH, json!({ "form": price_form("gpt-4o-mini", "9") })).await;
        assert!(status != 200 && body.contains(expected), "{status} {body}");
        let (status, body) = who.call_json(x::SaveExpert::PATH, json!({ "form": good_expert })).await;
        assert!(status != 200 && body.contains(expected), "{status} {body}");
    }
    assert_eq!(models_and_experts(&app).await, before, "nothing changed");
}

#[tokio::test]
async fn an_administrator_edits_the_price_table_and_the_engine_follows() {
    use parley_engine::store::prices;
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let mut b = app.signed_in(&ADMIN).await;
    let engine = &app.engine();
    let cost = |model: &str| engine.prices().cost_usd(model, 1_000_000, 0, 0);
    assert!((cost("gpt-4o-mini") - 0.15).abs() < 1e-9, "the seed's price");
    let before = models_and_experts(&app).await;

    let (status, body) = b.call(m::ModelPrices::PATH, &[]).await;
    assert_eq!(status, 200, "{body}");
    let rows: Value = serde_json::from_str(&body).unwrap();
    let mini = rows.as_array().unwrap().iter().find(|r| r["model_prefix"] == "gpt-4o-mini").expect("seeded row");
    assert_eq!((mini["input_per_mtok"].as_f64(), mini["context_window"].as_u64()), (Some(0.15), Some(128_000)));

    // Bad input: every wrong field named, nothing written, the engine unchanged.
    let bad = ModelPriceForm {
        model_prefix: "gpt-4o-mini<script>".into(),
        input_per_mtok: "-1".into(),
        cached_per_mtok: "NaN".into(),
        output_per_mtok: "1000.5".into(),
        context_window: "999".into(),
        vision: true,
    };
    let (status, body) = b.call_json(m::SaveModelPrice::PATH, json!({ "form": bad })).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        error_fields(&body),
        ["model_prefix", "input_per_mtok", "cached_per_mtok", "output_per_mtok", "context_window"]
    );
    let (_, body) = b
        .call_json(
            m::SaveModelPrice::PATH,
            json!({ "form": ModelPriceForm { output_per_mtok: "inf".into(), ..price_form("gpt-4o-mini", "0.3") } }),
        )
        .await;
    assert_eq!(error_fields(&body), ["output_per_mtok"]);
    let (_, body) = b
        .call_json(
            m::SaveModelPrice::PATH,
            json!({ "form": ModelPriceForm { context_window: "10000001".into(), ..price_form("gpt-4o-mini", "0.3") } }),
        )
        .await;
    assert_eq!(error_fields(&body), ["context_window"]);
    assert_eq!(models_and_experts(&app).await, before, "nothing written");

    // An edit of the seeded row: stored, listed and charged at once.
    let (status, body) =
        b.call_json(m::SaveModelPrice::PATH, json!({ "form": price_form(" gpt-4o-mini ", "0.3") })).await;
    assert_eq!(status, 200, "{body}");
    let saved: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((saved["id"].as_str(), saved["errors"].as_array().map(Vec::len)), (Some("gpt-4o-mini"), Some(0)));
    assert!((cost("gpt-4o-mini") - 0.3).abs() < 1e-9, "the engine charges the new price");
    assert!((cost("openai/gpt-4o-mini-2024-07-18") - 0.3).abs() < 1e-9);
    assert!((cost("gpt-4o") - 2.5).abs() < 1e-9, "other rows untouched");
    let stored = prices::list(app.db()).await.unwrap();
    let row = stored.iter().find(|p| p.model_prefix == "gpt-4o-mini").unwrap();
    assert_eq!((row.input_per_mtok, row.cached_per_mtok, row.output_per_mtok), (0.3, 0.05, 0.8));
    assert_eq!(stored.len(), before.0.len(), "replaced, not added");
    let (_, body) = b.call(m::ModelPrices::PATH, &[]).await;
    assert!(body.contains("\"input_per_mtok\":0.3"), "{body}");

    // A new row, then deleted.
    // Unpriced, it costs the default price (US$15 per million input tokens).
    assert!((cost("acme-large-2") - 15.0).abs() < 1e-9);
    let (_, body) = b
        .call_json(
            m::SaveModelPrice::PATH,
            json!({ "form": ModelPriceForm { vision: false, ..price_form("acme-large", "4") } }),
        )
        .await;
    assert!(body.contains("acme-large"), "{body}");
    assert_eq!(prices::list(app.db()).await.unwrap().len(), before.0.len() + 1);
    assert!(!engine.prices().lookup("openrouter/acme-large-2").unwrap().vision);
    assert!((cost("acme-large-2") - 4.0).abs() < 1e-9);
    let (status, body) = b.call(m::DeleteModelPrice::PATH, &[("prefix", "acme-large")]).await;
    assert_eq!((status, body.as_str()), (200, "true"));
    assert!(engine.prices().lookup("acme-large-2").is_none(), "the engine forgets it");
    let (status, body) = b.call(m::DeleteModelPrice::PATH, &[("prefix", "acme-large")]).await;
    assert_eq!((status, body.as_str()), (200, "false"));
    let (_, body) = b.call(m::DeleteModelPrice::PATH, &[("prefix", "gpt-4o-mini")]).await;
    assert_eq!(body, "true");
    assert!((cost("gpt-4o-mini") - 2.5).abs() < 1e-9, "the next longest prefix (gpt-4o) prices it now");
    assert_eq!(prices::list(app.db()).await.unwrap().len(), before.0.len() - 1);
}

#[tokio::test]
async fn an_administrator_edits_an_expert_and_the_engine_follows() {
    use parley_engine::store::experts;
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let mut b = app.signed_in(&ADMIN).await;
    let engine = &app.engine();

    // The pages render on the server (the browser test drives them).
    for (path, texts) in [
        ("/admin/models", &["Models &amp; prices", "gpt-4o-mini", "128,000", "Save price"][..]),
        ("/admin/experts", &["policy_expert", "coordinator's model", "search_knowledge"][..]),
        ("/admin/experts/policy_expert", &["Expert: policy_expert", "Max tokens (50 to 8000)", "save_user_memory"][..]),
    ] {
        let (status, html) = b.page(path).await;
        assert_eq!(status, 200, "{path}");
        for t in texts {
            assert!(html.contains(t), "{path} shows {t}: {html}");
        }
    }

    let (status, body) = b.call(x::Experts::PATH, &[]).await;
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.contains(&"policy_expert") && names.contains(&"memory_manager"), "{names:?}");

    let (status, body) = b.call(x::ExpertEditor::PATH, &[("name", "policy_expert")]).await;
    assert_eq!(status, 200, "{body}");
    let (form, tools, _coordinators): (ExpertForm, Vec<parley_app::console::types::ToolInfo>, Value) =
        serde_json::from_str(&body).unwrap();
    assert_eq!(
        (form.max_tokens.as_str(), form.tools.as_slice(), form.enabled),
        ("800", &["search_knowledge".to_owned()][..], true)
    );
    assert_eq!(serde_json::from_str::<Value>(&form.input_schema).unwrap()["required"], json!(["query"]));
    let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(offered.contains(&"search_knowledge") && offered.contains(&"save_user_memory"), "{offered:?}");
    assert!(offered.iter().all(|t| !t.starts_with("invoke_")), "experts do not call experts: {offered:?}");

    // Refused: each wrong field is named and nothing is written.
    let before = models_and_experts(&app).await;
    let refused = [
        (ExpertForm { input_schema: "{\"type\": \"array\"}".into(), ..form.clone() }, vec!["input_schema"]),
        (ExpertForm { input_schema: "[1, 2]".into(), ..form.clone() }, vec!["input_schema"]),
        (ExpertForm { input_schema: "{\"type\": \"object\"".into(), ..form.clone() }, vec!["input_schema"]),
        (ExpertForm { tools: vec!["teleport".into()], ..form.clone() }, vec!["tools"]),
        (ExpertForm { tools: vec!["invoke_strategist".into()], ..form.clone() }, vec!["tools"]),
        (
            ExpertForm { max_tokens: "49".into(), description: " ".into(), model: "a model".into(), ..form.clone() },
            vec!["description", "model", "max_tokens"],
        ),
        (
            ExpertForm { max_tokens: "8001".into(), system_prompt: "".into(), ..form.clone() },
            vec!["system_prompt", "max_tokens"],
        ),
    ];
    for (bad, fields) in refused {
        let (status, body) = b.call_json(x::SaveExpert::PATH, json!({ "form": bad })).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(error_fields(&body), fields, "{body}");
    }
    // Experts are not created (nor renamed) here.
    let (status, body) = b
        .call_json(x::SaveExpert::PATH, json!({ "form": ExpertForm { name: "new_expert".into(), ..form.clone() } }))
        .await;
    assert!(status != 200 && body.contains("not found"), "{body}");
    assert_eq!(models_and_experts(&app).await, before, "nothing written");

    // A good edit persists, and the engine's experts follow at once.
    let edit = ExpertForm {
        description: "Policy expert, edited.".into(),
        system_prompt: "Explain the policy briefly.".into(),
        tools: vec!["search_knowledge".into(), "get_user_context".into()],
        model: "gpt-4o-mini".into(),
        max_tokens: "1200".into(),
        enabled: false,
        input_schema: "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}},\"required\":[\"query\"]}"
            .into(),
        ..form.clone()
    };
    let (status, body) = b.call_json(x::SaveExpert::PATH, json!({ "form": edit })).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("policy_expert") && body.contains("\"errors\":[]"), "{body}");
    let stored = experts::list(app.db()).await.unwrap().into_iter().find(|e| e.name == "policy_expert").unwrap();
    let live = engine.experts().all().iter().find(|e| e.name == "policy_expert").cloned().unwrap();
    assert_eq!(stored, live, "the engine has what is stored");
    assert_eq!(live.max_tokens, 1200);
    assert_eq!(live.model.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(live.tools, ["search_knowledge", "get_user_context"]);
    assert_eq!(live.input_schema["properties"]["query"]["type"], "string");
    assert!(!live.enabled && live.description == "Policy expert, edited.");
    assert!(engine.experts().enabled().iter().all(|e| e.name != "policy_expert"), "disabled: not offered");
    assert_eq!(engine.experts().all().len(), 6, "no expert added");
    let (_, body) = b.call(x::ExpertEditor::PATH, &[("name", "policy_expert")]).await;
    let (again, _, _): (ExpertForm, Value, Value) = serde_json::from_str(&body).unwrap();
    assert_eq!((again.max_tokens.as_str(), again.model.as_str(), again.enabled), ("1200", "gpt-4o-mini", false));

    // An empty model means the coordinator's again.
    let (_, body) = b
        .call_json(x::SaveExpert::PATH, json!({ "form": ExpertForm { model: " ".into(), enabled: true, ..again } }))
        .await;
    assert!(body.contains("\"errors\":[]"), "{body}");
    let live = engine.experts().all().iter().find(|e| e.name == "policy_expert").cloned().unwrap();
    assert_eq!((live.model, live.enabled), (None, true));
}
