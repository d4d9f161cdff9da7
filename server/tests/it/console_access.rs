//! The admin console's doors over real HTTP: every server function needs a session, and the
//! administrators' ones an administrator; sign-in cycles the session and sign-out ends it;
//! cross-site calls are refused and change nothing.

use crate::harness::fixtures::{ADMIN, OPERATOR, price_form};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{
    agents as a, answers as ans, auth, conversations as c, dashboard, experts as x, hours as h, http_tools as ht,
    knowledge as k, leads, models as m, orders, tokens, webhooks as w,
};
use parley_app::console::types::{AgentForm, ArticleForm, ExpertForm, HttpToolForm};
use serde_json::{Value, json};

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
        (
            k::CreateKnowledgeBase::PATH,
            vec![("agent_id", "x"), ("name", "n"), ("description", ""), ("topics", "")],
            true,
        ),
        (k::KnowledgeBase::PATH, vec![("id", "x")], true),
        (k::UpdateKnowledgeBase::PATH, vec![("id", "x"), ("name", "n"), ("description", ""), ("topics", "")], true),
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
        (x::CopyExpert::PATH, vec![("name", "policy_expert"), ("agent_id", "x")], true),
        (x::DeleteExpertCopy::PATH, vec![("name", "policy_expert.x")], true),
        (ht::HttpTools::PATH, vec![], true),
        (ht::HttpTool::PATH, vec![("id", "x")], true),
        (ht::DeleteHttpTool::PATH, vec![("id", "x")], true),
        (w::AgentWebhooks::PATH, vec![("agent_id", "x")], true),
        (
            w::AddWebhook::PATH,
            vec![("agent_id", "x"), ("url", "https://93.184.216.34/"), ("events", "order.paid")],
            true,
        ),
        (w::SetWebhookEnabled::PATH, vec![("endpoint_id", "x"), ("enabled", "true")], true),
        (w::DeleteWebhook::PATH, vec![("endpoint_id", "x")], true),
        (w::ResendWebhook::PATH, vec![("delivery_id", "x")], true),
        (ans::UnansweredQuestions::PATH, vec![("agent_id", ""), ("days", "30")], false),
        (
            ans::SaveAsArticle::PATH,
            vec![("conversation_id", "x"), ("message_id", "x"), ("title", "t"), ("body", "b")],
            false,
        ),
        (ans::SavedReplies::PATH, vec![("agent_id", "x")], false),
        (ans::ConversationReplies::PATH, vec![("conversation_id", "x")], false),
        (ans::SaveReply::PATH, vec![("agent_id", "x"), ("shortcut", "hi"), ("body", "Hello")], false),
        (ans::DeleteSavedReply::PATH, vec![("id", "x")], false),
        (h::AgentHours::PATH, vec![("agent_id", "x")], true),
        (h::SaveHours::PATH, vec![("agent_id", "x"), ("time_zone", "UTC")], true),
        (h::RemoveHours::PATH, vec![("agent_id", "x")], true),
        (h::Presence::PATH, vec![], false),
        (h::SetAway::PATH, vec![("away", "false")], false),
        (h::MyNotifications::PATH, vec![], false),
        (h::SaveNotifications::PATH, vec![("events", "")], false),
    ]
}

fn json_calls() -> Vec<(&'static str, Value)> {
    vec![
        (a::SaveAgent::PATH, json!({ "form": AgentForm::default() })),
        (k::SaveArticle::PATH, json!({ "form": ArticleForm::default() })),
        (m::SaveModelPrice::PATH, json!({ "form": price_form("gpt-4o-mini", "9") })),
        (x::SaveExpert::PATH, json!({ "form": ExpertForm { name: "policy_expert".into(), ..Default::default() } })),
        (ht::SaveHttpTool::PATH, json!({ "form": HttpToolForm::default() })),
    ]
}

#[tokio::test]
async fn every_console_function_needs_a_session() {
    let app = spawn_app().await;
    let before = (app.count("agents").await, app.count("users").await);
    let mut anon = app.browser();
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
    let app = TestApp::builder().with_users(&[OPERATOR]).spawn().await;
    let mut op = app.signed_in(&OPERATOR).await;
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
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let mut b = app.browser();
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
    let mut stale = app.browser();
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
    let mut replay = app.browser();
    replay.cookie = signed;
    assert!(replay.call(a::Agents::PATH, &[]).await.1.contains("unauthorized"));
}

#[tokio::test]
async fn cross_site_calls_are_refused_and_change_nothing() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let mut b = app.signed_in(&ADMIN).await;
    let agents_before = app.count("agents").await;
    let bases_before = app.count("knowledge_bases").await;
    b.origin = Some("http://evil.example".into());
    let (status, body) = b
        .call(k::CreateKnowledgeBase::PATH, &[("agent_id", "x"), ("name", "evil"), ("description", ""), ("topics", "")])
        .await;
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

/// The sign-in form as the browser sends it before the page has hydrated (or without script).
#[tokio::test]
async fn the_plain_sign_in_form_signs_in_or_says_why_not() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let post = |origin: &'static str, password: &'static str| {
        client
            .post(app.url("/admin/sign-in"))
            .header("origin", if origin.is_empty() { app.url("") } else { origin.to_owned() })
            .form(&[("email", "admin@example.com"), ("password", password)])
            .send()
    };
    let refused = post("", "wrong password").await.unwrap();
    assert_eq!(refused.status().as_u16(), 303);
    assert_eq!(refused.headers()["location"], "/admin/login?refused=credentials");
    assert!(refused.headers().get("set-cookie").is_none(), "no session for a refused sign-in");
    // The form it comes back to says why, in the page the server renders.
    let (status, page) = app.browser().page("/admin/login?refused=credentials").await;
    assert_eq!(status, 200);
    assert!(page.contains("Wrong email or password."), "{page}");

    let cross = post("http://evil.example", "a long password").await.unwrap();
    assert_eq!(cross.status().as_u16(), 403);
    assert!(cross.headers().get("set-cookie").is_none());

    let sessions = app.count("sessions").await;
    let ok = post("", "a long password").await.unwrap();
    assert_eq!(ok.status().as_u16(), 303);
    assert_eq!(ok.headers()["location"], "/admin");
    let cookie = ok.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    assert_eq!(app.count("sessions").await, sessions + 1);
    let mut b = app.browser();
    b.cookie = Some(cookie);
    let (status, body) = b.call(a::Agents::PATH, &[]).await;
    assert_eq!(status, 200, "the session works for the console: {body}");
}
