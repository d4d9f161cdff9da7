//! Images visitors attach to their messages: which agents accept them (the model's `vision` flag
//! in the price table; the offline demo model always), the checks of an upload (type by its first
//! bytes, size), the checks of a message that carries some, and what the model is given: the new
//! message's images, and earlier messages' images as the text `[image]` only (they would be paid
//! for again on every turn).

use std::collections::HashMap;

use parley_protocol::{
    ATTACHMENT_TYPES, ApiCode, AttachmentCreated, AttachmentRef, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_PER_MESSAGE,
};

use super::Engine;
use super::lang::Lang;
use super::provider::{ModelImage, ModelMessage};
use crate::store::agents::{Agent, ProviderKind};
use crate::store::messages::Message;
use crate::store::visitors::Visitor;
use crate::store::{DbError, attachments, new_id};

/// Uploads a visitor may have waiting to be sent at once.
pub const MAX_UNSENT: i64 = 20;
/// The longest side of an image accepted, in pixels (what the vision models take at most).
pub const MAX_IMAGE_SIDE: usize = 8_000;
/// The most pixels of an image accepted (a 30,000 × 30,000 PNG of a few KB would take 3.6 GB
/// to draw).
pub const MAX_IMAGE_PIXELS: usize = 40_000_000;

/// Bytes of images parked (uploaded, not sent) that the server keeps at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParkedLimits {
    /// From one address (an IPv6 address by its /64); 0: no limit.
    pub per_ip: u64,
    /// From everyone; 0: no limit.
    pub total: u64,
}

impl Default for ParkedLimits {
    fn default() -> Self {
        ParkedLimits { per_ip: 100 * 1024 * 1024, total: 2 * 1024 * 1024 * 1024 }
    }
}
/// Uploads never sent are deleted after this long.
pub const UNSENT_TTL_MS: i64 = 24 * 60 * 60 * 1000;

/// The image type the bytes begin with (PNG, JPEG or WebP).
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Why an upload was refused.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("only PNG, JPEG and WebP images")]
    UnsupportedType,
    #[error("the bytes are not a {0} image")]
    Mismatch(&'static str),
    #[error("the image is empty")]
    Empty,
    #[error("the image is too large")]
    TooLarge,
    #[error("too many images waiting to be sent")]
    TooMany,
    #[error("the image has too many pixels")]
    TooManyPixels,
    #[error("this agent's model does not read images")]
    NotSupported,
    #[error("too many image bytes are waiting to be sent")]
    Quota,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Checks an upload: an accepted declared type (`Content-Type`, parameters ignored), bytes of
/// that type, and the size. Returns the type.
pub fn check_upload(content_type: Option<&str>, bytes: &[u8]) -> Result<&'static str, UploadError> {
    let declared = content_type.and_then(|c| c.split(';').next()).unwrap_or_default().trim().to_ascii_lowercase();
    let mime = ATTACHMENT_TYPES.iter().copied().find(|t| *t == declared).ok_or(UploadError::UnsupportedType)?;
    if bytes.is_empty() {
        return Err(UploadError::Empty);
    }
    if bytes.len() > MAX_ATTACHMENT_BYTES {
        return Err(UploadError::TooLarge);
    }
    if sniff(bytes) != Some(mime) {
        return Err(UploadError::Mismatch(mime));
    }
    // The dimensions from the header: an image that would take gigabytes to draw is refused
    // before anyone's browser (an operator's) tries.
    let size = imagesize::blob_size(bytes).map_err(|_| UploadError::Mismatch(mime))?;
    if size.width.max(size.height) > MAX_IMAGE_SIDE || size.width.saturating_mul(size.height) > MAX_IMAGE_PIXELS {
        return Err(UploadError::TooManyPixels);
    }
    Ok(mime)
}

