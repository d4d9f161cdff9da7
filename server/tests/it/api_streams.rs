//! The widget API's streams end to end: the visitor's stop keeps the partial answer and closes the
//! upstream, a dropped stream resumes after `Last-Event-ID` without gaps or duplicates, a busy
//! conversation refuses a second message, a restart marks the streaming answer interrupted, and a
//! conversation longer than a page of stored events resumes from its middle with every event once.

use std::time::Duration;

use crate::harness::fixtures::words;
use crate::harness::*;
use parley_engine::store::messages;
use parley_protocol::{MessageEnd, MessageStatus, Role, StreamEvent, Transcript};
use parley_server::fake_openai::Reply;
use serde_json::{Value, json};

/// Presses stop: whether there was an answer to stop.
async fn stopped(app: &TestApp, token: &str, conversation: &str) -> bool {
    let r = app.stop(token, conversation).await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    body["stopped"].as_bool().expect("`stopped` is a boolean")
}

/// The conversation's turn slot is free again (a stop finds nothing to stop).
async fn wait_turn_released(app: &TestApp, token: &str, conversation: &str) {
    eventually(async || !stopped(app, token, conversation).await).await;
}

#[tokio::test]
async fn stop_mid_stream_keeps_the_partial_answer_and_closes_the_upstream() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push(Reply::Endless { piece: "word ".into(), every: Duration::from_millis(20) });

    let mut live = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "talk forever"})).await);
    live.until(|e| tokens(e) >= 3).await;
    let conv = conversation_id(&live.events);
    assert_eq!(app.fake.open_streams(), 1);

    let r = app.stop(&token, &conv).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"stopped": true}));

    live.until_end().await;
    live.assert_ends().await;
    let events = live.events;
    assert_eq!(shape(&events), ["message_start", "token*", "error:USER_ABORTED", "message_end:stopped"]);
    // The visitor's message is event 1; the answer follows without gaps.
    assert_eq!(seqs(&events), consecutive(2, events.len()));
    let StreamEvent::MessageEnd(end) = &events.last().unwrap().1 else { unreachable!() };
    assert_eq!(end.message_id, message_id(&events));
    let streamed = text(&events);
    assert!(tokens(&events) >= 3 && streamed == "word ".repeat(tokens(&events)), "{streamed:?}");

    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!((stored[1].role, stored[1].status), (Role::Assistant, MessageStatus::Stopped));
    assert_eq!(stored[1].id, message_id(&events));
    assert_eq!(stored[1].content, streamed, "the partial answer is what the visitor saw");

    tokio::time::timeout(Duration::from_secs(1), eventually(async || app.fake.closed_early() == 1))
        .await
        .expect("the upstream stream was closed within 1 s of the stop");
    eventually(async || app.fake.open_streams() == 0).await;
    assert_eq!(app.fake.served(), 1);
    // Nothing is left to stop.
    wait_turn_released(&app, &token, &conv).await;
}

#[tokio::test]
async fn a_dropped_stream_resumes_after_last_event_id_without_gaps_or_duplicates() {
    let (app, token) = spawn_chat("plain", &[]).await;
    let pieces = words(30);
    let full = pieces.concat();
    app.fake.push(Reply::Content { pieces, delay: Duration::from_millis(15) });

    let mut first = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "count"})).await);
    first.until(|e| tokens(e) >= 5).await;
    let head = std::mem::take(&mut first.events);
    drop(first);
    assert!(!head.iter().any(|(_, e)| matches!(e, StreamEvent::MessageEnd(_))), "dropped mid-answer: {head:?}");
    let last = head.last().unwrap().0;
    let conv = conversation_id(&head);

    let mut rest = Live::new(app.follow(&token, &conv, last).await);
    rest.until_end().await;
    let tail = std::mem::take(&mut rest.events);
    drop(rest);
    assert_eq!(tail[0].0, last + 1, "resumes right after Last-Event-ID");
    assert_eq!(seqs(&tail), consecutive(last + 1, tail.len()), "no gap, no duplicate");
    assert!(tokens(&tail) > 0, "the resumed part carries the rest of the text");

    let whole: Events = head.iter().chain(tail.iter()).cloned().collect();
    assert_eq!(seqs(&whole), consecutive(2, whole.len()));
    assert_eq!(shape(&whole), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&whole), full);
    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!((stored[1].status, stored[1].content.as_str()), (MessageStatus::Complete, full.as_str()));

    // Once the turn is over (and out of memory), the whole turn replays from the database.
    wait_turn_released(&app, &token, &conv).await;
    let mut replay = Live::new(app.follow(&token, &conv, 1).await);
    replay.until_end().await;
    assert_eq!(replay.events, whole, "the replay has the same events with the same ids");
    // From the start it begins with the visitor's message.
    let mut from_start = Live::new(app.follow(&token, &conv, 0).await);
    from_start.until_end().await;
    assert!(matches!(&from_start.events[0], (1, StreamEvent::VisitorMessage(_))));
    assert_eq!(&from_start.events[1..], &whole[..]);
}

