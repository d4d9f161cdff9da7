//! The panel's state: its messages, each part a [`Sig`] the views watch (how each stream event
//! changes them is in `apply`).

use super::sig::Sig;

use super::attach::{ImageSrc, MsgImage, Pending};
use crate::i18n::{Labels, Lang};
use crate::protocol::{
    Block, ConversationStatus, IdentifiedUser, MessageStatus, PublicAgentConfig, Role, ToolCallStatus, Transcript,
    TranscriptMessage,
};

/// A tool call shown under an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolChip {
    pub call_id: String,
    pub name: String,
    pub status: ToolCallStatus,
}

/// One message on screen.
#[derive(Clone, Copy)]
pub struct Msg {
    /// Stable key for the list.
    pub key: u64,
    pub id: Sig<String>,
    pub role: Role,
    pub text: Sig<String>,
    pub blocks: Sig<Vec<Block>>,
    pub tools: Sig<Vec<ToolChip>>,
    pub status: Sig<MessageStatus>,
    pub error: Sig<Option<String>>,
    /// Images sent with a visitor message.
    pub images: Sig<Vec<MsgImage>>,
    /// The visitor's rating of this answer (1 or -1).
    pub rating: Sig<Option<i8>>,
    /// The stream's sequence number it began at (0: not known, e.g. shown by the panel itself).
    pub seq: u64,
}

impl Msg {
    pub fn new(key: u64, id: String, role: Role, text: String, status: MessageStatus) -> Msg {
        Msg {
            key,
            id: Sig::new(id),
            role,
            text: Sig::new(text),
            blocks: Sig::new(Vec::new()),
            tools: Sig::new(Vec::new()),
            status: Sig::new(status),
            error: Sig::new(None),
            images: Sig::new(Vec::new()),
            rating: Sig::new(None),
            seq: 0,
        }
    }

    /// An answer the visitor can rate: the assistant's, finished, stored (not the greeting).
    pub fn rateable(&self) -> bool {
        self.role == Role::Assistant
            && self.status.get() == MessageStatus::Complete
            && self.id.with(|id| id != "greeting")
    }
}

/// The panel's language and its words: English, which the bundle carries, or another
/// language's catalogue that came with the page (see [`Words::from_page`]).
#[derive(Clone, Copy)]
pub struct Words {
    pub lang: Lang,
    pub labels: &'static Labels,
}

impl Default for Words {
    fn default() -> Words {
        Words { lang: Lang::En, labels: &crate::i18n::EN }
    }
}

impl Words {
    /// The page's language (`<html lang>`, which the server chose from the agent's setting and
    /// the browser's languages) and, unless it is English, its catalogue from the page's
    /// `pw-labels` data block. Anything missing or unreadable: English.
    #[cfg(target_arch = "wasm32")]
    pub fn from_page(document: &web_sys::Document) -> Words {
        let lang = document.document_element().and_then(|h| h.get_attribute("lang")).and_then(|t| Lang::from_tag(&t));
        let labels = document
            .get_element_by_id("pw-labels")
            .and_then(|e| e.text_content())
            .and_then(|json| crate::json::from_str::<std::collections::BTreeMap<String, String>>(&json).ok())
            .and_then(|map| Labels::from_map(&map).ok());
        match (lang, labels) {
            // Read once per page: the words live as long as it does.
            (Some(lang), Some(labels)) if lang != Lang::En => Words { lang, labels: Box::leak(Box::new(labels)) },
            _ => Words::default(),
        }
    }
}

