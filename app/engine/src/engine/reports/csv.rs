//! A report as CSV: one figure per line, `section,key,figure,value`, in the order the Reports page
//! shows them (`summary` current and previous, each `day`/`week`, `version`, `operator`, `model`,
//! `orders`, `unanswered`), so that a spreadsheet can pivot it and a test can compare it with
//! the page's JSON. Rates are fractions (0.25), money in US dollars or minor units as named,
//! times in milliseconds.

use parley_protocol::report::{Durations, Figures, Report};

/// A cell that a spreadsheet must not read as a formula, quoted when it needs to be.
fn cell(value: &str) -> String {
    let safe = if value.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{value}") } else { value.to_owned() };
    if safe.contains([',', '"', '\n', '\r']) { format!("\"{}\"", safe.replace('"', "\"\"")) } else { safe }
}

fn opt(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.4}")).unwrap_or_default()
}

fn opt_ms(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The figures of [`Figures`] as (name, value) pairs, in one fixed order.
pub fn figures(f: &Figures) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = [
        ("conversations", f.conversations.to_string()),
        ("visitors", f.visitors.to_string()),
        ("messages", f.messages.to_string()),
        ("settled", f.settled.to_string()),
        ("ai_resolved", f.ai_resolved.to_string()),
        ("ai_resolution_rate", opt(f.ai_resolution_rate())),
        ("handed_over", f.handed_over.to_string()),
        ("handover_rate", opt(f.handover_rate())),
        ("handover_asked_for_person", f.asked_for_person.to_string()),
        ("handover_low_confidence", f.low_confidence.to_string()),
        ("handover_business_rule", f.business_rule.to_string()),
        ("abandoned", f.abandoned.to_string()),
        ("abandoned_rate", opt(f.abandoned_rate())),
        ("thumbs_up", f.thumbs_up.to_string()),
        ("thumbs_down", f.thumbs_down.to_string()),
        ("thumbs_up_rate", opt(f.thumbs_up_rate())),
        ("rated", f.rated.to_string()),
        ("csat", opt(f.csat())),
        ("spend_usd", format!("{:.6}", f.spend_usd)),
        ("spend_per_resolved_usd", f.spend_per_resolved().map(|v| format!("{v:.6}")).unwrap_or_default()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    out.extend(durations("first_response", &f.first_response));
    out.extend(durations("resolution", &f.resolution));
    out
}

fn durations(name: &str, d: &Durations) -> Vec<(String, String)> {
    vec![
        (format!("{name}_count"), d.count.to_string()),
        (format!("{name}_median_ms"), opt_ms(d.median_ms)),
        (format!("{name}_p90_ms"), opt_ms(d.p90_ms)),
        (format!("{name}_business_median_ms"), opt_ms(d.business_median_ms)),
        (format!("{name}_business_p90_ms"), opt_ms(d.business_p90_ms)),
    ]
}

/// The whole report as CSV text.
pub fn to_csv(r: &Report) -> String {
    let mut out = String::from("section,key,figure,value\n");
    let mut line = |section: &str, key: &str, figure: &str, value: &str| {
        out.push_str(&format!("{},{},{},{}\n", cell(section), cell(key), cell(figure), cell(value)));
    };
    let q = &r.query;
    for (figure, value) in [
        ("from", q.from.as_str()),
        ("to", q.to.as_str()),
        ("previous_from", r.previous_from.as_str()),
        ("previous_to", r.previous_to.as_str()),
        ("time_zone", q.time_zone.as_str()),
        ("by", q.by.as_str()),
        ("agent_id", q.agent_id.as_str()),
        ("team_id", q.team_id.as_str()),
        ("operator_id", q.operator_id.as_str()),
    ] {
        line("query", "", figure, value);
    }
    line("query", "", "version", &q.version.map(|v| v.to_string()).unwrap_or_default());
    for (key, f) in [("current", &r.current), ("previous", &r.previous)] {
        for (figure, value) in figures(f) {
            line("summary", key, &figure, &value);
        }
    }
    let section = if q.by == "week" { "week" } else { "day" };
    for b in &r.buckets {
        for (figure, value) in figures(&b.figures) {
            line(section, &b.start, &figure, &value);
        }
        for (model, usd) in r.models.iter().zip(&b.spend_by_model) {
            line(section, &b.start, &format!("spend_usd:{model}"), &format!("{usd:.6}"));
        }
    }
    for v in &r.versions {
        let key = v.version.map(|v| v.to_string()).unwrap_or_else(|| "none".into());
        for (figure, value) in figures(&v.figures) {
            line("version", &key, &figure, &value);
        }
    }
    for o in &r.operators {
        line("operator", &o.user_id, "name", &o.name);
        line("operator", &o.user_id, "handled", &o.handled.to_string());
        for (figure, value) in durations("first_response", &o.first_response) {
            line("operator", &o.user_id, &figure, &value);
        }
        line("operator", &o.user_id, "rated", &o.rated.to_string());
        line("operator", &o.user_id, "csat", &opt(parley_protocol::report::ratio(o.rated_good, o.rated)));
    }
    for m in &r.spend_by_model {
        line("model", &m.model, "usd", &format!("{:.6}", m.usd));
        line("model", &m.model, "trial_usd", &format!("{:.6}", m.trial_usd));
    }
    for o in &r.orders {
        line("orders", &o.currency, "orders", &o.orders.to_string());
        line("orders", &o.currency, "paid", &o.paid.to_string());
        line("orders", &o.currency, "paid_minor", &o.paid_minor.to_string());
    }
    for t in &r.unanswered {
        line("unanswered", &t.question, "count", &t.count.to_string());
        line("unanswered", &t.question, "gap", &t.gap);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_and_defused() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(cell("say \"hi\", ok"), "\"say \"\"hi\"\", ok\"");
    }

    #[test]
    fn a_report_flattens_one_figure_a_line() {
        let mut r = Report::default();
        r.query.by = "day".into();
        r.current.conversations = 4;
        r.current.settled = 4;
        r.current.ai_resolved = 3;
        let text = to_csv(&r);
        assert!(text.contains("summary,current,conversations,4\n"), "{text}");
        assert!(text.contains("summary,current,ai_resolution_rate,0.7500\n"), "{text}");
        assert!(text.contains("summary,previous,ai_resolution_rate,\n"), "{text}");
    }
}
