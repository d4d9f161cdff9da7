//! `GetTrendingQuestions`: what visitors of an agent asked most in the last 30 days, computed
//! from the stored visitor messages (never the answers). Questions are counted after normalising
//! case and whitespace, grouped by the agent's service they mention (its code, name or words, see
//! [`Domain`]), and stripped of e-mail addresses and long numbers (phone, passport, order numbers).

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::store::agents::Domain;
use crate::store::{Db, DbError, messages};

/// How far back to look.
pub const WINDOW_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// Visitor messages read at most (the newest).
const SCAN: i64 = 5_000;
/// Questions per category, and in all.
const PER_CATEGORY: usize = 10;
const TOTAL: usize = 50;
/// Longest question shown, in characters.
const MAX_CHARS: usize = 200;
/// The category of questions that mention none of the agent's services.
pub const OTHER: &str = "Other";

/// One question and how often it was asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Asked {
    pub question: String,
    pub count: usize,
    pub last_at: i64,
}

/// Whitespace collapsed and lower-cased: the key questions are counted by.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Hides e-mail addresses and runs of 7 or more digits.
pub fn redact(text: &str) -> String {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| if w.contains('@') && w.contains('.') { "[email]".to_owned() } else { w.to_owned() })
        .collect();
    let joined = words.join(" ");
    let mut out = String::with_capacity(joined.len());
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        if digits.chars().count() >= 7 {
            out.push_str("[number]");
        } else {
            out.push_str(digits);
        }
        digits.clear();
    };
    for c in joined.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            flush(&mut digits, &mut out);
            out.push(c);
        }
    }
    flush(&mut digits, &mut out);
    out
}

/// Counts and groups `(text, created_at)` messages; categories with the most questions first.
pub fn group(messages: &[(String, i64)], domain: &Domain) -> Vec<(String, Vec<Asked>)> {
    let mut by_key: HashMap<String, Asked> = HashMap::new();
    for (text, at) in messages {
        let shown = redact(text.trim());
        let key = normalize(&shown);
        if key.chars().count() < 2 {
            continue;
        }
        let entry = by_key.entry(key).or_insert_with(|| Asked { question: String::new(), count: 0, last_at: i64::MIN });
        entry.count += 1;
        if *at > entry.last_at {
            entry.last_at = *at;
            entry.question = shown.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_CHARS).collect();
        }
    }
    let mut asked: Vec<(String, Asked)> = by_key.into_iter().collect();
    asked.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(b.1.last_at.cmp(&a.1.last_at)).then(a.0.cmp(&b.0)));
    let mut groups: Vec<(String, Vec<Asked>)> = Vec::new();
    let mut total = 0;
    for (key, a) in asked {
        if total >= TOTAL {
            break;
        }
        let category = domain.service_mentioned(&key).map_or(OTHER, |s| s.code.as_str()).to_owned();
        let slot = match groups.iter().position(|(c, _)| *c == category) {
            Some(i) => i,
            None => {
                groups.push((category, Vec::new()));
                groups.len() - 1
            }
        };
        if groups[slot].1.len() < PER_CATEGORY {
            groups[slot].1.push(a);
            total += 1;
        }
    }
    let weight = |g: &(String, Vec<Asked>)| g.1.iter().map(|a| a.count).sum::<usize>();
    groups.sort_by(|a, b| weight(b).cmp(&weight(a)).then((a.0 == OTHER).cmp(&(b.0 == OTHER))));
    groups
}

/// The tool's result: `days`, `since` (a date), `questions_scanned` and `categories`, each with
/// its `category` and `questions` (`question`, `count`).
pub async fn trending(db: &Db, agent_id: &str, domain: &Domain, now_ms: i64) -> Result<Value, DbError> {
    let since = now_ms - WINDOW_MS;
    let messages = messages::visitor_texts_since(db, agent_id, since, SCAN).await?;
    let categories: Vec<Value> = group(&messages, domain)
        .into_iter()
        .map(|(category, asked)| {
            let questions: Vec<Value> =
                asked.iter().map(|a| json!({"question": a.question, "count": a.count})).collect();
            json!({"category": category, "questions": questions})
        })
        .collect();
    Ok(json!({
        "days": WINDOW_MS / 86_400_000,
        "since": super::builtin::today(since),
        "questions_scanned": messages.len(),
        "categories": categories,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trending_counts_normalised_questions_and_groups_them() {
        let m = |t: &str, at: i64| (t.to_owned(), at);
        let groups = group(
            &[
                m("优才计划 的条件？", 1),
                m("优才计划   的条件？", 5),
                m("How do I renew my IANG visa", 2),
                m("how do i renew  my IANG visa", 3),
                m("优才计划 的条件？", 4),
                m("What are your office hours", 6),
                m("高才通 A类 要求", 7),
                m("a", 8),
            ],
            &crate::seed::immigration_domain(),
        );
        let names: Vec<&str> = groups.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, vec!["QMAS", "IANG", "TTPS", OTHER]);
        assert_eq!(groups[0].1[0], Asked { question: "优才计划 的条件？".into(), count: 3, last_at: 5 });
        assert_eq!(groups[1].1[0].question, "how do i renew my IANG visa");
        assert_eq!(groups[1].1[0].count, 2);
    }

    #[test]
    fn personal_numbers_and_emails_are_hidden() {
        assert_eq!(redact("call me at 98765432 or a.b@example.com"), "call me at [number] or [email]");
        assert_eq!(redact("优才2024年要求，电话13800138000"), "优才2024年要求，电话[number]");
    }

    #[test]
    fn an_agent_groups_by_its_own_services() {
        let domain = Domain::parse(&crate::store::agents::DomainText {
            services: "REFUND | Refunds | | | money back\nSHIP | Shipping | | | delivery, parcel".into(),
            ..Default::default()
        })
        .unwrap();
        let m = |t: &str, at: i64| (t.to_owned(), at);
        let groups = group(&[m("Where is my parcel", 1), m("I want my money back", 2), m("优才计划", 3)], &domain);
        let names: Vec<&str> = groups.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, ["REFUND", "SHIP", OTHER]);
    }
}
