//! `generate_payment` (capability `payments`): creates a payment order for the paid assessment and
//! shows its QR code. The amount comes only from the server's price table — an amount the model
//! offers is ignored. The order expires 30 minutes after creation (enforced by the server), the
//! visitor's intent is remembered (INTENT, importance 90), and the same answer never creates two
//! orders for the same thing.

use parley_protocol::{Block, PaymentQr, PaymentStatus, format_amount};
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, async_trait};
use crate::engine::payments::{self, ORDER_TTL_MS};
use crate::store::agents::Domain;
use crate::store::{conversations, memories, orders};

pub struct GeneratePayment;

/// Importance of the remembered intent.
pub const IMPORTANCE: i64 = 90;

fn method_name(method: &str, zh: bool) -> &'static str {
    match (method, zh) {
        ("ALIPAY", true) => "支付宝",
        ("WECHAT", true) => "微信支付",
        (_, true) => "信用卡",
        ("ALIPAY", false) => "Alipay",
        ("WECHAT", false) => "WeChat Pay",
        (_, false) => "card",
    }
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

#[async_trait]
impl Tool for GeneratePayment {
    fn name(&self) -> &'static str {
        "generate_payment"
    }

    fn description(&self) -> &'static str {
        "Create a payment QR code for the paid eligibility assessment once the visitor wants to pay. The price is \
         the one the agent's owner set for the category; do not state or pass your own amount."
    }

    fn capability(&self) -> &'static str {
        "payments"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::write(super::effect::Action::Payment)
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "serviceType": {"type": "string", "enum": ["ASSESSMENT"]},
                "category": super::any_category(),
                "paymentMethod": {"type": "string", "enum": ["ALIPAY", "WECHAT", "CREDIT_CARD"]},
                "amount": {"type": "number", "description": "Ignored: the price is the owner's, set for the category."}
            },
            "required": ["serviceType", "category", "paymentMethod"],
            "additionalProperties": false
        })
    }

    fn for_domain(&self, domain: &Domain) -> Option<Value> {
        // Only what is for sale is offered.
        let sold = Domain {
            services: domain.services.iter().filter(|s| s.price_minor.is_some()).cloned().collect(),
            ..Domain::default()
        };
        let mut schema = self.schema();
        schema["properties"]["category"] = super::category_schema(&sold, false);
        Some(schema)
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let service = args["serviceType"].as_str().unwrap_or("ASSESSMENT");
        let category = args["category"].as_str().unwrap_or_default();
        let method = args["paymentMethod"].as_str().unwrap_or_default();
        // The owner's price for the category, never the model's.
        let (amount_minor, currency) = match ctx.agent.domain.service(category) {
            Some(s) => match s.price_minor {
                Some(price) => (price, s.currency.as_str()),
                None => return Err(ToolError::InvalidArguments(format!("{category} is not for sale"))),
            },
            None => return Err(ToolError::InvalidArguments(format!("no price for category {category}"))),
        };
        let now = ctx.clock.now_ms();
        let payments = &ctx.services.payments;
        let provider = payments
            .provider
            .as_ref()
            .ok_or_else(|| ToolError::Failed("payments are not enabled on this server".into()))?;
        // One order per answer and item: a repeated call returns the first order.
        let key = format!("{}:{service}:{category}:{method}", ctx.message_id);
        let stored =
            orders::by_key(&ctx.db, &key).await.map_err(|e| ToolError::internal("could not read the order", e))?;
        let order = match stored {
            Some(order) => order,
            None => {
                let item = Item { service, category, method, amount_minor, currency };
                new_order(ctx, provider.as_ref(), &item, &key, now).await?
            }
        };
        let qr = payments::qr_svg(&order.pay_url).map_err(|e| ToolError::Failed(e.to_string()))?;
        let price = format_amount(order.amount_minor, &order.currency);
        // In the agent's language, about the service by its owner's name for it.
        let zh = super::super::lang::Lang::of_agent(ctx.agent.language, &ctx.agent.greeting).is_zh();
        let name = ctx.agent.domain.service(category).map_or(category, |s| s.name.as_str());
        let how = method_name(method, zh);
        let intent = if zh {
            format!("用户有意购买{name}（{category}）的资格评估服务（{how}，{price}）")
        } else {
            format!("The visitor wants to buy the {name} ({category}) assessment ({how}, {price})")
        };
        if let Err(e) =
            memories::save(&ctx.db, &ctx.visitor_id, &ctx.agent.id, "INTENT", &intent, Some(category), IMPORTANCE, now)
                .await
        {
            tracing::warn!(error = %e, "could not remember the payment intent");
        }
        let amount_major = order.amount_minor as f64 / 100.0;
        let message = if zh {
            format!("请扫描二维码支付 {price}，完成{name}的资格评估服务")
        } else {
            format!("Scan the QR code to pay {price} for the {name} assessment.")
        };
        Ok(ToolOutput {
            result: json!({
                "success": true,
                "orderId": order.id,
                "amount": amount_major,
                "currency": order.currency,
                "paymentMethod": order.method,
                "qrCodeUrl": order.pay_url,
                "expiresAt": iso(order.expires_at),
                "message": message,
            }),
            blocks: vec![Block::PaymentQr(PaymentQr {
                order_id: order.id.clone(),
                amount_minor: order.amount_minor,
                currency: order.currency.clone(),
                method: order.method.clone(),
                qr_svg: qr,
                pay_url: order.pay_url.clone(),
                expires_at: order.expires_at,
                status: match order.status.as_str() {
                    "paid" => PaymentStatus::Paid,
                    "expired" => PaymentStatus::Expired,
                    _ => PaymentStatus::Pending,
                },
                fallback_text: if zh {
                    format!("请打开 {} 支付 {price}（订单 {}，30 分钟内有效）", order.pay_url, order.id)
                } else {
                    format!("Open {} to pay {price} (order {}, valid for 30 minutes)", order.pay_url, order.id)
                },
            })],
        })
    }
}

