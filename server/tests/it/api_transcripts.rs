//! Transcripts and history in the widget API: the lead form hands the conversation to a person,
//! a transcript has the blocks, tool calls and `start_seq` of what was streamed, and earlier
//! messages go to the model as history.

use crate::harness::*;
use parley_engine::store::leads;
use parley_protocol::{Handoff, MessageStatus, Role, StreamEvent, ToolCallStatus, Transcript};
use serde_json::{Value, json};

#[tokio::test]
async fn lead_form_validates_then_hands_the_conversation_to_a_person() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_content("How can I help?");
    let events = app.send(&token, "plain", None, "I need a person").await;
    let conv = conversation_id(&events);
    let last = events.last().unwrap().0;
    let lead = format!("/api/v1/conversations/{conv}/lead");
    let transcript = format!("/api/v1/conversations/{conv}");

    // Opened before the form is sent; `?after=` works like `Last-Event-ID`.
    let mut live = Live::new(app.get(&token, &format!("/api/v1/conversations/{conv}/events?after={last}")).await);

    let r = app.post(&token, &lead, json!({"name": "  ", "message": "please call"})).await;
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "invalid_form");
    let fields: Vec<&str> =
        body["fields"].as_array().expect("fields").iter().map(|f| f["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["name", "email"]);
    let r = app.post(&token, &lead, json!({"name": "Ann", "email": "ann@", "message": ""})).await;
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["fields"][0]["field"], "email");
    assert_eq!(app.count("leads").await, 0);
    let t: Value = app.get(&token, &transcript).await.json().await.unwrap();
    assert_eq!((&t["status"], &t["lead_submitted"]), (&json!("bot"), &json!(false)));

    let r =
        app.post(&token, &lead, json!({"name": " Ann ", "email": "ann@example.com", "message": "Please call"})).await;
    assert_eq!(r.status(), 201);
    let body: Value = r.json().await.unwrap();
    let lead_id = body["lead_id"].as_str().expect("lead_id").to_owned();
    let stored = leads::of_conversation(app.db(), &conv).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, lead_id);
    assert_eq!((stored[0].name.as_str(), stored[0].email.as_deref()), ("Ann", Some("ann@example.com")));

    let t: Value = app.get(&token, &transcript).await.json().await.unwrap();
    assert_eq!(t["status"], "waiting_human");
    assert_eq!(t["lead_submitted"], true);

    live.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::Handoff(_)))).await;
    assert_eq!(
        live.events,
        [(last + 1, StreamEvent::Handoff(Handoff { to: "waiting".into(), operator_name: None }))],
        "exactly the handoff, numbered after the turn"
    );
}

#[tokio::test]
async fn transcript_after_a_tool_turn_has_blocks_tool_calls_and_start_seq() {
    let (app, token) = spawn_chat("help", &["ticket_escalation"]).await;
    app.fake.push_tool_call("escalate_to_human", json!({}));
    app.fake.push_content("Press the button below.");
    let events = app.send(&token, "help", None, "I want a person").await;
    assert_eq!(
        shape(&events)[..5],
        [
            "message_start",
            "usage",
            "tool_call:escalate_to_human:started",
            "tool_call:escalate_to_human:succeeded",
            "block:escalation_button"
        ]
    );
    let conv = conversation_id(&events);
    let start_seq = events.iter().find(|(_, e)| matches!(e, StreamEvent::MessageStart(_))).unwrap().0;
    let block = blocks(&events).first().cloned();
    let call_id = tool_calls(&events, ToolCallStatus::Succeeded).first().map(|t| t.call_id.clone());

    let r = app.get(&token, &format!("/api/v1/conversations/{conv}")).await;
    assert_eq!(r.status(), 200);
    let raw: Value = r.json().await.unwrap();
    // The wire format itself.
    assert_eq!(raw["conversation_id"], conv.as_str());
    let wire = raw["messages"].as_array().expect("messages");
    assert_eq!(wire.len(), 2);
    assert_eq!(wire[0]["role"], "visitor");
    assert_eq!(wire[0]["start_seq"], 0);
    assert_eq!(wire[1]["role"], "assistant");
    assert_eq!(wire[1]["blocks"].as_array().unwrap().len(), 1);
    assert_eq!(wire[1]["blocks"][0]["type"], "escalation_button");
    assert_eq!(wire[1]["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(wire[1]["tool_calls"][0]["name"], "escalate_to_human");
    assert_eq!(wire[1]["tool_calls"][0]["status"], "succeeded");

    let t: Transcript = serde_json::from_value(raw).expect("a transcript");
    assert_eq!((t.status.as_str(), t.lead_submitted), ("bot", false));
    let visitor = &t.messages[0];
    assert_eq!(
        (visitor.role, visitor.text.as_str(), visitor.status),
        (Role::Visitor, "I want a person", MessageStatus::Complete)
    );
    assert!(visitor.blocks.is_empty() && visitor.tool_calls.is_empty());
    let answer = &t.messages[1];
    assert_eq!(answer.id, message_id(&events));
    assert_eq!((answer.text.as_str(), answer.status), ("Press the button below.", MessageStatus::Complete));
    assert_eq!(Some(answer.blocks.clone()), block.map(|b| vec![b]), "the block as streamed");
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(Some(answer.tool_calls[0].call_id.clone()), call_id);
    assert_eq!(
        (answer.tool_calls[0].name.as_str(), answer.tool_calls[0].status),
        ("escalate_to_human", ToolCallStatus::Succeeded)
    );
    assert!(answer.tool_calls[0].duration_ms.is_some());
    assert_eq!(answer.start_seq, start_seq, "start_seq is the seq of the message_start event");
    assert!(answer.created_at >= visitor.created_at);
}

#[tokio::test]
async fn earlier_messages_are_sent_to_the_model_as_history() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_content("Paris is the capital.");
    let first = app.send(&token, "plain", None, "What is the capital of France?").await;
    let conv = conversation_id(&first);
    app.fake.push_content("About two million.");
    let events = app.send(&token, "plain", Some(&conv), "And its population?").await;
    assert_eq!(text(&events), "About two million.");
    assert_eq!(conversation_id(&events), conv);

    let requests = app.fake.requests();
    assert_eq!(requests.len(), 2);
    // The system prompt: the canary's line, then the agent's instructions.
    let system = requests[1]["messages"][0]["content"].as_str().unwrap();
    assert!(system.ends_with("\n\nYou are a test agent."), "{system}");
    assert_eq!(
        requests[1]["messages"],
        json!([
            {"role": "system", "content": system},
            {"role": "user", "content": "What is the capital of France?"},
            {"role": "assistant", "content": "Paris is the capital."},
            {"role": "user", "content": "And its population?"},
        ])
    );
    // Numbering continues across turns (each visitor message is an event of its own, before the
    // answer's `message_start`).
    assert_eq!(first[0].0, 2);
    assert_eq!(events[0].0, first.last().unwrap().0 + 2);
    assert_eq!(seqs(&events), consecutive(events[0].0, events.len()));
}
