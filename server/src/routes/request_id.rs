//! A request id on every request: the caller's `X-Request-Id` (a proxy such as nginx may set
//! one) or a new one, sent back in the answer and carried by a `request` span, so every log line
//! of a request — and of the turn it starts, which runs in its own task — names it.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

const HEADER: &str = "x-request-id";

/// A caller's id is kept when it is short and plain (it ends up in logs).
fn acceptable(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub async fn request_id(request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| acceptable(v))
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    let span = tracing::info_span!("request", id = %id);
    let mut response = next.run(request).instrument(span).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER, v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::acceptable;

    #[test]
    fn only_short_plain_ids_are_kept() {
        assert!(acceptable("abc-123_X"));
        assert!(!acceptable(""));
        assert!(!acceptable("a b"));
        assert!(!acceptable("x\ny"));
        assert!(!acceptable(&"a".repeat(65)));
    }
}
