//! The answer quality loop (issue 17): unanswered questions grouped by similarity, and an
//! operator's reply (or an answer they edited) saved as a knowledge article.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use parley_protocol::Role;

use super::Engine;
use crate::store::knowledge::{self, BaseFields, NewArticle};
use crate::store::unanswered::{Reason, Unanswered};
use crate::store::{DbError, conversations, messages};

/// Questions this similar (Jaccard index of their terms) are one group.
const SIMILAR: f64 = 0.5;

/// A question's terms: words of two letters or more (lower case) and, for Chinese, Japanese and
/// Korean, pairs of neighbouring characters.
pub fn terms(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_cjk = |cjk: &mut Vec<char>, out: &mut BTreeSet<String>| {
        if cjk.len() == 1 {
            out.insert(cjk[0].to_string());
        }
        for pair in cjk.windows(2) {
            out.insert(pair.iter().collect());
        }
        cjk.clear();
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        let is_cjk = matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af);
        if is_cjk {
            if word.chars().count() >= 2 {
                out.insert(std::mem::take(&mut word));
            }
            word.clear();
            cjk.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk, &mut out);
            word.push(c);
        } else {
            flush_cjk(&mut cjk, &mut out);
            if word.chars().count() >= 2 {
                out.insert(std::mem::take(&mut word));
            }
            word.clear();
        }
    }
    flush_cjk(&mut cjk, &mut out);
    if word.chars().count() >= 2 {
        out.insert(word);
    }
    out
}

fn similarity(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// Similar questions together.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionGroup {
    /// The question as first asked (the most recent ask comes first in the input).
    pub question: String,
    /// How many times (one per conversation and reason).
    pub count: usize,
    /// Why, with how often.
    pub reasons: BTreeMap<Reason, usize>,
    /// The conversations, newest first.
    pub conversations: Vec<String>,
    pub last_at: i64,
}

/// Groups unanswered questions by similarity, most frequent first (then most recent).
pub fn group(items: Vec<Unanswered>) -> Vec<QuestionGroup> {
    let mut items = items;
    items.sort_by_key(|i| std::cmp::Reverse(i.at));
    let mut seen: HashSet<(String, String, Reason)> = HashSet::new();
    let mut groups: Vec<(BTreeSet<String>, QuestionGroup)> = Vec::new();
    for item in items {
        let text = item.question.trim().to_owned();
        if !seen.insert((item.conversation_id.clone(), text.clone(), item.reason)) {
            continue;
        }
        let words = terms(&text);
        let found = groups.iter_mut().find(|(w, g)| {
            similarity(w, &words) >= SIMILAR || (words.is_empty() && g.question.eq_ignore_ascii_case(&text))
        });
        match found {
            Some((_, g)) => {
                g.count += 1;
                *g.reasons.entry(item.reason).or_default() += 1;
                if !g.conversations.contains(&item.conversation_id) {
                    g.conversations.push(item.conversation_id);
                }
            }
            None => {
                let group = QuestionGroup {
                    question: text,
                    count: 1,
                    reasons: BTreeMap::from([(item.reason, 1)]),
                    conversations: vec![item.conversation_id],
                    last_at: item.at,
                };
                groups.push((words, group));
            }
        }
    }
    let mut out: Vec<QuestionGroup> = groups.into_iter().map(|(_, g)| g).collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(b.last_at.cmp(&a.last_at)));
    out
}

