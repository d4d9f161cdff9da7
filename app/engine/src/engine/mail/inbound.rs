//! A visitor's answer by mail (issue 44, part 2): mail to `reply+TOKEN@INBOUND_DOMAIN` (the
//! Reply-To of a return mail) goes into the token's conversation as the visitor's message — the
//! person handling it sees it, or the agent answers and the answer is mailed back. A token takes
//! one mail and expires; a wrong, used or expired token, another sender, or an empty answer
//! changes nothing. The mail arrives over SMTP (the server's inbound listener) or from a relay
//! that posts it (`POST /api/v1/inbound-mail`); both call [`Engine::receive_mail`].

use mail_parser::MessageParser;

use super::super::Engine;
use super::super::chat::{ChatError, SendRequest};
use crate::mail_text::REPLY_ABOVE;
use crate::store::DbError;
use crate::store::return_mail as returns;

/// Why an inbound mail was refused (nothing changed).
#[derive(Debug, thiserror::Error)]
pub enum InboundError {
    /// The address is not a reply address of this server.
    #[error("no such mailbox here")]
    NoMailbox,
    /// A reply address whose token is unknown, expired or used.
    #[error("this reply address is not valid (unknown, expired or already used): open the link in the latest mail")]
    BadToken,
    /// The sender is not the address the return mail went to.
    #[error("this reply address takes mail only from the address it was sent to")]
    WrongSender,
    /// Not a mail, or no text before the quoted part.
    #[error("the mail has no answer text")]
    Empty,
    #[error("the conversation cannot take the message: {0}")]
    Chat(String),
    /// The conversation cannot take it now (an answer is being written, the server is stopping
    /// or its database is away): the sending server tries again later.
    #[error("the conversation cannot take the message now: {0}")]
    Later(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl InboundError {
    /// A refusal for good (SMTP 5xx), or a fault worth trying again (4xx).
    pub fn is_permanent(&self) -> bool {
        !matches!(self, InboundError::Db(_) | InboundError::Later(_))
    }
}

impl Engine {
    /// The token of `address` when it is a reply address of this server (`reply+TOKEN@DOMAIN`).
    pub fn reply_token<'a>(&self, address: &'a str) -> Option<&'a str> {
        let domain = self.settings().returns.inbound_domain.as_deref()?;
        let address = address.trim().trim_start_matches('<').trim_end_matches('>');
        let (local, at) = address.rsplit_once('@')?;
        if !at.eq_ignore_ascii_case(domain) {
            return None;
        }
        let token = local.strip_prefix("reply+").or_else(|| local.strip_prefix("REPLY+"))?;
        (token.len() <= 100 && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
            .then_some(token)
    }

    /// Whether `address` takes mail now (an unused, unexpired reply token): checked at `RCPT TO`.
    pub async fn reply_address_open(&self, address: &str) -> Result<bool, DbError> {
        match self.reply_token(address) {
            Some(token) => Ok(returns::reply_target(self.db(), token, self.now_ms()).await?.is_some()),
            None => Ok(false),
        }
    }

    /// Takes a mail (`raw`, RFC 5322) sent to `address` into its conversation; the id of the
    /// conversation.
    pub async fn receive_mail(&self, address: &str, raw: &[u8]) -> Result<String, InboundError> {
        let token = self.reply_token(address).ok_or(InboundError::NoMailbox)?;
        let message = MessageParser::default().parse(raw).ok_or(InboundError::Empty)?;
        let body = message.body_text(0).map(|t| answer_text(&t)).unwrap_or_default();
        if body.is_empty() {
            return Err(InboundError::Empty);
        }
        let from = message.from().and_then(|f| f.first()).and_then(|a| a.address()).unwrap_or_default().to_owned();
        let now = self.now_ms();
        // Checked before the token is used: a stranger's mail does not spend it.
        let Some((conversation_id, visitor_id)) = returns::reply_target(self.db(), token, now).await? else {
            return Err(InboundError::BadToken);
        };
        let known = super::visitor_mail::address_of(self, &visitor_id).await?.map(|(a, _)| a);
        if !known.is_some_and(|a| a.eq_ignore_ascii_case(&from)) {
            return Err(InboundError::WrongSender);
        }
        if returns::use_reply(self.db(), token, now).await?.is_none() {
            return Err(InboundError::BadToken);
        }
        let visitor = crate::store::visitors::by_id(self.db(), &visitor_id).await?.ok_or(InboundError::BadToken)?;
        let agent = self.agent_by_id(&visitor.agent_id).await?.ok_or(InboundError::BadToken)?;
        let client_id = message.message_id().map(|id| format!("mail:{}", id.chars().take(90).collect::<String>()));
        let started = self
            .send(SendRequest {
                agent,
                visitor: &visitor,
                conversation_id: Some(&conversation_id),
                text: &body,
                client_message_id: client_id.as_deref(),
                attachments: &[],
                page_context: None,
                address: None,
                form: None,
                trial: false,
            })
            .await;
        let started = match started {
            Ok(started) => started,
            Err(e) => {
                // Nothing was taken: the address takes the mail sent again.
                returns::unuse_reply(self.db(), token, now).await?;
                return Err(match e {
                    ChatError::Db(e) => InboundError::Db(e),
                    e @ (ChatError::Busy | ChatError::Unavailable | ChatError::Storage(_)) => {
                        InboundError::Later(e.to_string())
                    }
                    other => InboundError::Chat(other.to_string()),
                });
            }
        };
        // The answer (if the agent answers) is written whatever happens to this stream; it is
        // mailed back once done (the conversation is pending, with the visitor's mail noted).
        drop(started.events);
        returns::mark_pending(self.db(), &conversation_id, now, true).await?;
        tracing::info!(conversation = %conversation_id, "a visitor's answer by mail was taken");
        metrics::counter!("parley_inbound_mail_total").increment(1);
        Ok(conversation_id)
    }
}

/// What the visitor wrote above the quoted mail: up to the return mail's marker line, a quote
/// header (`On … wrote:`, `Le … a écrit :`, `… 写道：`) or the first `>` line; trimmed, at
/// most the panel's message length.
pub fn answer_text(body: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for line in body.lines() {
        let t = line.trim();
        let quoted = t.starts_with('>')
            || REPLY_ABOVE.iter().any(|m| t.contains(m.trim_matches('-').trim()))
            || (t.ends_with("wrote:") || t.ends_with("a écrit :") || t.ends_with("写道：") || t.ends_with("schrieb:"))
                && t.len() > 6;
        if quoted {
            break;
        }
        kept.push(line.trim_end());
    }
    let text = kept.join("\n");
    text.trim().chars().take(parley_protocol::MAX_MESSAGE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_what_comes_before_the_quote() {
        let mail =
            "Yes, Tuesday works.\nThanks!\n\nOn Mon, 7 Dec 2026, Help Center <help@x> wrote:\n> You have a reply\n";
        assert_eq!(answer_text(mail), "Yes, Tuesday works.\nThanks!");
        let marker = format!("Fine by me\r\n\r\n{}\r\nYou have a reply", REPLY_ABOVE[0]);
        assert_eq!(answer_text(&marker), "Fine by me");
        assert_eq!(answer_text("> only a quote\n> nothing else"), "");
        assert_eq!(answer_text(&"a".repeat(9000)).chars().count(), parley_protocol::MAX_MESSAGE_CHARS);
    }
}
