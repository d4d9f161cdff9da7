//! Payments: the order's pay page (`/pay/ORDER`, opened by its owner's bearer token or by a signed,
//! expiring link; on a sandbox server it has the button that marks the order paid) and the webhook
//! providers call, signed the Standard Webhooks way. The confirm route exists only with the sandbox
//! provider, the webhook route only with a provider and a webhook secret.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use parley_app::server::state::AppState;
use parley_engine::auth::is_cross_site;
use parley_engine::engine::payments::{LinkError, Payments, WebhookError, WebhookFailure};
use parley_engine::store::orders::{self, Order};
use parley_protocol::{ApiCode, format_amount};
use serde_json::json;

use crate::api_error::ApiFailure;
use parley_protocol::html::escape_html;

/// The largest webhook body read.
const MAX_WEBHOOK_BODY: usize = 16 * 1024;

pub fn router(payments: &Payments) -> Router<AppState> {
    let mut router = Router::new().route("/pay/{order_id}", get(page));
    if payments.sandbox {
        router = router.route("/pay/{order_id}/confirm", post(confirm));
    }
    if payments.webhooks {
        router = router.route("/api/v1/payments/webhook", post(webhook).layer(DefaultBodyLimit::max(MAX_WEBHOOK_BODY)));
    }
    router
}

/// The signed part of a pay link.
#[derive(Debug, Default, serde::Deserialize)]
struct Link {
    exp: Option<String>,
    sig: Option<String>,
}

impl Link {
    fn given(&self) -> bool {
        self.exp.is_some() || self.sig.is_some()
    }
}

/// One answer for "no such order" and "not yours", so that a guess learns nothing.
fn no_order() -> ApiFailure {
    ApiFailure::not_found("Order")
}

/// The link must be this server's, for this order, and not expired.
fn check_link(state: &AppState, order_id: &str, link: &Link) -> Result<(), ApiFailure> {
    let now = state.engine.now_ms();
    match state.engine.services().payments.links.check(order_id, link.exp.as_deref(), link.sig.as_deref(), now) {
        Ok(()) => Ok(()),
        Err(LinkError::Forged) => Err(no_order()),
        Err(LinkError::Expired) => Err(ApiFailure::new(
            ApiCode::LinkExpired,
            "This payment link has expired. Ask the assistant for a new one.",
        )),
    }
}

/// The order, if the caller may see it: through a signed link, or as the visitor it was made for.
async fn visible_order(
    state: &AppState,
    order_id: &str,
    link: &Link,
    headers: &HeaderMap,
) -> Result<Order, ApiFailure> {
    if link.given() {
        check_link(state, order_id, link)?;
        return orders::by_id(state.engine.db(), order_id).await?.ok_or_else(no_order);
    }
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(no_order)?;
    let visitor = state.engine.visitor_by_token(token).await?.ok_or_else(no_order)?;
    let order = orders::by_id(state.engine.db(), order_id).await?.ok_or_else(no_order)?;
    if order.visitor_id != visitor.id {
        return Err(no_order());
    }
    Ok(order)
}

/// A state-changing request a browser sent from another site: `Sec-Fetch-Site` other than
/// same-origin (a browser sets it; a page cannot), or, from a client that does not send it, an
/// `Origin` that is neither the `Host` it was sent to nor the public URL (a proxy may rewrite
/// `Host`). The pay page's `no-referrer` policy makes Chromium send `Origin: null` with its own
/// form, so `Sec-Fetch-Site` decides whenever it is there.
fn from_another_site(headers: &HeaderMap, public_url: &str) -> bool {
    match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        Some("same-origin" | "none") => return false,
        Some(_) => return true,
        None => {}
    }
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    if origin.is_some_and(|o| o.eq_ignore_ascii_case(public_url.trim_end_matches('/'))) {
        return false;
    }
    is_cross_site(headers)
}