#[tokio::test]
async fn a_streaming_answer_has_its_start_seq_in_the_transcript_at_once() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push_content("First answer.");
    let conv = conversation_id(&app.send(&token, "plain", None, "hello").await);

    app.fake.push(Reply::Endless { piece: "more ".into(), every: Duration::from_millis(20) });
    let body = json!({"agent": "plain", "conversation_id": conv, "message": "go on"});
    let mut live = Live::new(app.send_raw(&token, body).await);
    live.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::MessageStart(_)))).await;
    let start_seq = live.events[0].0;
    // A panel reloaded now resumes the answer from `start_seq - 1`.
    let t: Transcript = app.get(&token, &format!("/api/v1/conversations/{conv}")).await.json().await.unwrap();
    let answer = t.messages.last().unwrap();
    assert_eq!((answer.id.clone(), answer.status), (message_id(&live.events), MessageStatus::Streaming));
    assert_eq!(answer.start_seq, start_seq, "start_seq of the answer being written");

    assert!(stopped(&app, &token, &conv).await);
    live.until_end().await;
}

#[tokio::test]
async fn a_second_message_while_a_reply_streams_is_refused() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push(Reply::Endless { piece: "busy ".into(), every: Duration::from_millis(20) });
    let mut live = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "go on"})).await);
    live.until(|e| tokens(e) >= 1).await;
    let conv = conversation_id(&live.events);

    let r = app.send_raw(&token, json!({"agent": "plain", "conversation_id": conv, "message": "hello?"})).await;
    assert_eq!(failure(r).await, fail(409, "reply_in_progress"));
    assert_eq!(app.count("messages").await, 2, "the refused message was not stored");
    assert_eq!(app.fake.served(), 1);

    assert!(stopped(&app, &token, &conv).await);
    live.until_end().await;
    assert_eq!(shape(&live.events), ["message_start", "token*", "error:USER_ABORTED", "message_end:stopped"]);

    // Once stopped, the conversation takes messages again.
    app.fake.push_content("Back to you.");
    let events = app.send(&token, "plain", Some(&conv), "hello?").await;
    assert_eq!(shape(&events), ["message_start", "token*", "usage", "message_end:complete"]);
    assert_eq!(text(&events), "Back to you.");
    assert_eq!(app.count("messages").await, 4);
}

