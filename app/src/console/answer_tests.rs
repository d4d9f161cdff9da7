//! `/admin/agents/:id/tests`: an agent's answer tests — the cases (visitor messages and the
//! checks a good answer passes), runs on the published version or the draft with a progress bar
//! and Cancel — and `/admin/agents/:id/tests/:run`: a run's results beside the run before, what
//! turned and how the answer changed marked.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::api::answer_tests::{
    answer_test_run, answer_test_runs, answer_tests, cancel_answer_tests, delete_answer_test, run_answer_tests,
    save_answer_test,
};
use super::fields::{Errors, FieldMessage};
use super::layout::confirm;
use super::lists::when;
use super::loaded::{Failure, Loaded};
use super::types::{
    CHECK_KINDS, CaseCompare, CaseForm, CaseOutcome, CheckForm, TestOutcome, TestRunItem, TestRunView, TestsView,
};
use super::versions::{DiffLines, Outcome, Said, act};

impl Said for TestOutcome {
    fn said(self) -> (bool, String, Vec<super::types::FieldError>) {
        (self.ok, self.message, self.errors)
    }
}

fn outcome_line(outcome: Outcome) -> impl IntoView {
    move || {
        outcome.get().map(|(ok, text)| {
            if ok {
                view! { <p class="c-notice" role="status" id="t-outcome">{text}</p> }.into_any()
            } else {
                view! { <p class="c-error" role="alert" id="t-outcome">{text}</p> }.into_any()
            }
        })
    }
}

#[component]
pub fn AgentTestsPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let reload = RwSignal::new(0u32);
    let data = Resource::new(move || (id(), reload.get()), |(id, _)| answer_tests(id));
    let outcome: Outcome = RwSignal::new(None);
    view! {
        <p>
            <A href=move || format!("/admin/agents/{}", id())>"← Agent"</A>
            " · "
            <A href=move || format!("/admin/agents/{}/versions", id())>"Versions and draft"</A>
        </p>
        <Loaded resource=data let:data>
            <Tests data reload outcome />
        </Loaded>
    }
}

#[component]
fn Tests(data: TestsView, reload: RwSignal<u32>, outcome: Outcome) -> impl IntoView {
    let TestsView { agent_id, agent_name, published, has_draft, cases, runs, tools, judge_prompt } = data;
    let id = StoredValue::new(agent_id);
    let tools = StoredValue::new(tools);
    let editing = RwSignal::new(None::<CaseForm>);
    let count = cases.len();
    let run = move |target: &'static str| act(outcome, None, reload, run_answer_tests(id.get_value(), target.into()));
    view! {
        <h1>{format!("Answer tests: {agent_name}")}</h1>
        {outcome_line(outcome)}
        <section class="c-card" aria-labelledby="t-run-h">
            <h2 id="t-run-h">"Run the tests"</h2>
            <p>"Each case runs the real turn — the agent's tools against your data — in a trial conversation "
                "that no one sees: it is not in the inbox or search, sends no webhook or mail, and its payments go "
                "to the sandbox. The model calls cost what they cost."</p>
            <div class="c-actions">
                <button type="button" class="c-primary" id="t-run-published" disabled=count == 0
                    on:click=move |_| run("published")>{format!("Run on version {published}")}</button>
                <button type="button" id="t-run-draft" disabled=!has_draft || count == 0
                    on:click=move |_| run("draft")>"Run on the draft"</button>
            </div>
            {(!has_draft).then(|| view! { <p class="c-hint">"No draft: save one on the Versions page to test it here."</p> })}
            <Runs id initial=runs reload outcome />
        </section>
        <section class="c-card" aria-labelledby="t-cases-h">
            <h2 id="t-cases-h">{format!("Test cases ({count})")}</h2>
            <ul class="c-cases" id="t-cases">
                {cases.into_iter().map(|c| view! { <CaseRow case=c editing reload outcome id /> }).collect_view()}
            </ul>
            <button type="button" id="t-add" on:click=move |_| editing.set(Some(new_case()))>"Add a test case"</button>
            {move || editing.get().map(|case| view! { <CaseEditor case editing reload outcome id tools /> })}
            <details>
                <summary>"What a model judge is asked"</summary>
                <pre class="c-prompt" id="t-judge-prompt">{judge_prompt}</pre>
                <p class="c-hint">"Then: the criterion, the visitor's messages and the answer. The judge runs on the "
                    "agent's provider with the model the check names; its cost is counted in the case's."</p>
            </details>
        </section>
    }
}

