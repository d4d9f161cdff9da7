//! Owner-defined tools (seed 002's "lookup_product, order_status, book_demo"): an administrator
//! describes a tool in the console — name, description, JSON schema of its arguments, capability,
//! and the HTTPS endpoint that answers it — and the model calls it like a built-in tool.
//!
//! A call, once its arguments passed the schema (the registry checks them): `{argument}` in the
//! URL is replaced by that argument (percent-encoded); the other arguments go in the query string
//! (GET, DELETE) or as a JSON body (POST, PUT, PATCH), with the owner's headers and
//! `X-Parley-Agent` / `X-Parley-Conversation`. Private and loopback addresses are refused (see
//! [`crate::engine::outbound`]), redirects are not followed, the answer must come within
//! the tool's timeout (and the turn's tool timeout) and be at most [`MAX_RESPONSE_BYTES`]. A JSON
//! answer is the result as it is; any other answer is given as `{"text": …}`; a status outside
//! 2xx is the tool's failure, with the status and the start of the body.

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, names};
use crate::engine::outbound::{self, OutboundError, OutboundSettings};
use crate::store::agents::FieldError;
use crate::store::http_tools::{HttpToolFields, HttpToolRow};

/// The largest answer read from an endpoint.
pub const MAX_RESPONSE_BYTES: usize = 256 * 1024;
/// Timeouts an owner may choose, in milliseconds.
pub const TIMEOUTS_MS: std::ops::RangeInclusive<u32> = 500..=30_000;
/// The timeout of a tool whose form leaves it empty.
pub const DEFAULT_TIMEOUT_MS: u32 = 10_000;
/// The methods an endpoint may be called with.
pub const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];
/// Headers an owner may not set: Parley sets them, or they would change how the request travels.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "x-parley-agent",
    "x-parley-conversation",
];
const MAX_HEADERS: usize = 20;

/// Characters kept as they are when an argument is placed in a URL (RFC 3986's unreserved ones,
/// except `.`, so that no argument can become a `..` path segment).
const IN_URL: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'~');

/// A tool as typed in the console or on the command line; nothing checked yet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HttpToolInput {
    pub name: String,
    pub description: String,
    pub capability: String,
    /// JSON Schema of the arguments, as text.
    pub parameters: String,
    pub method: String,
    pub url: String,
    /// `Name: value` lines; empty keeps the stored headers (on an edit), `-` removes them all.
    pub headers: String,
    /// Milliseconds, as typed; empty: [`DEFAULT_TIMEOUT_MS`].
    pub timeout_ms: String,
}

/// The tool the input describes, or what is wrong with each field, in the order of the form.
/// `taken` are the names of the built-in tools and experts (an owner's tool cannot shadow one).
pub fn parse(
    input: &HttpToolInput,
    taken: &[String],
    settings: OutboundSettings,
) -> Result<HttpToolFields, Vec<FieldError>> {
    let mut errors = Vec::new();
    let name = input.name.trim();
    if let Err(e) = names::check(name) {
        errors.push(FieldError::new("name", format!("{e}.")));
    } else if name.contains('.') {
        // Model APIs refuse dots in function names, although MCP allows them.
        errors.push(FieldError::new("name", "Use letters, digits, `_` and `-` only."));
    } else if taken.iter().any(|t| t == name) {
        errors.push(FieldError::new("name", format!("`{name}` is a built-in tool or an expert; choose another name.")));
    }
    let description = input.description.trim();
    if description.is_empty() || description.chars().count() > 2000 {
        errors.push(FieldError::new(
            "description",
            "A description of 1 to 2,000 characters: what the tool does and when to use it.",
        ));
    }
    let capability = input.capability.trim();
    let capability_ok = (1..=40).contains(&capability.len())
        && capability.starts_with(|c: char| c.is_ascii_lowercase())
        && capability.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !capability_ok {
        errors.push(FieldError::new(
            "capability",
            "A capability of 1 to 40 lower-case letters, digits and `_`, starting with a letter (e.g. `orders`); agents with it get the tool.",
        ));
    }
    let parameters = match parse_schema(&input.parameters) {
        Ok(schema) => Some(schema),
        Err(message) => {
            errors.push(FieldError::new("parameters", message));
            None
        }
    };
    let method = input.method.trim().to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        errors.push(FieldError::new("method", format!("One of {}.", METHODS.join(", "))));
    }
    let url = input.url.trim();
    match outbound::check_url(url, settings) {
        Err(e) => errors.push(FieldError::new("url", e.for_field(settings))),
        Ok(_) => {
            if let Err(message) = check_placeholders(url, parameters.as_ref()) {
                errors.push(FieldError::new("url", message));
            }
        }
    }
    let headers = match parse_headers(&input.headers) {
        Ok(h) => h,
        Err(message) => {
            errors.push(FieldError::new("headers", message));
            None
        }
    };
    let timeout_ms = match input.timeout_ms.trim() {
        "" => Some(DEFAULT_TIMEOUT_MS),
        text => text.parse::<u32>().ok().filter(|t| TIMEOUTS_MS.contains(t)),
    };
    if timeout_ms.is_none() {
        errors.push(FieldError::new(
            "timeout_ms",
            format!("A timeout of {} to {} milliseconds.", TIMEOUTS_MS.start(), TIMEOUTS_MS.end()),
        ));
    }
    match (errors.is_empty(), parameters, timeout_ms) {
        (true, Some(parameters), Some(timeout_ms)) => Ok(HttpToolFields {
            name: name.to_owned(),
            description: description.to_owned(),
            capability: capability.to_owned(),
            parameters,
            method,
            url: url.to_owned(),
            headers,
            timeout_ms,
        }),
        _ => Err(errors),
    }
}

