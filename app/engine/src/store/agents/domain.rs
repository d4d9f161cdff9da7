//! An agent's field of work as data: the services it sells or assesses (the categories its tools
//! take, each with a price the owner edits), the official sites it points visitors to, and the
//! reference news it gives when no news is stored. Nothing here is particular to one field: the
//! demo immigration agent gets its schemes, prices and sites from the seed, like any owner would
//! type them in the console. Stored as the `domain` column's JSON; typed as lines of text.

use serde::{Deserialize, Serialize};

use super::fields::FieldError;

/// Most services, sites and reference items an agent has (each).
pub const MAX_ROWS: usize = 50;
/// Longest service code, in characters.
pub const MAX_CODE_CHARS: usize = 40;

/// The agent's field of work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Domain {
    #[serde(default)]
    pub services: Vec<Service>,
    #[serde(default)]
    pub sites: Vec<Site>,
    #[serde(default)]
    pub reference_news: Vec<ReferenceNews>,
}

/// One service: its code (the category the tools take), its name, its price when it is sold,
/// and the words that show a question is about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Service {
    pub code: String,
    pub name: String,
    /// In minor units (cents, fen); `None`: not sold.
    #[serde(default)]
    pub price_minor: Option<i64>,
    /// ISO 4217, upper case (with a price).
    #[serde(default)]
    pub currency: String,
    /// Lower-case words and phrases (the code and the name count too).
    #[serde(default)]
    pub words: Vec<String>,
}

/// An official site.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Site {
    pub name: String,
    pub url: String,
}

/// A reference item given when no news is stored: its service code (or `ALL`), title, summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceNews {
    pub category: String,
    pub title: String,
    pub summary: String,
}

/// The three lists as typed, one item per line, parts separated by `|`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DomainText {
    /// `CODE | Name | price | currency | word, word` (price, currency and words optional).
    pub services: String,
    /// `Name | https://…`.
    pub sites: String,
    /// `CODE | Title | Summary`.
    pub reference_news: String,
}

impl Service {
    /// Whether `lower` (lower-cased text) mentions this service: its code, its name or a word.
    pub fn mentioned_in(&self, lower: &str) -> bool {
        let code = self.code.to_lowercase();
        let name = self.name.to_lowercase();
        (code.chars().count() >= 2 && lower.contains(&code))
            || (!name.is_empty() && lower.contains(&name))
            || self.words.iter().any(|w| !w.is_empty() && lower.contains(w.as_str()))
    }
}

impl Domain {
    /// The service with this code.
    pub fn service(&self, code: &str) -> Option<&Service> {
        self.services.iter().find(|s| s.code == code)
    }

    /// The codes of the services, in the owner's order.
    pub fn codes(&self) -> Vec<&str> {
        self.services.iter().map(|s| s.code.as_str()).collect()
    }

    /// The first service `lower` (lower-cased text) mentions.
    pub fn service_mentioned(&self, lower: &str) -> Option<&Service> {
        self.services.iter().find(|s| s.mentioned_in(lower))
    }

    /// The lists as lines of text, as the form shows them ([`Domain::parse`] reads them back).
    pub fn to_text(&self) -> DomainText {
        let services = self
            .services
            .iter()
            .map(|s| {
                let price = s.price_minor.map(|p| format!("{}.{:02}", p / 100, p % 100)).unwrap_or_default();
                let mut parts = vec![s.code.clone(), s.name.clone(), price, s.currency.clone(), s.words.join(", ")];
                while parts.len() > 2 && parts.last().is_some_and(String::is_empty) {
                    parts.pop();
                }
                parts.join(" | ")
            })
            .collect::<Vec<_>>()
            .join("\n");
        let sites = self.sites.iter().map(|s| format!("{} | {}", s.name, s.url)).collect::<Vec<_>>().join("\n");
        let reference_news = self
            .reference_news
            .iter()
            .map(|n| format!("{} | {} | {}", n.category, n.title, n.summary))
            .collect::<Vec<_>>()
            .join("\n");
        DomainText { services, sites, reference_news }
    }

