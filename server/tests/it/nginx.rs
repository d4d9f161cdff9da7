//! Two real `parley serve` processes on one fresh PostgreSQL database behind a real nginx
//! (Debian's package; round-robin, `proxy_buffering off`), as `docs/deploy.md` deploys them:
//! they behave as one service. Runs in the PostgreSQL pass; `./test.sh` installs nginx.

use std::path::{Path, PathBuf};
use std::time::Duration;

use leptos::server_fn::ServerFn;
use parley_app::console::api::conversations as c;
use parley_engine::store::Db;
use parley_protocol::{MessageStatus, StreamEvent};
use parley_server::fake_openai::{FakeOpenAi, Reply};
use serde_json::json;

use crate::guards::error_codes;
use crate::harness::fixtures::PASSWORD;
use crate::harness::fixtures::slow_words;
use crate::harness::*;

/// nginx as a child process on a free port, stopped by its PID (workers waited for) when dropped.
pub struct Nginx {
    _process: parley_server::bench::nginx::Nginx,
    pub url: String,
}

/// The nginx binary, or a clear failure: the PostgreSQL pass needs it.
fn nginx_binary() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("nginx is not installed (apt-get install -y nginx; ./test.sh installs it)"))
}

/// The configuration `docs/deploy.md` documents, for `upstreams` on 127.0.0.1:`port` (one
/// worker, as a small deployment runs it).
pub fn nginx_config(dir: &Path, port: u16, upstreams: &[&str]) -> String {
    parley_server::bench::nginx::nginx_config(dir, port, upstreams, 1, 1024)
}

