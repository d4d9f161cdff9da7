//! What the panel does: boot (restore the conversation), send, reset, leave a lead (following
//! the conversation, typing and stop are in `follow`; signing in and out in `identity`). All of
//! it runs in the browser only.

use serde::de::IgnoredAny;
use wasm_bindgen_futures::spawn_local;

use super::attach::Uploads;
use super::client::{self, ClientError, StreamEnd};
use super::model::{Msg, Panel};
use super::storage;
use crate::protocol::{ApiCode, CreateVisitor, LeadForm, MessageStatus, Role, SendMessage, Transcript, VisitorCreated};

pub(super) const API: &str = "/api/v1";

/// What follows one attempt to send a message.
enum Attempt {
    Done,
    /// Again, after this many milliseconds (0: at once).
    Again(u32),
}

pub(super) fn sleep_ms(ms: u32) -> impl std::future::Future<Output = ()> {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms as i32);
        }
    });
    async move {
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    }
}

fn random_id() -> String {
    format!("c{:x}{:x}", (js_sys::Math::random() * 1e15) as u64, js_sys::Date::now() as u64)
}

impl Panel {
    /// The visitor's token, created on first use.
    /// What the visitor reads when a call failed: a limit in the panel's language, otherwise
    /// the server's message.
    pub(super) fn error_text(&self, e: &ClientError) -> String {
        let l = self.labels;
        match e {
            ClientError::Api { error, .. } => match error.error {
                ApiCode::RateLimited => l.rate_limited,
                ApiCode::MessageTooLong => l.error_too_long,
                ApiCode::ReplyInProgress => l.busy,
                ApiCode::UnsupportedImage => l.image_type,
                ApiCode::AttachmentTooLarge => l.image_too_large,
                ApiCode::TooManyAttachments | ApiCode::TooManyWaitingImages => l.image_limit,
                ApiCode::AttachmentNotFound => l.image_unavailable,
                ApiCode::ConversationClosed => l.closed,
                ApiCode::IdentityRequired => l.sign_in_required,
                _ => l.error_generic,
            },
            ClientError::Network(_) => l.error_network,
        }
        .to_owned()
    }

    pub(super) async fn ensure_token(&self) -> Result<String, ClientError> {
        // One visitor per browser, even when a send and an identify both need one at once.
        while self.token_pending.get() {
            sleep_ms(25).await;
        }
        if let Some(t) = self.token.get() {
            return Ok(t);
        }
        self.token_pending.set_value(true);
        let agent = self.agent.get();
        let body = CreateVisitor { agent: agent.clone(), host_origin: self.host_origin.get() };
        let created: Result<VisitorCreated, _> =
            client::json("POST", &format!("{API}/visitors"), None, Some(&body)).await;
        self.token_pending.set_value(false);
        let created = created?;
        storage::set(&agent, "token", &created.token);
        self.token.set_value(Some(created.token.clone()));
        Ok(created.token)
    }

    pub(super) fn forget_conversation(&self) {
        storage::remove(&self.agent.get(), "conversation");
        self.clear();
        self.talking(false);
        self.paid_unread.set_value(0);
        self.recount();
    }

    /// Restores the stored conversation after a (re)load, resuming an answer still being written.
    pub fn boot(self) {
        let agent = self.agent.get();
        self.token.set_value(storage::get(&agent, "token"));
        self.show_stored_conversation();
    }

