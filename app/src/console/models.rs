//! `/admin/models`: the model price table (US dollars per million tokens, context window, image
//! support) that every upstream call is costed with. Administrators only.

use leptos::prelude::*;

use super::api::models::{delete_model_price, model_prices, save_model_price};
use super::layout::confirm;
use super::lists::{Failure, field_error};
use super::types::{FieldError, ModelPriceForm, ModelPriceItem};

/// `128000` as `128,000`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a new row starts with.
fn blank() -> ModelPriceForm {
    ModelPriceForm { context_window: "128000".into(), ..Default::default() }
}

#[component]
pub fn ModelsPage() -> impl IntoView {
    let version = RwSignal::new(0u64);
    let list = Resource::new(move || version.get(), |_| model_prices());
    let f = RwSignal::new(blank());
    let errors = RwSignal::new(Vec::<FieldError>::new());
    let notice = RwSignal::new(None::<String>);
    let edit = move |p: &ModelPriceItem| {
        f.set(ModelPriceForm::from(p));
        errors.set(vec![]);
        notice.set(None);
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let form = f.get_untracked();
        notice.set(None);
        leptos::task::spawn_local(async move {
            match save_model_price(form).await {
                Ok(saved) if saved.errors.is_empty() => {
                    errors.set(vec![]);
                    notice.set(Some(format!("Saved {}.", saved.id.unwrap_or_default())));
                    version.update(|v| *v += 1);
                }
                Ok(saved) => {
                    errors.set(saved.errors);
                    notice.set(Some("Please correct the fields marked below.".into()));
                }
                Err(e) => notice.set(Some(e.to_string())),
            }
        });
    };
    let remove = move |prefix: String| {
        if !confirm(&format!("Delete the price of {prefix}? Models it matched will cost nothing.")) {
            return;
        }
        leptos::task::spawn_local(async move {
            match delete_model_price(prefix.clone()).await {
                Ok(_) => notice.set(Some(format!("Deleted {prefix}."))),
                Err(e) => notice.set(Some(e.to_string())),
            }
            version.update(|v| *v += 1);
        });
    };

    macro_rules! text_input {
        ($id:literal, $label:literal, $field:ident, $mode:literal) => {
            view! {
                <div class="c-field">
                    <label for=$id>$label</label>
                    <input id=$id inputmode=$mode autocomplete="off"
                        prop:value=move || f.with(|f| f.$field.clone())
                        on:input=move |ev| f.update(|f| f.$field = event_target_value(&ev))
                        aria-describedby=concat!("err-", stringify!($field)) />
                    {field_error(errors, stringify!($field))}
                </div>
            }
        };
    }

    view! {
        <h1>"Models & prices"</h1>
        <p class="c-hint">
            "US dollars per million tokens. A model takes the row of the longest prefix of its name (a provider prefix such as "
            <code>"openai/"</code>" is ignored); a model without a row costs nothing. Click a row to edit it."
        </p>
        <Transition fallback=|| view! { <p class="c-loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(rows) => view! {
                        <table class="c-table c-rows" id="models">
                            <thead><tr>
                                <th>"Prefix"</th><th>"Input $/M"</th><th>"Cached $/M"</th><th>"Output $/M"</th>
                                <th>"Context window"</th><th>"Vision"</th><th></th>
                            </tr></thead>
                            <tbody>
                                {rows.into_iter().map(|p| {
                                    let prefix = p.model_prefix.clone();
                                    let key = p.model_prefix.clone();
                                    let row = StoredValue::new(p.clone());
                                    view! {
                                        <tr data-prefix=key on:click=move |_| row.with_value(|p| edit(p))>
                                            <td><button type="button" class="c-link">{p.model_prefix}</button></td>
                                            <td>{p.input_per_mtok.to_string()}</td>
                                            <td>{p.cached_per_mtok.to_string()}</td>
                                            <td>{p.output_per_mtok.to_string()}</td>
                                            <td>{grouped(p.context_window)}</td>
                                            <td>{if p.vision { "yes" } else { "no" }}</td>
                                            <td>
                                                <button type="button" class="c-danger" aria-label=format!("Delete {prefix}")
                                                    on:click=move |ev| { ev.stop_propagation(); remove(prefix.clone()); }>
                                                    "Delete"
                                                </button>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                    Err(error) => view! { <Failure error /> }.into_any(),
                }
            })}
        </Transition>
        <form class="c-form c-card" id="price-form" on:submit=submit novalidate=true>
            <h2>"Add or edit a price"</h2>
            <p class="c-hint">"Saving a prefix that already has a row replaces that row."</p>
            {text_input!("m-prefix", "Model prefix", model_prefix, "text")}
            {text_input!("m-input", "Input (US$ per million tokens)", input_per_mtok, "decimal")}
            {text_input!("m-cached", "Cached input (US$ per million tokens)", cached_per_mtok, "decimal")}
            {text_input!("m-output", "Output (US$ per million tokens)", output_per_mtok, "decimal")}
            {text_input!("m-context", "Context window (tokens)", context_window, "numeric")}
            <label class="c-check" for="m-vision">
                <input type="checkbox" id="m-vision" prop:checked=move || f.with(|f| f.vision)
                    on:change=move |ev| f.update(|f| f.vision = event_target_checked(&ev)) />
                "Reads images (vision)"
            </label>
            {move || notice.get().map(|n| view! { <p class="c-notice" role="status">{n}</p> })}
            <div class="c-actions">
                <button type="submit" class="c-primary">"Save price"</button>
                <button type="button" on:click=move |_| { f.set(blank()); errors.set(vec![]); notice.set(None); }>"New row"</button>
            </div>
        </form>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn groups_thousands() {
        assert_eq!(super::grouped(999), "999");
        assert_eq!(super::grouped(1_000), "1,000");
        assert_eq!(super::grouped(1_047_576), "1,047,576");
        assert_eq!(super::grouped(10_000_000), "10,000,000");
    }
}
