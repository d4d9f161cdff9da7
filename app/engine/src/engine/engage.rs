//! Triggers (issue 44, part 1): the checks a rule passes before it is stored, and the owner's
//! preview of a rule on an address. The loader (`widget/src/loader/widget.js`) evaluates rules in
//! the visitor's browser; [`url_matches`] is its address test, kept equal by the tests below and
//! the end-to-end test of the loader.

use parley_protocol::{
    LanguageSetting, MAX_TEASER_BUTTON_CHARS, MAX_TEASER_BUTTONS, MAX_TEASER_CHARS, Trigger, TriggerShow, UrlMatch,
    UrlRule,
};

/// A field of the rule and what is wrong with it.
pub type Refusal = (&'static str, String);

const MAX_NAME_CHARS: usize = 40;
const MAX_URL_CHARS: usize = 500;
const MAX_PATTERN_CHARS: usize = 200;
const MAX_CONTEXT_RULES: usize = 5;
const MAX_GREETING_CHARS: usize = 500;

/// Checks a rule (and trims its texts); the first fault, with the field it is in.
pub fn check(mut t: Trigger) -> Result<Trigger, Refusal> {
    t.name = t.name.trim().to_owned();
    if t.name.is_empty() || t.name.chars().count() > MAX_NAME_CHARS {
        return Err(("name", format!("give the trigger a name of 1 to {MAX_NAME_CHARS} characters")));
    }
    if !t.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_') {
        return Err(("name", "use lower-case letters, digits, - and _ only (it is what Parley.trigger names)".into()));
    }
    if !(1..=365).contains(&t.every_days) {
        return Err(("every_days", "show it at most once every 1 to 365 days".into()));
    }
    let w = &mut t.when;
    if let Some(url) = &mut w.url {
        url.value = url.value.trim().to_owned();
        check_url(url)?;
    }
    if w.seconds > 3600 {
        return Err(("seconds", "wait at most 3600 seconds".into()));
    }
    if w.scroll > 100 {
        return Err(("scroll", "a scroll depth is a percentage, 1 to 100".into()));
    }
    if w.context.len() > MAX_CONTEXT_RULES {
        return Err(("context", format!("at most {MAX_CONTEXT_RULES} context values")));
    }
    for c in &mut w.context {
        c.key = c.key.trim().to_owned();
        if c.key.is_empty() || c.key.chars().count() > 64 {
            return Err(("context", "each context value needs a key of 1 to 64 characters".into()));
        }
        if c.value.chars().count() > 200 {
            return Err(("context", format!("the value of `{}` is longer than 200 characters", c.key)));
        }
    }
    for tag in &w.languages {
        if LanguageSetting::parse(tag).is_none_or(|l| l == LanguageSetting::Auto) {
            return Err(("languages", format!("`{tag}` is not one of the panel's languages")));
        }
    }
    w.languages.dedup();
    match &mut t.show {
        TriggerShow::Teaser { message, buttons } => {
            *message = message.trim().to_owned();
            if message.is_empty() || message.chars().count() > MAX_TEASER_CHARS {
                return Err(("message", format!("write a message of 1 to {MAX_TEASER_CHARS} characters")));
            }
            if buttons.len() > MAX_TEASER_BUTTONS {
                return Err(("buttons", format!("at most {MAX_TEASER_BUTTONS} buttons")));
            }
            for b in buttons.iter_mut() {
                *b = b.trim().to_owned();
                if b.is_empty() || b.chars().count() > MAX_TEASER_BUTTON_CHARS {
                    return Err(("buttons", format!("each button says 1 to {MAX_TEASER_BUTTON_CHARS} characters")));
                }
            }
        }
        TriggerShow::Open { greeting } => {
            *greeting = greeting.trim().to_owned();
            if greeting.is_empty() || greeting.chars().count() > MAX_GREETING_CHARS {
                return Err(("greeting", format!("write a greeting of 1 to {MAX_GREETING_CHARS} characters")));
            }
        }
    }
    Ok(t)
}