/// An object schema that compiles, at most 20,000 characters.
fn parse_schema(text: &str) -> Result<Value, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(json!({"type": "object", "properties": {}, "additionalProperties": false}));
    }
    if text.len() > 20_000 {
        return Err("A schema of at most 20,000 characters.".into());
    }
    let schema: Value = serde_json::from_str(text).map_err(|e| format!("Not valid JSON: {e}."))?;
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("The schema must describe an object (`\"type\": \"object\"`).".into());
    }
    jsonschema::validator_for(&schema).map_err(|e| format!("The schema does not compile: {e}."))?;
    Ok(schema)
}

/// The `{name}` placeholders of a URL template, in order.
pub fn placeholders(url: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = url;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        out.push(&after[..close]);
        rest = &after[close + 1..];
    }
    out
}

/// Placeholders stand for required arguments of the schema, after the host.
fn check_placeholders(url: &str, schema: Option<&Value>) -> Result<(), String> {
    let names = placeholders(url);
    if names.is_empty() {
        return Ok(());
    }
    let authority_end = url.find("://").map(|i| i + 3).and_then(|start| url[start..].find('/').map(|p| start + p));
    if authority_end.is_none_or(|end| url.find('{').is_some_and(|first| first < end)) {
        return Err("`{argument}` placeholders may only stand in the path or the query, not in the host.".into());
    }
    let Some(schema) = schema else { return Ok(()) };
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    for name in names {
        if !required.contains(&name) {
            return Err(format!("`{{{name}}}` must be a required argument of the schema."));
        }
    }
    Ok(())
}

/// `Name: value` lines. `Ok(None)`: keep the stored headers (empty text); `-`: none.
fn parse_headers(text: &str) -> Result<Option<Vec<(String, String)>>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if text == "-" {
        return Ok(Some(Vec::new()));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("Write each header as `Name: value` (line `{}`).", clip(line)));
        };
        let (name, value) = (name.trim(), value.trim());
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() || name.is_empty() {
            return Err(format!("`{}` is not a header name.", clip(name)));
        }
        if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(format!("Parley sets `{name}` itself."));
        }
        if value.is_empty() || http::HeaderValue::from_str(value).is_err() {
            return Err(format!("The value of `{name}` is empty or has characters a header cannot carry."));
        }
        if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Err(format!("`{name}` is given twice."));
        }
        out.push((name.to_owned(), value.to_owned()));
    }
    if out.len() > MAX_HEADERS {
        return Err(format!("At most {MAX_HEADERS} headers."));
    }
    Ok(Some(out))
}

fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

/// One owner-defined tool, ready to call.
pub struct HttpTool {
    def: HttpToolRow,
    client: reqwest::Client,
    settings: OutboundSettings,
}

impl HttpTool {
    pub fn new(def: HttpToolRow, client: reqwest::Client, settings: OutboundSettings) -> Self {
        HttpTool { def, client, settings }
    }
}

/// The request a call makes: the URL with its placeholders filled, and the remaining arguments.
fn fill(template: &str, args: &Value) -> Result<(String, Map<String, Value>), ToolError> {
    let mut rest = args.as_object().cloned().unwrap_or_default();
    let mut url = template.to_owned();
    for name in placeholders(template) {
        let value = rest.remove(name).unwrap_or(Value::Null);
        let text = match &value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err(ToolError::InvalidArguments(format!("`{name}` must be a string or a number"))),
        };
        if text.is_empty() || text == "." || text == ".." {
            return Err(ToolError::InvalidArguments(format!("`{name}` must not be empty, `.` or `..`")));
        }
        url = url.replace(&format!("{{{name}}}"), &utf8_percent_encode(&text, IN_URL).to_string());
    }
    Ok((url, rest))
}

