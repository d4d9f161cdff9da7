//! Search across transcripts, private notes, leads and identified users (issue 43, part 4; `docs/inbox.md`,
//! "Search"). Text is split into terms by the knowledge base's tokenizer (Chinese as overlapping
//! two-character terms, English words by their stem), the same way when indexing and when
//! searching; the database keeps the postings ([`crate::store::search`]).
//!
//! Indexing stays off the turn path: a job run once across replicas
//! ([`super::jobs::Job::IndexSearch`], every 1.5 s) reads what changed since its cursor. It reads
//! the last [`OVERLAP_MS`] again each time, so a row committed a little after a newer one is not
//! missed; rows already indexed at their version are skipped.
//!
//! A search finds the conversations whose documents hold every term, limited in SQL to what the
//! operator may see (the inbox's visibility rule), so counts and pages are exact. Each result
//! carries a snippet as plain text with the byte ranges to highlight: never HTML.

use std::collections::{HashMap, HashSet};

use super::Engine;
use super::knowledge::tokenizer;
use crate::store::search::{self, Doc, HitConversation, Source};
use crate::store::users::User;
use crate::store::{DbError, search::HitDoc};

/// How far back each run reads again (rows committed late: a transaction's time is taken before
/// it commits).
pub const OVERLAP_MS: i64 = 30_000;
/// Rows read per batch, and batches per source per run (a run indexes at most 5,000 rows of each).
const BATCH: i64 = 200;
const ROUNDS: usize = 25;
/// Longer terms (a URL, a token) are not indexed.
const MAX_TERM_BYTES: usize = 64;
/// A query's limits.
pub const MAX_QUERY_CHARS: usize = 200;
pub const MAX_TERMS: usize = 16;
/// Documents shown per conversation.
const PER_CONVERSATION: i64 = 3;
/// A snippet's length in characters.
const SNIPPET_CHARS: usize = 160;
/// Postings counted per term to put the rarest first.
const FREQUENCY_CAP: i64 = 10_000;

/// The distinct terms of a text, in order of first appearance.
pub fn terms_of(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    tokenizer::terms(text)
        .into_iter()
        .map(|t| t.text)
        .filter(|t| t.len() <= MAX_TERM_BYTES && seen.insert(t.clone()))
        .collect()
}

/// A piece of text with the byte ranges `[from, to)` that matched (sorted, not overlapping).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snippet {
    pub text: String,
    pub marks: Vec<(usize, usize)>,
}

/// The part of `body` around its first match, at most [`SNIPPET_CHARS`] characters (an ellipsis
/// where cut), with the terms of `terms` marked.
pub fn snippet(body: &str, terms: &HashSet<String>) -> Snippet {
    let mut marks: Vec<(usize, usize)> = Vec::new();
    for t in tokenizer::terms(body).into_iter().filter(|t| terms.contains(&t.text)) {
        match marks.last_mut() {
            Some(last) if t.offset_from <= last.1 => last.1 = last.1.max(t.offset_to),
            _ => marks.push((t.offset_from, t.offset_to)),
        }
    }
    let starts: Vec<usize> = body.char_indices().map(|(i, _)| i).collect();
    if starts.len() <= SNIPPET_CHARS {
        return Snippet { text: body.to_owned(), marks };
    }
    let first = marks.first().map(|m| m.0).unwrap_or(0);
    let first_char = starts.partition_point(|&b| b < first);
    let from_char = first_char.saturating_sub(SNIPPET_CHARS / 5).min(starts.len() - SNIPPET_CHARS);
    let to_char = from_char + SNIPPET_CHARS;
    let from = starts[from_char];
    let to = starts.get(to_char).copied().unwrap_or(body.len());
    let prefix = if from > 0 { "…" } else { "" };
    let mut text = format!("{prefix}{}", &body[from..to]);
    let shift = |b: usize| b - from + prefix.len();
    let marks = marks
        .into_iter()
        .filter(|m| m.1 > from && m.0 < to)
        .map(|(a, b)| (shift(a.max(from)), shift(b.min(to))))
        .collect();
    if to < body.len() {
        text.push('…');
    }
    Snippet { text, marks }
}

/// A matching document as the console shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub id: String,
    /// `message`, `note`, `lead`, `user` or `contact`.
    pub kind: String,
    pub at: i64,
    pub snippet: Snippet,
}

/// A conversation that matched, with its latest matching documents (those holding the query
/// as typed first).
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub conversation: HitConversation,
    pub hits: Vec<Hit>,
}

