//! `get_exchange_rate` (capability `exchange_rates`): a live currency rate from ExchangeRate-API
//! (v6 with `EXCHANGE_RATE_API_KEY`, the free v4 endpoint without), cached per base currency for
//! ten minutes. When the service fails, a small built-in table of reference rates answers instead,
//! marked `isEstimate: true`; a pair nobody knows is an error, never an invented rate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::super::fetch::FetchError;
use super::{Tool, ToolContext, ToolError, ToolOutput};
use crate::secret::ApiKey;

pub const DEFAULT_V6_BASE: &str = "https://v6.exchangerate-api.com/v6";
pub const DEFAULT_V4_BASE: &str = "https://api.exchangerate-api.com/v4";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3);
const DEFAULT_TTL: Duration = Duration::from_secs(10 * 60);

/// Reference rates used when the live service cannot answer.
const REFERENCE_RATES: &[(&str, &str, f64)] = &[
    ("CNY", "HKD", 1.08),
    ("CNY", "USD", 0.14),
    ("USD", "HKD", 7.78),
    ("USD", "CNY", 7.24),
    ("HKD", "CNY", 0.93),
    ("HKD", "USD", 0.13),
];

fn reference_rate(from: &str, to: &str) -> Option<f64> {
    if from == to {
        return Some(1.0);
    }
    REFERENCE_RATES.iter().find(|(f, t, _)| *f == from && *t == to).map(|(_, _, r)| *r)
}

/// Rates against one base currency, as the live service gave them.
#[derive(Clone, Debug)]
struct Rates {
    rates: Arc<HashMap<String, f64>>,
    last_update: Option<String>,
}

pub struct GetExchangeRate {
    http: reqwest::Client,
    v6_base: String,
    v4_base: String,
    api_key: Option<ApiKey>,
    timeout: Duration,
    ttl: Duration,
    /// Base currency → when fetched, and what.
    cache: Mutex<HashMap<String, (Instant, Rates)>>,
}