    /// Loads the conversation kept in storage (if any) into the panel.
    pub(super) fn show_stored_conversation(self) {
        spawn_local(async move {
            let agent = self.agent.get();
            let (Some(token), Some(conversation)) = (self.token.get(), storage::get(&agent, "conversation")) else {
                return;
            };
            let url = format!("{API}/conversations/{conversation}");
            let generation = self.generation.get();
            let result = client::json::<(), Transcript>("GET", &url, Some(&token), None).await;
            // The host may have asked for a new conversation while this was loading.
            if self.generation.get() != generation {
                return;
            }
            match result {
                Ok(t) => {
                    self.load(&t);
                    self.restore_read_mark();
                    self.fetch_images();
                    let streaming = t
                        .messages
                        .iter()
                        .rev()
                        .find(|m| m.role == Role::Assistant && m.status == MessageStatus::Streaming);
                    if let Some(m) = streaming {
                        // Replay the answer being written from its start, then follow live.
                        self.current.set(Some(m.id.clone()));
                        self.last_seq.set_value(m.start_seq.saturating_sub(1));
                    }
                    self.ensure_following();
                }
                Err(e) if e.status() == Some(401) => {
                    storage::remove(&agent, "token");
                    self.token.set_value(None);
                    self.forget_conversation();
                }
                Err(e) if e.status() == Some(404) => self.forget_conversation(),
                Err(e) => self.notice.set(Some(self.error_text(&e))),
            }
        });
    }

    /// Sends the visitor's message and streams the answer in.
    pub fn send(self, text: String) {
        self.send_with(text, None);
    }

    /// Sends a form's answers (`text` is what the server writes from them) and streams the answer in.
    pub fn send_form(self, text: String, form: crate::protocol::FormSubmission) {
        self.send_with(text, Some(form));
    }

    fn send_with(self, text: String, form: Option<crate::protocol::FormSubmission>) {
        let text = text.trim().to_owned();
        // The agent's pre-chat form comes first.
        if form.is_none() && self.prechat_pending() {
            self.ask_prechat_first();
            return;
        }
        // Images may go without words.
        if text.is_empty() && self.pending.with(Vec::is_empty) {
            return;
        }
        if self.busy.get() || self.current.get().is_some() {
            self.notice.set(Some(self.labels.busy.to_owned()));
            return;
        }
        self.busy.set(true);
        self.notice.set(None);
        // Writing again after a person closed the conversation starts a new one.
        self.closed.set(false);
        let generation = self.generation.get();
        let client_message_id = random_id();
        let visitor_msg = self.push_visitor(&text, &client_message_id);
        let images = self.take_pending(visitor_msg);
        super::host::post_event(&self, "message", &serde_json::json!({ "text": text }));
        spawn_local(async move {
            // A message sent right after `Parley.identify` goes as the user.
            while self.identifying.get() {
                sleep_ms(25).await;
            }
            let mut uploads = Uploads::default();
            let mut attempts = 0;
            loop {
                attempts += 1;
                let token = match self.ensure_token().await {
                    Ok(t) => t,
                    Err(e) => {
                        visitor_msg.error.set(Some(self.error_text(&e)));
                        break;
                    }
                };
                // The images are uploaded first (once), then sent by id with the message.
                let attachments = match uploads.ensure(&token, &images).await {
                    Ok(ids) => ids,
                    Err(e) => {
                        visitor_msg.error.set(Some(self.error_text(&e)));
                        break;
                    }
                };
                let conversation = self.conversation.get();
                let page_url = self
                    .page_url
                    .get()
                    .filter(|u| self.page_sent.get().is_none_or(|(c, sent)| c != conversation || sent != *u));
                let body = SendMessage {
                    agent: self.agent.get(),
                    conversation_id: conversation,
                    message: text.clone(),
                    client_message_id: Some(client_message_id.clone()),
                    attachments,
                    context: self.page_context.get(),
                    page_url: page_url.clone(),
                    form: form.clone(),
                };
                let body = crate::json::to_string(&body);
                let result =
                    client::stream("POST", &format!("{API}/chat"), &token, Some(body), None, None, |seq, event| {
                        if self.generation.get() == generation {
                            self.on_event(seq, event);
                        }
                    })
                    .await;
                if self.generation.get() != generation {
                    break;
                }
                if let (Ok(_), Some(url)) = (&result, page_url) {
                    self.page_sent.set_value(Some((self.conversation.get(), url)));
                }
                match self.after_attempt(result, attempts, &visitor_msg) {
                    Attempt::Done => break,
                    Attempt::Again(0) => {}
                    Attempt::Again(ms) => sleep_ms(ms).await,
                }
            }
            if self.generation.get() == generation {
                self.busy.set(false);
            }
        });
    }

