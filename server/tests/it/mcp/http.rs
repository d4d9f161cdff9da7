//! The MCP server over Streamable HTTP through the official Rust SDK's client (`rmcp`): the base
//! and detail feature sets, news and trending questions in both output formats, tokens that are
//! refused or revoked, agents kept apart, argument errors as tool errors, usage in the ledger.

use super::*;

/// `SearchKnowledgeBase` gives the matching passages, or with `return: documents` the whole
/// articles they come from (once each), in both output formats.
#[tokio::test]
async fn search_returns_fragments_or_whole_documents() {
    let app = spawn_app().await;
    let agent = app.agent("mcp-docs", CAPABILITIES).await;
    let sections: Vec<String> = (1..=12)
        .map(|i| {
            let line = format!("优才计划的第{i}项要求：申请人须提交第{i}类证明文件，并说明相关工作经验与学历背景。");
            format!("## 第{i}部分\n\n{}", line.repeat(3))
        })
        .collect();
    let body = sections.join("\n\n");
    let base = add_base(&app, &agent, "Immigration", &[("QMAS — the whole guide", &body)]).await;
    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;
    let client = connect(&app, "", Some(&t)).await.unwrap();
    let args = |mode: Option<&str>| {
        let mut a = json!({"knowledge_base_id": base.id, "query": "优才计划 证明文件 工作经验", "limit": 5});
        if let Some(mode) = mode {
            a["return"] = json!(mode);
        }
        a
    };
    let fragments = ok_json(&call(&client, "SearchKnowledgeBase", args(None)).await);
    let passages = fragments["results"].as_array().unwrap();
    assert!(!passages.is_empty(), "{fragments}");
    assert!(passages.iter().all(|p| p["text"].as_str().unwrap().len() < body.len()));
    let documents = ok_json(&call(&client, "SearchKnowledgeBase", args(Some("documents"))).await);
    assert_eq!(documents["return"], "documents");
    let whole = documents["results"].as_array().unwrap();
    assert_eq!(whole.len(), 1, "one entry per article: {documents}");
    assert_eq!(whole[0]["text"], body.as_str());
    let refused = call(&client, "SearchKnowledgeBase", args(Some("everything"))).await;
    assert_eq!(refused.is_error, Some(true));
    client.cancel().await.unwrap();

    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Text).await;
    let readable = connect(&app, "", Some(&t)).await.unwrap();
    let text = text(&call(&readable, "SearchKnowledgeBase", args(Some("documents"))).await);
    assert!(
        text.contains("### 1. QMAS — the whole guide") && text.contains("## 第12部分\n\n优才计划的第12项要求"),
        "{text}"
    );
    readable.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_initialize_base_list_and_search() {
    let app = spawn_app().await;
    let (agent, base) = agent_with_content(&app, "mcp-a").await;
    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;
    let client = connect(&app, "", Some(&t)).await.expect("initialize with a bearer token");
    let info = client.peer_info().expect("initialize result");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("parley"));
    assert!(info.capabilities.tools.is_some());

    let tools = client.list_all_tools().await.unwrap();
    let listed: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        listed,
        [
            "ListAvailableKnowledgeBases",
            "SearchKnowledgeBase",
            "GetNewsForDate",
            "GetTrendingQuestions",
            "check_off_topic",
            "get_current_datetime",
            "fetch_immigration_news"
        ]
    );
    assert_sep_986(&listed);
    let search = tools.iter().find(|t| t.name == "SearchKnowledgeBase").unwrap();
    assert!(search.description.as_deref().unwrap().contains("ListAvailableKnowledgeBases"));
    assert!(search.input_schema["required"].as_array().unwrap().contains(&json!("knowledge_base_id")));

    let bases = ok_json(&call(&client, "ListAvailableKnowledgeBases", json!({})).await);
    assert_eq!(bases["knowledge_bases"][0]["id"], base.id.as_str());
    let found = ok_json(
        &call(&client, "SearchKnowledgeBase", json!({"knowledge_base_id": base.id, "query": "优才 条件"})).await,
    );
    assert_eq!(found["results"][0]["title"], "QMAS — eligibility");
    assert_eq!(found["results"][0]["source_url"], "https://www.immd.gov.hk/qmas");
    // A registry tool, through the registry.
    let now = ok_json(&call(&client, "get_current_datetime", json!({"format": "date"})).await);
    assert_eq!(now["timezone"], "Asia/Hong_Kong");
    client.cancel().await.unwrap();

    // The calls are counted in the usage ledger like the widget's.
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT model, outcome FROM usage_ledger WHERE provider = 'mcp' AND agent_id = $1 ORDER BY created_at, id",
    )
    .bind(&agent.id)
    .fetch_all(app.db().pool())
    .await
    .unwrap();
    let models: Vec<&str> = rows.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(models, ["ListAvailableKnowledgeBases", "SearchKnowledgeBase", "get_current_datetime"]);
    assert!(rows.iter().all(|(_, o)| o == "ok"));
}

