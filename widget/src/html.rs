//! [`Html`]: markup that may be handed to the browser's HTML parser (`innerHTML`). The panel and
//! the block renderers write their markup as HTML text; instead of every template remembering to
//! escape what it puts in, a value of this type can only be made in ways that are safe by
//! construction:
//!
//! - [`Html::text`]: text, escaped (`&`, `<`, `>`, `"`, `'`);
//! - [`Html::from_static`]: markup written in the program (a `&'static str` constant);
//! - the `html!` template: a string literal (the program's markup) whose `{}`
//!   holes are filled by arguments written according to their type ([`ToHtml`]) — text is
//!   escaped, [`Html`] is kept as it is, numbers, `bool`s and [`Action`](crate::action::Action)s
//!   are written as they are (no character of theirs needs escaping);
//! - the markdown renderer ([`crate::markdown::render`]), which escapes all text and writes only
//!   its own tags;
//! - joining values of the type ([`Html::push`], `collect`).
//!
//! There is no constructor from an arbitrary `String` (no `From<String>`, no public field), so a
//! string can only become markup by being escaped; the DOM helpers of the panel take `&Html`.

use std::fmt;

use parley_protocol::html::escape_to;

/// HTML text that is safe to parse as markup (see the module's documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Html(String);

impl Html {
    /// No markup.
    pub const fn new() -> Html {
        Html(String::new())
    }

    /// `text` shown as text: escaped.
    pub fn text(text: &str) -> Html {
        Html(parley_protocol::html::escape_html(text))
    }

    /// Markup written in the program, taken as it is. Only for constants: never a string that
    /// came from outside (it is `'static` so that a visitor's or a tool's words cannot be passed).
    pub fn from_static(markup: &'static str) -> Html {
        Html(markup.to_owned())
    }

    /// What the markdown renderer wrote: every piece of text in it escaped, only its own tags
    /// (`crate::markdown`); nothing else in the crate calls this.
    pub(crate) fn sanitised(markup: String) -> Html {
        Html(markup)
    }

    /// A template filled in: only the `html!` macro's expansion calls this (its literal is the
    /// program's markup, each argument is written by [`ToHtml`]).
    pub(crate) fn from_template(args: fmt::Arguments<'_>) -> Html {
        Html(fmt::format(args))
    }

    /// Adds `more` at the end.
    pub fn push(&mut self, more: &Html) {
        self.0.push_str(&more.0);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The markup, to hand to the browser (`innerHTML`, Leptos's `inner_html`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The markup, to hand to the browser (Leptos's `inner_html` takes a `String`).
    pub fn into_string(self) -> String {
        self.0
    }
}

impl FromIterator<Html> for Html {
    fn from_iter<I: IntoIterator<Item = Html>>(iter: I) -> Html {
        let mut out = Html::new();
        for part in iter {
            out.push(&part);
        }
        out
    }
}

/// How a value is written into a template's hole: text escaped, markup as it is, numbers as
/// they are. Implemented only for types whose writing is safe in HTML text and in a quoted
/// attribute value.
pub trait ToHtml {
    fn write_html(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

impl ToHtml for str {
    fn write_html(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        escape_to(f, self, false)
    }
}

impl ToHtml for String {
    fn write_html(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        escape_to(f, self, false)
    }
}

impl ToHtml for Html {
    fn write_html(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<T: ToHtml + ?Sized> ToHtml for &T {
    fn write_html(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).write_html(f)
    }
}

/// Digits, a sign, `true`/`false`: nothing to escape.
macro_rules! plain {
    ($($t:ty)*) => {$(
        impl ToHtml for $t {
            fn write_html(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }
    )*};
}
plain!(u8 i8 u32 i32 u64 i64 usize bool);

/// A template's argument as the formatter sees it (the `html!` macro's expansion).
pub(crate) struct Arg<'a, T: ?Sized>(pub &'a T);

impl<T: ToHtml + ?Sized> fmt::Display for Arg<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_html(f)
    }
}

/// Whether every hole of a template is a plain `{}` (`{{` and `}}` are the braces themselves).
/// A named hole (`{name}`) would take a variable of the surrounding code as it is, past
/// [`ToHtml`]; the `html!` macro refuses such a template when it compiles.
pub(crate) const fn plain_holes(template: &str) -> bool {
    let b = template.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            if i + 1 < b.len() && (b[i + 1] == b'{' || b[i + 1] == b'}') {
                i += 2;
                continue;
            }
            return false;
        }
        i += 1;
    }
    true
}

