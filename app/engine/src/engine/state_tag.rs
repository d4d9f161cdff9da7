//! The coordinator ends each reply with `<consulting_state>{…}</consulting_state>` (seed 003).
//! [`StateFilter`] takes the model's text piece by piece as it streams and gives back only what the
//! visitor may see: text that could still turn out to be the start of the tag is held back until
//! the next piece settles it, and everything inside the tag is kept aside. The visitor never sees
//! the tag, not even for a moment.
//!
//! A tag that is never closed cannot hide the answer: past [`MAX_STATE`] bytes what it holds is
//! shown after all (a state is a small JSON object), and when the text ends inside the tag, a
//! JSON object at its start is taken as the state and the rest is shown (a state cut off in the
//! middle of its JSON is dropped).

use serde_json::{Value, json};

const OPEN: &str = "<consulting_state>";
const CLOSE: &str = "</consulting_state>";
/// The most a state may hold before the tag is taken for text.
pub const MAX_STATE: usize = 4096;

/// The stages a consultation goes through.
pub const STAGES: &[&str] = &["opening", "needs", "info_collection", "assessment", "objection_handling", "conversion"];

#[derive(Debug, Default)]
pub struct StateFilter {
    /// Text not yet shown (a possible start of the tag) or not yet sorted.
    held: String,
    /// Inside the tag: what it holds so far.
    inside: Option<String>,
    /// Complete tags seen, in order.
    found: Vec<String>,
}

/// The longest end of `s` that is a proper beginning of `tag`.
fn partial_suffix(s: &str, tag: &str) -> usize {
    (1..tag.len().min(s.len() + 1))
        .rev()
        .find(|&n| s.is_char_boundary(s.len() - n) && tag.starts_with(&s[s.len() - n..]))
        .unwrap_or(0)
}

impl StateFilter {
    /// Takes the next piece of model text; returns what can be shown now.
    pub fn push(&mut self, piece: &str) -> String {
        self.held.push_str(piece);
        let mut visible = String::new();
        loop {
            match self.inside.as_mut() {
                Some(inside) => {
                    if let Some(i) = self.held.find(CLOSE) {
                        inside.push_str(&self.held[..i]);
                        self.found.push(std::mem::take(inside));
                        self.inside = None;
                        self.held.drain(..i + CLOSE.len());
                        continue;
                    }
                    let keep = partial_suffix(&self.held, CLOSE);
                    let cut = self.held.len() - keep;
                    inside.push_str(&self.held[..cut]);
                    self.held.drain(..cut);
                    if inside.len() > MAX_STATE {
                        // Not a state: an opened tag was left open. Show what it held.
                        visible.push_str(&std::mem::take(inside));
                        self.inside = None;
                        continue;
                    }
                    break;
                }
                None => {
                    if let Some(i) = self.held.find(OPEN) {
                        visible.push_str(&self.held[..i]);
                        self.held.drain(..i + OPEN.len());
                        self.inside = Some(String::new());
                        continue;
                    }
                    let keep = partial_suffix(&self.held, OPEN);
                    let cut = self.held.len() - keep;
                    visible.push_str(&self.held[..cut]);
                    self.held.drain(..cut);
                    break;
                }
            }
        }
        visible
    }

    /// The model's text ended: what was held back and is not a tag. In a tag left open, a JSON
    /// object at its start is the state and the text after it is shown; otherwise all it holds is
    /// shown (without the tag).
    pub fn finish(&mut self) -> String {
        let Some(mut inside) = self.inside.take() else { return std::mem::take(&mut self.held) };
        inside.push_str(&std::mem::take(&mut self.held));
        let body = inside.trim_start();
        let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(_))) => {
                let end = values.byte_offset();
                self.found.push(body[..end].to_owned());
                body[end..].trim_start().to_owned()
            }
            // A state cut off in the middle of its JSON.
            Some(Err(e)) if body.starts_with('{') && e.is_eof() => String::new(),
            _ => inside,
        }
    }

    /// The last complete state reported, parsed; taken (the next reply starts afresh).
    pub fn take_state(&mut self) -> Option<Value> {
        let last = self.found.pop()?;
        self.found.clear();
        Some(parse_state(&last))
    }
}

