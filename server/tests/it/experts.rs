//! Coordinator agents end to end: experts called through `invoke_*` tools run as nested model
//! calls (real HTTP to the fake upstream), concurrently, announced by `agent_start` /
//! `agent_complete`, and paid from the same conversation budget.

use std::time::Duration;

use crate::harness::*;
use parley_engine::store::agents::AgentLimits;
use parley_engine::store::{tool_calls, usage};
use parley_protocol::StreamEvent;
use parley_server::fake_openai::Reply;
use serde_json::json;

fn progress(events: &[(u64, StreamEvent)]) -> Vec<String> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::AgentStart(a) => Some(format!("start:{}", a.agent)),
            StreamEvent::AgentComplete(a) => Some(format!("complete:{}:{}", a.agent, a.ok == Some(true))),
            _ => None,
        })
        .collect()
}

fn two_experts() -> Reply {
    Reply::ToolCalls(vec![
        ("invoke_policy_expert".into(), json!({"query": "优才计划的申请条件", "category": "QMAS"}).to_string()),
        ("invoke_assessment_expert".into(), json!({"userInfo": {"age": 32, "education": "master"}}).to_string()),
    ])
}

#[tokio::test]
async fn a_coordinator_runs_its_experts_concurrently_and_answers_from_them() {
    let (app, token) = spawn_chat("coord", &["expert_team"]).await;
    app.fake.push(two_experts());
    // Both experts answer after a second: run one after the other they would take two.
    app.fake.push(Reply::Delayed(Duration::from_secs(1), Box::new(Reply::text("Policy: QMAS needs a degree."))));
    app.fake.push(Reply::Delayed(Duration::from_secs(1), Box::new(Reply::text("Assessment: high fit."))));
    app.fake.push_content("You look like a good fit for QMAS. How many years have you worked?");

    let sending = app.send(&token, "coord", None, "我32岁，硕士，想申请优才");
    let watching = async {
        eventually(async || app.fake.served() >= 1).await;
        // The two expert calls are both under way well before either could have answered.
        tokio::time::timeout(Duration::from_millis(900), eventually(async || app.fake.requests().len() == 3))
            .await
            .expect("the experts' calls were made at the same time");
    };
    let (events, ()) = tokio::join!(sending, watching);

    assert_eq!(
        progress(&events),
        [
            "start:policy_expert",
            "start:assessment_expert",
            "complete:policy_expert:true",
            "complete:assessment_expert:true"
        ]
    );
    assert_eq!(
        shape(&events),
        [
            "message_start",
            "usage",
            "agent_start",
            "agent_start",
            "usage",
            "usage",
            "agent_complete",
            "agent_complete",
            "token*",
            "usage",
            "message_end:complete"
        ]
    );
    assert!(!events.iter().any(|(_, e)| matches!(e, StreamEvent::ToolCall(_))), "experts are not tool chips");
    assert_eq!(text(&events), "You look like a good fit for QMAS. How many years have you worked?");

    let requests = app.fake.requests();
    // The coordinator was told about its team and the state report, and offered the experts.
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("invoke_policy_expert") && system.contains("<consulting_state>"), "{system}");
    let offered: Vec<&str> =
        requests[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(offered.len(), 6, "{offered:?}");
    // Each expert call has the expert's own instructions, its task as data and no tools (this
    // agent has no knowledge or memory capability).
    for r in &requests[1..3] {
        let prompt = r["messages"][0]["content"].as_str().unwrap();
        assert!(prompt.contains("政策专家") || prompt.contains("资格评估专家"), "{prompt}");
        assert!(r["messages"][1]["content"].as_str().unwrap().contains("Task from the coordinator"));
        assert!(r.get("tools").is_none());
        assert!(r["max_tokens"].as_u64().is_some() || r["max_completion_tokens"].as_u64().is_some(), "{r}");
    }
    // The coordinator's second call carries both experts' answers.
    let tool_answers = tool_results(&requests[3]);
    let mut experts: Vec<&str> = tool_answers.iter().map(|a| a["expert"].as_str().unwrap()).collect();
    experts.sort();
    assert_eq!(experts, ["assessment_expert", "policy_expert"]);
    assert!(tool_answers.iter().all(|a| a["ok"] == true && !a["answer"].as_str().unwrap().is_empty()));

    // Four upstream calls, all in the conversation's ledger; the console sees the expert calls.
    let conv = conversation_id(&events);
    app.engine().flush().await;
    let ledger = usage::of_conversation(app.db(), &conv).await.unwrap();
    assert_eq!(ledger.len(), 4);
    let total: f64 = ledger.iter().map(|r| r.cost_usd).sum();
    let last = usages(&events).last().copied();
    assert!((last.unwrap().conversation_cost_usd - total).abs() < 1e-12);
    let calls = tool_calls::of_conversation(app.db(), &conv).await.unwrap();
    assert_eq!(calls.len(), 2);
}