fn new_case() -> CaseForm {
    CaseForm {
        id: None,
        name: String::new(),
        turns: vec![String::new()],
        checks: vec![CheckForm { kind: "contains".into(), ..CheckForm::default() }],
    }
}

/// The latest runs, read again every second while one is going.
#[component]
fn Runs(id: StoredValue<String>, initial: Vec<TestRunItem>, reload: RwSignal<u32>, outcome: Outcome) -> impl IntoView {
    let runs = RwSignal::new(initial);
    let busy = RwSignal::new(false);
    let poll = move || {
        if busy.get_untracked() || !runs.with_untracked(|r| r.iter().any(TestRunItem::is_active)) {
            return;
        }
        busy.set(true);
        leptos::task::spawn_local(async move {
            if let Ok(fresh) = answer_test_runs(id.get_value()).await {
                runs.set(fresh);
            }
            busy.set(false);
        });
    };
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(poll, std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <ol class="c-runs" id="t-runs">
            {move || runs.get().into_iter().map(|r| view! { <RunRow r id reload outcome /> }).collect_view()}
        </ol>
    }
}

/// One run: what it tried, its progress, the link to its results, Cancel while it goes.
#[component]
fn RunRow(r: TestRunItem, id: StoredValue<String>, reload: RwSignal<u32>, outcome: Outcome) -> impl IntoView {
    let href = format!("/admin/agents/{}/tests/{}", id.get_value(), r.id);
    let run_id = r.id.clone();
    let cancel = move |_| act(outcome, None, reload, cancel_answer_tests(id.get_value(), run_id.clone()));
    let label = format!("{} of {} cases done", r.done, r.total);
    view! {
        <li data-status=r.status.clone()>
            <p>
                <strong>{format!("{} — {}", r.tried(), r.status)}</strong>
                {format!(" · {} of {} passed · ${:.4} · {} (UTC) · {}", r.passed, r.total, r.cost_usd, when(r.started_at),
                    r.started_by.clone().unwrap_or_else(|| "command line".into()))}
            </p>
            <progress max=r.total value=r.done aria-label=label.clone()>{label.clone()}</progress>
            {r.error.clone().map(|e| view! { <p class="c-error">{e}</p> })}
            <div class="c-row-actions">
                <A href=href>"Results"</A>
                {(r.status == "running").then(|| view! {
                    <button type="button" class="t-cancel" on:click=cancel>"Cancel"</button>
                })}
            </div>
        </li>
    }
}

/// A case in the list: its messages and checks, Edit and Delete.
#[component]
fn CaseRow(
    case: CaseForm,
    editing: RwSignal<Option<CaseForm>>,
    reload: RwSignal<u32>,
    outcome: Outcome,
    id: StoredValue<String>,
) -> impl IntoView {
    let name = case.name.clone();
    let case_id = case.id.clone().unwrap_or_default();
    let edit = {
        let case = case.clone();
        move |_| editing.set(Some(case.clone()))
    };
    let remove = move |_| {
        if confirm("Delete this test case? Its results in earlier runs stay.") {
            act(outcome, None, reload, delete_answer_test(id.get_value(), case_id.clone()));
        }
    };
    view! {
        <li>
            <h3>{name.clone()}</h3>
            <ol class="c-turns">{case.turns.iter().map(|t| view! { <li>{format!("Visitor: {t}")}</li> }).collect_view()}</ol>
            <ul class="c-checks">{case.checks.iter().map(|c| view! { <li>{describe(c)}</li> }).collect_view()}</ul>
            <div class="c-row-actions">
                <button type="button" on:click=edit aria-label=format!("Edit {name}")>"Edit"</button>
                <button type="button" class="c-danger" on:click=remove aria-label=format!("Delete {name}")>"Delete"</button>
            </div>
        </li>
    }
}

