//! Judging a trial's answer against a case's checks: all but [`Check::Judge`] need no model and
//! are decided here from what the trial stored.

use crate::store::answer_tests::{Check, CheckOutcome};

use super::TrialAnswer;

/// The outcome of a check that needs no model; `None` for a [`Check::Judge`].
pub fn evaluate(check: &Check, trial: &TrialAnswer) -> Option<CheckOutcome> {
    let answer = trial.answer.to_lowercase();
    let called = |tool: &str| trial.tool_calls.iter().any(|c| c.name == tool);
    let names = || {
        let names: Vec<&str> = trial.tool_calls.iter().map(|c| c.name.as_str()).collect();
        if names.is_empty() { "no tool was called".to_owned() } else { format!("called: {}", names.join(", ")) }
    };
    let (passed, detail) = match check {
        Check::Contains { text } => {
            let found = answer.contains(&text.to_lowercase());
            (found, if found { "found in the answer".into() } else { "not in the answer".into() })
        }
        Check::NotContains { text } => {
            let found = answer.contains(&text.to_lowercase());
            (!found, if found { "found in the answer".into() } else { "not in the answer".into() })
        }
        Check::CallsTool { tool } => (called(tool), names()),
        Check::NotCallsTool { tool } => (!called(tool), names()),
        Check::Cites { source } => {
            let wanted = source.to_lowercase();
            let cited = trial.sources.iter().any(|s| s.to_lowercase().contains(&wanted));
            let detail = if trial.sources.is_empty() {
                "no source was cited".to_owned()
            } else {
                format!("cited: {}", trial.sources.join("; "))
            };
            (cited, detail)
        }
        Check::HandsOver => (trial.handed_over, hand_over_detail(trial.handed_over)),
        Check::NoHandOver => (!trial.handed_over, hand_over_detail(trial.handed_over)),
        Check::MaxCost { usd } => (trial.cost_usd <= *usd, format!("cost ${:.6}", trial.cost_usd)),
        Check::Judge { .. } => return None,
    };
    // An answer that did not complete passes nothing but the checks of what it did not do.
    let incomplete = trial.status != "complete";
    let passed = passed && !(incomplete && matches!(check, Check::Contains { .. } | Check::Cites { .. }));
    Some(CheckOutcome { check: check.clone(), passed, detail })
}

fn hand_over_detail(handed_over: bool) -> String {
    if handed_over { "a person was offered".into() } else { "no person was offered".into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::answer_tests::CalledTool;

    fn trial() -> TrialAnswer {
        TrialAnswer {
            conversation_id: "c".into(),
            answer: "The QMAS scheme needs a points test.".into(),
            status: "complete".into(),
            tool_calls: vec![CalledTool {
                name: "search_knowledge".into(),
                arguments: "{}".into(),
                status: "succeeded".into(),
            }],
            sources: vec!["QMAS — eligibility (https://example.test/qmas)".into()],
            handed_over: false,
            cost_usd: 0.002,
            duration_ms: 10,
        }
    }

    fn passes(check: Check) -> bool {
        evaluate(&check, &trial()).unwrap().passed
    }

    #[test]
    fn each_check_passes_and_fails_when_it_should() {
        assert!(passes(Check::Contains { text: "points TEST".into() }));
        assert!(!passes(Check::Contains { text: "visa fee".into() }));
        assert!(passes(Check::NotContains { text: "visa fee".into() }));
        assert!(!passes(Check::NotContains { text: "qmas".into() }));
        assert!(passes(Check::CallsTool { tool: "search_knowledge".into() }));
        assert!(!passes(Check::CallsTool { tool: "generate_payment".into() }));
        assert!(passes(Check::NotCallsTool { tool: "generate_payment".into() }));
        assert!(!passes(Check::NotCallsTool { tool: "search_knowledge".into() }));
        assert!(passes(Check::Cites { source: "eligibility".into() }));
        assert!(passes(Check::Cites { source: "example.test/qmas".into() }));
        assert!(!passes(Check::Cites { source: "refund policy".into() }));
        assert!(passes(Check::NoHandOver));
        assert!(!passes(Check::HandsOver));
        assert!(passes(Check::MaxCost { usd: 0.002 }));
        assert!(!passes(Check::MaxCost { usd: 0.001 }));
        assert!(evaluate(&Check::Judge { criterion: "polite".into(), model: "m".into() }, &trial()).is_none());
    }

    #[test]
    fn a_failed_answer_contains_nothing() {
        let mut t = trial();
        t.status = "failed".into();
        assert!(!evaluate(&Check::Contains { text: "qmas".into() }, &t).unwrap().passed);
        assert!(evaluate(&Check::NotContains { text: "fee".into() }, &t).unwrap().passed);
    }
}
