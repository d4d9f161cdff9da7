//! `POST /api/v1/chat`: send a visitor message; the answer streams back as SSE.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use axum::routing::post;
use parley_app::server::state::AppState;
use parley_widget::protocol::SendMessage;

use crate::api_error::ApiFailure;
use crate::extract::{ApiJson, VisitorAuth, check_origin};
use crate::sse_body::sse_response;

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/chat", post(send))
}

async fn send(
    State(state): State<AppState>,
    VisitorAuth(visitor): VisitorAuth,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SendMessage>,
) -> Result<Response, ApiFailure> {
    let agent = state.engine.agent_by_key(&body.agent).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    check_origin(&headers, &agent)?;
    let started = state
        .engine
        .send(
            agent,
            &visitor,
            body.conversation_id.as_deref(),
            &body.message,
            body.client_message_id.as_deref(),
            &body.attachments,
        )
        .await?;
    let mut response = sse_response(started.events, false);
    if let Ok(v) = HeaderValue::from_str(&started.conversation_id) {
        response.headers_mut().insert("x-parley-conversation", v);
    }
    if let Ok(v) = HeaderValue::from_str(&started.message_id) {
        response.headers_mut().insert("x-parley-message", v);
    }
    Ok(response)
}