    /// The lists typed as text, or what is wrong, line by line (fields `services`, `sites`,
    /// `reference_news`).
    pub fn parse(text: &DomainText) -> Result<Domain, Vec<FieldError>> {
        let mut errors = Vec::new();
        let services = parse_lines(&text.services, "services", &mut errors, parse_service);
        for (i, s) in services.iter().enumerate() {
            if services[..i].iter().any(|t| t.code == s.code) {
                errors.push(FieldError::new("services", format!("The code {} is listed twice.", s.code)));
            }
        }
        let sites = parse_lines(&text.sites, "sites", &mut errors, parse_site);
        let reference_news = parse_lines(&text.reference_news, "reference_news", &mut errors, |parts| {
            let [category, title, summary] = parts else {
                return Err("write CODE | Title | Summary.".into());
            };
            if *category != "ALL" && !services.iter().any(|s| s.code == *category) {
                return Err(format!("{category} is not a service code above (or ALL)."));
            }
            if title.is_empty() || title.chars().count() > 200 || summary.chars().count() > 1000 {
                return Err("a title of 1 to 200 characters and a summary of at most 1,000.".into());
            }
            Ok(ReferenceNews { category: category.to_string(), title: title.to_string(), summary: summary.to_string() })
        });
        if errors.is_empty() { Ok(Domain { services, sites, reference_news }) } else { Err(errors) }
    }
}

/// Parses each non-blank line of `text` split at `|` (parts trimmed); a wrong line becomes an
/// error of `field` naming its line number.
fn parse_lines<T>(
    text: &str,
    field: &'static str,
    errors: &mut Vec<FieldError>,
    parse: impl Fn(&[&str]) -> Result<T, String>,
) -> Vec<T> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        match parse(&parts) {
            Ok(item) => out.push(item),
            Err(e) => errors.push(FieldError::new(field, format!("Line {}: {e}", n + 1))),
        }
    }
    if out.len() > MAX_ROWS {
        errors.push(FieldError::new(field, format!("At most {MAX_ROWS} lines.")));
    }
    out
}

fn parse_service(parts: &[&str]) -> Result<Service, String> {
    let (code, name) = match parts {
        [code, name, ..] if parts.len() <= 5 => (*code, *name),
        _ => return Err("write CODE | Name | price | currency | words (the last three optional).".into()),
    };
    let code_ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if code.is_empty() || code.chars().count() > MAX_CODE_CHARS || !code.chars().all(code_ok) || code == "ALL" {
        return Err(format!("a code of 1 to {MAX_CODE_CHARS} letters, digits, '_' or '-' (not ALL)."));
    }
    if name.is_empty() || name.chars().count() > 80 {
        return Err("a name of 1 to 80 characters.".into());
    }
    let price = parts.get(2).copied().unwrap_or("");
    let currency = parts.get(3).copied().unwrap_or("").to_uppercase();
    let price_minor = match price {
        "" => None,
        p => Some(parse_price(p).ok_or_else(|| format!("{p} is not a price (e.g. 99 or 99.50)."))?),
    };
    if price_minor.is_some() == currency.is_empty() {
        return Err("a price needs its currency, and a currency its price.".into());
    }
    if !currency.is_empty() && (currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase())) {
        return Err(format!("{currency} is not a currency code (three letters, e.g. CNY)."));
    }
    let words: Vec<String> = parts
        .get(4)
        .map(|w| w.split([',', '，']).map(|w| w.trim().to_lowercase()).filter(|w| !w.is_empty()).collect())
        .unwrap_or_default();
    if words.len() > 20 || words.iter().any(|w| w.chars().count() > 40) {
        return Err("at most 20 words, each of at most 40 characters.".into());
    }
    Ok(Service { code: code.to_owned(), name: name.to_owned(), price_minor, currency, words })
}

