//! The admin console over real HTTP: every server function checks the session and the role,
//! refuses cross-site calls and bad input; sign-in and sign-out; human takeover (the claim is
//! exclusive, stored, survives a restart, and keeps the model off); visitor text is inert.

use std::sync::Arc;

use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{
    agents as a, auth, conversations as c, dashboard, experts as x, knowledge as k, leads, models as m, orders, tokens,
};
use parley_app::console::types::{AgentForm, ArticleForm, ExpertForm, ModelPriceForm};
use parley_app::server::engine::clock::{Clock, SystemClock};
use parley_app::server::store::users::{self, Role};
use parley_server::{Config, spawn_with};
use parley_widget::protocol::StreamEvent;
use serde_json::{Value, json};

/// A browser of the console: remembers the session cookie, sends same-origin requests.
struct Browser {
    client: reqwest::Client,
    base: String,
    cookie: Option<String>,
    origin: Option<String>,
}

impl Browser {
    fn new(base: String) -> Self {
        Browser { client: reqwest::Client::new(), origin: Some(base.clone()), base, cookie: None }
    }

    fn request(&self, path: &str) -> reqwest::RequestBuilder {
        let mut r = self.client.post(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        if let Some(o) = &self.origin {
            r = r.header("origin", o);
        }
        r
    }

    async fn finish(&mut self, r: reqwest::RequestBuilder) -> (u16, String) {
        let r = r.send().await.unwrap();
        let status = r.status().as_u16();
        if let Some(set) = r.headers().get("set-cookie").and_then(|v| v.to_str().ok()) {
            let pair = set.split(';').next().unwrap().to_owned();
            self.cookie = if pair.ends_with('=') { None } else { Some(pair) };
        }
        (status, r.text().await.unwrap())
    }

    /// Calls a URL-encoded server function.
    async fn call(&mut self, path: &str, form: &[(&str, &str)]) -> (u16, String) {
        let r = self.request(path).form(form);
        self.finish(r).await
    }

    /// Calls a JSON server function.
    async fn call_json(&mut self, path: &str, body: Value) -> (u16, String) {
        let r = self.request(path).json(&body);
        self.finish(r).await
    }

    async fn page(&self, path: &str) -> (u16, String) {
        let mut r = self.client.get(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        let r = r.send().await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }

    async fn sign_in(&mut self, email: &str, password: &str) -> (u16, String) {
        self.call(auth::SignIn::PATH, &[("email", email), ("password", password)]).await
    }
}

async fn user(app: &TestApp, email: &str, name: &str, role: Role) {
    let hash = parley_app::server::auth::hash_password("a long password".into()).await;
    users::insert(app.db(), email, name, role, &hash, SystemClock.now_ms()).await.unwrap();
}

async fn signed_in(app: &TestApp, email: &str) -> Browser {
    let mut b = Browser::new(app.running.url());
    let (status, body) = b.sign_in(email, "a long password").await;
    assert_eq!(status, 200, "sign in: {body}");
    assert!(b.cookie.is_some(), "a session cookie");
    b
}

/// A server function's path, URL-encoded arguments, and whether only administrators may call it.
type Call = (&'static str, Vec<(&'static str, &'static str)>, bool);

/// Every console server function with arguments it accepts.
fn calls() -> Vec<Call> {
    // (path, url-encoded arguments, administrators only)
    vec![
        (dashboard::DashboardFigures::PATH, vec![], false),
        (c::Conversations::PATH, vec![("page", "1")], false),
        (c::Conversation::PATH, vec![("id", "x")], false),
        (c::Claim::PATH, vec![("id", "x")], false),
        (c::Release::PATH, vec![("id", "x")], false),
        (c::CloseConversation::PATH, vec![("id", "x")], false),
        (c::Reply::PATH, vec![("id", "x"), ("text", "hello")], false),
        (c::OperatorTyping::PATH, vec![("id", "x"), ("active", "true")], false),
        (leads::Leads::PATH, vec![("page", "1")], false),
        (leads::UpdateLead::PATH, vec![("id", "x"), ("status", "new"), ("notes", "")], false),
        (orders::Orders::PATH, vec![("page", "1")], false),
        (a::AgentNames::PATH, vec![], false),
        (auth::ChangePassword::PATH, vec![("current", "a long password"), ("new_password", "another long one")], false),
        (a::Agents::PATH, vec![], true),
        (a::ToolCatalogue::PATH, vec![], true),
        (a::Agent::PATH, vec![("id", "x")], true),
        (a::AgentEditor::PATH, vec![], true),
        (a::EmbedInfo::PATH, vec![("id", "x")], true),
        (k::KnowledgeBases::PATH, vec![], true),
        (k::CreateKnowledgeBase::PATH, vec![("agent_id", "x"), ("name", "n"), ("description", "")], true),
        (k::Articles::PATH, vec![("knowledge_base_id", "x"), ("search", ""), ("page", "1")], true),
        (k::Article::PATH, vec![("id", "x")], true),
        (k::DeleteArticle::PATH, vec![("id", "x")], true),
        (
            k::ImportArticle::PATH,
            vec![("knowledge_base_id", "x"), ("file_name", "a.md"), ("text", "---\ntitle: t\n---\nbody")],
            true,
        ),
        (tokens::Tokens::PATH, vec![], true),
        (
            tokens::CreateToken::PATH,
            vec![("agent_id", "x"), ("name", "n"), ("feature_set", "base"), ("output", "raw")],
            true,
        ),
        (tokens::RevokeToken::PATH, vec![("id", "x")], true),
        (m::ModelPrices::PATH, vec![], true),
        (m::DeleteModelPrice::PATH, vec![("prefix", "gpt-4o-mini")], true),
        (x::Experts::PATH, vec![], true),
        (x::ExpertEditor::PATH, vec![("name", "policy_expert")], true),
    ]
}

fn json_calls() -> Vec<(&'static str, Value)> {
    vec![
        (a::SaveAgent::PATH, json!({ "form": AgentForm::default() })),
        (k::SaveArticle::PATH, json!({ "form": ArticleForm::default() })),
        (m::SaveModelPrice::PATH, json!({ "form": price_form("gpt-4o-mini", "9") })),
        (x::SaveExpert::PATH, json!({ "form": ExpertForm { name: "policy_expert".into(), ..Default::default() } })),
    ]
}

#[tokio::test]
async fn every_console_function_needs_a_session() {
    let app = spawn_app().await;
    let before = (app.count("agents").await, app.count("users").await);
    let mut anon = Browser::new(app.running.url());
    for (path, args, _) in calls() {
        let (status, body) = anon.call(path, &args).await;
        assert_ne!(status, 200, "{path} answered without a session: {body}");
        assert!(body.contains("unauthorized"), "{path}: {body}");
    }
    for (path, body) in json_calls() {
        let (status, text) = anon.call_json(path, body).await;
        assert_ne!(status, 200, "{path}: {text}");
        assert!(text.contains("unauthorized"), "{path}: {text}");
    }
    // Who am I: nobody (not an error).
    let (status, body) = anon.call(auth::WhoAmI::PATH, &[]).await;
    assert_eq!((status, body.as_str()), (200, "null"));
    // The feed and the export too.
    for path in ["/admin/feed", "/admin/leads.csv"] {
        assert_eq!(anon.page(path).await.0, 401, "{path}");
    }
    // A page of the console sends the stranger to the sign-in page.
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(app.url("/admin/conversations"))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_redirection(), "{}", r.status());
    assert_eq!(r.headers()["location"], "/admin/login");
    assert_eq!((app.count("agents").await, app.count("users").await), before, "nothing changed");
}

#[tokio::test]
async fn operators_cannot_reach_agents_knowledge_or_tokens() {
    let app = spawn_app().await;
    user(&app, "op@example.com", "Olive", Role::Operator).await;
    let mut op = signed_in(&app, "op@example.com").await;
    for (path, args, admin_only) in calls() {
        let (status, body) = op.call(path, &args).await;
        if admin_only {
            assert_ne!(status, 200, "{path} let an operator in: {body}");
            assert!(body.contains("forbidden"), "{path}: {body}");
        } else {
            assert!(!body.contains("unauthorized") && !body.contains("forbidden"), "{path}: {body}");
        }
    }
    for (path, body) in json_calls() {
        let (_, text) = op.call_json(path, body).await;
        assert!(text.contains("forbidden"), "{path}: {text}");
    }
    let (status, body) = op.call(auth::WhoAmI::PATH, &[]).await;
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["role"], "operator");
}

#[tokio::test]
async fn sign_in_cycles_the_session_and_sign_out_ends_it() {
    let app = spawn_app().await;
    user(&app, "admin@example.com", "Ada", Role::Admin).await;
    let mut b = Browser::new(app.running.url());
    let (status, body) = b.sign_in("admin@example.com", "wrong password").await;
    assert_ne!(status, 200);
    assert!(body.contains("Wrong email or password."), "{body}");
    let (status, body) = b.sign_in("nobody@example.com", "a long password").await;
    assert!(status != 200 && body.contains("Wrong email or password."), "{body}");
    assert!(b.cookie.is_none(), "no session for a failed sign-in");

    // A session that existed before signing in is not the one after (fixation).
    let (status, _) = b.sign_in("ADMIN@example.com ", "a long password").await;
    assert_eq!(status, 200);
    let first = b.cookie.clone().unwrap();
    let (status, _) = b.sign_in("admin@example.com", "a long password").await;
    assert_eq!(status, 200);
    assert_ne!(b.cookie.clone().unwrap(), first, "the session id is cycled at sign-in");
    let mut stale = Browser::new(app.running.url());
    stale.cookie = Some(first);
    assert!(stale.call(a::Agents::PATH, &[]).await.1.contains("unauthorized"), "the old id is dead");

    let (status, body) = b.call(a::Agents::PATH, &[]).await;
    assert_eq!(status, 200, "{body}");
    let sessions = app.count("sessions").await;
    assert!(sessions >= 1);
    let signed = b.cookie.clone();
    let (status, _) = b.call(auth::SignOut::PATH, &[]).await;
    assert_eq!(status, 200);
    assert_eq!(app.count("sessions").await, sessions - 1, "sign-out deletes the session");
    let mut replay = Browser::new(app.running.url());
    replay.cookie = signed;
    assert!(replay.call(a::Agents::PATH, &[]).await.1.contains("unauthorized"));
}

#[tokio::test]
async fn cross_site_calls_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    user(&app, "admin@example.com", "Ada", Role::Admin).await;
    let mut b = signed_in(&app, "admin@example.com").await;
    let agents_before = app.count("agents").await;
    let bases_before = app.count("knowledge_bases").await;
    b.origin = Some("http://evil.example".into());
    let (status, body) =
        b.call(k::CreateKnowledgeBase::PATH, &[("agent_id", "x"), ("name", "evil"), ("description", "")]).await;
    assert_ne!(status, 200);
    assert!(body.contains("cross-site"), "{body}");
    let mut form = AgentForm { key: "evil-agent".into(), name: "Evil".into(), ..Default::default() };
    form.provider = "demo".into();
    let (_, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": form })).await;
    assert!(body.contains("cross-site"), "{body}");
    let (_, body) = b.sign_in("admin@example.com", "a long password").await;
    assert!(body.contains("cross-site"), "{body}");
    assert_eq!(app.count("agents").await, agents_before);
    assert_eq!(app.count("knowledge_bases").await, bases_before);
}

#[tokio::test]
async fn agents_are_validated_field_by_field_and_keys_never_come_back() {
    let app = spawn_app().await;
    user(&app, "admin@example.com", "Ada", Role::Admin).await;
    let mut b = signed_in(&app, "admin@example.com").await;
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
        ..Default::default()
    };
    let (status, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": bad })).await;
    assert_eq!(status, 200, "{body}");
    let saved: Value = serde_json::from_str(&body).unwrap();
    let fields: Vec<&str> = saved["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["name", "base_url", "key"], "{body}");
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
    // Saving again without a new key keeps the stored one; the widget never sees it.
    let (_, body) =
        b.call_json(a::SaveAgent::PATH, json!({ "form": AgentForm { name: "Shop 2".into(), ..form } })).await;
    assert!(body.contains(&id), "{body}");
    let stored = parley_app::server::store::agents::by_id(app.db(), &id).await.unwrap().unwrap();
    assert_eq!(stored.provider.api_key.as_deref(), Some("sk-secret-key-abcd1234"));
    assert_eq!(stored.name, "Shop 2");
    let config = reqwest::get(app.url("/api/v1/agents/shop/config")).await.unwrap().text().await.unwrap();
    assert!(!config.contains("sk-secret"), "{config}");
}

#[tokio::test]
async fn knowledge_articles_are_created_edited_searched_and_deleted() {
    let app = spawn_app().await;
    user(&app, "admin@example.com", "Ada", Role::Admin).await;
    let mut b = signed_in(&app, "admin@example.com").await;
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
    let hits = app.running.state.engine.services().knowledge.search(&search(&owner, "blue garage")).await.unwrap();
    assert!(hits.iter().any(|h| h.title == "Parking"), "the index knows the new article");

    let (_, body) = b.call(k::Article::PATH, &[("id", &id)]).await;
    let mut edit: ArticleForm = serde_json::from_str(&body).unwrap();
    edit.body = "Visitors park in the green garage now.".into();
    let (_, body) = b.call_json(k::SaveArticle::PATH, json!({ "form": edit })).await;
    assert!(body.contains(&id), "{body}");
    let hits = app.running.state.engine.services().knowledge.search(&search(&owner, "green garage")).await.unwrap();
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
    let hits = app.running.state.engine.services().knowledge.search(&search(&owner, "green garage")).await.unwrap();
    assert!(hits.iter().all(|h| h.title != "Parking"), "deleted articles are not found");
    let chunks: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chunks WHERE article_id = $1")
        .bind(&id)
        .fetch_one(app.db().pool())
        .await
        .unwrap();
    assert_eq!(chunks, 0);
}

fn search<'a>(agent_id: &'a str, q: &'a str) -> parley_app::server::engine::knowledge::SearchQuery<'a> {
    parley_app::server::engine::knowledge::SearchQuery {
        agent_id,
        knowledge_base_ids: None,
        text: q,
        category: None,
        kind: None,
        limit: 5,
    }
}

#[tokio::test]
async fn takeover_is_exclusive_stored_and_keeps_the_model_off() {
    let app = spawn_app().await;
    app.agent("shop", &[], None).await;
    user(&app, "olive@example.com", "Olive", Role::Operator).await;
    user(&app, "oscar@example.com", "Oscar", Role::Operator).await;
    let mut olive = signed_in(&app, "olive@example.com").await;
    let mut oscar = signed_in(&app, "oscar@example.com").await;

    let visitor = app.visitor("shop").await;
    app.fake.push_content("Hello from the bot.");
    let first = app.send(&visitor, "shop", None, "<img src=x onerror=alert(1)> where is my order?").await;
    let conv = conversation_id(&first);
    assert_eq!(app.fake.served(), 1);

    // Two operators claim at once: exactly one wins.
    let args = [("id", conv.as_str())];
    let (r1, r2) = tokio::join!(olive.call(c::Claim::PATH, &args), oscar.call(c::Claim::PATH, &args));
    let mut outcomes = [r1.1.clone(), r2.1.clone()];
    outcomes.sort();
    assert_eq!(outcomes, ["false", "true"], "{r1:?} {r2:?}");
    let (mut holder, mut other) = if r1.1 == "true" { (olive, oscar) } else { (oscar, olive) };
    let (_, body) = other.call(c::Reply::PATH, &[("id", &conv), ("text", "me too")]).await;
    assert!(body.contains("another operator holds this conversation"), "{body}");
    let (_, body) = other.call(c::OperatorTyping::PATH, &[("id", &conv), ("active", "true")]).await;
    assert!(body.contains("claim the conversation first"), "{body}");
    let (status, body) = holder.call(c::OperatorTyping::PATH, &[("id", &conv), ("active", "true")]).await;
    assert_eq!(status, 200, "{body}");

    // The visitor writes: it goes to the person, the model is not called.
    let events = app.send(&visitor, "shop", Some(&conv), "are you a human?").await;
    assert_eq!(shape(&events), ["visitor_message"]);
    assert_eq!(app.fake.served(), 1, "the model stays off while a person holds the conversation");

    // The operator's reply reaches the visitor's stream.
    let after = events.last().unwrap().0;
    let (status, body) = holder.call(c::Reply::PATH, &[("id", &conv), ("text", "Yes, I'm Olive or Oscar.")]).await;
    assert_eq!(status, 200, "{body}");
    let r = app.get(&visitor, &format!("/api/v1/conversations/{conv}/events?after={after}")).await;
    let mut body_stream = r.bytes_stream();
    let mut parser = parley_widget::sse::SseParser::new();
    let mut seen = Vec::new();
    read_until(&mut body_stream, &mut parser, &mut seen, |e| {
        e.iter().any(|(_, e)| matches!(e, StreamEvent::OperatorMessage(m) if m.text.contains("I'm Olive or Oscar")))
    })
    .await;

    // The console's transcript shows who said what; visitor HTML stays text in the page.
    let (_, body) = holder.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["item"]["status"], "human");
    assert_eq!(detail["mine"], true);
    let roles: Vec<&str> = detail["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["visitor", "assistant", "visitor", "operator"]);
    let (status, html) = holder.page(&format!("/admin/conversations/{conv}")).await;
    assert_eq!(status, 200);
    assert!(!html.contains("<img src=x onerror"), "visitor text must be escaped");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "the text is shown");

    // A restart keeps the model off: a second server on the same database.
    let second = spawn_with(
        Config::for_tests(app.database_url.clone(), app.dir.path().to_path_buf()),
        Arc::new(SystemClock),
        parley_app::server::engine::tools::registry::Registry::builtin(&reqwest::Client::new()),
    )
    .await
    .unwrap();
    let r = app
        .client
        .post(format!("{}/api/v1/chat", second.url()))
        .bearer_auth(&visitor)
        .json(&json!({"agent": "shop", "conversation_id": conv, "message": "still there?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(shape(&read_events(r).await), ["visitor_message"]);
    assert_eq!(app.fake.served(), 1, "after a restart too");

    // Released: the bot answers again.
    let (status, body) = holder.call(c::Release::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    app.fake.push_content("The bot is back.");
    let events = app.send(&visitor, "shop", Some(&conv), "thanks").await;
    assert!(text(&events).contains("The bot is back."), "{events:?}");
    assert_eq!(app.fake.served(), 2);

    // Closed: nobody can claim it any more.
    let (status, _) = other.call(c::CloseConversation::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200);
    assert_eq!(holder.call(c::Claim::PATH, &[("id", &conv)]).await.1, "false");
    let (_, body) = holder.call(c::Conversations::PATH, &[("status", "closed"), ("page", "1")]).await;
    assert!(body.contains(&conv), "{body}");
}

#[tokio::test]
async fn leads_are_updated_with_checked_input_and_exported() {
    let app = spawn_app().await;
    app.agent("shop", &["ticket_escalation"], None).await;
    user(&app, "olive@example.com", "Olive", Role::Operator).await;
    let mut olive = signed_in(&app, "olive@example.com").await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("ok");
    let conv = conversation_id(&app.send(&visitor, "shop", None, "call me").await);
    let r = app
        .post(
            &visitor,
            &format!("/api/v1/conversations/{conv}/lead"),
            json!({"name": "=HYPERLINK(\"x\")", "email": "v@example.com", "message": "+1 please call"}),
        )
        .await;
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    let (_, body) = olive.call(leads::Leads::PATH, &[("page", "1")]).await;
    let page: Value = serde_json::from_str(&body).unwrap();
    let id = page["items"][0]["id"].as_str().unwrap().to_owned();
    let (status, body) = olive.call(leads::UpdateLead::PATH, &[("id", &id), ("status", "lost"), ("notes", "x")]).await;
    assert!(status != 200 && body.contains("unknown status"), "{body}");
    let (status, _) =
        olive.call(leads::UpdateLead::PATH, &[("id", &id), ("status", "contacted"), ("notes", "called back")]).await;
    assert_eq!(status, 200);
    let (_, body) = olive.call(leads::Leads::PATH, &[("status", "contacted"), ("page", "1")]).await;
    assert!(body.contains("called back"), "{body}");
    let (status, csv) = olive.page("/admin/leads.csv").await;
    assert_eq!(status, 200);
    assert!(csv.contains("\"'=HYPERLINK(\"\"x\"\")\""), "formula cells are escaped: {csv}");
    assert!(csv.contains("'+1 please call"), "{csv}");
}

fn price_form(prefix: &str, input: &str) -> ModelPriceForm {
    ModelPriceForm {
        model_prefix: prefix.into(),
        input_per_mtok: input.into(),
        cached_per_mtok: "0.05".into(),
        output_per_mtok: "0.8".into(),
        context_window: "128000".into(),
        vision: true,
    }
}

/// The price table and the experts as stored, and what the engine charges for a model.
async fn models_and_experts(app: &TestApp) -> (Vec<String>, Vec<String>, f64) {
    use parley_app::server::store::{experts, prices};
    let rows = prices::list(app.db()).await.unwrap().iter().map(|p| format!("{p:?}")).collect();
    let experts = experts::list(app.db()).await.unwrap().iter().map(|e| format!("{e:?}")).collect();
    (rows, experts, app.running.state.engine.prices().cost_usd("gpt-4o-mini", 1_000_000, 0, 0))
}

fn error_fields(body: &str) -> Vec<String> {
    let saved: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{body}"));
    assert!(saved["id"].is_null(), "{body}");
    saved["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn prices_and_experts_are_refused_to_strangers_and_operators() {
    let app = spawn_app().await;
    user(&app, "op@example.com", "Olive", Role::Operator).await;
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
    };
    let mut anon = Browser::new(app.running.url());
    let mut op = signed_in(&app, "op@example.com").await;
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
    use parley_app::server::store::prices;
    let app = spawn_app().await;
    user(&app, "admin@example.com", "Ada", Role::Admin).await;
    let mut b = signed_in(&app, "admin@example.com").await;
    let engine = &app.running.state.engine;
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
    assert_eq!(cost("acme-large-2"), 0.0);
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
    use parley_app::server::store::experts;
    let app = spawn_app().await;
    user(&app, "admin@example.com", "Ada", Role::Admin).await;
    let mut b = signed_in(&app, "admin@example.com").await;
    let engine = &app.running.state.engine;

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
    let (form, tools): (ExpertForm, Vec<parley_app::console::types::ToolInfo>) = serde_json::from_str(&body).unwrap();
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
    let (again, _): (ExpertForm, Value) = serde_json::from_str(&body).unwrap();
    assert_eq!((again.max_tokens.as_str(), again.model.as_str(), again.enabled), ("1200", "gpt-4o-mini", false));

    // An empty model means the coordinator's again.
    let (_, body) = b
        .call_json(x::SaveExpert::PATH, json!({ "form": ExpertForm { model: " ".into(), enabled: true, ..again } }))
        .await;
    assert!(body.contains("\"errors\":[]"), "{body}");
    let live = engine.experts().all().iter().find(|e| e.name == "policy_expert").cloned().unwrap();
    assert_eq!((live.model, live.enabled), (None, true));
}

#[tokio::test]
async fn the_conversation_shows_the_consulting_state_as_text() {
    use parley_app::server::store::conversations::set_consulting_state;
    let app = spawn_app().await;
    app.agent("shop", &[], None).await;
    user(&app, "olive@example.com", "Olive", Role::Operator).await;
    let mut olive = signed_in(&app, "olive@example.com").await;
    let visitor = app.visitor("shop").await;
    app.fake.push_content("Hello.");
    let conv = conversation_id(&app.send(&visitor, "shop", None, "hi").await);

    let (status, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    assert!(serde_json::from_str::<Value>(&body).unwrap()["consulting"].is_null(), "no state yet: {body}");
    let (_, html) = olive.page(&format!("/admin/conversations/{conv}")).await;
    assert!(!html.contains("Consulting state"), "no card without a state");

    let state = json!({
        "stage": "info_collection",
        "collected": {"age": 34, "education": "<b>master</b>", "languages": ["en", "zh"], "nothing": null},
    });
    set_consulting_state(app.db(), &conv, &state).await.unwrap();
    let (_, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        detail["consulting"],
        json!({
            "stage": "info_collection",
            "facts": [["age", "34"], ["education", "<b>master</b>"], ["languages", "[\"en\",\"zh\"]"]],
            "note": null,
        })
    );
    let (status, html) = olive.page(&format!("/admin/conversations/{conv}")).await;
    assert_eq!(status, 200);
    assert!(html.contains("Consulting state") && html.contains("info collection"), "the card is rendered");
    assert!(!html.contains("<b>master</b>"), "values are text, never HTML");
    assert!(html.contains("&lt;b&gt;master&lt;/b&gt;"), "the value is shown");

    // A stage the console does not know is not shown; the facts still are.
    set_consulting_state(app.db(), &conv, &json!({"stage": "<script>", "collected": {"goal": "QMAS"}})).await.unwrap();
    let (_, body) = olive.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["consulting"], json!({"stage": null, "facts": [["goal", "QMAS"]], "note": null}));
}
