//! `/mcp`: the agent's tools over the Model Context Protocol (Streamable HTTP, stateless). Every
//! request must carry an MCP access token, as `Authorization: Bearer pm_…` or `?token=pm_…`; the
//! `feature_set` (`base`/`detail`) and `output` (`raw`/`text`) query parameters override the
//! token's defaults. A request without a valid token is answered 401 before the MCP layer sees it.
//!
//! `/sse/mcp`: the same tools over the older HTTP+SSE transport (protocol 2024-11-05), which the
//! seed's client configuration uses (`transportType: "sse"`). `GET /sse/mcp?token=…` opens an event
//! stream whose first event (`endpoint`) names where to post messages:
//! `/sse/mcp/message?sessionId=…`. The session id is a random 128-bit secret known only to the
//! stream's reader, so posts need no token of their own; they are answered `202` and the replies
//! come as `message` events on the stream. The session lives as long as its stream; like every
//! stream it ends when the server shuts down (clients reconnect). Sessions live in the process
//! that opened them: behind several replicas, route `/sse/mcp` with client affinity.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use futures::StreamExt;
use futures::channel::mpsc;
use parley_app::server::mcp::service::{http_service, serve_sse_session};
use parley_app::server::mcp::{AuthError, Overrides, authenticate};
use parley_app::server::state::AppState;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use tokio_util::sync::CancellationToken;

use crate::api_error::ApiFailure;
use axum::extract::ConnectInfo;
use parley_engine::limits::Action;
use parley_protocol::ApiCode;

/// Open SSE sessions of one process at most (each holds a small server task and two queues).
const MAX_SSE_SESSIONS: usize = 1_000;
/// Open SSE sessions of one token at most: one token cannot hold every session.
const MAX_SSE_SESSIONS_PER_TOKEN: usize = 16;
/// Requests to `/mcp` of one token in progress at most (a tool call's answer streams while the
/// tool runs): one token cannot hold every connection and tool worker.
pub const MAX_HTTP_REQUESTS_PER_TOKEN: usize = 16;
/// How long a refused token is refused again without the database being asked.
const REFUSED_FOR: Duration = Duration::from_secs(300);
/// Refused tokens remembered at most (the memory of a flood of garbage tokens stays bounded).
const MAX_REFUSED: usize = 10_000;
/// Messages queued per direction of an SSE session before the sender waits.
const SSE_QUEUE: usize = 32;
/// Largest message posted to an SSE session, in bytes (as `/mcp`).
const MAX_SSE_MESSAGE_BYTES: usize = 256 * 1024;

/// An open SSE session: where its posted messages go, and the token (its digest) it runs with.
struct SseSession {
    to_server: mpsc::Sender<ClientJsonRpcMessage>,
    token: u64,
}

/// The open SSE sessions of this process.
#[derive(Clone, Default)]
struct SseSessions(Arc<Mutex<HashMap<String, SseSession>>>);

impl SseSessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SseSession>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A token's digest (for counting and remembering, never stored as it is).
fn digest(token: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    token.hash(&mut h);
    h.finish()
}

/// Tokens refused lately (by digest): asked again, they are refused without a database lookup.
static REFUSED: std::sync::LazyLock<Mutex<HashMap<u64, std::time::Instant>>> = std::sync::LazyLock::new(Mutex::default);

fn refused_lately(token: &str) -> bool {
    let refused = REFUSED.lock().unwrap_or_else(|p| p.into_inner());
    refused.get(&digest(token)).is_some_and(|at| at.elapsed() < REFUSED_FOR)
}

fn remember_refused(token: &str) {
    let mut refused = REFUSED.lock().unwrap_or_else(|p| p.into_inner());
    if refused.len() >= MAX_REFUSED {
        refused.retain(|_, at| at.elapsed() < REFUSED_FOR);
        if refused.len() >= MAX_REFUSED {
            refused.clear();
        }
    }
    refused.insert(digest(token), std::time::Instant::now());
}