#[tokio::test]
async fn a_restart_marks_the_streaming_answer_interrupted_and_ends_its_stream() {
    let (app, token) = spawn_chat("plain", &[]).await;
    app.fake.push(Reply::Endless { piece: "part ".into(), every: Duration::from_millis(20) });
    let mut live = Live::new(app.send_raw(&token, json!({"agent": "plain", "message": "go"})).await);
    live.until(|e| tokens(e) >= 1).await;
    let conv = conversation_id(&live.events);
    let message = message_id(&live.events);

    // The writer stores the streamed tokens every ~50 ms; they are the partial text.
    let mut before = String::new();
    eventually(async || {
        let runs: Vec<String> =
            sqlx::query_scalar("SELECT data FROM events WHERE conversation_id = $1 AND name = 'token' ORDER BY seq")
                .bind(&conv)
                .fetch_all(app.db().pool())
                .await
                .unwrap();
        before = runs.iter().flat_map(|r| serde_json::from_str::<Vec<String>>(r).unwrap()).collect();
        !before.is_empty()
    })
    .await;

    // The first process "dies": its lease expires (it keeps running, as a paused process would).
    sqlx::query("UPDATE processes SET heartbeat_at = 0 WHERE id = $1")
        .bind(app.engine().process_id())
        .execute(app.db().writer())
        .await
        .unwrap();
    let second = app.restart().await;

    let stored = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!((stored[1].id.as_str(), stored[1].status), (message.as_str(), MessageStatus::Interrupted));
    let kept = stored[1].content.clone();
    assert!(kept.starts_with(&before) && kept == "part ".repeat(kept.len() / 5), "partial text kept: {kept:?}");
    // An interrupted answer no longer changes.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let later = messages::list(app.db(), &conv).await.unwrap();
    assert_eq!((later[1].status, later[1].content.as_str()), (MessageStatus::Interrupted, kept.as_str()));

    let mut replay = Live::new(app.follow_on(&second.url(), &token, &conv, 0).await);
    replay.until_end().await;
    let events = replay.events;
    assert_eq!(events[0].0, 1);
    assert!(matches!(&events[0].1, StreamEvent::VisitorMessage(v) if v.text == "go"));
    assert!(matches!(&events[1].1, StreamEvent::MessageStart(m) if m.message_id == message));
    assert_eq!(shape(&events), ["visitor_message", "message_start", "token*", "message_end:interrupted"]);
    let (end_seq, end) = events.last().unwrap();
    assert_eq!(
        end,
        &StreamEvent::MessageEnd(MessageEnd { message_id: message.clone(), status: MessageStatus::Interrupted })
    );
    assert!(*end_seq >= 100_000, "numbering jumps past what the old process may have sent: {end_seq}");
    assert!(text(&events).starts_with(&kept));

    let r = app.client.get(format!("{}/api/v1/conversations/{conv}", second.url())).bearer_auth(&token).send().await;
    let t: Transcript = r.unwrap().json().await.unwrap();
    assert_eq!((t.messages[1].status, t.messages[1].text.as_str()), (MessageStatus::Interrupted, kept.as_str()));
}

/// Stores `rows` event rows after `from` in the conversation, as the writer would: operator
/// messages, and at `run_at` one row holding a run of ten tokens. Returns `(the run's first seq,
/// the last seq)`.
async fn store_long_history(app: &TestApp, conversation: &str, from: u64, rows: usize, run_at: usize) -> (u64, u64) {
    use parley_protocol::OperatorMessage;
    let mut seq = from;
    let mut run = 0;
    for i in 0..rows {
        let (first, last, name, data) = if i == run_at {
            run = seq + 1;
            let texts: Vec<String> = (0..10).map(|t| format!("t{t} ")).collect();
            (seq + 1, seq + 10, "token".to_owned(), serde_json::to_string(&texts).unwrap())
        } else {
            let event = StreamEvent::OperatorMessage(OperatorMessage {
                message_id: format!("m{i}"),
                text: format!("reply {i}"),
                operator_name: "Olive".into(),
            });
            (seq + 1, seq + 1, event.name().to_owned(), event.data_json())
        };
        sqlx::query(
            "INSERT INTO events (conversation_id, seq, last_seq, name, data, created_at) VALUES ($1, $2, $3, $4, $5, 0)",
        )
        .bind(conversation)
        .bind(i64::try_from(first).unwrap())
        .bind(i64::try_from(last).unwrap())
        .bind(name)
        .bind(data)
        .execute(app.db().writer())
        .await
        .unwrap();
        seq = last;
    }
    (run, seq)
}

#[tokio::test]
async fn a_resume_from_the_middle_of_a_long_conversation_reads_it_in_pages_each_event_once() {
    let (app, token) = spawn_chat("long", &[]).await;
    app.fake.push_content("Hello.");
    let first = app.send(&token, "long", None, "hi").await;
    let conv = conversation_id(&first);
    app.engine().flush().await;
    let stored = first.iter().map(|(seq, _)| *seq).max().unwrap();
    // 700 rows: more than three pages of 200; the resume starts inside a run of tokens.
    let (run, last) = store_long_history(&app, &conv, stored, 700, 150).await;
    let resume = run + 4;
    let mut live = Live::new(app.follow(&token, &conv, resume).await);
    live.until_within(20, |events| events.iter().any(|(seq, _)| *seq == last)).await;
    let got = seqs(&live.events);
    assert_eq!(got, ((resume + 1)..=last).collect::<Vec<u64>>(), "every event after the resume, once, in order");
    let tokens: Vec<String> = live
        .events
        .iter()
        .filter_map(|(_, e)| if let StreamEvent::Token(t) = e { Some(t.text.clone()) } else { None })
        .collect();
    assert_eq!(tokens, ["t5 ", "t6 ", "t7 ", "t8 ", "t9 "], "the rest of the run it resumed in");
}