/// `99`, `99.5` or `99.50` in minor units; at most 2 decimals, at most 1,000,000.
fn parse_price(text: &str) -> Option<i64> {
    let (major, minor) = text.split_once('.').unwrap_or((text, ""));
    if major.is_empty() || !major.bytes().all(|b| b.is_ascii_digit()) || minor.len() > 2 {
        return None;
    }
    if !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let major: i64 = major.parse().ok().filter(|m| *m <= 1_000_000)?;
    let minor: i64 = format!("{minor:0<2}").parse().ok()?;
    Some(major * 100 + minor)
}

fn parse_site(parts: &[&str]) -> Result<Site, String> {
    let [name, url] = parts else {
        return Err("write Name | https://….".into());
    };
    if name.is_empty() || name.chars().count() > 80 {
        return Err("a name of 1 to 80 characters.".into());
    }
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "https" | "http") && u.host_str().is_some() && url.len() <= 500 => {
            Ok(Site { name: name.to_string(), url: url.to_string() })
        }
        _ => Err(format!("{url} is not an http(s) address.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(services: &str, sites: &str, news: &str) -> DomainText {
        DomainText { services: services.into(), sites: sites.into(), reference_news: news.into() }
    }

    #[test]
    fn a_typed_domain_parses_and_reads_back_the_same() {
        let typed = text(
            "QMAS | Quality Migrant | 99 | cny | 优才, Quality migrant\n\nGEP | General Employment\nCIES | Investors | 199.5 | HKD",
            "Immigration Department | https://www.immd.gov.hk",
            "QMAS | Open all year | Applications are accepted all year.\nALL | Rules | Check the official site.",
        );
        let d = Domain::parse(&typed).unwrap();
        assert_eq!(d.codes(), ["QMAS", "GEP", "CIES"]);
        let qmas = d.service("QMAS").unwrap();
        assert_eq!((qmas.price_minor, qmas.currency.as_str()), (Some(9900), "CNY"));
        assert_eq!(qmas.words, ["优才", "quality migrant"]);
        assert_eq!(d.service("CIES").unwrap().price_minor, Some(19950));
        assert_eq!(d.service("GEP").unwrap().price_minor, None);
        assert_eq!(d.sites[0].url, "https://www.immd.gov.hk");
        assert_eq!(d.reference_news.len(), 2);
        assert_eq!(Domain::parse(&d.to_text()).unwrap(), d);
        assert_eq!(d.service_mentioned("我想了解优才").map(|s| s.code.as_str()), Some("QMAS"));
        assert_eq!(d.service_mentioned("what about gep?").map(|s| s.code.as_str()), Some("GEP"));
        assert_eq!(d.service_mentioned("opening hours"), None);
    }

    #[test]
    fn wrong_lines_are_named_and_nothing_is_taken() {
        let errors = Domain::parse(&text(
            "QMAS | Q | 9.99 | CNY\nALL | All\nbad code! | X\nA | B | 10\nQMAS | Again\nB | B | 5 | EURO",
            "Home | ftp://x.example\nNo address",
            "TTPS | Title | Summary",
        ))
        .unwrap_err();
        let got: Vec<(String, String)> = errors.into_iter().map(|e| (e.field, e.message)).collect();
        let lines: Vec<String> = got.iter().map(|(f, m)| format!("{f} {}", m.split(':').next().unwrap())).collect();
        assert_eq!(
            lines,
            [
                "services Line 2",
                "services Line 3",
                "services Line 4",
                "services Line 6",
                "services The code QMAS is listed twice.",
                "sites Line 1",
                "sites Line 2",
                "reference_news Line 1"
            ]
        );
        assert!(got[2].1.contains("needs its currency"), "{:?}", got[2]);
    }

    #[test]
    fn prices_are_read_in_minor_units() {
        assert_eq!(parse_price("99"), Some(9900));
        assert_eq!(parse_price("0.5"), Some(50));
        assert_eq!(parse_price("12.34"), Some(1234));
        for bad in ["", "-1", "1.234", "1e3", "1,000", ".5", "1000001", "1.x"] {
            assert_eq!(parse_price(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_old_row_without_the_column_reads_as_empty() {
        let d: Domain = serde_json::from_str("{}").unwrap();
        assert_eq!(d, Domain::default());
    }
}
