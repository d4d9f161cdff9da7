//! The stable codes of the protocol: why an API call was refused ([`ApiCode`], the `error` of an
//! error body) and why a stream's answer ended early ([`StreamCode`], the `code` of an `error`
//! event). Both are sent as the strings listed in `docs/protocol.md`; a code this build does not
//! know (from a newer server) is kept as `Other` rather than refused.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! codes {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
            /// A code this build does not know.
            Other(String),
        }

        impl $name {
            /// Every known code.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The code as sent.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)*
                    $name::Other(s) => s,
                }
            }

            /// The code of a sent string (unknown ones as `Other`).
            pub fn parse(s: &str) -> Self {
                match s {
                    $($text => $name::$variant,)*
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                Ok($name::parse(&s))
            }
        }
    };
}

codes! {
    /// Why the widget API refused a call (`{"error": CODE, "message": …}`). The HTTP status of each
    /// is decided in one place on the server.
    ApiCode {
        /// A visitor route without `Authorization: Bearer`.
        TokenRequired = "token_required",
        /// The visitor token is unknown.
        BadToken = "bad_token",
        /// The page embedding the widget is not one of the agent's allowed origins.
        OriginNotAllowed = "origin_not_allowed",
        /// Agent, conversation, image or order not found (or not the caller's).
        NotFound = "not_found",
        /// The conversation is still answering; wait or stop it.
        ReplyInProgress = "reply_in_progress",
        ConversationClosed = "conversation_closed",
        EmptyMessage = "empty_message",
        MessageTooLong = "message_too_long",
        BadClientMessageId = "bad_client_message_id",
        BadLastEventId = "bad_last_event_id",
        /// The lead form has field errors (see `fields`).
        InvalidForm = "invalid_form",
        /// The agent asks for its pre-chat form before the first message.
        PrechatRequired = "prechat_required",
        JsonRequired = "json_required",
        MalformedJson = "malformed_json",
        InvalidBody = "invalid_body",
        BodyTooLarge = "body_too_large",
        UnreadableBody = "unreadable_body",
        UnsupportedImage = "unsupported_image",
        EmptyAttachment = "empty_attachment",
        AttachmentTooLarge = "attachment_too_large",
        /// A message with more images than it may carry.
        TooManyAttachments = "too_many_attachments",
        /// An upload while too many of the visitor's images wait to be sent.
        TooManyWaitingImages = "too_many_waiting_images",
        AttachmentNotFound = "attachment_not_found",
        ImagesNotSupported = "images_not_supported",
        /// A payment webhook whose signature does not match, or whose timestamp is outside the
        /// 5-minute window.
        BadSignature = "bad_signature",
        /// A payment webhook whose id was already accepted (a replay).
        WebhookReplayed = "webhook_replayed",
        /// A payment webhook whose amount or currency is not its order's.
        OrderMismatch = "order_mismatch",
        /// A pay link that was signed by this server but has expired.
        LinkExpired = "link_expired",
        /// An MCP setting (`feature_set`, `output`) with a value it does not take.
        BadMcpSetting = "bad_mcp_setting",
        /// Console routes: no session.
        Unauthorized = "unauthorized",
        /// Console routes: the role may not do this.
        Forbidden = "forbidden",
        /// Console routes: a state-changing call from another site.
        CrossSite = "cross_site",
        /// Too many calls: wait `Retry-After` seconds (visitors, messages, uploads, resumes,
        /// lead forms, an agent's turns, open streams).
        RateLimited = "rate_limited",
        /// Identity: the agent has no identity secret yet.
        IdentityNotConfigured = "identity_not_configured",
        /// Identity: the token is not a well-formed JWT, lacks a claim (`sub`, `exp`, `iat`,
        /// `aud`), or was issued in the future.
        IdentityInvalid = "identity_invalid",
        /// Identity: signed with something other than HS256 (`alg: none` included).
        IdentityAlgorithm = "identity_algorithm",
        /// Identity: the signature matches none of the agent's identity secrets (a forgery, or
        /// a secret past its rotation grace period).
        IdentitySignature = "identity_signature",
        /// Identity: the token's `exp` has passed.
        IdentityExpired = "identity_expired",
        /// Identity: the token's `aud` is not this agent's key.
        IdentityAudience = "identity_audience",
        /// Identity: the token lives longer (`exp` - `iat`) than the agent accepts.
        IdentityLifetime = "identity_lifetime",
        /// The agent only talks to visitors the host site identified (`Parley.identify`).
        IdentityRequired = "identity_required",
        /// A page context (`Parley.setContext`) over 2 KB.
        ContextTooLarge = "context_too_large",
        /// Something failed on the server; details are in its log only.
        Internal = "internal",
        /// The server is shutting down or cannot reach its database: nothing was done; try again
        /// after `Retry-After` seconds (another replica may answer at once).
        Unavailable = "unavailable",
    }
}

codes! {
    /// Why an answer ended early (`event: error`, `{"code": CODE, "message": …}`).
    StreamCode {
        /// The visitor stopped the answer (or left the page).
        UserAborted = "USER_ABORTED",
        /// The agent's tool hops for one turn were used up.
        MaxTurnsReached = "MAX_TURNS_REACHED",
        /// The conversation's budget, the agent's or the visitor's daily cap is spent.
        BudgetExceeded = "BUDGET_EXCEEDED",
        /// The answer took longer than the server allows one answer (what came is kept).
        TimeLimitReached = "TIME_LIMIT_REACHED",
        /// The model's provider rate-limited every retry.
        RateLimited = "RATE_LIMITED",
        /// The provider refused the request (authentication, quota, a bad request).
        UpstreamRejected = "UPSTREAM_REJECTED",
        /// The provider could not be reached or failed.
        UpstreamUnavailable = "UPSTREAM_UNAVAILABLE",
        /// Something failed inside Parley.
        InternalError = "INTERNAL_ERROR",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_travel_as_their_strings_and_unknown_ones_survive() {
        assert_eq!(serde_json::to_string(&ApiCode::ReplyInProgress).unwrap(), "\"reply_in_progress\"");
        assert_eq!(serde_json::from_str::<StreamCode>("\"BUDGET_EXCEEDED\"").unwrap(), StreamCode::BudgetExceeded);
        let newer: StreamCode = serde_json::from_str("\"SOMETHING_NEW\"").unwrap();
        assert_eq!(newer, StreamCode::Other("SOMETHING_NEW".into()));
        assert_eq!(serde_json::to_string(&newer).unwrap(), "\"SOMETHING_NEW\"");
        for code in ApiCode::ALL {
            assert_eq!(&ApiCode::parse(code.as_str()), code);
        }
        for code in StreamCode::ALL {
            assert_eq!(&StreamCode::parse(code.as_str()), code);
        }
        assert!(StreamCode::UserAborted == "USER_ABORTED");
    }
}
