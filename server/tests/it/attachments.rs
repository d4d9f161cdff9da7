//! Image attachments end to end: uploads checked by type, bytes and size (nothing stored when
//! refused), read back by their visitor only, sent with a message to a model that reads images
//! (OpenAI-compatible content parts, Anthropic image blocks; earlier images as `[image]`),
//! refused for a model that does not, listed in the transcript, shown in the console.

use crate::harness::*;
use parley_engine::engine::clock::{Clock, SystemClock};
use parley_engine::store::users::{self, Role};
use parley_protocol::{AttachmentRef, MAX_ATTACHMENT_BYTES, Transcript};
use serde_json::{Value, json};

/// A real 1×1 PNG.
pub(crate) const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xDA, 0x63, 0xF8, 0xCF, 0xC0, 0xF0, 0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x56, 0xC7, 0x2F,
    0x0D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];
/// Its base64 form, as a data URL carries it.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP4z8DwHwAFAAH/VscvDQAAAABJRU5ErkJggg==";
/// The headers of a 3 × 2 JPEG (JFIF, baseline): enough for its type and size.
const JPEG: &[u8] = &[
    0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x02, 0x00, 0x03, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11,
    0x01, 0xFF, 0xD9,
];
/// The start of a WebP file.
const WEBP: &[u8] = b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0\x2f\0\0\0\x10\x07\x10\x11\x11\x88\x88\xfe\x07\0";

async fn setup() -> (TestApp, String) {
    spawn_chat("bot", &["voice_calls"]).await // gpt-4o-mini: reads images
}

async fn error_code(r: reqwest::Response) -> (u16, String, String) {
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    (status, body["error"].as_str().unwrap_or_default().to_owned(), body["message"].as_str().unwrap_or_default().into())
}

async fn send_with(
    app: &TestApp,
    token: &str,
    conversation: Option<&str>,
    text: &str,
    ids: &[&str],
) -> reqwest::Response {
    app.send_raw(token, json!({"agent": "bot", "conversation_id": conversation, "message": text, "attachments": ids}))
        .await
}

