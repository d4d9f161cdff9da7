//! Errors of the HTTP API: a stable [`ApiCode`], a message for people and, for forms, the fields
//! at fault. The HTTP status of every code is decided here, in [`status_of`]. Internals are
//! logged, never sent.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use parley_engine::engine::chat::ChatError;
use parley_engine::limits::Refused;
use parley_engine::store::DbError;
use parley_protocol::{ApiCode, ApiError, FieldError};

/// `Retry-After` of a 503: long enough for a load balancer to notice, short for a visitor.
pub const UNAVAILABLE_RETRY_SECS: u64 = 2;

/// An error answer of the API.
#[derive(Debug)]
pub struct ApiFailure {
    pub body: ApiError,
    /// Seconds for `Retry-After` (refused by a limit).
    pub retry_after: Option<u64>,
}

/// The HTTP status each code is answered with.
pub fn status_of(code: &ApiCode) -> StatusCode {
    use ApiCode::*;
    match code {
        TokenRequired | BadToken | BadSignature | Unauthorized => StatusCode::UNAUTHORIZED,
        IdentityInvalid | IdentityAlgorithm | IdentitySignature | IdentityExpired | IdentityAudience
        | IdentityLifetime => StatusCode::UNAUTHORIZED,
        OriginNotAllowed | Forbidden | CrossSite | IdentityRequired => StatusCode::FORBIDDEN,
        IdentityNotConfigured => StatusCode::CONFLICT,
        ContextTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        NotFound | AttachmentNotFound => StatusCode::NOT_FOUND,
        ReplyInProgress | ConversationClosed | WebhookReplayed => StatusCode::CONFLICT,
        LinkExpired => StatusCode::GONE,
        MessageTooLong | BodyTooLarge | AttachmentTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        JsonRequired | UnsupportedImage => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        BadLastEventId | MalformedJson | UnreadableBody | EmptyAttachment | BadMcpSetting => StatusCode::BAD_REQUEST,
        EmptyMessage | BadClientMessageId | InvalidForm | PrechatRequired | InvalidBody | ImagesNotSupported
        | TooManyAttachments | OrderMismatch => StatusCode::UNPROCESSABLE_ENTITY,
        TooManyWaitingImages | RateLimited => StatusCode::TOO_MANY_REQUESTS,
        Internal | Other(_) => StatusCode::INTERNAL_SERVER_ERROR,
        Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

impl ApiFailure {
    pub fn new(code: ApiCode, message: impl Into<String>) -> Self {
        ApiFailure { body: ApiError { error: code, message: message.into(), fields: Vec::new() }, retry_after: None }
    }

    /// Refused by a limit: 429 with `Retry-After`.
    pub fn limited(refused: Refused) -> Self {
        metrics::counter!("parley_rate_limited_total", "reason" => refused.reason).increment(1);
        let secs = refused.retry_after_secs();
        ApiFailure {
            retry_after: Some(secs),
            ..ApiFailure::new(ApiCode::RateLimited, format!("Too many {}. Try again in {secs} s.", refused.reason))
        }
    }

    pub fn not_found(what: &str) -> Self {
        ApiFailure::new(ApiCode::NotFound, format!("{what} not found."))
    }

    pub fn internal() -> Self {
        ApiFailure::new(ApiCode::Internal, "Something went wrong on our side. Please try again.")
    }

    /// Shutting down or the database is unreachable: 503 with `Retry-After`; nothing was done.
    pub fn unavailable() -> Self {
        ApiFailure {
            retry_after: Some(UNAVAILABLE_RETRY_SECS),
            ..ApiFailure::new(ApiCode::Unavailable, "The service is briefly unavailable. Please try again in a moment.")
        }
    }

    pub fn status(&self) -> StatusCode {
        status_of(&self.body.error)
    }
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        let mut response = (self.status(), Json(self.body)).into_response();
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, secs.into());
        }
        response
    }
}

impl From<DbError> for ApiFailure {
    fn from(e: DbError) -> Self {
        if parley_engine::store::is_unavailable(&e) {
            tracing::warn!(error = %e, "database unavailable");
            return ApiFailure::unavailable();
        }
        tracing::error!(error = %e, "database error");
        ApiFailure::internal()
    }
}

impl From<ChatError> for ApiFailure {
    fn from(e: ChatError) -> Self {
        match e {
            ChatError::NotFound => ApiFailure::not_found("Conversation"),
            ChatError::Busy => ApiFailure::new(
                ApiCode::ReplyInProgress,
                "A reply is still being written. Wait for it, or stop it first.",
            ),
            ChatError::Closed => ApiFailure::new(ApiCode::ConversationClosed, "This conversation is closed."),
            ChatError::Invalid(code, message) => ApiFailure::new(code, message),
            ChatError::InvalidForm(problems) => ApiFailure {
                retry_after: None,
                body: ApiError {
                    error: ApiCode::InvalidForm,
                    message: "Please check the form.".into(),
                    fields: problems.into_iter().map(|(field, message)| FieldError::new(field, message)).collect(),
                },
            },
            ChatError::Db(e) => e.into(),
            ChatError::Unavailable => ApiFailure::unavailable(),
            ChatError::Storage(e) => {
                if e.is_unavailable() {
                    tracing::warn!(error = %e, "the visitor's message could not be stored: database unavailable");
                    return ApiFailure::unavailable();
                }
                tracing::error!(error = %e, "the visitor's message could not be stored");
                ApiFailure::internal()
            }
        }
    }
}

impl From<JsonRejection> for ApiFailure {
    fn from(r: JsonRejection) -> Self {
        let code = match &r {
            JsonRejection::MissingJsonContentType(_) => ApiCode::JsonRequired,
            JsonRejection::BytesRejection(_) => ApiCode::BodyTooLarge,
            JsonRejection::JsonSyntaxError(_) => ApiCode::MalformedJson,
            _ => ApiCode::InvalidBody,
        };
        ApiFailure::new(code, r.body_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_status_and_only_internal_ones_are_5xx() {
        for code in ApiCode::ALL {
            let status = status_of(code);
            let server_side = matches!(code, ApiCode::Internal | ApiCode::Unavailable);
            assert_eq!(status.is_server_error(), server_side, "{code}: {status}");
        }
    }

    #[test]
    fn the_protocol_document_lists_every_code() {
        let doc = include_str!("../../docs/protocol.md");
        for code in ApiCode::ALL {
            assert!(doc.contains(&format!("`{code}`")), "docs/protocol.md does not list `{code}`");
        }
        for code in parley_protocol::StreamCode::ALL {
            assert!(doc.contains(&format!("`{code}`")), "docs/protocol.md does not list `{code}`");
        }
    }
}
