//! What arrived while the panel was closed (issue 44, part 2): answers that finished, people's
//! replies and orders paid count as unread until the visitor opens the panel; the host page's
//! loader shows the count on its launcher. The panel keeps, per agent, how far the visitor has
//! read (`conversation:seq`): a reload counts what came since, and another tab that opened the
//! panel clears it here too (the `storage` event). It also tells the loader whether a
//! conversation is under way, so that the loader loads the panel hidden on the next page.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use super::model::Panel;
use super::storage;
use crate::protocol::{MessageStatus, Role};

const READ: &str = "read";

impl Panel {
    /// The host page showed (`true`) or hid the panel.
    pub fn set_shown(&self, shown: bool) {
        self.shown.set_value(shown);
        if shown {
            self.mark_read();
        }
    }

    /// Everything shown so far is read (the visitor sees the panel).
    pub fn mark_read(&self) {
        let Some(conversation) = self.conversation.get() else { return };
        let seq = self.last_seq.get();
        self.read_seq.set_value(seq);
        storage::set(&self.agent.get(), READ, &format!("{conversation}:{seq}"));
        self.paid_unread.set_value(0);
        self.publish(0);
    }

    /// Something arrived: read at once while shown, else counted.
    pub fn arrived(&self, paid: bool) {
        if self.shown.get() {
            self.mark_read();
            return;
        }
        if paid {
            self.paid_unread.set_value(self.paid_unread.get() + 1);
        }
        self.recount();
    }

    /// The finished answers and people's replies after the read mark, and orders paid since.
    pub fn recount(&self) {
        let since = self.read_seq.get();
        let finished = self.messages.with(|list| {
            list.iter()
                .filter(|m| m.role != Role::Visitor && m.seq > since && m.status.get() == MessageStatus::Complete)
                .count()
        });
        self.publish(finished as u32 + self.paid_unread.get());
    }

    fn publish(&self, count: u32) {
        if self.unread.get() != count {
            self.unread.set_value(count);
            super::host::post_with(self, "parley:unread", &serde_json::json!({ "count": count }));
        }
    }

    /// A transcript was loaded: the stored read mark of this conversation, or (none yet, or one
    /// of another conversation) everything in it counts as read.
    pub fn restore_read_mark(&self) {
        let Some(conversation) = self.conversation.get() else { return };
        let stored = storage::get(&self.agent.get(), READ);
        let mark = stored.as_deref().and_then(|v| v.rsplit_once(':')).filter(|(c, _)| *c == conversation);
        match mark.and_then(|(_, seq)| seq.parse::<u64>().ok()) {
            Some(seq) => {
                self.read_seq.set_value(seq);
                if self.shown.get() { self.mark_read() } else { self.recount() }
            }
            None => self.mark_read(),
        }
        self.talking(true);
    }

    /// Tells the loader whether a conversation is under way (it then loads the panel hidden on
    /// the visitor's next pages).
    pub fn talking(&self, active: bool) {
        super::host::post_with(self, "parley:talking", &serde_json::json!({ "active": active }));
    }

    /// Another tab of this visitor read the conversation: so did this one.
    pub fn listen_for_reads(self) {
        let Some(window) = web_sys::window() else { return };
        let handler = Closure::<dyn Fn(web_sys::StorageEvent)>::new(move |e: web_sys::StorageEvent| {
            let Some(key) = e.key() else { return };
            if !key.ends_with(&format!(":{READ}")) || storage::get(&self.agent.get(), READ) != e.new_value() {
                return;
            }
            let Some(conversation) = self.conversation.get() else { return };
            let Some((c, seq)) =
                e.new_value().and_then(|v| v.rsplit_once(':').map(|(c, s)| (c.to_owned(), s.to_owned())))
            else {
                return;
            };
            if c == conversation
                && let Ok(seq) = seq.parse::<u64>()
                && seq >= self.read_seq.get()
            {
                self.read_seq.set_value(seq);
                self.paid_unread.set_value(0);
                self.recount();
            }
        });
        let _ = window.add_event_listener_with_callback("storage", handler.as_ref().unchecked_ref());
        handler.forget();
    }
}
