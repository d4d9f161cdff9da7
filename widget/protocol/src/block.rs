//! Rich blocks that tools put into the chat. One enum; adding a block type means one variant here
//! and one renderer file in `parley_widget::blocks`. Every block carries a `fallback_text` so a client that
//! cannot render it still has something useful to say. Types this build does not know deserialize
//! to [`Block::Unknown`] instead of failing the whole event.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A rich block attached to an assistant message.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    EscalationButton(EscalationButton),
    PaymentQr(PaymentQr),
    NewsCard(NewsCard),
    Citations(Citations),
    QuickReplies(QuickReplies),
    ChoiceCard(ChoiceCard),
    /// Fields the visitor fills in (see [`crate::Form`]).
    Form(crate::Form),
    /// A submitted form, on the visitor's message.
    FormAnswers(crate::FormAnswers),
    /// A block type this build has no variant for (a newer server); kept only for its fallback.
    Unknown(UnknownBlock),
}

/// "Talk to a person": clicking it opens the lead form in the panel ("Leave a message" when
/// `away`: outside the agent's business hours).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EscalationButton {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub fallback_text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub away: bool,
}

/// State of a payment order as shown on a `payment_qr` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PaymentStatus {
    #[default]
    Pending,
    Paid,
    Expired,
}

impl PaymentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentStatus::Pending => "pending",
            PaymentStatus::Paid => "paid",
            PaymentStatus::Expired => "expired",
        }
    }
}

/// A payment QR code for an order created on the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaymentQr {
    pub order_id: String,
    /// Amount in the currency's minor unit (fen, cents).
    pub amount_minor: i64,
    pub currency: String,
    pub method: String,
    /// The QR code as an SVG document, drawn by the server.
    pub qr_svg: String,
    /// What the QR code encodes: the hosted payment page of the order.
    pub pay_url: String,
    /// Expiry, milliseconds since the Unix epoch.
    pub expires_at: i64,
    #[serde(default)]
    pub status: PaymentStatus,
    pub fallback_text: String,
}

/// A news item.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewsCard {
    pub title: String,
    pub summary: String,
    pub date: String,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub fallback_text: String,
}

/// One source an answer drew on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub article_id: Option<String>,
}

/// The sources of an answer, shown under it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Citations {
    pub sources: Vec<Citation>,
    pub fallback_text: String,
}

/// At most this many quick replies under one answer.
pub const MAX_QUICK_REPLIES: usize = 6;
/// At most this many characters in one quick reply.
pub const MAX_QUICK_REPLY_CHARS: usize = 40;

/// Answers the visitor can tap instead of typing (`quick_replies`): a tap sends the reply's text
/// as the visitor's message, and the buttons go once anything follows the answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuickReplies {
    pub replies: Vec<String>,
    pub fallback_text: String,
}

/// A card with an image, a title, a text and buttons (`choice_card`): each button opens an
/// address or sends a message as the visitor's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChoiceCard {
    /// An `https://` image above the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_alt: Option<String>,
    pub title: String,
    #[serde(default)]
    pub text: String,
    pub buttons: Vec<CardButton>,
    pub fallback_text: String,
}

/// A card's button: opens `url` (https) or sends `message`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CardButton {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A block of a type this build does not know.
#[derive(Clone, Debug, PartialEq)]
pub struct UnknownBlock {
    pub kind: String,
    pub fallback_text: Option<String>,
}

impl Block {
    /// The wire name of the block type.
    pub fn kind(&self) -> &str {
        match self {
            Block::EscalationButton(_) => "escalation_button",
            Block::PaymentQr(_) => "payment_qr",
            Block::NewsCard(_) => "news_card",
            Block::Citations(_) => "citations",
            Block::QuickReplies(_) => "quick_replies",
            Block::ChoiceCard(_) => "choice_card",
            Block::Form(_) => "form",
            Block::FormAnswers(_) => "form_answers",
            Block::Unknown(u) => &u.kind,
        }
    }