impl Nginx {
    pub async fn start(dir: &Path, upstreams: &[&str]) -> Nginx {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = dir.join("nginx");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("nginx.conf"), nginx_config(&dir, port, upstreams)).unwrap();
        let process = parley_server::bench::nginx::Nginx::start(&nginx_binary(), &dir, port).expect("nginx starts");
        let url = format!("http://127.0.0.1:{port}");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(r) = reqwest::get(format!("{url}/healthz")).await
                && r.status() == 200
            {
                return Nginx { _process: process, url };
            }
            assert!(tokio::time::Instant::now() < deadline, "nginx did not pass /healthz:\n{}", process.error_log());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn chat(base: &str, token: &str, body: serde_json::Value) -> reqwest::Response {
    reqwest::Client::new().post(format!("{base}/api/v1/chat")).bearer_auth(token).json(&body).send().await.unwrap()
}

async fn follow(base: &str, token: &str, conversation: &str, after: u64) -> Live {
    let r = reqwest::Client::new()
        .get(format!("{base}/api/v1/conversations/{conversation}/events"))
        .bearer_auth(token)
        .header("Last-Event-ID", after.to_string())
        .send()
        .await
        .unwrap();
    Live::new(r)
}

/// Runs the binary's CLI against the database.
async fn cli(url: &str, dir: &Path, args: &[&str]) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_parley"))
        .args(args)
        .env("DATABASE_URL", url)
        .env("PARLEY_DATA_DIR", dir)
        .output()
        .await
        .expect("run the parley CLI");
    assert!(out.status.success(), "parley {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test]
async fn two_replicas_behind_nginx_behave_as_one_service() {
    if !in_postgres_pass() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_database(dir.path()).await;
    let fake = FakeOpenAi::start().await;
    prepare(&url, dir.path(), "plain", &[], &fake).await;
    prepare(&url, dir.path(), "capped", &[], &fake).await;
    cli(
        &url,
        dir.path(),
        &[
            "create-user",
            "--email",
            "olive@example.com",
            "--name",
            "Olive",
            "--role",
            "operator",
            "--password",
            PASSWORD,
        ],
    )
    .await;
    // The capped agent has one call's room left today.
    let db = Db::connect(&url).await.unwrap();
    let cap = 0.01;
    sqlx::query("UPDATE agents SET daily_cap_usd = $1 WHERE public_key = 'capped'")
        .bind(cap)
        .execute(db.writer())
        .await
        .unwrap();
    let now = parley_engine::engine::clock::Clock::now_ms(&parley_engine::engine::clock::SystemClock);
    let capped: String =
        sqlx::query_scalar("SELECT id FROM agents WHERE public_key = 'capped'").fetch_one(db.pool()).await.unwrap();
    spent_earlier(&db, &capped, cap - 0.000_000_1, now).await;

    // A short lease, so that a killed replica's answer is recovered soon.
    let env = [("PARLEY_LEASE_TTL_SECS", "6")];
    let a = start_parley(&url, dir.path(), &env).await;
    let mut b = start_parley(&url, dir.path(), &env).await;
    let lb = Nginx::start(dir.path(), &[&a.url, &b.url]).await;
    let token = a.visitor("plain").await;

    // 1. A turn through nginx; two resumes through nginx (round-robin sends one to each replica)
    // each receive every event once, in order.
    fake.push(slow_words(30, 30));
    let mut turn = Live::new(chat(&lb.url, &token, json!({"agent": "plain", "message": "hello"})).await);
    turn.until(|e| tokens(e) >= 2).await;
    let conv = conversation_id(&turn.events);
    let from = turn.events[0].0 - 1;
    let mut resumes = [follow(&lb.url, &token, &conv, from).await, follow(&lb.url, &token, &conv, from).await];
    turn.until_end().await;
    for resume in &mut resumes {
        resume.until_end().await;
        assert_eq!(resume.events, turn.events, "a resume through nginx sees the same events");
        assert_numbered_in_order(&resume.events);
    }
    assert_eq!(text(&turn.events), (0..30).map(|i| format!("w{i} ")).collect::<String>());

    // 2. Two sends to one conversation on two replicas at once: one answers, one is refused.
    fake.push(slow_words(100, 30));
    let body = json!({"agent": "plain", "conversation_id": conv, "message": "again"});
    let (ra, rb) = tokio::join!(chat(&a.url, &token, body.clone()), chat(&b.url, &token, body));
    let mut statuses = [ra.status().as_u16(), rb.status().as_u16()];
    statuses.sort();
    assert_eq!(statuses, [200, 409]);
    let answered = if ra.status() == 200 { ra } else { rb };
    let again = read_events_within(answered, 20).await;
    assert!(matches!(again.last().unwrap().1, StreamEvent::MessageEnd(ref e) if e.status == MessageStatus::Complete));
    assert_eq!(fake.served(), 2, "the refused send called no model");

    // 3. The visitor is served by B; Olive works on A's console.
    fake.push(Reply::Endless { piece: "more ".into(), every: Duration::from_millis(20) });
    let mut answer =
        Live::new(chat(&b.url, &token, json!({"agent": "plain", "conversation_id": conv, "message": "talk"})).await);
    answer.until(|e| tokens(e) >= 2).await;
    let mut tab = follow(&b.url, &token, &conv, answer.events.last().unwrap().0).await;
    let mut olive = Browser::new(a.url.clone());
    let (status, body) = olive.sign_in("olive@example.com", PASSWORD).await;
    assert_eq!(status, 200, "{body}");
    let mut feed = console_feed(&a.url, olive.cookie.as_deref().unwrap()).await;
    let (status, body) = olive.call(c::Claim::PATH, &[("id", &conv)]).await;
    assert_eq!((status, body.as_str()), (200, "true"));
    // The claim on A stops B's answer; the visitor sees the handoff.
    answer.until_end().await;
    assert!(
        matches!(answer.events.last().unwrap().1, StreamEvent::MessageEnd(ref e) if e.status == MessageStatus::Stopped)
    );
    tab.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::Handoff(h) if h.to == "human"))).await;
    // The model stays silent for the visitor on B.
    let served = fake.served();
    let r = chat(&b.url, &token, json!({"agent": "plain", "conversation_id": conv, "message": "still there?"})).await;
    assert_eq!(shape(&read_events(r).await), ["visitor_message"]);
    assert_eq!(fake.served(), served);
    // Olive's typing and reply on A reach the visitor on B; the visitor's typing on B reaches A.
    let (status, _) = olive.call(c::OperatorTyping::PATH, &[("id", &conv), ("active", "true")]).await;
    assert_eq!(status, 200);
    tab.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::Typing(t) if t.who == "operator" && t.active))).await;
    let (status, body) = olive.call(c::Reply::PATH, &[("id", &conv), ("text", "Olive here.")]).await;
    assert_eq!(status, 200, "{body}");
    tab.until(|e| e.iter().any(|(_, e)| matches!(e, StreamEvent::OperatorMessage(m) if m.text == "Olive here."))).await;
    // Typing indicators are not numbered (0); every numbered event came once, in order.
    let numbered: Events = tab.events.iter().filter(|(seq, _)| *seq > 0).cloned().collect();
    assert_numbered_in_order(&numbered);
    let r = reqwest::Client::new()
        .post(b.url(&format!("/api/v1/conversations/{conv}/typing")))
        .bearer_auth(&token)
        .json(&json!({"active": true}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    feed.until(|changes| changes.iter().any(|c| c.contains(&conv) && c.contains("\"typing\""))).await;

    // 4. Two calls at the capped agent's daily edge, one on each replica: only one goes ahead.
    let (alice, bob) = (a.visitor("capped").await, b.visitor("capped").await);
    fake.push(Reply::Delayed(Duration::from_millis(300), Box::new(Reply::text("One answer."))));
    let served = fake.served();
    let (ea, eb) = tokio::join!(
        async { read_events(chat(&a.url, &alice, json!({"agent": "capped", "message": "one"})).await).await },
        async { read_events(chat(&b.url, &bob, json!({"agent": "capped", "message": "two"})).await).await },
    );
    let mut outcomes = [error_codes(&ea), error_codes(&eb)];
    outcomes.sort();
    assert_eq!(outcomes, [vec![], vec!["BUDGET_EXCEEDED".to_owned()]]);
    assert_eq!(fake.served(), served + 1, "only one call went upstream");

    // 5. `kill -9` of B mid-answer: the visitor's resume through nginx lands on A and ends with
    // `interrupted` once B's lease has expired.
    let carol = a.visitor("plain").await;
    fake.push(Reply::Endless { piece: "part ".into(), every: Duration::from_millis(30) });
    let mut doomed = Live::new(b.send(&carol, "plain", "tell me").await);
    doomed.until(|e| tokens(e) >= 3).await;
    let conv = conversation_id(&doomed.events);
    let message = message_id(&doomed.events);
    eventually(async || {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM events WHERE conversation_id = $1 AND name = 'token'")
            .bind(&conv)
            .fetch_one(db.pool())
            .await
            .unwrap()
            > 0
    })
    .await;
    b.kill_9().await;
    let seen = doomed.events.last().unwrap().0;
    let mut resume = follow(&lb.url, &carol, &conv, seen).await;
    resume.until_within(40, |e| e.iter().any(|(_, e)| matches!(e, StreamEvent::MessageEnd(_)))).await;
    let end =
        resume.events.iter().find_map(|(_, e)| if let StreamEvent::MessageEnd(m) = e { Some(m.clone()) } else { None });
    let end = end.unwrap();
    assert_eq!((end.message_id.as_str(), end.status), (message.as_str(), MessageStatus::Interrupted));
    drop(lb);
}

/// The console's live feed (`GET /admin/feed`) of a signed-in browser, read as it comes.
struct Feed {
    body: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    parser: parley_protocol::sse::SseParser,
    /// The `data` of every event read so far.
    changes: Vec<String>,
}

async fn console_feed(base: &str, cookie: &str) -> Feed {
    let r = reqwest::Client::new()
        .get(format!("{base}/admin/feed"))
        .header("cookie", cookie)
        .header("origin", base)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the console feed");
    Feed { body: Box::pin(r.bytes_stream()), parser: Default::default(), changes: Vec::new() }
}

impl Feed {
    /// Reads until one of the `change` events read so far satisfies `stop` (10 s at most).
    async fn until(&mut self, stop: impl Fn(&[&str]) -> bool) {
        use futures::StreamExt;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let changes: Vec<&str> = self.changes.iter().map(String::as_str).collect();
            if stop(&changes) {
                return;
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Ok(Some(Ok(bytes))) => {
                    self.changes.extend(self.parser.feed_bytes(&bytes).expect("utf-8").into_iter().map(|f| f.data))
                }
                other => panic!("the console feed ended or stalled: {other:?}; got {:?}", self.changes),
            }
        }
    }
}

/// [`read_events`] with a longer deadline.
async fn read_events_within(r: reqwest::Response, secs: u64) -> Events {
    let mut live = Live::new(r);
    live.until_within(secs, |e| e.iter().any(|(_, e)| matches!(e, StreamEvent::MessageEnd(_)))).await;
    live.events
}