#[tokio::test]
async fn mcp_detail_lists_one_search_tool_per_knowledge_base() {
    let app = spawn_app().await;
    let (agent, base) = agent_with_content(&app, "mcp-d").await;
    let t = token(&app, &agent, FeatureSet::Detail, OutputFormat::Raw).await;
    let client = connect(&app, &format!("?token={t}"), None).await.expect("initialize with ?token=");
    let first = tool_names(&client).await;
    let own = format!("SearchKnowledgeBase-{}", &base.id[..8]);
    assert_eq!(
        first,
        [
            own.as_str(),
            "GetNewsForDate",
            "GetTrendingQuestions",
            "check_off_topic",
            "get_current_datetime",
            "fetch_immigration_news"
        ]
    );
    assert_sep_986(&first);
    let found = ok_json(&call(&client, &own, json!({"query": "优才 条件"})).await);
    assert_eq!(found["knowledge_base"]["id"], base.id.as_str());
    assert_eq!(found["results"][0]["title"], "QMAS — eligibility");

    // A knowledge base added later shows up at the next tools/list, under its own name.
    let second =
        add_base(&app, &agent, "Tax", &[("Salaries tax", "Salaries tax is charged on income from Hong Kong.")]).await;
    let now = tool_names(&client).await;
    let searches: Vec<&String> = now.iter().filter(|n| n.starts_with("SearchKnowledgeBase-")).collect();
    assert_eq!(searches.len(), 2, "{now:?}");
    assert!(searches.iter().any(|n| second.id.starts_with(n.trim_start_matches("SearchKnowledgeBase-"))));
    assert!(
        !now.contains(&"ListAvailableKnowledgeBases".to_owned()) && !now.contains(&"SearchKnowledgeBase".to_owned())
    );
    assert_sep_986(&now);
    let tax_tool =
        searches.iter().find(|n| second.id.starts_with(n.trim_start_matches("SearchKnowledgeBase-"))).unwrap();
    let tax = ok_json(&call(&client, tax_tool, json!({"query": "salaries tax"})).await);
    assert_eq!(tax["results"][0]["title"], "Salaries tax");
    client.cancel().await.unwrap();

    // The request's `feature_set` overrides the token's default.
    let base_client = connect(&app, &format!("?token={t}&feature_set=base"), None).await.unwrap();
    assert!(
        tool_names(&base_client)
            .await
            .starts_with(&["ListAvailableKnowledgeBases".into(), "SearchKnowledgeBase".into()])
    );
    base_client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_news_and_trending_in_both_output_formats() {
    let app = spawn_app().await;
    let (agent, _) = agent_with_content(&app, "mcp-n").await;
    // Visitors ask through the widget; the answers must not leak into the trending list.
    let visitor = app.visitor("mcp-n").await;
    for question in ["优才计划的条件是什么？", "优才计划的条件是什么？", "How do I renew my IANG visa?"]
    {
        app.fake.push_content("SECRET-ANSWER-TEXT");
        app.send(&visitor, "mcp-n", None, question).await;
    }
    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;

    let raw = connect(&app, &format!("?token={t}"), None).await.unwrap();
    let day = ok_json(&call(&raw, "GetNewsForDate", json!({"date": NEWS_DIGEST})).await);
    assert_eq!((day["date"].as_str(), day["items"][0]["title"].as_str()), (Some(NEWS_DIGEST), Some("优才计划新措施")));
    assert_eq!(day["news_date"], NEWS_DAY);
    let today = ok_json(&call(&raw, "GetNewsForDate", json!({})).await);
    assert_eq!(today["items"], json!([]));
    assert_eq!(today["latest_date"], NEWS_DIGEST);
    let trending = ok_json(&call(&raw, "GetTrendingQuestions", json!({})).await);
    assert_eq!(trending["categories"][0]["category"], "QMAS");
    assert_eq!(trending["categories"][0]["questions"][0], json!({"question": "优才计划的条件是什么？", "count": 2}));
    assert_eq!(trending["categories"][1]["category"], "IANG");
    assert!(!trending.to_string().contains("SECRET-ANSWER"));
    raw.cancel().await.unwrap();

    let readable = connect(&app, &format!("?token={t}&output=text"), None).await.unwrap();
    let day = call(&readable, "GetNewsForDate", json!({"date": NEWS_DIGEST})).await;
    assert_eq!(day.is_error, Some(false));
    let day = text(&day);
    assert!(
        day.starts_with(&format!("## News digest for {NEWS_DIGEST} (the news of {NEWS_DAY})"))
            && day.contains("- **优才计划新措施** (入境事务处, QMAS)"),
        "{day}"
    );
    let trending = text(&call(&readable, "GetTrendingQuestions", json!({})).await);
    assert!(trending.contains("**QMAS**\n- 优才计划的条件是什么？ (×2)"), "{trending}");
    let bases = text(&call(&readable, "ListAvailableKnowledgeBases", json!({})).await);
    assert!(bases.starts_with("## Knowledge bases") && bases.contains("**Immigration**"), "{bases}");
    let other = text(&call(&readable, "get_current_datetime", json!({})).await);
    assert!(other.contains("- **timezone**: Asia/Hong_Kong") && !other.contains("```"), "{other}");
    readable.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_refuses_bad_tokens_and_keeps_agents_apart() {
    let app = spawn_app().await;
    let (a, base_a) = agent_with_content(&app, "mcp-x").await;
    let (b, _) = agent_with_content(&app, "mcp-y").await;
    let t_a = token(&app, &a, FeatureSet::Detail, OutputFormat::Raw).await;
    let t_b = token(&app, &b, FeatureSet::Detail, OutputFormat::Raw).await;

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}});
    let post = |query: String| {
        app.client
            .post(app.url(&format!("/mcp{query}")))
            .header("Accept", "application/json, text/event-stream")
            .json(&init)
            .send()
    };
    assert_eq!(post(String::new()).await.unwrap().status(), 401);
    assert_eq!(post("?token=pm_not-a-token".into()).await.unwrap().status(), 401);
    assert_eq!(post(format!("?token={t_a}&feature_set=everything")).await.unwrap().status(), 400);
    let ok = post(format!("?token={t_a}")).await.unwrap();
    assert_eq!(ok.status(), 200);
    assert_eq!(ok.json::<Value>().await.unwrap()["result"]["serverInfo"]["name"], "parley");
    assert!(connect(&app, "", Some("pm_not-a-token")).await.is_err(), "the SDK client is refused too");

    // Agent B's token sees B's tools only, and cannot reach A's knowledge. (Ids are time-ordered:
    // both agents' bases may well start with the same 8 characters; each name means the caller's own.)
    let client_b = connect(&app, "", Some(&t_b)).await.unwrap();
    let names_b = tool_names(&client_b).await;
    let own_b = names_b.iter().find(|n| n.starts_with("SearchKnowledgeBase-")).unwrap().clone();
    assert_eq!(names_b.iter().filter(|n| n.starts_with("SearchKnowledgeBase-")).count(), 1, "{names_b:?}");
    let found = ok_json(&call(&client_b, &own_b, json!({"query": "优才"})).await);
    assert_ne!(found["knowledge_base"]["id"], base_a.id.as_str());
    let a_tool = format!("SearchKnowledgeBase-{}", base_a.id);
    let refused = client_b
        .call_tool(
            CallToolRequestParams::new(a_tool.clone())
                .with_arguments(json!({"query": "优才"}).as_object().cloned().unwrap()),
        )
        .await;
    assert!(refused.is_err(), "another agent's tool is unknown: {refused:?}");
    let escalate = client_b.call_tool(CallToolRequestParams::new("escalate_to_human")).await;
    assert!(escalate.is_err(), "visitor-bound tools are not offered over MCP");
    client_b.cancel().await.unwrap();
    let base_b = connect(&app, &format!("?feature_set=base&token={t_b}"), None).await.unwrap();
    let other = call(&base_b, "SearchKnowledgeBase", json!({"knowledge_base_id": base_a.id, "query": "优才"})).await;
    assert_eq!(other.is_error, Some(true));
    assert!(text(&other).contains("ListAvailableKnowledgeBases"), "{}", text(&other));
    base_b.cancel().await.unwrap();

    // A revoked token stops working at once.
    assert_eq!(mcp_tokens::list(app.db(), None).await.unwrap().len(), 2);
    let id = mcp_tokens::list(app.db(), Some(&a.id)).await.unwrap()[0].id.clone();
    assert!(mcp_tokens::revoke(app.db(), &id, Some(&a.id), SystemClock.now_ms()).await.unwrap());
    assert_eq!(post(format!("?token={t_a}")).await.unwrap().status(), 401);
}

