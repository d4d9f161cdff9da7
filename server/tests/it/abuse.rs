//! Abuse limits and origins of the visitor API: bursts get `429 rate_limited` with `Retry-After`
//! and change nothing while others are served; open streams are capped; every visitor route
//! checks the agent's origins; an agent allows no website until one is listed.

use serde_json::{Value, json};

use crate::harness::*;

/// A send of one word with `X-Forwarded-For: ip` (the tests trust 127.0.0.1 as a proxy).
async fn send_from(app: &TestApp, token: &str, agent: &str, ip: &str) -> reqwest::Response {
    app.client
        .post(app.url("/api/v1/chat"))
        .bearer_auth(token)
        .header("x-forwarded-for", ip)
        .json(&json!({"agent": agent, "message": "hello"}))
        .send()
        .await
        .unwrap()
}

async fn visitor_from(app: &TestApp, agent: &str, ip: &str) -> reqwest::Response {
    app.client
        .post(app.url("/api/v1/visitors"))
        .header("x-forwarded-for", ip)
        .json(&json!({"agent": agent}))
        .send()
        .await
        .unwrap()
}

async fn assert_limited(r: reqwest::Response) {
    assert_eq!(r.status(), 429, "refused by a limit");
    let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().expect("Retry-After in seconds");
    assert!((1..=3600).contains(&wait), "Retry-After {wait}");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"], "rate_limited");
}

#[tokio::test]
async fn a_burst_from_one_visitor_is_refused_while_another_is_served() {
    let app = TestApp::builder().config(|c| c.limits.limit_sends_per_visitor = 3).spawn().await;
    app.agent("burst", &[]).await;
    let (a, b) = (app.visitor("burst").await, app.visitor("burst").await);
    for _ in 0..3 {
        let r = app.send_raw(&a, json!({"agent": "burst", "message": "hi"})).await;
        assert_eq!(r.status(), 200);
        read_events(r).await;
    }
    let before = app.count("messages").await;
    assert_limited(app.send_raw(&a, json!({"agent": "burst", "message": "one too many"})).await).await;
    assert_eq!(app.count("messages").await, before, "a refused send stores nothing");
    let r = app.send_raw(&b, json!({"agent": "burst", "message": "hi"})).await;
    assert_eq!(r.status(), 200, "another visitor is served");
    read_events(r).await;
}

#[tokio::test]
async fn an_address_is_limited_across_its_visitors_and_behind_a_trusted_proxy_only() {
    let app = TestApp::builder()
        .config(|c| {
            c.limits.limit_sends_per_ip = 2;
            c.limits.limit_visitors_per_ip = 3;
            c.trusted_proxies = "127.0.0.1".into();
        })
        .spawn()
        .await;
    app.agent("ip", &[]).await;
    let mut tokens = Vec::new();
    for _ in 0..3 {
        let r = visitor_from(&app, "ip", "198.51.100.1").await;
        assert_eq!(r.status(), 201);
        tokens.push(r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned());
    }
    assert_limited(visitor_from(&app, "ip", "198.51.100.1").await).await;
    assert_eq!(visitor_from(&app, "ip", "198.51.100.2").await.status(), 201, "another address");
    for token in &tokens[..2] {
        let r = send_from(&app, token, "ip", "198.51.100.1").await;
        assert_eq!(r.status(), 200);
        read_events(r).await;
    }
    // A third visitor of the same address: the address's figure is spent.
    assert_limited(send_from(&app, &tokens[2], "ip", "198.51.100.1").await).await;
    // The same visitor from another address is served.
    let r = send_from(&app, &tokens[2], "ip", "203.0.113.5").await;
    assert_eq!(r.status(), 200);
    read_events(r).await;
}

#[tokio::test]
async fn a_forwarded_header_from_an_untrusted_peer_changes_nothing() {
    let app = TestApp::builder().config(|c| c.limits.limit_visitors_per_ip = 2).spawn().await;
    app.agent("spoof", &[]).await;
    for n in 0..2 {
        assert_eq!(visitor_from(&app, "spoof", &format!("198.51.100.{n}")).await.status(), 201);
    }
    // Naming a new address does not buy a new figure: the peer (127.0.0.1) is what counts.
    assert_limited(visitor_from(&app, "spoof", "198.51.100.9").await).await;
}