/// Why the images of a message were refused (nothing is stored then).
#[derive(Debug, thiserror::Error)]
pub enum SendImagesError {
    /// A refusal the visitor is told about, in their language.
    #[error("{1}")]
    Refused(ApiCode, String),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Images of a message about to be sent: their ids (to link) and what the model is given.
#[derive(Debug, Default)]
pub struct SendImages {
    pub ids: Vec<String>,
    pub images: Vec<ModelImage>,
}

impl Engine {
    /// Whether an agent's model reads images. The offline demo model does (it says it received
    /// them); other models when their row of the price table says so. Unknown models do not.
    pub fn accepts_images(&self, agent: &Agent) -> bool {
        let demo = agent.provider.kind == ProviderKind::Demo || agent.provider.base_url.is_none();
        demo || self.prices().lookup(&agent.provider.model).is_some_and(|p| p.vision)
    }

    /// Stores a visitor's upload, not yet sent with a message: only for an agent whose model
    /// reads images, within the visitor's count and the bytes parked from the address (`ip`)
    /// and overall ([`ParkedLimits`]). (Two uploads at the same moment may both pass a quota's
    /// edge: it holds to within the uploads in flight.)
    pub async fn upload_attachment(
        &self,
        visitor: &Visitor,
        ip: std::net::IpAddr,
        content_type: Option<&str>,
        bytes: &[u8],
    ) -> Result<AttachmentCreated, UploadError> {
        let agent = self.agent_by_id(&visitor.agent_id).await?.ok_or(UploadError::NotSupported)?;
        if !self.accepts_images(&agent) {
            return Err(UploadError::NotSupported);
        }
        let mime = check_upload(content_type, bytes)?;
        if attachments::count_unsent(self.db(), &visitor.id).await? >= MAX_UNSENT {
            return Err(UploadError::TooMany);
        }
        let client_ip = crate::net::address_group(ip);
        let (from_ip, all) = attachments::parked_bytes(self.db(), &client_ip).await?;
        metrics::gauge!("parley_parked_image_bytes").set(all as f64);
        let limits = self.settings().parked_images;
        let size = bytes.len() as u64;
        let over = |parked: i64, limit: u64| limit > 0 && (parked.max(0) as u64).saturating_add(size) > limit;
        if over(from_ip, limits.per_ip) || over(all, limits.total) {
            metrics::counter!("parley_parked_image_refusals_total").increment(1);
            return Err(UploadError::Quota);
        }
        let id = new_id();
        let upload =
            attachments::NewUpload { id: &id, visitor_id: &visitor.id, client_ip: &client_ip, mime, data: bytes };
        attachments::insert(self.db(), &upload, self.now_ms()).await?;
        metrics::gauge!("parley_parked_image_bytes").set((all.max(0) as u64 + size) as f64);
        Ok(AttachmentCreated { id, mime: mime.to_owned(), size })
    }

    /// `(mime, bytes)` of an image the visitor uploaded; another visitor's is not found.
    pub async fn visitor_attachment(&self, visitor: &Visitor, id: &str) -> Result<Option<(String, Vec<u8>)>, DbError> {
        attachments::of_visitor(self.db(), id, &visitor.id).await
    }

    /// Deletes uploads never sent that are older than [`UNSENT_TTL_MS`].
    pub async fn delete_unsent_attachments(&self) -> Result<u64, DbError> {
        attachments::delete_unsent_before(self.db(), self.now_ms() - UNSENT_TTL_MS).await
    }

    /// Checks the images a message is sent with: the agent's model reads images, at most
    /// [`MAX_ATTACHMENTS_PER_MESSAGE`], each uploaded by this visitor and not sent before.
    /// Messages for the visitor are in their language (the text's, else the agent's greeting's).
    pub(super) async fn images_for_send(
        &self,
        agent: &Agent,
        visitor: &Visitor,
        ids: &[String],
        text: &str,
    ) -> Result<SendImages, SendImagesError> {
        if ids.is_empty() {
            return Ok(SendImages::default());
        }
        let lang = Lang::of_or(text, &agent.greeting);
        let say = |en: &str, zh: &str| lang.pick(en, zh).to_owned();
        if !self.accepts_images(agent) {
            return Err(SendImagesError::Refused(
                ApiCode::ImagesNotSupported,
                say(
                    "Images are not supported by this agent. Please describe it in words instead.",
                    "此助手不支持图片，请改用文字描述。",
                ),
            ));
        }
        let mut unique: Vec<String> = Vec::with_capacity(ids.len());
        for id in ids {
            if !unique.contains(id) {
                unique.push(id.clone());
            }
        }
        if unique.len() > MAX_ATTACHMENTS_PER_MESSAGE {
            return Err(SendImagesError::Refused(
                ApiCode::TooManyAttachments,
                say(
                    &format!("A message can carry {MAX_ATTACHMENTS_PER_MESSAGE} images at most."),
                    &format!("每条消息最多附带 {MAX_ATTACHMENTS_PER_MESSAGE} 张图片。"),
                ),
            ));
        }
        if unique.iter().any(|id| id.is_empty() || id.len() > 64) {
            return Err(not_found(lang));
        }
        let mut found = attachments::unsent(self.db(), &visitor.id, &unique).await?;
        if found.len() != unique.len() {
            return Err(not_found(lang));
        }
        found.sort_by_key(|f| unique.iter().position(|id| *id == f.id));
        Ok(SendImages { images: found.iter().map(|f| ModelImage::new(&f.mime, &f.data)).collect(), ids: unique })
    }