/// Everything the panel shows; `Copy`, so every closure and task can hold it.
#[derive(Clone, Copy)]
pub struct Panel {
    pub agent: Sig<String>,
    pub host_origin: Sig<Option<String>>,
    /// The panel's language and its words.
    pub lang: Lang,
    pub labels: &'static Labels,
    pub capabilities: Sig<Vec<String>>,
    pub messages: Sig<Vec<Msg>>,
    pub conversation: Sig<Option<String>>,
    pub token: Sig<Option<String>>,
    /// Highest event sequence number applied.
    pub last_seq: Sig<u64>,
    /// The assistant message being written.
    pub current: Sig<Option<String>>,
    /// A send is in progress.
    pub busy: Sig<bool>,
    pub notice: Sig<Option<String>>,
    pub lead_open: Sig<bool>,
    pub lead_submitted: Sig<bool>,
    pub offline: Sig<bool>,
    /// Bumped by a reset; work started before it is ignored.
    pub generation: Sig<u64>,
    /// A live stream of the conversation is open.
    pub following: Sig<bool>,
    /// A person handles the conversation (their name, when known).
    pub human: Sig<Option<String>>,
    /// The person is typing.
    pub operator_typing: Sig<bool>,
    /// When the visitor last told the server they were typing (ms).
    pub typing_sent: Sig<f64>,
    /// The agent's model reads images: the composer offers to attach some.
    pub accepts_images: bool,
    /// Images chosen for the next message, not yet uploaded.
    pub pending: Sig<Vec<Pending>>,
    /// What screen readers are told: each finished answer and each person's message, once
    /// (the message list itself is not live, or every token would be read out).
    pub announce: Sig<String>,
    /// The website's signed-in user, once `Parley.identify` was verified.
    pub user: Sig<Option<IdentifiedUser>>,
    /// What the host page says about itself (`Parley.setContext`), sent with each message.
    pub page_context: Sig<Option<serde_json::Value>>,
    /// The site page the panel is on (the loader tells it), sent with each message: a reply
    /// mailed after the visitor left links back to it.
    pub page_url: Sig<Option<String>>,
    /// The page last told to the server, with the conversation it went with: it is sent again
    /// only when it changes (the server writes it down, off each turn's way).
    pub page_sent: Sig<Option<(Option<String>, String)>>,
    /// A visitor token is being made (others wait for it: one visitor per browser).
    pub token_pending: Sig<bool>,
    /// `Parley.identify` is being verified (a send waits for it, so it goes as the user).
    pub identifying: Sig<bool>,
    /// A person closed the conversation: the visitor may rate it.
    pub closed: Sig<bool>,
    /// The visitor's rating of the closed conversation (1 to 5).
    pub conversation_rating: Sig<Option<u8>>,
    /// Outside the agent's business hours: when people are back (`Some(None)`: not known).
    pub away: Sig<Option<Option<i64>>>,
    /// The server mails transcripts.
    pub mail_transcripts: bool,
    next_key: Sig<u64>,
    greeting: Sig<String>,
    /// The agent's pre-chat form (in the panel's words), shown under the greeting until a
    /// conversation starts.
    pub prechat: Option<&'static crate::protocol::Form>,
    /// The host page shows the panel (a page of its own always does).
    pub shown: Sig<bool>,
    /// The visitor has read the conversation up to this sequence number.
    pub read_seq: Sig<u64>,
    /// Finished answers, people's replies and orders paid the visitor has not seen.
    pub unread: Sig<u32>,
    /// Orders paid while the panel was closed.
    pub paid_unread: Sig<u32>,
}

impl Panel {
    pub fn new(config: &PublicAgentConfig, host_origin: Option<String>, words: Words) -> Panel {
        let panel = Panel {
            agent: Sig::new(config.key.clone()),
            host_origin: Sig::new(host_origin),
            lang: words.lang,
            labels: words.labels,
            capabilities: Sig::new(config.capabilities.clone()),
            messages: Sig::new(Vec::new()),
            conversation: Sig::new(None),
            token: Sig::new(None),
            last_seq: Sig::new(0),
            current: Sig::new(None),
            busy: Sig::new(false),
            notice: Sig::new(None),
            lead_open: Sig::new(false),
            lead_submitted: Sig::new(false),
            offline: Sig::new(false),
            generation: Sig::new(0),
            following: Sig::new(false),
            human: Sig::new(None),
            operator_typing: Sig::new(false),
            typing_sent: Sig::new(0.0),
            accepts_images: config.accepts_images,
            pending: Sig::new(Vec::new()),
            announce: Sig::new(String::new()),
            user: Sig::new(None),
            page_context: Sig::new(None),
            page_url: Sig::new(None),
            page_sent: Sig::new(None),
            token_pending: Sig::new(false),
            identifying: Sig::new(false),
            closed: Sig::new(false),
            conversation_rating: Sig::new(None),
            away: Sig::new(config.availability.filter(|a| !a.open).map(|a| a.reopens_at)),
            mail_transcripts: config.mail_transcripts,
            next_key: Sig::new(1),
            greeting: Sig::new(config.greeting.clone()),
            prechat: config.prechat.as_ref().map(|f| &*Box::leak(Box::new(prechat_words(f, words.labels)))),
            shown: Sig::new(false),
            read_seq: Sig::new(0),
            unread: Sig::new(0),
            paid_unread: Sig::new(0),
        };
        panel.shown.set_value(panel.host_origin.with(Option::is_none));
        panel.clear();
        panel
    }

    pub(super) fn key(&self) -> u64 {
        let k = self.next_key.get();
        self.next_key.set_value(k + 1);
        k
    }