/// What is being bought: the service, its category and the payment method, at its price.
#[derive(Clone, Copy)]
struct Item<'a> {
    service: &'a str,
    category: &'a str,
    method: &'a str,
    amount_minor: i64,
    currency: &'a str,
}

/// A new order: the provider's checkout, then the row (once per `key`: a concurrent call
/// gets the order that was stored first).
async fn new_order(
    ctx: &ToolContext,
    provider: &dyn payments::PaymentProvider,
    item: &Item<'_>,
    key: &str,
    now: i64,
) -> Result<orders::Order, ToolError> {
    let Item { service, category, method, amount_minor, currency } = *item;
    let payments = &ctx.services.payments;
    let id = payments::new_order_id();
    let expires_at = now + ORDER_TTL_MS;
    // The facts the assessment is about, as the conversation has them now.
    let facts = match ctx.conversation_id.as_str() {
        "" => None,
        conversation => conversations::assessment_facts(&ctx.db, conversation)
            .await
            .map_err(|e| ToolError::internal("could not read the assessment facts", e))?
            .map(|f| f.to_string()),
    };
    let order_page = payments.links.page_url(&id, expires_at);
    let pay_url = provider
        .checkout(&payments::CheckoutRequest {
            order_id: &id,
            amount_minor,
            currency,
            method,
            description: &format!("{service} {category}"),
            expires_at,
            order_page: &order_page,
        })
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let order = orders::Order {
        id,
        agent_id: ctx.agent.id.clone(),
        conversation_id: ctx.conversation_id.clone(),
        visitor_id: ctx.visitor_id.clone(),
        message_id: ctx.message_id.clone(),
        service_type: service.to_owned(),
        category: category.to_owned(),
        amount_minor,
        currency: currency.to_owned(),
        method: method.to_owned(),
        status: "pending".into(),
        provider: provider.name().to_owned(),
        pay_url,
        created_at: now,
        expires_at,
        paid_at: None,
        facts,
    };
    orders::create_once(&ctx.db, &order, key).await.map_err(|e| ToolError::internal("could not create the order", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::Clock;
    use crate::engine::tools::testing;

    #[tokio::test]
    async fn price_comes_from_the_agents_services_not_the_model() {
        let t = testing::context().await;
        let args = json!({"serviceType": "ASSESSMENT", "category": "IANG", "paymentMethod": "WECHAT", "amount": 1});
        let out = GeneratePayment.execute(&t.ctx, args).await.unwrap();
        let r = &out.result;
        assert_eq!(r["success"], true);
        assert_eq!(r["amount"], 79.0);
        assert_eq!(r["currency"], "CNY");
        assert_eq!(r["paymentMethod"], "WECHAT");
        assert!(r["orderId"].as_str().unwrap().starts_with("ORD_"));
        let url = r["qrCodeUrl"].as_str().unwrap();
        let id = r["orderId"].as_str().unwrap();
        assert!(url.starts_with(&format!("http://parley.test/pay/{id}?exp=")), "a signed link: {url}");
        let (exp, sig) = url.split_once("?exp=").unwrap().1.split_once("&sig=").unwrap();
        assert_eq!(t.ctx.services.payments.links.check(id, Some(exp), Some(sig), t.clock.now_ms()), Ok(()));
        assert!(r["message"].as_str().unwrap().contains("¥79.00"));
        let Block::PaymentQr(b) = &out.blocks[0] else { panic!() };
        assert_eq!((b.amount_minor, b.status), (7900, PaymentStatus::Pending));
        assert_eq!(b.expires_at, t.clock.now_ms() + 30 * 60 * 1000);
        assert!(b.qr_svg.contains("<svg"));
        let order = orders::by_id(&t.ctx.db, &b.order_id).await.unwrap().unwrap();
        assert_eq!((order.amount_minor, order.status.as_str()), (7900, "pending"));
        let intent = memories::of_visitor(&t.ctx.db, &t.ctx.visitor_id).await.unwrap();
        assert_eq!((intent[0].kind.as_str(), intent[0].importance), ("INTENT", 90));
    }

    #[tokio::test]
    async fn the_price_and_currency_are_the_owners_and_only_sold_services_are_offered() {
        let mut t = testing::context().await;
        let mut agent = (*t.ctx.agent).clone();
        agent.domain = crate::store::agents::Domain::parse(&crate::store::agents::DomainText {
            services: "REVIEW | CV review | 45.50 | eur\nCHAT | Free chat".into(),
            ..Default::default()
        })
        .unwrap();
        agent.language = parley_protocol::LanguageSetting::En;
        let schema = GeneratePayment.for_domain(&agent.domain).unwrap();
        assert_eq!(schema["properties"]["category"]["enum"], json!(["REVIEW"]));
        t.ctx.agent = std::sync::Arc::new(agent);
        let args =
            json!({"serviceType": "ASSESSMENT", "category": "REVIEW", "paymentMethod": "CREDIT_CARD", "amount": 1});
        let out = GeneratePayment.execute(&t.ctx, args).await.unwrap();
        assert_eq!((&out.result["amount"], &out.result["currency"]), (&json!(45.5), &json!("EUR")));
        assert_eq!(out.result["message"], "Scan the QR code to pay €45.50 for the CV review assessment.");
        let free = json!({"serviceType": "ASSESSMENT", "category": "CHAT", "paymentMethod": "CREDIT_CARD"});
        assert!(matches!(GeneratePayment.execute(&t.ctx, free).await, Err(ToolError::InvalidArguments(_))));
        let unknown = json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "CREDIT_CARD"});
        assert!(matches!(GeneratePayment.execute(&t.ctx, unknown).await, Err(ToolError::InvalidArguments(_))));
    }

    #[tokio::test]
    async fn the_same_answer_does_not_make_two_orders() {
        let t = testing::context().await;
        let args = json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY"});
        let a = GeneratePayment.execute(&t.ctx, args.clone()).await.unwrap();
        let b = GeneratePayment.execute(&t.ctx, args).await.unwrap();
        assert_eq!(a.result["orderId"], b.result["orderId"]);
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(t.ctx.db.pool()).await.unwrap();
        assert_eq!(n, 1);
    }

    #[tokio::test]
    async fn without_a_provider_no_order_is_made() {
        let mut t = testing::context().await;
        let services = std::sync::Arc::get_mut(&mut t.ctx.services).unwrap();
        services.payments = payments::Payments::off(services.payments.links.clone());
        let args = json!({"serviceType": "ASSESSMENT", "category": "QMAS", "paymentMethod": "ALIPAY"});
        let err = GeneratePayment.execute(&t.ctx, args).await.unwrap_err();
        assert!(err.to_string().contains("not enabled"), "{err}");
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(t.ctx.db.pool()).await.unwrap();
        assert_eq!(n, 0);
    }

    #[tokio::test]
    async fn expiry_is_enforced_by_the_server() {
        let t = testing::context().await;
        let args = json!({"serviceType": "ASSESSMENT", "category": "CIES", "paymentMethod": "CREDIT_CARD"});
        let out = GeneratePayment.execute(&t.ctx, args).await.unwrap();
        let id = out.result["orderId"].as_str().unwrap().to_owned();
        assert_eq!(out.result["amount"], 199.0);
        t.clock.advance_ms(30 * 60 * 1000 - 1);
        assert!(orders::expire_due(&t.ctx.db, t.clock.now_ms()).await.unwrap().is_empty());
        t.clock.advance_ms(1);
        let expired = orders::expire_due(&t.ctx.db, t.clock.now_ms()).await.unwrap();
        assert_eq!(expired.len(), 1);
        // Too late to pay.
        assert!(!orders::mark_paid(&t.ctx.db, &id, t.clock.now_ms()).await.unwrap());
        assert_eq!(orders::by_id(&t.ctx.db, &id).await.unwrap().unwrap().status, "expired");
    }
}
