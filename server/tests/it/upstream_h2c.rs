//! Issue 46, goal 1: a plain-http model endpoint listed in `PARLEY_H2C_ENDPOINTS` gets its
//! concurrent answers over HTTP/2 with prior knowledge on one multiplexed connection (a further
//! connection per `PARLEY_H2C_STREAMS_PER_CONNECTION` answers); unlisted, each answer streaming
//! at the same time has an HTTP/1.1 connection of its own. The fake upstream records the client
//! address and HTTP version of every request it serves.

use std::time::Duration;

use futures::future::join_all;
use parley_server::fake_openai::Reply;

use crate::harness::fixtures::words;
use crate::harness::*;

const ANSWERS: usize = 12;

/// Starts a server with `configure`, then `ANSWERS` visitors' answers at once, each streamed
/// over ~0.5 s so that they overlap; every answer must arrive whole and be stored. Returns the
/// HTTP version of each upstream connection used.
async fn concurrent_answers(
    configure: impl FnOnce(&mut parley_server::config::Config) + 'static,
) -> Vec<http::Version> {
    let app = TestApp::builder()
        .config(move |c| {
            c.limits.no_limits = true;
            configure(c);
        })
        .spawn()
        .await;
    app.agent("plain", &[]).await;
    let mut tokens = Vec::new();
    for _ in 0..ANSWERS {
        tokens.push(app.visitor("plain").await);
        app.fake.push(Reply::Content { pieces: words(10), delay: Duration::from_millis(50) });
    }
    let answers = join_all(tokens.iter().enumerate().map(|(i, token)| {
        let app = &app;
        async move { app.send(token, "plain", None, &format!("question {i}")).await }
    }))
    .await;
    let expected: String = words(10).concat();
    for (i, events) in answers.iter().enumerate() {
        assert_eq!(shape(events), ["message_start", "token*", "usage", "message_end:complete"], "answer {i}");
        assert_eq!(text(events), expected, "answer {i}");
        app.assert_turn_stored(&conversation_id(events), &format!("question {i}"), &expected).await;
    }
    assert_eq!(app.fake.served(), ANSWERS as u64);
    app.fake.connections()
}

#[tokio::test]
async fn concurrent_answers_to_an_h2c_endpoint_share_one_connection() {
    let versions = concurrent_answers(|c| c.h2c_endpoints = c.private_endpoints.clone()).await;
    assert_eq!(versions, [http::Version::HTTP_2], "{ANSWERS} answers on one HTTP/2 connection");
}

#[tokio::test]
async fn an_h2c_connection_carries_its_share_and_a_further_one_opens() {
    let versions = concurrent_answers(|c| {
        c.h2c_endpoints = c.private_endpoints.clone();
        c.h2c_streams_per_connection = 5;
    })
    .await;
    assert_eq!(versions, [http::Version::HTTP_2; 3], "5 + 5 + 2 answers");
}

#[tokio::test]
async fn an_unlisted_plain_http_endpoint_gets_a_connection_per_answer() {
    let versions = concurrent_answers(|_| {}).await;
    assert_eq!(versions, [http::Version::HTTP_11; ANSWERS]);
}

#[tokio::test]
async fn a_bad_h2c_list_stops_the_start_with_its_reason() {
    let mut config = parley_server::config::Config::for_tests("sqlite::memory:".into(), std::env::temp_dir());
    config.h2c_endpoints = "gateway".into();
    let error = config.h2c().expect_err("not host:port");
    assert!(error.to_string().starts_with("PARLEY_H2C_ENDPOINTS: `gateway`"), "{error}");
}
