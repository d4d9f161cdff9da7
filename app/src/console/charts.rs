//! Charts drawn as inline SVG by `view!` (the Reports page), on the server like the rest of the
//! page: lines, stacked areas and stacked bars over days or weeks. Each has its axes with tick
//! labels, a legend, a title and a text summary for screen readers, and a "Show table" button
//! that shows the same figures as an HTML table. Series differ by dash, marker or fill pattern as
//! well as by colour, so colour is never the only cue. No chart library.

use leptos::prelude::*;

/// What a chart's values are: how its axis and its table write them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Whole numbers (conversations).
    Count,
    /// Percentages, 0 to 100: the axis always spans 0 to 100 %.
    Percent,
    /// US dollars.
    Usd,
}

impl Unit {
    /// A value in the chart's table (and its points' tooltips).
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Count => format!("{}", v.round() as i64),
            Unit::Percent => format!("{v:.1} %"),
            Unit::Usd => format!("US${v:.4}"),
        }
    }

    /// A tick of the y axis, with as many decimals as the step between ticks needs.
    fn tick(self, v: f64, step: f64) -> String {
        match self {
            Unit::Count => format!("{}", v.round() as i64),
            Unit::Percent => format!("{v:.0} %"),
            Unit::Usd => {
                let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize }.min(6);
                format!("${v:.decimals$}")
            }
        }
    }
}

/// How the series are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One line per series, with a marker at each point; a missing value breaks the line.
    Lines,
    /// Series stacked on one another as areas.
    StackedArea,
    /// Series stacked on one another as bars, one bar per bucket.
    StackedBars,
}

/// One series: its name (in the legend and the table's header) and a value per bucket (`None`:
/// nothing to measure, e.g. a rate of no conversations).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

impl Series {
    pub fn new(name: impl Into<String>, values: Vec<Option<f64>>) -> Self {
        Series { name: name.into(), values }
    }
}

/// Colours of the series, each at least 4.5:1 on white.
const COLOURS: [&str; 7] = ["#1d4ed8", "#b45309", "#047857", "#7c3aed", "#be123c", "#0f766e", "#4b5563"];
/// Dashes of the lines, by series.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "10 3 2 3"];

fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

// The drawing's size (the SVG scales to its box) and the margins around the plot.
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 34.0;
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
const PLOT_H: f64 = HEIGHT - TOP - BOTTOM;

/// The top of the y axis and its ticks (from 0), for values up to `max`.
pub fn y_ticks(max: f64, unit: Unit) -> (f64, Vec<f64>) {
    if unit == Unit::Percent {
        return (100.0, vec![0.0, 25.0, 50.0, 75.0, 100.0]);
    }
    let max = if max.is_finite() && max > 0.0 { max } else { 0.0 };
    let step = if max == 0.0 {
        if unit == Unit::Count { 1.0 } else { 0.01 }
    } else {
        let raw = max / 4.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let nice = [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(raw);
        if unit == Unit::Count { nice.ceil().max(1.0) } else { nice }
    };
    let count = ((max / step).ceil() as usize).clamp(1, 10);
    let ticks: Vec<f64> = (0..=count).map(|i| i as f64 * step).collect();
    (count as f64 * step, ticks)
}

/// `7 Dec` of `2026-12-07` (the text itself when it is no such date).
pub fn short_date(date: &str) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let mut parts = date.splitn(3, '-').skip(1);
    let month = parts.next().and_then(|m| m.parse::<usize>().ok()).filter(|m| (1..=12).contains(m));
    let day = parts.next().and_then(|d| d.parse::<u32>().ok());
    match (month, day) {
        (Some(m), Some(d)) => format!("{d} {}", MONTHS[m - 1]),
        _ => date.to_owned(),
    }
}

/// The centre of bucket `i` of `n` on the x axis.
fn x_at(i: usize, n: usize) -> f64 {
    LEFT + (i as f64 + 0.5) * PLOT_W / n.max(1) as f64
}

/// The height of value `v` on an axis that ends at `top`.
fn y_at(v: f64, top: f64) -> f64 {
    let share = if top > 0.0 { (v / top).clamp(0.0, 1.0) } else { 0.0 };
    TOP + PLOT_H - share * PLOT_H
}

fn n1(v: f64) -> String {
    format!("{v:.1}")
}

