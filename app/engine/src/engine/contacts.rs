//! Contacts (issue 43, part 5): the rules for what operators write on a contact, the coarse facts
//! kept from a browser's first request, and merging. Visibility follows the inbox's: an operator
//! in a team sees the contacts of the agents their teams handle and of conversations assigned to
//! them (`docs/inbox.md`, "Contacts").

use super::Engine;
use crate::store::contacts::{self, MergeError};
use crate::store::users::User;
use crate::store::visitors::ClientFacts;

/// Longest contact name, email and phone number, in characters.
pub const MAX_NAME: usize = 120;
pub const MAX_EMAIL: usize = 254;
pub const MAX_PHONE: usize = 40;

/// The details an operator set, checked: trimmed, empty ones `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Details {
    pub name: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
}

impl Details {
    /// Checks what an operator typed; the field at fault and why.
    pub fn check(name: &str, email: &str, phone: &str) -> Result<Details, (&'static str, &'static str)> {
        let keep = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        let (name, email, phone) = (keep(name), keep(email), keep(phone));
        if let Some(n) = &name
            && (n.chars().count() > MAX_NAME || n.chars().any(char::is_control))
        {
            return Err(("name", "A name has at most 120 characters and no control characters."));
        }
        if let Some(e) = &email
            && !plausible_email(e)
        {
            return Err(("email", "This is not an email address (name@example.com)."));
        }
        if let Some(p) = &phone {
            let digits = p.chars().filter(char::is_ascii_digit).count();
            let allowed = p.chars().all(|c| c.is_ascii_digit() || " +-().".contains(c));
            if !allowed || !(5..=20).contains(&digits) || p.chars().count() > MAX_PHONE {
                return Err(("phone", "A phone number has 5 to 20 digits, and may hold + - ( ) . and spaces."));
            }
        }
        Ok(Details { name, email, phone })
    }
}

/// One `@` with something on each side, a dot in the domain, no spaces, at most 254 characters.
fn plausible_email(e: &str) -> bool {
    let Some((local, domain)) = e.split_once('@') else { return false };
    e.chars().count() <= MAX_EMAIL
        && !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !e.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | ',' | ';'))
        && !domain.contains('@')
}

