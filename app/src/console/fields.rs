//! The pieces of the console's forms (agents, experts, prices): a labelled input, text area or
//! select bound to one field of the form's signal, checkboxes, the message under a wrong field,
//! and the notice line that says how a save went. Each field shows its error in
//! `<span id="err-{field}">`, which the inputs name in `aria-describedby`.

use leptos::prelude::*;

use super::error::ConsoleError;
use super::types::{FieldError, Saved};

/// A text value of a form: how to read it and how to change it.
#[derive(Clone, Copy)]
pub struct Bound {
    get: Signal<String>,
    set: Callback<String>,
}

impl Bound {
    /// Reads with `get`, writes with `set`.
    pub fn new(get: impl Fn() -> String + Send + Sync + 'static, set: impl Fn(String) + Send + Sync + 'static) -> Self {
        Bound { get: Signal::derive(get), set: Callback::new(set) }
    }
}

/// `bind!(form.field)`: a [`Bound`] on the `String` field `field` of the form signal `form`.
macro_rules! bind {
    ($form:ident . $field:ident) => {
        $crate::console::fields::Bound::new(
            move || $form.with(|f| f.$field.clone()),
            move |v| $form.update(|f| f.$field = v),
        )
    };
}
pub(crate) use bind;

/// The field errors of a form, as the server named them.
pub type Errors = RwSignal<Vec<FieldError>>;

/// The message for `field`, when it has one.
#[component]
pub fn FieldMessage(errors: Errors, field: &'static str) -> impl IntoView {
    move || {
        errors.with(|all| all.iter().find(|e| e.field == field).map(|e| e.message.clone())).map(|m| {
            view! { <span class="c-field-error" id=format!("err-{field}") role="alert">{m}</span> }
        })
    }
}

/// A labelled one-line input and its field's message.
#[component]
pub fn TextInput(
    /// The input's id (the label points at it).
    id: &'static str,
    #[prop(into)] label: String,
    /// The form field whose error shows under it.
    field: &'static str,
    value: Bound,
    errors: Errors,
    /// The input's `type` (text when absent).
    #[prop(optional)]
    kind: Option<&'static str>,
    #[prop(optional)] inputmode: Option<&'static str>,
    #[prop(optional)] autocomplete: Option<&'static str>,
    #[prop(optional, into)] placeholder: Option<String>,
) -> impl IntoView {
    view! {
        <div class="c-field">
            <label for=id>{label}</label>
            <input id=id type=kind inputmode=inputmode autocomplete=autocomplete placeholder=placeholder
                prop:value=value.get on:input=move |ev| value.set.run(event_target_value(&ev))
                aria-describedby=format!("err-{field}") />
            <FieldMessage errors field />
        </div>
    }
}

/// A labelled text area and its field's message.
#[component]
pub fn TextArea(
    id: &'static str,
    #[prop(into)] label: String,
    field: &'static str,
    value: Bound,
    errors: Errors,
    rows: &'static str,
    /// `"false"` for code and JSON.
    #[prop(optional)]
    spellcheck: Option<&'static str>,
) -> impl IntoView {
    view! {
        <div class="c-field">
            <label for=id>{label}</label>
            <textarea id=id rows=rows spellcheck=spellcheck prop:value=value.get
                on:input=move |ev| value.set.run(event_target_value(&ev))
                aria-describedby=format!("err-{field}")></textarea>
            <FieldMessage errors field />
        </div>
    }
}

/// A labelled select of `(value, text)` options and its field's message.
#[component]
pub fn SelectField(
    id: &'static str,
    label: &'static str,
    field: &'static str,
    value: Bound,
    errors: Errors,
    options: &'static [(&'static str, &'static str)],
) -> impl IntoView {
    view! {
        <div class="c-field">
            <label for=id>{label}</label>
            <select id=id on:change=move |ev| value.set.run(event_target_value(&ev)) aria-describedby=format!("err-{field}")>
                {options.iter().map(|(v, text)| view! {
                    <option value=*v selected=move || value.get.with(|x| x == v)>{*text}</option>
                }).collect_view()}
            </select>
            <FieldMessage errors field />
        </div>
    }
}