async fn unsent(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM attachments WHERE message_id IS NULL")
        .fetch_one(app.db().pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn uploads_are_checked_by_type_bytes_and_size() {
    let (app, token) = setup().await;
    for (mime, bytes) in [("image/png", PNG), ("image/jpeg", JPEG), ("image/webp", WEBP)] {
        let r = app.upload(&token, mime, bytes).await;
        assert_eq!(r.status(), 201, "{mime}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["mime"], mime);
        assert_eq!(body["size"], bytes.len());
        let id = body["id"].as_str().unwrap();
        // The visitor reads it back, as it is, with headers that keep it an image of this browser.
        let r = app.get(&token, &format!("/api/v1/attachments/{id}")).await;
        assert_eq!(r.status(), 200);
        let h = r.headers().clone();
        assert_eq!(h["content-type"], mime);
        assert!(h["cache-control"].to_str().unwrap().starts_with("private"), "{h:?}");
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert_eq!(r.bytes().await.unwrap().as_ref(), bytes);
    }
    assert_eq!(app.count("attachments").await, 3);

    // Refused: bytes that are not the declared type, types never accepted, no type.
    for (mime, bytes) in [
        ("image/jpeg", PNG),
        ("image/png", WEBP),
        ("image/webp", b"RIFF\0\0\0\0WAVEfmt ".as_slice()),
        ("image/gif", b"GIF89a".as_slice()),
    ] {
        let (status, code, message) = error_code(app.upload(&token, mime, bytes).await).await;
        assert_eq!((status, code.as_str()), (415, "unsupported_image"), "{mime}: {message}");
    }
    let r =
        app.client.post(app.url("/api/v1/attachments")).bearer_auth(&token).body(PNG.to_vec()).send().await.unwrap();
    assert_eq!(error_code(r).await.0, 415, "no content type");
    assert_eq!(error_code(app.upload(&token, "image/png", b"").await).await.0, 400, "empty");

    // Too large: refused by its declared length, and while read when it declares none.
    let mut big = PNG.to_vec();
    big.resize(MAX_ATTACHMENT_BYTES + 1, 0);
    let (status, code, message) = error_code(app.upload(&token, "image/png", &big).await).await;
    assert_eq!((status, code.as_str()), (413, "attachment_too_large"));
    assert!(message.contains("5 MiB"), "{message}");
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = big.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
    let r = app
        .client
        .post(app.url("/api/v1/attachments"))
        .bearer_auth(&token)
        .header("content-type", "image/png")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await;
    if let Ok(r) = r {
        // (The server may also close the connection before the client has sent everything.)
        assert_eq!(error_code(r).await.1, "attachment_too_large");
    }
    // Exactly the limit is fine.
    big.truncate(MAX_ATTACHMENT_BYTES);
    app.upload_ok(&token, "image/png", &big).await;

    // Without a token: refused.
    let r = app.client.post(app.url("/api/v1/attachments")).header("content-type", "image/png").body(PNG.to_vec());
    assert_eq!(r.send().await.unwrap().status(), 401);
    assert_eq!(app.count("attachments").await, 4, "nothing stored when refused");
}

#[tokio::test]
async fn another_visitor_can_neither_read_nor_send_an_image() {
    let (app, token) = setup().await;
    let id = app.upload_ok(&token, "image/png", PNG).await;
    let other = app.visitor("bot").await;
    let (status, code, _) = error_code(app.get(&other, &format!("/api/v1/attachments/{id}")).await).await;
    assert_eq!((status, code.as_str()), (404, "not_found"));
    assert_eq!(error_code(app.get(&other, "/api/v1/attachments/no-such-id").await).await.0, 404);
    assert_eq!(app.client.get(app.url(&format!("/api/v1/attachments/{id}"))).send().await.unwrap().status(), 401);

    let (status, code, _) = error_code(send_with(&app, &other, None, "mine now", &[&id]).await).await;
    assert_eq!((status, code.as_str()), (404, "attachment_not_found"));
    assert_eq!((app.count("conversations").await, app.count("messages").await), (0, 0), "nothing stored");
    assert_eq!(app.fake.served(), 0);
    assert_eq!(unsent(&app).await, 1);
    // More than four images are refused as well.
    let mut many = Vec::new();
    for _ in 0..5 {
        many.push(app.upload_ok(&token, "image/png", PNG).await);
    }
    let ids: Vec<&str> = many.iter().map(String::as_str).collect();
    let (status, code, _) = error_code(send_with(&app, &token, None, "five", &ids).await).await;
    assert_eq!((status, code.as_str()), (422, "too_many_attachments"));
    assert_eq!(app.count("messages").await, 0);
}

#[tokio::test]
async fn a_vision_model_gets_the_image_and_the_transcript_lists_it() {
    let (app, token) = setup().await;
    let config: Value =
        app.client.get(app.url("/api/v1/agents/bot/config")).send().await.unwrap().json().await.unwrap();
    assert_eq!(config["accepts_images"], true);
    let id = app.upload_ok(&token, "image/png", PNG).await;
    app.fake.push_content("A red dot.");

    let r = send_with(&app, &token, None, "What is this?", &[&id]).await;
    assert_eq!(r.status(), 200);
    let events = read_events(r).await;
    assert_eq!(text(&events), "A red dot.");
    let conv = conversation_id(&events);

    let request = &app.fake.requests()[0];
    let last = request["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last,
        json!({"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_BASE64}")}},
        ]})
    );

    // Linked to the visitor message; listed in the transcript; still readable; sent only once.
    let transcript: Transcript = app.get(&token, &format!("/api/v1/conversations/{conv}")).await.json().await.unwrap();
    let visitor_msg = &transcript.messages[0];
    assert_eq!(visitor_msg.attachments, vec![AttachmentRef { id: id.clone(), mime: "image/png".into() }]);
    assert!(transcript.messages[1].attachments.is_empty());
    let linked: (Option<String>, Option<String>) =
        sqlx::query_as("SELECT conversation_id, message_id FROM attachments WHERE id = $1")
            .bind(&id)
            .fetch_one(app.db().pool())
            .await
            .unwrap();
    assert_eq!(linked, (Some(conv.clone()), Some(visitor_msg.id.clone())));
    assert_eq!(app.get(&token, &format!("/api/v1/attachments/{id}")).await.status(), 200);
    let (status, code, _) = error_code(send_with(&app, &token, Some(&conv), "again", &[&id]).await).await;
    assert_eq!((status, code.as_str()), (404, "attachment_not_found"));

    // The next turn: the earlier image is only mentioned. An image alone needs no text.
    app.fake.push_content("Noted.");
    read_events(send_with(&app, &token, Some(&conv), "Thanks", &[]).await).await;
    let request = &app.fake.requests()[1];
    let users: Vec<Value> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(users, [json!("[image] What is this?"), json!("Thanks")]);

    let second = app.upload_ok(&token, "image/jpeg", JPEG).await;
    app.fake.push_content("Another one.");
    let r = send_with(&app, &token, Some(&conv), "  ", &[&second]).await;
    assert_eq!(r.status(), 200);
    read_events(r).await;
    let content = app.fake.requests()[2]["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(content.as_array().unwrap().len(), 1, "no empty text part: {content}");
    assert!(content[0]["image_url"]["url"].as_str().unwrap().starts_with("data:image/jpeg;base64,/9j/"));
    let transcript: Transcript = app.get(&token, &format!("/api/v1/conversations/{conv}")).await.json().await.unwrap();
    let last_visitor = transcript.messages.iter().rev().find(|m| !m.attachments.is_empty()).unwrap();
    assert_eq!((last_visitor.text.as_str(), last_visitor.attachments[0].id.as_str()), ("", second.as_str()));
    assert_eq!(unsent(&app).await, 0);
}

