//! Payments from the outside: webhook calls signed the Standard Webhooks way, and the parts of a
//! signed pay link.

use parley_engine::engine::payments::WebhookSecret;
use parley_server::config::TEST_WEBHOOK_SECRET;
use serde_json::{Value, json};

use super::TestApp;

/// The body a provider sends about an order.
pub fn webhook_body(order_id: &str, status: &str, amount_minor: i64, currency: &str) -> Value {
    json!({"order_id": order_id, "status": status, "amount_minor": amount_minor, "currency": currency})
}

/// The `webhook-*` headers of a call signed with `secret` (`whsec_…`).
pub fn webhook_headers(secret: &str, id: &str, timestamp: i64, body: &str) -> Vec<(&'static str, String)> {
    let signature = WebhookSecret::parse(secret).expect("a whsec_ secret").sign(id, timestamp, body.as_bytes());
    vec![("webhook-id", id.to_owned()), ("webhook-timestamp", timestamp.to_string()), ("webhook-signature", signature)]
}

/// A signed pay link's order id and query (`exp=…&sig=…`).
pub fn link_parts(pay_url: &str) -> (String, String) {
    let (path, query) = pay_url.split_once('?').expect("a signed link has a query");
    let id = path.rsplit_once("/pay/").expect("a /pay/ link").1.to_owned();
    (id, query.to_owned())
}

impl TestApp {
    /// `POST /api/v1/payments/webhook` with `body`, signed with `secret` as call `id` made at
    /// `timestamp` (Unix seconds).
    pub async fn webhook_with(&self, secret: &str, id: &str, timestamp: i64, body: &Value) -> reqwest::Response {
        let body = body.to_string();
        let mut request = self.client.post(self.url("/api/v1/payments/webhook")).body(body.clone());
        for (name, value) in webhook_headers(secret, id, timestamp, &body) {
            request = request.header(name, value);
        }
        request.send().await.unwrap()
    }

    /// A webhook call signed with the test secret, made now by the server's clock.
    pub async fn webhook(&self, id: &str, body: &Value) -> reqwest::Response {
        let now_s = self.engine().now_ms() / 1000;
        self.webhook_with(TEST_WEBHOOK_SECRET, id, now_s, body).await
    }

    /// Posts the sandbox's "Mark as paid" form of `pay_url` as the pay page itself would (same
    /// origin), without following the redirect.
    pub async fn confirm(&self, pay_url: &str) -> reqwest::Response {
        let (id, query) = link_parts(pay_url);
        let no_redirect = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        no_redirect
            .post(self.url(&format!("/pay/{id}/confirm?{query}")))
            .header("origin", self.url(""))
            .header("sec-fetch-site", "same-origin")
            .send()
            .await
            .unwrap()
    }
}