#[tokio::test]
async fn open_streams_are_capped_per_visitor_and_freed_when_closed() {
    let app = TestApp::builder().config(|c| c.limits.limit_streams_per_visitor = 1).spawn().await;
    app.agent("streams", &[]).await;
    let token = app.visitor("streams").await;
    let events = app.send(&token, "streams", None, "hello").await;
    let conversation = conversation_id(&events);
    let first = app.follow(&token, &conversation, 0).await;
    assert_eq!(first.status(), 200);
    assert_limited(app.follow(&token, &conversation, 0).await).await;
    // Another visitor is not held back by this one's streams.
    let other = app.visitor("streams").await;
    assert_eq!(app.send_raw(&other, json!({"agent": "streams", "message": "hi"})).await.status(), 200);
    drop(first);
    eventually(async || app.follow(&token, &conversation, 0).await.status() == 200).await;
}

/// A follow of a conversation from address `ip` (through the trusted proxy).
async fn follow_from(app: &TestApp, token: &str, conversation: &str, ip: &str) -> reqwest::Response {
    app.client
        .get(app.url(&format!("/api/v1/conversations/{conversation}/events")))
        .bearer_auth(token)
        .header("x-forwarded-for", ip)
        .send()
        .await
        .unwrap()
}

/// Idle followers cannot lock everyone out (issue 41, item 2): one address holds a few streams
/// at most, followers fill three quarters of the server's streams at most, and an idle follow
/// ends by itself; a new visitor from another address still gets an answer.
#[tokio::test]
async fn idle_followers_leave_room_for_answers_and_end_by_themselves() {
    let app = TestApp::builder()
        .config(|c| {
            c.trusted_proxies = "127.0.0.1".into();
            c.limits.limit_streams = 8;
            c.limits.limit_streams_per_ip = 3;
            c.limits.limit_streams_per_visitor = 2;
            c.limits.resume_idle_secs = 2;
        })
        .spawn()
        .await;
    app.agent("follow", &[]).await;
    let mut held = Vec::new();
    let mut refused = 0;
    // Ten visitors on two addresses (three streams each at most), then more addresses: the
    // followers stop at 6 of 8.
    for (i, ip) in ["198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.2", "198.51.100.2"]
        .into_iter()
        .chain((3..9).map(|_| "198.51.100.3"))
        .chain(["198.51.100.4", "198.51.100.5", "198.51.100.6"])
        .enumerate()
    {
        let token = app.visitor("follow").await;
        app.fake.push_content(&format!("answer {i}"));
        let conversation = conversation_id(&app.send(&token, "follow", None, "hello").await);
        let r = follow_from(&app, &token, &conversation, ip).await;
        if r.status() == 200 {
            held.push(r);
        } else {
            assert_limited(r).await;
            refused += 1;
        }
    }
    assert_eq!(held.len(), 6, "followers fill 75 % of 8 streams, three an address ({refused} refused)");
    // A new visitor from another address asks and is answered.
    let token = app.visitor("follow").await;
    app.fake.push_content("Still here.");
    let events = app.send(&token, "follow", None, "anyone?").await;
    assert_eq!(text(&events), "Still here.");
    // With nothing to say for 2 s, the follows end by themselves (the panel reconnects).
    let started = std::time::Instant::now();
    for r in held {
        let body = tokio::time::timeout(std::time::Duration::from_secs(10), r.text()).await;
        assert!(body.is_ok(), "an idle follow ended");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[tokio::test]
async fn an_agent_starts_a_bounded_number_of_turns_a_minute() {
    let app = TestApp::builder().config(|c| c.limits.limit_turns_per_agent = 2).spawn().await;
    app.agent("turns", &[]).await;
    for _ in 0..2 {
        let token = app.visitor("turns").await;
        let r = app.send_raw(&token, json!({"agent": "turns", "message": "hi"})).await;
        assert_eq!(r.status(), 200);
        read_events(r).await;
    }
    let token = app.visitor("turns").await;
    assert_limited(app.send_raw(&token, json!({"agent": "turns", "message": "hi"})).await).await;
}

#[tokio::test]
async fn lead_forms_and_uploads_are_limited_per_visitor() {
    let app = TestApp::builder()
        .config(|c| {
            c.limits.limit_leads_per_visitor_per_hour = 1;
            c.limits.limit_uploads_per_visitor = 1;
        })
        .spawn()
        .await;
    app.agent("forms", &[]).await;
    let token = app.visitor("forms").await;
    let conversation = conversation_id(&app.send(&token, "forms", None, "hello").await);
    let lead = json!({"name": "Ann", "email": "ann@example.com", "phone": "", "message": "call me"});
    let path = format!("/api/v1/conversations/{conversation}/lead");
    assert_eq!(app.post(&token, &path, lead.clone()).await.status(), 201);
    assert_limited(app.post(&token, &path, lead).await).await;
    assert_eq!(app.count("leads").await, 1);
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0\x90wS\xde";
    app.upload_ok(&token, "image/png", png).await;
    assert_limited(app.upload(&token, "image/png", png).await).await;
}

#[tokio::test]
async fn every_visitor_route_checks_the_agents_origins() {
    let app = spawn_app().await;
    app.insert_agent(fixtures::agent("shop", fixtures::openai_provider(&app.fake)).origins(&["https://shop.example"]))
        .await;
    let create = |origin: &'static str| {
        app.client.post(app.url("/api/v1/visitors")).header("origin", origin).json(&json!({"agent": "shop"})).send()
    };
    assert_eq!(failure(create("https://evil.example").await.unwrap()).await, fail(403, "origin_not_allowed"));
    let r = create("https://shop.example").await.unwrap();
    assert_eq!(r.status(), 201);
    let token = r.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    let conversation = conversation_id(&app.send(&token, "shop", None, "hello").await);
    let routes = [
        ("GET", format!("/api/v1/conversations/{conversation}")),
        ("GET", format!("/api/v1/conversations/{conversation}/events")),
        ("POST", format!("/api/v1/conversations/{conversation}/stop")),
        ("POST", format!("/api/v1/conversations/{conversation}/typing")),
        ("POST", format!("/api/v1/conversations/{conversation}/lead")),
        ("GET", "/api/v1/attachments/nothing".to_owned()),
    ];
    for (method, path) in &routes {
        let request = |origin: Option<&str>, fetch_site: Option<&str>| {
            let mut r = match *method {
                "GET" => app.client.get(app.url(path)),
                _ => app.client.post(app.url(path)).json(&json!({"active": true})),
            }
            .bearer_auth(&token);
            if let Some(o) = origin {
                r = r.header("origin", o);
            }
            if let Some(s) = fetch_site {
                r = r.header("sec-fetch-site", s);
            }
            r.send()
        };
        let from_elsewhere = request(Some("https://evil.example"), Some("cross-site")).await.unwrap();
        assert_eq!(failure(from_elsewhere).await, fail(403, "origin_not_allowed"), "{method} {path}");
        // A browser request that hides its origin is refused unless it comes from Parley's pages.
        let hidden = request(None, Some("cross-site")).await.unwrap();
        assert_eq!(failure(hidden).await, fail(403, "origin_not_allowed"), "{method} {path} without Origin");
        let own = request(None, Some("same-origin")).await.unwrap();
        assert_ne!(own.status(), 403, "{method} {path} from Parley's own page");
    }
    // No CORS: a preflight from another site is not granted.
    let preflight = app
        .client
        .request(reqwest::Method::OPTIONS, app.url("/api/v1/chat"))
        .header("origin", "https://shop.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert!(!preflight.status().is_success(), "preflight answered {}", preflight.status());
    assert!(preflight.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn a_new_agent_allows_no_website_until_one_is_listed() {
    let app = spawn_app().await;
    app.agent("fresh", &[]).await;
    let r = app
        .client
        .post(app.url("/api/v1/visitors"))
        .header("origin", "https://any.example")
        .json(&json!({"agent": "fresh", "host_origin": "https://any.example"}))
        .send()
        .await
        .unwrap();
    assert_eq!(failure(r).await, fail(403, "origin_not_allowed"));
    let embed = app.client.get(app.url("/embed/fresh?origin=https%3A%2F%2Fany.example")).send().await.unwrap();
    assert_eq!(embed.status(), 403, "the embed page refuses an unlisted host");
    let own = app.client.get(app.url("/embed/fresh")).send().await.unwrap();
    let csp = own.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.ends_with("; frame-ancestors 'self'"), "only Parley's own pages may frame it: {csp}");
}

/// A slow-loris client (issue 41, item 2): headers a byte a second are cut off once the header
/// read timeout passes, while other clients are served all along.
#[tokio::test]
async fn a_client_dribbling_its_headers_is_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app().await;
    let addr = app.url("").trim_start_matches("http://").trim_end_matches('/').to_owned();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let started = std::time::Instant::now();
    let head =
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut cut = false;
    for byte in head {
        if slow.write_all(&[*byte]).await.is_err() {
            cut = true;
            break;
        }
        // Others are served meanwhile.
        if started.elapsed() < std::time::Duration::from_secs(2) {
            assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
        }
        let mut buf = [0u8; 256];
        match tokio::time::timeout(std::time::Duration::from_secs(1), slow.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                cut = true;
                break;
            }
            Ok(Ok(_)) => {
                // hyper answers 408 before it closes: the connection is over either way.
                cut = true;
                break;
            }
            Err(_) => {}
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "never cut off");
    }
    assert!(cut, "the connection was closed");
    let took = started.elapsed();
    assert!(took >= std::time::Duration::from_secs(8) && took < std::time::Duration::from_secs(20), "{took:?}");
}
