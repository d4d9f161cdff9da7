//! `/admin/reports` (administrators; issue 45, part 1): a period's figures against the period
//! before — volume, resolution and hand-over rates, response times, satisfaction, spend — as
//! tiles, four charts (each also a table), the tables of operators, versions, models, orders and
//! unanswered topics, and the same report as CSV or JSON. The figures are defined in
//! `docs/reports.md` and computed by the server; this page only draws them.

use leptos::prelude::*;
use parley_widget::protocol::report::{Durations, Figures, Report, ReportQuery, ratio};

use super::api::reports::{report, report_options};
use super::charts::{Chart, Kind, Series, Unit};
use super::error::ConsoleError;
use super::fields::{Errors, SelectField, TextInput, bind};
use super::loaded::Failure;
use super::types::ReportOptions;

/// How many days the page shows at first, ending today.
const DEFAULT_DAYS: i64 = 30;

#[component]
pub fn ReportsPage() -> impl IntoView {
    let start = default_query();
    // What the form holds, and the query of the report shown (the form's, once sent).
    let draft = RwSignal::new(start.clone());
    let applied = RwSignal::new(start);
    let data = Resource::new(move || applied.get(), report);
    let options = Resource::new(|| (), |_| report_options());
    let errors: Errors = RwSignal::new(Vec::new());
    Effect::new(move |_| {
        if let Some(answer) = data.get() {
            errors.set(match answer {
                Err(ConsoleError::Invalid(fields)) => fields,
                _ => Vec::new(),
            });
        }
    });
    // In the browser: its own time zone and today, instead of the server's UTC.
    Effect::new(move |_| {
        let Some(zone) = browser_time_zone() else { return };
        let mut q = draft.get_untracked();
        q.time_zone = zone;
        let (from, to) = default_days();
        (q.from, q.to) = (from, to);
        if q != applied.get_untracked() {
            draft.set(q.clone());
            applied.set(q);
        }
    });
    let send = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        applied.set(draft.get_untracked());
    };
    view! {
        <h1>"Reports"</h1>
        <form class="c-form c-card r-filters" id="r-filters" on:submit=send novalidate=true aria-labelledby="r-filters-h">
            <h2 id="r-filters-h">"Period and filters"</h2>
            <div class="r-fields">
                <TextInput id="r-from" label="From" field="from" kind="date" value=bind!(draft.from) errors />
                <TextInput id="r-to" label="To" field="to" kind="date" value=bind!(draft.to) errors />
                <SelectField id="r-by" label="Group by" field="by" value=bind!(draft.by) errors
                    options=&[("day", "Day"), ("week", "Week (from Monday)")] />
                <TextInput id="r-time-zone" label="Time zone" field="time_zone" value=bind!(draft.time_zone) errors
                    placeholder="Europe/Paris" autocomplete="off" />
                <Transition fallback=|| view! { <p class="c-loading">"Loading the filters…"</p> }>
                    {move || Suspend::new(async move {
                        match options.await {
                            Ok(o) => view! { <Choices o draft /> }.into_any(),
                            Err(error) => view! { <Failure error /> }.into_any(),
                        }
                    })}
                </Transition>
            </div>
            <div class="c-actions">
                <button type="submit" class="c-primary" id="r-apply">"Show the report"</button>
                <a class="c-button" id="r-csv" href=move || export_href("csv", &applied.get()) download="">"Download CSV"</a>
                <a class="c-button" id="r-json" href=move || export_href("json", &applied.get()) download="">"Download JSON"</a>
            </div>
        </form>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(r) => view! { <ReportView r /> }.into_any(),
                    Err(ConsoleError::Invalid(_)) => view! {
                        <p class="c-error" role="alert" id="r-invalid">"Please correct the filters marked above."</p>
                    }.into_any(),
                    Err(error) => view! { <Failure error /> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// The agent, team, operator and version to narrow the report to.
#[component]
fn Choices(o: ReportOptions, draft: RwSignal<ReportQuery>) -> impl IntoView {
    let ReportOptions { agents, teams, operators, versions } = o;
    let versions = StoredValue::new(versions);
    let agent_versions = move || {
        let agent = draft.with(|q| q.agent_id.clone());
        versions.with_value(|all| all.iter().find(|(id, _)| *id == agent).map(|(_, v)| v.clone()).unwrap_or_default())
    };
    let version_text = move || draft.with(|q| q.version.map(|v| v.to_string()).unwrap_or_default());
    view! {
        <Choice id="r-agent" label="Agent" all="All agents" choices=agents
            get=|q| q.agent_id.clone() set=|q, v| { q.agent_id = v; q.version = None; } draft />
        <Choice id="r-team" label="Team" all="All teams" choices=teams
            get=|q| q.team_id.clone() set=|q, v| q.team_id = v draft />
        <Choice id="r-operator" label="Operator" all="All operators" choices=operators
            get=|q| q.operator_id.clone() set=|q, v| q.operator_id = v draft />
        <Show when=move || draft.with(|q| !q.agent_id.is_empty())>
            <div class="c-field">
                <label for="r-version">"Version"</label>
                <select id="r-version" on:change=move |ev| {
                    let v = event_target_value(&ev).parse::<i64>().ok();
                    draft.update(|q| q.version = v);
                }>
                    <option value="" selected=move || version_text().is_empty()>"All versions"</option>
                    {move || agent_versions().into_iter().map(|v| {
                        let text = v.to_string();
                        let mine = text.clone();
                        view! { <option value=text selected=move || version_text() == mine>{format!("Version {v}")}</option> }
                    }).collect_view()}
                </select>
            </div>
        </Show>
    }
}

/// A select of `(id, name)` choices, and "all" (the empty id).
#[component]
fn Choice(
    id: &'static str,
    label: &'static str,
    all: &'static str,
    choices: Vec<(String, String)>,
    get: fn(&ReportQuery) -> String,
    set: fn(&mut ReportQuery, String),
    draft: RwSignal<ReportQuery>,
) -> impl IntoView {
    let current = move || draft.with(get);
    view! {
        <div class="c-field">
            <label for=id>{label}</label>
            <select id=id on:change=move |ev| {
                let v = event_target_value(&ev);
                draft.update(|q| set(q, v));
            }>
                <option value="" selected=move || current().is_empty()>{all}</option>
                {choices.into_iter().map(|(value, name)| {
                    let mine = value.clone();
                    view! { <option value=value selected=move || current() == mine>{name}</option> }
                }).collect_view()}
            </select>
        </div>
    }
}

/// The loaded report.
#[component]
fn ReportView(r: Report) -> impl IntoView {
    let q = &r.query;
    let weeks = q.by == "week";
    let zone = if q.time_zone.is_empty() { "UTC".to_owned() } else { q.time_zone.clone() };
    let empty = r.current.conversations == 0;
    view! {
        <section class="c-card" aria-labelledby="r-period-h" id="r-period">
            <h2 id="r-period-h">{format!("{} to {}", q.from, q.to)}</h2>
            <p>
                {format!("Days in {zone}, {}; compared with the period before, {} to {}.",
                    if weeks { "by week" } else { "by day" }, r.previous_from, r.previous_to)}
            </p>
            {empty.then(|| view! {
                <p class="c-notice" id="r-empty">"No conversations in this period: there is nothing to report yet."</p>
            })}
        </section>
        <Tiles now=r.current.clone() before=r.previous.clone() />
        <Charts r=r.clone() />
        <Tables r />
    }
}

/// A figure as a tile shows it.
#[derive(Clone, Copy)]
enum Val {
    Count(i64),
    Rate(Option<f64>),
    Ms(Option<i64>),
    Usd(Option<f64>),
}

impl Val {
    fn text(self) -> String {
        match self {
            Val::Count(n) => n.to_string(),
            Val::Rate(r) => r.map_or_else(|| "–".to_owned(), percent),
            Val::Ms(ms) => ms.map_or_else(|| "–".to_owned(), duration),
            Val::Usd(v) => v.map_or_else(|| "–".to_owned(), usd),
        }
    }

    /// The change from `before`, in words and with an arrow: percentage points for rates, per
    /// cent for the rest. `(trend, text)`, the trend `up`, `down` or `same`.
    fn change(self, before: Val) -> (&'static str, String) {
        let (now, then, points) = match (self, before) {
            (Val::Count(a), Val::Count(b)) => (Some(a as f64), Some(b as f64), false),
            (Val::Rate(a), Val::Rate(b)) => (a, b, true),
            (Val::Ms(a), Val::Ms(b)) => (a.map(|v| v as f64), b.map(|v| v as f64), false),
            (Val::Usd(a), Val::Usd(b)) => (a, b, false),
            _ => (None, None, false),
        };
        let (Some(now), Some(then)) = (now, then) else { return ("none", "No comparison".to_owned()) };
        let delta = if points {
            (now - then) * 100.0
        } else if then == 0.0 {
            return if now == 0.0 { ("same", "No change".to_owned()) } else { ("up", "▲ up from none".to_owned()) };
        } else {
            (now - then) / then * 100.0
        };
        let unit = if points { "points" } else { "%" };
        if delta.abs() < 0.05 {
            ("same", "No change".to_owned())
        } else if delta > 0.0 {
            ("up", format!("▲ up {delta:.1} {unit}"))
        } else {
            ("down", format!("▼ down {:.1} {unit}", -delta))
        }
    }
}

/// The period's figures, each beside the period before's.
#[component]
fn Tiles(now: Figures, before: Figures) -> impl IntoView {
    let tiles: Vec<(&'static str, &'static str, Val, Val, Option<String>)> = vec![
        ("conversations", "Conversations", Val::Count(now.conversations), Val::Count(before.conversations), None),
        ("visitors", "Visitors", Val::Count(now.visitors), Val::Count(before.visitors), None),
        ("messages", "Messages", Val::Count(now.messages), Val::Count(before.messages), None),
        (
            "ai_resolution_rate",
            "Resolved by the AI",
            Val::Rate(now.ai_resolution_rate()),
            Val::Rate(before.ai_resolution_rate()),
            Some(format!("{} of {} settled", now.ai_resolved, now.settled)),
        ),
        (
            "handover_rate",
            "Handed over to a person",
            Val::Rate(now.handover_rate()),
            Val::Rate(before.handover_rate()),
            Some(format!("{} conversations", now.handed_over)),
        ),
        (
            "abandoned_rate",
            "Abandoned",
            Val::Rate(now.abandoned_rate()),
            Val::Rate(before.abandoned_rate()),
            Some(format!("{} conversations", now.abandoned)),
        ),
        (
            "first_response",
            "First response, median",
            Val::Ms(now.first_response.median_ms),
            Val::Ms(before.first_response.median_ms),
            Some(p90(&now.first_response, false)),
        ),
        (
            "first_response_business",
            "First response in business hours, median",
            Val::Ms(now.first_response.business_median_ms),
            Val::Ms(before.first_response.business_median_ms),
            Some(p90(&now.first_response, true)),
        ),
        (
            "resolution",
            "Resolution time, median",
            Val::Ms(now.resolution.median_ms),
            Val::Ms(before.resolution.median_ms),
            Some(p90(&now.resolution, false)),
        ),
        (
            "resolution_business",
            "Resolution in business hours, median",
            Val::Ms(now.resolution.business_median_ms),
            Val::Ms(before.resolution.business_median_ms),
            Some(p90(&now.resolution, true)),
        ),
        (
            "csat",
            "CSAT (rated 4 or 5)",
            Val::Rate(now.csat()),
            Val::Rate(before.csat()),
            Some(format!("{} rated", now.rated)),
        ),
        (
            "thumbs_up_rate",
            "Answers found helpful",
            Val::Rate(now.thumbs_up_rate()),
            Val::Rate(before.thumbs_up_rate()),
            Some(format!("{} thumbs up, {} down", now.thumbs_up, now.thumbs_down)),
        ),
        ("spend", "Spend", Val::Usd(Some(now.spend_usd)), Val::Usd(Some(before.spend_usd)), None),
        (
            "spend_per_resolved",
            "Spend per AI-resolved conversation",
            Val::Usd(now.spend_per_resolved()),
            Val::Usd(before.spend_per_resolved()),
            None,
        ),
    ];
    view! {
        <section class="r-tiles-wrap" aria-labelledby="r-tiles-h">
            <h2 id="r-tiles-h">"Figures"</h2>
            <ul class="c-tiles r-tiles" id="r-tiles">
                {tiles.into_iter().map(|(key, label, now, before, detail)| {
                    let (trend, change) = now.change(before);
                    view! {
                        <li class="c-tile r-tile" data-figure=key>
                            <span class="r-label">{label}</span>
                            <strong class="r-value">{now.text()}</strong>
                            {detail.map(|d| view! { <span class="r-detail">{d}</span> })}
                            <span class="r-prev">{format!("Period before: {}", before.text())}</span>
                            <span class="r-change" data-trend=trend>{change}</span>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </section>
    }
}

/// `90th percentile: …` of a time.
fn p90(d: &Durations, business: bool) -> String {
    let v = if business { d.business_p90_ms } else { d.p90_ms };
    format!("90th percentile: {} ({} timed)", v.map_or_else(|| "–".to_owned(), duration), d.count)
}

/// The four charts.
#[component]
fn Charts(r: Report) -> impl IntoView {
    let weeks = r.query.by == "week";
    let bucket_label = if weeks { "Week starting" } else { "Day" };
    let unit_name = if weeks { "week" } else { "day" };
    let labels: Vec<String> = r.buckets.iter().map(|b| b.start.clone()).collect();
    let n = labels.len();
    let span = match (labels.first(), labels.last()) {
        (Some(a), Some(b)) => format!("{n} {unit_name}s from {a} to {b}"),
        _ => "No days".to_owned(),
    };
    let count = |f: fn(&Figures) -> i64| r.buckets.iter().map(|b| Some(f(&b.figures) as f64)).collect::<Vec<_>>();
    let rate =
        |f: fn(&Figures) -> Option<f64>| r.buckets.iter().map(|b| f(&b.figures).map(|v| v * 100.0)).collect::<Vec<_>>();
    let now = &r.current;

    // The busiest bucket, for the volume chart's summary.
    let busiest = r.buckets.iter().max_by_key(|b| b.figures.conversations).filter(|b| b.figures.conversations > 0);
    let volume_summary = format!(
        "{span}: {} conversations, {} resolved by the AI.{}",
        now.conversations,
        now.ai_resolved,
        busiest.map_or_else(String::new, |b| format!(
            " The most, {}, in the {unit_name} of {}.",
            b.figures.conversations, b.start
        ))
    );
    let rates_summary = format!(
        "{span}: the AI resolved {} of settled conversations; CSAT {}.",
        now.ai_resolution_rate().map_or_else(|| "none (no conversation settled)".to_owned(), percent),
        now.csat().map_or_else(|| "not measured (no rating)".to_owned(), percent),
    );
    let handover_summary = format!(
        "{span}: {} hand-overs — {} asked for a person, {} for low confidence, {} by a business rule.",
        now.asked_for_person + now.low_confidence + now.business_rule,
        now.asked_for_person,
        now.low_confidence,
        now.business_rule,
    );
    // Spend by model; a single "Spend" series when no model is named.
    let spend_series: Vec<Series> = if r.models.is_empty() {
        vec![Series::new("Spend", r.buckets.iter().map(|b| Some(b.figures.spend_usd)).collect())]
    } else {
        r.models
            .iter()
            .enumerate()
            .map(|(i, m)| Series::new(m.clone(), r.buckets.iter().map(|b| b.spend_by_model.get(i).copied()).collect()))
            .collect()
    };
    let top_model = r.spend_by_model.first().filter(|m| m.usd > 0.0);
    let spend_summary = format!(
        "{span}: {} in all.{}",
        usd(now.spend_usd),
        top_model.map_or_else(String::new, |m| format!(" The most on {}: {}.", m.model, usd(m.usd)))
    );
    view! {
        <section class="c-card r-charts" aria-labelledby="r-charts-h">
            <h2 id="r-charts-h">"Over the period"</h2>
            <Chart id="r-chart-volume" title="Conversations and AI-resolved" kind=Kind::Lines unit=Unit::Count
                bucket_label labels=labels.clone() summary=volume_summary
                series=vec![
                    Series::new("Conversations", count(|f| f.conversations)),
                    Series::new("Resolved by the AI", count(|f| f.ai_resolved)),
                ] />
            <Chart id="r-chart-rates" title="AI resolution rate and CSAT" kind=Kind::Lines unit=Unit::Percent
                bucket_label labels=labels.clone() summary=rates_summary
                series=vec![
                    Series::new("AI resolution rate", rate(Figures::ai_resolution_rate)),
                    Series::new("CSAT", rate(Figures::csat)),
                ] />
            <Chart id="r-chart-handover" title="Hand-overs by reason" kind=Kind::StackedArea unit=Unit::Count
                bucket_label labels=labels.clone() summary=handover_summary
                series=vec![
                    Series::new("Asked for a person", count(|f| f.asked_for_person)),
                    Series::new("Low confidence", count(|f| f.low_confidence)),
                    Series::new("Business rule", count(|f| f.business_rule)),
                ] />
            <Chart id="r-chart-spend" title="Spend by model" kind=Kind::StackedBars unit=Unit::Usd
                bucket_label labels summary=spend_summary series=spend_series />
        </section>
    }
}

/// The tables under the charts.
#[component]
fn Tables(r: Report) -> impl IntoView {
    let Report { operators, versions, spend_by_model, orders, unanswered, .. } = r;
    view! {
        <section class="c-card" aria-labelledby="r-operators-h">
            <h2 id="r-operators-h">"Operators"</h2>
            {if operators.is_empty() {
                view! { <p class="c-hint" id="r-operators">"No operator wrote in a conversation in this period."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table" id="r-operators">
                        <caption class="c-sr">"Operators"</caption>
                        <thead><tr>
                            <th scope="col">"Operator"</th><th scope="col">"Conversations handled"</th>
                            <th scope="col">"First response, median"</th><th scope="col">"First response, 90th percentile"</th>
                            <th scope="col">"CSAT"</th>
                        </tr></thead>
                        <tbody>
                            {operators.into_iter().map(|o| view! {
                                <tr>
                                    <th scope="row">{o.name}</th>
                                    <td>{o.handled}</td>
                                    <td>{o.first_response.median_ms.map_or_else(|| "–".to_owned(), duration)}</td>
                                    <td>{o.first_response.p90_ms.map_or_else(|| "–".to_owned(), duration)}</td>
                                    <td>{rated(o.rated_good, o.rated)}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
        <section class="c-card" aria-labelledby="r-versions-h">
            <h2 id="r-versions-h">"By version of the agent"</h2>
            <p class="c-hint">"Each conversation counts for the version that gave its first answer."</p>
            {if versions.is_empty() {
                view! { <p class="c-hint" id="r-versions">"No conversation in this period."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table" id="r-versions">
                        <caption class="c-sr">"By version of the agent"</caption>
                        <thead><tr>
                            <th scope="col">"Version"</th><th scope="col">"Conversations"</th>
                            <th scope="col">"Resolved by the AI"</th><th scope="col">"Handed over"</th>
                            <th scope="col">"CSAT"</th><th scope="col">"Spend"</th>
                        </tr></thead>
                        <tbody>
                            {versions.into_iter().map(|v| {
                                let f = v.figures;
                                view! {
                                    <tr>
                                        <th scope="row">{v.version.map_or_else(|| "No answer yet".to_owned(), |n| format!("Version {n}"))}</th>
                                        <td>{f.conversations}</td>
                                        <td>{f.ai_resolution_rate().map_or_else(|| "–".to_owned(), percent)}</td>
                                        <td>{f.handover_rate().map_or_else(|| "–".to_owned(), percent)}</td>
                                        <td>{rated(f.rated_good, f.rated)}</td>
                                        <td>{usd(f.spend_usd)}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
        <section class="c-card" aria-labelledby="r-models-h">
            <h2 id="r-models-h">"Spend by model"</h2>
            {if spend_by_model.is_empty() {
                view! { <p class="c-hint" id="r-models">"No model was used in this period."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table" id="r-models">
                        <caption class="c-sr">"Spend by model"</caption>
                        <thead><tr>
                            <th scope="col">"Model"</th><th scope="col">"Spend"</th>
                            <th scope="col">"Of it, tests & previews"</th>
                        </tr></thead>
                        <tbody>
                            {spend_by_model.into_iter().map(|m| view! {
                                <tr><th scope="row">{m.model}</th><td>{usd(m.usd)}</td><td>{usd(m.trial_usd)}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
        <section class="c-card" aria-labelledby="r-orders-h">
            <h2 id="r-orders-h">"Orders by currency"</h2>
            {if orders.is_empty() {
                view! { <p class="c-hint" id="r-orders">"No order in this period."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table" id="r-orders">
                        <caption class="c-sr">"Orders by currency"</caption>
                        <thead><tr>
                            <th scope="col">"Currency"</th><th scope="col">"Orders"</th>
                            <th scope="col">"Paid"</th><th scope="col">"Paid amount"</th>
                        </tr></thead>
                        <tbody>
                            {orders.into_iter().map(|o| {
                                let amount = money(o.paid_minor, &o.currency);
                                view! { <tr><th scope="row">{o.currency}</th><td>{o.orders}</td><td>{o.paid}</td><td>{amount}</td></tr> }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
        <section class="c-card" aria-labelledby="r-unanswered-h">
            <h2 id="r-unanswered-h">"Unanswered topics"</h2>
            {if unanswered.is_empty() {
                view! { <p class="c-hint" id="r-unanswered">"Every question in this period was answered."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table" id="r-unanswered">
                        <caption class="c-sr">"Unanswered topics"</caption>
                        <thead><tr>
                            <th scope="col">"Question"</th><th scope="col">"Times asked"</th><th scope="col">"Why unanswered"</th>
                            <th scope="col">"Missing knowledge"</th><th scope="col">"Conversations"</th>
                        </tr></thead>
                        <tbody>
                            {unanswered.into_iter().map(|t| {
                                let reasons = t.reasons.iter().map(|(why, n)| format!("{why} ({n})")).collect::<Vec<_>>().join(", ");
                                let links = t.conversations.iter().enumerate().map(|(i, id)| {
                                    let label = format!("Conversation {} of “{}”", i + 1, t.question);
                                    view! {
                                        <li><a href=format!("/admin/conversations/{id}") aria-label=label>{format!("#{}", i + 1)}</a></li>
                                    }
                                }).collect_view();
                                view! {
                                    <tr>
                                        <th scope="row">{t.question.clone()}</th>
                                        <td>{t.count}</td>
                                        <td>{reasons}</td>
                                        <td>{t.gap.clone()}</td>
                                        <td><ul class="r-links">{links}</ul></td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
    }
}

/// `75 % (4 of 5 rated)`, or a dash when none was rated.
fn rated(good: i64, all: i64) -> String {
    ratio(good, all).map_or_else(|| "–".to_owned(), |r| format!("{} ({good} of {all} rated)", percent(r)))
}

/// `42.5 %` of a fraction.
fn percent(fraction: f64) -> String {
    format!("{:.1} %", fraction * 100.0)
}

fn usd(v: f64) -> String {
    format!("US${v:.4}")
}

/// An amount in minor units, in its currency's major unit (`EUR 12.50`, `JPY 1200`).
fn money(minor: i64, currency: &str) -> String {
    let decimals: u32 = match currency.to_ascii_uppercase().as_str() {
        "BIF" | "CLP" | "DJF" | "GNF" | "ISK" | "JPY" | "KMF" | "KRW" | "PYG" | "RWF" | "UGX" | "VND" | "VUV"
        | "XAF" | "XOF" | "XPF" => 0,
        "BHD" | "IQD" | "JOD" | "KWD" | "LYD" | "OMR" | "TND" => 3,
        _ => 2,
    };
    let scale = 10i64.pow(decimals);
    let sign = if minor < 0 { "-" } else { "" };
    let (major, cents) = (minor.unsigned_abs() / scale as u64, minor.unsigned_abs() % scale as u64);
    if decimals == 0 {
        format!("{currency} {sign}{major}")
    } else {
        format!("{currency} {sign}{major}.{cents:0width$}", width = decimals as usize)
    }
}

/// A time in words: `850 ms`, `42 s`, `3 min 5 s`, `2 h 10 min`, `3 d 4 h`.
fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    let s = ms / 1000;
    match s {
        0 => format!("{ms} ms"),
        1..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        3600..86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        _ => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

/// The report's export at `/admin/reports.{ext}`, for the same query.
fn export_href(ext: &str, q: &ReportQuery) -> String {
    let mut pairs =
        vec![("from", q.from.clone()), ("to", q.to.clone()), ("time_zone", q.time_zone.clone()), ("by", q.by.clone())];
    for (key, value) in [("agent_id", &q.agent_id), ("team_id", &q.team_id), ("operator_id", &q.operator_id)] {
        if !value.is_empty() {
            pairs.push((key, value.clone()));
        }
    }
    if let Some(v) = q.version {
        pairs.push(("version", v.to_string()));
    }
    let query: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}={}", encode(&v))).collect();
    format!("/admin/reports.{ext}?{}", query.join("&"))
}

/// Percent-encodes all but the unreserved characters of a query value.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The last [`DEFAULT_DAYS`] days ending today, by day, in UTC (the browser then puts its own
/// time zone and today).
fn default_query() -> ReportQuery {
    let (from, to) = default_days();
    ReportQuery { from, to, time_zone: "UTC".into(), by: "day".into(), ..ReportQuery::default() }
}

/// `(from, to)` of the default period: in the browser its local days, on the server UTC's.
fn default_days() -> (String, String) {
    let today = today();
    (date(today - (DEFAULT_DAYS - 1)), date(today))
}

/// Today as days since 1970-01-01.
fn today() -> i64 {
    #[cfg(target_arch = "wasm32")]
    {
        let now = js_sys::Date::new_0();
        let local_ms = now.get_time() - now.get_timezone_offset() * 60_000.0;
        (local_ms / 86_400_000.0).floor() as i64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        (secs / 86_400) as i64
    }
}

/// The browser's IANA time zone (`Intl.DateTimeFormat().resolvedOptions().timeZone`); none on
/// the server.
fn browser_time_zone() -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    {
        let format = js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &js_sys::Object::new());
        js_sys::Reflect::get(&format.resolved_options(), &"timeZone".into()).ok()?.as_string().filter(|z| !z.is_empty())
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

/// `YYYY-MM-DD` of days since 1970-01-01 (Howard Hinnant's algorithm).
fn date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_day_numbers() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(20_794), "2026-12-07");
        assert_eq!(date(11_016), "2000-02-29");
    }

    #[test]
    fn exports_carry_the_query() {
        let q = ReportQuery {
            from: "2026-11-08".into(),
            to: "2026-12-07".into(),
            time_zone: "Etc/GMT+5".into(),
            by: "week".into(),
            agent_id: "a1".into(),
            version: Some(3),
            ..ReportQuery::default()
        };
        assert_eq!(
            export_href("csv", &q),
            "/admin/reports.csv?from=2026-11-08&to=2026-12-07&time_zone=Etc%2FGMT%2B5&by=week&agent_id=a1&version=3"
        );
    }

    #[test]
    fn changes_say_which_way_in_words() {
        assert_eq!(Val::Count(12).change(Val::Count(10)), ("up", "▲ up 20.0 %".to_owned()));
        assert_eq!(Val::Count(0).change(Val::Count(0)), ("same", "No change".to_owned()));
        assert_eq!(Val::Rate(Some(0.4)).change(Val::Rate(Some(0.5))), ("down", "▼ down 10.0 points".to_owned()));
        assert_eq!(Val::Rate(None).change(Val::Rate(Some(0.5))).0, "none");
    }

    #[test]
    fn amounts_and_times_read_well() {
        assert_eq!(money(1250, "EUR"), "EUR 12.50");
        assert_eq!(money(1200, "JPY"), "JPY 1200");
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(185_000), "3 min 5 s");
        assert_eq!(percent(0.425), "42.5 %");
    }
}