impl GetExchangeRate {
    /// Uses the v6 API when `api_key` is given, the free v4 API otherwise.
    pub fn new(http: reqwest::Client, api_key: Option<String>) -> Self {
        GetExchangeRate {
            http,
            v6_base: DEFAULT_V6_BASE.to_owned(),
            v4_base: DEFAULT_V4_BASE.to_owned(),
            api_key: api_key.and_then(ApiKey::new),
            timeout: DEFAULT_TIMEOUT,
            ttl: DEFAULT_TTL,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Reads the key from `EXCHANGE_RATE_API_KEY` (unset or empty: the keyless v4 API).
    pub fn from_env(http: reqwest::Client) -> Self {
        let tool = Self::new(http, std::env::var("EXCHANGE_RATE_API_KEY").ok().filter(|k| !k.is_empty()));
        // Other servers for the rate API (a proxy; tests keep requests on this machine).
        match std::env::var("PARLEY_EXCHANGE_RATE_BASE_URL") {
            Ok(base) if !base.is_empty() => {
                let base = base.trim_end_matches('/').to_owned();
                tool.with_bases(format!("{base}/v6"), format!("{base}/v4"))
            }
            _ => tool,
        }
    }

    /// Points the tool at other servers (tests, proxies).
    pub fn with_bases(mut self, v6_base: impl Into<String>, v4_base: impl Into<String>) -> Self {
        self.v6_base = v6_base.into();
        self.v4_base = v4_base.into();
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The tool's answer for converting `amount` (or just quoting the rate) from `from` to `to`.
    pub async fn convert(&self, from: &str, to: &str, amount: Option<f64>) -> Result<Value, ToolError> {
        if from == to {
            return answer(from, to, 1.0, amount, Source::Live(None));
        }
        let live = match self.live_rates(from).await {
            Ok(r) => match r.rates.get(to) {
                Some(&rate) => return answer(from, to, rate, amount, Source::Live(r.last_update)),
                None => FetchError::Answer(format!("the live rates for {from} do not include {to}")),
            },
            Err(e) => e,
        };
        tracing::warn!(from, to, reason = %live, "live exchange rate unavailable; using the reference table");
        match reference_rate(from, to) {
            Some(rate) => answer(from, to, rate, amount, Source::Estimate),
            None => Err(ToolError::Failed(format!(
                "no exchange rate is available for {from} to {to}: the live rate service failed ({live}) and there \
                 is no reference rate for this pair. Do not guess a rate; tell the visitor it cannot be looked up now."
            ))),
        }
    }

    /// Rates for `base`, from the cache while fresh, else from the live service.
    async fn live_rates(&self, base: &str) -> Result<Rates, FetchError> {
        if let Some((at, rates)) = self.cache.lock().ok().and_then(|c| c.get(base).cloned())
            && at.elapsed() < self.ttl
        {
            return Ok(rates);
        }
        let rates = match tokio::time::timeout(self.timeout, self.fetch(base)).await {
            Ok(result) => result?,
            Err(_) => return Err(FetchError::Timeout(self.timeout.as_millis())),
        };
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(base.to_owned(), (Instant::now(), rates.clone()));
        }
        Ok(rates)
    }

    async fn fetch(&self, base: &str) -> Result<Rates, FetchError> {
        let url = match &self.api_key {
            Some(key) => format!("{}/{}/latest/{base}", self.v6_base.trim_end_matches('/'), key.expose()),
            None => format!("{}/latest/{base}", self.v4_base.trim_end_matches('/')),
        };
        // `without_url`: the v6 URL carries the API key.
        let response = self.http.get(url).timeout(self.timeout).send().await.map_err(FetchError::connect)?;
        let status = response.status();
        if !status.is_success() {
            return Err(FetchError::Status(status.as_u16()));
        }
        let body: Value = response.json().await.map_err(FetchError::unreadable)?;
        parse_rates(&body)
    }
}

/// Reads a v6 (`conversion_rates`, `time_last_update_utc`) or v4 (`rates`, `time_last_update_unix`
/// / `time_last_updated` / `date`) answer.
fn parse_rates(body: &Value) -> Result<Rates, FetchError> {
    if body.get("result").and_then(Value::as_str) == Some("error") {
        let kind = body.get("error-type").and_then(Value::as_str).unwrap_or("unknown");
        return Err(FetchError::Answer(format!("the service reported an error ({kind})")));
    }
    let table = body
        .get("conversion_rates")
        .or_else(|| body.get("rates"))
        .and_then(Value::as_object)
        .ok_or_else(|| FetchError::Answer("the answer has no rates".into()))?;
    let rates: HashMap<String, f64> = table
        .iter()
        .filter_map(|(code, rate)| Some((code.clone(), rate.as_f64().filter(|r| r.is_finite() && *r > 0.0)?)))
        .collect();
    let utc = |t: DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
    let last_update = body
        .get("time_last_update_utc")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc2822(s).ok())
        .map(|t| utc(t.with_timezone(&Utc)))
        .or_else(|| {
            ["time_last_update_unix", "time_last_updated"]
                .iter()
                .find_map(|k| body.get(*k).and_then(Value::as_i64))
                .and_then(|secs| DateTime::from_timestamp(secs, 0))
                .map(utc)
        })
        .or_else(|| {
            let date = body.get("date").and_then(Value::as_str)?;
            NaiveDate::parse_from_str(date, "%Y-%m-%d").ok().map(|d| format!("{d}T00:00:00Z"))
        });
    Ok(Rates { rates: Arc::new(rates), last_update })
}

enum Source {
    /// A live (or exact) rate, with the service's update time when known.
    Live(Option<String>),
    /// From the reference table.
    Estimate,
}

fn answer(from: &str, to: &str, rate: f64, amount: Option<f64>, source: Source) -> Result<Value, ToolError> {
    let mut out = json!({"success": true, "from": from, "to": to, "rate": rate});
    let converted = amount.map(|a| (a, (a * rate * 100.0).round() / 100.0));
    if let Some((a, c)) = converted {
        if !c.is_finite() {
            return Err(ToolError::InvalidArguments(format!("the amount {a} is too large to convert")));
        }
        out["amount"] = json!(a);
        out["convertedAmount"] = json!(c);
    }
    let message = match source {
        Source::Live(last_update) => {
            if let Some(t) = last_update {
                out["lastUpdate"] = json!(t);
            }
            match converted {
                Some((a, c)) => format!("{a} {from} = {c:.2} {to} (汇率: {rate})"),
                None => format!("1 {from} = {rate} {to}"),
            }
        }
        Source::Estimate => {
            out["isEstimate"] = json!(true);
            let head = format!("参考汇率 (实时汇率暂时无法获取，可能有偏差): 1 {from} ≈ {rate} {to}");
            match converted {
                Some((a, c)) => format!("{head}，{a} {from} ≈ {c:.2} {to}"),
                None => head,
            }
        }
    };
    out["message"] = json!(message);
    Ok(out)
}

fn currency(args: &Value, key: &str) -> Result<String, ToolError> {
    let code = args.get(key).and_then(Value::as_str).map(str::trim).unwrap_or_default();
    if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(code.to_owned())
    } else {
        Err(ToolError::InvalidArguments(format!("`{key}` must be a 3-letter uppercase ISO 4217 code such as CNY")))
    }
}