/// [`Html`] from a template: `html!("<p class=\"x\">{}</p>", words)`. The literal is the
/// program's markup; each `{}` is filled with an argument written by its type ([`ToHtml`]: a
/// `&str` or `String` escaped, an [`Html`] as it is). Only plain `{}` holes: a template with a
/// named or numbered hole or a format spec does not compile. (The crate's own: outside it, `Html`
/// comes from escaping, constants, markdown and the block renderers.)
macro_rules! html {
    ($template:literal $(, $arg:expr)* $(,)?) => {{
        const {
            assert!(
                $crate::html::plain_holes($template),
                "html!: only plain `{{}}` holes (each argument is escaped by its type)"
            )
        };
        $crate::html::Html::from_template(format_args!($template $(, $crate::html::Arg(&$arg))*))
    }};
}
pub(crate) use html;

#[cfg(test)]
mod tests {
    use super::*;

    const EVIL: &str = "<script>a&b</script>\"'";
    const ESCAPED: &str = "&lt;script&gt;a&amp;b&lt;/script&gt;&quot;&#39;";

    #[test]
    fn text_is_escaped() {
        assert_eq!(Html::text(EVIL).as_str(), ESCAPED);
        assert_eq!(Html::text("plain words, 中文").as_str(), "plain words, 中文");
    }

    #[test]
    fn template_arguments_are_escaped_by_type() {
        let owned = EVIL.to_owned();
        let markup = html!("<b>{}</b>", Html::text("x"));
        let html = html!("<p title=\"{}\">{}{}{}{}</p>", EVIL, owned, &owned, markup, 42u64);
        assert_eq!(html.as_str(), format!("<p title=\"{ESCAPED}\">{ESCAPED}{ESCAPED}<b>x</b>42</p>"));
        assert_eq!(html!("<hr>").as_str(), "<hr>");
        assert_eq!(html!("{{}}{}", true).as_str(), "{}true");
    }

    #[test]
    fn joining_keeps_markup() {
        let items: Html = ["a<", "b"].iter().map(|t| html!("<li>{}</li>", t)).collect();
        assert_eq!(items.as_str(), "<li>a&lt;</li><li>b</li>");
        let mut all = Html::from_static("<ul>");
        all.push(&items);
        all.push(&Html::from_static("</ul>"));
        assert_eq!(all.as_str(), "<ul><li>a&lt;</li><li>b</li></ul>");
        assert!(Html::new().is_empty() && Html::default().is_empty());
    }

    #[test]
    fn only_plain_holes() {
        assert!(plain_holes("<p>{}</p>{{x}}"));
        assert!(!plain_holes("<p>{name}</p>"));
        assert!(!plain_holes("<p>{0}</p>"));
        assert!(!plain_holes("<p>{:?}</p>"));
        assert!(!plain_holes("<p>{"));
    }

    /// No `From`/`FromStr` from a string: a string becomes `Html` only by being escaped. (The
    /// check is the compiler's: were `Html: From<String>`, the two impls below would both apply
    /// and `no_from_string` would not compile.)
    #[test]
    fn no_conversion_from_strings() {
        trait AmbiguousIf<A> {
            fn check() {}
        }
        impl<T: ?Sized> AmbiguousIf<()> for T {}
        struct FromString;
        impl<T: From<String>> AmbiguousIf<FromString> for T {}
        struct FromStaticStr;
        impl<T: From<&'static str>> AmbiguousIf<FromStaticStr> for T {}
        struct FromStr_;
        impl<T: std::str::FromStr> AmbiguousIf<FromStr_> for T {}
        fn no_from_string() {
            <Html as AmbiguousIf<_>>::check();
        }
        no_from_string();
    }
}