/// A checkbox with its label around it.
#[component]
pub fn Checkbox(
    #[prop(into)] id: String,
    #[prop(into)] checked: Signal<bool>,
    on_change: Callback<bool>,
    /// Shown on hover.
    #[prop(optional, into)]
    title: MaybeProp<String>,
    children: Children,
) -> impl IntoView {
    let label_for = id.clone();
    view! {
        <label class="c-check" for=label_for title=move || title.get()>
            <input type="checkbox" id=id prop:checked=checked on:change=move |ev| on_change.run(event_target_checked(&ev)) />
            {children()}
        </label>
    }
}

/// One box of a [`CheckList`].
pub struct CheckItem {
    /// What a ticked box adds to the list.
    pub name: String,
    /// Shown instead of the name.
    pub label: Option<String>,
    /// Shown on hover.
    pub title: Option<String>,
}

impl CheckItem {
    /// A box showing its name.
    pub fn named(name: String) -> Self {
        CheckItem { name, label: None, title: None }
    }
}

/// One [`Checkbox`] per name (`id="{prefix}{name}"`, dots as dashes), ticked when `chosen` has
/// the name.
#[component]
pub fn CheckList(
    prefix: &'static str,
    items: Vec<CheckItem>,
    /// The names as code (tool names, event names) rather than text.
    #[prop(optional)]
    code: bool,
    #[prop(into)] chosen: Signal<Vec<String>>,
    /// Ticks (`true`) or unticks a name.
    toggle: Callback<(String, bool)>,
) -> impl IntoView {
    items
        .into_iter()
        .map(|CheckItem { name, label, title }| {
            let mine = name.clone();
            let checked = Signal::derive(move || chosen.with(|c| c.contains(&mine)));
            let mine = name.clone();
            let on_change = Callback::new(move |on| toggle.run((mine.clone(), on)));
            let id = format!("{prefix}{}", name.replace('.', "-"));
            let text = label.unwrap_or(name);
            let text = if code { view! { <code>{text}</code> }.into_any() } else { text.into_any() };
            view! { <Checkbox id checked on_change title>{text}</Checkbox> }
        })
        .collect_view()
}

/// Ticks (`on`) or unticks `name` in `list`.
pub fn tick(list: &mut Vec<String>, name: &str, on: bool) {
    list.retain(|n| n != name);
    if on {
        list.push(name.to_owned());
    }
}

/// A fieldset of checkboxes with its legend and its field's message.
#[component]
pub fn CheckGroup(legend: &'static str, field: &'static str, errors: Errors, children: Children) -> impl IntoView {
    view! {
        <fieldset class="c-field">
            <legend>{legend}</legend>
            {children()}
            <FieldMessage errors field />
        </fieldset>
    }
}

/// How a form's last save went: the wrong fields, and a line for the person.
#[derive(Clone, Copy)]
pub struct FormStatus {
    /// The wrong fields.
    pub errors: Errors,
    /// `Saved.`, a request to correct fields, or why the call failed.
    pub notice: RwSignal<Option<String>>,
}

impl Default for FormStatus {
    fn default() -> Self {
        FormStatus { errors: RwSignal::new(Vec::new()), notice: RwSignal::new(None) }
    }
}

impl FormStatus {
    /// Forgets the last save.
    pub fn clear(&self) {
        self.errors.set(vec![]);
        self.notice.set(None);
    }

    /// Shows the outcome of a save: the wrong fields, or why it failed. The id of what was
    /// saved (empty when the server sent none) when it was.
    pub fn settle(&self, outcome: Result<Saved, ConsoleError>) -> Option<String> {
        match outcome {
            Ok(saved) if saved.errors.is_empty() => {
                self.errors.set(vec![]);
                Some(saved.id.unwrap_or_default())
            }
            Ok(saved) => {
                self.errors.set(saved.errors);
                self.notice.set(Some("Please correct the fields marked below.".into()));
                None
            }
            Err(e) => {
                self.notice.set(Some(e.to_string()));
                None
            }
        }
    }
}

/// The notice line of a form.
#[component]
pub fn Notice(status: FormStatus) -> impl IntoView {
    move || status.notice.get().map(|n| view! { <p class="c-notice" role="status">{n}</p> })
}

/// The error line of a small form or an action (`role="alert"`), when there is an error.
#[component]
pub fn ErrorLine(error: RwSignal<Option<String>>) -> impl IntoView {
    move || error.get().map(|e| view! { <p class="c-error" role="alert">{e}</p> })
}