fn parse_args(args: &Value) -> Result<(String, String, Option<f64>), ToolError> {
    let amount = match args.get("amount") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_f64() {
            Some(a) if a.is_finite() && a >= 0.0 => Some(a),
            _ => return Err(ToolError::InvalidArguments("`amount` must be a number of at least 0".into())),
        },
    };
    Ok((currency(args, "from")?, currency(args, "to")?, amount))
}

#[async_trait::async_trait]
impl Tool for GetExchangeRate {
    fn name(&self) -> &'static str {
        "get_exchange_rate"
    }

    fn description(&self) -> &'static str {
        "Look up the current exchange rate between two currencies and optionally convert an amount. \
         Use it whenever the visitor needs a sum in another currency (e.g. an investment threshold in \
         HKD expressed in CNY or USD); if the answer has isEstimate=true, say the rate is approximate."
    }

    fn capability(&self) -> &'static str {
        "exchange_rates"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::OUTSIDE
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "from": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "Currency to convert from, ISO 4217 code such as CNY, HKD or USD."},
                "to": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "Currency to convert to, ISO 4217 code such as HKD."},
                "amount": {"type": "number", "minimum": 0, "description": "Amount in the `from` currency to convert. Omit to get only the rate."}
            },
            "required": ["from", "to"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, _ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let (from, to, amount) = parse_args(&args)?;
        self.convert(&from, &to, amount).await.map(ToolOutput::result)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::Router;
    use axum::extract::Path;
    use axum::http::StatusCode;
    use axum::routing::get;

    use super::*;

    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}")
    }

    /// A tool pointed at `base` (its `/v6` and `/v4` paths) with a 200 ms timeout.
    fn tool(base: &str, key: Option<&str>) -> GetExchangeRate {
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        GetExchangeRate::new(http, key.map(str::to_owned))
            .with_bases(format!("{base}/v6"), format!("{base}/v4"))
            .with_timeout(Duration::from_millis(200))
    }

    fn v4_body() -> Value {
        json!({"base": "CNY", "date": "2024-01-23", "time_last_updated": 1_705_968_000,
               "rates": {"CNY": 1, "HKD": 1.0823, "USD": 0.1389}})
    }

    /// A server whose every route answers `status` with `body`, counting hits.
    async fn fixed(status: StatusCode, body: &'static str) -> (String, Arc<AtomicUsize>) {
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let app = Router::new().fallback(move || {
            h.fetch_add(1, Ordering::SeqCst);
            async move { (status, body) }
        });
        (serve(app).await, hits)
    }

    #[tokio::test]
    async fn get_exchange_rate_live_v4_without_key() {
        let app = Router::new().route(
            "/v4/latest/{base}",
            get(|Path(base): Path<String>| async move {
                assert_eq!(base, "CNY");
                axum::Json(v4_body())
            }),
        );
        let out = tool(&serve(app).await, None).convert("CNY", "HKD", Some(3_000_000.0)).await.unwrap();
        assert_eq!(out["rate"], 1.0823);
        assert_eq!(out["convertedAmount"].as_f64(), Some(3_246_900.0));
        assert_eq!(out["lastUpdate"], "2024-01-23T00:00:00Z");
        assert_eq!(out["message"], "3000000 CNY = 3246900.00 HKD (汇率: 1.0823)");
        assert!(out.get("isEstimate").is_none());
        let mut keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["amount", "convertedAmount", "from", "lastUpdate", "message", "rate", "success", "to"]);
        assert_eq!((&out["success"], &out["from"], &out["to"]), (&json!(true), &json!("CNY"), &json!("HKD")));
    }

    #[tokio::test]
    async fn get_exchange_rate_live_v6_with_key_is_cached_within_ttl() {
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let app = Router::new().route(
            "/v6/{key}/latest/{base}",
            get(move |Path((key, base)): Path<(String, String)>| {
                h.fetch_add(1, Ordering::SeqCst);
                async move {
                    if key != "secret-key" {
                        return (StatusCode::FORBIDDEN, axum::Json(json!({"result": "error"})));
                    }
                    assert_eq!(base, "USD");
                    let rates = json!({"USD": 1, "HKD": 7.8123, "CNY": 7.1987});
                    let time = "Tue, 23 Jan 2024 00:00:01 +0000";
                    let body = json!({"result": "success", "time_last_update_utc": time, "conversion_rates": rates});
                    (StatusCode::OK, axum::Json(body))
                }
            }),
        );
        let t = tool(&serve(app).await, Some("secret-key"));
        let first = t.convert("USD", "HKD", Some(100.0)).await.unwrap();
        assert_eq!(first["rate"], 7.8123);
        assert_eq!(first["convertedAmount"].as_f64(), Some(781.23));
        assert_eq!(first["lastUpdate"], "2024-01-23T00:00:01Z");
        let second = t.convert("USD", "CNY", None).await.unwrap();
        assert_eq!(second["rate"], 7.1987);
        assert_eq!(second["message"], "1 USD = 7.1987 CNY");
        assert_eq!(hits.load(Ordering::SeqCst), 1, "the second call must come from the cache");
        // Once the entry is stale, the service is asked again.
        let t = t.with_ttl(Duration::ZERO);
        t.convert("USD", "HKD", None).await.unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 2);
    }

    fn assert_estimate(out: &Value, rate: f64) {
        assert_eq!(out["isEstimate"], true);
        assert_eq!(out["success"], true);
        assert_eq!(out["rate"], rate);
        assert!(out.get("lastUpdate").is_none());
    }

    #[tokio::test]
    async fn get_exchange_rate_server_error_falls_back_to_reference_table() {
        let (base, hits) = fixed(StatusCode::INTERNAL_SERVER_ERROR, "boom").await;
        let t = tool(&base, None);
        let out = t.convert("CNY", "HKD", Some(3_000_000.0)).await.unwrap();
        assert_estimate(&out, 1.08);
        assert_eq!(out["convertedAmount"].as_f64(), Some(3_240_000.0));
        assert_eq!(
            out["message"],
            "参考汇率 (实时汇率暂时无法获取，可能有偏差): 1 CNY ≈ 1.08 HKD，3000000 CNY ≈ 3240000.00 HKD"
        );
        // Failures are not cached.
        t.convert("CNY", "HKD", None).await.unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn get_exchange_rate_garbage_falls_back() {
        let (base, _) = fixed(StatusCode::OK, "<html>not json</html>").await;
        let out = tool(&base, None).convert("HKD", "USD", Some(10.0)).await.unwrap();
        assert_estimate(&out, 0.13);
        assert_eq!(out["convertedAmount"].as_f64(), Some(1.3));
        let (base, _) = fixed(StatusCode::OK, r#"{"result":"error","error-type":"invalid-key"}"#).await;
        let out = tool(&base, Some("bad")).convert("USD", "CNY", None).await.unwrap();
        assert_estimate(&out, 7.24);
    }

    #[tokio::test]
    async fn get_exchange_rate_slow_server_times_out_and_falls_back() {
        let app = Router::new().fallback(|| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            axum::Json(v4_body())
        });
        let started = Instant::now();
        let out = tool(&serve(app).await, None).convert("USD", "HKD", Some(1.0)).await.unwrap();
        assert!(started.elapsed() < Duration::from_millis(1500), "took {:?}", started.elapsed());
        assert_estimate(&out, 7.78);
    }

    #[tokio::test]
    async fn get_exchange_rate_live_without_the_pair_uses_the_table() {
        let app = Router::new().fallback(|| async {
            axum::Json(json!({"base": "CNY", "date": "2024-01-23", "rates": {"CNY": 1, "HKD": 1.0823}}))
        });
        let out = tool(&serve(app).await, None).convert("CNY", "USD", None).await.unwrap();
        assert_estimate(&out, 0.14);
        assert_eq!(out["message"], "参考汇率 (实时汇率暂时无法获取，可能有偏差): 1 CNY ≈ 0.14 USD");
    }

    #[tokio::test]
    async fn get_exchange_rate_unknown_pair_without_live_rate_is_an_error() {
        let (base, _) = fixed(StatusCode::INTERNAL_SERVER_ERROR, "down").await;
        match tool(&base, None).convert("EUR", "JPY", Some(5.0)).await {
            Err(ToolError::Failed(msg)) => assert!(msg.contains("EUR") && msg.contains("JPY"), "{msg}"),
            other => panic!("expected Failed, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn get_exchange_rate_without_amount_or_same_currency() {
        let (base, hits) = fixed(StatusCode::OK, r#"{"rates":{"HKD":1.0823},"date":"2024-01-23"}"#).await;
        let t = tool(&base, None);
        let out = t.convert("CNY", "HKD", None).await.unwrap();
        assert!(out.get("convertedAmount").is_none() && out.get("amount").is_none());
        assert_eq!(out["message"], "1 CNY = 1.0823 HKD");
        let same = t.convert("EUR", "EUR", Some(2.5)).await.unwrap();
        assert_eq!((same["rate"].as_f64(), same["convertedAmount"].as_f64()), (Some(1.0), Some(2.5)));
        assert_eq!(hits.load(Ordering::SeqCst), 1, "same currency needs no request");
    }

    #[test]
    fn get_exchange_rate_arguments_and_schema() {
        let t = GetExchangeRate::new(reqwest::Client::new(), None);
        assert_eq!((t.name(), t.capability()), ("get_exchange_rate", "exchange_rates"));
        assert_eq!(t.api_key, None);
        assert_eq!(GetExchangeRate::new(reqwest::Client::new(), Some(" ".into())).api_key, None);
        let v = jsonschema::validator_for(&t.schema()).unwrap();
        assert!(v.is_valid(&json!({"from": "CNY", "to": "HKD", "amount": 3000000})));
        assert!(v.is_valid(&json!({"from": "CNY", "to": "HKD"})));
        assert!(!v.is_valid(&json!({"from": "cny", "to": "HKD"})));
        assert!(!v.is_valid(&json!({"from": "CNY"})));
        assert!(!v.is_valid(&json!({"from": "CNY", "to": "HKD", "amount": -1})));
        assert!(!v.is_valid(&json!({"from": "CNY", "to": "HKD", "x": 1})));
        assert_eq!(parse_args(&json!({"from": "CNY", "to": "HKD"})).unwrap(), ("CNY".into(), "HKD".into(), None));
        assert!(matches!(parse_args(&json!({"from": "CN", "to": "HKD"})), Err(ToolError::InvalidArguments(_))));
        assert!(matches!(
            parse_args(&json!({"from": "CNY", "to": "HKD", "amount": -2})),
            Err(ToolError::InvalidArguments(_))
        ));
    }
}
