//! `POST /api/v1/visitors`: a new anonymous visitor and its bearer token;
//! `POST /api/v1/visitors/identify`: the host site's signed user (issue 16);
//! `DELETE /api/v1/visitors/me`: this browser signs out;
//! `POST /api/v1/visitors/return`: a return mail's link followed (issue 44, part 2).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{delete, post};
use axum::{Json, Router};
use parley_app::server::state::AppState;
use parley_engine::engine::contacts::client_facts;
use parley_engine::engine::identity::IdentifyError;
use parley_protocol::{ApiCode, CreateVisitor, FollowReturn, Identified, Identify, Returned, VisitorCreated};

use crate::api_error::ApiFailure;
use parley_engine::limits::Action;

use crate::extract::{ApiJson, ClientIp, VisitorAuth, check_origin};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/visitors", post(create))
        .route("/api/v1/visitors/identify", post(identify))
        .route("/api/v1/visitors/me", delete(sign_out))
        .route("/api/v1/visitors/return", post(follow_return))
}

async fn create(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    ApiJson(body): ApiJson<CreateVisitor>,
) -> Result<(StatusCode, Json<VisitorCreated>), ApiFailure> {
    state.limits.check(Action::CreateVisitor, ip, None).map_err(ApiFailure::limited)?;
    let agent = state.engine.agent_by_key(&body.agent).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    check_origin(&headers, &agent)?;
    let host_origin = body.host_origin.as_deref().map(|o| o.trim_end_matches('/'));
    if let Some(origin) = host_origin
        && !agent.allows_origin(origin)
    {
        return Err(ApiFailure::new(ApiCode::OriginNotAllowed, "This website is not allowed to use this agent."));
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let country = state.http.country_header.as_deref().and_then(header);
    let client = client_facts(header("user-agent"), header("accept-language"), country);
    let (visitor, token) = state.engine.create_visitor(&agent, host_origin, &client).await?;
    Ok((StatusCode::CREATED, Json(VisitorCreated { visitor_id: visitor.id, token })))
}

async fn identify(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Identify>,
) -> Result<Json<Identified>, ApiFailure> {
    // As many tries as new visitors: guessing secrets is as slow as making visitors.
    state.limits.check(Action::CreateVisitor, ip, None).map_err(ApiFailure::limited)?;
    let agent = state.engine.agent_by_key(&body.agent).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    if agent.id != visitor.agent_id {
        return Err(ApiFailure::not_found("Agent"));
    }
    check_origin(&headers, &agent)?;
    match state.engine.identify(&agent, &visitor, &body.token).await {
        Ok(identified) => Ok(Json(identified)),
        Err(IdentifyError::Refused(e)) => {
            metrics::counter!("parley_identity_refused_total", "code" => e.code().as_str().to_owned()).increment(1);
            Err(ApiFailure::new(e.code(), e.to_string()))
        }
        Err(IdentifyError::Db(e)) => Err(e.into()),
    }
}

async fn sign_out(State(state): State<AppState>, VisitorAuth(visitor): VisitorAuth) -> Result<StatusCode, ApiFailure> {
    state.engine.sign_out_visitor(&visitor).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A return mail's link: this browser becomes the visitor the conversation belongs to (a new
/// token standing for them) and gets the conversation's id. An unknown or expired link, or one of
/// another agent, is `410 link_expired` and makes nothing. Limited like new visitors.
async fn follow_return(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    ApiJson(body): ApiJson<FollowReturn>,
) -> Result<Json<Returned>, ApiFailure> {
    state.limits.check(Action::CreateVisitor, ip, None).map_err(ApiFailure::limited)?;
    let agent = state.engine.agent_by_key(&body.agent).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
    check_origin(&headers, &agent)?;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let country = state.http.country_header.as_deref().and_then(header);
    let client = client_facts(header("user-agent"), header("accept-language"), country);
    match state.engine.follow_return_link(&agent, &body.token, &client).await? {
        Some(r) => Ok(Json(Returned { visitor_id: r.visitor_id, token: r.token, conversation_id: r.conversation_id })),
        None => Err(ApiFailure::new(
            ApiCode::LinkExpired,
            "This link has expired or is not valid. Answering the mail still reaches the conversation.",
        )),
    }
}