/// `/mcp` requests in progress, per token digest.
static IN_FLIGHT: std::sync::LazyLock<Mutex<HashMap<u64, usize>>> = std::sync::LazyLock::new(Mutex::default);

/// One `/mcp` request of a token in progress, until its answer's body is dropped.
struct InFlight(u64);

impl InFlight {
    /// `None` when the token has [`MAX_HTTP_REQUESTS_PER_TOKEN`] requests in progress.
    fn enter(token: u64) -> Option<InFlight> {
        let mut open = IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(token).or_default();
        if *n >= MAX_HTTP_REQUESTS_PER_TOKEN {
            return None;
        }
        *n += 1;
        Some(InFlight(token))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut open = IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.0) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.0);
            }
        }
    }
}

/// Forgets a session when its event stream is dropped (the client went, or the server stops).
struct SessionGuard {
    sessions: SseSessions,
    id: String,
    stop: CancellationToken,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.sessions.lock().remove(&self.id);
        self.stop.cancel();
    }
}

pub fn router(state: &AppState) -> Router<AppState> {
    let with_token = Router::new()
        .route_service("/mcp", http_service(state.engine.clone()))
        .route("/sse/mcp", get(open_sse))
        .layer(middleware::from_fn_with_state(state.clone(), require_token));
    with_token.route("/sse/mcp/message", post(post_sse_message)).layer(Extension(SseSessions::default()))
}

/// `GET /sse/mcp`: a new session and its event stream (the token was checked by the layer).
async fn open_sse(
    State(state): State<AppState>,
    Extension(sessions): Extension<SseSessions>,
    request: Request,
) -> Response {
    let (Some(token), overrides) = credentials(&request) else {
        return ApiFailure::new(ApiCode::TokenRequired, AuthError::Missing.to_string()).into_response();
    };
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (to_server, incoming) = mpsc::channel(SSE_QUEUE);
    {
        let mut open = sessions.lock();
        let of_token = open.values().filter(|s| s.token == digest(&token)).count();
        if open.len() >= MAX_SSE_SESSIONS || of_token >= MAX_SSE_SESSIONS_PER_TOKEN {
            let message = if of_token >= MAX_SSE_SESSIONS_PER_TOKEN {
                "this token holds too many open MCP SSE sessions; close one first"
            } else {
                "too many open MCP SSE sessions; try again shortly"
            };
            return ApiFailure { retry_after: Some(5), ..ApiFailure::new(ApiCode::RateLimited, message) }
                .into_response();
        }
        open.insert(id.clone(), SseSession { to_server, token: digest(&token) });
    }
    let (outgoing, to_client) = mpsc::channel(SSE_QUEUE);
    let stop = CancellationToken::new();
    serve_sse_session(state.engine.clone(), token, overrides, incoming, outgoing, stop.clone());
    let guard = SessionGuard { sessions, id: id.clone(), stop };
    let endpoint = Event::default().event("endpoint").data(format!("/sse/mcp/message?sessionId={id}"));
    let closing = state.engine.shutdown_state().streams_closing().clone().cancelled_owned();
    let events = futures::stream::once(async move { endpoint })
        .chain(to_client.map(|message: ServerJsonRpcMessage| {
            Event::default().event("message").json_data(&message).unwrap_or_else(|e| {
                tracing::error!(error = %e, "an MCP message could not be encoded");
                Event::default().comment("unencodable message")
            })
        }))
        .take_until(closing)
        .map(move |event| {
            let _session = &guard;
            Ok::<Event, Infallible>(event)
        });
    let mut response = Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response();
    response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[derive(serde::Deserialize)]
struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// `POST /sse/mcp/message?sessionId=…`: one JSON-RPC message for a session's server.
async fn post_sse_message(
    Extension(sessions): Extension<SseSessions>,
    Query(query): Query<SessionQuery>,
    body: axum::body::Bytes,
) -> Response {
    let Some(mut to_server) = sessions.lock().get(&query.session_id).map(|s| s.to_server.clone()) else {
        return ApiFailure::new(ApiCode::NotFound, "no open MCP SSE session has this id; open /sse/mcp again")
            .into_response();
    };
    if body.len() > MAX_SSE_MESSAGE_BYTES {
        return ApiFailure::new(ApiCode::BodyTooLarge, "an MCP message may be at most 256 KB").into_response();
    }
    let message: ClientJsonRpcMessage = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(e) => {
            return ApiFailure::new(ApiCode::MalformedJson, format!("not a JSON-RPC message of MCP: {e}"))
                .into_response();
        }
    };
    use futures::SinkExt;
    match tokio::time::timeout(Duration::from_secs(10), to_server.send(message)).await {
        Ok(Ok(())) => StatusCode::ACCEPTED.into_response(),
        Ok(Err(_)) => {
            ApiFailure::new(ApiCode::NotFound, "this MCP SSE session has ended; open /sse/mcp again").into_response()
        }
        Err(_) => ApiFailure {
            retry_after: Some(1),
            ..ApiFailure::new(ApiCode::Unavailable, "this MCP SSE session is not reading its messages")
        }
        .into_response(),
    }
}

