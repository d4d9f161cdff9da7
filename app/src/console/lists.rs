//! Pieces the console's lists share: dates, status badges, pagination, the status filter, and
//! the agents to choose from.

use leptos::prelude::*;
use leptos_router::components::A;

use super::error::ConsoleError;

/// `YYYY-MM-DD HH:MM` (UTC) of Unix milliseconds, the same on the server and in the browser.
pub fn when(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", rem / 3600, rem % 3600 / 60)
}

/// Days since 1970-01-01 to a (year, month, day) date (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A status as a coloured label.
#[component]
pub fn Badge(status: String) -> impl IntoView {
    let label = match status.as_str() {
        "bot" => "bot",
        "waiting_human" => "waiting for human",
        "human" => "human",
        "closed" => "closed",
        other => other,
    }
    .to_owned();
    view! { <span class=format!("c-badge c-badge-{status}")>{label}</span> }
}

/// Previous / next links that keep the other query parameters: page `page` of `total` rows,
/// `per_page` a page.
#[component]
pub fn Pager(base: String, page: i64, per_page: i64, total: i64) -> impl IntoView {
    let pages = super::types::page_count(total, per_page);
    let link = move |p: i64| {
        let sep = if base.contains('?') { '&' } else { '?' };
        format!("{base}{sep}page={p}")
    };
    view! {
        <nav class="c-pager" aria-label="Pages">
            <span>{format!("{total} in all · page {page} of {pages}")}</span>
            {(page > 1).then(|| view! { <A href=link(page - 1)>"← Previous"</A> })}
            {(page < pages).then(|| view! { <A href=link(page + 1)>"Next →"</A> })}
        </nav>
    }
}

/// The `page` query parameter (1 when absent or wrong).
pub fn page_param(q: &leptos_router::params::ParamsMap) -> i64 {
    q.get("page").and_then(|p| p.parse().ok()).filter(|p: &i64| *p >= 1).unwrap_or(1)
}

/// `key=value` pairs as a query string (values URL-encoded).
pub fn query(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (k, v) in pairs.iter().filter(|(_, v)| !v.is_empty()) {
        out.push(if out.is_empty() { '?' } else { '&' });
        out.push_str(k);
        out.push('=');
        for b in v.bytes() {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// The `<option>`s of the agents, by name, once they have loaded (nothing when the call failed:
/// the select still works without them). `selected` is the id chosen, when the select shows one.
#[component]
pub fn AgentOptions(
    names: Resource<Result<Vec<(String, String)>, ConsoleError>>,
    #[prop(optional)] selected: Option<Signal<String>>,
) -> impl IntoView {
    view! {
        <Transition>
            {move || Suspend::new(async move {
                names.await.unwrap_or_default().into_iter().map(|(id, name)| {
                    let chosen = { let id = id.clone(); move || selected.is_some_and(|s| s.with(|s| *s == id)) };
                    view! { <option value=id selected=chosen>{name}</option> }
                }).collect_view()
            })}
        </Transition>
    }
}

/// A required choice of agent, labelled "Agent", that starts at "Choose…".
#[component]
pub fn AgentChoice(id: &'static str, agent: RwSignal<String>) -> impl IntoView {
    let names = Resource::new(|| (), |_| super::api::agents::agent_names());
    view! {
        <label for=id>"Agent"</label>
        <select id=id required on:change=move |ev| agent.set(event_target_value(&ev))>
            <option value="">"Choose…"</option>
            <AgentOptions names />
        </select>
    }
}

/// The filter form of a list by status: choosing a status opens `{path}?status=…`. `children`
/// follow the select (an export link, say).
#[component]
pub fn StatusFilter(
    path: &'static str,
    /// The select's id.
    id: &'static str,
    /// `(value, text)`; the value `""` is "any".
    options: &'static [(&'static str, &'static str)],
    status: Signal<String>,
    #[prop(optional)] children: Option<Children>,
) -> impl IntoView {
    let navigate = leptos_router::hooks::use_navigate();
    view! {
        <form class="c-filters" on:submit=|ev| ev.prevent_default()>
            <label for=id>"Status"</label>
            <select id=id on:change=move |ev| navigate(&format!("{path}{}", query(&[("status", &event_target_value(&ev))])), Default::default())>
                {options.iter().map(|(v, l)| view! { <option value=*v selected=move || status.with(|s| s == v)>{*l}</option> }).collect_view()}
            </select>
            {children.map(|c| c())}
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_dates_in_utc() {
        assert_eq!(when(0), "1970-01-01 00:00");
        assert_eq!(when(1_796_049_600_000), "2026-11-30 14:40");
        assert_eq!(when(951_782_400_000), "2000-02-29 00:00");
    }

    #[test]
    fn builds_query_strings() {
        assert_eq!(query(&[("status", "human"), ("agent", "")]), "?status=human");
        assert_eq!(query(&[("q", "a b&c")]), "?q=a%20b%26c");
    }
}
