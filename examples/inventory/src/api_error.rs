//! A request's failure, as the HTTP answer it becomes.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No such item.
    #[error("no item {0:?}")]
    NotFound(String),
    /// The item exists already, or the movement would take its stock below zero.
    #[error("{0}")]
    Conflict(String),
    /// A write without the service's bearer token.
    #[error("a bearer token is required")]
    Unauthorized,
    /// A query parameter out of range.
    #[error("{0}")]
    BadRequest(String),
    /// The database failed.
    #[error("database: {0}")]
    Database(String),
}

impl From<rusqlite::Error> for ApiError {
    fn from(error: rusqlite::Error) -> Self {
        match error.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ConstraintViolation) => {
                ApiError::Conflict(format!("refused: {error}"))
            }
            _ => ApiError::Database(error.to_string()),
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::Database(e) if e.is_unique_violation() || e.is_check_violation() => {
                ApiError::Conflict(format!("refused: {e}"))
            }
            _ => ApiError::Database(error.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = match self {
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Database(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let body = serde_json::json!({ "error": self.to_string() });
        (status, Json(body)).into_response()
    }
}
