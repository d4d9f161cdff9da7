//! `/admin`: today's figures, 30 days of tokens and cost, the questions asked most.

use leptos::prelude::*;

use super::api::dashboard::dashboard_figures;
use super::layout::console_ctx;
use super::loaded::Loaded;
use super::types::{AgentRatings, AgentSpend, Dashboard, DayUsage, TeaserCount, UnpricedPrice};

/// `/admin`: the dashboard, reloaded on every change.
#[component]
pub fn DashboardPage() -> impl IntoView {
    let ctx = console_ctx();
    let data = Resource::new(move || ctx.changes.get(), |_| dashboard_figures());
    view! {
        <h1>"Dashboard"</h1>
        <Loaded resource=data let:d>
            <Figures d />
        </Loaded>
        // Its own resource, beside the figures (a resource inside another's view breaks hydration).
        <super::hours::Presence />
    }
}

#[component]
fn Figures(d: Dashboard) -> impl IntoView {
    let tokens: i64 = d.days.iter().map(|x| x.tokens).sum();
    let cost: f64 = d.days.iter().map(|x| x.cost_usd).sum();
    view! {
        <section class="c-tiles" aria-label="Today">
            <Tile label="Conversations today" value=d.conversations_today.to_string() />
            <Tile label="Messages today" value=d.messages_today.to_string() />
            <Tile label="Waiting for a human" value=d.waiting_for_human.to_string() />
            <Tile label="Leads waiting" value=d.leads_waiting.to_string() />
            <Tile label="Orders paid (today)" value=format!("{} ({})", d.orders_paid, d.orders_paid_today) />
        </section>
        {(!d.alerts.is_empty()).then(|| view! {
            <section class="c-card" id="alerts" aria-label="Alerts">
                <h2>"Alerts (7 days)"</h2>
                <ul>
                    {d.alerts.into_iter().map(|a| view! {
                        <li class="c-warn">
                            <b>{a.agent.clone()}</b>": "{a.meaning()}" — "{a.detail.clone()}" ("{a.at.clone()}" UTC)"
                        </li>
                    }).collect_view()}
                </ul>
            </section>
        })}
        <SpendToday agents=d.spend_today unpriced=d.unpriced />
        <Teasers counts=d.teasers />
        <Ratings agents=d.ratings />
        <section class="c-card">
            <h2>"Tokens and cost, last 30 days"</h2>
            <p class="c-hint">{format!("{tokens} tokens · US${cost:.4} in all")}</p>
            <UsageChart days=d.days />
        </section>
        <section class="c-card">
            <h2>"Top questions (30 days)"</h2>
            {if d.top_questions.is_empty() {
                view! { <p class="c-hint">"No questions yet."</p> }.into_any()
            } else {
                view! {
                    <ol class="c-top">
                        {d.top_questions.into_iter().map(|(q, n)| view! { <li><span>{q}</span> <b>{format!("×{n}")}</b></li> }).collect_view()}
                    </ol>
                }.into_any()
            }}
        </section>
    }
}

/// Teasers shown and clicked (30 days), per trigger; nothing when no trigger showed.
#[component]
fn Teasers(counts: Vec<TeaserCount>) -> impl IntoView {
    (!counts.is_empty()).then(|| {
        view! {
            <section class="c-card" id="teasers">
                <h2>"Teasers (30 days)"</h2>
                <table class="c-table">
                    <thead><tr><th scope="col">"Agent"</th><th scope="col">"Trigger"</th><th scope="col">"Shown"</th><th scope="col">"Clicked"</th><th scope="col">"Click rate"</th></tr></thead>
                    <tbody>
                        {counts.into_iter().map(|c| {
                            let rate = if c.shown > 0 { format!("{:.0} %", 100.0 * c.clicked as f64 / c.shown as f64) } else { "–".to_owned() };
                            view! { <tr><td>{c.agent}</td><td>{c.trigger}</td><td>{c.shown}</td><td>{c.clicked}</td><td>{rate}</td></tr> }
                        }).collect_view()}
                    </tbody>
                </table>
            </section>
        }
    })
}

