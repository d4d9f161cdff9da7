//! The one error every console server function answers with, so that pages match a variant
//! instead of comparing texts. It crosses to the browser as JSON
//! (`{"error": "forbidden", "message": "…", "fields": […]}`), the same on both sides; storage
//! errors are logged on the server and reach the browser only as [`ConsoleError::Internal`].

use std::fmt;

use leptos::prelude::{FromServerFnError, ServerFnErrorErr};
use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::{Bytes, Encodes};
use serde::{Deserialize, Serialize};

use super::types::FieldError;

/// Why a console call did not do what was asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "Wire", from = "Wire")]
pub enum ConsoleError {
    /// Nobody is signed in (or the session ended).
    Unauthorized,
    /// Signed in, but the role may not do this.
    Forbidden,
    /// The request came from another site (its `Origin` names another host).
    CrossSite,
    /// The thing asked for does not exist (any more).
    NotFound,
    /// The input was refused; the message of each wrong field.
    Invalid(Vec<FieldError>),
    /// The request clashes with the current state (e.g. someone else holds the conversation).
    Conflict(String),
    /// Too many attempts (sign-in): try again after this many seconds (status 429).
    TooMany(u64),
    /// Something failed on the server; the details are in the server's log only.
    Internal,
    /// The call itself failed: unreadable arguments, or no answer from the server.
    Call(String),
}

impl ConsoleError {
    /// One wrong field.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        ConsoleError::Invalid(vec![FieldError::new(field, message)])
    }

    /// Logs a server-side failure and hides it from the browser.
    #[cfg(feature = "ssr")]
    pub fn internal(error: impl fmt::Display) -> Self {
        tracing::error!(error = %error, "console action failed");
        ConsoleError::Internal
    }

    /// The HTTP status a server function answers with when it fails this way.
    pub fn status(&self) -> u16 {
        match self {
            ConsoleError::Unauthorized => 401,
            ConsoleError::Forbidden | ConsoleError::CrossSite => 403,
            ConsoleError::NotFound => 404,
            ConsoleError::Conflict(_) => 409,
            ConsoleError::Invalid(_) => 422,
            ConsoleError::Call(_) => 400,
            ConsoleError::TooMany(_) => 429,
            ConsoleError::Internal => 500,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            ConsoleError::Unauthorized => "unauthorized",
            ConsoleError::Forbidden => "forbidden",
            ConsoleError::CrossSite => "cross_site",
            ConsoleError::NotFound => "not_found",
            ConsoleError::Invalid(_) => "invalid",
            ConsoleError::Conflict(_) => "conflict",
            ConsoleError::Internal => "internal",
            ConsoleError::TooMany(_) => "too_many",
            ConsoleError::Call(_) => "call",
        }
    }
}

/// What a person reads.
impl fmt::Display for ConsoleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConsoleError::Unauthorized => f.write_str("Your session ended: sign in again."),
            ConsoleError::Forbidden => f.write_str("Your role may not do this."),
            ConsoleError::CrossSite => f.write_str("cross-site request refused"),
            ConsoleError::NotFound => f.write_str("not found"),
            ConsoleError::Invalid(fields) => {
                let messages: Vec<&str> = fields.iter().map(|e| e.message.as_str()).collect();
                f.write_str(&messages.join(" "))
            }
            ConsoleError::Conflict(message) | ConsoleError::Call(message) => f.write_str(message),
            ConsoleError::Internal => f.write_str("something went wrong"),
            ConsoleError::TooMany(secs) => write!(f, "Too many sign-in attempts: try again in {secs} s."),
        }
    }
}

impl std::error::Error for ConsoleError {}

/// The JSON form: the kind, the text, and the fields of an `invalid` answer.
#[derive(Serialize, Deserialize)]
struct Wire {
    error: String,
    message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fields: Vec<FieldError>,
    /// Seconds to wait, for `too_many`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_after: Option<u64>,
}