#[tokio::test]
async fn experts_pay_from_the_conversation_budget() {
    let app = spawn_app().await;
    let agent = app.agent("coord", &["expert_team"]).await;
    // Room for the coordinator's first call and one expert, not two at once.
    app.set_limits(&agent.id, AgentLimits { budget_usd: 0.0004, ..Default::default() }).await;
    let token = app.visitor("coord").await;
    app.fake.push(two_experts());
    app.fake.push(Reply::Delayed(Duration::from_millis(200), Box::new(Reply::text("Policy answer."))));
    app.fake.push_content("Here is what I found.");

    let events = app.send(&token, "coord", None, "优才条件？");
    let events = events.await;
    let done = progress(&events);
    assert_eq!(&done[..2], ["start:policy_expert", "start:assessment_expert"]);
    let mut completes = done[2..].to_vec();
    completes.sort();
    assert_eq!(completes.iter().filter(|c| c.ends_with(":false")).count(), 1, "one expert was refused: {done:?}");
    assert_eq!(app.fake.served(), 3, "coordinator, one expert, coordinator");
    let refused = tool_messages(&app.fake.requests()[2])
        .into_iter()
        .find(|c| c.contains("\"ok\":false"))
        .expect("the refused expert's result");
    assert!(refused.contains("BUDGET_EXCEEDED"), "{refused}");
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete");
}

#[tokio::test]
async fn a_tool_that_panics_inside_an_expert_does_not_hold_the_conversation() {
    let explode = TestTool {
        name: "explode",
        description: "Always panics.",
        run: || Box::pin(async { panic!("a bug in a tool") }),
    };
    let app = TestApp::builder().registry(registry_with(vec![explode])).spawn().await;
    app.agent("coord", &["expert_team", "testing"]).await;
    // The policy expert may call the panicking tool.
    sqlx::query("UPDATE experts SET tools = $1 WHERE name = 'policy_expert'")
        .bind(r#"["explode"]"#)
        .execute(app.db().writer())
        .await
        .unwrap();
    app.engine().reload_prices().await.unwrap();
    let token = app.visitor("coord").await;
    app.fake.push(Reply::ToolCalls(vec![("invoke_policy_expert".into(), json!({"query": "QMAS"}).to_string())]));
    app.fake.push_tool_call("explode", json!({}));
    app.fake.push_content("The policy tool failed; from what I know, QMAS needs a degree.");
    app.fake.push_content("QMAS usually needs a degree.");

    let events = tokio::time::timeout(Duration::from_secs(20), app.send(&token, "coord", None, "优才计划的条件？"))
        .await
        .expect("the answer ends");
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete", "{:?}", shape(&events));
    assert_eq!(progress(&events), ["start:policy_expert", "complete:policy_expert:true"]);
    // The expert was told its tool crashed, without the panic's text.
    let told = tool_messages(&app.fake.requests()[2]);
    assert!(told.iter().any(|m| m.contains("the tool crashed")), "{told:?}");
    assert!(!told.iter().any(|m| m.contains("a bug in a tool")), "{told:?}");
    // The conversation takes the next message.
    app.fake.push_content("Anything else?");
    let next = tokio::time::timeout(
        Duration::from_secs(20),
        app.send(&token, "coord", Some(&conversation_id(&events)), "谢谢"),
    )
    .await
    .expect("the next answer ends");
    assert_eq!(shape(&next).last().unwrap(), "message_end:complete");
}

/// `enabled_tools` narrows a coordinator's experts like its other tools.
#[tokio::test]
async fn enabled_tools_narrow_the_experts_offered() {
    let app = spawn_app().await;
    let agent = fixtures::agent("coord", fixtures::openai_provider(&app.fake))
        .capabilities(&["expert_team", "ticket_escalation"])
        .enabled_tools(&["invoke_policy_expert", "escalate_to_human"]);
    app.insert_agent(agent).await;
    let token = app.visitor("coord").await;
    app.fake.push_content("Ask me about QMAS.");
    app.send(&token, "coord", None, "hello").await;
    let offered: Vec<String> = app.fake.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered, ["escalate_to_human", "invoke_policy_expert"], "the assessment expert is not enabled");
    let system = app.fake.requests()[0]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("invoke_policy_expert") && !system.contains("invoke_assessment_expert"), "{system}");
}

