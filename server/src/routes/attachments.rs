//! Images visitors attach to their messages, with the visitor's bearer token:
//! `POST /api/v1/attachments` (the image's bytes as the body, its type as `Content-Type`; PNG,
//! JPEG or WebP, checked against the bytes, 5 MiB at most) and `GET /api/v1/attachments/{id}`
//! (the uploader's own only). The console reads them at `/admin/attachments/{id}`.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use parley_app::server::state::AppState;
use parley_engine::engine::attachments::UploadError;
use parley_engine::limits::Action;
use parley_protocol::{ATTACHMENT_TYPES, ApiCode, AttachmentCreated, MAX_ATTACHMENT_BYTES};

use crate::api_error::ApiFailure;
use crate::extract::{ClientIp, VisitorAuth};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/attachments", post(upload))
        .route("/api/v1/attachments/{id}", get(read))
        // Room for the largest image; a larger body is refused while it is read.
        .layer(DefaultBodyLimit::max(MAX_ATTACHMENT_BYTES))
}

fn too_large() -> ApiFailure {
    ApiFailure::new(
        ApiCode::AttachmentTooLarge,
        format!("The image is too large ({} MiB at most).", MAX_ATTACHMENT_BYTES / (1024 * 1024)),
    )
}

fn unsupported(message: &str) -> ApiFailure {
    ApiFailure::new(ApiCode::UnsupportedImage, message)
}

impl From<UploadError> for ApiFailure {
    fn from(e: UploadError) -> Self {
        match e {
            UploadError::UnsupportedType => unsupported("Only PNG, JPEG and WebP images can be attached."),
            UploadError::Mismatch(mime) => unsupported(&format!("The file is not the {mime} image it claims to be.")),
            UploadError::Empty => ApiFailure::new(ApiCode::EmptyAttachment, "The image is empty."),
            UploadError::TooLarge => too_large(),
            UploadError::TooMany => ApiFailure::new(
                ApiCode::TooManyWaitingImages,
                "Too many images are waiting to be sent. Send or remove some first.",
            ),
            UploadError::TooManyPixels => ApiFailure::new(
                ApiCode::AttachmentTooLarge,
                format!(
                    "The image is too large (at most {side} × {side} pixels).",
                    side = parley_engine::engine::attachments::MAX_IMAGE_SIDE
                ),
            ),
            UploadError::NotSupported => ApiFailure::new(
                ApiCode::ImagesNotSupported,
                "Images are not supported by this agent. Please describe it in words instead.",
            ),
            UploadError::Quota => ApiFailure::new(
                ApiCode::TooManyWaitingImages,
                "Too many images are waiting to be sent from here. Send or remove some, or try again later.",
            ),
            UploadError::Db(e) => e.into(),
        }
    }
}

async fn upload(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    VisitorAuth(visitor): VisitorAuth,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<AttachmentCreated>), ApiFailure> {
    // (The visitor's agent allows the calling page: checked with the token.)
    state.limits.check(Action::Upload, ip, Some(&visitor.id)).map_err(ApiFailure::limited)?;
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let declared = content_type.and_then(|c| c.split(';').next()).unwrap_or_default().trim().to_ascii_lowercase();
    // Refused before the body is read: a type that is never accepted, a declared size too large.
    if !ATTACHMENT_TYPES.contains(&declared.as_str()) {
        return Err(UploadError::UnsupportedType.into());
    }
    let length = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if length.is_some_and(|n| n > MAX_ATTACHMENT_BYTES as u64) {
        return Err(too_large());
    }
    let body = body.map_err(|r| match r {
        BytesRejection::FailedToBufferBody(_) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => too_large(),
        other => ApiFailure::new(ApiCode::UnreadableBody, other.body_text()),
    })?;
    let created = state.engine.upload_attachment(&visitor, ip, content_type, &body).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

async fn read(
    State(state): State<AppState>,
    VisitorAuth(visitor): VisitorAuth,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    let (mime, data) =
        state.engine.visitor_attachment(&visitor, &id).await?.ok_or_else(|| ApiFailure::not_found("Image"))?;
    Ok(image_response(&mime, data))
}

/// A stored image: its own type, never sniffed, cached by this browser only.
pub fn image_response(mime: &str, data: Vec<u8>) -> Response {
    let mut response = data.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(mime).unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=86400"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'none'; sandbox"));
    response
}
