//! `ask_form` (capability `forms`): a short form under the model's answer (text, email, phone,
//! select and date fields). The visitor's answers are checked in the panel and again on the server
//! against this block, and reach the model as the result of a `form_answers` call (see
//! `engine::context`), never as free text.

use parley_protocol::{Block, FieldKind, Form, MAX_FORM_FIELDS, MAX_FORM_LABEL_CHARS, MAX_FORM_OPTIONS};
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput};

pub struct AskForm;

#[async_trait::async_trait]
impl Tool for AskForm {
    fn name(&self) -> &'static str {
        "ask_form"
    }

    fn description(&self) -> &'static str {
        "Show the visitor a short form under your reply when you need several details at once (a \
         booking, a call-back, an order's details). The visitor's answers come back to you later as \
         the result of a `form_answers` call with the form's id. Still say in your reply what the form \
         is for; do not also ask for the same details in text."
    }

    fn capability(&self) -> &'static str {
        "forms"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::READ
    }

    fn schema(&self) -> Value {
        let kinds: Vec<&str> = FieldKind::ALL.iter().map(|k| k.as_str()).collect();
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "maxLength": MAX_FORM_LABEL_CHARS, "description": "A few words above the form."},
                "fields": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_FORM_FIELDS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "pattern": "^[a-z0-9_]{1,32}$", "description": "The answer's key."},
                            "label": {"type": "string", "minLength": 1, "maxLength": MAX_FORM_LABEL_CHARS, "description": "What the visitor reads, in their language."},
                            "type": {"type": "string", "enum": kinds},
                            "required": {"type": "boolean"},
                            "options": {
                                "type": "array",
                                "maxItems": MAX_FORM_OPTIONS,
                                "items": {"type": "string", "minLength": 1, "maxLength": MAX_FORM_LABEL_CHARS},
                                "description": "The choices of a select (only for type select)."
                            }
                        },
                        "required": ["name", "label", "type"],
                        "additionalProperties": false
                    }
                },
                "submit_label": {"type": "string", "maxLength": 40, "description": "The button's text (optional)."}
            },
            "required": ["fields"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, _ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let form = form(&args, crate::store::new_id())?;
        let result = json!({
            "ok": true,
            "form_id": form.form_id,
            "message": "The form is shown under your reply. The visitor's answers come back as the result of a \
                        `form_answers` call with this form_id."
        });
        Ok(ToolOutput { result, blocks: vec![Block::Form(form)] })
    }
}

/// A form from a definition (the tool's arguments, or an owner tool's block), checked, with the
/// id given.
pub(super) fn form(args: &Value, form_id: String) -> Result<Form, ToolError> {
    let bad = |why: String| ToolError::InvalidArguments(why);
    let mut definition = args.clone();
    let Some(map) = definition.as_object_mut() else { return Err(bad("the form must be an object".into())) };
    map.remove("type");
    let fallback = map.remove("fallback_text");
    map.insert("form_id".into(), json!(form_id));
    map.insert("fallback_text".into(), json!(""));
    let mut form: Form = serde_json::from_value(definition).map_err(|e| bad(format!("not a form: {e}")))?;
    form.title = form.title.trim().to_owned();
    for f in &mut form.fields {
        f.label = f.label.trim().to_owned();
        f.options.iter_mut().for_each(|o| *o = o.trim().to_owned());
    }
    if let Some(why) = form.definition_problem() {
        return Err(bad(why));
    }
    form.fallback_text =
        fallback.as_ref().and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()).map_or_else(
            || {
                let labels: Vec<&str> = form.fields.iter().map(|f| f.label.as_str()).collect();
                let title = if form.title.is_empty() { "A form" } else { &form.title };
                format!("{title}: {}", labels.join(", "))
            },
            |t| t.chars().take(500).collect(),
        );
    Ok(form)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_form_becomes_a_block_with_its_id_told_to_the_model() {
        let t = super::super::testing::context().await;
        let args = json!({"title": " Call back ", "fields": [
            {"name": "name", "label": "Your name", "type": "text", "required": true},
            {"name": "slot", "label": "When", "type": "select", "options": [" Morning ", "Evening"]}
        ]});
        let out = AskForm.execute(&t.ctx, args).await.expect("shown");
        let [Block::Form(f)] = out.blocks.as_slice() else { panic!("{:?}", out.blocks) };
        assert_eq!(out.result["form_id"], json!(f.form_id));
        assert_eq!(f.title, "Call back");
        assert_eq!(f.fields[1].options, ["Morning", "Evening"]);
        assert_eq!(f.fallback_text, "Call back: Your name, When");
    }

    #[test]
    fn wrong_forms_are_refused_with_the_reason() {
        for (args, why) in [
            (json!({"fields": []}), "1 to 8"),
            (json!({"fields": [{"name": "a", "label": "A", "type": "color"}]}), "not a form"),
            (json!({"fields": [{"name": "a", "label": "A", "type": "select"}]}), "options"),
            (json!({"fields": [{"name": "A b", "label": "A", "type": "text"}]}), "`name`"),
            (json!({"fields": [{"name": "a", "label": " ", "type": "text"}]}), "`label`"),
            (json!({"fields": [{"name": "a", "label": "A", "type": "text", "secret": 1}]}), "not a form"),
        ] {
            match form(&args, "f".into()) {
                Err(ToolError::InvalidArguments(m)) => assert!(m.contains(why), "{args}: {m}"),
                other => panic!("{args}: {other:?}"),
            }
        }
    }
}
