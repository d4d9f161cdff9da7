//! The sandbox payment provider, for demos and tests: its "hosted page" is Parley's own pay page,
//! where a tester holding the signed link marks the order paid; its webhook is verified like a
//! real provider's would be (Standard Webhooks, with the configured secret). On only where the
//! operator turns it on (`PARLEY_PAYMENTS_SANDBOX`).

use super::{CheckoutError, CheckoutRequest, PaymentProvider, WebhookBody, WebhookError, WebhookEvent, WebhookSecret};

#[derive(Clone, Debug)]
pub struct Sandbox {
    webhook_secret: Option<WebhookSecret>,
}

impl Sandbox {
    pub fn new(webhook_secret: Option<WebhookSecret>) -> Self {
        Sandbox { webhook_secret }
    }
}

#[async_trait::async_trait]
impl PaymentProvider for Sandbox {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    async fn checkout(&self, order: &CheckoutRequest<'_>) -> Result<String, CheckoutError> {
        Ok(order.order_page.to_owned())
    }

    fn verify_webhook(
        &self,
        headers: &http::HeaderMap,
        body: &[u8],
        now_ms: i64,
    ) -> Result<WebhookEvent, WebhookError> {
        let secret = self.webhook_secret.as_ref().ok_or(WebhookError::NotConfigured)?;
        let id = secret.verify(headers, body, now_ms.div_euclid(1000))?;
        let body: WebhookBody = serde_json::from_slice(body).map_err(|e| WebhookError::BadBody(e.to_string()))?;
        Ok(WebhookEvent {
            id: id.to_owned(),
            order_id: body.order_id,
            status: body.status,
            amount_minor: body.amount_minor,
            currency: body.currency,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn checkout_is_parleys_own_page() {
        let order = CheckoutRequest {
            order_id: "ORD_1",
            amount_minor: 9900,
            currency: "CNY",
            method: "ALIPAY",
            description: "QMAS",
            expires_at: 0,
            order_page: "http://parley.test/pay/ORD_1?exp=1&sig=x",
        };
        assert_eq!(Sandbox::new(None).checkout(&order).await.unwrap(), order.order_page);
    }

    #[test]
    fn webhooks_need_a_secret_and_a_whole_body() {
        let none = Sandbox::new(None);
        assert_eq!(none.verify_webhook(&http::HeaderMap::new(), b"{}", 0), Err(WebhookError::NotConfigured));
        let secret = WebhookSecret::random();
        let sandbox = Sandbox::new(Some(secret.clone()));
        let now_s = 1_700_000_000;
        let call = |body: &[u8]| {
            let mut h = http::HeaderMap::new();
            h.insert("webhook-id", "msg_1".parse().unwrap());
            h.insert("webhook-timestamp", now_s.to_string().parse().unwrap());
            h.insert("webhook-signature", secret.sign("msg_1", now_s, body).parse().unwrap());
            sandbox.verify_webhook(&h, body, now_s * 1000 + 999)
        };
        let event = call(br#"{"order_id":"ORD_1","status":"paid","amount_minor":9900,"currency":"CNY"}"#).unwrap();
        assert_eq!((event.id.as_str(), event.order_id.as_str(), event.amount_minor), ("msg_1", "ORD_1", 9900));
        // Signed, but without the amount: not a payment event.
        assert!(matches!(call(br#"{"order_id":"ORD_1","status":"paid"}"#), Err(WebhookError::BadBody(_))));
    }
}
