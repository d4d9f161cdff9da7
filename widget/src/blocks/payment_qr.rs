//! `payment_qr`: the order's QR code (an SVG drawn by the server, shown as an image so nothing in
//! it can run), amount, method and a countdown to expiry.

use leptos::prelude::*;

use super::BlockCtx;
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

fn now_ms() -> i64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
    }
}

#[component]
pub fn PaymentQrView(block: PaymentQr, ctx: BlockCtx) -> impl IntoView {
    let now = RwSignal::new(now_ms());
    // The countdown ticks only in the browser.
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(move || now.set(now_ms()), std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    });
    let expires_at = block.expires_at;
    let status = block.status;
    let state = move || match status {
        PaymentStatus::Paid => PaymentStatus::Paid,
        _ if now.get() >= expires_at => PaymentStatus::Expired,
        other => other,
    };
    let countdown = move || {
        let left = ((expires_at - now.get()) / 1000).max(0);
        format!("{} {:02}:{:02}", ctx.labels.expires_in, left / 60, left % 60)
    };
    let amount = ctx.lang.amount(block.amount_minor, &block.currency);
    view! {
        <div class="pw-block pw-payment" data-state=move || state().as_str()>
            <img class="pw-qr" src=svg_data_url(&block.qr_svg) alt=block.fallback_text.clone() width="180" height="180" />
            <div class="pw-payment-info">
                <p class="pw-amount">{amount}</p>
                <p class="pw-method">{ctx.labels.payment_method(&block.method)}</p>
                <p class="pw-payment-state">
                    {move || match state() {
                        PaymentStatus::Paid => format!("✓ {}", ctx.labels.paid),
                        PaymentStatus::Expired => ctx.labels.expired.to_owned(),
                        PaymentStatus::Pending => countdown(),
                    }}
                </p>
                <a class="pw-pay-link" href=block.pay_url.clone() target="_blank" rel="noopener noreferrer">
                    {block.order_id.clone()}
                </a>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::svg_data_url;

    #[test]
    fn svg_is_percent_encoded() {
        let url = svg_data_url("<svg a=\"1\"><path d='M0 0'/></svg>#");
        assert!(url.starts_with("data:image/svg+xml;charset=utf-8,%3Csvg a=%221%22%3E"));
        assert!(!url.contains('<') && !url.contains('#') && !url.contains('\''));
    }
}
