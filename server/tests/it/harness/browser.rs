//! A browser of the admin console: it keeps the session cookie and sends same-origin requests
//! (server functions are POSTs from the console's own origin).

use leptos::server_fn::ServerFn;
use parley_app::console::api::auth;
use serde_json::Value;

pub struct Browser {
    client: reqwest::Client,
    base: String,
    pub cookie: Option<String>,
    pub origin: Option<String>,
}

impl Browser {
    /// A browser on the server at `base`, without a session.
    pub fn new(base: String) -> Self {
        // A console request (an SSR page included) that has not finished in a minute is a hang:
        // fail with the request named rather than stall the whole run.
        let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(60)).build().unwrap();
        Browser { client, origin: Some(base.clone()), base, cookie: None }
    }

    fn request(&self, path: &str) -> reqwest::RequestBuilder {
        let mut r = self.client.post(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        if let Some(o) = &self.origin {
            r = r.header("origin", o);
        }
        r
    }

    async fn finish(&mut self, r: reqwest::RequestBuilder) -> (u16, String) {
        let r = r.send().await.unwrap();
        let status = r.status().as_u16();
        if let Some(set) = r.headers().get("set-cookie").and_then(|v| v.to_str().ok()) {
            let pair = set.split(';').next().unwrap().to_owned();
            self.cookie = if pair.ends_with('=') { None } else { Some(pair) };
        }
        (status, r.text().await.unwrap())
    }

    /// Calls a URL-encoded server function.
    pub async fn call(&mut self, path: &str, form: &[(&str, &str)]) -> (u16, String) {
        let r = self.request(path).form(form);
        self.finish(r).await
    }

    /// Calls a JSON server function.
    pub async fn call_json(&mut self, path: &str, body: Value) -> (u16, String) {
        let r = self.request(path).json(&body);
        self.finish(r).await
    }

    /// `GET path` with the session cookie.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        let mut r = self.client.get(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            r = r.header("cookie", c);
        }
        r.send().await.unwrap()
    }

    /// A page (or a download): its status and text. A page that stops arriving fails with what
    /// did arrive and the server's last log lines, so a hang on CI can be read from its log.
    pub async fn page(&self, path: &str) -> (u16, String) {
        let mut r = self.get(path).await;
        let status = r.status().as_u16();
        let mut body = Vec::new();
        loop {
            match r.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(e) => {
                    let text = String::from_utf8_lossy(&body);
                    let start = text.char_indices().rev().nth(1499).map_or(0, |(i, _)| i);
                    let tail = &text[start..];
                    let log = super::captured_logs().text();
                    let lines: Vec<&str> = log.lines().collect();
                    let last = lines[lines.len().saturating_sub(40)..].join("\n");
                    panic!(
                        "GET {path} ({status}) stopped after {} bytes: {e}\n--- the end of what arrived:\n{tail}\n--- the last log lines:\n{last}",
                        body.len()
                    );
                }
            }
        }
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    pub async fn sign_in(&mut self, email: &str, password: &str) -> (u16, String) {
        self.call(auth::SignIn::PATH, &[("email", email), ("password", password)]).await
    }
}