/// A state as JSON: `{"stage": …, "collected": {…}, …}`. Text that is not a JSON object is kept as
/// `{"note": text}`; an unknown stage is dropped rather than trusted.
pub fn parse_state(raw: &str) -> Value {
    let raw = raw.trim();
    let mut value = match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => json!({ "note": raw.chars().take(2000).collect::<String>() }),
    };
    if let Some(stage) = value.get("stage").and_then(Value::as_str).map(str::to_owned)
        && !STAGES.contains(&stage.as_str())
        && let Some(map) = value.as_object_mut()
    {
        map.remove("stage");
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pieces: &[&str]) -> (String, Vec<String>, Option<Value>) {
        let mut f = StateFilter::default();
        let mut shown = Vec::new();
        for p in pieces {
            shown.push(f.push(p));
        }
        shown.push(f.finish());
        let all = shown.concat();
        (all, shown, f.take_state())
    }

    #[test]
    fn the_tag_never_shows_whatever_the_split() {
        let text =
            "您好，欢迎咨询！<consulting_state>{\"stage\":\"needs\",\"collected\":{\"age\":30}}</consulting_state>";
        let chars: Vec<char> = text.chars().collect();
        // Every split into two and three pieces.
        for i in 0..=chars.len() {
            for j in i..=chars.len() {
                let a: String = chars[..i].iter().collect();
                let b: String = chars[i..j].iter().collect();
                let c: String = chars[j..].iter().collect();
                let (all, shown, state) = run(&[&a, &b, &c]);
                assert_eq!(all, "您好，欢迎咨询！", "split at {i},{j}");
                for s in shown {
                    assert!(!s.contains('<') && !s.contains("stage"), "{s:?} shown at split {i},{j}");
                }
                assert_eq!(state.unwrap(), json!({"stage": "needs", "collected": {"age": 30}}));
            }
        }
    }

    #[test]
    fn text_that_only_looks_like_the_tag_is_shown() {
        let (all, _, state) = run(&["a < b and <consult", "ing> c <"]);
        assert_eq!(all, "a < b and <consulting> c <");
        assert!(state.is_none());
    }

    #[test]
    fn text_after_the_tag_is_shown_and_cut_off_states_are_dropped() {
        let (all, _, state) = run(&["x<consulting_state>{\"stage\":\"opening\"}</consulting_state>y"]);
        assert_eq!((all.as_str(), state), ("xy", Some(json!({"stage": "opening"}))));
        let (all, _, state) = run(&["x<consulting_state>{\"stage\":", "\"open"]);
        assert_eq!((all.as_str(), state), ("x", None));
    }

    #[test]
    fn a_tag_left_open_does_not_hide_the_answer() {
        // The state, then the answer, and the tag never closed.
        let (all, _, state) = run(&["Hi. <consulting_state>{\"stage\":\"needs\"} ", "Which visa?"]);
        assert_eq!((all.as_str(), state), ("Hi. Which visa?", Some(json!({"stage": "needs"}))));
        // Text that is no state at all, e.g. quoted from a web page.
        let (all, _, state) = run(&["a <consulting_state> b ", "c"]);
        assert_eq!((all.as_str(), state), ("a  b c", None));
        // A long answer after an open tag shows as it streams, not only at the end.
        let mut f = StateFilter::default();
        let mut shown = f.push("<consulting_state>");
        for _ in 0..300 {
            shown.push_str(&f.push("more words of the answer "));
        }
        assert!(shown.len() > MAX_STATE, "shown while streaming: {} bytes", shown.len());
        assert!(!shown.contains("consulting_state"));
    }

    #[test]
    fn odd_states_are_kept_safely() {
        assert_eq!(parse_state("stage: needs"), json!({"note": "stage: needs"}));
        assert_eq!(parse_state("{\"stage\":\"<script>\",\"x\":1}"), json!({"x": 1}));
    }
}
