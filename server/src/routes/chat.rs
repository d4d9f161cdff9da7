//! `POST /api/v1/chat`: send a visitor message; the answer streams back as SSE.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use axum::routing::post;
use parley_app::server::state::AppState;
use parley_protocol::{ApiCode, MAX_PAGE_CONTEXT_BYTES, SendMessage};

use crate::api_error::ApiFailure;
use parley_engine::engine::chat::SendRequest;
use parley_engine::limits::{Action, StreamKind};

use crate::extract::{ApiJson, ClientIp, VisitorAuth, check_origin};
use crate::sse_body::{held_while_open, sse_response};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/chat", post(send))
}

async fn send(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SendMessage>,
) -> Result<Response, ApiFailure> {
    state.limits.check(Action::Send, ip, Some(&visitor.id)).map_err(ApiFailure::limited)?;
    let agent = state.engine.agent_by_key(&body.agent).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    check_origin(&headers, &agent)?;
    if agent.identity.required && !visitor.is_identified() {
        return Err(ApiFailure::new(
            ApiCode::IdentityRequired,
            "Please sign in on this website to chat: this assistant only talks to signed-in users.",
        ));
    }
    let page_context = match &body.context {
        None | Some(serde_json::Value::Null) => None,
        Some(value) => {
            let text = value.to_string();
            if text.len() > MAX_PAGE_CONTEXT_BYTES {
                return Err(ApiFailure::new(
                    ApiCode::ContextTooLarge,
                    format!("The page context is {} bytes; at most {MAX_PAGE_CONTEXT_BYTES} are taken.", text.len()),
                ));
            }
            Some(text)
        }
    };
    state.limits.turn(&agent.id).map_err(ApiFailure::limited)?;
    let permit = state.limits.stream(StreamKind::Answer, &visitor.id, ip).map_err(ApiFailure::limited)?;
    let started = state
        .engine
        .send(SendRequest {
            agent,
            visitor: &visitor,
            conversation_id: body.conversation_id.as_deref(),
            text: &body.message,
            client_message_id: body.client_message_id.as_deref(),
            attachments: &body.attachments,
            page_context,
            address: Some(ip),
            form: body.form.as_ref(),
            trial: false,
        })
        .await?;
    // The page the visitor writes from, for the return link of a reply mailed after they left
    // (stored off the answer's path: only when it changed does it write).
    if let Some(url) = body.page_url.filter(|u| parley_engine::engine::mail::page_url_ok(u)) {
        let (engine, conversation_id) = (state.engine.clone(), started.conversation_id.clone());
        tokio::spawn(async move {
            if let Err(e) = engine.note_page(&conversation_id, &url).await {
                tracing::debug!(error = %e, "storing the visitor's page");
            }
        });
    }
    let mut response =
        sse_response(held_while_open(started.events, permit), false, state.engine.shutdown_state().streams_closing());
    if let Ok(v) = HeaderValue::from_str(&started.conversation_id) {
        response.headers_mut().insert("x-parley-conversation", v);
    }
    if let Ok(v) = HeaderValue::from_str(&started.message_id) {
        response.headers_mut().insert("x-parley-message", v);
    }
    Ok(response)
}
