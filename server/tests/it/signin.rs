//! Console sign-in under attack: parallel guesses wait their turn or are refused before any
//! password is checked, at most N Argon2 verifications run at once, one address gets a limited
//! number of attempts, unknown emails cost the same work, and the first administrator's password
//! is in a file only its owner reads, in no log line.

use std::time::{Duration, Instant};

use crate::harness::fixtures::{ADMIN, PASSWORD};
use crate::harness::*;
use leptos::server_fn::ServerFn;
use parley_app::console::api::auth;
use parley_engine::engine::clock::ManualClock;

/// One answer to a sign-in: status, `Retry-After`, body.
struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: String,
}

/// A sign-in from the console's own origin, through a trusted proxy that names the client
/// `from` (when given).
async fn attempt(base: &str, from: Option<&str>, email: &str, password: &str) -> Answer {
    let mut r = reqwest::Client::new()
        .post(format!("{base}{}", auth::SignIn::PATH))
        .header("origin", base)
        .form(&[("email", email), ("password", password)]);
    if let Some(ip) = from {
        r = r.header("x-forwarded-for", ip);
    }
    let r = r.send().await.unwrap();
    let status = r.status().as_u16();
    let retry_after = r.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned);
    Answer { status, retry_after, body: r.text().await.unwrap() }
}

/// A server behind a trusted proxy on 127.0.0.1 (so each test client can have its own address)
/// with the per-IP limit off unless `per_ip` is given.
async fn behind_proxy(per_ip: u32) -> TestApp {
    TestApp::builder()
        .with_users(&[ADMIN])
        .config(move |c| {
            c.trusted_proxies = "127.0.0.1".into();
            c.signin_per_ip_per_minute = per_ip;
            c.signin_concurrency = 4;
        })
        .spawn()
        .await
}

#[tokio::test]
async fn a_hundred_parallel_sign_ins_run_at_most_four_verifications_at_once() {
    let app = behind_proxy(0).await;
    let base = app.url("");
    let (_, before) = app.auth().verification_stats();
    // Different emails from different addresses: neither the per-email turn nor the per-IP limit
    // holds them back, only the cap on verifications (each Argon2 run takes about 19 MiB).
    let attempts = (0..100).map(|i| {
        let base = base.clone();
        async move {
            attempt(&base, Some(&format!("198.51.100.{}", i + 1)), &format!("guess{i}@example.com"), "wrong password")
                .await
        }
    });
    let answers = futures::future::join_all(attempts).await;
    let (peak, total) = app.auth().verification_stats();
    assert!(peak <= 4, "at most 4 verifications at once, saw {peak}");
    assert!(peak >= 2, "the verifications did overlap (else this test proves nothing): {peak}");
    let refused = answers.iter().filter(|a| a.status == 429).count();
    let checked = answers.iter().filter(|a| a.status == 422).count();
    assert_eq!(refused + checked, 100, "each is either checked (422) or refused (429)");
    assert_eq!(total - before, checked, "every checked attempt ran one verification, no refused one did");
    for a in answers.iter().filter(|a| a.status == 429) {
        assert!(a.body.contains("too_many") && a.retry_after.is_some(), "{}", a.body);
    }
    for a in answers.iter().filter(|a| a.status == 422) {
        assert!(a.body.contains("Wrong email or password."), "{}", a.body);
    }
}

