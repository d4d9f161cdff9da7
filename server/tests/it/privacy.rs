//! A person's data exported and deleted (issue 16), on SQLite and PostgreSQL: the export holds
//! every kind of row; a deletion leaves no row anywhere that mentions them (searched in every text
//! column of every table) while usage keeps its cost; retention deletes old conversations only;
//! the audit log records console actions, never message content.

use crate::attachments::PNG;
use crate::harness::fixtures::{ADMIN, OPERATOR};
use crate::harness::*;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use leptos::server_fn::ServerFn;
use parley_app::console::api::{audit as a, conversations as c, identity as i};
use parley_engine::engine::clock::ManualClock;
use parley_engine::store::DbKind;
use parley_engine::store::agents::IdentitySettings;
use serde_json::{Value, json};

/// Rows, across every text column of every table, that contain `needle`.
pub(crate) async fn mentions(app: &TestApp, needle: &str) -> Vec<String> {
    let columns: Vec<(String, String)> = match app.db().kind() {
        DbKind::Sqlite => sqlx::query_as(
            "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p \
             WHERE m.type = 'table' AND upper(p.type) = 'TEXT'",
        ),
        DbKind::Postgres => sqlx::query_as(
            "SELECT table_name::TEXT, column_name::TEXT FROM information_schema.columns \
             WHERE table_schema = current_schema() AND data_type = 'text'",
        ),
    }
    .fetch_all(app.db().pool())
    .await
    .unwrap();
    assert!(columns.len() > 40, "every table's text columns: {}", columns.len());
    let mut found = Vec::new();
    for (table, column) in columns {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE {column} LIKE $1"))
            .bind(format!("%{needle}%"))
            .fetch_one(app.db().pool())
            .await
            .unwrap();
        if n > 0 {
            found.push(format!("{table}.{column}: {n}"));
        }
    }
    found
}

fn user_token(app: &TestApp, secret: &str, aud: &str, sub: &str) -> String {
    let now = app.engine().now_ms() / 1000;
    let claims = json!({"sub": sub, "aud": aud, "iat": now, "exp": now + 600, "name": "Zelda Quux", "email": "zelda@quux.example"});
    parley_engine::engine::jwt_crypto::install();
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(secret.as_bytes())).unwrap()
}