    /// What identifies this block across updates (`block_update` replaces the block with the
    /// same key): a payment's order id.
    pub fn key(&self) -> Option<&str> {
        match self {
            Block::PaymentQr(b) => Some(&b.order_id),
            _ => None,
        }
    }

    /// The capability the server must authorise for this block to be rendered.
    pub fn capability(&self) -> Option<&'static str> {
        match self {
            Block::EscalationButton(_) => Some("ticket_escalation"),
            Block::PaymentQr(_) => Some("payments"),
            Block::NewsCard(_) => Some("news"),
            Block::Citations(_) => Some("knowledge_search"),
            Block::QuickReplies(_) => Some("quick_replies"),
            Block::ChoiceCard(_) => Some("cards"),
            Block::Form(_) | Block::FormAnswers(_) => Some("forms"),
            Block::Unknown(_) => None,
        }
    }

    /// Text to show when the block cannot be rendered.
    pub fn fallback_text(&self) -> Option<&str> {
        match self {
            Block::EscalationButton(b) => Some(&b.fallback_text),
            Block::PaymentQr(b) => Some(&b.fallback_text),
            Block::NewsCard(b) => Some(&b.fallback_text),
            Block::Citations(b) => Some(&b.fallback_text),
            Block::QuickReplies(b) => Some(&b.fallback_text),
            Block::ChoiceCard(b) => Some(&b.fallback_text),
            Block::Form(b) => Some(&b.fallback_text),
            Block::FormAnswers(b) => Some(&b.fallback_text),
            Block::Unknown(u) => u.fallback_text.as_deref(),
        }
    }
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = match self {
            Block::EscalationButton(b) => to_map(b),
            Block::PaymentQr(b) => to_map(b),
            Block::NewsCard(b) => to_map(b),
            Block::Citations(b) => to_map(b),
            Block::QuickReplies(b) => to_map(b),
            Block::ChoiceCard(b) => to_map(b),
            Block::Form(b) => to_map(b),
            Block::FormAnswers(b) => to_map(b),
            Block::Unknown(u) => {
                let mut m = Map::new();
                if let Some(text) = &u.fallback_text {
                    m.insert("fallback_text".into(), Value::String(text.clone()));
                }
                m
            }
        };
        map.insert("type".into(), Value::String(self.kind().to_owned()));
        map.serialize(serializer)
    }
}

fn to_map<T: Serialize>(value: &T) -> Map<String, Value> {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

#[cfg(not(feature = "browser-json"))]
impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Value::Object(map) = value else {
            return Err(serde::de::Error::custom("a block must be a JSON object"));
        };
        let kind = map
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| serde::de::Error::custom("a block needs a string `type`"))?
            .to_owned();
        let value = Value::Object(map);
        let known = match kind.as_str() {
            "escalation_button" => serde_json::from_value(value.clone()).map(Block::EscalationButton),
            "payment_qr" => serde_json::from_value(value.clone()).map(Block::PaymentQr),
            "news_card" => serde_json::from_value(value.clone()).map(Block::NewsCard),
            "citations" => serde_json::from_value(value.clone()).map(Block::Citations),
            "quick_replies" => serde_json::from_value(value.clone()).map(Block::QuickReplies),
            "choice_card" => serde_json::from_value(value.clone()).map(Block::ChoiceCard),
            "form" => serde_json::from_value(value.clone()).map(Block::Form),
            "form_answers" => serde_json::from_value(value.clone()).map(Block::FormAnswers),
            _ => return Ok(unknown(kind, &value)),
        };
        // A known type in a shape this build does not understand is treated like an unknown one:
        // one odd block must not take the rest of the stream down with it.
        Ok(known.unwrap_or_else(|_| unknown(kind, &value)))
    }
}

#[cfg(not(feature = "browser-json"))]
fn unknown(kind: String, value: &Value) -> Block {
    let fallback_text = value.get("fallback_text").and_then(Value::as_str).map(str::to_owned);
    Block::Unknown(UnknownBlock { kind, fallback_text })
}

