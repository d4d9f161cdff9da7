//! Payments: the sandbox provider's hosted page (`/pay/ORDER`, where a tester marks the order
//! paid) and the webhook real providers call, verified by an HMAC signature.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use parley_app::server::state::AppState;
use parley_app::server::store::orders;
use parley_widget::protocol::{ApiCode, format_amount};
use serde_json::json;

use crate::api_error::ApiFailure;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/pay/{order_id}", get(page))
        .route("/pay/{order_id}/confirm", post(confirm))
        .route("/api/v1/payments/webhook", post(webhook))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

async fn page(State(state): State<AppState>, Path(order_id): Path<String>) -> Result<Response, ApiFailure> {
    let order = orders::by_id(state.engine.db(), &order_id).await?.ok_or_else(|| ApiFailure::not_found("Order"))?;
    let now = state.engine.now_ms();
    let status = if order.status == "pending" && order.expires_at <= now { "expired" } else { order.status.as_str() };
    let minutes_left = ((order.expires_at - now).max(0) + 59_999) / 60_000;
    let action = match status {
        "pending" => format!(
            "<p>Expires in about {minutes_left} min.</p>\
             <form method=\"post\" action=\"/pay/{id}/confirm\"><button type=\"submit\">Mark as paid (sandbox)</button></form>",
            id = escape(&order.id)
        ),
        "paid" => "<p class=\"ok\">✓ Paid. You can close this page.</p>".to_owned(),
        _ => "<p class=\"bad\">This order has expired. Ask the assistant for a new one.</p>".to_owned(),
    };
    let html = format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>Pay {id} — Parley sandbox</title>
<style>body{{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#111}}
.box{{border:1px solid #ddd;border-radius:12px;padding:1rem 1.2rem}} .note{{background:#fef3c7;padding:.5rem .7rem;border-radius:8px;font-size:.9rem}}
button{{font:inherit;padding:.6rem 1rem;border:0;border-radius:8px;background:#0f766e;color:#fff;cursor:pointer}}
.ok{{color:#047857;font-weight:600}} .bad{{color:#b91c1c}} dt{{color:#666;font-size:.85rem}} dd{{margin:0 0 .5rem}}</style></head>
<body><h1>Payment</h1><p class="note">Sandbox payment provider — no money moves. A real provider would show its own page here.</p>
<div class="box"><dl><dt>Order</dt><dd>{id}</dd><dt>Service</dt><dd>{service} — {category}</dd>
<dt>Amount</dt><dd>{amount}</dd><dt>Method</dt><dd>{method}</dd><dt>Status</dt><dd data-status="{status}">{status}</dd></dl>{action}</div></body></html>"#,
        id = escape(&order.id),
        service = escape(&order.service_type),
        category = escape(&order.category),
        amount = escape(&format_amount(order.amount_minor, &order.currency)),
        method = escape(&order.method),
        status = status,
        action = action,
    );
    Ok(([(header::CACHE_CONTROL, "no-store")], Html(html)).into_response())
}

async fn confirm(State(state): State<AppState>, Path(order_id): Path<String>) -> Result<Response, ApiFailure> {
    orders::by_id(state.engine.db(), &order_id).await?.ok_or_else(|| ApiFailure::not_found("Order"))?;
    // Paid, or already paid/expired: either way the page shows the order as it now is.
    state.engine.order_paid(&order_id).await?;
    Ok(Redirect::to(&format!("/pay/{order_id}")).into_response())
}

async fn webhook(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Result<Response, ApiFailure> {
    let signature = headers.get("x-parley-signature").and_then(|v| v.to_str().ok());
    let event = state.engine.services().payments.verify_webhook(signature, &body).map_err(|e| {
        tracing::warn!(error = %e, "payment webhook refused");
        ApiFailure::new(ApiCode::BadSignature, "The webhook signature is not valid.")
    })?;
    if event.status != "paid" {
        return Ok((StatusCode::OK, axum::Json(json!({"ok": true, "changed": false}))).into_response());
    }
    orders::by_id(state.engine.db(), &event.order_id).await?.ok_or_else(|| ApiFailure::not_found("Order"))?;
    let changed = state.engine.order_paid(&event.order_id).await?;
    Ok((StatusCode::OK, axum::Json(json!({"ok": true, "changed": changed}))).into_response())
}