/// What a browser's first request says about it, kept coarse: its User-Agent (cut to 300
/// characters), its first language (a tag such as `zh-CN`), and a country code from a header a
/// trusted proxy sets (`CF-IPCountry` and the like; two letters, `XX` for unknown is dropped).
pub fn client_facts(user_agent: Option<&str>, accept_language: Option<&str>, country: Option<&str>) -> ClientFacts {
    let user_agent = user_agent
        .map(|ua| ua.chars().filter(|c| !c.is_control()).take(300).collect::<String>())
        .filter(|ua| !ua.trim().is_empty());
    let language = accept_language
        .and_then(|h| h.split(',').next())
        .map(|tag| tag.split(';').next().unwrap_or_default().trim().to_owned())
        .filter(|t| {
            !t.is_empty() && t != "*" && t.len() <= 35 && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    let country = country
        .map(|c| c.trim().to_ascii_uppercase())
        .filter(|c| c.len() == 2 && c.chars().all(|ch| ch.is_ascii_uppercase()) && c != "XX");
    ClientFacts { user_agent, language, country }
}

/// A browser as people name it, from its User-Agent: family and major version, and system
/// ("Chrome 131 on Windows"). Coarse on purpose: no device database (the console shows the raw
/// string beside it).
pub fn browser_label(user_agent: &str) -> String {
    let ua = user_agent;
    let version = |marker: &str| -> Option<String> {
        let at = ua.find(marker)? + marker.len();
        let v: String = ua[at..].chars().take_while(char::is_ascii_digit).collect();
        (!v.is_empty()).then_some(v)
    };
    // Order matters: Edge and Opera say Chrome too, Chrome says Safari, iOS browsers say Safari.
    let families: [(&str, &str); 8] = [
        ("Edg/", "Edge"),
        ("OPR/", "Opera"),
        ("SamsungBrowser/", "Samsung Internet"),
        ("Firefox/", "Firefox"),
        ("FxiOS/", "Firefox"),
        ("CriOS/", "Chrome"),
        ("Chrome/", "Chrome"),
        ("Version/", "Safari"),
    ];
    let browser = families
        .iter()
        .find(|(marker, _)| ua.contains(marker))
        .map(|(marker, name)| match version(marker) {
            Some(v) => format!("{name} {v}"),
            None => (*name).to_owned(),
        })
        .unwrap_or_else(|| "A browser".to_owned());
    let system = if ua.contains("iPhone") || ua.contains("iPad") {
        "iOS"
    } else if ua.contains("Android") {
        "Android"
    } else if ua.contains("Windows") {
        "Windows"
    } else if ua.contains("Mac OS X") || ua.contains("Macintosh") {
        "macOS"
    } else if ua.contains("CrOS") {
        "ChromeOS"
    } else if ua.contains("Linux") {
        "Linux"
    } else {
        return browser;
    };
    format!("{browser} on {system}")
}

impl Engine {
    /// Merges the contact `from` into `into`; both must be contacts `user` may see.
    pub async fn merge_contacts(&self, user: &User, into: &str, from: &str) -> Result<(), MergeError> {
        let visible_to = self.visible_to(user).await?;
        for id in [into, from] {
            if contacts::get(self.db(), id, visible_to.as_deref()).await?.is_none() {
                return Err(MergeError::NotFound);
            }
        }
        contacts::merge(self.db(), into, from, self.now_ms()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_are_trimmed_and_checked() {
        let d = Details::check("  Ann Lee ", " ann@example.com", "+86 138-0013-8000").unwrap();
        assert_eq!(d.name.as_deref(), Some("Ann Lee"));
        assert_eq!(d.email.as_deref(), Some("ann@example.com"));
        assert_eq!(Details::check("", "", "").unwrap(), Details::default());
        assert_eq!(Details::check("", "ann@", "").unwrap_err().0, "email");
        assert_eq!(Details::check("", "a b@example.com", "").unwrap_err().0, "email");
        assert_eq!(Details::check("", "", "call me").unwrap_err().0, "phone");
        assert_eq!(Details::check("", "", "123").unwrap_err().0, "phone");
        assert_eq!(Details::check(&"x".repeat(121), "", "").unwrap_err().0, "name");
    }

    #[test]
    fn client_facts_keep_the_first_language_and_a_real_country() {
        let f = client_facts(Some("Mozilla/5.0"), Some("zh-CN,zh;q=0.9,en;q=0.8"), Some("cn"));
        assert_eq!(f.language.as_deref(), Some("zh-CN"));
        assert_eq!(f.country.as_deref(), Some("CN"));
        let f = client_facts(None, Some("*"), Some("XX"));
        assert_eq!((f.user_agent, f.language, f.country), (None, None, None));
        let f = client_facts(Some(&"a".repeat(400)), Some("en-US;q=1"), Some("T1"));
        assert_eq!(f.user_agent.map(|u| u.len()), Some(300));
        assert_eq!(f.language.as_deref(), Some("en-US"));
        assert_eq!(f.country, None);
    }

    #[test]
    fn browsers_are_named_by_family_version_and_system() {
        let chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) \
                      Chrome/131.0.0.0 Safari/537.36";
        assert_eq!(browser_label(chrome), "Chrome 131 on Windows");
        let edge = format!("{chrome} Edg/131.0.2903.86");
        assert_eq!(browser_label(&edge), "Edge 131 on Windows");
        let safari = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) \
                      Version/18.1 Mobile/15E148 Safari/604.1";
        assert_eq!(browser_label(safari), "Safari 18 on iOS");
        let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
        assert_eq!(browser_label(firefox), "Firefox 133 on Linux");
        assert_eq!(browser_label("curl/8.5.0"), "A browser");
    }
}