/// A chart with its heading, legend, summary and table.
#[component]
pub fn Chart(
    /// The figure's id (`r-chart-volume`); the button is `{id}-toggle`, the table `{id}-table`.
    id: &'static str,
    #[prop(into)] title: String,
    kind: Kind,
    unit: Unit,
    /// The header of the table's first column (`Day`, `Week starting`).
    #[prop(into)]
    bucket_label: String,
    /// Each bucket's first day, `YYYY-MM-DD`.
    labels: Vec<String>,
    series: Vec<Series>,
    /// What the chart shows, in words (its text alternative).
    #[prop(into)]
    summary: String,
) -> impl IntoView {
    let n = labels.len();
    let stacked = kind != Kind::Lines;
    // Stacked areas need two buckets to have a width: one bucket is drawn as a bar.
    let kind = if kind == Kind::StackedArea && n < 2 { Kind::StackedBars } else { kind };
    let value = |s: &Series, i: usize| s.values.get(i).copied().flatten().filter(|v| v.is_finite());
    let totals: Vec<f64> =
        (0..n).map(|i| series.iter().filter_map(|s| value(s, i)).map(|v| v.max(0.0)).sum()).collect();
    let max = if stacked {
        totals.iter().copied().fold(0.0, f64::max)
    } else {
        series.iter().flat_map(|s| (0..n).filter_map(|i| value(s, i))).fold(0.0, f64::max)
    };
    let empty = n == 0 || series.iter().all(|s| (0..n).all(|i| value(s, i).is_none_or(|v| v == 0.0)));
    let (top, ticks) = y_ticks(max, unit);
    let step = ticks.get(1).copied().unwrap_or(1.0);

    let title_id = format!("{id}-title");
    let summary_id = format!("{id}-summary");
    let table_id = format!("{id}-table");
    let open = RwSignal::new(false);
    let region_label = format!("{title}: table");

    // Fill patterns of stacked series: solid, then hatched, dotted, cross-hatched, striped.
    let patterns = stacked.then(|| {
        series
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let c = colour(i);
                let mark = match i % 5 {
                    0 => view! { <rect width="8" height="8" fill=c /> }.into_any(),
                    1 => view! { <path d="M-2,2 L2,-2 M0,8 L8,0 M6,10 L10,6" stroke=c stroke-width="2" /> }.into_any(),
                    2 => view! { <circle cx="4" cy="4" r="2" fill=c /> }.into_any(),
                    3 => view! { <path d="M0,0 L8,8 M8,0 L0,8" stroke=c stroke-width="1.5" /> }.into_any(),
                    _ => view! { <path d="M0,2 L8,2 M0,6 L8,6" stroke=c stroke-width="1.5" /> }.into_any(),
                };
                view! {
                    <pattern id=format!("{id}-fill{i}") width="8" height="8" patternUnits="userSpaceOnUse">
                        <rect width="8" height="8" fill="#ffffff" />
                        {mark}
                    </pattern>
                }
            })
            .collect_view()
    });

    let grid = ticks
        .iter()
        .map(|&t| {
            let y = n1(y_at(t, top));
            view! {
                <line x1=LEFT x2=WIDTH - RIGHT y1=y.clone() y2=y.clone() class="r-grid" />
                <line x1=LEFT - 5.0 x2=LEFT y1=y.clone() y2=y.clone() class="r-axis-line" />
                <text x=LEFT - 8.0 y=y dy="0.32em" text-anchor="end" class="r-tick">{unit.tick(t, step)}</text>
            }
        })
        .collect_view();

    // At most eight dates under the axis.
    let every = n.div_ceil(8).max(1);
    let x_ticks = labels
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0)
        .map(|(i, label)| {
            let x = n1(x_at(i, n));
            view! {
                <line x1=x.clone() x2=x.clone() y1=TOP + PLOT_H y2=TOP + PLOT_H + 5.0 class="r-axis-line" />
                <text x=x y=TOP + PLOT_H + 18.0 text-anchor="middle" class="r-tick">{short_date(label)}</text>
            }
        })
        .collect_view();

    let marks = match kind {
        Kind::Lines => series
            .iter()
            .enumerate()
            .map(|(s_i, s)| {
                let c = colour(s_i);
                let mut d = String::new();
                let mut pen_down = false;
                for i in 0..n {
                    match value(s, i) {
                        Some(v) => {
                            d.push_str(&format!("{}{},{} ", if pen_down { "L" } else { "M" }, n1(x_at(i, n)), n1(y_at(v, top))));
                            pen_down = true;
                        }
                        None => pen_down = false,
                    }
                }
                let points = (0..n)
                    .filter_map(|i| value(s, i).map(|v| (i, v)))
                    .map(|(i, v)| {
                        let tip = format!("{}: {} {}", labels[i], s.name, unit.format(v));
                        marker(s_i, x_at(i, n), y_at(v, top), c, tip)
                    })
                    .collect_view();
                let dash = DASHES[s_i % DASHES.len()];
                view! {
                    <g class="r-series">
                        <path d=d fill="none" stroke=c stroke-width="2.5" stroke-dasharray=dash stroke-linejoin="round" />
                        {points}
                    </g>
                }
                .into_any()
            })
            .collect_view(),
        Kind::StackedArea => {
            let mut base = vec![0.0; n];
            series
                .iter()
                .enumerate()
                .map(|(s_i, s)| {
                    let upper: Vec<f64> = (0..n).map(|i| base[i] + value(s, i).unwrap_or(0.0).max(0.0)).collect();
                    let mut d = String::new();
                    for (i, v) in upper.iter().enumerate() {
                        d.push_str(&format!("{}{},{} ", if i == 0 { "M" } else { "L" }, n1(x_at(i, n)), n1(y_at(*v, top))));
                    }
                    for i in (0..n).rev() {
                        d.push_str(&format!("L{},{} ", n1(x_at(i, n)), n1(y_at(base[i], top))));
                    }
                    d.push('Z');
                    base = upper;
                    view! {
                        <path d=d fill=format!("url(#{id}-fill{s_i})") stroke=colour(s_i) stroke-width="1.5" class="r-series">
                            <title>{s.name.clone()}</title>
                        </path>
                    }
                    .into_any()
                })
                .collect_view()
        }
        Kind::StackedBars => {
            let mut base = vec![0.0; n];
            let slot = PLOT_W / n.max(1) as f64;
            let bar = (slot * 0.7).max(1.0);
            series
                .iter()
                .enumerate()
                .map(|(s_i, s)| {
                    let rects = (0..n)
                        .filter_map(|i| value(s, i).filter(|v| *v > 0.0).map(|v| (i, v)))
                        .map(|(i, v)| {
                            let (y0, y1) = (y_at(base[i], top), y_at(base[i] + v, top));
                            base[i] += v;
                            view! {
                                <rect x=n1(x_at(i, n) - bar / 2.0) y=n1(y1) width=n1(bar) height=n1(y0 - y1)
                                    fill=format!("url(#{id}-fill{s_i})") stroke=colour(s_i) stroke-width="1">
                                    <title>{format!("{}: {} {}", labels[i], s.name, unit.format(v))}</title>
                                </rect>
                            }
                        })
                        .collect_view();
                    view! { <g class="r-series">{rects}</g> }.into_any()
                })
                .collect_view()
        }
    };

    let legend = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let c = colour(i);
            let swatch = if stacked {
                view! { <rect x="1" y="1" width="26" height="14" fill=format!("url(#{id}-fill{i})") stroke=c stroke-width="1.5" /> }
                    .into_any()
            } else {
                view! {
                    <line x1="1" x2="27" y1="8" y2="8" stroke=c stroke-width="2.5" stroke-dasharray=DASHES[i % DASHES.len()] />
                    {marker(i, 14.0, 8.0, c, String::new())}
                }
                .into_any()
            };
            view! {
                <li>
                    <svg class="r-swatch" width="28" height="16" viewBox="0 0 28 16" aria-hidden="true" focusable="false">{swatch}</svg>
                    {s.name.clone()}
                </li>
            }
        })
        .collect_view();

    let head = series.iter().map(|s| view! { <th scope="col">{s.name.clone()}</th> }).collect_view();
    let rows = labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let cells = series
                .iter()
                .map(|s| view! { <td>{value(s, i).map_or_else(|| "–".to_owned(), |v| unit.format(v))}</td> })
                .collect_view();
            let total = stacked.then(|| view! { <td>{unit.format(totals[i])}</td> });
            view! { <tr><th scope="row">{label.clone()}</th>{cells}{total}</tr> }
        })
        .collect_view();

    view! {
        <figure class="r-chart" id=id>
            <figcaption>
                <h3 id=title_id.clone()>{title.clone()}</h3>
            </figcaption>
            <ul class="r-legend" aria-label=format!("Legend: {title}")>{legend}</ul>
            <svg class="r-plot" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img"
                aria-labelledby=title_id aria-describedby=summary_id.clone() preserveAspectRatio="xMidYMid meet">
                {patterns.map(|p| view! { <defs>{p}</defs> })}
                <g class="r-axis r-axis-y">{grid}</g>
                {marks}
                <g class="r-axis r-axis-x">
                    <line x1=LEFT x2=WIDTH - RIGHT y1=TOP + PLOT_H y2=TOP + PLOT_H class="r-axis-line" />
                    {x_ticks}
                </g>
                {empty.then(|| view! {
                    <text x=LEFT + PLOT_W / 2.0 y=TOP + PLOT_H / 2.0 text-anchor="middle" class="r-empty">
                        "No data in this period"
                    </text>
                })}
            </svg>
            <p class="c-hint r-summary" id=summary_id>{summary}</p>
            <button type="button" class="r-toggle" id=format!("{id}-toggle") aria-controls=table_id.clone()
                aria-pressed=move || open.get().to_string() aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>
                "Show table"
            </button>
            // Scrolls sideways on a narrow screen: focusable, so a keyboard can scroll it too.
            <div class="r-table-wrap" hidden=move || !open.get() tabindex="0" role="region"
                aria-label=region_label>
                <table class="c-table r-data" id=table_id>
                    <caption>{title}</caption>
                    <thead>
                        <tr>
                            <th scope="col">{bucket_label}</th>
                            {head}
                            {stacked.then(|| view! { <th scope="col">"Total"</th> })}
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </figure>
    }
}