#[tokio::test]
async fn a_model_without_vision_refuses_images_and_stores_nothing() {
    let (app, token) = setup().await;
    // Uploaded while the model read images; the model changed since.
    let id = app.upload_ok(&token, "image/png", PNG).await;
    sqlx::query("UPDATE agents SET model = 'some-text-model' WHERE public_key = 'bot'")
        .execute(app.db().writer())
        .await
        .unwrap();
    app.engine().agents_changed();
    let config: Value =
        app.client.get(app.url("/api/v1/agents/bot/config")).send().await.unwrap().json().await.unwrap();
    assert_eq!(config["accepts_images"], false);
    assert_eq!(error_code(app.upload(&token, "image/png", PNG).await).await.1, "images_not_supported");

    let (status, code, message) = error_code(send_with(&app, &token, None, "What is this?", &[&id]).await).await;
    assert_eq!((status, code.as_str()), (422, "images_not_supported"));
    assert_eq!(message, "Images are not supported by this agent. Please describe it in words instead.");
    let (_, code, message) = error_code(send_with(&app, &token, None, "这是什么？", &[&id]).await).await;
    assert_eq!(code, "images_not_supported");
    assert_eq!(message, "此助手不支持图片，请改用文字描述。");
    assert_eq!((app.count("conversations").await, app.count("messages").await), (0, 0), "nothing stored");
    assert_eq!(app.fake.served(), 0);
    assert_eq!(unsent(&app).await, 1);

    // In an existing conversation too; text alone still goes through.
    let events = app.send(&token, "bot", None, "hello").await;
    let conv = conversation_id(&events);
    let (_, code, _) = error_code(send_with(&app, &token, Some(&conv), "and this?", &[&id]).await).await;
    assert_eq!(code, "images_not_supported");
    assert_eq!(app.count("messages").await, 2);
}