/// A check in words, as the form holds it.
fn describe(c: &CheckForm) -> String {
    let label = CHECK_KINDS.iter().find(|(k, _)| *k == c.kind).map_or(c.kind.as_str(), |(_, l)| l);
    match c.kind.as_str() {
        "hands_over" | "no_hand_over" => format!("The answer {label}."),
        "judge" => format!("The answer: {} ({label}: {}).", c.value, c.model),
        _ => format!("The answer {label}: {}", c.value),
    }
}

/// The case form: a name, the visitor's messages (one a line), and the checks.
#[component]
fn CaseEditor(
    case: CaseForm,
    editing: RwSignal<Option<CaseForm>>,
    reload: RwSignal<u32>,
    outcome: Outcome,
    id: StoredValue<String>,
    tools: StoredValue<Vec<String>>,
) -> impl IntoView {
    let case_id = case.id.clone();
    let heading = if case_id.is_some() { "Edit the test case" } else { "New test case" };
    let name = RwSignal::new(case.name);
    let turns = RwSignal::new(case.turns.join("\n"));
    let checks = RwSignal::new(case.checks);
    let errors: Errors = RwSignal::new(Vec::new());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let form = CaseForm {
            id: case_id.clone(),
            name: name.get_untracked(),
            turns: turns.get_untracked().lines().map(str::to_owned).collect(),
            checks: checks.get_untracked(),
        };
        leptos::task::spawn_local(async move {
            match save_answer_test(id.get_value(), form).await {
                Ok(o) if o.ok => {
                    errors.set(vec![]);
                    outcome.set(Some((true, o.message)));
                    editing.set(None);
                    reload.update(|n| *n += 1);
                }
                Ok(o) => {
                    errors.set(o.errors);
                    outcome.set(Some((false, "Please correct the fields marked below.".into())));
                }
                Err(e) => outcome.set(Some((false, e.to_string()))),
            }
        });
    };
    // A row per check, by place: each row reads its check from `checks`.
    let indices = move || (0..checks.with(Vec::len)).collect::<Vec<usize>>();
    let add_check = move |_| checks.update(|c| c.push(CheckForm { kind: "contains".into(), ..CheckForm::default() }));
    view! {
        <form class="c-form c-card" id="t-editor" on:submit=save novalidate=true aria-labelledby="t-editor-h">
            <h3 id="t-editor-h">{heading}</h3>
            <label for="t-name">"Name"</label>
            <input id="t-name" type="text" maxlength="100" prop:value=move || name.get()
                on:input=move |ev| name.set(event_target_value(&ev)) />
            <FieldMessage errors field="name" />
            <label for="t-turns">"The visitor's messages, one a line (the checks look at the answer to the last)"</label>
            <textarea id="t-turns" rows="3" prop:value=move || turns.get()
                on:input=move |ev| turns.set(event_target_value(&ev))></textarea>
            <FieldMessage errors field="turns" />
            <fieldset>
                <legend>"A good answer…"</legend>
                <For each=indices key=|i| *i let:i>
                    <CheckRow i checks tools />
                </For>
                <button type="button" id="t-add-check" on:click=add_check>"Add a check"</button>
            </fieldset>
            <FieldMessage errors field="checks" />
            <div class="c-actions">
                <button type="submit" class="c-primary" id="t-save">"Save the test case"</button>
                <button type="button" on:click=move |_| editing.set(None)>"Cancel"</button>
            </div>
        </form>
    }
}

