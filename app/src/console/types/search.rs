//! Search results as the console shows them (issue 43, part 4): conversations, each with its
//! matching messages, notes and leads as plain text plus the ranges to highlight.

use serde::{Deserialize, Serialize};

/// A conversation whose texts hold every word searched for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    pub conversation_id: String,
    pub agent_name: String,
    pub status: String,
    /// When the latest matching text was written (Unix ms), and how many texts matched.
    pub last_at: i64,
    pub matches: i64,
    /// The latest matching texts (at most three; those holding the words as typed first).
    pub hits: Vec<SearchHit>,
}

/// A matching text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// `message`, `note` (operators only), `lead` or `user` (the visitor's identified user).
    pub kind: String,
    pub at: i64,
    /// Plain text, never HTML; `marks` are the matching parts as `[from, to)` character
    /// offsets (Unicode scalar values) into it, sorted and apart.
    pub snippet: String,
    pub marks: Vec<(u32, u32)>,
}

impl SearchHit {
    /// The snippet cut into `(text, matched)` pieces, for a renderer that wraps matches in
    /// `<mark>` (as text nodes: nothing is parsed as HTML).
    pub fn pieces(&self) -> Vec<(String, bool)> {
        let chars: Vec<char> = self.snippet.chars().collect();
        let mut out = Vec::new();
        let mut at = 0usize;
        for &(from, to) in &self.marks {
            let (from, to) = (from as usize, (to as usize).min(chars.len()));
            if from < at || from >= to {
                continue;
            }
            if from > at {
                out.push((chars[at..from].iter().collect(), false));
            }
            out.push((chars[from..to].iter().collect(), true));
            at = to;
        }
        if at < chars.len() {
            out.push((chars[at..].iter().collect(), false));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::SearchHit;

    #[test]
    fn pieces_follow_the_marks_and_skip_bad_ones() {
        let hit = SearchHit {
            kind: "message".into(),
            at: 0,
            snippet: "我想申请退款 <b>now</b>".into(),
            marks: vec![(4, 6), (3, 5), (20, 30)],
        };
        assert_eq!(
            hit.pieces(),
            vec![("我想申请".into(), false), ("退款".into(), true), (" <b>now</b>".into(), false)]
        );
    }
}