/// In the panel's bundle (`crate::json` with `browser-json`) a block arrives as the object `JSON.parse` made: its
/// `type` is read from it and the object handed on whole to the variant's own reader, with the
/// same rule as above (an unknown type, or a known one in a shape this build does not read,
/// becomes [`Block::Unknown`]).
#[cfg(feature = "browser-json")]
impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde_wasm_bindgen::from_value;
        use wasm_bindgen::JsValue;

        let object: js_sys::Object = serde_wasm_bindgen::preserve::deserialize(deserializer)
            .map_err(|_| serde::de::Error::custom("a block must be a JSON object"))?;
        let field = |name: &str| js_sys::Reflect::get(&object, &JsValue::from_str(name)).ok()?.as_string();
        let kind = field("type").ok_or_else(|| serde::de::Error::custom("a block needs a string `type`"))?;
        let value = JsValue::from(object.clone());
        let known = match kind.as_str() {
            "escalation_button" => from_value(value).map(Block::EscalationButton).ok(),
            "payment_qr" => from_value(value).map(Block::PaymentQr).ok(),
            "news_card" => from_value(value).map(Block::NewsCard).ok(),
            "citations" => from_value(value).map(Block::Citations).ok(),
            "quick_replies" => from_value(value).map(Block::QuickReplies).ok(),
            "choice_card" => from_value(value).map(Block::ChoiceCard).ok(),
            "form" => from_value(value).map(Block::Form).ok(),
            "form_answers" => from_value(value).map(Block::FormAnswers).ok(),
            _ => None,
        };
        Ok(known.unwrap_or_else(|| Block::Unknown(UnknownBlock { fallback_text: field("fallback_text"), kind })))
    }
}

/// Formats an amount in minor units, e.g. `9900, "CNY"` → `¥99.00`.
pub fn format_amount(amount_minor: i64, currency: &str) -> String {
    let symbol = match currency {
        "CNY" => "¥",
        "HKD" => "HK$",
        "USD" => "$",
        "EUR" => "€",
        _ => "",
    };
    let sign = if amount_minor < 0 { "-" } else { "" };
    let abs = amount_minor.unsigned_abs();
    let major = abs / 100;
    let minor = abs % 100;
    if symbol.is_empty() {
        format!("{sign}{major}.{minor:02} {currency}")
    } else {
        format!("{sign}{symbol}{major}.{minor:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_block_round_trips_with_type_tag() {
        let block = Block::EscalationButton(EscalationButton {
            label: "Talk to a person".into(),
            reason: Some("billing".into()),
            fallback_text: "Ask for a person".into(),
            away: false,
        });
        let json = serde_json::to_value(&block).unwrap();
        assert_eq!(json["type"], "escalation_button");
        assert_eq!(json["label"], "Talk to a person");
        let back: Block = serde_json::from_value(json).unwrap();
        assert_eq!(back, block);
    }

    #[test]
    fn unknown_type_keeps_its_fallback() {
        let block: Block = serde_json::from_str(r#"{"type":"hologram","fallback_text":"a hologram","x":1}"#).unwrap();
        assert_eq!(
            block,
            Block::Unknown(UnknownBlock { kind: "hologram".into(), fallback_text: Some("a hologram".into()) })
        );
        assert_eq!(block.capability(), None);
    }

    #[test]
    fn malformed_known_type_degrades_to_unknown() {
        let block: Block = serde_json::from_str(r#"{"type":"news_card","title":3}"#).unwrap();
        assert!(matches!(block, Block::Unknown(ref u) if u.kind == "news_card"));
    }

    #[test]
    fn block_without_type_is_an_error() {
        assert!(serde_json::from_str::<Block>(r#"{"label":"x"}"#).is_err());
    }

    #[test]
    fn formats_amounts() {
        assert_eq!(format_amount(9900, "CNY"), "¥99.00");
        assert_eq!(format_amount(7905, "HKD"), "HK$79.05");
        assert_eq!(format_amount(100, "JPY"), "1.00 JPY");
    }
}