/// A query-string value: strings as they are, anything else as JSON.
fn query_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[async_trait::async_trait]
impl Tool for HttpTool {
    fn name(&self) -> &str {
        &self.def.name
    }

    fn description(&self) -> &str {
        &self.def.description
    }

    fn capability(&self) -> &str {
        &self.def.capability
    }

    /// The owner's service answers from outside; any method but GET changes something there.
    fn effect(&self) -> super::effect::Effect {
        use super::effect::{Action, Effect, name_words};
        let method = self.def.method.to_ascii_uppercase();
        let write =
            (method != "GET").then(|| Action::Owner { method, verb: name_words(&self.def.name).into_iter().next() });
        Effect { outside: true, write }
    }

    fn schema(&self) -> Value {
        self.def.parameters.clone()
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let (url, rest) = fill(&self.def.url, &args)?;
        let refused = |e: OutboundError| ToolError::withheld(REFUSED, format!("refused: {e}"));
        let url = outbound::check_url(&url, self.settings).map_err(refused)?;
        outbound::check_host(&url, self.settings).await.map_err(refused)?;
        let method = reqwest::Method::from_bytes(self.def.method.as_bytes())
            .map_err(|_| ToolError::Failed(format!("unknown method {}", self.def.method)))?;
        let mut request = self
            .client
            .request(method.clone(), url)
            .timeout(Duration::from_millis(u64::from(self.def.timeout_ms)))
            .header("x-parley-agent", &ctx.agent.public_key)
            .header("x-parley-conversation", &ctx.conversation_id)
            .header(reqwest::header::ACCEPT, "application/json, text/plain;q=0.9, */*;q=0.5");
        for (name, value) in &self.def.headers {
            request = request.header(name.as_str(), value.expose());
        }
        request = if matches!(method, reqwest::Method::GET | reqwest::Method::DELETE) {
            let pairs: Vec<(String, String)> = rest.iter().map(|(k, v)| (k.clone(), query_value(v))).collect();
            request.query(&pairs)
        } else {
            request.json(&Value::Object(rest))
        };
        let response = request.send().await.map_err(|e| failure(&e))?;
        let status = response.status();
        let body = read_capped(response).await?;
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            // The body may name the owner's internals: the console reads its start, nobody else.
            let start: String = text.chars().take(300).collect();
            return Err(ToolError::withheld(
                format!("the service answered with an error (HTTP {})", status.as_u16()),
                format!("HTTP {}: {}", status.as_u16(), start.trim()),
            ));
        }
        let mut result = match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(map)) => Value::Object(map),
            Ok(other) => json!({ "result": other }),
            Err(_) => json!({ "text": text }),
        };
        // Blocks the owner's service asks to show (`parley_blocks`), checked.
        let blocks = super::owner_blocks::take(&mut result, &ctx.agent.capabilities);
        Ok(ToolOutput { result, blocks })
    }
}

/// What the model and the visitor read when the address was refused (the console reads which).
const REFUSED: &str = "the service's address is not allowed";

/// A failed request as the model reads it (no address or header of the owner in it).
fn failure(e: &reqwest::Error) -> ToolError {
    if let Some(refused) = outbound::refusal(e) {
        return ToolError::withheld(REFUSED, format!("refused: {refused}"));
    }
    if e.is_timeout() {
        return ToolError::Timeout;
    }
    tracing::warn!(error = %e, "owner tool: request failed");
    if e.is_connect() {
        ToolError::Failed("could not reach the service".into())
    } else {
        ToolError::Failed("the request to the service failed".into())
    }
}

