//! Drafts, publishing and history (issue 45, part 3), through the console's server functions over
//! real HTTP and visitors' turns to the fake OpenAI upstream: a draft's edits do not reach
//! visitors until published, each answer records the version that wrote it, restoring brings an
//! earlier version back exactly, and bad drafts or stale actions change nothing.

use crate::harness::fixtures::{ADMIN, OPERATOR};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::{agents as a, conversations as c, versions as v};
use parley_app::console::types::{AgentForm, ConversationDetail, VersionOutcome, VersionsView};
use parley_engine::store::agents::{self, versions};
use serde_json::{Value, json};

/// The system message and model of the upstream's last request.
fn last_request(app: &TestApp) -> (String, String) {
    let requests = app.fake.requests();
    let last = requests.last().expect("a model call");
    let system = last["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    (system, last["model"].as_str().unwrap_or_default().to_owned())
}

/// The versions recorded on the conversation's assistant messages, oldest first.
async fn answer_versions(app: &TestApp, conv: &str) -> Vec<Option<i64>> {
    sqlx::query_scalar(
        "SELECT agent_version FROM messages WHERE conversation_id = $1 AND role = 'assistant' ORDER BY created_at",
    )
    .bind(conv)
    .fetch_all(app.db().writer())
    .await
    .unwrap()
}

async fn outcome(b: &mut Browser, path: &str, args: &[(&str, &str)]) -> VersionOutcome {
    let (status, body) = b.call(path, args).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

async fn page(b: &mut Browser, id: &str) -> VersionsView {
    let (status, body) = b.call(v::AgentVersions::PATH, &[("id", id)]).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

#[tokio::test]
async fn a_draft_reaches_visitors_only_when_published_and_restore_brings_a_version_back_exactly() {
    let app = TestApp::builder().with_users(&[ADMIN, OPERATOR]).spawn().await;
    let agent = app.agent("shop", &["ticket_escalation"]).await;
    let first = versions::Behaviour::of(&agent);
    let token = app.visitor("shop").await;
    let mut b = app.signed_in(&ADMIN).await;

    app.fake.push_content("One.");
    let events = app.send(&token, "shop", None, "Hello").await;
    let conv = conversation_id(&events);
    assert!(last_request(&app).0.contains("You are a test agent."));

    // Nothing recorded yet: the page shows the agent as version 1, no draft.
    let view = page(&mut b, &agent.id).await;
    assert_eq!((view.published, view.draft.is_none(), view.history.len()), (1, true, 1));
    assert_eq!(view.form.system_prompt, "You are a test agent.");

    // A bad draft is refused field by field and nothing is stored.
    let bad = AgentForm { capabilities: vec!["teleport".into()], model: " ".into(), ..view.form.clone() };
    let (_, body) = b.call_json(v::SaveAgentDraft::PATH, json!({ "id": agent.id, "form": bad })).await;
    let refused: VersionOutcome = serde_json::from_str(&body).unwrap();
    let fields: Vec<&str> = refused.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["model", "capabilities"], "{body}");
    assert_eq!(app.count("agent_drafts").await, 0);

    // A good draft: stored, visitors still get version 1.
    let draft = AgentForm {
        system_prompt: "You are a test agent.\nAnswer in French.".into(),
        model: "gpt-draft".into(),
        enabled_tools: Some(vec!["escalate_to_human".into()]),
        ..view.form.clone()
    };
    let (_, body) = b.call_json(v::SaveAgentDraft::PATH, json!({ "id": agent.id, "form": draft })).await;
    let saved: VersionOutcome = serde_json::from_str(&body).unwrap();
    assert!(saved.ok && saved.message.contains("Visitors still get version 1"), "{body}");
    app.fake.push_content("Two.");
    app.send(&token, "shop", Some(&conv), "Again").await;
    let (system, model) = last_request(&app);
    assert!(!system.contains("Answer in French"), "the draft reached a visitor: {system}");
    assert_eq!(model, "gpt-4o-mini");

    // The page compares the draft with the published version.
    let view = page(&mut b, &agent.id).await;
    let diff = view.draft.as_ref().expect("a draft").diff.clone();
    let labels: Vec<&str> = diff.fields.iter().map(|f| f.label.as_str()).collect();
    assert_eq!(labels, ["Model", "Tools"]);
    assert_eq!((diff.fields[0].before.as_str(), diff.fields[0].after.as_str()), ("gpt-4o-mini", "gpt-draft"));
    let marked: Vec<(&str, &str)> = diff.prompt.iter().map(|l| (l.kind.as_str(), l.text.as_str())).collect();
    assert!(marked.contains(&("added", "Answer in French.")), "{marked:?}");
    assert_eq!(view.form.model, "gpt-draft", "the form shows the draft");

    // An operator may not see or publish drafts.
    let mut op = app.signed_in(&OPERATOR).await;
    let (status, _) = op.call(v::PublishAgentDraft::PATH, &[("id", &agent.id), ("note", "")]).await;
    assert_ne!(status, 200);
    assert_eq!(app.count("agent_versions").await, 0);

    // Published: visitors get it at once, the answer records version 2.
    let done = outcome(&mut b, v::PublishAgentDraft::PATH, &[("id", &agent.id), ("note", "French speakers")]).await;
    assert!(done.ok && done.message.contains("version 2"), "{done:?}");
    app.fake.push_content("Trois.");
    app.send(&token, "shop", Some(&conv), "Encore").await;
    let (system, model) = last_request(&app);
    assert!(system.contains("Answer in French"), "{system}");
    assert_eq!(model, "gpt-draft");
    assert_eq!(app.count("agent_drafts").await, 0, "the draft is gone once published");
    let history = versions::list(app.db(), &agent.id).await.unwrap();
    let summary: Vec<(i64, Option<&str>, &str, &str)> =
        history.iter().map(|v| (v.version, v.published_by.as_deref(), v.note.as_str(), v.changes.as_str())).collect();
    assert_eq!(
        summary,
        [
            (2, Some("admin@example.com"), "French speakers", "instructions, model, tools"),
            (1, None, "The first version (as the agent was before this change)", ""),
        ]
    );
    assert_eq!(history[1].behaviour, first, "version 1 is the agent as it was");

    // Publishing with no draft, or restoring the version that is live, changes nothing.
    let none = outcome(&mut b, v::PublishAgentDraft::PATH, &[("id", &agent.id), ("note", "")]).await;
    assert!(!none.ok && none.message.contains("no draft"), "{none:?}");
    let same = outcome(&mut b, v::RestoreAgentVersion::PATH, &[("id", &agent.id), ("version", "2")]).await;
    assert!(!same.ok, "{same:?}");
    let missing = outcome(&mut b, v::RestoreAgentVersion::PATH, &[("id", &agent.id), ("version", "9")]).await;
    assert!(!missing.ok, "{missing:?}");
    assert_eq!(app.count("agent_versions").await, 2);

    // Restore version 1: exactly its behaviour, as version 3.
    let back = outcome(&mut b, v::RestoreAgentVersion::PATH, &[("id", &agent.id), ("version", "1")]).await;
    assert!(back.ok && back.message.contains("version 3"), "{back:?}");
    let now = agents::by_id(app.db(), &agent.id).await.unwrap().unwrap();
    assert_eq!((versions::Behaviour::of(&now), now.version), (first.clone(), 3));
    let v3 = versions::get(app.db(), &agent.id, 3).await.unwrap().unwrap();
    assert_eq!((v3.restored_from, v3.note.as_str()), (Some(1), "Restored version 1"));
    app.fake.push_content("Four.");
    app.send(&token, "shop", Some(&conv), "And now?").await;
    let (system, model) = last_request(&app);
    assert!(!system.contains("Answer in French"), "{system}");
    assert_eq!(model, "gpt-4o-mini");

    // Each answer records the version that wrote it.
    assert_eq!(answer_versions(&app, &conv).await, [Some(1), Some(1), Some(2), Some(3)]);
    // The console's transcript shows it (a visitor's message has none).
    let (_, body) = b.call(c::Conversation::PATH, &[("id", &conv)]).await;
    let detail: ConversationDetail = serde_json::from_str(&body).unwrap();
    let shown: Vec<(&str, Option<i64>)> = detail.messages.iter().map(|m| (m.role.as_str(), m.agent_version)).collect();
    assert_eq!(&shown[..2], [("visitor", None), ("assistant", Some(1))]);
    assert_eq!(shown.last(), Some(&("assistant", Some(3))));

    // The agent form publishes at once: a changed prompt there is version 4; an unchanged save
    // records nothing.
    let (_, body) = b.call(a::Agent::PATH, &[("id", &agent.id)]).await;
    let form: AgentForm = serde_json::from_str(&body).unwrap();
    let (_, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": form.clone() })).await;
    assert!(body.contains(&agent.id), "{body}");
    assert_eq!(app.count("agent_versions").await, 3);
    let changed = AgentForm { system_prompt: "You are brief.".into(), ..form };
    let (_, body) = b.call_json(a::SaveAgent::PATH, json!({ "form": changed })).await;
    assert!(body.contains(&agent.id), "{body}");
    let v4 = versions::get(app.db(), &agent.id, 4).await.unwrap().expect("version 4");
    assert_eq!((v4.note.as_str(), v4.changes.as_str()), ("Saved in the agent form", "instructions"));
    let view = page(&mut b, &agent.id).await;
    let numbers: Vec<i64> = view.history.iter().map(|v| v.version).collect();
    assert_eq!((view.published, numbers), (4, vec![4, 3, 2, 1]));
    let v4_diff = &view.history[0].diff.prompt;
    assert!(v4_diff.iter().any(|l| l.kind == "removed" && l.text == "You are a test agent."), "{v4_diff:?}");
}

#[tokio::test]
async fn a_draft_started_before_another_publish_says_so_and_discarding_it_changes_nothing_live() {
    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("desk", &["ticket_escalation"]).await;
    let mut b = app.signed_in(&ADMIN).await;
    let view = page(&mut b, &agent.id).await;
    let draft = AgentForm { system_prompt: "Draft words.".into(), ..view.form.clone() };
    let (_, body) = b.call_json(v::SaveAgentDraft::PATH, json!({ "id": agent.id, "form": draft })).await;
    assert!(serde_json::from_str::<Value>(&body).unwrap()["ok"] == json!(true), "{body}");
    // Someone publishes through the agent form meanwhile.
    let (_, body) = b.call(a::Agent::PATH, &[("id", &agent.id)]).await;
    let form: AgentForm = serde_json::from_str(&body).unwrap();
    b.call_json(a::SaveAgent::PATH, json!({ "form": AgentForm { model: "gpt-other".into(), ..form } })).await;
    let view = page(&mut b, &agent.id).await;
    let d = view.draft.expect("the draft stays");
    assert_eq!((d.base_version, view.published), (1, 2));
    assert_eq!(d.updated_by.as_deref(), Some("admin@example.com"));
    // Discarded: the live agent is untouched, the draft gone.
    let gone = outcome(&mut b, v::DiscardAgentDraft::PATH, &[("id", &agent.id)]).await;
    assert!(gone.ok, "{gone:?}");
    let live = agents::by_id(app.db(), &agent.id).await.unwrap().unwrap();
    assert_eq!((live.system_prompt.as_str(), live.provider.model.as_str()), ("You are a test agent.", "gpt-other"));
    assert!(versions::draft(app.db(), &agent.id).await.unwrap().is_none());
    let again = outcome(&mut b, v::DiscardAgentDraft::PATH, &[("id", &agent.id)]).await;
    assert!(!again.ok);
}