#[tokio::test]
async fn the_anthropic_request_has_the_image_block_before_the_text() {
    let app = TestApp::builder().anthropic().spawn().await;
    let fake = app.anthropic();
    app.anthropic_agent("bot", &["voice_calls"]).await; // claude-sonnet: reads images
    let token = app.visitor("bot").await;
    let id = app.upload_ok(&token, "image/jpeg", JPEG).await;
    fake.push_text("A photo.");

    let r = send_with(&app, &token, None, "describe", &[&id]).await;
    assert_eq!(r.status(), 200);
    let events = read_events(r).await;
    assert_eq!(text(&events), "A photo.", "the fake accepted the request: {events:?}");
    let body = &fake.recorded()[0].body;
    let content = body["messages"][0]["content"].clone();
    assert_eq!(content[0]["type"], "image");
    assert_eq!(content[0]["source"]["type"], "base64");
    assert_eq!(content[0]["source"]["media_type"], "image/jpeg");
    assert!(content[0]["source"]["data"].as_str().unwrap().starts_with("/9j/"));
    assert_eq!(content[1], json!({"type": "text", "text": "describe"}));
}

#[tokio::test]
async fn the_demo_model_says_it_received_the_image() {
    let app = spawn_app().await;
    let key = parley_engine::seed::HELP_AGENT_KEY;
    let config: Value =
        app.client.get(app.url(&format!("/api/v1/agents/{key}/config"))).send().await.unwrap().json().await.unwrap();
    assert_eq!((config["demo_model"].clone(), config["accepts_images"].clone()), (json!(true), json!(true)));
    let token = app.visitor(key).await;
    let id = app.upload_ok(&token, "image/webp", WEBP).await;
    let r = app.send_raw(&token, json!({"agent": key, "message": "hello", "attachments": [id]})).await;
    assert_eq!(r.status(), 200);
    let answer = text(&read_events(r).await);
    assert!(answer.starts_with("(Offline demo model) I received 1 image."), "{answer}");
}

#[tokio::test]
async fn the_console_reads_images_with_a_session_only() {
    let (app, token) = setup().await;
    let id = app.upload_ok(&token, "image/png", PNG).await;
    let path = format!("/admin/attachments/{id}");
    let (status, code, _) = error_code(app.browser().get(&path).await).await;
    assert_eq!((status, code.as_str()), (401, "unauthorized"), "refused, not redirected to the sign-in page");

    app.add_user(&fixtures::OLIVE).await;
    let olive = app.signed_in(&fixtures::OLIVE).await;
    let r = olive.get(&path).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert_eq!(r.bytes().await.unwrap().as_ref(), PNG);
    assert_eq!(olive.get("/admin/attachments/nope").await.status(), 404);
}

#[tokio::test]
async fn an_image_for_the_person_holding_the_conversation_is_stored_without_a_model_call() {
    let (app, token) = setup().await;
    let events = app.send(&token, "bot", None, "hello").await;
    let conv = conversation_id(&events);
    let operator =
        users::insert(app.db(), "olive@example.com", "Olive", Role::Operator, "x", SystemClock.now_ms()).await.unwrap();
    assert!(app.engine().claim(&conv, &operator).await.unwrap());
    let served = app.fake.served();
    let id = app.upload_ok(&token, "image/png", PNG).await;
    let r = send_with(&app, &token, Some(&conv), "", &[&id]).await;
    assert_eq!(r.status(), 200);
    read_events(r).await;
    assert_eq!(app.fake.served(), served, "no model call");
    let transcript: Transcript = app.get(&token, &format!("/api/v1/conversations/{conv}")).await.json().await.unwrap();
    let last = transcript.messages.last().unwrap();
    assert_eq!(last.attachments, vec![AttachmentRef { id, mime: "image/png".into() }]);
}

