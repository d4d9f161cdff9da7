//! The immigration-consulting vertical end to end: the seeded agent (its demo knowledge and news)
//! driven by a scripted fake OpenAI server, knowledge with citations, payments (webhook, sandbox
//! page, server-side expiry, live block updates) and visitor memory.

use crate::harness::fixtures::ADMIN;
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_engine::engine::clock::{Clock, ManualClock};
use parley_engine::store::orders;
use parley_protocol::{Block, PaymentStatus, StreamEvent, ToolCallStatus, Transcript};
use serde_json::{Value, json};

const AGENT: &str = "demo-immigration";

/// The server (with the sandbox payment provider), with the seeded immigration agent pointed at
/// the fake upstream, and a visitor's token.
async fn setup(builder: TestAppBuilder) -> (TestApp, String) {
    let app = builder.payments_sandbox().spawn().await;
    sqlx::query("UPDATE agents SET provider = 'openai', base_url = $1, model = 'gpt-4o-mini' WHERE public_key = $2")
        .bind(app.fake.base_url())
        .bind(AGENT)
        .execute(app.db().writer())
        .await
        .unwrap();
    app.engine().agents_changed();
    let token = app.visitor(AGENT).await;
    (app, token)
}

/// The last tool message the model saw in request `n`.
fn tool_result(app: &TestApp, n: usize) -> Value {
    tool_results(&app.fake.requests()[n]).pop().expect("a tool message")
}

/// Opens the conversation's live stream after `after`.
async fn follow(app: &TestApp, token: &str, conversation: &str, after: u64) -> Live {
    let r = app.follow(token, conversation, after).await;
    assert_eq!(r.status(), 200);
    Live::unchecked(r)
}

async fn next_block_update(mut live: Live) -> Block {
    live.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::BlockUpdate(_)))).await;
    live.events
        .into_iter()
        .find_map(|(_, e)| if let StreamEvent::BlockUpdate(b) = e { Some(b.block) } else { None })
        .unwrap()
}

async fn pay_turn(app: &TestApp, token: &str) -> (Vec<(u64, StreamEvent)>, String) {
    app.fake.push_tool_call(
        "generate_payment",
        json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY", "amount": 1}),
    );
    app.fake.push_content("请扫码支付。");
    let events = app.send(token, AGENT, None, "我想付费评估优才，用支付宝").await;
    let order_id = match blocks(&events).first() {
        Some(Block::PaymentQr(b)) => b.order_id.clone(),
        other => panic!("expected a payment block, got {other:?}"),
    };
    (events, order_id)
}

#[tokio::test]
async fn knowledge_search_quotes_sources_and_shows_citations() {
    let (app, token) = setup(TestApp::builder()).await;
    app.fake.push_tool_call("search_knowledge", json!({"query": "优才计划的申请条件", "category": "QMAS"}));
    app.fake.push_content("优才计划要求申请人年满18岁……");
    let events = app.send(&token, AGENT, None, "优才计划的条件是什么？").await;
    assert_eq!(
        shape(&events),
        [
            "message_start",
            "usage",
            "tool_call:search_knowledge:started",
            "tool_call:search_knowledge:succeeded",
            "block:citations",
            "token*",
            "usage",
            "message_end:complete"
        ]
    );
    let result = tool_result(&app, 1);
    assert_eq!(result["success"], true);
    assert!(result["sources"][0]["title"].as_str().unwrap().starts_with("QMAS"), "{result}");
    assert!(result["content"].as_str().unwrap().contains("<source n=\"1\""), "quoted, not bare: {result}");
    let Block::Citations(c) = &blocks(&events)[0] else { panic!() };
    assert!(c.sources[0].url.as_deref().unwrap().starts_with("https://"));
    // A reload shows the citations too.
    let conv = conversation_id(&events);
    let t: Transcript = app.get(&token, &format!("/api/v1/conversations/{conv}")).await.json().await.unwrap();
    assert!(matches!(&t.messages[1].blocks[0], Block::Citations(_)));
}