async fn page(
    State(state): State<AppState>,
    Path(order_id): Path<String>,
    Query(link): Query<Link>,
    headers: HeaderMap,
) -> Result<Response, ApiFailure> {
    let order = visible_order(&state, &order_id, &link, &headers).await?;
    let now = state.engine.now_ms();
    let status = if order.status == "pending" && order.expires_at <= now { "expired" } else { order.status.as_str() };
    let minutes_left = ((order.expires_at - now).max(0) + 59_999) / 60_000;
    let sandbox = state.engine.services().payments.sandbox;
    let action = match status {
        "pending" if sandbox && link.given() => format!(
            "<p>Expires in about {minutes_left} min.</p>\
             <form method=\"post\" action=\"/pay/{id}/confirm?exp={exp}&amp;sig={sig}\"><button type=\"submit\">Mark as paid (sandbox)</button></form>",
            id = escape_html(&order.id),
            exp = escape_html(link.exp.as_deref().unwrap_or_default()),
            sig = escape_html(link.sig.as_deref().unwrap_or_default()),
        ),
        "pending" => format!("<p>Expires in about {minutes_left} min.</p>"),
        "paid" => "<p class=\"ok\">✓ Paid. You can close this page.</p>".to_owned(),
        _ => "<p class=\"bad\">This order has expired. Ask the assistant for a new one.</p>".to_owned(),
    };
    let note = if sandbox {
        "<p class=\"note\">Sandbox payment provider — no money moves. A real provider would show its own page here.</p>"
    } else {
        ""
    };
    let html = format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>Pay {id} — Parley</title>
<style>body{{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#111}}
.box{{border:1px solid #ddd;border-radius:12px;padding:1rem 1.2rem}} .note{{background:#fef3c7;padding:.5rem .7rem;border-radius:8px;font-size:.9rem}}
button{{font:inherit;padding:.6rem 1rem;border:0;border-radius:8px;background:#0f766e;color:#fff;cursor:pointer}}
.ok{{color:#047857;font-weight:600}} .bad{{color:#b91c1c}} dt{{color:#666;font-size:.85rem}} dd{{margin:0 0 .5rem}}</style></head>
<body><h1>Payment</h1>{note}
<div class="box"><dl><dt>Order</dt><dd>{id}</dd><dt>Service</dt><dd>{service} — {category}</dd>
<dt>Amount</dt><dd>{amount}</dd><dt>Method</dt><dd>{method}</dd><dt>Status</dt><dd data-status="{status}">{status}</dd></dl>{action}</div></body></html>"#,
        id = escape_html(&order.id),
        service = escape_html(&order.service_type),
        category = escape_html(&order.category),
        amount = escape_html(&format_amount(order.amount_minor, &order.currency)),
        method = escape_html(&order.method),
        status = status,
        action = action,
        note = note,
    );
    Ok((
        [
            (header::CACHE_CONTROL, "no-store"),
            // The link is a capability: never sent on as a referrer; the page is never framed.
            (header::REFERRER_POLICY, "no-referrer"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'",
            ),
        ],
        Html(html),
    )
        .into_response())
}

/// The sandbox's "Mark as paid": only with the order's signed link, only from this site.
async fn confirm(
    State(state): State<AppState>,
    Path(order_id): Path<String>,
    Query(link): Query<Link>,
    headers: HeaderMap,
) -> Result<Response, ApiFailure> {
    if from_another_site(&headers, &state.http.public_url) {
        return Err(ApiFailure::new(ApiCode::CrossSite, "Cross-site request refused."));
    }
    check_link(&state, &order_id, &link)?;
    orders::by_id(state.engine.db(), &order_id).await?.ok_or_else(no_order)?;
    // Paid, or already paid/expired: either way the page shows the order as it now is.
    state.engine.order_paid(&order_id).await?;
    let back = format!(
        "/pay/{order_id}?exp={}&sig={}",
        link.exp.as_deref().unwrap_or_default(),
        link.sig.as_deref().unwrap_or_default()
    );
    Ok(Redirect::to(&back).into_response())
}

async fn webhook(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Result<Response, ApiFailure> {
    let changed = state.engine.payment_webhook(&headers, &body).await.map_err(|e| {
        if !matches!(e, WebhookFailure::Db(_)) {
            tracing::warn!(error = %e, "payment webhook refused");
        }
        match e {
            WebhookFailure::Off => no_order(),
            WebhookFailure::Invalid(WebhookError::BadBody(_)) => {
                ApiFailure::new(ApiCode::InvalidBody, "The body must be {order_id, status, amount_minor, currency}.")
            }
            WebhookFailure::Invalid(WebhookError::StaleTimestamp) => ApiFailure::new(
                ApiCode::BadSignature,
                "The webhook timestamp is more than 5 minutes from the server's time.",
            ),
            WebhookFailure::Invalid(_) => ApiFailure::new(ApiCode::BadSignature, "The webhook signature is not valid."),
            WebhookFailure::UnknownOrder(_) => no_order(),
            WebhookFailure::Mismatch { .. } => ApiFailure::new(
                ApiCode::OrderMismatch,
                "The webhook's amount or currency is not the order's; nothing was changed.",
            ),
            WebhookFailure::Replayed(_) => ApiFailure::new(
                ApiCode::WebhookReplayed,
                "A webhook with this id was already accepted; nothing was changed.",
            ),
            WebhookFailure::Db(e) => e.into(),
        }
    })?;
    Ok((StatusCode::OK, axum::Json(json!({"ok": true, "changed": changed}))).into_response())
}