#[tokio::test]
async fn images_never_sent_are_deleted_after_a_day() {
    let (app, token) = setup().await;
    let old = app.upload_ok(&token, "image/png", PNG).await;
    let fresh = app.upload_ok(&token, "image/png", PNG).await;
    let sent = app.upload_ok(&token, "image/png", PNG).await;
    read_events(send_with(&app, &token, None, "look", &[&sent]).await).await;
    let two_days_ago = SystemClock.now_ms() - 2 * 24 * 3600 * 1000;
    sqlx::query("UPDATE attachments SET created_at = $1 WHERE id = $2 OR id = $3")
        .bind(two_days_ago)
        .bind(&old)
        .bind(&sent)
        .execute(app.db().writer())
        .await
        .unwrap();
    assert_eq!(app.engine().delete_unsent_attachments().await.unwrap(), 1);
    let left: Vec<String> =
        sqlx::query_scalar("SELECT id FROM attachments ORDER BY id").fetch_all(app.db().pool()).await.unwrap();
    let mut want = vec![fresh, sent];
    want.sort();
    assert_eq!(left, want);
}

/// Images parked by strangers (issue 41, item 1): an agent whose model reads no images takes
/// none; a huge canvas in a few bytes is refused by its header; the bytes parked from one
/// address, and overall, are capped (429) and shown in `/metrics`.
#[tokio::test]
async fn parked_images_are_refused_where_unread_huge_or_past_the_quotas() {
    let app = TestApp::builder()
        .config(|c| {
            c.parked_image_mib_per_ip = 1;
            c.parked_image_mib_total = 0;
        })
        .spawn()
        .await;
    app.agent("bot", &[]).await; // gpt-4o-mini: reads images
    app.insert_agent(fixtures::agent("blind", fixtures::openai_provider(&app.fake)).model("text-only-model")).await;
    let blind = app.visitor("blind").await;
    let (status, code, _) = error_code(app.upload(&blind, "image/png", PNG).await).await;
    assert_eq!((status, code.as_str()), (422, "images_not_supported"));

    let token = app.visitor("bot").await;
    let mut huge = PNG.to_vec();
    huge[16..24].copy_from_slice(&[0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30]); // 30,000 × 30,000
    let (status, code, message) = error_code(app.upload(&token, "image/png", &huge).await).await;
    assert_eq!((status, code.as_str()), (413, "attachment_too_large"), "{message}");
    assert!(message.contains("pixels"), "{message}");
    assert_eq!(app.count("attachments").await, 0, "nothing stored");

    // 700 KB parked, then 700 more from the same address is past its 1 MiB: refused, for this
    // visitor and for a new one from the same address.
    let mut padded = PNG.to_vec();
    padded.resize(700 * 1024, 0);
    assert_eq!(app.upload(&token, "image/png", &padded).await.status(), 201);
    let (status, code, _) = error_code(app.upload(&token, "image/png", &padded).await).await;
    assert_eq!((status, code.as_str()), (429, "too_many_waiting_images"));
    let other = app.visitor("bot").await;
    assert_eq!(app.upload(&other, "image/png", &padded).await.status(), 429);
    assert_eq!(app.upload(&other, "image/png", PNG).await.status(), 201, "a small one still fits");
    let metrics = app.client.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let parked = format!("parley_parked_image_bytes {}", 700 * 1024 + PNG.len());
    assert!(metrics.contains(&parked), "{parked} in {metrics}");

    // The overall cap holds across addresses.
    let all = TestApp::builder()
        .config(|c| {
            c.parked_image_mib_per_ip = 0;
            c.parked_image_mib_total = 1;
        })
        .spawn()
        .await;
    all.agent("bot", &[]).await;
    let token = all.visitor("bot").await;
    assert_eq!(all.upload(&token, "image/png", &padded).await.status(), 201);
    assert_eq!(all.upload(&all.visitor("bot").await, "image/png", &padded).await.status(), 429);
}