/// A point's marker: a circle, square, triangle or diamond by series.
fn marker(series: usize, x: f64, y: f64, colour: &'static str, tip: String) -> AnyView {
    let tip = (!tip.is_empty()).then(|| view! { <title>{tip}</title> });
    match series % 4 {
        0 => view! { <circle cx=n1(x) cy=n1(y) r="3.5" fill=colour>{tip}</circle> }.into_any(),
        1 => view! { <rect x=n1(x - 3.5) y=n1(y - 3.5) width="7" height="7" fill="#ffffff" stroke=colour stroke-width="2">{tip}</rect> }
            .into_any(),
        2 => {
            let d = format!("M{},{} L{},{} L{},{} Z", n1(x), n1(y - 4.5), n1(x + 4.5), n1(y + 3.5), n1(x - 4.5), n1(y + 3.5));
            view! { <path d=d fill=colour>{tip}</path> }.into_any()
        }
        _ => {
            let d = format!("M{},{} L{},{} L{},{} L{},{} Z", n1(x), n1(y - 4.5), n1(x + 4.5), n1(y), n1(x), n1(y + 4.5), n1(x - 4.5), n1(y));
            view! { <path d=d fill="#ffffff" stroke=colour stroke-width="2">{tip}</path> }.into_any()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        let (top, ticks) = y_ticks(17.0, Unit::Count);
        assert_eq!(top, 20.0);
        assert_eq!(ticks, vec![0.0, 5.0, 10.0, 15.0, 20.0]);
        let (top, ticks) = y_ticks(0.0, Unit::Count);
        assert_eq!((top, ticks.len()), (1.0, 2));
        let (top, _) = y_ticks(3.0, Unit::Count);
        assert_eq!(top, 3.0);
        assert_eq!(y_ticks(0.0, Unit::Percent).0, 100.0);
        let (top, _) = y_ticks(0.013, Unit::Usd);
        assert!((0.013..=0.02).contains(&top), "{top}");
        assert!(y_ticks(f64::NAN, Unit::Usd).0 > 0.0);
    }

    #[test]
    fn dates_are_short() {
        assert_eq!(short_date("2026-12-07"), "7 Dec");
        assert_eq!(short_date("soon"), "soon");
    }

    #[test]
    fn values_stay_on_the_plot() {
        assert_eq!(y_at(0.0, 0.0), TOP + PLOT_H);
        assert_eq!(y_at(5.0, 10.0), TOP + PLOT_H / 2.0);
        assert!(y_at(50.0, 10.0) >= TOP);
    }
}