    /// After one attempt to send: done (the answer streams, or the visitor is told why not), or
    /// try again, at once or after a pause (ms). A retry carries the same client id, so the
    /// message is never stored twice.
    fn after_attempt(&self, result: Result<StreamEnd, ClientError>, attempts: u32, visitor_msg: &Msg) -> Attempt {
        match result {
            Ok(StreamEnd::Closed) if self.current.get().is_none() => Attempt::Done,
            Ok(_) if self.conversation.get().is_some() && self.current.get().is_some() => {
                // The stream broke before the answer ended: the live stream picks it up
                // where it stopped.
                self.offline.set(true);
                self.ensure_following();
                Attempt::Done
            }
            Ok(_) => {
                // Nothing arrived: send again; the same client id never stores it twice.
                if attempts >= 3 {
                    visitor_msg.error.set(Some(self.labels.offline.to_owned()));
                    return Attempt::Done;
                }
                Attempt::Again(800 * attempts)
            }
            Err(ClientError::Api { status: 409, error })
                if error.error == ApiCode::ConversationClosed && attempts < 3 =>
            {
                // A closed conversation: this message starts a new one — after the pre-chat
                // form, when the agent has one (the panel did not know it was closed).
                if self.prechat.is_some() {
                    self.ask_prechat_first();
                    return Attempt::Done;
                }
                storage::remove(&self.agent.get(), "conversation");
                self.conversation.set(None);
                self.human.set(None);
                Attempt::Again(0)
            }
            Err(ClientError::Api { status: 401, .. }) if attempts < 3 => {
                storage::remove(&self.agent.get(), "token");
                self.token.set_value(None);
                self.conversation.set(None);
                Attempt::Again(0)
            }
            // (A missing image is not a missing conversation.)
            Err(ClientError::Api { status: 404, ref error })
                if attempts < 3 && error.error != ApiCode::AttachmentNotFound && self.conversation.get().is_some() =>
            {
                storage::remove(&self.agent.get(), "conversation");
                self.conversation.set(None);
                Attempt::Again(0)
            }
            Err(ClientError::Network(_)) if attempts < 3 => Attempt::Again(800 * attempts),
            Err(e) => {
                visitor_msg.error.set(Some(self.error_text(&e)));
                Attempt::Done
            }
        }
    }

    pub(super) fn on_event(&self, seq: u64, event: crate::protocol::StreamEvent) {
        if seq == 0 {
            self.apply_unnumbered(event);
            return;
        }
        let had_conversation = self.conversation.get().is_some();
        self.apply(seq, event);
        if let Some(conv) = self.conversation.get()
            && !had_conversation
        {
            storage::set(&self.agent.get(), "conversation", &conv);
            // A new conversation: keep a live stream of it open (operator replies, payments).
            self.ensure_following();
            self.talking(true);
            self.read_seq.set_value(0);
        }
        self.offline.set(false);
        super::scroll_to_bottom();
    }

    /// Starts a new conversation (the host page's `Parley.reset()` too).
    pub fn reset(self) {
        if self.current.get().is_some() {
            self.stop();
        }
        self.forget_conversation();
    }

    /// Sends the lead form; field errors come back for the form to show.
    pub async fn submit_lead(&self, form: LeadForm) -> Result<(), Vec<(String, String)>> {
        let (Some(conversation), Some(token)) = (self.conversation.get(), self.token.get()) else {
            return Err(vec![("form".into(), self.labels.send_first.into())]);
        };
        let url = format!("{API}/conversations/{conversation}/lead");
        match client::json::<LeadForm, IgnoredAny>("POST", &url, Some(&token), Some(&form)).await {
            Ok(_) => {
                self.lead_submitted.set(true);
                self.lead_open.set(false);
                super::host::post_event(self, "lead", &serde_json::json!({ "conversation_id": conversation }));
                Ok(())
            }
            Err(ClientError::Api { error, .. }) if !error.fields.is_empty() => {
                Err(error.fields.into_iter().map(|f| (f.field, f.message)).collect())
            }
            Err(e) => Err(vec![("form".into(), self.error_text(&e))]),
        }
    }
}