/// The token and the overrides of a request.
fn credentials(request: &Request) -> (Option<String>, Overrides) {
    let mut token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let mut overrides = Overrides::default();
    if let Some(query) = request.uri().query() {
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match key.as_ref() {
                "token" if token.is_none() && !value.trim().is_empty() => token = Some(value.trim().to_owned()),
                "feature_set" => overrides.feature_set = Some(value.into_owned()),
                "output" => overrides.output = Some(value.into_owned()),
                _ => {}
            }
        }
    }
    (token, overrides)
}

async fn require_token(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    // Counted per address before anything is looked up; a token refused lately is refused again
    // without the database.
    if let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<std::net::SocketAddr>>() {
        let ip = state.http.trusted_proxies.client_ip(*peer, request.headers());
        if let Err(refused) = state.limits.check(Action::Mcp, ip, None) {
            return ApiFailure::limited(refused).into_response();
        }
    }
    let (token, overrides) = credentials(&request);
    let outcome = match &token {
        Some(token) if refused_lately(token) => Err(AuthError::Invalid),
        Some(token) => authenticate(&state.engine, token, &overrides).await,
        None => Err(AuthError::Missing),
    };
    if let (Some(token), Err(AuthError::Invalid)) = (&token, &outcome) {
        let cached = refused_lately(token);
        metrics::counter!("parley_mcp_tokens_refused_total", "cached" => if cached { "true" } else { "false" })
            .increment(1);
        if !cached {
            remember_refused(token);
        }
    }
    match outcome {
        Ok(access) => {
            let held = match token.as_deref().filter(|_| request.uri().path() == "/mcp") {
                Some(token) => match InFlight::enter(digest(token)) {
                    Some(held) => Some(held),
                    None => {
                        metrics::counter!("parley_mcp_requests_refused_total").increment(1);
                        let message = "this token has too many MCP requests in progress; wait for one to finish";
                        return ApiFailure { retry_after: Some(1), ..ApiFailure::new(ApiCode::RateLimited, message) }
                            .into_response();
                    }
                },
                None => None,
            };
            request.extensions_mut().insert(Arc::new(access));
            let response = next.run(request).await;
            let Some(held) = held else { return response };
            // Counted until the answer (a stream while a tool runs) is sent or dropped.
            let (parts, body) = response.into_parts();
            let body = axum::body::Body::from_stream(body.into_data_stream().map(move |chunk| {
                let _held = &held;
                chunk
            }));
            Response::from_parts(parts, body)
        }
        Err(AuthError::Db(e)) => ApiFailure::from(e).into_response(),
        Err(AuthError::BadSetting(message)) => ApiFailure::new(ApiCode::BadMcpSetting, message).into_response(),
        Err(e @ (AuthError::Missing | AuthError::Invalid)) => {
            let code = if matches!(e, AuthError::Missing) { ApiCode::TokenRequired } else { ApiCode::BadToken };
            let mut response = ApiFailure::new(code, e.to_string()).into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"parley-mcp\""));
            response
        }
    }
}