/// The body, refused when longer than [`MAX_RESPONSE_BYTES`] (checked as it arrives, so a huge
/// or endless answer is not kept).
async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, ToolError> {
    let too_big =
        || ToolError::Failed(format!("the service's answer is larger than {} KiB", MAX_RESPONSE_BYTES / 1024));
    if response.content_length().is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
        return Err(too_big());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failure(&e))? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(too_big());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> HttpToolInput {
        HttpToolInput {
            name: "order_status".into(),
            description: "Looks up an order by its number.".into(),
            capability: "orders".into(),
            parameters: r#"{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}"#
                .into(),
            method: "get".into(),
            url: "https://shop.example.com/api/orders/{order_id}".into(),
            headers: "Authorization: Bearer s3cret\nX-Shop: acme".into(),
            timeout_ms: String::new(),
        }
    }

    fn fields(errors: &[FieldError]) -> Vec<&str> {
        errors.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn a_good_tool_parses() {
        let t = parse(&input(), &[], OutboundSettings::default()).unwrap();
        assert_eq!((t.name.as_str(), t.method.as_str(), t.timeout_ms), ("order_status", "GET", DEFAULT_TIMEOUT_MS));
        assert_eq!(
            t.headers,
            Some(vec![("Authorization".into(), "Bearer s3cret".into()), ("X-Shop".into(), "acme".into())])
        );
        let keep = HttpToolInput { headers: " ".into(), ..input() };
        assert_eq!(parse(&keep, &[], OutboundSettings::default()).unwrap().headers, None);
        let none = HttpToolInput { headers: "-".into(), ..input() };
        assert_eq!(parse(&none, &[], OutboundSettings::default()).unwrap().headers, Some(vec![]));
    }

    #[test]
    fn every_wrong_field_is_named() {
        let strict = OutboundSettings::default();
        let cases: Vec<(HttpToolInput, &str)> = vec![
            (HttpToolInput { name: "order status".into(), ..input() }, "name"),
            (HttpToolInput { name: "a.b".into(), ..input() }, "name"),
            (HttpToolInput { description: " ".into(), ..input() }, "description"),
            (HttpToolInput { capability: "Orders!".into(), ..input() }, "capability"),
            (HttpToolInput { parameters: "[1]".into(), ..input() }, "parameters"),
            (
                HttpToolInput {
                    parameters: r#"{"type":"object","properties":{"a":{"type":"nope"}}}"#.into(),
                    ..input()
                },
                "parameters",
            ),
            (HttpToolInput { method: "TRACE".into(), ..input() }, "method"),
            (HttpToolInput { url: "http://shop.example.com/x".into(), ..input() }, "url"),
            (HttpToolInput { url: "https://10.0.0.5/x".into(), ..input() }, "url"),
            (HttpToolInput { url: "https://{order_id}.example.com/".into(), ..input() }, "url"),
            (HttpToolInput { url: "https://shop.example.com/{other}".into(), ..input() }, "url"),
            (HttpToolInput { headers: "Authorization Bearer x".into(), ..input() }, "headers"),
            (HttpToolInput { headers: "Host: evil.example".into(), ..input() }, "headers"),
            (HttpToolInput { headers: "A: 1\na: 2".into(), ..input() }, "headers"),
            (HttpToolInput { timeout_ms: "100000".into(), ..input() }, "timeout_ms"),
            (HttpToolInput { timeout_ms: "soon".into(), ..input() }, "timeout_ms"),
        ];
        for (bad, field) in cases {
            let errors = parse(&bad, &[], strict).expect_err(field);
            assert_eq!(fields(&errors), vec![field], "{bad:?}");
        }
        let taken = vec!["search_knowledge".to_owned()];
        let shadow = HttpToolInput { name: "search_knowledge".into(), ..input() };
        assert_eq!(fields(&parse(&shadow, &taken, strict).unwrap_err()), vec!["name"]);
        // Allowed for a service on this machine (and the tests).
        let local = HttpToolInput { url: "http://127.0.0.1:8080/orders/{order_id}".into(), ..input() };
        assert!(parse(&local, &[], OutboundSettings::open()).is_ok());
    }

    #[test]
    fn arguments_fill_the_path_encoded_and_the_rest_stays() {
        let (url, rest) =
            fill("https://x.example/orders/{id}/lines", &json!({"id": "A/../B 7", "verbose": true})).unwrap();
        assert_eq!(url, "https://x.example/orders/A%2F%2E%2E%2FB%207/lines");
        assert_eq!(Value::Object(rest), json!({"verbose": true}));
        let (url, _) = fill("https://x.example/orders/{id}", &json!({"id": 42})).unwrap();
        assert_eq!(url, "https://x.example/orders/42");
        assert!(fill("https://x.example/{id}", &json!({"id": ""})).is_err());
        assert!(fill("https://x.example/a/{id}", &json!({"id": ".."})).is_err());
        assert!(fill("https://x.example/{id}", &json!({"id": {"a": 1}})).is_err());
        assert_eq!(placeholders("https://x/{a}/b?c={d}"), vec!["a", "d"]);
    }
}
