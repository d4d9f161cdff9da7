//! Credentials at rest and in use: provider keys are sealed in the database and still reach the
//! provider, plain keys from before are sealed at start, a sealed key copied to another agent does
//! not open, a wrong secret key stops the start and changes nothing, the agent form will not send
//! a stored key to a new base URL, and visitor tokens stop working when idle too long or revoked.

use crate::harness::fixtures::ADMIN;
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::agents as a;
use parley_app::console::types::AgentForm;
use parley_engine::engine::clock::ManualClock;
use parley_engine::store::agents;
use serde_json::{Value, json};

async fn stored_key(app: &TestApp, key: &str) -> String {
    sqlx::query_scalar("SELECT api_key FROM agents WHERE public_key = $1")
        .bind(key)
        .fetch_one(app.db().pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn provider_keys_are_sealed_in_the_database_and_still_reach_the_provider() {
    let (app, token) = spawn_chat("sealed", &[]).await;
    let stored = stored_key(&app, "sealed").await;
    assert!(stored.starts_with("enc:v2:"), "{stored}");
    assert!(!stored.contains("sk-test-secret"), "not plain text: {stored}");
    {
        use std::os::unix::fs::PermissionsExt;
        let file = app.dir.path().join("secret.key");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600, "the key file");
    }
    let events = app.send(&token, "sealed", None, "hello").await;
    assert!(!events.is_empty());
    assert_eq!(app.fake.authorizations(), ["Bearer sk-test-secret"], "the provider got the key itself");
    // Read back through the store, the key is the one typed.
    let agent = agents::by_public_key(app.db(), "sealed").await.unwrap().unwrap();
    assert_eq!(agent.provider.api_key.unwrap().expose(), "sk-test-secret");
}

#[tokio::test]
async fn plain_keys_from_before_are_sealed_at_start() {
    let app = spawn_app().await;
    app.agent("old", &[]).await;
    sqlx::query("UPDATE agents SET api_key = 'sk-plain-from-before' WHERE public_key = 'old'")
        .execute(app.db().writer())
        .await
        .unwrap();
    let restarted = app.restart().await;
    let stored = stored_key(&app, "old").await;
    assert!(stored.starts_with("enc:v2:") && !stored.contains("sk-plain"), "{stored}");
    let agent = agents::by_public_key(restarted.state.engine.db(), "old").await.unwrap().unwrap();
    assert_eq!(agent.provider.api_key.unwrap().expose(), "sk-plain-from-before");
}

#[tokio::test]
async fn a_sealed_key_copied_to_another_agent_does_not_open() {
    let app = spawn_app().await;
    app.agent("first", &[]).await;
    app.agent("second", &[]).await;
    let first = stored_key(&app, "first").await;
    assert!(agents::by_public_key(app.db(), "second").await.unwrap().is_some(), "its own key opens");
    // Someone with write access to the database moves a key to another agent's row.
    sqlx::query("UPDATE agents SET api_key = $1 WHERE public_key = 'second'")
        .bind(&first)
        .execute(app.db().writer())
        .await
        .unwrap();
    let moved = agents::by_public_key(app.db(), "second").await;
    assert!(moved.is_err(), "bound to the first agent's row: {moved:?}");
    assert!(agents::by_public_key(app.db(), "first").await.unwrap().is_some(), "where it was sealed it opens");
}

#[tokio::test]
async fn a_wrong_secret_key_stops_the_start_and_changes_nothing() {
    let app = spawn_app().await;
    app.agent("keyed", &[]).await;
    sqlx::query(
        "INSERT INTO agents (id, public_key, name, vertical, capabilities, provider, api_key, model, \
         system_prompt, greeting, theme_color, launcher_position, allowed_origins, created_at, updated_at) \
         SELECT 'plain-id', 'plain', name, vertical, capabilities, provider, 'sk-plain-kept', model, system_prompt, \
         greeting, theme_color, launcher_position, allowed_origins, created_at, updated_at FROM agents \
         WHERE public_key = 'keyed'",
    )
    .execute(app.db().writer())
    .await
    .unwrap();
    let before = (stored_key(&app, "keyed").await, stored_key(&app, "plain").await);
    let start = |secret: Option<&str>| {
        let mut config = parley_server::Config::for_tests(app.database_url.clone(), app.dir.path().to_path_buf());
        config.secret_key = secret.map(parley_server::config::SecretArg::from).unwrap_or_default();
        config.allow_second_sqlite_process = true;
        parley_server::spawn(config)
    };
    let other = "ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd7v8=";
    let error = format!("{:#}", start(Some(other)).await.err().expect("a wrong key is refused"));
    assert!(error.contains("does not open the provider keys"), "{error}");
    let error = format!("{:#}", start(Some("not a key")).await.err().expect("a malformed key is refused"));
    assert!(error.contains("PARLEY_SECRET_KEY") && error.contains("32 bytes"), "{error}");
    // The key file gone: no new key is made up for a sealed database.
    let file = app.dir.path().join("secret.key");
    let saved = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    let error = format!("{:#}", start(None).await.err().expect("a missing key is refused"));
    assert!(error.contains("secret.key") && error.contains("key used before"), "{error}");
    assert!(!file.exists(), "no new key file");
    assert_eq!((stored_key(&app, "keyed").await, stored_key(&app, "plain").await), before, "nothing changed");
    // The right key (from the file, or the same bytes in PARLEY_SECRET_KEY) starts.
    let text = String::from_utf8(saved.clone()).unwrap();
    start(Some(text.trim())).await.expect("the same key given in the setting starts");
    std::fs::write(&file, saved).unwrap();
    start(None).await.expect("the key file starts");
}

/// Saves `form` in the console; the field names of its errors (empty when saved).
async fn save(b: &mut crate::harness::Browser, form: &AgentForm) -> Vec<String> {
    let (status, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": form })).await;
    assert_eq!(status, 200, "{body}");
    let saved: Value = serde_json::from_str(&body).unwrap();
    saved["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_new_base_url_needs_the_key_typed_again() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("moving", &[]).await;
    let mut b = app.signed_in(&ADMIN).await;
    let (_, body) = b.call(a::Agent::PATH, &[("id", &agent.id)]).await;
    let form: AgentForm = serde_json::from_str(&body).unwrap();
    let row = || async {
        sqlx::query_as::<_, (Option<String>, Option<String>, String)>(
            "SELECT base_url, api_key, name FROM agents WHERE id = $1",
        )
        .bind(&agent.id)
        .fetch_one(app.db().pool())
        .await
        .unwrap()
    };
    let original = row().await;

    let moved = AgentForm { base_url: "https://attacker.example/v1".into(), name: "Moved".into(), ..form.clone() };
    assert_eq!(save(&mut b, &moved).await, ["new_api_key"], "refused at the key field");
    assert_eq!(row().await, original, "nothing changed");
    // Another provider's host is another base URL too.
    let other =
        AgentForm { provider: "anthropic".into(), base_url: "https://api.anthropic.com/v1".into(), ..form.clone() };
    assert_eq!(save(&mut b, &other).await, ["new_api_key"]);
    assert_eq!(row().await, original);
    // The same base URL keeps the stored key (sealed anew: compared opened).
    assert!(save(&mut b, &AgentForm { name: "Renamed".into(), ..form.clone() }).await.is_empty());
    let kept = agents::by_id(app.db(), &agent.id).await.unwrap().unwrap();
    assert_eq!((kept.name.as_str(), kept.provider.base_url), ("Renamed", original.0.clone()));
    assert_eq!(kept.provider.api_key.unwrap().expose(), "sk-test-secret");
    // With the key typed again, the move is saved.
    let retyped = AgentForm { new_api_key: "sk-new-host-key-9876".into(), ..moved };
    assert!(save(&mut b, &retyped).await.is_empty());
    let stored = agents::by_id(app.db(), &agent.id).await.unwrap().unwrap();
    assert_eq!(stored.provider.base_url.as_deref(), Some("https://attacker.example/v1"));
    assert_eq!(stored.provider.api_key.unwrap().expose(), "sk-new-host-key-9876");
}

/// What the API answers a visitor `token` (a transcript of a conversation that does not exist:
/// 404 for a valid token, 401 `bad_token` for a refused one).
async fn ask(app: &TestApp, token: &str) -> (u16, String) {
    let r = app.get(token, "/api/v1/conversations/no-such-conversation").await;
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test]
async fn idle_and_revoked_visitor_tokens_are_refused() {
    let clock = ManualClock::new();
    let app = TestApp::builder().clock(clock.clone()).config(|c| c.visitor_idle_hours = 24).spawn().await;
    app.agent("idle", &[]).await;
    let (kept, idle, other) = (app.visitor("idle").await, app.visitor("idle").await, app.visitor("idle").await);
    for t in [&kept, &idle, &other] {
        assert_eq!(ask(&app, t).await.0, 404, "a valid token");
    }
    // Used every 20 hours, a token lives on; unused for more than 24 hours, it is refused.
    clock.advance_ms(20 * 3600 * 1000);
    assert_eq!(ask(&app, &kept).await.0, 404);
    assert_eq!(ask(&app, &other).await.0, 404);
    clock.advance_ms(20 * 3600 * 1000);
    assert_eq!(ask(&app, &kept).await.0, 404, "used 20 hours ago: alive");
    let (status, body) = ask(&app, &idle).await;
    assert_eq!(status, 401, "unused for 40 hours: {body}");
    assert!(body.contains("bad_token"), "{body}");
    // Refused when read from the database too (after the token cache).
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM visitors WHERE last_seen_at >= $1")
        .bind(parley_engine::engine::clock::Clock::now_ms(&*clock) - 1000)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert_eq!(stored, 1, "use moved only the kept token's last_seen_at forward");

    // Revoked: refused at once, another visitor unaffected.
    let visitor = app.engine().visitor_by_token(&kept).await.unwrap().expect("alive");
    assert!(app.engine().revoke_visitor(&visitor.id).await.unwrap());
    assert!(!app.engine().revoke_visitor(&visitor.id).await.unwrap(), "revoked once");
    let (status, body) = ask(&app, &kept).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("bad_token"), "{body}");
    assert_eq!(ask(&app, &other).await.0, 404);
    let revoked_at: Option<i64> = sqlx::query_scalar("SELECT revoked_at FROM visitors WHERE id = $1")
        .bind(&visitor.id)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert!(revoked_at.is_some());
}

#[tokio::test]
async fn the_revoke_visitor_command_revokes_a_token() {
    let clock = ManualClock::new();
    let app = TestApp::builder().clock(clock.clone()).spawn().await;
    app.agent("cli", &[]).await;
    let (token, other) = (app.visitor("cli").await, app.visitor("cli").await);
    let visitor = app.engine().visitor_by_token(&token).await.unwrap().expect("valid");
    let run = |id: String| {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
            .args(["revoke-visitor", &id])
            .env("DATABASE_URL", &app.database_url)
            .env("PARLEY_DATA_DIR", app.dir.path())
            .env("RUST_LOG", "off")
            .output()
    };
    let done = run(visitor.id.clone()).await.unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(String::from_utf8_lossy(&done.stdout).contains(&visitor.id));
    let again = run(visitor.id.clone()).await.unwrap();
    assert!(!again.status.success(), "a second revocation says there is nothing to revoke");
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("no visitor"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    // The running server refuses it once its one-minute cache has passed.
    clock.advance_ms(61_000);
    let (status, body) = ask(&app, &token).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(ask(&app, &other).await.0, 404, "another visitor is unaffected");
}
