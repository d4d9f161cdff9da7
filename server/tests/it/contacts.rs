//! Contacts (issue 43, part 5) over real HTTP, on SQLite and PostgreSQL: a contact's page holds
//! what its browser's first request said (browser, language, the proxy's country), what the page
//! set with `setContext`, its conversations, leads and ratings; operators' details are checked,
//! shown first and found by search; a merge keeps every conversation of both contacts on one
//! page while each browser still reaches only its own, refuses what it must, and can be undone;
//! an operator in a team sees only their teams' contacts; deleting a person separates what was
//! merged into them.

use std::time::{Duration, Instant};

use leptos::server_fn::ServerFn;
use parley_app::console::api::{contacts as ct, identity as id, inbox as i, search as s};
use serde_json::{Value, json};

use crate::harness::fixtures::{ADMIN, OLIVE};
use crate::harness::*;

const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) \
                      Chrome/131.0.0.0 Safari/537.36";

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_owned()))
}

/// A new visitor of `agent` whose browser says who it is: its token.
async fn visitor_from(app: &TestApp, agent: &str, language: &str, country: &str) -> String {
    let r = app
        .client
        .post(app.url("/api/v1/visitors"))
        .header("user-agent", CHROME)
        .header("accept-language", language)
        .header("cf-ipcountry", country)
        .json(&json!({"agent": agent}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned()
}

/// The visitor `token` says `text` (with the page's `context`): the conversation.
async fn says(app: &TestApp, token: &str, agent: &str, text: &str, context: Value) -> String {
    app.fake.push_content("Noted.");
    let r = app.send_raw(token, json!({"agent": agent, "message": text, "context": context})).await;
    assert_eq!(r.status(), 200);
    conversation_id(&read_events(r).await)
}

/// The visitor row of a conversation (the contact's id).
async fn contact_of(app: &TestApp, conv: &str) -> String {
    sqlx::query_scalar("SELECT visitor_id FROM conversations WHERE id = $1")
        .bind(conv)
        .fetch_one(app.db().pool())
        .await
        .unwrap()
}

async fn detail(who: &mut Browser, id: &str) -> (u16, Value) {
    let (status, body) = who.call(ct::Contact::PATH, &[("id", id)]).await;
    (status, json_of(&body))
}

async fn list(who: &mut Browser, q: &str) -> Value {
    let (status, body) = who.call(ct::Contacts::PATH, &[("q", q), ("page", "1")]).await;
    assert_eq!(status, 200, "{body}");
    json_of(&body)
}

fn conversation_ids(detail: &Value) -> Vec<String> {
    let mut ids: Vec<String> =
        detail["conversations"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect();
    ids.sort();
    ids
}

async fn merge(who: &mut Browser, into: &str, from: &str) -> (u16, String) {
    who.call(ct::MergeContacts::PATH, &[("into", into), ("from", from)]).await
}

/// Waits until a search for `q` finds `conv` (the indexer runs every 1.5 s).
async fn search_finds(who: &mut Browser, q: &str, conv: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(8);
    loop {
        let (status, body) = who.call(s::Search::PATH, &[("q", q), ("page", "1")]).await;
        assert_eq!(status, 200, "{body}");
        let page = json_of(&body);
        let hit = page["items"].as_array().unwrap().iter().find(|r| r["conversation_id"] == conv).cloned();
        if let Some(hit) = hit {
            return hit;
        }
        assert!(Instant::now() < deadline, "{q:?} did not find {conv}: {page}");
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

#[tokio::test]
async fn a_contact_shows_its_browser_page_attributes_and_history_and_operators_details_come_first() {
    let app =
        TestApp::builder().with_users(&[ADMIN]).config(|c| c.country_header = "CF-IPCountry".into()).spawn().await;
    app.agent("shop", &[]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let token = visitor_from(&app, "shop", "zh-CN,zh;q=0.9,en;q=0.8", "cn").await;
    let conv = says(&app, &token, "shop", "Where is my parcel?", json!({"plan": "gold", "orders": 3})).await;
    let r = app
        .post(
            &token,
            &format!("/api/v1/conversations/{conv}/lead"),
            json!({"name": "Ann Form", "email": "ann@example.com", "phone": "+86 138 0013 8000", "message": "call me"}),
        )
        .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let contact = contact_of(&app, &conv).await;

    let page = list(&mut admin, "ANN form").await;
    assert_eq!(page["total"], 1, "{page}");
    assert_eq!(page["items"][0]["id"], contact);
    assert_eq!(page["items"][0]["name"], "Ann Form");
    assert_eq!(page["items"][0]["phone"], "+86 138 0013 8000");
    assert_eq!(list(&mut admin, "0013 8000").await["total"], 1);
    assert_eq!(list(&mut admin, "%").await["total"], 0, "a wildcard is a character to find, not any text");

    let (status, d) = detail(&mut admin, &contact).await;
    assert_eq!(status, 200, "{d}");
    let browser = &d["browsers"][0];
    assert_eq!(browser["label"], "Chrome 131 on Windows");
    assert_eq!((browser["language"].as_str(), browser["country"].as_str()), (Some("zh-CN"), Some("CN")));
    let attributes = d["attributes"].as_array().unwrap();
    assert!(attributes.contains(&json!(["plan", "gold"])) && attributes.contains(&json!(["orders", "3"])), "{d}");
    assert_eq!(conversation_ids(&d), std::slice::from_ref(&conv));
    assert_eq!(d["leads"][0]["message"], "call me");

    // Bad details are refused and change nothing; good ones come before the form's.
    for (field, name, email, phone) in
        [("email", "", "not-an-email", ""), ("phone", "", "", "call me maybe"), ("name", "x\u{7}y", "", "")]
    {
        let (status, body) = admin
            .call(ct::SaveContact::PATH, &[("id", &contact), ("name", name), ("email", email), ("phone", phone)])
            .await;
        assert_eq!(status, 422, "{field}: {body}");
        assert!(body.contains(field), "{body}");
    }
    let (_, d) = detail(&mut admin, &contact).await;
    assert_eq!((d["contact_name"].as_str(), d["item"]["name"].as_str()), (Some(""), Some("Ann Form")));
    let (status, body) = admin
        .call(
            ct::SaveContact::PATH,
            &[("id", &contact), ("name", " 张伟 Wei "), ("email", "wei@example.com"), ("phone", "")],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (_, d) = detail(&mut admin, &contact).await;
    assert_eq!(d["item"]["name"], "张伟 Wei");
    assert_eq!(d["item"]["email"], "wei@example.com");
    assert_eq!(d["item"]["phone"], "+86 138 0013 8000", "the form's phone shows while operators set none");
    // Search finds the conversation by the contact's new name.
    let hit = search_finds(&mut admin, "张伟", &conv).await;
    assert_eq!(hit["hits"][0]["kind"], "contact", "{hit}");
    // A stranger's id is no contact.
    assert_eq!(detail(&mut admin, "no-such-visitor").await.0, 404);
    let (status, _) = admin
        .call(ct::SaveContact::PATH, &[("id", "no-such-visitor"), ("name", "X"), ("email", ""), ("phone", "")])
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn contact_merge_keeps_every_conversation_each_browser_keeps_its_own_and_separating_undoes_it() {
    let app = TestApp::builder().with_users(&[ADMIN, OLIVE]).spawn().await;
    app.agent("shop", &[]).await;
    let other = app.agent("other", &[]).await;
    let mut admin = app.signed_in(&ADMIN).await;
    let laptop = app.visitor("shop").await;
    let phone = app.visitor("shop").await;
    let a1 = says(&app, &laptop, "shop", "first question from the laptop", Value::Null).await;
    let a2 = says(&app, &laptop, "shop", "second question from the laptop", Value::Null).await;
    let b1 = says(&app, &phone, "shop", "a question from the phone", Value::Null).await;
    let r = app
        .post(
            &phone,
            &format!("/api/v1/conversations/{b1}/lead"),
            json!({"name": "Bo", "email": "bo@example.com", "message": "ring me"}),
        )
        .await;
    assert_eq!(r.status(), 201);
    let (into, from) = (contact_of(&app, &a1).await, contact_of(&app, &b1).await);
    let stranger = says(&app, &app.visitor("other").await, "other", "hello", Value::Null).await;
    let elsewhere = contact_of(&app, &stranger).await;

    // Refused: itself, another agent's contact, an unknown one; nothing changes.
    assert_eq!(merge(&mut admin, &into, &into).await.0, 409);
    let (status, body) = merge(&mut admin, &into, &elsewhere).await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("different agents"), "{body}");
    assert_eq!(merge(&mut admin, &into, "nobody").await.0, 404);
    assert_eq!(conversation_ids(&detail(&mut admin, &into).await.1), sorted(&[&a1, &a2]));

    let (status, body) = merge(&mut admin, &into, &from).await;
    assert_eq!(status, 200, "{body}");
    let (_, d) = detail(&mut admin, &into).await;
    assert_eq!(conversation_ids(&d), sorted(&[&a1, &a2, &b1]), "every conversation of both");
    assert_eq!(d["item"]["conversations"], 3);
    assert_eq!(d["leads"][0]["name"], "Bo");
    assert_eq!(d["item"]["name"], "Visitor …".to_owned() + &into[into.len() - 6..], "the form was the other's");
    assert_eq!(d["merged"][0]["id"], from);
    assert_eq!(d["browsers"].as_array().unwrap().len(), 2);
    // The merged contact's id leads to the contact; it is listed no more, and cannot merge again.
    let (_, via) = detail(&mut admin, &from).await;
    assert_eq!(via["item"]["id"], into);
    let ids: Vec<Value> =
        list(&mut admin, "").await["items"].as_array().unwrap().iter().map(|c| c["id"].clone()).collect();
    assert!(ids.contains(&json!(into)) && !ids.contains(&json!(from)), "{ids:?}");
    assert_eq!(merge(&mut admin, &into, &from).await.0, 404);
    // Each browser still reaches only its own conversations.
    assert_eq!(app.get(&phone, &format!("/api/v1/conversations/{b1}")).await.status(), 200);
    assert_eq!(app.get(&phone, &format!("/api/v1/conversations/{a1}")).await.status(), 404);
    assert_eq!(app.get(&laptop, &format!("/api/v1/conversations/{b1}")).await.status(), 404);
    // The contact's details are found on the merged conversations too.
    let (status, _) = admin
        .call(ct::SaveContact::PATH, &[("id", &into), ("name", "Quentin Merged"), ("email", ""), ("phone", "")])
        .await;
    assert_eq!(status, 200);
    search_finds(&mut admin, "quentin", &b1).await;

    // An operator in a team of the other agent sees neither contact and cannot merge them.
    let olive_id = parley_engine::store::users::with_hash(app.db(), OLIVE.email).await.unwrap().unwrap().0.id;
    let (status, body) = admin
        .call(
            i::SaveTeam::PATH,
            &[("name", "Other desk"), ("mode", "manual"), ("members", &olive_id), ("agents", &other.id)],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let mut olive = app.signed_in(&OLIVE).await;
    assert_eq!(detail(&mut olive, &into).await.0, 404);
    assert_eq!(detail(&mut olive, &elsewhere).await.0, 200);
    assert_eq!(list(&mut olive, "").await["total"], 1);
    assert_eq!(merge(&mut olive, &into, &from).await.0, 404);

    // Separating undoes the merge.
    let (status, body) = admin.call(ct::SeparateContact::PATH, &[("into", &into), ("from", &from)]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(conversation_ids(&detail(&mut admin, &into).await.1), sorted(&[&a1, &a2]));
    assert_eq!(conversation_ids(&detail(&mut admin, &from).await.1), std::slice::from_ref(&b1));

    // Deleting a person separates what was merged into them; the other keeps everything.
    assert_eq!(merge(&mut admin, &into, &from).await.0, 200);
    let (status, body) =
        admin.call(id::DeletePerson::PATH, &[("agent_id", ""), ("user", ""), ("visitor", &into)]).await;
    assert_eq!(status, 200, "{body}");
    let (status, d) = detail(&mut admin, &from).await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["item"]["id"], from);
    assert_eq!(conversation_ids(&d), std::slice::from_ref(&b1));
}

#[tokio::test]
async fn a_website_user_takes_others_in_but_is_never_merged_into_another() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("site", &[]).await;
    let (_, secret) = app.engine().rotate_identity_secret(&agent.id, 24).await.unwrap();
    let mut admin = app.signed_in(&ADMIN).await;
    let mut users = Vec::new();
    for sub in ["u-1", "u-2"] {
        let token = app.visitor("site").await;
        let now = app.engine().now_ms() / 1000;
        parley_engine::engine::jwt_crypto::install();
        let signed = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &json!({"sub": sub, "aud": "site", "iat": now, "exp": now + 600, "name": format!("User {sub}")}),
            &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap();
        let r = app.post(&token, "/api/v1/visitors/identify", json!({"agent": "site", "token": signed})).await;
        assert_eq!(r.status(), 200);
        let conv = says(&app, &token, "site", "hello", Value::Null).await;
        users.push(contact_of(&app, &conv).await);
    }
    let anonymous = contact_of(&app, &says(&app, &app.visitor("site").await, "site", "hi", Value::Null).await).await;
    let (status, body) = merge(&mut admin, &users[0], &users[1]).await;
    assert_eq!((status, body.contains("tells them apart")), (409, true), "{body}");
    let (status, body) = merge(&mut admin, &anonymous, &users[0]).await;
    assert_eq!((status, body.contains("merge the other one into it")), (409, true), "{body}");
    assert_eq!(merge(&mut admin, &users[0], &anonymous).await.0, 200);
    let (_, d) = detail(&mut admin, &users[0]).await;
    assert_eq!(d["item"]["name"], "User u-1");
    assert_eq!(d["item"]["user_id"], "u-1");
    assert_eq!(d["conversations"].as_array().unwrap().len(), 2);
}

fn sorted(ids: &[&String]) -> Vec<String> {
    let mut v: Vec<String> = ids.iter().map(|s| (*s).clone()).collect();
    v.sort();
    v
}
