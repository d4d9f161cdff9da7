//! The sandbox payment provider: its hosted page `/pay/ORDER` lets a tester mark an order paid;
//! its webhook is verified with an HMAC secret like a real provider's would be.

use super::{PaymentProvider, WebhookError, WebhookEvent, verify_signature};

#[derive(Clone)]
pub struct Sandbox {
    public_url: String,
    webhook_secret: Vec<u8>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").field("public_url", &self.public_url).finish()
    }
}

impl Sandbox {
    pub fn new(public_url: &str, webhook_secret: &[u8]) -> Self {
        Sandbox { public_url: public_url.trim_end_matches('/').to_owned(), webhook_secret: webhook_secret.to_vec() }
    }
}

impl PaymentProvider for Sandbox {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    fn pay_url(&self, order_id: &str) -> String {
        format!("{}/pay/{order_id}", self.public_url)
    }

    fn verify_webhook(&self, signature: Option<&str>, body: &[u8]) -> Result<WebhookEvent, WebhookError> {
        verify_signature(&self.webhook_secret, signature, body)?;
        serde_json::from_slice(body).map_err(|e| WebhookError::BadBody(e.to_string()))
    }
}