fn check_url(url: &UrlRule) -> Result<(), Refusal> {
    let v = &url.value;
    if v.is_empty() {
        return Err(("url", "give the address to compare with, or no address condition".into()));
    }
    match url.kind {
        UrlMatch::Is | UrlMatch::StartsWith => {
            if v.chars().count() > MAX_URL_CHARS || v.chars().any(char::is_whitespace) {
                return Err(("url", format!("an address has no spaces and at most {MAX_URL_CHARS} characters")));
            }
            if !v.starts_with('/') && !v.starts_with("https://") && !v.starts_with("http://") {
                return Err(("url", "start with / (a path on the site) or with https:// (a whole address)".into()));
            }
            Ok(())
        }
        UrlMatch::Matches => {
            if v.chars().count() > MAX_PATTERN_CHARS {
                return Err(("url", format!("a pattern has at most {MAX_PATTERN_CHARS} characters")));
            }
            // The browser runs it as a JavaScript RegExp: refuse what the two dialects read
            // differently (inline flags and groups, Unicode classes, \A \z).
            if v.contains("(?") && v.split("(?").skip(1).any(|rest| !rest.starts_with(':')) {
                return Err(("url", "the pattern uses (? … ): only (?: … ) groups are allowed".into()));
            }
            for bad in ["\\p{", "\\P{", "\\A", "\\z", "\\Z"] {
                if v.contains(bad) {
                    return Err(("url", format!("the pattern uses {bad}, which browsers read differently")));
                }
            }
            regex::Regex::new(v).map(drop).map_err(|e| {
                let why = e.to_string();
                let last = why.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("not a regular expression");
                ("url", format!("not a valid pattern: {}", last.trim().trim_start_matches("error: ")))
            })
        }
    }
}

/// Whether a page's address passes the rule, as the loader decides it.
pub fn url_matches(rule: &UrlRule, address: &str) -> bool {
    let Ok(u) = url::Url::parse(address) else { return false };
    let query = u.query().map(|q| format!("?{q}")).unwrap_or_default();
    let whole = format!("{}{}{}", u.origin().ascii_serialization(), u.path(), query);
    let v = &rule.value;
    let subject = if rule.kind == UrlMatch::Matches {
        whole
    } else {
        let with_query = if v.contains('?') { query.as_str() } else { "" };
        if v.starts_with('/') {
            format!("{}{}", u.path(), with_query)
        } else {
            format!("{}{}{}", u.origin().ascii_serialization(), u.path(), with_query)
        }
    };
    match rule.kind {
        UrlMatch::Is => subject == *v,
        UrlMatch::StartsWith => subject.starts_with(v.as_str()),
        UrlMatch::Matches => regex::Regex::new(v).is_ok_and(|r| r.is_match(&subject)),
    }
}