#[tokio::test]
async fn mcp_invalid_arguments_are_tool_errors() {
    let app = spawn_app().await;
    let (agent, base) = agent_with_content(&app, "mcp-v").await;
    let t = token(&app, &agent, FeatureSet::Base, OutputFormat::Raw).await;
    let client = connect(&app, "", Some(&t)).await.unwrap();
    for (tool, args, needle) in [
        ("SearchKnowledgeBase", json!({"knowledge_base_id": base.id}), "query"),
        ("SearchKnowledgeBase", json!({"knowledge_base_id": base.id, "query": "q", "limit": 99}), "99"),
        ("GetNewsForDate", json!({"date": "yesterday"}), "yesterday"),
        ("GetNewsForDate", json!({"date": "2025-02-30"}), "calendar date"),
        ("GetTrendingQuestions", json!({"top": 3}), "top"),
        ("get_current_datetime", json!({"format": 7}), "format"),
    ] {
        let result = call(&client, tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        let body: Value = serde_json::from_str(&text(&result)).unwrap();
        assert_eq!(body["error"], "invalid_arguments", "{tool}: {body}");
        assert!(body["message"].as_str().unwrap().contains(needle), "{tool}: {body}");
    }
    client.cancel().await.unwrap();
    let errors: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM usage_ledger WHERE provider = 'mcp' AND outcome = 'error'")
            .fetch_one(app.db().pool())
            .await
            .unwrap();
    assert_eq!(errors, 6);
}

/// A token limited to some modules (seed 004: what the customer bought) lists and calls only
/// their tools; every other tool is unknown to it.
#[tokio::test]
async fn a_token_limited_to_modules_sees_and_calls_only_their_tools() {
    use parley_engine::store::mcp_tokens::Module;
    let app = spawn_app().await;
    let (agent, base) = agent_with_content(&app, "mcp-m").await;
    let now = SystemClock.now_ms();
    let news_only = [Module::News];
    let (_, t) =
        mcp_tokens::create(app.db(), &agent.id, "news", FeatureSet::Base, OutputFormat::Raw, Some(&news_only), now)
            .await
            .unwrap();
    let client = connect(&app, &format!("?token={t}"), None).await.unwrap();
    let names = tool_names(&client).await;
    assert_eq!(names, ["GetNewsForDate", "fetch_immigration_news"], "news only");
    let day = ok_json(&call(&client, "GetNewsForDate", json!({"date": NEWS_DIGEST})).await);
    assert_eq!(day["items"][0]["title"], "优才计划新措施");
    for outside in ["GetTrendingQuestions", "ListAvailableKnowledgeBases", "get_current_datetime"] {
        let refused = client.call_tool(CallToolRequestParams::new(outside)).await;
        assert!(refused.is_err(), "{outside} is outside the token's modules: {refused:?}");
    }
    let search = client
        .call_tool(
            CallToolRequestParams::new("SearchKnowledgeBase")
                .with_arguments(json!({"knowledge_base_id": base.id, "query": "优才"}).as_object().cloned().unwrap()),
        )
        .await;
    assert!(search.is_err(), "{search:?}");
    client.cancel().await.unwrap();

    // Knowledge and tools, in the detail feature set: no news, no trending.
    let some = [Module::Knowledge, Module::Tools];
    let (_, t) = mcp_tokens::create(app.db(), &agent.id, "kb", FeatureSet::Detail, OutputFormat::Raw, Some(&some), now)
        .await
        .unwrap();
    let client = connect(&app, &format!("?token={t}"), None).await.unwrap();
    let names = tool_names(&client).await;
    assert!(names[0].starts_with("SearchKnowledgeBase-") && names.contains(&"get_current_datetime".to_owned()));
    assert!(
        !names.iter().any(|n| n == "GetNewsForDate" || n == "GetTrendingQuestions" || n == "fetch_immigration_news")
    );
    client.cancel().await.unwrap();
}
