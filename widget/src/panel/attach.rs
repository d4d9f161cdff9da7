//! Images in the panel: the attach button (only when the agent's model reads images), checks of
//! the chosen files (type, size, how many), thumbnails of the chosen images with a remove button,
//! their upload when the message is sent, and the images of sent messages — fetched with the
//! visitor's token (an `<img>` cannot send it) and shown from `blob:` URLs.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Blob, Headers, Request, RequestInit, Response};

use super::client::{ClientError, failure, js_err};
use super::model::{Msg, Panel};
use crate::action::Action;
use crate::html::{Html, html};
use crate::i18n::Labels;
use crate::icons;
use crate::protocol::{ATTACHMENT_TYPES, AttachmentCreated, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS_PER_MESSAGE};

const API: &str = "/api/v1";

/// An image chosen for the next message.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    /// `blob:` URL of the chosen file: its thumbnail, and where its bytes are read to upload.
    pub url: String,
    pub mime: String,
}

/// Where an image of a sent message is in being shown.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ImageSrc {
    Loading,
    /// A `blob:` URL.
    Ready(String),
    Failed,
}

/// An image of a sent message.
#[derive(Clone, Debug, PartialEq)]
pub struct MsgImage {
    pub id: String,
    pub src: ImageSrc,
}

/// The uploads of one message being sent, kept across its retries (with the token they were
/// made with: a new visitor must upload them again).
#[derive(Debug, Default)]
pub struct Uploads {
    token: Option<String>,
    ids: Vec<String>,
}

impl Uploads {
    /// Uploads the images not uploaded yet; returns the ids of all.
    pub async fn ensure(&mut self, token: &str, images: &[Pending]) -> Result<Vec<String>, ClientError> {
        if self.token.as_deref() != Some(token) {
            self.token = Some(token.to_owned());
            self.ids.clear();
        }
        for image in &images[self.ids.len().min(images.len())..] {
            self.ids.push(upload(token, image).await?.id);
        }
        Ok(self.ids.clone())
    }
}

async fn fetch(request: &Request) -> Result<Response, ClientError> {
    let window = web_sys::window().ok_or_else(|| ClientError::Network("no window".into()))?;
    JsFuture::from(window.fetch_with_request(request)).await.map_err(js_err)?.dyn_into().map_err(js_err)
}

async fn blob_of(response: &Response) -> Result<Blob, ClientError> {
    JsFuture::from(response.blob().map_err(js_err)?).await.map_err(js_err)?.dyn_into().map_err(js_err)
}

/// Sends a chosen image's bytes to the server.
async fn upload(token: &str, image: &Pending) -> Result<AttachmentCreated, ClientError> {
    let local = fetch(&Request::new_with_str(&image.url).map_err(js_err)?).await?;
    let blob = blob_of(&local).await?;
    let headers = Headers::new().map_err(js_err)?;
    headers.set("Content-Type", &image.mime).map_err(js_err)?;
    headers.set("Authorization", &format!("Bearer {token}")).map_err(js_err)?;
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&blob);
    let response =
        fetch(&Request::new_with_str_and_init(&format!("{API}/attachments"), &init).map_err(js_err)?).await?;
    if !response.ok() {
        return Err(failure(&response).await);
    }
    let text = JsFuture::from(response.text().map_err(js_err)?).await.map_err(js_err)?.as_string().unwrap_or_default();
    crate::json::from_str(&text).map_err(|e| ClientError::Network(format!("bad JSON from the server: {e}")))
}

/// A sent image's bytes, as a `blob:` URL.
async fn image_url(token: &str, id: &str) -> Result<String, ClientError> {
    let headers = Headers::new().map_err(js_err)?;
    headers.set("Authorization", &format!("Bearer {token}")).map_err(js_err)?;
    let init = RequestInit::new();
    init.set_method("GET");
    init.set_headers(&headers);
    let response =
        fetch(&Request::new_with_str_and_init(&format!("{API}/attachments/{id}"), &init).map_err(js_err)?).await?;
    if !response.ok() {
        return Err(failure(&response).await);
    }
    web_sys::Url::create_object_url_with_blob(&blob_of(&response).await?).map_err(js_err)
}

impl Panel {
    /// Adds the chosen files that can be sent; says why the others cannot.
    pub fn choose(&self, files: &web_sys::FileList) {
        self.notice.set(None);
        for i in 0..files.length() {
            let Some(file) = files.get(i) else { continue };
            let mime = file.type_();
            let problem = if !ATTACHMENT_TYPES.contains(&mime.as_str()) {
                Some(self.labels.image_type)
            } else if file.size() > MAX_ATTACHMENT_BYTES as f64 {
                Some(self.labels.image_too_large)
            } else if self.pending.with(Vec::len) >= MAX_ATTACHMENTS_PER_MESSAGE {
                Some(self.labels.image_limit)
            } else {
                None
            };
            if let Some(problem) = problem {
                self.notice.set(Some(problem.to_owned()));
                continue;
            }
            if let Ok(url) = web_sys::Url::create_object_url_with_blob(&file) {
                self.pending.update(|p| p.push(Pending { url, mime }));
            }
        }
    }

