//! `form`: fields the model asks the visitor to fill in, sent with `[data-pw="form"]` (the panel
//! checks the answers with the protocol's own rules, the server again); `form_answers`: what was
//! sent, as the console's transcript shows it. The form goes once anything follows its answer.

use super::BlockCtx;
use crate::action::Action;
use crate::html::{Html, html};
use crate::protocol::{FieldKind, Form, FormAnswers, MAX_FORM_VALUE_CHARS};

pub fn render(form: &Form, ctx: &BlockCtx) -> Html {
    let fields: Html = form
        .fields
        .iter()
        .map(|f| {
            let required = if f.required { Html::from_static(" required aria-required=\"true\"") } else { Html::new() };
            let control = match f.kind {
                FieldKind::Select => {
                    let options: Html = f.options.iter().map(|o| html!("<option>{}</option>", o)).collect();
                    html!("<select name=\"{}\"{}><option value=\"\"></option>{}</select>", f.name, required, options)
                }
                kind => {
                    let (kind, auto) = match kind {
                        FieldKind::Email => ("email", " autocomplete=\"email\""),
                        FieldKind::Phone => ("tel", " autocomplete=\"tel\""),
                        FieldKind::Date => ("date", ""),
                        _ => ("text", ""),
                    };
                    html!(
                        "<input name=\"{}\" type=\"{}\" maxlength=\"{}\"{}{}>",
                        f.name,
                        Html::from_static(kind),
                        MAX_FORM_VALUE_CHARS,
                        Html::from_static(auto),
                        required
                    )
                }
            };
            let mark = if f.required { Html::from_static(" <span aria-hidden=\"true\">*</span>") } else { Html::new() };
            html!(
                "<label><span>{}{}</span>{}</label><p class=\"pw-field-error\" data-f=\"{}\"></p>",
                f.label,
                mark,
                control,
                f.name
            )
        })
        .collect();
    let title =
        if form.title.is_empty() { Html::new() } else { html!("<p class=\"pw-form-title\">{}</p>", form.title) };
    let submit = form.submit_label.as_deref().unwrap_or(ctx.labels.send);
    html!(
        "<form class=\"pw-block pw-form\" data-pw=\"{}\" data-form=\"{}\" novalidate aria-label=\"{}\">{}{}\
         <p class=\"pw-field-error\" data-f=\"form\" role=\"alert\"></p><button type=\"submit\">{}</button></form>",
        Action::Form,
        form.form_id,
        if form.title.is_empty() { ctx.labels.form } else { form.title.as_str() },
        title,
        fields,
        submit
    )
}

pub fn render_answers(answers: &FormAnswers, ctx: &BlockCtx) -> Html {
    let rows: Html = answers.answers.iter().map(|a| html!("<dt>{}</dt><dd>{}</dd>", a.label, a.value)).collect();
    html!("<dl class=\"pw-block pw-form-answers\" aria-label=\"{}\">{}</dl>", ctx.labels.form, rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{FormAnswer, FormField};

    #[test]
    fn fields_become_labelled_controls_with_their_text_escaped() {
        let caps = ["forms".to_owned()];
        let ctx = super::super::tests::ctx(&caps);
        let field = |name: &str, kind, options: &[&str]| FormField {
            name: name.into(),
            label: format!("<b>{name}</b>"),
            kind,
            required: name == "mail",
            options: options.iter().map(|o| (*o).to_owned()).collect(),
        };
        let form = Form {
            form_id: "f-1".into(),
            title: "Book".into(),
            fields: vec![
                field("mail", FieldKind::Email, &[]),
                field("size", FieldKind::Select, &["S\"", "L"]),
                field("day", FieldKind::Date, &[]),
            ],
            submit_label: None,
            fallback_text: "Book".into(),
        };
        let html = render(&form, &ctx).into_string();
        assert!(html.contains("data-pw=\"form\" data-form=\"f-1\""), "{html}");
        assert!(html.contains("<input name=\"mail\" type=\"email\""), "{html}");
        assert!(html.contains(" required aria-required=\"true\""), "{html}");
        assert!(html.contains("<option>S&quot;</option>"), "{html}");
        assert!(html.contains("type=\"date\""), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains(">Send</button>"), "{html}");
        let answers = FormAnswers {
            form_id: "f-1".into(),
            answers: vec![FormAnswer { name: "mail".into(), label: "Email".into(), value: "<a@b.co>".into() }],
            fallback_text: String::new(),
        };
        let html = render_answers(&answers, &ctx).into_string();
        assert!(html.contains("<dt>Email</dt><dd>&lt;a@b.co&gt;</dd>"), "{html}");
    }
}
