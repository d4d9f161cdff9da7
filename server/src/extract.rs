//! Request extractors of the widget API: JSON bodies with API errors, the visitor's bearer token,
//! and the origin rules of an agent.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use parley_app::server::state::AppState;
use parley_engine::store::agents::Agent;
use parley_engine::store::visitors::Visitor;
use serde::de::DeserializeOwned;

use crate::api_error::ApiFailure;
use parley_protocol::ApiCode;

/// A JSON body; a bad one is answered with a clear API error.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiFailure;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
            let mime = v.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
        });
        if !json {
            return Err(ApiFailure::new(ApiCode::JsonRequired, "Expected `Content-Type: application/json`."));
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiFailure::new(ApiCode::BodyTooLarge, e.body_text()))?;
        // Text a database cannot store is refused here, before anything is done with it.
        if has_nul(&bytes) {
            return Err(ApiFailure::new(ApiCode::InvalidBody, "Text may not contain NUL characters (\\u0000)."));
        }
        match axum::Json::<T>::from_bytes(&bytes) {
            Ok(axum::Json(v)) => Ok(ApiJson(v)),
            Err(r) => Err(r.into()),
        }
    }
}

/// A NUL in a JSON text: a raw zero byte or the escape `\u0000` (not an escaped backslash
/// followed by `u0000`).
fn has_nul(body: &[u8]) -> bool {
    if body.contains(&0) {
        return true;
    }
    let mut i = 0;
    while let Some(at) = body[i..].windows(6).position(|w| w[0] == b'\\' && w[1] == b'u' && &w[2..] == b"0000") {
        let at = i + at;
        let backslashes = body[..=at].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 1 {
            return true;
        }
        i = at + 1;
    }
    false
}

/// The client's IP address: the socket's peer, or the `X-Forwarded-For` hop named by the trusted
/// proxies (see [`parley_engine::net`]).
pub struct ClientIp(pub std::net::IpAddr);

impl FromRequestParts<AppState> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        // Every listener serves with connect info; a request built without it (an in-process
        // call) counts as coming from the unspecified address.
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|c| c.0)
            .unwrap_or_else(|| std::net::SocketAddr::from(([0, 0, 0, 0], 0)));
        Ok(ClientIp(state.http.trusted_proxies.client_ip(peer, &parts.headers)))
    }
}

/// The visitor identified by `Authorization: Bearer <token>`, calling from a page its agent
/// allows (see [`check_origin`]; the page the visitor was created on must still be allowed).
pub struct VisitorAuth(pub Visitor);

impl FromRequestParts<AppState> for VisitorAuth {
    type Rejection = ApiFailure;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ApiFailure::new(ApiCode::TokenRequired, "A visitor token is required."))?;
        let visitor = state
            .engine
            .visitor_by_token(token)
            .await?
            .ok_or_else(|| ApiFailure::new(ApiCode::BadToken, "This visitor token is not valid."))?;
        let agent = state.engine.agent_by_id(&visitor.agent_id).await?.ok_or_else(|| ApiFailure::not_found("Agent"))?;
        check_origin(&parts.headers, &agent)?;
        if let Some(host) = &visitor.host_origin
            && !agent.allows_origin(host)
        {
            return Err(not_allowed());
        }
        Ok(VisitorAuth(visitor))
    }
}

/// The `Origin` of a browser request, when it is not this server itself.
pub fn foreign_origin(headers: &HeaderMap) -> Option<String> {
    let origin = headers.get(header::ORIGIN)?.to_str().ok()?;
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let origin_host = origin.split_once("://").map(|(_, rest)| rest).unwrap_or(origin);
    if !host.is_empty() && origin_host.eq_ignore_ascii_case(host) {
        None
    } else {
        Some(origin.trim_end_matches('/').to_owned())
    }
}

/// Browser requests from another origin must come from one the agent allows. The widget's own
/// panel runs on this server's origin. A browser request without `Origin` (browsers say what they
/// are with `Sec-Fetch-Site`) passes only from this server's own pages; server-to-server calls
/// send neither header.
pub fn check_origin(headers: &HeaderMap, agent: &Agent) -> Result<(), ApiFailure> {
    // A browser says a request comes from this server's own pages (the widget's panel) with
    // `Sec-Fetch-Site: same-origin`, which no page can forge; under `no-referrer` its `Origin`
    // may read `null`.
    if headers.get("sec-fetch-site").is_some_and(|v| v == "same-origin") {
        return Ok(());
    }
    match foreign_origin(headers) {
        Some(origin) if !agent.allows_origin(&origin) => Err(not_allowed()),
        Some(_) => Ok(()),
        None if headers.get(header::ORIGIN).is_none() => {
            match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
                Some("same-origin") | None => Ok(()),
                Some(_) => Err(not_allowed()),
            }
        }
        None => Ok(()),
    }
}

fn not_allowed() -> ApiFailure {
    ApiFailure::new(ApiCode::OriginNotAllowed, "This website is not allowed to use this agent.")
}

#[cfg(test)]
mod tests {
    use super::has_nul;

    #[test]
    fn finds_nul_bytes_and_escapes_but_not_an_escaped_backslash() {
        assert!(has_nul(b"{\"m\":\"a\\u0000b\"}"));
        assert!(has_nul(b"{\"m\":\"a\0b\"}"));
        assert!(has_nul(b"{\"m\":\"\\\\\\u0000\"}"));
        assert!(!has_nul(b"{\"m\":\"a\\\\u0000b\"}"));
        assert!(!has_nul(b"{\"m\":\"hello\"}"));
    }
}
