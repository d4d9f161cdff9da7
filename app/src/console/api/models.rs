//! Model prices (administrators only): the table every upstream call is costed with, with each
//! model's context window and image support. Every change reloads the engine's copy.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

#[cfg(feature = "ssr")]
use super::access::AdminUser;
use crate::console::error::ConsoleError;
use crate::console::types::{ModelPriceForm, ModelPriceItem, Saved};

/// Every row of the price table, by prefix.
#[server]
pub async fn model_prices() -> Result<Vec<ModelPriceItem>, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let rows = parley_engine::store::prices::list(state.engine.db()).await?;
    Ok(rows
        .into_iter()
        .map(|p| ModelPriceItem {
            model_prefix: p.model_prefix,
            input_per_mtok: p.input_per_mtok,
            cached_per_mtok: p.cached_per_mtok,
            output_per_mtok: p.output_per_mtok,
            context_window: p.context_window,
            vision: p.vision,
        })
        .collect())
}

/// Adds the row of a prefix or replaces it. Field errors come back in [`Saved::errors`] and
/// nothing is written; `Saved::id` is the prefix saved.
#[server(input = Json)]
pub async fn save_model_price(form: ModelPriceForm) -> Result<Saved, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let price = match validate(&form) {
        Ok(price) => price,
        Err(errors) => return Ok(Saved { id: None, errors }),
    };
    parley_engine::store::prices::upsert(state.engine.db(), &price, state.engine.now_ms()).await?;
    state.engine.reload_prices().await.map_err(ConsoleError::internal)?;
    Ok(Saved { id: Some(price.model_prefix), errors: vec![] })
}

/// Deletes the row of a prefix; `false` when there was none.
#[server]
pub async fn delete_model_price(prefix: String) -> Result<bool, ConsoleError> {
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let deleted = parley_engine::store::prices::delete(state.engine.db(), &prefix).await?;
    if deleted {
        state.engine.reload_prices().await.map_err(ConsoleError::internal)?;
    }
    Ok(deleted)
}

/// The row the form describes, or everything wrong with it, by field.
#[cfg(feature = "ssr")]
pub fn validate(
    form: &ModelPriceForm,
) -> Result<parley_engine::engine::pricing::ModelPrice, Vec<crate::console::types::FieldError>> {
    use crate::console::types::FieldError;
    let mut errors = Vec::new();
    let prefix = form.model_prefix.trim();
    if !(1..=120).contains(&prefix.len())
        || !prefix.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
    {
        errors.push(FieldError::new(
            "model_prefix",
            "1 to 120 characters: letters, digits and . _ : - (e.g. gpt-4o-mini; a provider prefix such as openai/ is ignored when prices are looked up).",
        ));
    }
    let mut price = |field: &str, text: &str| match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && (0.0..=1000.0).contains(&n) => n,
        _ => {
            errors.push(FieldError::new(field, "A price from 0 to 1000 US dollars per million tokens."));
            0.0
        }
    };
    let input_per_mtok = price("input_per_mtok", &form.input_per_mtok);
    let cached_per_mtok = price("cached_per_mtok", &form.cached_per_mtok);
    let output_per_mtok = price("output_per_mtok", &form.output_per_mtok);
    let context_window = match form.context_window.trim().replace([',', '_'], "").parse::<u64>() {
        Ok(n) if (1_000..=10_000_000).contains(&n) => n,
        _ => {
            errors.push(FieldError::new("context_window", "A whole number of tokens from 1000 to 10000000."));
            0
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(parley_engine::engine::pricing::ModelPrice {
        model_prefix: prefix.to_owned(),
        input_per_mtok,
        cached_per_mtok,
        output_per_mtok,
        context_window,
        vision: form.vision,
    })
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    fn good() -> ModelPriceForm {
        ModelPriceForm {
            model_prefix: "gpt-4o-mini:free".into(),
            input_per_mtok: "0.15".into(),
            cached_per_mtok: "0".into(),
            output_per_mtok: " 1000 ".into(),
            context_window: "128,000".into(),
            vision: true,
        }
    }

    fn fields(form: &ModelPriceForm) -> Vec<String> {
        validate(form).err().unwrap_or_default().into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn accepts_a_good_row() {
        let p = validate(&good()).unwrap();
        assert_eq!((p.input_per_mtok, p.output_per_mtok, p.context_window, p.vision), (0.15, 1000.0, 128_000, true));
    }

    #[test]
    fn refuses_a_provider_prefix_that_lookups_would_ignore() {
        assert_eq!(fields(&ModelPriceForm { model_prefix: "openrouter/gpt-4o".into(), ..good() }), ["model_prefix"]);
    }

    #[test]
    fn names_each_wrong_field() {
        let f = ModelPriceForm {
            model_prefix: "gpt 4o".into(),
            input_per_mtok: "NaN".into(),
            cached_per_mtok: "-0.1".into(),
            output_per_mtok: "inf".into(),
            context_window: "999".into(),
            vision: false,
        };
        assert_eq!(
            fields(&f),
            ["model_prefix", "input_per_mtok", "cached_per_mtok", "output_per_mtok", "context_window"]
        );
        let f = ModelPriceForm {
            model_prefix: "x".repeat(121),
            output_per_mtok: "1000.01".into(),
            context_window: "10000001".into(),
            ..good()
        };
        assert_eq!(fields(&f), ["model_prefix", "output_per_mtok", "context_window"]);
        assert_eq!(fields(&ModelPriceForm { model_prefix: "<b>".into(), ..good() }), ["model_prefix"]);
        assert_eq!(fields(&ModelPriceForm { model_prefix: " ".into(), ..good() }), ["model_prefix"]);
    }
}
