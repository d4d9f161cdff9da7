//! A visitor's conversation: transcript, live/resumed event stream, stop, lead form, ratings.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use parley_app::server::state::AppState;
use parley_protocol::{ApiCode, LeadForm, Rate, Transcript};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::api_error::ApiFailure;
use parley_engine::limits::{Action, StreamKind};

use crate::extract::{ApiJson, ClientIp, VisitorAuth};
use crate::sse_body::{ends_when_idle, held_while_open, sse_response};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/conversations/{id}", get(transcript))
        .route("/api/v1/conversations/{id}/events", get(events))
        .route("/api/v1/conversations/{id}/stop", post(stop))
        .route("/api/v1/conversations/{id}/lead", post(lead))
        .route("/api/v1/conversations/{id}/typing", post(typing))
        .route("/api/v1/conversations/{id}/rating", post(rate))
        .route("/api/v1/conversations/{id}/transcript-email", post(email_transcript))
}

async fn transcript(
    State(state): State<AppState>,
    VisitorAuth(visitor): VisitorAuth,
    Path(id): Path<String>,
) -> Result<Json<Transcript>, ApiFailure> {
    Ok(Json(state.engine.transcript(&visitor, &id).await?))
}

#[derive(Deserialize)]
struct After {
    after: Option<u64>,
}

/// Follows the stream after `Last-Event-ID` (or `?after=`), replaying what was missed.
async fn events(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    Path(id): Path<String>,
    Query(query): Query<After>,
    headers: HeaderMap,
) -> Result<Response, ApiFailure> {
    let header = headers.get("last-event-id").and_then(|v| v.to_str().ok()).map(str::trim);
    let after = match header {
        Some(v) if !v.is_empty() => {
            v.parse::<u64>().map_err(|_| ApiFailure::new(ApiCode::BadLastEventId, "Last-Event-ID must be a number."))?
        }
        _ => query.after.unwrap_or(0),
    };
    state.limits.check(Action::Resume, ip, Some(&visitor.id)).map_err(ApiFailure::limited)?;
    let permit = state.limits.stream(StreamKind::Resume, &visitor.id, ip).map_err(ApiFailure::limited)?;
    let frames = state.engine.follow(&visitor, &id, after).await?;
    // A follower with nothing to hear for a while is let go (it reconnects with Last-Event-ID):
    // idle streams do not hold their room forever.
    let frames = ends_when_idle(frames, state.limits.settings().resume_idle);
    Ok(sse_response(held_while_open(frames, permit), true, state.engine.shutdown_state().streams_closing()))
}

async fn stop(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiFailure> {
    state.limits.check(Action::SmallCall, ip, Some(&visitor.id)).map_err(ApiFailure::limited)?;
    let stopped = state.engine.stop(&visitor, &id).await?;
    Ok(Json(json!({ "stopped": stopped })))
}

async fn lead(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    Path(id): Path<String>,
    ApiJson(form): ApiJson<LeadForm>,
) -> Result<(StatusCode, Json<Value>), ApiFailure> {
    state.limits.check(Action::Lead, ip, Some(&visitor.id)).map_err(ApiFailure::limited)?;
    let lead_id = state.engine.submit_lead(&visitor, &id, &form).await?;
    Ok((StatusCode::CREATED, Json(json!({ "lead_id": lead_id }))))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TypingBody {
    active: bool,
}

/// The visitor is typing: shown to the person handling the conversation.
async fn typing(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<TypingBody>,
) -> Result<StatusCode, ApiFailure> {
    state.limits.check(Action::SmallCall, ip, Some(&visitor.id)).map_err(ApiFailure::limited)?;
    state.engine.visitor_typing(&visitor, &id, body.active).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The visitor rates an answer or the closed conversation (limited like leads).
async fn rate(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    Path(id): Path<String>,
    ApiJson(rate): ApiJson<Rate>,
) -> Result<Json<Value>, ApiFailure> {
    state.limits.check(Action::Rate, ip, Some(&visitor.id)).map_err(ApiFailure::limited)?;
    state.engine.rate(&visitor, &id, &rate).await?;
    Ok(Json(json!({ "message_id": rate.message_id, "score": rate.score })))
}

/// The body of a transcript request: empty, or the code mailed to confirm the address.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TranscriptCode {
    code: Option<String>,
}

/// Mails the conversation to the visitor's address: the website's signed-in user's email, or
/// the contact form's once confirmed. An unconfirmed address first gets a code (`202` with
/// `code_sent_to`); the same request with `{"code": "…"}` confirms it and sends (`202` with
/// `sent_to`). Addresses masked; a few a day per visitor, address and agent.
async fn email_transcript(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<Value>), ApiFailure> {
    use parley_engine::engine::mail::{TranscriptMail, TranscriptMailError as E};
    let code = match body.trim_ascii() {
        b"" | b"null" => None,
        json => {
            serde_json::from_slice::<TranscriptCode>(json)
                .map_err(|e| ApiFailure::new(ApiCode::InvalidBody, format!("Expected `{{\"code\": \"…\"}}`: {e}")))?
                .code
        }
    };
    match state.engine.email_transcript(&visitor.id, &id, ip, code.as_deref()).await {
        Ok(TranscriptMail::Sent(to)) => Ok((StatusCode::ACCEPTED, Json(json!({ "sent_to": to })))),
        Ok(TranscriptMail::CodeSent(to)) => Ok((StatusCode::ACCEPTED, Json(json!({ "code_sent_to": to })))),
        Err(E::NotFound) => Err(ApiFailure::not_found("Conversation")),
        Err(E::NotConfigured) => Err(ApiFailure::new(ApiCode::Unavailable, E::NotConfigured.to_string())),
        Err(e @ (E::NoAddress | E::WrongCode)) => Err(ApiFailure::new(ApiCode::InvalidBody, e.to_string())),
        Err(E::TooMany) => {
            Err(ApiFailure { retry_after: Some(3600), ..ApiFailure::new(ApiCode::RateLimited, E::TooMany.to_string()) })
        }
        Err(E::Db(e)) => Err(e.into()),
    }
}