/// Seed 000 loops until no tool is needed: the seeded agent completes a consultation's chain —
/// the visitor's context, the knowledge, the assessment facts, the payment — in one turn (its
/// hop limit is raised for that; a help-center agent stops after 3).
#[tokio::test]
async fn the_seeded_agent_completes_a_chain_of_four_tools_in_one_turn() {
    let (app, token) = setup(TestApp::builder().with_users(&[ADMIN])).await;
    app.fake.push_tool_call("get_user_context", json!({"query": "背景"}));
    app.fake.push_tool_call("search_knowledge", json!({"query": "优才计划的申请条件", "category": "QMAS"}));
    app.fake.push_tool_call("collect_assessment_info", json!({"category": "QMAS", "age": 35, "education": "硕士"}));
    app.fake.push_tool_call(
        "generate_payment",
        json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY", "amount": 1}),
    );
    app.fake.push_content("您符合优才计划的基本条件，请扫码支付评估费。");
    let events = app.send(&token, AGENT, None, "我35岁硕士，想评估优才并付费").await;
    let done: Vec<(String, u32)> =
        tool_calls(&events, ToolCallStatus::Succeeded).into_iter().map(|t| (t.name, t.hop)).collect();
    assert_eq!(
        done,
        [
            ("get_user_context".to_owned(), 1),
            ("search_knowledge".to_owned(), 2),
            ("collect_assessment_info".to_owned(), 3),
            ("generate_payment".to_owned(), 4)
        ]
    );
    assert_eq!(shape(&events).last().unwrap(), "message_end:complete");
    assert_eq!(text(&events), "您符合优才计划的基本条件，请扫码支付评估费。");
    assert_eq!(app.fake.served(), 5, "four tool hops and the answer");
    let agent = parley_engine::store::agents::by_public_key(app.db(), AGENT).await.unwrap().unwrap();
    assert_eq!(agent.max_turns(), parley_engine::seed::IMMIGRATION_TOOL_HOPS);

    // The facts collected on the way are attached to the assessment order, and shown with it.
    let order_id = blocks(&events)
        .into_iter()
        .find_map(|b| if let Block::PaymentQr(qr) = b { Some(qr.order_id) } else { None })
        .expect("a payment block");
    let order = orders::by_id(app.db(), &order_id).await.unwrap().unwrap();
    let facts: Value = serde_json::from_str(order.facts.as_deref().expect("facts on the order")).unwrap();
    assert_eq!(facts, json!({"category": "QMAS", "age": 35, "education": "硕士"}));
    let mut admin = app.signed_in(&ADMIN).await;
    let (status, body) = admin.call(parley_app::console::api::orders::Orders::PATH, &[("page", "1")]).await;
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    let shown = &listed["items"][0]["facts"];
    assert!(shown.as_array().unwrap().iter().any(|f| f == "age: 35"), "{listed}");

    // A later correction is added to the conversation's facts; the order keeps what it was made with.
    app.fake.push_tool_call("collect_assessment_info", json!({"category": "QMAS", "age": 36}));
    app.fake.push_content("已更新。");
    let conversation = conversation_id(&events);
    app.send(&token, AGENT, Some(&conversation), "其实我36岁").await;
    let now = parley_engine::store::conversations::assessment_facts(app.db(), &conversation).await.unwrap();
    assert_eq!(now, Some(json!({"category": "QMAS", "age": 36, "education": "硕士"})));
    let order = orders::by_id(app.db(), &order_id).await.unwrap().unwrap();
    assert!(order.facts.unwrap().contains("\"age\":35"));
}