#[tokio::test]
async fn parallel_guesses_from_one_address_wait_their_turn_before_any_check() {
    let app = behind_proxy(0).await;
    let base = app.url("");
    let (_, before) = app.auth().verification_stats();
    let started = Instant::now();
    let attempts = (0..20).map(|_| {
        let base = base.clone();
        async move { attempt(&base, Some("203.0.113.1"), ADMIN.email, "wrong password").await }
    });
    let answers = futures::future::join_all(attempts).await;
    let elapsed = started.elapsed();
    let (_, total) = app.auth().verification_stats();
    let checked = answers.iter().filter(|a| a.status == 422).count();
    let refused = answers.iter().filter(|a| a.status == 429).count();
    // Four attempts start at once, then each waits 0.5 s, 1 s, 2 s, … after the one before it;
    // a start more than 5 s away is refused at once: 7 are checked (the last after 3.5 s).
    assert!((5..=8).contains(&checked), "checked {checked}");
    assert_eq!(checked + refused, 20);
    assert_eq!(total - before, checked, "the refused ones ran no verification");
    assert!(elapsed >= Duration::from_secs(3), "the checked ones waited their turn: {elapsed:?}");
    assert!(answers.iter().filter(|a| a.status == 429).all(|a| a.retry_after.is_some()));
    // The owner, from another address, is not held up by the guesses (issue 41, item 5).
    let t = Instant::now();
    let right = attempt(&base, Some("198.51.100.20"), ADMIN.email, PASSWORD).await;
    assert_eq!(right.status, 200, "{}", right.body);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

#[tokio::test]
async fn guesses_from_many_addresses_meet_the_emails_ceiling_which_never_shuts_the_owner_out() {
    let app = behind_proxy(0).await;
    let base = app.url("");
    let (_, before) = app.auth().verification_stats();
    let attempts = (0..60).map(|i| {
        let base = base.clone();
        async move { attempt(&base, Some(&format!("203.0.113.{}", i + 1)), ADMIN.email, "wrong password").await }
    });
    let answers = futures::future::join_all(attempts).await;
    let checked = answers.iter().filter(|a| a.status == 422).count();
    // A burst of 30 for one email from everywhere, then one every 2 s.
    assert!((30..=33).contains(&checked), "checked {checked}");
    assert_eq!(app.auth().verification_stats().1 - before, checked, "the refused ones ran no verification");
    for a in answers.iter().filter(|a| a.status == 429) {
        let wait: u64 = a.retry_after.as_deref().unwrap_or_default().parse().expect("Retry-After in seconds");
        assert!(wait <= 60, "never asked to wait more than a minute: {wait}");
    }
    // The owner, from a new address, is slowed for a moment at most.
    let t = Instant::now();
    let right = loop {
        let a = attempt(&base, Some("198.51.100.20"), ADMIN.email, PASSWORD).await;
        if a.status != 429 || t.elapsed() > Duration::from_secs(60) {
            break a;
        }
        let wait: u64 = a.retry_after.as_deref().unwrap_or("1").parse().unwrap_or(1);
        tokio::time::sleep(Duration::from_secs(wait)).await;
    };
    assert_eq!(right.status, 200, "{}", right.body);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[tokio::test]
async fn one_addresss_guesses_lock_out_that_address_only() {
    let app = behind_proxy(0).await;
    let base = app.url("");
    // Eight wrong attempts one after the other (the last ones wait 0.5, 1, 2 and 4 s): the next
    // turn of this address is then 8 s after the eighth, longer than an attempt may wait.
    for _ in 0..8 {
        assert_eq!(attempt(&base, Some("203.0.113.1"), ADMIN.email, "wrong password").await.status, 422);
    }
    let t = Instant::now();
    let refused = attempt(&base, Some("203.0.113.1"), ADMIN.email, PASSWORD).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(refused.body.contains("Too many sign-in attempts"), "{}", refused.body);
    assert!(t.elapsed() < Duration::from_secs(2), "refused without waiting: {:?}", t.elapsed());
    // The owner elsewhere signs in at once.
    let owner = attempt(&base, Some("198.51.100.7"), ADMIN.email, PASSWORD).await;
    assert_eq!(owner.status, 200, "{}", owner.body);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
}

/// Who the browser is signed in as (`null` when nobody).
async fn me(b: &mut Browser) -> String {
    b.call(auth::WhoAmI::PATH, &[]).await.1
}

/// Sessions (issue 41, item 5): a password change signs the user's other browsers out and keeps
/// this one; sign-out refuses a cross-site request; a session ends a day after signing in
/// however active it is.
#[tokio::test]
async fn sessions_end_on_a_password_change_and_after_a_day() {
    let clock = ManualClock::new();
    let app = TestApp::builder().with_users(&[ADMIN]).clock(clock.clone()).spawn().await;
    let mut laptop = app.signed_in(&ADMIN).await;
    let mut phone = app.signed_in(&ADMIN).await;
    assert!(me(&mut phone).await.contains(ADMIN.email));
    clock.advance_ms(1_000);
    let (status, body) = laptop
        .call(auth::ChangePassword::PATH, &[("current", PASSWORD), ("new_password", "a brand new passphrase")])
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(me(&mut laptop).await.contains(ADMIN.email), "this browser stays signed in");
    assert_eq!(me(&mut phone).await, "null", "the other one is signed out");

    // Sign-out from another site is refused; from the console it works.
    let cross = app
        .client
        .post(app.url(auth::SignOut::PATH))
        .header("origin", "https://evil.example")
        .header("cookie", laptop.cookie.clone().expect("a session cookie"))
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status().as_u16(), 403, "{}", cross.text().await.unwrap());
    assert!(me(&mut laptop).await.contains(ADMIN.email));

    // A day after signing in, however active, the session is over.
    clock.advance_ms(23 * 3_600_000);
    assert!(me(&mut laptop).await.contains(ADMIN.email));
    clock.advance_ms(2 * 3_600_000);
    assert_eq!(me(&mut laptop).await, "null");
}

#[tokio::test]
async fn one_address_gets_a_limited_number_of_attempts() {
    // 3 a minute: a burst of 3, then one more every 20 s.
    let app = behind_proxy(3).await;
    let base = app.url("");
    for i in 0..3 {
        let a = attempt(&base, Some("192.0.2.10"), &format!("nobody{i}@example.com"), "wrong password").await;
        assert_eq!(a.status, 422, "attempt {i}: {}", a.body);
    }
    let (_, before) = app.auth().verification_stats();
    let refused = attempt(&base, Some("192.0.2.10"), "nobody-else@example.com", "wrong password").await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    let wait: u64 = refused.retry_after.as_deref().unwrap_or_default().parse().expect("Retry-After in seconds");
    assert!((1..=20).contains(&wait), "{wait}");
    // Refused before the password was looked at; even the right password.
    let right = attempt(&base, Some("192.0.2.10"), ADMIN.email, PASSWORD).await;
    assert_eq!(right.status, 429);
    assert_eq!(app.auth().verification_stats().1, before, "no verification for a refused address");
    // Another address is served.
    let other = attempt(&base, Some("192.0.2.11"), ADMIN.email, PASSWORD).await;
    assert_eq!(other.status, 200, "{}", other.body);
}

#[tokio::test]
async fn the_limit_holds_for_the_socket_address_without_trusted_proxies() {
    let app = TestApp::builder().with_users(&[ADMIN]).config(|c| c.signin_per_ip_per_minute = 3).spawn().await;
    let base = app.url("");
    // Without a trusted proxy, a forged X-Forwarded-For does not give a fresh address.
    for i in 0..3 {
        let a = attempt(&base, Some(&format!("10.9.9.{i}")), &format!("n{i}@example.com"), "wrong password").await;
        assert_eq!(a.status, 422, "{}", a.body);
    }
    let a = attempt(&base, Some("10.9.9.99"), "n@example.com", "wrong password").await;
    assert_eq!(a.status, 429, "{}", a.body);
    // The operator hears of it (a proxy they forgot to name): in the log and in /healthz.
    let health = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let text = health.text().await.unwrap();
    assert!(text.starts_with("ok") && text.contains("not a trusted proxy"), "{text}");
    assert!(captured_logs().text().contains("PARLEY_TRUSTED_PROXIES"));
}

#[tokio::test]
async fn an_unknown_email_costs_the_same_work_as_a_known_one() {
    let app = behind_proxy(0).await;
    let base = app.url("");
    let mut known = Vec::new();
    let mut unknown = Vec::new();
    for i in 0..3 {
        let (_, before) = app.auth().verification_stats();
        let t = Instant::now();
        // Different emails each time, so no per-email wait adds up.
        let a = attempt(&base, Some("192.0.2.1"), &format!("nobody{i}@example.com"), "wrong password").await;
        unknown.push(t.elapsed());
        assert_eq!(a.status, 422);
        assert_eq!(app.auth().verification_stats().1 - before, 1, "an unknown email runs one verification");
        let (_, before) = app.auth().verification_stats();
        let t = Instant::now();
        let a = attempt(&base, Some("192.0.2.1"), ADMIN.email, "wrong password").await;
        known.push(t.elapsed());
        assert_eq!(a.status, 422);
        assert_eq!(app.auth().verification_stats().1 - before, 1, "a known email runs one verification");
    }
    // The same answer, and a comparable time (loose: other tests share the machine).
    let (fast_unknown, fast_known) = (unknown.iter().min().unwrap(), known.iter().min().unwrap());
    assert!(*fast_unknown * 3 >= *fast_known, "unknown {unknown:?} vs known {known:?}");
}

#[tokio::test]
async fn the_first_password_is_in_an_owner_only_file_and_in_no_log_line() {
    let logs = captured_logs();
    let app = spawn_app().await;
    let path = app.dir.path().join("first-admin-password.txt");
    let text = std::fs::read_to_string(&path).expect("the password file");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "readable by its owner only: {mode:o}");
    }
    let password = text.lines().find_map(|l| l.strip_prefix("password: ")).expect("a password line").to_owned();
    assert!(password.len() >= 16, "{text}");
    let logged = logs.text();
    assert!(logged.contains(&path.display().to_string()), "the log names the file: {logged}");
    assert!(!logged.contains(&password), "the password is in no log line");

    let signed = attempt(&app.url(""), None, "admin@parley.local", &password).await;
    assert_eq!(signed.status, 200, "the file's password signs in: {}", signed.body);
}
