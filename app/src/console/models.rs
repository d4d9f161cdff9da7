//! `/admin/models`: the model price table (US dollars per million tokens, context window, image
//! support) that every upstream call is costed with. Administrators only.

use leptos::prelude::*;

use super::api::models::{delete_model_price, model_prices, save_model_price};
use super::fields::{Checkbox, FormStatus, Notice, TextInput, bind};
use super::layout::confirm;
use super::loaded::Loaded;
use super::types::{ModelPriceForm, ModelPriceItem};

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

/// `/admin/models`: the price table and the form that edits a row.
#[component]
pub fn ModelsPage() -> impl IntoView {
    let version = RwSignal::new(0u64);
    let list = Resource::new(move || version.get(), |_| model_prices());
    let f = RwSignal::new(blank());
    let status = FormStatus::default();
    let errors = status.errors;
    let edit = move |p: &ModelPriceItem| {
        f.set(ModelPriceForm::from(p));
        status.clear();
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let form = f.get_untracked();
        status.notice.set(None);
        leptos::task::spawn_local(async move {
            if let Some(prefix) = status.settle(save_model_price(form).await) {
                status.notice.set(Some(format!("Saved {prefix}.")));
                version.update(|v| *v += 1);
            }
        });
    };
    let remove = move |prefix: String| {
        if !confirm(&format!(
            "Delete the price of {prefix}? Models it matched will be charged the default price for unpriced models."
        )) {
            return;
        }
        leptos::task::spawn_local(async move {
            match delete_model_price(prefix.clone()).await {
                Ok(_) => status.notice.set(Some(format!("Deleted {prefix}."))),
                Err(e) => status.notice.set(Some(e.to_string())),
            }
            version.update(|v| *v += 1);
        });
    };

    view! {
        <h1>"Models & prices"</h1>
        <p class="c-hint">
            "US dollars per million tokens. A model takes the row of the longest prefix of its name (a provider prefix such as "
            <code>"openai/"</code>" is ignored); a model without a row is charged a conservative default price (settings PARLEY_UNPRICED_INPUT_PER_MTOK and PARLEY_UNPRICED_OUTPUT_PER_MTOK) and is flagged on its agent and the dashboard. Click a row to edit it."
        </p>
        <Loaded resource=list let:rows>
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
        </Loaded>
        <form class="c-form c-card" id="price-form" on:submit=submit novalidate=true>
            <h2>"Add or edit a price"</h2>
            <p class="c-hint">"Saving a prefix that already has a row replaces that row."</p>
            <TextInput id="m-prefix" label="Model prefix" field="model_prefix" value=bind!(f.model_prefix) errors
                inputmode="text" autocomplete="off" />
            <TextInput id="m-input" label="Input (US$ per million tokens)" field="input_per_mtok"
                value=bind!(f.input_per_mtok) errors inputmode="decimal" autocomplete="off" />
            <TextInput id="m-cached" label="Cached input (US$ per million tokens)" field="cached_per_mtok"
                value=bind!(f.cached_per_mtok) errors inputmode="decimal" autocomplete="off" />
            <TextInput id="m-output" label="Output (US$ per million tokens)" field="output_per_mtok"
                value=bind!(f.output_per_mtok) errors inputmode="decimal" autocomplete="off" />
            <TextInput id="m-context" label="Context window (tokens)" field="context_window"
                value=bind!(f.context_window) errors inputmode="numeric" autocomplete="off" />
            <Checkbox id="m-vision" checked=Signal::derive(move || f.with(|f| f.vision))
                on_change=Callback::new(move |on| f.update(|f| f.vision = on))>
                "Reads images (vision)"
            </Checkbox>
            <Notice status />
            <div class="c-actions">
                <button type="submit" class="c-primary">"Save price"</button>
                <button type="button" on:click=move |_| { f.set(blank()); status.clear(); }>"New row"</button>
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