impl From<ConsoleError> for Wire {
    fn from(e: ConsoleError) -> Self {
        let (error, message) = (e.kind().to_owned(), e.to_string());
        let retry_after = match e {
            ConsoleError::TooMany(secs) => Some(secs),
            _ => None,
        };
        let fields = match e {
            ConsoleError::Invalid(fields) => fields,
            _ => Vec::new(),
        };
        Wire { error, message, fields, retry_after }
    }
}

impl From<Wire> for ConsoleError {
    fn from(w: Wire) -> Self {
        match w.error.as_str() {
            "unauthorized" => ConsoleError::Unauthorized,
            "forbidden" => ConsoleError::Forbidden,
            "cross_site" => ConsoleError::CrossSite,
            "not_found" => ConsoleError::NotFound,
            "invalid" => ConsoleError::Invalid(w.fields),
            "conflict" => ConsoleError::Conflict(w.message),
            "internal" => ConsoleError::Internal,
            "too_many" => ConsoleError::TooMany(w.retry_after.unwrap_or(1)),
            _ => ConsoleError::Call(w.message),
        }
    }
}

impl FromServerFnError for ConsoleError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(e: ServerFnErrorErr) -> Self {
        ConsoleError::Call(e.to_string())
    }

    /// Encodes the answer of a failed call — and, on the server, gives the response the status
    /// that goes with it (401, 403, 404, …). This runs only when a server function answers over
    /// HTTP; a server function called while rendering a page leaves the page's status alone.
    fn ser(&self) -> Bytes {
        #[cfg(feature = "ssr")]
        if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>()
            && let Ok(status) = http::StatusCode::from_u16(self.status())
        {
            response.set_status(status);
            if let ConsoleError::TooMany(secs) = self
                && let Ok(value) = http::HeaderValue::from_str(&secs.to_string())
            {
                response.insert_header(http::header::RETRY_AFTER, value);
            }
        }
        JsonEncoding::encode(self)
            .unwrap_or_else(|_| Bytes::from_static(br#"{"error":"internal","message":"something went wrong"}"#))
    }
}

#[cfg(feature = "ssr")]
impl From<parley_engine::store::DbError> for ConsoleError {
    fn from(e: parley_engine::store::DbError) -> Self {
        ConsoleError::internal(e)
    }
}

#[cfg(feature = "ssr")]
impl From<parley_engine::engine::reports::ReportError> for ConsoleError {
    fn from(e: parley_engine::engine::reports::ReportError) -> Self {
        use parley_engine::engine::reports::ReportError;
        match e {
            ReportError::Invalid(field, message) => ConsoleError::invalid(field, message),
            ReportError::Db(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(e: &ConsoleError) -> String {
        serde_json::to_string(e).unwrap_or_default()
    }

    #[test]
    fn every_variant_crosses_the_wire_as_itself() {
        for e in [
            ConsoleError::Unauthorized,
            ConsoleError::Forbidden,
            ConsoleError::CrossSite,
            ConsoleError::NotFound,
            ConsoleError::invalid("name", "A name of 1 to 80 characters."),
            ConsoleError::Conflict("claim the conversation first".into()),
            ConsoleError::Internal,
            ConsoleError::TooMany(3),
            ConsoleError::Call("error reaching server".into()),
        ] {
            let back: ConsoleError = serde_json::from_str(&wire(&e)).unwrap();
            assert_eq!(back, e);
        }
    }

    #[test]
    fn refusals_name_themselves_in_lower_case() {
        assert!(wire(&ConsoleError::Unauthorized).contains("unauthorized"));
        assert!(wire(&ConsoleError::Forbidden).contains("forbidden"));
        assert!(wire(&ConsoleError::CrossSite).contains("cross-site"));
        assert!(wire(&ConsoleError::NotFound).contains("not found"));
        assert_eq!(
            wire(&ConsoleError::invalid("status", "unknown status")),
            r#"{"error":"invalid","message":"unknown status","fields":[{"field":"status","message":"unknown status"}]}"#
        );
    }
}
