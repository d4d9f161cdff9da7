//! One conversation's facts for the reports (`docs/reports.md` defines each), worked out from its
//! raw rows: what the roll-up table `report_conversations` holds.

use std::collections::HashMap;

use parley_protocol::{MessageStatus, Role};

use crate::store::hours::BusinessHours;
use crate::store::reports::{Facts, MsgRow, Raw};
use crate::store::unanswered::{Reason, tool_signal};

/// The facts of `raw`'s conversation; `None` for a trial or a conversation that is gone.
/// `hours`: its agent's business hours; `user_ids`: console users' ids by name (replies written
/// before messages kept their author's id).
pub fn compute(raw: Raw, hours: Option<&BusinessHours>, user_ids: &HashMap<String, String>) -> Option<Facts> {
    let conv = raw.conv?;
    if conv.trial != 0 {
        return None;
    }
    let messages: Vec<&MsgRow> =
        raw.messages.iter().filter(|m| Role::parse(&m.role).is_some_and(|r| r != Role::System)).collect();
    let is = |m: &MsgRow, role: Role| m.role == role.as_str();
    let complete = |m: &MsgRow| m.status == MessageStatus::Complete.as_str();
    let answered = messages.iter().any(|m| is(m, Role::Assistant) && complete(m));
    let version = messages.iter().find(|m| is(m, Role::Assistant)).and_then(|m| m.agent_version);
    let last_activity_at = messages.iter().map(|m| m.created_at).fold(conv.created_at, i64::max);
    // The first visitor message since the last reply (an answer or a person's).
    let mut unreplied_since = None;
    for m in &messages {
        if is(m, Role::Visitor) {
            unreplied_since = unreplied_since.or(Some(m.created_at));
        } else if is(m, Role::Operator) || (is(m, Role::Assistant) && complete(m)) {
            unreplied_since = None;
        }
    }
    let to_of = |data: &str| {
        serde_json::from_str::<serde_json::Value>(data).ok().and_then(|v| v["to"].as_str().map(str::to_owned))
    };
    let changes: Vec<(String, i64)> =
        raw.handoffs.iter().filter_map(|h| to_of(&h.data).map(|to| (to, h.created_at))).collect();
    let handover = changes.iter().find(|(to, _)| to == "waiting" || to == "human");
    let handed_over_at = handover.map(|(_, at)| *at);
    let author_of =
        |m: &MsgRow| m.author_id.clone().or_else(|| m.author.as_ref().and_then(|name| user_ids.get(name).cloned()));
    let mut handlers: Vec<(String, i64)> = Vec::new();
    for m in messages.iter().filter(|m| is(m, Role::Operator)) {
        if let Some(user) = author_of(m)
            && !handlers.iter().any(|(u, _)| *u == user)
        {
            handlers.push((user, m.created_at));
        }
    }
    let (mut reason, mut first_response, mut closed_by_person_at) = (None, None, None);
    if let Some((to, at)) = handover {
        let at = *at;
        // The visitor asked: the contact form (a `waiting` hand-over) or the escalation tool before it.
        let asked = to == "waiting"
            || raw.tools.iter().any(|t| t.created_at <= at && tool_signal(&t.name, None) == Some(Reason::Escalated));
        // The last exchange before it: from the visitor's last message up to the hand-over.
        let asked_at = messages.iter().rev().find(|m| is(m, Role::Visitor) && m.created_at <= at).map(|m| m.created_at);
        let since = asked_at.unwrap_or(conv.created_at);
        let unsure = raw.tools.iter().any(|t| {
            (since..=at).contains(&t.created_at)
                && matches!(tool_signal(&t.name, t.result.as_deref()), Some(Reason::NothingFound | Reason::OffTopic))
        }) || messages.iter().any(|m| {
            is(m, Role::Assistant) && (since..=at).contains(&m.created_at) && m.status == MessageStatus::Failed.as_str()
        });
        reason = Some(if asked {
            "asked"
        } else if unsure {
            "low_confidence"
        } else {
            "business_rule"
        });
        first_response = messages.iter().find(|m| is(m, Role::Operator) && m.created_at >= at);
        closed_by_person_at = changes.iter().find(|(to, t)| to == "closed" && *t >= at).map(|(_, t)| *t);
    }
    let business = |from: i64, to: i64| hours.map_or(to - from, |h| h.open_ms_between(from, to));
    let (mut thumbs_up, mut thumbs_down, mut csat) = (0, 0, None);
    for r in &raw.ratings {
        match (r.message_id.is_empty(), r.score) {
            (true, s) => csat = Some(s),
            (false, s) if s > 0 => thumbs_up += 1,
            (false, _) => thumbs_down += 1,
        }
    }
    Some(Facts {
        conversation_id: conv.id,
        agent_id: conv.agent_id,
        team_id: conv.team_id,
        person_id: conv.person_id,
        created_at: conv.created_at,
        version,
        messages: messages.len() as i64,
        answered,
        closed: conv.status == "closed",
        last_activity_at,
        unreplied_since,
        handed_over_at,
        handover_reason: reason,
        first_response_at: first_response.map(|m| m.created_at),
        first_response_by: first_response.and_then(|m| author_of(m)),
        first_response_business_ms: handed_over_at.zip(first_response).map(|(a, m)| business(a, m.created_at)),
        closed_by_person_at,
        resolution_business_ms: handed_over_at.zip(closed_by_person_at).map(|(a, c)| business(a, c)),
        rated_down: thumbs_down > 0 || csat.is_some_and(|s| s <= 2),
        thumbs_up,
        thumbs_down,
        csat,
        spend_usd: raw.spend_usd,
        handlers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::reports::{ConvRow, HandoffRow, RatingRow, ToolRow};

    const MIN: i64 = 60_000;

    fn msg(role: &str, status: &str, at: i64) -> MsgRow {
        MsgRow {
            conversation_id: "c".into(),
            role: role.into(),
            status: status.into(),
            author: (role == "operator").then(|| "Ann".into()),
            author_id: None,
            agent_version: (role == "assistant").then_some(3),
            created_at: at,
        }
    }

    fn raw(messages: Vec<MsgRow>) -> Raw {
        Raw {
            conv: Some(ConvRow {
                id: "c".into(),
                agent_id: "a".into(),
                team_id: None,
                person_id: "p".into(),
                status: "bot".into(),
                created_at: 0,
                trial: 0,
            }),
            messages,
            ..Raw::default()
        }
    }

    fn handoff(to: &str, at: i64) -> HandoffRow {
        HandoffRow { conversation_id: "c".into(), data: format!(r#"{{"to":"{to}"}}"#), created_at: at }
    }

    fn users() -> HashMap<String, String> {
        HashMap::from([("Ann".to_owned(), "u-ann".to_owned())])
    }

    #[test]
    fn an_answered_conversation_without_a_person() {
        let f = compute(raw(vec![msg("visitor", "complete", 0), msg("assistant", "complete", MIN)]), None, &users())
            .unwrap();
        assert!(f.answered && f.handed_over_at.is_none() && f.unreplied_since.is_none() && !f.rated_down);
        assert_eq!((f.version, f.messages, f.last_activity_at), (Some(3), 2, MIN));
    }

    #[test]
    fn a_question_left_without_a_reply_is_unreplied() {
        let f = compute(
            raw(vec![
                msg("visitor", "complete", 0),
                msg("assistant", "complete", MIN),
                msg("visitor", "complete", 2 * MIN),
                msg("assistant", "failed", 3 * MIN),
            ]),
            None,
            &users(),
        )
        .unwrap();
        assert_eq!(f.unreplied_since, Some(2 * MIN));
    }

    #[test]
    fn hand_over_reasons_and_times() {
        // The visitor filled in the contact form: asked; Ann answered 5 minutes later and closed it.
        let mut r = raw(vec![
            msg("visitor", "complete", 0),
            msg("assistant", "complete", MIN),
            msg("operator", "complete", 6 * MIN),
        ]);
        r.handoffs = vec![handoff("waiting", MIN), handoff("human", 2 * MIN), handoff("closed", 10 * MIN)];
        let f = compute(r.clone(), None, &users()).unwrap();
        assert_eq!(f.handover_reason, Some("asked"));
        assert_eq!(
            (f.handed_over_at, f.first_response_at, f.closed_by_person_at),
            (Some(MIN), Some(6 * MIN), Some(10 * MIN))
        );
        assert_eq!((f.first_response_business_ms, f.resolution_business_ms), (Some(5 * MIN), Some(9 * MIN)));
        assert_eq!(f.first_response_by.as_deref(), Some("u-ann"));
        assert_eq!(f.handlers, vec![("u-ann".to_owned(), 6 * MIN)]);

        // Knowledge search found nothing before an operator stepped in: low confidence.
        r.handoffs = vec![handoff("human", 2 * MIN)];
        r.tools = vec![ToolRow {
            conversation_id: "c".into(),
            name: "search_knowledge".into(),
            result: Some(r#"{"success":true,"sources":[]}"#.into()),
            created_at: MIN,
        }];
        assert_eq!(compute(r.clone(), None, &users()).unwrap().handover_reason, Some("low_confidence"));
        // It found something: the operator's own choice (a business rule).
        r.tools[0].result = Some(r#"{"success":true,"sources":[{"title":"x"}]}"#.into());
        assert_eq!(compute(r.clone(), None, &users()).unwrap().handover_reason, Some("business_rule"));
        // The escalation tool before the claim: asked.
        r.tools.push(ToolRow {
            conversation_id: "c".into(),
            name: "escalate_to_human".into(),
            result: None,
            created_at: MIN,
        });
        assert_eq!(compute(r, None, &users()).unwrap().handover_reason, Some("asked"));
    }

    #[test]
    fn ratings_thumbs_and_trials() {
        let mut r = raw(vec![msg("visitor", "complete", 0), msg("assistant", "complete", MIN)]);
        let rating = |m: &str, score| RatingRow { conversation_id: "c".into(), message_id: m.into(), score };
        r.ratings = vec![rating("m1", 1), rating("", 4)];
        let f = compute(r.clone(), None, &users()).unwrap();
        assert_eq!((f.thumbs_up, f.thumbs_down, f.csat, f.rated_down), (1, 0, Some(4), false));
        r.ratings = vec![rating("", 2)];
        assert!(compute(r.clone(), None, &users()).unwrap().rated_down);
        r.conv.as_mut().unwrap().trial = 1;
        assert!(compute(r, None, &users()).is_none());
    }
}
