//! A tokenizer for mixed Chinese and English text: runs of CJK characters become overlapping
//! two-character terms (a lone character stays one term), other letters and digits become
//! lower-cased words, English ones reduced to their stem (Snowball: "retried" and "retry" are
//! one term). Registered with tantivy as `parley_cjk`.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Name under which the tokenizer is registered.
pub const NAME: &str = "parley_cjk";

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30ff   // kana
        | 0x3400..=0x4dbf // CJK extension A
        | 0x4e00..=0x9fff // CJK unified ideographs
        | 0xac00..=0xd7af // Hangul
        | 0xf900..=0xfaff // compatibility ideographs
    )
}

/// The English stem of a lower-cased word; other words (accents, digits) as they are.
fn stem(word: String) -> String {
    static ENGLISH: std::sync::OnceLock<rust_stemmers::Stemmer> = std::sync::OnceLock::new();
    if word.len() < 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word;
    }
    match ENGLISH.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)).stem(&word) {
        std::borrow::Cow::Borrowed(_) => word,
        std::borrow::Cow::Owned(stemmed) => stemmed,
    }
}

/// Splits `text` into search terms.
pub fn terms(text: &str) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    let push = |out: &mut Vec<Token>, from: usize, to: usize, text: String| {
        let position = out.len();
        out.push(Token { offset_from: from, offset_to: to, position, text, position_length: 1 });
    };
    while i < chars.len() {
        let (start, c) = chars[i];
        if is_cjk(c) {
            let mut j = i;
            while j < chars.len() && is_cjk(chars[j].1) {
                j += 1;
            }
            let end_of = |k: usize| chars.get(k).map(|(b, _)| *b).unwrap_or(text.len());
            if j - i == 1 {
                push(&mut out, start, end_of(i + 1), c.to_string());
            } else {
                for k in i..j - 1 {
                    let term: String = [chars[k].1, chars[k + 1].1].iter().collect();
                    push(&mut out, chars[k].0, end_of(k + 2), term);
                }
            }
            i = j;
        } else if c.is_alphanumeric() {
            let mut j = i;
            while j < chars.len() && chars[j].1.is_alphanumeric() && !is_cjk(chars[j].1) {
                j += 1;
            }
            let end = chars.get(j).map(|(b, _)| *b).unwrap_or(text.len());
            push(&mut out, start, end, stem(text[start..end].to_lowercase()));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

#[derive(Clone, Debug, Default)]
pub struct CjkTokenizer;

pub struct CjkTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for CjkTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

impl Tokenizer for CjkTokenizer {
    type TokenStream<'a> = CjkTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CjkTokenStream {
        CjkTokenStream { tokens: terms(text), next: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::terms;

    fn texts(s: &str) -> Vec<String> {
        terms(s).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn chinese_becomes_bigrams_and_english_words() {
        assert_eq!(texts("优才计划 QMAS points"), vec!["优才", "才计", "计划", "qmas", "point"]);
        assert_eq!(texts("港"), vec!["港"]);
        assert_eq!(texts("TTPS高才通B类"), vec!["ttps", "高才", "才通", "b", "类"]);
        assert!(texts("，。！ -- ").is_empty());
    }

    #[test]
    fn english_words_meet_at_their_stem() {
        assert_eq!(texts("retried retries retry"), vec!["retri", "retri", "retri"]);
        assert_eq!(texts("Deliveries delivery"), texts("delivery deliveries"));
        // Digits, codes and accented words stay as they are.
        assert_eq!(texts("LC-7 2019 café"), vec!["lc", "7", "2019", "café"]);
    }

    #[test]
    fn offsets_point_at_the_text() {
        let text = "申请IANG";
        for t in terms(text) {
            let slice = &text[t.offset_from..t.offset_to];
            assert_eq!(slice.to_lowercase(), t.text);
        }
    }
}
