//! A database's refusal as sqlx's error, for the stream writer's own connections (rusqlite on
//! SQLite, tokio-postgres on PostgreSQL): the same code (SQLite's extended result code,
//! PostgreSQL's SQLSTATE) that [`super::is_unavailable`] and the writer's refusal rules read on
//! sqlx's own errors.

use std::borrow::Cow;

use sqlx::error::ErrorKind;

use super::DbError;

#[derive(Debug)]
struct Refusal {
    code: String,
    message: String,
    /// The kind of refusal `code` names, in the database's numbering.
    kind_of: fn(&str) -> ErrorKind,
}

/// `message` refused with `code`, whose kind `kind_of` tells.
pub fn refused(code: String, message: String, kind_of: fn(&str) -> ErrorKind) -> DbError {
    DbError::Database(Box::new(Refusal { code, message, kind_of }))
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for Refusal {}

impl sqlx::error::DatabaseError for Refusal {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(&self.code))
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> ErrorKind {
        (self.kind_of)(&self.code)
    }
}