#[tokio::test]
async fn an_export_holds_every_kind_of_row_and_a_deletion_leaves_no_trace() {
    let app = TestApp::builder().with_users(&[ADMIN, OPERATOR]).payments_sandbox().spawn().await;
    let agent = app.agent("gdpr", &["user_memory", "payments"]).await;
    let (_, secret) = app.engine().rotate_identity_secret(&agent.id, 24).await.unwrap();
    // The user on two browsers; an anonymous bystander whose data must stay.
    let laptop = app.visitor("gdpr").await;
    let phone = app.visitor("gdpr").await;
    for browser in [&laptop, &phone] {
        let r = app
            .post(
                browser,
                "/api/v1/visitors/identify",
                json!({"agent": "gdpr", "token": user_token(&app, &secret, "gdpr", "sub-zelda")}),
            )
            .await;
        assert_eq!(r.status(), 200);
    }
    let bystander = app.visitor("gdpr").await;
    app.fake.push_content("Hello bystander.");
    let other_conv = conversation_id(&app.send(&bystander, "gdpr", None, "I am someone else").await);

    // Memory, payment, image, lead.
    app.fake
        .push_tool_call("save_user_memory", json!({"memoryType": "FACT", "content": "Owns a purple bicycle"}))
        .push_content("Noted.");
    let first = app.send(&laptop, "gdpr", None, "Remember my purple bicycle").await;
    let (conv, noted) = (conversation_id(&first), message_id(&first));
    // A rating with a comment, and an endpoint whose deliveries carry the lead's details.
    let rating = json!({"message_id": noted, "score": -1, "comment": "purple comment"});
    app.engine().flush().await;
    assert_eq!(app.post(&laptop, &format!("/api/v1/conversations/{conv}/rating"), rating).await.status(), 200);
    let now = app.engine().now_ms();
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let events = ["lead.created".to_owned(), "answer.rated".to_owned()];
    parley_engine::store::webhooks::create(app.db(), &agent.id, "https://93.184.216.34/h", &events, secret, now)
        .await
        .unwrap();
    app.fake
        .push_tool_call(
            "generate_payment",
            json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY"}),
        )
        .push_content("Please pay.");
    app.send(&phone, "gdpr", Some(&conv), "I want to pay").await;
    let image = app.upload_ok(&phone, "image/png", PNG).await;
    app.fake.push_content("Nice picture.");
    let r = app
        .send_raw(
            &phone,
            json!({"agent": "gdpr", "conversation_id": conv, "message": "my bike", "attachments": [image]}),
        )
        .await;
    assert_eq!(r.status(), 200);
    read_events(r).await;
    let lead = json!({"name": "Zelda Quux", "email": "zelda@quux.example", "message": "call me about the bicycle"});
    assert_eq!(app.post(&laptop, &format!("/api/v1/conversations/{conv}/lead"), lead).await.status(), 201);
    assert_eq!(app.count("webhook_deliveries").await, 1, "the lead's delivery is queued (the rating came before)");
    // The team inbox's rows: a private note that mentions a colleague (a notification), a label.
    let staff = |u: &'static str| parley_engine::store::users::with_hash(app.db(), u);
    let ada = staff(ADMIN.email).await.unwrap().unwrap().0;
    let olive = staff(OPERATOR.email).await.unwrap().unwrap().0;
    app.engine().add_note(&conv, &ada, "@Olive purple note", std::slice::from_ref(&olive.id)).await.unwrap();
    let cyclist = parley_engine::store::labels::save(app.db(), None, "Cyclist", "#123456", now).await.unwrap();
    app.engine().set_labels(&conv, &ada, &[cyclist]).await.unwrap();
    // The mention, and the queue notifications the lead caused (issue 43 part 6).
    assert_eq!(app.count("operator_notifications WHERE kind = 'mention'").await, 1);
    assert!(app.count("operator_notifications WHERE kind = 'queue'").await > 0);

    // The export, by an administrator only.
    let mut admin = app.signed_in(&ADMIN).await;
    let mut operator = app.signed_in(&OPERATOR).await;
    let who = [("agent_id", agent.id.as_str()), ("user", "sub-zelda")];
    assert_eq!(operator.call(i::ExportPerson::PATH, &who).await.0, 403);
    let (status, body) = admin.call(i::ExportPerson::PATH, &who).await;
    assert_eq!(status, 200, "{body}");
    let export: Value = serde_json::from_str(&serde_json::from_str::<String>(&body).unwrap()).unwrap();
    assert_eq!(export["user"]["id"], "sub-zelda");
    let conversation = &export["conversations"][0];
    assert_eq!(conversation["id"], json!(conv));
    assert_eq!(conversation["ratings"][0]["comment"], "purple comment");
    assert_eq!(conversation["notes"][0]["body"], "@Olive purple note");
    assert_eq!(conversation["labels"], json!(["Cyclist"]));
    for kind in ["messages", "events", "tool_calls", "ratings"] {
        assert!(!conversation[kind].as_array().unwrap().is_empty(), "{kind}");
    }
    for kind in ["memories", "leads", "orders", "images", "usage"] {
        assert!(!export[kind].as_array().unwrap().is_empty(), "{kind}: {export}");
    }
    assert_eq!(export["memories"][0]["content"], "Owns a purple bicycle");
    assert!(export["images"][0]["data_base64"].as_str().unwrap().len() > 10);
    assert_eq!(export["conversations"].as_array().unwrap().len(), 1, "not the bystander's");
    // The same as a download.
    let download = admin.get(&format!("/admin/export.json?agent_id={}&user=sub-zelda", agent.id)).await;
    assert_eq!(download.status(), 200);
    assert!(download.headers()["content-disposition"].to_str().unwrap().contains("attachment"));
    assert_eq!(download.json::<Value>().await.unwrap()["user"]["id"], "sub-zelda");

    // The deletion.
    let usage_before = app.count("usage_ledger").await;
    let person = app.engine().visitor_by_token(&laptop).await.unwrap().unwrap().id;
    let (status, body) = admin.call(i::DeletePerson::PATH, &who).await;
    assert_eq!((status, body.as_str()), (200, "1"));
    for needle in [
        person.as_str(),
        "sub-zelda",
        conv.as_str(),
        "Zelda",
        "zelda@quux",
        "purple bicycle",
        "purple comment",
        "purple note",
        image.as_str(),
    ] {
        assert_eq!(mentions(&app, needle).await, Vec::<String>::new(), "{needle}");
    }
    for table in ["conversation_notes", "conversation_labels", "operator_notifications"] {
        assert_eq!(app.count(table).await, 0, "{table}");
    }
    assert_eq!(app.count("labels").await, 1, "the label itself stays");
    assert_eq!(app.count("usage_ledger").await, usage_before, "usage rows stay, with their cost");
    let unlinked: f64 = sqlx::query_scalar("SELECT SUM(cost_usd) FROM usage_ledger WHERE visitor_id IS NULL")
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert!(unlinked > 0.0);
    // Their browsers are signed out; the bystander is untouched.
    assert_eq!(app.get(&phone, &format!("/api/v1/conversations/{conv}")).await.status(), 401);
    assert_eq!(app.get(&bystander, &format!("/api/v1/conversations/{other_conv}")).await.status(), 200);
    assert_eq!(admin.call(i::DeletePerson::PATH, &who).await.0, 404, "nothing left to delete");

    // Both actions are in the audit log, filtered by group.
    let (status, body) = admin.call(a::AuditLog::PATH, &[("action", "person"), ("page", "1")]).await;
    assert_eq!(status, 200, "{body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    let actions: Vec<&str> = page["items"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["person.delete", "person.export", "person.export"]);
    assert_eq!(page["items"][0]["actor"], ADMIN.email);
    assert_eq!(operator.call(a::AuditLog::PATH, &[("page", "1")]).await.0, 403);
}

#[tokio::test]
async fn retention_deletes_only_conversations_past_it() {
    let clock = ManualClock::new();
    let app = TestApp::builder().clock(clock.clone()).spawn().await;
    let agent = app.agent("keep30", &["user_memory"]).await;
    let settings = IdentitySettings { retention_days: Some(10), ..IdentitySettings::default() };
    assert!(app.engine().set_identity_settings(&agent.id, &settings).await.unwrap());
    let visitor = app.visitor("keep30").await;
    app.fake
        .push_tool_call("save_user_memory", json!({"memoryType": "FACT", "content": "Likes tea"}))
        .push_content("Old answer.");
    let old = conversation_id(&app.send(&visitor, "keep30", None, "an old question").await);
    // Another agent, without retention, keeps its old conversation.
    app.agent("keepall", &[]).await;
    let other = app.visitor("keepall").await;
    app.fake.push_content("Kept.");
    let kept = conversation_id(&app.send(&other, "keepall", None, "kept for ever").await);
    clock.advance_ms(11 * 24 * 3600 * 1000);
    app.fake.push_content("New answer.");
    let new = conversation_id(&app.send(&visitor, "keep30", None, "a new question").await);

    assert_eq!(app.engine().apply_retention().await.unwrap(), 1);
    assert_eq!(app.get(&visitor, &format!("/api/v1/conversations/{old}")).await.status(), 404, "deleted");
    assert_eq!(app.get(&visitor, &format!("/api/v1/conversations/{new}")).await.status(), 200);
    assert_eq!(app.get(&other, &format!("/api/v1/conversations/{kept}")).await.status(), 200);
    assert_eq!(mentions(&app, "an old question").await, Vec::<String>::new());
    assert_eq!(mentions(&app, "Likes tea").await, ["memories.content: 1"], "memories are the visitor's");
    assert_eq!(app.engine().apply_retention().await.unwrap(), 0, "nothing more");
}

#[tokio::test]
async fn the_audit_log_records_console_actions_without_message_content() {
    let app = TestApp::builder().with_users(&[ADMIN, OPERATOR]).spawn().await;
    let agent = app.agent("audited", &[]).await;
    let token = app.visitor("audited").await;
    app.fake.push_content("Hello.");
    let conv = conversation_id(&app.send(&token, "audited", None, "hi").await);
    let mut admin = app.signed_in(&ADMIN).await;
    let mut operator = app.signed_in(&OPERATOR).await;
    assert_eq!(operator.call(c::Claim::PATH, &[("id", &conv)]).await.0, 200);
    let (status, _) = operator.call(c::Reply::PATH, &[("id", &conv), ("text", "a secret remedy for you")]).await;
    assert_eq!(status, 200);
    assert_eq!(
        admin
            .call(
                i::SaveIdentity::PATH,
                &[("agent_id", &agent.id), ("max_age_minutes", "60"), ("retention_days", "90")]
            )
            .await
            .0,
        200
    );
    assert_eq!(
        admin
            .call(i::SaveIdentity::PATH, &[("agent_id", &agent.id), ("max_age_minutes", "60"), ("retention_days", "0")])
            .await
            .0,
        422,
        "a retention of 0 days is refused"
    );
    let (_, body) = admin.call(a::AuditLog::PATH, &[("page", "1")]).await;
    let page: Value = serde_json::from_str(&body).unwrap();
    let entries: Vec<(String, String)> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["actor"].as_str().unwrap().to_owned(), e["action"].as_str().unwrap().to_owned()))
        .collect();
    for expected in [
        (ADMIN.email, "sign_in"),
        (OPERATOR.email, "sign_in"),
        (OPERATOR.email, "conversation.claim"),
        (OPERATOR.email, "conversation.reply"),
        (ADMIN.email, "identity.settings"),
    ] {
        assert!(entries.contains(&(expected.0.to_owned(), expected.1.to_owned())), "{expected:?} in {entries:?}");
    }
    assert!(!body.contains("secret remedy"), "no message content: {body}");
    let (_, body) = admin.call(a::AuditLog::PATH, &[("page", "1"), ("actor", OPERATOR.email)]).await;
    let only: Value = serde_json::from_str(&body).unwrap();
    assert!(only["items"].as_array().unwrap().iter().all(|e| e["actor"] == OPERATOR.email));
    assert_eq!(only["total"], 3);
    // A refused sign-in is counted in the metrics, not written to the audit log (issue 41: a
    // flood of guesses must not flood the log).
    let mut stranger = app.browser();
    stranger.sign_in("nobody@example.com", "wrong password").await;
    let (_, body) = admin.call(a::AuditLog::PATH, &[("page", "1"), ("action", "sign_in.refused")]).await;
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["total"], 0, "{body}");
    let metrics = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("parley_signin_refused_total{reason=\"wrong_credentials\"}"), "{metrics}");
}

