//! How each stream event changes the panel's state: an answer begins, grows token by token,
//! shows its tool calls and blocks, ends; a person takes over or hands back.

use super::model::{Msg, Panel, ToolChip};
use crate::protocol::{
    Block, Handoff, MessageEnd, MessageStart, MessageStatus, PaymentStatus, Role, StreamCode, StreamEvent,
    ToolCallStatus,
};

impl Panel {
    /// Applies an event that carries no sequence number (typing indicators).
    pub fn apply_unnumbered(&self, event: StreamEvent) {
        if let StreamEvent::Typing(t) = event
            && t.who == "operator"
        {
            self.operator_typing.set(t.active);
        }
    }

    /// Applies one stream event; events already applied are ignored.
    pub fn apply(&self, seq: u64, event: StreamEvent) {
        if seq <= self.last_seq.get() {
            return;
        }
        self.last_seq.set_value(seq);
        match event {
            StreamEvent::MessageStart(start) => self.message_start(start, seq),
            StreamEvent::Token(t) => {
                if let Some(msg) = self.current_msg() {
                    msg.text.update(|s| s.push_str(&t.text));
                }
            }
            StreamEvent::ToolCall(call) => {
                if let Some(msg) = self.current_msg() {
                    msg.tools.update(|tools| match tools.iter_mut().find(|c| c.call_id == call.call_id) {
                        Some(chip) => chip.status = call.status,
                        None => tools.push(ToolChip { call_id: call.call_id, name: call.name, status: call.status }),
                    });
                }
            }
            // An expert at work shows like a tool: "Using: policy expert…", then a check mark and "policy expert".
            StreamEvent::AgentStart(a) | StreamEvent::AgentComplete(a) => {
                let status = match a.ok {
                    None => ToolCallStatus::Started,
                    Some(true) => ToolCallStatus::Succeeded,
                    Some(false) => ToolCallStatus::Failed,
                };
                if let Some(msg) = self.current_msg() {
                    let call_id = format!("agent:{}", a.agent);
                    msg.tools.update(|tools| match tools.iter_mut().find(|c| c.call_id == call_id) {
                        Some(chip) => chip.status = status,
                        None => tools.push(ToolChip { call_id, name: a.agent, status }),
                    });
                }
            }
            StreamEvent::Block(b) => {
                if let Some(msg) = self.find(&b.message_id) {
                    msg.blocks.update(|blocks| blocks.push(b.block));
                }
            }
            StreamEvent::BlockUpdate(b) => {
                let paid = matches!(&b.block, Block::PaymentQr(p) if p.status == PaymentStatus::Paid);
                if paid {
                    self.arrived(true);
                }
                if let Some(msg) = self.find(&b.message_id) {
                    msg.blocks.update(|blocks| {
                        if let Some(existing) =
                            blocks.iter_mut().find(|x| x.key().is_some() && x.key() == b.block.key())
                        {
                            *existing = b.block;
                        }
                    });
                }
            }
            StreamEvent::Error(e) => {
                if e.code == StreamCode::UserAborted {
                    return;
                }
                // Said in the panel's language (a code this panel does not know: the server's words).
                let text = match e.code {
                    StreamCode::Other(_) => e.message,
                    code => self.labels.stream_error(&code).to_owned(),
                };
                match self.current_msg() {
                    Some(msg) => msg.error.set(Some(text)),
                    None => self.notice.set(Some(text)),
                }
            }
            StreamEvent::Handoff(h) => self.handoff(h),
            StreamEvent::OperatorMessage(m) => {
                self.operator_typing.set(false);
                if self.find(&m.message_id).is_none() {
                    self.announce.set(m.text.clone());
                    let msg = Msg {
                        seq,
                        ..Msg::new(self.key(), m.message_id, Role::Operator, m.text, MessageStatus::Complete)
                    };
                    self.messages.update(|list| list.push(msg));
                    self.arrived(false);
                }
            }
            StreamEvent::MessageEnd(end) => {
                let finished = end.status == MessageStatus::Complete;
                self.message_end(end);
                if finished {
                    self.arrived(false);
                }
            }
            StreamEvent::Typing(_) => self.apply_unnumbered(event),
            // The visitor's words from elsewhere (another tab or device, an answer by mail); this
            // panel's own are on the list already, by their client id.
            StreamEvent::VisitorMessage(m) => {
                let known = self.find(&m.message_id).is_some()
                    || m.client_message_id.as_deref().is_some_and(|c| self.find(c).is_some());
                if !known && !m.text.trim().is_empty() {
                    let msg = Msg {
                        seq,
                        ..Msg::new(self.key(), m.message_id, Role::Visitor, m.text, MessageStatus::Complete)
                    };
                    self.messages.update(|list| list.push(msg));
                }
            }
            StreamEvent::Usage(_) | StreamEvent::StateUpdate(_) => {}
        }
    }
    /// An answer begins (or, replayed from its start, begins again).
    fn message_start(&self, start: MessageStart, seq: u64) {
        if self.conversation.get().is_none() {
            self.conversation.set(Some(start.conversation_id.clone()));
        }
        match self.find(&start.message_id) {
            // Replayed from its start: begin again.
            Some(existing) => {
                existing.text.set(String::new());
                existing.blocks.set(Vec::new());
                existing.tools.set(Vec::new());
                existing.status.set(MessageStatus::Streaming);
                existing.error.set(None);
            }
            None => {
                let msg = Msg {
                    seq,
                    ..Msg::new(
                        self.key(),
                        start.message_id.clone(),
                        start.role,
                        String::new(),
                        MessageStatus::Streaming,
                    )
                };
                self.messages.update(|m| m.push(msg));
            }
        }
        self.current.set(Some(start.message_id));
    }

    /// A person takes over, hands back or closes; or the visitor now waits for one.
    fn handoff(&self, h: Handoff) {
        match h.to.as_str() {
            "waiting" => {
                self.lead_submitted.set(true);
                super::host::post_event(self, "handoff", &serde_json::json!({ "to": "waiting" }));
            }
            "human" => {
                super::host::post_event(
                    self,
                    "handoff",
                    &serde_json::json!({ "to": "human", "operator": h.operator_name.clone() }),
                );
                self.human.set(Some(h.operator_name.unwrap_or_default()));
                self.push_note(self.labels.person_joined);
            }
            "bot" => {
                self.human.set(None);
                self.operator_typing.set(false);
                self.push_note(self.labels.back_to_bot);
            }
            "closed" => {
                self.human.set(None);
                self.operator_typing.set(false);
                self.push_note(self.labels.closed);
                self.closed.set(true);
            }
            _ => {}
        }
    }

    /// An answer ends: its status, and (the one being written) what the host page and a screen
    /// reader hear of it.
    fn message_end(&self, end: MessageEnd) {
        let live = self.current.get().as_deref() == Some(end.message_id.as_str());
        if let Some(msg) = self.find(&end.message_id) {
            msg.status.set(end.status);
            // The answer being written, not one replayed from the history.
            if live {
                let text = crate::markdown::plain(&msg.text.get());
                // The host page hears of the finished answer (`Parley.on('answer')`).
                super::host::post_event(
                    self,
                    "answer",
                    &serde_json::json!({ "text": text, "status": end.status, "message_id": &end.message_id }),
                );
                let said = match msg.error.get() {
                    Some(error) if !text.contains(&error) => format!("{text}\n{error}"),
                    _ => text,
                };
                self.announce.set(said.trim().to_owned());
            }
        }
        if live {
            self.current.set(None);
        }
    }
}