/// One check of the form: what it looks at, its value, and the judge's model.
#[component]
fn CheckRow(i: usize, checks: RwSignal<Vec<CheckForm>>, tools: StoredValue<Vec<String>>) -> impl IntoView {
    let get = move || checks.with(|c| c.get(i).cloned().unwrap_or_default());
    let kind = move || get().kind;
    let needs_value = move || !matches!(kind().as_str(), "hands_over" | "no_hand_over");
    let is_tool = move || matches!(kind().as_str(), "calls_tool" | "not_calls_tool");
    let set = move |f: &dyn Fn(&mut CheckForm)| {
        checks.update(|c| {
            if let Some(check) = c.get_mut(i) {
                f(check)
            }
        })
    };
    let list = format!("t-tools-{i}");
    view! {
        <div class="c-check-row">
            <label for=format!("t-kind-{i}")>{format!("Check {}", i + 1)}</label>
            <select id=format!("t-kind-{i}") prop:value=kind
                on:change=move |ev| { let v = event_target_value(&ev); set(&|c| c.kind = v.clone()) }>
                {CHECK_KINDS.iter().map(|(k, l)| view! { <option value=*k>{*l}</option> }).collect_view()}
            </select>
            {move || needs_value().then(|| view! {
                <input type="text" id=format!("t-value-{i}") aria-label=format!("Check {}: value", i + 1)
                    list=is_tool().then(|| list.clone())
                    prop:value=move || get().value
                    on:input=move |ev| { let v = event_target_value(&ev); set(&|c| c.value = v.clone()) } />
            })}
            {move || (kind() == "judge").then(|| view! {
                <input type="text" id=format!("t-model-{i}") aria-label=format!("Check {}: the judge's model", i + 1)
                    placeholder="model" prop:value=move || get().model
                    on:input=move |ev| { let v = event_target_value(&ev); set(&|c| c.model = v.clone()) } />
            })}
            <datalist id=format!("t-tools-{i}")>
                {tools.get_value().into_iter().map(|t| view! { <option value=t></option> }).collect_view()}
            </datalist>
            <button type="button" aria-label=format!("Remove check {}", i + 1)
                on:click=move |_| checks.update(|c| { if i < c.len() { c.remove(i); } })>"Remove"</button>
        </div>
    }
}