#[tokio::test]
async fn the_export_and_delete_commands_work_on_a_visitor() {
    let app = spawn_app().await;
    app.agent("cli-gdpr", &[]).await;
    let token = app.visitor("cli-gdpr").await;
    app.fake.push_content("Hello.");
    let conv = conversation_id(&app.send(&token, "cli-gdpr", None, "my quirky question").await);
    // Everything the answer streamed is stored before the command runs (a deletion racing the
    // stream writer on PostgreSQL fails on the events' foreign key and can be run again).
    app.engine().flush().await;
    let visitor = app.engine().visitor_by_token(&token).await.unwrap().unwrap().id;
    let run = |command: &'static str, visitor: String| {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
            .args([command, "--visitor", &visitor])
            .env("DATABASE_URL", &app.database_url)
            .env("PARLEY_DATA_DIR", app.dir.path())
            .env("RUST_LOG", "off")
            .output()
    };
    let out = run("export-person", visitor.clone()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let export: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(export["conversations"][0]["id"], json!(conv));
    assert!(export.to_string().contains("my quirky question"));
    let out = run("delete-person", visitor.clone()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(mentions(&app, "my quirky question").await, Vec::<String>::new());
    assert_eq!(mentions(&app, &visitor).await, Vec::<String>::new());
    let out = run("delete-person", visitor.clone()).await.unwrap();
    assert!(!out.status.success(), "nothing left");
    let entries: Vec<(String, String)> =
        sqlx::query_as("SELECT actor, action FROM audit_log ORDER BY at").fetch_all(app.db().pool()).await.unwrap();
    assert_eq!(entries, [("cli".into(), "person.export".into()), ("cli".into(), "person.delete".into())]);
}