/// Why a reply cannot become an article.
#[derive(Debug, thiserror::Error)]
pub enum SaveAnswerError {
    #[error("not found")]
    NotFound,
    #[error("{1}")]
    Invalid(&'static str, String),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("{0}")]
    Knowledge(String),
}

/// Where saved answers go when the agent has no knowledge base yet.
pub const SAVED_ANSWERS_BASE: &str = "Answers from conversations";

impl Engine {
    /// Saves an operator's reply or an answer of the conversation `conversation_id` (its text as
    /// the operator edited it, `body`) as an article of one of the agent's knowledge bases (a new
    /// one, [`SAVED_ANSWERS_BASE`], when it has none); searchable at once. The article's id.
    pub async fn save_answer_as_article(
        &self,
        conversation_id: &str,
        message_id: &str,
        knowledge_base_id: Option<&str>,
        title: &str,
        body: &str,
    ) -> Result<String, SaveAnswerError> {
        let conv = conversations::by_id(self.db(), conversation_id).await?.ok_or(SaveAnswerError::NotFound)?;
        let stored = messages::list(self.db(), &conv.id).await?;
        let message = stored.iter().find(|m| m.id == message_id).ok_or(SaveAnswerError::NotFound)?;
        if !matches!(message.role, Role::Operator | Role::Assistant) {
            return Err(SaveAnswerError::Invalid(
                "message_id",
                "Only a reply or an answer can become an article.".into(),
            ));
        }
        let title = title.trim();
        if title.is_empty() || title.chars().count() > 200 {
            return Err(SaveAnswerError::Invalid("title", "A title of 1 to 200 characters.".into()));
        }
        let body = body.trim();
        if body.is_empty() || body.len() > 200_000 {
            return Err(SaveAnswerError::Invalid("body", "The article's text: 1 character to 200 KB.".into()));
        }
        let bases = knowledge::bases_of_agent(self.db(), &conv.agent_id).await?;
        let base = match knowledge_base_id.filter(|b| !b.is_empty()) {
            Some(id) => bases.iter().find(|b| b.id == id).map(|b| b.id.clone()).ok_or_else(|| {
                SaveAnswerError::Invalid("knowledge_base_id", "Not a knowledge base of this agent.".into())
            })?,
            None => match bases.first() {
                Some(b) => b.id.clone(),
                None => {
                    let fields = BaseFields {
                        name: SAVED_ANSWERS_BASE,
                        description: "Replies of the team, saved from conversations.",
                        topics: "",
                    };
                    knowledge::create_base(self.db(), &conv.agent_id, &fields, self.now_ms()).await?.id
                }
            },
        };
        let article = NewArticle {
            title: title.to_owned(),
            category: None,
            kind: "article".into(),
            body: body.to_owned(),
            source_url: None,
        };
        let mut ids = self
            .services()
            .knowledge
            .add_articles(&base, &[article], self.now_ms())
            .await
            .map_err(|e| SaveAnswerError::Knowledge(e.to_string()))?;
        Ok(ids.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(conversation: &str, question: &str, reason: Reason, at: i64) -> Unanswered {
        Unanswered { conversation_id: conversation.into(), question: question.into(), reason, at }
    }

    #[test]
    fn similar_questions_are_one_group_and_the_most_asked_comes_first() {
        let groups = group(vec![
            q("c1", "Do you ship to Canada?", Reason::NothingFound, 1),
            q("c2", "do you ship to canada", Reason::ThumbsDown, 2),
            q("c3", "Can you ship to Canada?", Reason::Escalated, 3),
            q("c4", "What is the refund policy?", Reason::OffTopic, 4),
            // The same conversation and reason twice counts once.
            q("c1", "Do you ship to Canada?", Reason::NothingFound, 5),
            q("c5", "优才计划的申请条件是什么", Reason::NothingFound, 6),
            q("c6", "优才计划申请条件", Reason::Escalated, 7),
        ]);
        assert_eq!(groups.len(), 3, "{groups:#?}");
        assert_eq!(groups[0].count, 3);
        assert_eq!(groups[0].question, "Do you ship to Canada?");
        assert_eq!(groups[0].conversations, ["c1", "c3", "c2"]);
        assert_eq!(groups[0].reasons.len(), 3);
        assert_eq!(groups[1].count, 2, "Chinese questions grouped by character pairs: {groups:#?}");
        assert_eq!(groups[2].question, "What is the refund policy?");
    }

    #[test]
    fn terms_are_words_and_character_pairs() {
        let t = terms("Ship 2 boxes to 加拿大!");
        assert!(t.contains("ship") && t.contains("boxes") && t.contains("加拿") && t.contains("拿大"), "{t:?}");
        assert!(!t.contains("2"), "{t:?}");
    }
}
