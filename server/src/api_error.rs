//! Errors of the HTTP API: a status and a JSON body with a stable code. Internals are logged,
//! never sent.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use parley_app::server::engine::chat::ChatError;
use parley_app::server::store::DbError;
use parley_widget::protocol::{ApiError, FieldError};

/// An error answer of the API.
#[derive(Debug)]
pub struct ApiFailure {
    pub status: StatusCode,
    pub body: ApiError,
}

impl ApiFailure {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        ApiFailure { status, body: ApiError { error: code.to_owned(), message: message.into(), fields: Vec::new() } }
    }

    pub fn not_found(what: &str) -> Self {
        ApiFailure::new(StatusCode::NOT_FOUND, "not_found", format!("{what} not found."))
    }

    pub fn internal() -> Self {
        ApiFailure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Something went wrong on our side. Please try again.",
        )
    }
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

impl From<DbError> for ApiFailure {
    fn from(e: DbError) -> Self {
        tracing::error!(error = %e, "database error");
        ApiFailure::internal()
    }
}

impl From<ChatError> for ApiFailure {
    fn from(e: ChatError) -> Self {
        match e {
            ChatError::NotFound => ApiFailure::not_found("Conversation"),
            ChatError::Busy => ApiFailure::new(
                StatusCode::CONFLICT,
                "reply_in_progress",
                "A reply is still being written. Wait for it, or stop it first.",
            ),
            ChatError::Closed => {
                ApiFailure::new(StatusCode::CONFLICT, "conversation_closed", "This conversation is closed.")
            }
            ChatError::Invalid(code, message) => {
                let status = match code {
                    "message_too_long" => StatusCode::PAYLOAD_TOO_LARGE,
                    // Another visitor's upload is not found either.
                    "attachment_not_found" => StatusCode::NOT_FOUND,
                    _ => StatusCode::UNPROCESSABLE_ENTITY,
                };
                ApiFailure::new(status, code, message)
            }
            ChatError::InvalidForm(problems) => ApiFailure {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                body: ApiError {
                    error: "invalid_form".into(),
                    message: "Please check the form.".into(),
                    fields: problems
                        .into_iter()
                        .map(|(field, message)| FieldError { field: field.into(), message: message.into() })
                        .collect(),
                },
            },
            ChatError::Db(e) => e.into(),
        }
    }
}

impl From<JsonRejection> for ApiFailure {
    fn from(r: JsonRejection) -> Self {
        let (status, code) = match &r {
            JsonRejection::MissingJsonContentType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "json_required"),
            JsonRejection::BytesRejection(_) => (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large"),
            JsonRejection::JsonSyntaxError(_) => (StatusCode::BAD_REQUEST, "malformed_json"),
            _ => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        };
        ApiFailure::new(status, code, r.body_text())
    }
}