    /// `(message_id, image)` of the images sent in a conversation so far; none for a new one.
    pub(super) async fn sent_images(&self, conversation_id: Option<&str>) -> Vec<(String, AttachmentRef)> {
        let Some(id) = conversation_id else { return Vec::new() };
        attachments::of_conversation(self.db(), id).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "could not read the conversation's images");
            Vec::new()
        })
    }
}

fn not_found(lang: Lang) -> SendImagesError {
    SendImagesError::Refused(
        ApiCode::AttachmentNotFound,
        lang.pick("An attached image was not found, or was already sent.", "找不到附带的图片（或已发送过）。")
            .to_owned(),
    )
}

/// Earlier messages with images say so: `[image]` once per image before the text.
pub fn mark_history(history: &mut [Message], sent: &[(String, AttachmentRef)]) {
    if sent.is_empty() {
        return;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (message_id, _) in sent {
        *counts.entry(message_id.as_str()).or_default() += 1;
    }
    for m in history.iter_mut() {
        if let Some(n) = counts.get(m.id.as_str()) {
            let tags = vec!["[image]"; *n].join(" ");
            m.content = if m.content.trim().is_empty() { tags } else { format!("{tags} {}", m.content) };
        }
    }
}

/// Images as `[image]` markers, for a model that cannot read them (a fallback model).
pub fn drop_images(messages: &mut [ModelMessage]) {
    for m in messages.iter_mut() {
        if let ModelMessage::UserImages { text, images } = m {
            let tags = vec!["[image]"; images.len()].join(" ");
            let text = if text.trim().is_empty() { tags } else { format!("{tags} {text}") };
            *m = ModelMessage::User(text);
        }
    }
}

/// Gives the new message (the last visitor message of the context) its images.
pub fn attach(messages: &mut [ModelMessage], images: Vec<ModelImage>) {
    if images.is_empty() {
        return;
    }
    if let Some(last) = messages.iter_mut().rev().find(|m| matches!(m, ModelMessage::User(_)))
        && let ModelMessage::User(text) = last
    {
        *last = ModelMessage::UserImages { text: std::mem::take(text), images };
    }
}

#[cfg(test)]
mod tests {
    use parley_protocol::{MessageStatus, Role};

    use super::*;

    #[test]
    fn a_model_without_eyes_gets_markers() {
        let image = ModelImage { mime: "image/png".into(), base64: std::sync::Arc::from("iVBOR") };
        let mut messages = vec![
            ModelMessage::System("s".into()),
            ModelMessage::UserImages { text: "What is this?".into(), images: vec![image.clone(), image.clone()] },
            ModelMessage::UserImages { text: String::new(), images: vec![image] },
        ];
        drop_images(&mut messages);
        assert_eq!(messages[1], ModelMessage::User("[image] [image] What is this?".into()));
        assert_eq!(messages[2], ModelMessage::User("[image]".into()));
    }

    /// The headers of a 1 × 1 PNG, a 3 × 2 JPEG (JFIF, baseline) and a 1 × 1 WebP (lossless).
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";
    const JPEG: &[u8] = &[
        0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01,
        0x00, 0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x02, 0x00, 0x03, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01,
        0x03, 0x11, 0x01, 0xFF, 0xD9,
    ];
    const WEBP: &[u8] = b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0\x2f\0\0\0\x10\x07\x10\x11\x11\x88\x88\xfe\x07\0";

    #[test]
    fn sniffs_the_three_types_by_their_first_bytes() {
        assert_eq!(sniff(PNG), Some("image/png"));
        assert_eq!(sniff(JPEG), Some("image/jpeg"));
        assert_eq!(sniff(WEBP), Some("image/webp"));
        assert_eq!(sniff(b"GIF89a"), None);
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(sniff(b"\x89PN"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn upload_needs_a_declared_type_that_matches_the_bytes() {
        assert_eq!(check_upload(Some("image/png"), PNG).unwrap(), "image/png");
        assert_eq!(check_upload(Some("Image/JPEG; charset=binary"), JPEG).unwrap(), "image/jpeg");
        assert_eq!(check_upload(Some("image/webp"), WEBP).unwrap(), "image/webp");
        assert!(matches!(check_upload(Some("image/jpeg"), PNG), Err(UploadError::Mismatch("image/jpeg"))));
        assert!(matches!(check_upload(Some("image/gif"), b"GIF89a"), Err(UploadError::UnsupportedType)));
        assert!(matches!(check_upload(None, PNG), Err(UploadError::UnsupportedType)));
        assert!(matches!(check_upload(Some("image/png"), b""), Err(UploadError::Empty)));
        // Dimensions from the header: a huge canvas in a few bytes is refused, a header that
        // names no size is not an image.
        let huge = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x75\x30\0\0\x75\x30\x08\x06\0\0\0";
        assert!(matches!(check_upload(Some("image/png"), huge), Err(UploadError::TooManyPixels)));
        let wide = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x27\x10\0\0\0\x01";
        assert!(matches!(check_upload(Some("image/png"), wide), Err(UploadError::TooManyPixels)), "10,000 wide");
        let headless: &[u8] = &[0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0x00, 0x01, 0x01, 0x00];
        assert!(matches!(check_upload(Some("image/jpeg"), headless), Err(UploadError::Mismatch(_))));
        let mut big = PNG.to_vec();
        big.resize(MAX_ATTACHMENT_BYTES + 1, 0);
        assert!(matches!(check_upload(Some("image/png"), &big), Err(UploadError::TooLarge)));
        big.truncate(MAX_ATTACHMENT_BYTES);
        assert!(check_upload(Some("image/png"), &big).is_ok());
    }

    fn msg(id: &str, content: &str) -> Message {
        Message {
            id: id.into(),
            conversation_id: "c".into(),
            role: Role::Visitor,
            content: content.into(),
            blocks: vec![],
            status: MessageStatus::Complete,
            client_message_id: None,
            reply_to: None,
            author: None,
            start_seq: 0,
            created_at: 0,
            agent_version: None,
        }
    }

    #[test]
    fn earlier_images_are_text_and_the_new_ones_go_with_the_last_message() {
        let r = |id: &str| AttachmentRef { id: id.into(), mime: "image/png".into() };
        let mut history = vec![msg("m1", "look"), msg("m2", ""), msg("m3", "plain")];
        mark_history(&mut history, &[("m1".into(), r("a")), ("m2".into(), r("b")), ("m2".into(), r("c"))]);
        let contents: Vec<&str> = history.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(contents, ["[image] look", "[image] [image]", "plain"]);

        let image = ModelImage::new("image/png", PNG);
        let mut messages = vec![
            ModelMessage::System("s".into()),
            ModelMessage::User("old".into()),
            ModelMessage::Assistant { content: "a".into(), tool_calls: vec![] },
            ModelMessage::User("new".into()),
        ];
        attach(&mut messages, Vec::new());
        assert!(matches!(&messages[3], ModelMessage::User(t) if t == "new"));
        attach(&mut messages, vec![image.clone()]);
        assert_eq!(messages[3], ModelMessage::UserImages { text: "new".into(), images: vec![image] });
        assert!(matches!(&messages[1], ModelMessage::User(t) if t == "old"));
    }
}