#[tokio::test]
async fn payment_amount_comes_from_the_price_table_and_a_signed_webhook_pays_it_live() {
    let (app, token) = setup(TestApp::builder()).await;
    let (events, order_id) = pay_turn(&app, &token).await;
    let Block::PaymentQr(qr) = &blocks(&events)[0] else { panic!() };
    assert_eq!((qr.amount_minor, qr.currency.as_str(), qr.status), (9900, "CNY", PaymentStatus::Pending));
    assert_eq!(link_parts(&qr.pay_url).0, order_id, "a signed link to the order: {}", qr.pay_url);
    assert!(qr.qr_svg.contains("<svg"));
    assert_eq!(tool_result(&app, 1)["amount"], 99.0, "the model's amount of 1 is ignored");
    let conv = conversation_id(&events);
    let last = events.last().unwrap().0;
    let live = follow(&app, &token, &conv, last).await;

    let body = webhook_body(&order_id, "paid", 9900, "CNY");
    let now_s = app.engine().now_ms() / 1000;
    let wrong_secret = format!("whsec_{}", "d3JvbmctdGVzdC1zZWNyZXQtMDEyMzQ1Njc4OWFi");
    let bad = app.webhook_with(&wrong_secret, "msg_bad", now_s, &body).await;
    assert_eq!(bad.status(), 401);
    let unsigned = app.client.post(app.url("/api/v1/payments/webhook")).body(body.to_string()).send().await.unwrap();
    assert_eq!(unsigned.status(), 401);
    assert_eq!(orders::by_id(app.db(), &order_id).await.unwrap().unwrap().status, "pending", "unchanged");

    let good = app.webhook("msg_1", &body).await;
    assert_eq!(good.status(), 200);
    assert_eq!(good.json::<Value>().await.unwrap()["changed"], true);
    match next_block_update(live).await {
        Block::PaymentQr(b) => assert_eq!((b.order_id.as_str(), b.status), (order_id.as_str(), PaymentStatus::Paid)),
        other => panic!("{other:?}"),
    }
    // Another call about the paid order changes nothing.
    let again = app.webhook("msg_2", &body).await;
    assert_eq!(again.json::<Value>().await.unwrap()["changed"], false);
    let t: Transcript = app.get(&token, &format!("/api/v1/conversations/{conv}")).await.json().await.unwrap();
    assert!(matches!(&t.messages[1].blocks[0], Block::PaymentQr(b) if b.status == PaymentStatus::Paid));
}