/// An expert's own tool calls are recorded under the coordinator's call (the console lists them
/// right after it; the visitor's transcript keeps only the answer's own calls), and the citations
/// its knowledge search found reach the visitor with the answer.
#[tokio::test]
async fn an_experts_tool_calls_are_recorded_and_its_citations_reach_the_visitor() {
    use crate::harness::fixtures::ADMIN;
    use leptos::server_fn::ServerFn;
    use parley_engine::engine::clock::{Clock, SystemClock};
    use parley_engine::store::knowledge::{self, NewArticle};
    use parley_engine::store::messages;
    use parley_protocol::Block;

    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let agent = app.agent("coord", &["expert_team", "knowledge_search"]).await;
    let now = SystemClock.now_ms();
    let base = knowledge::create_base(
        app.db(),
        &agent.id,
        &knowledge::BaseFields { name: "Immigration", ..Default::default() },
        now,
    )
    .await
    .unwrap();
    let article = NewArticle {
        title: "QMAS — eligibility".into(),
        category: Some("QMAS".into()),
        kind: "article".into(),
        body: "优才计划申请人须年满18岁，具备良好的中文或英文能力。".into(),
        source_url: Some("https://www.immd.gov.hk/qmas".into()),
    };
    app.engine().services().knowledge.add_articles(&base.id, &[article], now).await.unwrap();
    sqlx::query("UPDATE experts SET tools = $1 WHERE name = 'policy_expert'")
        .bind(r#"["search_knowledge"]"#)
        .execute(app.db().writer())
        .await
        .unwrap();
    app.engine().reload_prices().await.unwrap();
    let token = app.visitor("coord").await;
    app.fake.push(Reply::ToolCalls(vec![("invoke_policy_expert".into(), json!({"query": "优才 条件"}).to_string())]));
    app.fake.push_tool_call("search_knowledge", json!({"query": "优才计划 条件"}));
    app.fake.push_content("Policy: applicants must be 18 or older.");
    app.fake.push_content("For QMAS you must be 18 or older.");
    let events = app.send(&token, "coord", None, "优才计划的条件？").await;
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete", "{:?}", shape(&events));
    assert!(!events.iter().any(|(_, e)| matches!(e, StreamEvent::ToolCall(_))), "no tool chips for experts' calls");
    let cited = blocks(&events).into_iter().find_map(|b| if let Block::Citations(c) = b { Some(c) } else { None });
    assert_eq!(cited.expect("the expert's citations").sources[0].title, "QMAS — eligibility");

    let conv = conversation_id(&events);
    app.engine().flush().await;
    let answer = messages::list(app.db(), &conv).await.unwrap()[1].id.clone();
    let recorded = tool_calls::of_message(app.db(), &answer).await.unwrap();
    let invoke = recorded.iter().find(|t| t.name == "invoke_policy_expert").expect("the coordinator's call");
    let search = recorded.iter().find(|t| t.name == "search_knowledge").expect("the expert's call");
    assert_eq!(search.parent_call_id.as_deref(), Some(invoke.call_id.as_str()));
    assert_eq!(invoke.parent_call_id, None);
    assert!(search.result.as_deref().unwrap_or_default().contains("QMAS"), "{search:?}");
    assert_eq!(tool_calls::of_conversation(app.db(), &conv).await.unwrap().len(), 1, "the visitor's view");

    let mut admin = app.signed_in(&ADMIN).await;
    let (status, body) =
        admin.call(parley_app::console::api::conversations::Conversation::PATH, &[("id", &conv)]).await;
    assert_eq!(status, 200, "{body}");
    let detail: serde_json::Value = serde_json::from_str(&body).unwrap();
    let tools = detail["messages"][1]["tools"].as_array().unwrap();
    let listed: Vec<(&str, Option<&str>)> =
        tools.iter().map(|t| (t["name"].as_str().unwrap(), t["under"].as_str())).collect();
    assert_eq!(listed, [("invoke_policy_expert", None), ("search_knowledge", Some("invoke_policy_expert"))]);
}

/// Expert teams per coordinator (issue 18): one coordinator gets its own copy of the policy
/// expert with its own prompt; the other keeps the shared one; deleting the copy gives the
/// shared one back. A coordinator's `enabled_tools` choose its team.
#[tokio::test]
async fn a_coordinator_has_its_own_copy_of_an_expert() {
    use crate::harness::fixtures::{ADMIN, agent, openai_provider};
    use leptos::server_fn::ServerFn;
    use parley_app::console::api::experts as x;
    use parley_app::console::types::ExpertForm;
    use serde_json::Value;

    let app = TestApp::builder().with_users(&[ADMIN]).spawn().await;
    let acme = app.agent("coord-acme", &["expert_team"]).await;
    app.agent("coord-other", &["expert_team"]).await;
    let plain = app.agent("not-coord", &["datetime"]).await;
    app.insert_agent(
        agent("coord-small", openai_provider(&app.fake))
            .capabilities(&["expert_team"])
            .enabled_tools(&["invoke_policy_expert"]),
    )
    .await;
    let mut admin = app.signed_in(&ADMIN).await;

    // Only a coordinator gets a copy; only a shared expert is copied.
    let (status, body) = admin.call(x::CopyExpert::PATH, &[("name", "policy_expert"), ("agent_id", &plain.id)]).await;
    assert_eq!(status, 422, "{body}");
    let (status, _) = admin.call(x::CopyExpert::PATH, &[("name", "no_such_expert"), ("agent_id", &acme.id)]).await;
    assert_eq!(status, 404);
    let (status, body) = admin.call(x::CopyExpert::PATH, &[("name", "policy_expert"), ("agent_id", &acme.id)]).await;
    assert_eq!(status, 200, "{body}");
    let copy: String = serde_json::from_str(&body).unwrap();
    assert_eq!(copy, "policy_expert.coord-acme");
    let (status, _) = admin.call(x::CopyExpert::PATH, &[("name", &copy), ("agent_id", &acme.id)]).await;
    assert_eq!(status, 404, "a copy is not copied again");

    // The copy gets its own prompt.
    let (status, body) = admin.call(x::ExpertEditor::PATH, &[("name", &copy)]).await;
    assert_eq!(status, 200, "{body}");
    let (form, _, coordinators): (ExpertForm, Value, Value) = serde_json::from_str(&body).unwrap();
    assert_eq!(form.copy_of, Some(("coord-acme".to_owned(), "policy_expert".to_owned())));
    let keys: Vec<&str> = coordinators.as_array().unwrap().iter().map(|c| c[1].as_str().unwrap()).collect();
    assert!(keys.contains(&"coord-small") && !keys.contains(&"not-coord"), "{keys:?}");
    let edit = ExpertForm { system_prompt: "You are the Acme policy expert. Answer in one line.".into(), ..form };
    let (status, body) = admin.call_json(x::SaveExpert::PATH, serde_json::json!({ "form": edit })).await;
    assert!(status == 200 && body.contains("\"errors\":[]"), "{body}");
    let (_, body) = admin.call(x::Experts::PATH, &[]).await;
    let list: Value = serde_json::from_str(&body).unwrap();
    let row = list.as_array().unwrap().iter().find(|e| e["name"] == copy.as_str()).unwrap();
    assert_eq!((row["agent"].as_str(), row["based_on"].as_str()), (Some("coord-acme"), Some("policy_expert")));

    // Acme's coordinator calls its copy under the shared tool's name; the other the shared one.
    let expert_prompt = |app: &TestApp| {
        let requests = app.fake.requests();
        requests[requests.len() - 2]["messages"][0]["content"].as_str().unwrap().to_owned()
    };
    for (key, own) in [("coord-acme", true), ("coord-other", false)] {
        app.fake.push(Reply::ToolCalls(vec![(
            "invoke_policy_expert".into(),
            json!({"query": "优才计划的申请条件"}).to_string(),
        )]));
        app.fake.push_content("QMAS needs a degree.");
        app.fake.push_content("You need a degree for QMAS.");
        let token = app.visitor(key).await;
        let events = app.send(&token, key, None, "优才需要什么条件？").await;
        assert_eq!(progress(&events), ["start:policy_expert", "complete:policy_expert:true"], "{key}");
        let prompt = expert_prompt(&app);
        assert_eq!(prompt.contains("Acme policy expert"), own, "{key}: {prompt}");
        assert_eq!(prompt.contains("政策专家"), !own, "{key}: {prompt}");
    }

    // `enabled_tools` chooses the team: the small coordinator is offered one expert only.
    app.fake.push_content("Hello.");
    let token = app.visitor("coord-small").await;
    app.send(&token, "coord-small", None, "hi").await;
    let last = app.fake.requests().pop().unwrap();
    let offered: Vec<&str> =
        last["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(offered, ["invoke_policy_expert"]);
    let system = last["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("invoke_policy_expert") && !system.contains("invoke_strategist"), "{system}");

    // Deleted: Acme has the shared expert again.
    let (status, body) = admin.call(x::DeleteExpertCopy::PATH, &[("name", &copy)]).await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = admin.call(x::DeleteExpertCopy::PATH, &[("name", "policy_expert")]).await;
    assert_eq!(status, 404, "a shared expert is not deleted");
    app.fake.push(Reply::ToolCalls(vec![("invoke_policy_expert".into(), json!({"query": "QMAS"}).to_string())]));
    app.fake.push_content("QMAS needs a degree.");
    app.fake.push_content("A degree.");
    let token = app.visitor("coord-acme").await;
    app.send(&token, "coord-acme", None, "QMAS?").await;
    assert!(expert_prompt(&app).contains("政策专家"));
}
