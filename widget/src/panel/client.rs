//! The panel's HTTP client in the browser: JSON calls and SSE streams read from `fetch` bodies
//! (an `EventSource` cannot POST or send a bearer token).

use js_sys::{Reflect, Uint8Array};
use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Headers, ReadableStreamDefaultReader, Request, RequestInit, Response};

use crate::protocol::{ApiCode, ApiError, StreamEvent};
use crate::sse::SseParser;

/// A failed call.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientError {
    /// The server answered with an error.
    Api { status: u16, error: ApiError },
    /// The network failed (or the request was aborted).
    Network(String),
}

impl ClientError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            ClientError::Network(_) => None,
        }
    }
}

pub(super) fn js_err(e: JsValue) -> ClientError {
    ClientError::Network(
        e.as_string().or_else(|| js_sys::JSON::stringify(&e).ok().and_then(|s| s.as_string())).unwrap_or_default(),
    )
}

async fn fetch(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<String>,
    extra: &[(&str, String)],
    signal: Option<&AbortSignal>,
) -> Result<Response, ClientError> {
    let window = web_sys::window().ok_or_else(|| ClientError::Network("no window".into()))?;
    let headers = Headers::new().map_err(js_err)?;
    if body.is_some() {
        headers.set("Content-Type", "application/json").map_err(js_err)?;
    }
    if let Some(token) = token {
        headers.set("Authorization", &format!("Bearer {token}")).map_err(js_err)?;
    }
    for (k, v) in extra {
        headers.set(k, v).map_err(js_err)?;
    }
    let init = RequestInit::new();
    init.set_method(method);
    init.set_headers(&headers);
    if let Some(body) = body {
        init.set_body(&JsValue::from_str(&body));
    }
    if let Some(signal) = signal {
        init.set_signal(Some(signal));
    }
    let request = Request::new_with_str_and_init(url, &init).map_err(js_err)?;
    let response: Response =
        JsFuture::from(window.fetch_with_request(&request)).await.map_err(js_err)?.dyn_into().map_err(js_err)?;
    if response.ok() {
        return Ok(response);
    }
    Err(failure(&response).await)
}

/// The API error of a failed answer (its JSON body, or the status alone).
pub(super) async fn failure(response: &Response) -> ClientError {
    let status = response.status();
    let text = match response.text() {
        Ok(p) => JsFuture::from(p).await.ok().and_then(|v| v.as_string()).unwrap_or_default(),
        Err(_) => String::new(),
    };
    let error = crate::json::from_str::<ApiError>(&text).unwrap_or(ApiError {
        error: ApiCode::Other("http_error".into()),
        message: format!("The server answered {status}."),
        fields: Vec::new(),
    });
    ClientError::Api { status, error }
}

/// A JSON call.
pub async fn json<B: Serialize, T: DeserializeOwned>(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&B>,
) -> Result<T, ClientError> {
    let body = body.map(crate::json::to_string);
    let response = fetch(method, url, token, body, &[], None).await?;
    let text = JsFuture::from(response.text().map_err(js_err)?).await.map_err(js_err)?.as_string().unwrap_or_default();
    crate::json::from_str(&text).map_err(|e| ClientError::Network(format!("bad JSON from the server: {e}")))
}

/// How a stream ended.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEnd {
    /// The server closed it.
    Closed,
    /// It broke off (network); resume after the last event seen.
    Broken(String),
}

/// Opens an SSE stream and calls `on_event` for every event, in order.
pub async fn stream(
    method: &str,
    url: &str,
    token: &str,
    body: Option<String>,
    last_event_id: Option<u64>,
    signal: Option<&AbortSignal>,
    mut on_event: impl FnMut(u64, StreamEvent),
) -> Result<StreamEnd, ClientError> {
    let extra: Vec<(&str, String)> = last_event_id.map(|id| ("Last-Event-ID", id.to_string())).into_iter().collect();
    let response = fetch(method, url, Some(token), body, &extra, signal).await?;
    let Some(body) = response.body() else { return Ok(StreamEnd::Closed) };
    let reader: ReadableStreamDefaultReader = body.get_reader().dyn_into().map_err(|e| js_err(e.into()))?;
    let mut parser = SseParser::new();
    loop {
        let chunk = match JsFuture::from(reader.read()).await {
            Ok(c) => c,
            Err(e) => return Ok(StreamEnd::Broken(js_err(e).to_string())),
        };
        let done = Reflect::get(&chunk, &JsValue::from_str("done")).ok().and_then(|v| v.as_bool()).unwrap_or(true);
        if done {
            return Ok(StreamEnd::Closed);
        }
        let value = Reflect::get(&chunk, &JsValue::from_str("value")).map_err(js_err)?;
        let bytes = Uint8Array::new(&value).to_vec();
        let parsed = parser.feed_bytes_with(&bytes, |frame| {
            // Events without an `id:` (typing indicators) are passed on with sequence number 0.
            let seq = match frame.id.as_deref() {
                Some(id) => id.parse().ok(),
                None => Some(0),
            };
            let name = frame.event.as_deref().unwrap_or("message");
            if let (Some(seq), Ok(Some(event))) = (seq, StreamEvent::parse(name, &frame.data)) {
                on_event(seq, event);
            }
        });
        parsed.map_err(|e| ClientError::Network(e.to_string()))?;
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Api { error, .. } => f.write_str(&error.message),
            ClientError::Network(m) => write!(f, "network error: {m}"),
        }
    }
}

/// Sends a request that the browser completes even if the page is unloading (`keepalive`); the
/// answer is not read.
pub fn fire_and_forget(method: &str, url: &str, token: &str) {
    let Some(window) = web_sys::window() else { return };
    let Ok(headers) = Headers::new() else { return };
    if headers.set("Authorization", &format!("Bearer {token}")).is_err() {
        return;
    }
    let init = RequestInit::new();
    init.set_method(method);
    init.set_headers(&headers);
    // web-sys has no setter for it; the dictionary takes it as a plain property.
    let _ = js_sys::Reflect::set(&init, &"keepalive".into(), &true.into());
    if let Ok(request) = Request::new_with_str_and_init(url, &init) {
        let _ = window.fetch_with_request(&request);
    }
}