    /// Takes a chosen image back.
    pub fn remove_pending(&self, url: &str) {
        let _ = web_sys::Url::revoke_object_url(url);
        self.pending.update(|p| p.retain(|x| x.url != url));
    }

    /// Forgets every chosen image.
    pub fn discard_pending(&self) {
        for p in self.pending.take() {
            let _ = web_sys::Url::revoke_object_url(&p.url);
        }
    }

    /// The chosen images go with `msg`, which shows them from then on.
    pub(super) fn take_pending(&self, msg: Msg) -> Vec<Pending> {
        let images = self.pending.take();
        msg.images
            .set(images.iter().map(|p| MsgImage { id: p.url.clone(), src: ImageSrc::Ready(p.url.clone()) }).collect());
        images
    }

    /// Fetches the images of the messages shown that are still loading.
    pub fn fetch_images(self) {
        let Some(token) = self.token.get() else { return };
        let generation = self.generation.get();
        let wanted: Vec<(Msg, String)> = self.messages.with(|list| {
            list.iter()
                .flat_map(|m| {
                    m.images.with(|images| {
                        images
                            .iter()
                            .filter(|i| i.src == ImageSrc::Loading)
                            .map(|i| (*m, i.id.clone()))
                            .collect::<Vec<_>>()
                    })
                })
                .collect()
        });
        for (msg, id) in wanted {
            let token = token.clone();
            spawn_local(async move {
                let src = match image_url(&token, &id).await {
                    Ok(url) => ImageSrc::Ready(url),
                    Err(_) => ImageSrc::Failed,
                };
                if self.generation.get() != generation {
                    if let ImageSrc::Ready(url) = src {
                        let _ = web_sys::Url::revoke_object_url(&url);
                    }
                    return;
                }
                msg.images.update(|images| {
                    if let Some(image) = images.iter_mut().find(|i| i.id == id) {
                        image.src = src;
                    }
                });
            });
        }
    }
}

/// The paper clip next to the input, and its (hidden) file picker.
pub fn button_html(labels: &Labels) -> Html {
    html!(
        "<input type=\"file\" class=\"pw-file\" accept=\"{}\" multiple tabindex=\"-1\" aria-hidden=\"true\">\
         <button type=\"button\" class=\"pw-attach\" title=\"{}\" aria-label=\"{}\" data-pw=\"{}\">\
         <svg viewBox=\"0 0 24 24\" width=\"20\" height=\"20\" aria-hidden=\"true\" fill=\"none\" \
         stroke=\"currentColor\" stroke-width=\"2\" stroke-linecap=\"round\" stroke-linejoin=\"round\">\
         <path d=\"M21.44 11.05l-9.19 9.19a6 6 0 0 1-8.49-8.49l9.19-9.19a4 4 0 0 1 5.66 5.66l-9.2 9.19a2 2 0 0 \
         1-2.83-2.83l8.49-8.48\"></path></svg></button>",
        ATTACHMENT_TYPES.join(","),
        labels.attach_image,
        labels.attach_image,
        Action::Attach
    )
}

/// Whether another image can be chosen for the next message.
pub fn full(panel: &Panel) -> bool {
    panel.pending.with(Vec::len) >= MAX_ATTACHMENTS_PER_MESSAGE
}

/// Thumbnails of the images chosen for the next message.
pub fn pending_html(panel: &Panel) -> Html {
    let l = panel.labels;
    panel.pending.with(|pending| {
        if pending.is_empty() {
            return Html::new();
        }
        let items: Html = pending
            .iter()
            .map(|p| {
                html!(
                    "<li class=\"pw-pending-item\"><img class=\"pw-thumb\" src=\"{}\" alt=\"{}\">\
                     <button type=\"button\" class=\"pw-remove\" title=\"{}\" aria-label=\"{}\" \
                     data-pw=\"{}\" data-url=\"{}\">{}</button></li>",
                    p.url,
                    l.image_alt,
                    l.remove_image,
                    l.remove_image,
                    Action::Remove,
                    p.url,
                    icons::html(icons::CROSS)
                )
            })
            .collect();
        html!("<ul class=\"pw-pending\" aria-label=\"{}\">{}</ul>", l.attach_image, items)
    })
}

/// The images a message was sent with.
pub fn images_html(msg: &Msg, labels: &Labels) -> Html {
    msg.images.with(|images| {
        if images.is_empty() {
            return Html::new();
        }
        let alt = labels.image_alt;
        let items: Html = images
            .iter()
            .map(|image| match &image.src {
                ImageSrc::Ready(src) => html!("<img class=\"pw-thumb\" src=\"{}\" alt=\"{}\">", src, alt),
                ImageSrc::Loading => {
                    html!("<span class=\"pw-thumb pw-thumb-loading\" role=\"img\" aria-label=\"{}\"></span>", alt)
                }
                ImageSrc::Failed => {
                    html!("<span class=\"pw-thumb pw-thumb-failed\">{}</span>", labels.image_unavailable)
                }
            })
            .collect();
        html!("<div class=\"pw-images\">{}</div>", items)
    })
}
