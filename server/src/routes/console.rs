//! Console routes that are not server functions: the live feed (SSE), a person's JSON export and
//! the images visitors sent (the CSV exports are in [`super::exports`]). All check the session
//! like the server functions do.

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use parley_app::server::state::AppState;
use parley_engine::auth::{AuthError, authorize};
use serde::Deserialize;
use tokio_stream::wrappers::BroadcastStream;
use tower_sessions::Session;

use crate::api_error::ApiFailure;
use crate::extract::ClientIp;
use parley_protocol::ApiCode;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/feed", get(feed))
        .route("/admin/export.json", get(export_json))
        .route("/admin/attachments/{id}", get(attachment))
        .route("/admin/sign-in", post(sign_in_form))
        .route("/admin/push-sw.js", get(push_service_worker))
        .route("/admin/console-notify.js", get(console_notify_script))
}

/// The console's notification helpers (sound, desktop notifications, Web Push subscription).
async fn console_notify_script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")],
        include_str!("console_notify.js"),
    )
        .into_response()
}

/// The console's service worker (Web Push notifications; issue 43). Public like any script: it
/// holds nothing but code. At /admin/, so its scope is the console.
async fn push_service_worker() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")],
        include_str!("push_sw.js"),
    )
        .into_response()
}

#[derive(Deserialize)]
struct SignInForm {
    email: String,
    password: String,
}

/// The sign-in form sent by the browser itself (before the page's WebAssembly has loaded, or
/// without script): signed in → the dashboard; refused → back to the form, which says why.
async fn sign_in_form(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    ClientIp(ip): ClientIp,
    axum::Form(form): axum::Form<SignInForm>,
) -> Response {
    use axum::response::Redirect;
    use parley_engine::auth::{is_cross_site, sign_in};
    if is_cross_site(&headers) {
        return refused(AuthError::CrossSite).into_response();
    }
    match sign_in(&state.engine, &state.auth, &session, ip, &form.email, &form.password).await {
        Ok(_) => Redirect::to("/admin").into_response(),
        Err(AuthError::BadCredentials) => Redirect::to("/admin/login?refused=credentials").into_response(),
        Err(AuthError::TooMany { retry_after }) => {
            let secs = retry_after.as_secs_f64().ceil().max(1.0) as u64;
            Redirect::to(&format!("/admin/login?refused=busy&wait={secs}")).into_response()
        }
        Err(e) => {
            tracing::error!(error = ?e, "sign-in failed");
            ApiFailure::internal().into_response()
        }
    }
}

pub(super) fn refused(e: AuthError) -> ApiFailure {
    match e {
        AuthError::Unauthorized => ApiFailure::new(ApiCode::Unauthorized, "Sign in first."),
        AuthError::Forbidden => ApiFailure::new(ApiCode::Forbidden, "Your role may not do this."),
        AuthError::CrossSite => ApiFailure::new(ApiCode::CrossSite, "Cross-site request refused."),
        _ => ApiFailure::internal(),
    }
}

/// Console pages need a session: a stranger is sent to the sign-in page before anything renders.
pub async fn gate(State(state): State<AppState>, session: Session, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let page = request.method() == axum::http::Method::GET
        && (path == "/admin" || path.starts_with("/admin/"))
        && !matches!(
            path,
            "/admin/login"
                | "/admin/feed"
                | "/admin/leads.csv"
                | "/admin/conversations.csv"
                | "/admin/export.json"
                | "/admin/push-sw.js"
                | "/admin/console-notify.js"
        )
        && !path.starts_with("/admin/attachments/");
    if page && parley_engine::auth::current_user(&state.engine, &session).await.is_none() {
        return axum::response::Redirect::to("/admin/login").into_response();
    }
    // The file upload's multipart decoder (server_fn) panics on a body without a boundary
    // before the function can check anything: such a request is refused here.
    if path.starts_with("/api/upload_files") && !is_multipart(request.headers()) {
        return (axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE, "multipart/form-data with a boundary expected")
            .into_response();
    }
    next.run(request).await
}

/// The request says it is `multipart/form-data` and names its boundary.
fn is_multipart(headers: &HeaderMap) -> bool {
    headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| {
        t.trim_start().to_ascii_lowercase().starts_with("multipart/form-data") && t.contains("boundary=")
    })
}

