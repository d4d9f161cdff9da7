//! Quick replies (issue 44, part 3): the model offers answers as buttons through the built-in
//! `offer_quick_replies`; through the fake OpenAI upstream over real HTTP (the tool result the
//! model gets back, checked by shape) and through the offline demo model.

use crate::harness::*;
use parley_engine::store::messages;
use parley_protocol::{Block, StreamEvent};
use serde_json::{Value, json};

fn quick_blocks(events: &[(u64, StreamEvent)]) -> Vec<Vec<String>> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::Block(b) => match &b.block {
                Block::QuickReplies(q) => Some(q.replies.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_model_offers_quick_replies_and_gets_back_what_was_shown() {
    let (app, token) = spawn_chat("help", &["quick_replies"]).await;
    app.fake.push_tool_call("offer_quick_replies", json!({"replies": ["Yes, please", " No thanks ", "Yes, please"]}));
    app.fake.push_content("Shall I book it for you?");

    let events = app.send(&token, "help", None, "Can you book a table?").await;
    assert_eq!(quick_blocks(&events), [vec!["Yes, please".to_owned(), "No thanks".to_owned()]]);

    let requests = app.fake.requests();
    assert_eq!(requests.len(), 2);
    let offered = requests[0]["tools"].as_array().unwrap();
    let spec = offered.iter().find(|t| t["function"]["name"] == "offer_quick_replies").expect("offered");
    assert_eq!(spec["function"]["parameters"]["properties"]["replies"]["maxItems"], 6);
    // The tool result the model reads: exactly these fields.
    let second = requests[1]["messages"].as_array().unwrap();
    let result: Value = serde_json::from_str(second.last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["ok"], true);
    assert_eq!(result["shown"], json!(["Yes, please", "No thanks"]));
    assert!(result["message"].as_str().unwrap().contains("next message"));
    assert_eq!(result.as_object().unwrap().len(), 3, "{result}");

    // Stored with the answer, so a reload shows the buttons again.
    let conv = conversation_id(&events);
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(stored[1].content, "Shall I book it for you?");
    assert!(
        matches!(stored[1].blocks.as_slice(), [Block::QuickReplies(q)] if q.fallback_text == "Yes, please · No thanks")
    );
}

#[tokio::test]
async fn wrong_quick_replies_are_a_tool_error_and_show_nothing() {
    let (app, token) = spawn_chat("help", &["quick_replies"]).await;
    app.fake.push_tool_call("offer_quick_replies", json!({"replies": ["a", "b", "c", "d", "e", "f", "g"]}));
    app.fake.push_content("Pick any.");
    let events = app.send(&token, "help", None, "options?").await;
    assert!(quick_blocks(&events).is_empty());
    let requests = app.fake.requests();
    let last = requests[1]["messages"].as_array().unwrap().last().unwrap().clone();
    // The schema is checked before the tool runs (the tool checks again, see its unit tests).
    assert!(last["content"].as_str().unwrap().contains("more than 6 items"), "{last}");
}

#[tokio::test]
async fn the_demo_model_offers_topics_as_quick_replies() {
    let app = spawn_app().await;
    let key = parley_engine::seed::HELP_AGENT_KEY;
    let token = app.visitor(key).await;
    let r = app.send_raw(&token, json!({"agent": key, "message": "What can you help me with?"})).await;
    assert_eq!(r.status(), 200);
    let events = read_events(r).await;
    assert_eq!(
        quick_blocks(&events),
        [vec!["Opening hours".to_owned(), "Shipping".to_owned(), "Talk to a person".to_owned()]]
    );
    assert!(text(&events).contains("tap a topic below"), "{}", text(&events));
}