    /// Back to an empty conversation with only the greeting.
    pub fn clear(&self) {
        let greeting = Msg::new(0, "greeting".into(), Role::Assistant, self.greeting.get(), MessageStatus::Complete);
        if let Some(form) = self.prechat {
            greeting.blocks.set(vec![crate::protocol::Block::Form(form.clone())]);
        }
        self.messages.set(vec![greeting]);
        self.conversation.set(None);
        self.last_seq.set_value(0);
        self.current.set(None);
        self.busy.set(false);
        self.notice.set(None);
        self.lead_open.set(false);
        self.lead_submitted.set(false);
        self.human.set(None);
        self.operator_typing.set(false);
        self.closed.set(false);
        self.conversation_rating.set(None);
        if self.pending.with(|p| !p.is_empty()) {
            self.discard_pending();
        }
        self.generation.set_value(self.generation.get() + 1);
    }

    /// A trigger opened the panel with its own greeting: it replaces the agent's while no
    /// conversation is under way (and stays for a new one started in this page).
    pub fn greet(&self, text: String) {
        let fresh = self.conversation.with(Option::is_none) && self.messages.with(|m| m.len() <= 1);
        if fresh {
            self.greeting.set_value(text);
            self.clear();
        }
    }

    /// The pre-chat form is still to be filled in: no conversation yet, or a person closed the
    /// last one (the next message starts a new conversation, which starts with the form).
    pub fn prechat_pending(&self) -> bool {
        self.prechat.is_some() && (self.conversation.with(Option::is_none) || self.closed.get())
    }

    /// Says that the pre-chat form comes first, showing it again when a person closed the
    /// conversation (the old one is put away, as "New conversation" does).
    pub(super) fn ask_prechat_first(&self) {
        if self.conversation.with(Option::is_some) {
            self.forget_conversation();
        }
        self.notice.set(Some(self.labels.prechat_first.to_owned()));
    }

    /// Adds the visitor's own message at once, known by the id the send gives it
    /// (`client_message_id`), so that its `visitor_message` event is not shown twice.
    pub fn push_visitor(&self, text: &str, client_id: &str) -> Msg {
        let msg = Msg::new(self.key(), client_id.to_owned(), Role::Visitor, text.to_owned(), MessageStatus::Complete);
        self.messages.update(|m| m.push(msg));
        msg
    }

    /// A line from the panel itself (someone joined, the conversation was closed…).
    pub(super) fn push_note(&self, text: &str) {
        let msg = Msg::new(
            self.key(),
            format!("note-{}", self.next_key.get()),
            Role::System,
            text.to_owned(),
            MessageStatus::Complete,
        );
        self.messages.update(|m| m.push(msg));
    }

    pub(super) fn find(&self, id: &str) -> Option<Msg> {
        self.messages.with(|m| m.iter().rev().find(|x| x.id.with(|v| v == id)).copied())
    }

    pub(super) fn current_msg(&self) -> Option<Msg> {
        self.current.get().and_then(|id| self.find(&id))
    }

    /// The question to ask again for an interrupted answer: the visitor's words just before it,
    /// while that answer is the conversation's last message and nothing is being answered.
    pub fn question_to_retry(&self, key: u64) -> Option<String> {
        if self.busy.get() || self.current.get().is_some() {
            return None;
        }
        self.messages.with(|list| {
            let (last, before) = list.split_last()?;
            if last.key != key || last.role != Role::Assistant || last.status.get() != MessageStatus::Interrupted {
                return None;
            }
            let question = before.iter().rev().find(|m| m.role != Role::System)?;
            let text = question.text.get();
            (question.role == Role::Visitor && !text.trim().is_empty()).then_some(text)
        })
    }

    /// Shows a stored conversation.
    pub fn load(&self, t: &Transcript) {
        let mut list = self.messages.get().into_iter().take(1).collect::<Vec<_>>();
        for m in &t.messages {
            list.push(self.message_from(m));
        }
        self.messages.set(list);
        self.conversation.set(Some(t.conversation_id.clone()));
        self.lead_submitted.set(t.lead_submitted);
        self.last_seq.set_value(t.last_seq);
        self.human.set((t.status == ConversationStatus::Human).then(String::new));
        self.closed.set(t.status == ConversationStatus::Closed);
        self.conversation_rating.set(t.rating);
    }