/// Why a search was refused.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("{0}")]
    Refused(&'static str),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl Engine {
    /// Indexes what changed in every source since the last run; how many documents it wrote or
    /// dropped.
    pub async fn index_search(&self) -> Result<usize, DbError> {
        let mut n = 0;
        for source in Source::ALL {
            n += self.index_source(source).await?;
        }
        Ok(n)
    }

    async fn index_source(&self, source: Source) -> Result<usize, DbError> {
        let db = self.db();
        let stored = search::cursor(db, source).await?;
        let (mut at, mut id) = stored.clone();
        let mut written = 0;
        for _ in 0..ROUNDS {
            let rows = search::changed(db, source, (at, &id), BATCH).await?;
            let Some(last) = rows.last() else { break };
            let full = rows.len() as i64 == BATCH;
            let last = (last.at, last.id.clone());
            let ids: Vec<String> = rows.iter().map(|r| source.doc_id(&r.id)).collect();
            let have = search::versions(db, &ids.iter().map(String::as_str).collect::<Vec<_>>()).await?;
            let (mut docs, mut gone) = (Vec::new(), Vec::new());
            for (r, id) in rows.into_iter().zip(ids) {
                if have.get(&id) == Some(&r.at) {
                    continue;
                }
                let terms = terms_of(&r.body);
                if terms.is_empty() {
                    if have.contains_key(&id) {
                        gone.push(id);
                    }
                    continue;
                }
                docs.push(Doc {
                    id,
                    kind: source.kind(),
                    conversation_id: r.conversation_id,
                    body: r.body,
                    version: r.at,
                    created_at: r.created_at,
                    terms,
                });
            }
            // The stored cursor never passes the overlap: the next run reads that window again.
            let safe = self.now_ms() - OVERLAP_MS;
            let cursor = if last.0 < safe { last.clone() } else { (safe, String::new()) };
            written += docs.len() + gone.len();
            if !docs.is_empty() || !gone.is_empty() || cursor > stored {
                search::put(db, source, docs, &gone, cursor).await?;
            }
            (at, id) = last;
            if !full {
                break;
            }
        }
        Ok(written)
    }

    /// One page of the conversations `user` may see whose messages, notes or leads hold every
    /// term of `query`, latest match first; and how many there are.
    pub async fn search(
        &self,
        user: &User,
        query: &str,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<Found>, i64), SearchError> {
        let query = query.trim();
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(SearchError::Refused("a search has at most 200 characters"));
        }
        let mut terms = terms_of(query);
        if terms.is_empty() {
            return Err(SearchError::Refused("type a word to search for"));
        }
        if terms.len() > MAX_TERMS {
            return Err(SearchError::Refused("a search has at most 16 words"));
        }
        let db = self.db();
        let freq = search::frequencies(db, &terms, FREQUENCY_CAP).await?;
        if freq.values().any(|&n| n == 0) {
            return Ok((Vec::new(), 0));
        }
        terms.sort_by_key(|t| freq.get(t).copied().unwrap_or(0));
        let visible_to = self.visible_to(user).await?;
        let (page, total) = search::conversations(db, &terms, visible_to.as_deref(), offset, limit).await?;
        let ids: Vec<String> = page.iter().map(|c| c.conversation_id.clone()).collect();
        let docs = search::docs(db, &terms, visible_to.as_deref(), &ids, PER_CONVERSATION).await?;
        let set: HashSet<String> = terms.into_iter().collect();
        let typed = query.to_lowercase();
        let mut by_conversation: HashMap<String, Vec<HitDoc>> = HashMap::new();
        for d in docs {
            by_conversation.entry(d.conversation_id.clone()).or_default().push(d);
        }
        let found = page
            .into_iter()
            .map(|conversation| {
                let mut docs = by_conversation.remove(&conversation.conversation_id).unwrap_or_default();
                // Phrase first: a document holding the query as typed, then the latest.
                docs.sort_by_key(|d| (!d.body.to_lowercase().contains(&typed), -d.created_at));
                let hits = docs
                    .into_iter()
                    .map(|d| Hit { snippet: snippet(&d.body, &set), id: d.id, kind: d.kind, at: d.created_at })
                    .collect();
                Found { conversation, hits }
            })
            .collect();
        Ok((found, total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(query: &str) -> HashSet<String> {
        terms_of(query).into_iter().collect()
    }

    fn marked(s: &Snippet) -> Vec<&str> {
        s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect()
    }

    #[test]
    fn chinese_and_english_are_marked_where_they_match() {
        let s = snippet("我想申请退款 please, refunds are slow", &set("退款 refund"));
        assert_eq!(marked(&s), vec!["退款", "refunds"]);
        // Overlapping bigrams make one mark.
        let s = snippet("我想申请退款", &set("申请退款"));
        assert_eq!(marked(&s), vec!["申请退款"]);
    }

    #[test]
    fn a_long_text_is_cut_around_the_first_match_with_marks_still_right() {
        let body = format!("{} 退款 {}", "很长的文字".repeat(100), "more words ".repeat(50));
        let s = snippet(&body, &set("退款"));
        assert!(s.text.starts_with('…') && s.text.ends_with('…'), "{}", s.text);
        assert!(s.text.chars().count() <= SNIPPET_CHARS + 2);
        assert_eq!(marked(&s), vec!["退款"]);
    }

    #[test]
    fn terms_are_distinct_and_long_ones_are_left_out() {
        assert_eq!(terms_of("Refunds refund REFUND"), vec!["refund"]);
        assert!(terms_of(&"x".repeat(100)).is_empty());
    }
}