/// What changes in conversations, as it happens (ids only; the page reloads what it shows).
async fn feed(State(state): State<AppState>, session: Session, headers: HeaderMap) -> Result<Response, ApiFailure> {
    let user = authorize(&state.engine, &session, &headers, None).await.map_err(refused)?;
    let reader = user.id.clone();
    // Subscribed first: what the presence task below causes (an assignment) is in the feed.
    let changes = state.engine.console_events();
    // While the feed is open its user counts as online (unless away): seen now and every 30 s.
    let open = tokio_util::sync::CancellationToken::new();
    let guard = open.clone().drop_guard();
    {
        let engine = state.engine.clone();
        tokio::spawn(async move {
            let mut online = false;
            loop {
                if let Err(e) = parley_engine::store::hours::seen(engine.db(), &user.id, engine.now_ms()).await {
                    tracing::debug!(error = %e, "marking a console user as seen");
                } else if !online {
                    // Online now: the automatic teams' queues may have waited for them.
                    online = true;
                    engine.assign_waiting().await;
                }
                tokio::select! {
                    () = open.cancelled() => return,
                    () = tokio::time::sleep(PRESENCE_EVERY) => {}
                }
            }
        });
    }
    let closing = state.engine.shutdown_state().streams_closing().clone().cancelled_owned();
    let events = BroadcastStream::new(changes)
        .filter_map(move |e| {
            let reader = reader.clone();
            async move {
                let e = e.ok()?;
                // A mention goes to the mentioned colleague's consoles only.
                if !e.is_for(&reader) {
                    return None;
                }
                Some(Ok::<Event, Infallible>(Event::default().event("change").data(serde_json::to_string(&e).ok()?)))
            }
        })
        .take_until(closing)
        .map(move |event| {
            let _open = &guard;
            event
        });
    let mut response = Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response();
    response.headers_mut().insert("x-accel-buffering", header::HeaderValue::from_static("no"));
    Ok(response)
}

/// How often an open console feed marks its user as seen.
const PRESENCE_EVERY: Duration = Duration::from_secs(30);

/// An image a visitor sent, for the conversation's transcript (any signed-in operator or admin).
async fn attachment(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    authorize(&state.engine, &session, &headers, None).await.map_err(refused)?;
    let (mime, data) = parley_engine::store::attachments::by_id(state.engine.db(), &id)
        .await?
        .ok_or_else(|| ApiFailure::not_found("Image"))?;
    Ok(super::attachments::image_response(&mime, data))
}

/// A file the browser saves (`Content-Disposition: attachment`), never cached.
pub(super) fn download(content_type: &'static str, filename: &str, body: String) -> Response {
    let disposition = format!("attachment; filename=\"{filename}\"");
    let headers = [
        (header::CONTENT_TYPE, content_type.to_owned()),
        (header::CONTENT_DISPOSITION, disposition),
        (header::CACHE_CONTROL, "no-store".to_owned()),
    ];
    (headers, body).into_response()
}

#[derive(Deserialize)]
struct PersonQuery {
    #[serde(default)]
    agent_id: String,
    #[serde(default)]
    user: String,
    #[serde(default)]
    visitor: String,
}

/// Everything stored about a person as a JSON download (administrators): `?visitor=ID`, or
/// `?agent_id=ID&user=SUB` for a website's user. Recorded in the audit log.
async fn export_json(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Query(q): Query<PersonQuery>,
) -> Result<Response, ApiFailure> {
    use parley_engine::engine::privacy::Person;
    use parley_engine::store::users::Role;
    let me = authorize(&state.engine, &session, &headers, Some(Role::Admin)).await.map_err(refused)?;
    let who = Person::named(&q.agent_id, &q.user, &q.visitor)
        .ok_or_else(|| ApiFailure::new(ApiCode::InvalidBody, "Name a visitor, or a user of an agent."))?;
    let data = state.engine.export_person(&who).await?.ok_or_else(|| ApiFailure::not_found("Person"))?;
    state.engine.audit(Some(&me), "person.export", Some(&who.audit_label()), "download").await;
    let body = serde_json::to_string_pretty(&data).map_err(|_| ApiFailure::internal())?;
    Ok(download("application/json; charset=utf-8", "parley-export.json", body))
}