    fn message_from(&self, m: &TranscriptMessage) -> Msg {
        let msg = Msg { seq: m.start_seq, ..Msg::new(self.key(), m.id.clone(), m.role, m.text.clone(), m.status) };
        msg.blocks.set(m.blocks.clone());
        msg.rating.set(m.rating);
        // Their bytes are fetched once the transcript is shown (see `fetch_images`).
        msg.images.set(m.attachments.iter().map(|a| MsgImage { id: a.id.clone(), src: ImageSrc::Loading }).collect());
        msg.tools.set(
            m.tool_calls
                .iter()
                .map(|c| ToolChip { call_id: c.call_id.clone(), name: c.name.clone(), status: c.status })
                .collect(),
        );
        msg
    }
}

/// The pre-chat form with the panel's own words for the details it asks for.
fn prechat_words(form: &crate::protocol::Form, labels: &crate::i18n::Labels) -> crate::protocol::Form {
    let mut form = form.clone();
    for f in &mut form.fields {
        match f.name.as_str() {
            "name" => f.label = labels.lead_name.to_owned(),
            "email" => f.label = labels.lead_email.to_owned(),
            "phone" => f.label = labels.lead_phone.to_owned(),
            _ => {}
        }
    }
    form
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bare_panel() -> Panel {
        let config: PublicAgentConfig = serde_json::from_value(json!({
            "key": "help", "name": "Help", "greeting": "Hello!",
            "theme": { "color": "#2563eb", "position": "right" },
            "capabilities": [], "demo_model": false, "max_message_chars": 2000
        }))
        .unwrap();
        Panel::new(&config, None, Words::default())
    }

    fn panel_with(messages: serde_json::Value) -> Panel {
        let panel = bare_panel();
        let transcript: Transcript = serde_json::from_value(json!({
            "conversation_id": "c1", "last_seq": 9, "status": "bot", "lead_submitted": false,
            "messages": messages
        }))
        .unwrap();
        panel.load(&transcript);
        panel
    }

    fn message(id: &str, role: &str, text: &str, status: &str) -> serde_json::Value {
        json!({ "id": id, "role": role, "text": text, "blocks": [], "tool_calls": [], "status": status,
                "created_at": 0, "start_seq": 0 })
    }

    fn last_key(panel: &Panel) -> u64 {
        panel.messages.with(|m| m.last().unwrap().key)
    }

    #[test]
    fn a_trigger_s_greeting_replaces_the_agent_s_only_before_a_conversation() {
        let panel = bare_panel();
        panel.greet("Looking at our plans? Ask me anything.".into());
        let first = panel.messages.with(|m| (m.len(), m[0].text.get()));
        assert_eq!(first, (1, "Looking at our plans? Ask me anything.".to_owned()));
        // A conversation under way keeps what it shows.
        let talking = panel_with(json!([message("v1", "visitor", "Hi", "complete")]));
        talking.greet("Another greeting".into());
        assert!(talking.messages.with(|m| m.iter().all(|x| x.text.get() != "Another greeting")));
    }

    #[test]
    fn only_the_last_interrupted_answer_offers_its_question_again() {
        let panel = panel_with(json!([
            message("v1", "visitor", "How long does a work visa take?", "complete"),
            message("a1", "assistant", "It usually takes", "interrupted"),
        ]));
        let answer = last_key(&panel);
        assert_eq!(panel.question_to_retry(answer).as_deref(), Some("How long does a work visa take?"));
        assert_eq!(panel.question_to_retry(0), None, "the greeting is not an interrupted answer");
        // Not while a message is being sent or answered.
        panel.busy.set(true);
        assert_eq!(panel.question_to_retry(answer), None);
        panel.busy.set(false);
        panel.current.set(Some("a2".into()));
        assert_eq!(panel.question_to_retry(answer), None);
        panel.current.set(None);
        // Not once the conversation went on.
        panel.push_visitor("Never mind", "c1");
        assert_eq!(panel.question_to_retry(answer), None);

        // Not for an answer that finished or was stopped by the visitor.
        for status in ["complete", "stopped", "failed"] {
            let panel = panel_with(json!([
                message("v1", "visitor", "Hi", "complete"),
                message("a1", "assistant", "Hi", status)
            ]));
            assert_eq!(panel.question_to_retry(last_key(&panel)), None, "{status}");
        }
        // An answer to a person's message, or to images without words, has no question to repeat.
        let panel = panel_with(json!([
            message("o1", "operator", "I'll check", "complete"),
            message("a1", "assistant", "Hm", "interrupted"),
        ]));
        assert_eq!(panel.question_to_retry(last_key(&panel)), None);
        let panel = panel_with(json!([
            message("v1", "visitor", " ", "complete"),
            message("a1", "assistant", "", "interrupted")
        ]));
        assert_eq!(panel.question_to_retry(last_key(&panel)), None);
    }
}