/// Each agent's spend today against its daily cap, and a warning for every agent whose model
/// has no price row.
#[component]
fn SpendToday(agents: Vec<AgentSpend>, unpriced: UnpricedPrice) -> impl IntoView {
    let warnings: Vec<String> =
        agents.iter().filter(|a| a.unpriced).map(|a| format!("{}: {}", a.name, unpriced.warning(&a.model))).collect();
    view! {
        <section class="c-card" id="spend-today">
            <h2>"Spend today (UTC)"</h2>
            {warnings.into_iter().map(|w| view! { <p class="c-warn" role="status">{w}</p> }).collect_view()}
            <table class="c-table">
                <thead><tr><th>"Agent"</th><th>"Model"</th><th>"Spent"</th><th>"Daily cap"</th></tr></thead>
                <tbody>
                    {agents.into_iter().map(|a| {
                        let reached = a.cap_usd.is_some_and(|cap| a.spent_usd >= cap);
                        view! {
                            <tr>
                                <td>{a.name}</td>
                                <td>{a.model}{a.unpriced.then(|| view! { <span class="c-warn">" ⚠ no price"</span> })}</td>
                                <td>{format!("US${:.4}", a.spent_usd)}</td>
                                <td>
                                    {a.cap_usd.map_or("none".to_owned(), |c| format!("US${c:.2}"))}
                                    {reached.then(|| view! { <span class="c-warn">" reached"</span> })}
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// How visitors rated each agent's answers this week, against the week before, and its closed
/// conversations.
#[component]
fn Ratings(agents: Vec<AgentRatings>) -> impl IntoView {
    let percent = |p: Option<i64>| p.map_or("—".to_owned(), |p| format!("{p}%"));
    view! {
        <section class="c-card" id="ratings">
            <h2>"Ratings (last 7 days)"</h2>
            {if agents.is_empty() {
                view! { <p class="c-hint">"No answer has been rated yet."</p> }.into_any()
            } else {
                view! {
                    <table class="c-table">
                        <thead><tr><th>"Agent"</th><th>"Answers found helpful"</th><th>"The 7 days before"</th><th>"Trend"</th><th>"Closed conversations"</th></tr></thead>
                        <tbody>
                            {agents.into_iter().map(|a| {
                                let now = AgentRatings::helpful(a.up, a.down);
                                let before = AgentRatings::helpful(a.up_before, a.down_before);
                                let trend = match (now, before) {
                                    (Some(n), Some(b)) if n > b => format!("▲ {} points", n - b),
                                    (Some(n), Some(b)) if n < b => format!("▼ {} points", b - n),
                                    (Some(_), Some(_)) => "steady".to_owned(),
                                    _ => "—".to_owned(),
                                };
                                view! {
                                    <tr>
                                        <td>{a.name}</td>
                                        <td>{format!("{} ({} helpful, {} not)", percent(now), a.up, a.down)}</td>
                                        <td>{percent(before)}</td>
                                        <td>{trend}</td>
                                        <td>{a.average.map_or("—".to_owned(), |avg| format!("{avg:.1} of 5 ({} rated)", a.conversations))}</td>
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

#[component]
fn Tile(label: &'static str, value: String) -> impl IntoView {
    view! { <div class="c-tile"><span>{label}</span><strong>{value}</strong></div> }
}

/// Bars of tokens per day with the day's cost as a line, drawn as SVG on the server.
#[component]
fn UsageChart(days: Vec<DayUsage>) -> impl IntoView {
    let (w, h, pad) = (720.0_f64, 200.0_f64, 24.0_f64);
    let max_tokens = days.iter().map(|d| d.tokens).max().unwrap_or(0).max(1) as f64;
    let max_cost = days.iter().map(|d| d.cost_usd).fold(0.0, f64::max).max(1e-9);
    let n = days.len().max(1) as f64;
    let slot = (w - 2.0 * pad) / n;
    let bars = days
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let bh = (d.tokens as f64 / max_tokens) * (h - 2.0 * pad);
            let x = pad + i as f64 * slot;
            view! {
                <rect x=format!("{:.1}", x + slot * 0.15) y=format!("{:.1}", h - pad - bh) width=format!("{:.1}", slot * 0.7)
                    height=format!("{bh:.1}") class="c-bar">
                    <title>{format!("{}: {} tokens, US${:.4}", d.day, d.tokens, d.cost_usd)}</title>
                </rect>
            }
        })
        .collect_view();
    let line: Vec<String> = days
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let x = pad + (i as f64 + 0.5) * slot;
            let y = h - pad - (d.cost_usd / max_cost) * (h - 2.0 * pad);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let first = days.first().map(|d| d.day.clone()).unwrap_or_default();
    let last = days.last().map(|d| d.day.clone()).unwrap_or_default();
    let label = format!("Tokens per day from {first} to {last}; the line is the cost");
    view! {
        <svg class="c-chart" viewBox=format!("0 0 {w} {h}") role="img"
            aria-label=label>
            <line x1=pad y1=h - pad x2=w - pad y2=h - pad class="c-axis" />
            {bars}
            <polyline points=line.join(" ") class="c-cost" />
            <text x=pad y=h - 6.0 class="c-tick">{first}</text>
            <text x=w - pad y=h - 6.0 class="c-tick" text-anchor="end">{last}</text>
            <text x=pad y=14.0 class="c-tick">{format!("{} tokens max", max_tokens as i64)}</text>
        </svg>
    }
}