#[tokio::test]
async fn the_sandbox_page_marks_an_order_paid() {
    let (app, token) = setup(TestApp::builder()).await;
    let (events, order_id) = pay_turn(&app, &token).await;
    let Block::PaymentQr(qr) = &blocks(&events)[0] else { panic!() };
    let page = app.client.get(&qr.pay_url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains(&order_id) && html.contains("¥99.00") && html.contains("Mark as paid"));
    let r = app.confirm(&qr.pay_url).await;
    assert_eq!(r.status(), 303);
    assert_eq!(orders::by_id(app.db(), &order_id).await.unwrap().unwrap().status, "paid");
    let missing = app.client.get(app.url("/pay/ORD_nope")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn orders_expire_after_thirty_minutes_on_the_server() {
    let clock = ManualClock::new();
    let (app, token) = setup(TestApp::builder().clock(clock.clone())).await;
    let (events, order_id) = pay_turn(&app, &token).await;
    let conv = conversation_id(&events);
    let live = follow(&app, &token, &conv, events.last().unwrap().0).await;
    clock.advance_ms(29 * 60 * 1000);
    assert_eq!(app.engine().expire_orders().await.unwrap(), 0);
    clock.advance_ms(60 * 1000);
    assert_eq!(app.engine().expire_orders().await.unwrap(), 1);
    match next_block_update(live).await {
        Block::PaymentQr(b) => assert_eq!(b.status, PaymentStatus::Expired),
        other => panic!("{other:?}"),
    }
    // Too late: neither the sandbox page nor a webhook can pay it now.
    let Block::PaymentQr(qr) = &blocks(&events)[0] else { panic!() };
    assert_eq!(app.confirm(&qr.pay_url).await.status(), 303);
    let r = app.webhook("msg_late", &webhook_body(&order_id, "paid", 9900, "CNY")).await;
    assert_eq!(r.json::<Value>().await.unwrap()["changed"], false);
    let order = orders::by_id(app.db(), &order_id).await.unwrap().unwrap();
    assert_eq!(order.status, "expired");
    assert!(order.expires_at <= clock.now_ms());
}

#[tokio::test]
async fn a_retried_turn_does_not_create_a_second_order() {
    let (app, token) = setup(TestApp::builder()).await;
    app.fake.push_tool_call(
        "generate_payment",
        json!({"serviceType": "ASSESSMENT", "category": "CIES", "paymentMethod": "WECHAT"}),
    );
    app.fake.push_content("扫码即可。");
    let body = json!({"agent": AGENT, "message": "付费评估投资移民", "client_message_id": "pay-once"});
    let first = read_events(app.send_raw(&token, body.clone()).await).await;
    let again = read_events(app.send_raw(&token, body).await).await;
    assert_eq!(first, again);
    assert_eq!(app.count("orders").await, 1);
    assert_eq!(app.fake.served(), 2);
    let Block::PaymentQr(b) = &blocks(&first)[0] else { panic!() };
    assert_eq!(b.amount_minor, 19900);
}

#[tokio::test]
async fn memory_is_recalled_in_a_new_conversation_and_never_by_another_visitor() {
    let (app, token) = setup(TestApp::builder()).await;
    app.fake
        .push_tool_call("save_user_memory", json!({"memoryType": "FACT", "content": "用户35岁，计算机硕士，工作10年"}));
    app.fake.push_content("记住了。");
    let first = app.send(&token, AGENT, None, "请记住：我35岁，计算机硕士，工作10年").await;
    assert_eq!(tool_result(&app, 1)["success"], true);

    // A new conversation of the same visitor.
    app.fake.push_tool_call("get_user_context", json!({"query": "我的背景"}));
    app.fake.push_content("您35岁……");
    let second = app.send(&token, AGENT, None, "你还记得我的背景吗").await;
    assert_ne!(conversation_id(&first), conversation_id(&second));
    let recalled = tool_result(&app, 3);
    assert_eq!(recalled["memories"][0]["content"], "用户35岁，计算机硕士，工作10年");
    assert_eq!(recalled["memories"][0]["importance"], 70);

    // Someone else asks the same.
    let other = app.visitor(AGENT).await;
    app.fake.push_tool_call("get_user_context", json!({"query": "我的背景"}));
    app.fake.push_content("我还不了解您。");
    app.send(&other, AGENT, None, "你还记得我的背景吗").await;
    assert_eq!(tool_result(&app, 5)["memories"], json!([]));
}

#[tokio::test]
async fn news_and_time_through_the_tool_loop() {
    let (app, token) = setup(TestApp::builder()).await;
    app.fake.push(parley_server::fake_openai::Reply::ToolCalls(vec![
        ("fetch_immigration_news".into(), json!({"category": "TTPS", "limit": 2}).to_string()),
        ("get_current_datetime".into(), json!({"timezone": "Asia/Hong_Kong", "format": "date"}).to_string()),
    ]));
    app.fake.push_content("以下是最新资讯。");
    let events = app.send(&token, AGENT, None, "高才通最近有什么新闻？今天几号？").await;
    let cards: Vec<Block> = blocks(&events).into_iter().filter(|b| matches!(b, Block::NewsCard(_))).collect();
    assert_eq!(cards.len(), 2, "two seeded TTPS news items");
    let Block::NewsCard(first) = &cards[0] else { panic!() };
    assert!(first.url.as_deref().unwrap().starts_with("https://"));
    // Both results reached the model, in call order.
    let requests = app.fake.requests();
    let tools = tool_results(&requests[1]);
    assert_eq!(tools[0]["category"], "TTPS");
    assert!(tools[1]["datetime"].as_str().unwrap().contains("年"));
}