/// The owner's preview of a rule on an address: whether it would show there, and the
/// conditions the console cannot judge (they depend on the visitor's browser).
pub fn preview(t: &Trigger, address: &str) -> (bool, Vec<String>) {
    let mut notes = Vec::new();
    let w = &t.when;
    let matched = match &w.url {
        None => {
            notes.push("Any page of the site.".to_owned());
            true
        }
        Some(rule) => {
            let ok = url_matches(rule, address);
            notes.push(format!(
                "The address {} the rule: the page {} {}.",
                if ok { "passes" } else { "does not pass" },
                rule.kind.words(),
                rule.value
            ));
            ok
        }
    };
    if w.manual {
        notes.push("Shown only when the page calls Parley.trigger(\"".to_owned() + &t.name + "\").");
    }
    if w.seconds > 0 {
        notes.push(format!("After {} seconds on the page.", w.seconds));
    }
    if w.scroll > 0 {
        notes.push(format!("Once {} % of the page has been seen.", w.scroll));
    }
    if w.exit_intent {
        notes.push("When the pointer leaves towards the tabs (desktop).".into());
    }
    if let Some(v) = w.visitor {
        notes.push(format!(
            "Only {} visitors.",
            if v == parley_protocol::VisitorKind::New { "new" } else { "returning" }
        ));
    }
    for c in &w.context {
        notes.push(format!("When the page's context has {} = {}.", c.key, c.value));
    }
    if let Some(h) = w.hours {
        notes.push(format!("Only while {}.", if h == parley_protocol::HoursRule::Open { "open" } else { "closed" }));
    }
    if !w.languages.is_empty() {
        notes.push(format!("For browsers in {}.", w.languages.join(", ")));
    }
    notes.push(format!("At most once every {} day(s) per visitor.", t.every_days));
    (matched, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_protocol::{ContextRule, TriggerWhen};

    fn rule(kind: UrlMatch, value: &str) -> UrlRule {
        UrlRule { kind, value: value.into() }
    }

    fn teaser(name: &str) -> Trigger {
        Trigger {
            name: name.into(),
            when: TriggerWhen::default(),
            show: TriggerShow::Teaser { message: "Hello".into(), buttons: vec![] },
            every_days: 1,
        }
    }

    #[test]
    fn addresses_are_compared_as_the_loader_compares_them() {
        let page = "https://shop.example/pricing?plan=pro#faq";
        assert!(url_matches(&rule(UrlMatch::Is, "/pricing"), page), "the query counts only when the value has one");
        assert!(url_matches(&rule(UrlMatch::Is, "/pricing?plan=pro"), page));
        assert!(!url_matches(&rule(UrlMatch::Is, "/pricing?plan=team"), page));
        assert!(!url_matches(&rule(UrlMatch::Is, "/pric"), page));
        assert!(url_matches(&rule(UrlMatch::StartsWith, "/pric"), page));
        assert!(url_matches(&rule(UrlMatch::Is, "https://shop.example/pricing"), page));
        assert!(!url_matches(&rule(UrlMatch::StartsWith, "https://other.example/"), page));
        assert!(url_matches(&rule(UrlMatch::Matches, r"plan=(pro|team)$"), page), "the fragment is not part of it");
        assert!(!url_matches(&rule(UrlMatch::Matches, "faq"), page));
    }

    #[test]
    fn bad_rules_are_refused_with_the_field_named() {
        let mut t = teaser("Pricing page");
        assert_eq!(check(t.clone()).unwrap_err().0, "name");
        t.name = "pricing".into();
        t.when.url = Some(rule(UrlMatch::Matches, "/pricing/(unclosed"));
        let (field, why) = check(t.clone()).unwrap_err();
        assert_eq!(field, "url");
        assert!(why.starts_with("not a valid pattern"), "{why}");
        t.when.url = Some(rule(UrlMatch::Matches, "(?i)pricing"));
        assert_eq!(check(t.clone()).unwrap_err().0, "url");
        t.when.url = Some(rule(UrlMatch::StartsWith, "pricing"));
        assert_eq!(check(t.clone()).unwrap_err().0, "url");
        t.when.url = Some(rule(UrlMatch::Matches, r"/pricing(?:/.*)?$"));
        assert!(check(t.clone()).is_ok());
        t.when.scroll = 120;
        assert_eq!(check(t.clone()).unwrap_err().0, "scroll");
        t.when.scroll = 50;
        t.when.languages = vec!["xx".into()];
        assert_eq!(check(t.clone()).unwrap_err().0, "languages");
        t.when.languages = vec!["pt-BR".into()];
        t.when.context = vec![ContextRule { key: " ".into(), value: "x".into() }];
        assert_eq!(check(t.clone()).unwrap_err().0, "context");
        t.when.context.clear();
        t.show =
            TriggerShow::Teaser { message: "Hi".into(), buttons: vec!["a".into(), "b".into(), "c".into(), "d".into()] };
        assert_eq!(check(t.clone()).unwrap_err().0, "buttons");
        t.show = TriggerShow::Teaser { message: "Hi".into(), buttons: vec!["  ".into()] };
        assert_eq!(check(t.clone()).unwrap_err().0, "buttons");
        t.show = TriggerShow::Open { greeting: String::new() };
        assert_eq!(check(t.clone()).unwrap_err().0, "greeting");
        t.show = TriggerShow::Teaser { message: "  Hi  ".into(), buttons: vec![" Yes ".into()] };
        t.every_days = 0;
        assert_eq!(check(t.clone()).unwrap_err().0, "every_days");
        t.every_days = 7;
        let ok = check(t).unwrap();
        assert_eq!(ok.show, TriggerShow::Teaser { message: "Hi".into(), buttons: vec!["Yes".into()] });
    }

    #[test]
    fn a_preview_says_whether_the_address_passes() {
        let mut t = teaser("pricing");
        t.when.url = Some(rule(UrlMatch::StartsWith, "/pricing"));
        t.when.seconds = 10;
        let (yes, notes) = preview(&t, "https://shop.example/pricing/team");
        assert!(yes);
        assert!(notes.iter().any(|n| n.contains("10 seconds")), "{notes:?}");
        assert!(!preview(&t, "https://shop.example/blog").0);
        assert!(!preview(&t, "not an address").0);
    }
}