#[component]
pub fn AgentTestRunPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let run = move || params.read().get("run").unwrap_or_default();
    let tick = RwSignal::new(0u32);
    let data = Resource::new(move || (id(), run(), tick.get()), |(id, run, _)| answer_test_run(id, run));
    Effect::new(move |_| {
        let poll = move || {
            if data.get_untracked().and_then(Result::ok).is_some_and(|v| v.run.is_active()) {
                tick.update(|t| *t += 1);
            }
        };
        if let Ok(handle) = set_interval_with_handle(poll, std::time::Duration::from_secs(1)) {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <p><A href=move || format!("/admin/agents/{}/tests", id())>"← Answer tests"</A></p>
        // Read with `get`, not through `Loaded`: the view follows every read the poll makes.
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || data.get().map(|read| match read {
                Ok(data) => view! { <RunResults data /> }.into_any(),
                Err(error) => view! { <Failure error /> }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn RunResults(data: TestRunView) -> impl IntoView {
    let TestRunView { agent_name, run, previous, cases, .. } = data;
    let label = format!("{} of {} cases done", run.done, run.total);
    let against = match &previous {
        Some(p) => format!("Compared with the run before: {}, {} of {} passed.", p.tried(), p.passed, p.total),
        None => "This is the first run: there is nothing to compare with.".into(),
    };
    view! {
        <h1>{format!("Answer tests: {agent_name}")}</h1>
        <section class="c-card" id="t-run" data-status=run.status.clone() aria-labelledby="t-run-title">
            <h2 id="t-run-title">{format!("Run on {}: {}", run.tried(), run.status)}</h2>
            <p id="t-summary">{format!("{} of {} passed · ${:.4} · started {} (UTC)", run.passed, run.total, run.cost_usd, when(run.started_at))}</p>
            <progress max=run.total value=run.done aria-label=label.clone()>{label.clone()}</progress>
            {run.error.clone().map(|e| view! { <p class="c-error" role="alert">{e}</p> })}
            <p>{against}</p>
        </section>
        <ol class="c-results" id="t-results">
            {cases.into_iter().map(|c| view! { <CaseResultView c /> }).collect_view()}
        </ol>
    }
}

/// One case now and before: pass or fail, what turned, each check, the answers side by side.
#[component]
fn CaseResultView(c: CaseCompare) -> impl IntoView {
    let CaseCompare { name, turns, now, before, turned, answer_diff } = c;
    let passed = now.as_ref().is_some_and(|n| n.passed);
    view! {
        <li class="c-card c-result" class:c-pass=passed class:c-fail=!passed data-passed=passed.to_string()>
            <h3>
                <span class="c-badge">{if passed { "PASS" } else { "FAIL" }}</span>
                " " {name}
                {turned.map(|t| view! { " " <mark class="c-turned">{t}</mark> })}
            </h3>
            <ol class="c-turns">{turns.into_iter().map(|t| view! { <li>{format!("Visitor: {t}")}</li> }).collect_view()}</ol>
            {now.clone().map(|n| view! { <Checks n /> })}
            <div class="c-compare">
                <div>
                    <h4>"Now"</h4>
                    {now.map(|n| view! { <Answer n /> })}
                </div>
                <div>
                    <h4>"The run before"</h4>
                    {match before {
                        Some(b) => view! { <Answer n=b /> }.into_any(),
                        None => view! { <p class="c-hint">"Not in the run before."</p> }.into_any(),
                    }}
                </div>
            </div>
            {(!answer_diff.is_empty()).then(|| view! {
                <details open=true>
                    <summary>"How the answer changed (+ added, − removed)"</summary>
                    <DiffLines lines=answer_diff />
                </details>
            })}
        </li>
    }
}

/// The checks, each with what it was in the run before (a change marked).
#[component]
fn Checks(n: CaseOutcome) -> impl IntoView {
    view! {
        <ul class="c-checks">
            {n.checks.into_iter().map(|c| {
                let mark = if c.passed { "✓" } else { "✗" };
                let was = c.was.map(|w| if w { "passed before" } else { "failed before" });
                let changed = c.was.is_some_and(|w| w != c.passed);
                view! {
                    <li class:c-pass=c.passed class:c-fail=!c.passed>
                        <span aria-hidden="true">{mark}</span>
                        {format!(" {} — {} ", c.label, if c.passed { "passed" } else { "failed" })}
                        <span class="c-hint">{format!("({})", c.detail)}</span>
                        {was.map(|w| if changed {
                            view! { " " <mark class="c-turned">{w}</mark> }.into_any()
                        } else {
                            view! { <span class="c-hint">{format!(" · {w}")}</span> }.into_any()
                        })}
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

/// An answer with its tools, sources, cost and time.
#[component]
fn Answer(n: CaseOutcome) -> impl IntoView {
    let tools = if n.tools.is_empty() { "none".to_owned() } else { n.tools.join(", ") };
    let sources = if n.sources.is_empty() { "none".to_owned() } else { n.sources.join("; ") };
    view! {
        {n.error.map(|e| view! { <p class="c-error">{e}</p> })}
        <blockquote class="c-answer">{n.answer}</blockquote>
        <dl class="c-facts">
            <dt>"Status"</dt><dd>{n.status}</dd>
            <dt>"Tools"</dt><dd>{tools}</dd>
            <dt>"Sources"</dt><dd>{sources}</dd>
            <dt>"Offered a person"</dt><dd>{if n.handed_over { "yes" } else { "no" }}</dd>
            <dt>"Cost"</dt><dd>{format!("${:.6}", n.cost_usd)}</dd>
            <dt>"Time"</dt><dd>{format!("{} ms", n.duration_ms)}</dd>
        </dl>
    }
}
