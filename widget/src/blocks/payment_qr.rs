//! `payment_qr`: the order's QR code (an SVG drawn by the server, shown as an image so nothing in
//! it can run), amount, method and a countdown to expiry.

use wasm_bindgen::JsCast;

use super::BlockCtx;

use crate::html::{Html, html};
use crate::i18n::{Labels, Lang};
use crate::protocol::{PaymentQr, PaymentStatus};

/// `data:` URL of an SVG document.
fn svg_data_url(svg: &str) -> String {
    let mut out = String::from("data:image/svg+xml;charset=utf-8,");
    for b in svg.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b' ' | b'.' | b'-' | b'_' | b'/' | b':' | b'=' | b',') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Now, in milliseconds since 1970 (in the browser and on the server, which renders the console).
pub fn now_ms() -> i64 {
    #[cfg(target_arch = "wasm32")]
    {
        web_sys::js_sys::Date::now() as i64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
    }
}

/// The state shown at `now`, and its words.
fn state(status: PaymentStatus, expires_at: i64, now: i64, labels: &Labels) -> (PaymentStatus, String) {
    match status {
        PaymentStatus::Paid => (PaymentStatus::Paid, labels.paid.to_owned()),
        PaymentStatus::Expired => (PaymentStatus::Expired, labels.expired.to_owned()),
        _ if now >= expires_at => (PaymentStatus::Expired, labels.expired.to_owned()),
        PaymentStatus::Pending => {
            let left = ((expires_at - now) / 1000).max(0);
            (PaymentStatus::Pending, format!("{} {:02}:{:02}", labels.expires_in, left / 60, left % 60))
        }
    }
}

pub fn render(block: &PaymentQr, ctx: &BlockCtx) -> Html {
    let (shown, words) = state(block.status, block.expires_at, ctx.now_ms, ctx.labels);
    html!(
        "<div class=\"pw-block pw-payment\" lang=\"{}\" data-state=\"{}\" data-expires=\"{}\">\
         <img class=\"pw-qr\" src=\"{}\" alt=\"{}\" width=\"180\" height=\"180\">\
         <div class=\"pw-payment-info\"><p class=\"pw-amount\">{}</p><p class=\"pw-method\">{}</p>\
         <p class=\"pw-payment-state\">{}{}</p>\
         <a class=\"pw-pay-link\"{} target=\"_blank\" rel=\"noopener noreferrer\">{}</a></div></div>",
        ctx.lang.tag(),
        shown.as_str(),
        block.expires_at,
        svg_data_url(&block.qr_svg),
        block.fallback_text,
        ctx.lang.amount(block.amount_minor, &block.currency),
        ctx.labels.payment_method(&block.method),
        if shown == PaymentStatus::Paid { crate::icons::html(crate::icons::CHECK) } else { Html::new() },
        words,
        // A pay page on the web only (no `javascript:`); without one the order number is plain text.
        super::safe_link(&block.pay_url).map(|u| html!(" href=\"{}\"", u)).unwrap_or_default(),
        block.order_id,
    )
}

/// Moves every pending payment's countdown under `root` on to `now`, in each block's language
/// (called once a second by the page that shows them); one that ran out says so. `labels`
/// gives a language's words (the panel has only its own language's; the console has all).
pub fn tick_countdowns(root: &web_sys::Element, now: i64, labels: impl Fn(Lang) -> &'static Labels) {
    let Ok(list) = root.query_selector_all(".pw-payment[data-state=\"pending\"]") else { return };
    for i in 0..list.length() {
        let Some(el) = list.get(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) else { continue };
        let expires = el.get_attribute("data-expires").and_then(|v| v.parse().ok()).unwrap_or(0);
        let lang = el.get_attribute("lang").and_then(|t| Lang::from_tag(&t)).unwrap_or(Lang::En);
        let (shown, words) = state(PaymentStatus::Pending, expires, now, labels(lang));
        if let Ok(Some(p)) = el.query_selector(".pw-payment-state") {
            p.set_text_content(Some(&words));
        }
        let _ = el.set_attribute("data-state", shown.as_str());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_is_percent_encoded() {
        let url = svg_data_url("<svg a=\"1\"><path d='M0 0'/></svg>#");
        assert!(url.starts_with("data:image/svg+xml;charset=utf-8,%3Csvg a=%221%22%3E"));
        assert!(!url.contains('<') && !url.contains('#') && !url.contains('\''));
    }

    #[test]
    fn countdown_runs_out() {
        let labels = crate::i18n::Lang::En.labels();
        let (s, words) = state(PaymentStatus::Pending, 125_000, 0, labels);
        assert_eq!((s, words), (PaymentStatus::Pending, format!("{} 02:05", labels.expires_in)));
        assert_eq!(state(PaymentStatus::Pending, 1_000, 1_000, labels).0, PaymentStatus::Expired);
        assert_eq!(state(PaymentStatus::Paid, 1_000, 5_000, labels).0, PaymentStatus::Paid);
    }
}
