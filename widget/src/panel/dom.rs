//! The few DOM calls the panel makes. Parts of the panel are written as [`Html`] (templates whose
//! arguments are escaped by type: `crate::html`) and set with `innerHTML` — here only, and only
//! from `Html` ([`set_html`], [`make`], [`Part::show`]); a part that comes and goes is a [`Part`].
//! Every distinct browser method is JavaScript glue in the bundle, so the panel keeps to these.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{Document, Element, Event};

use crate::action::Action;
use crate::html::{Html, html};

pub fn document() -> Document {
    web_sys::window().and_then(|w| w.document()).expect("a document")
}

/// The first element under `root` that matches `selector` (the panel's own markup: always there).
pub fn find(root: &Element, selector: &str) -> Element {
    root.query_selector(selector).ok().flatten().expect("the panel's own markup")
}

/// Replaces what is in `el` by `html`: the panel's one way to `innerHTML` (clippy refuses the
/// browser's setter elsewhere in the crate: widget/clippy.toml).
#[allow(clippy::disallowed_methods)]
pub fn set_html(el: &Element, html: &Html) {
    el.set_inner_html(html.as_str());
}

/// An element made from HTML (one root element).
pub fn make(html: &Html) -> Element {
    let holder = document().create_element("div").expect("div");
    set_html(&holder, html);
    holder.first_element_child().expect("one element")
}

/// Calls `f` for each `kind` event under `target` (the page's life: never removed). `Fn`, not
/// `FnMut`: a handler may cause another event of its kind at once (the attach button clicks the
/// file picker), which calls it again while it runs.
pub fn on(target: &web_sys::EventTarget, kind: &str, f: impl Fn(Event) + 'static) {
    let f = Closure::<dyn Fn(Event)>::new(f);
    let _ = target.add_event_listener_with_callback(kind, f.as_ref().unchecked_ref());
    f.forget();
}

/// The element an event happened on, or its closest ancestor matching `selector`.
pub fn closest(event: &Event, selector: &str) -> Option<Element> {
    event.target()?.dyn_into::<Element>().ok()?.closest(selector).ok().flatten()
}

/// A form control's `value`.
pub fn value(el: &Element) -> String {
    js_sys::Reflect::get(el, &"value".into()).ok().and_then(|v| v.as_string()).unwrap_or_default()
}

pub fn set_value(el: &Element, value: &str) {
    let _ = js_sys::Reflect::set(el, &"value".into(), &value.into());
}

pub fn focus(el: &Element) {
    if let Some(el) = el.dyn_ref::<web_sys::HtmlElement>() {
        let _ = el.focus();
    }
}

/// Sets or removes a boolean attribute (`disabled`).
pub fn flag(el: &Element, name: &str, on: bool) {
    let _ = if on { el.set_attribute(name, "") } else { el.remove_attribute(name) };
}

/// The element's action (`data-pw`), if it has one the panel knows.
pub fn action(el: &Element) -> Option<Action> {
    Action::parse(&el.get_attribute("data-pw")?)
}

/// ` name="value"` (escaped), or nothing when `value` is `None`: for building tags.
pub fn attr(name: &'static str, value: Option<&str>) -> Html {
    value.map(|v| html!(" {}=\"{}\"", Html::from_static(name), v)).unwrap_or_default()
}

/// A part of the page that is there or not, or changes as a whole: its HTML is set in a box that
/// takes no room of its own (`display: contents`), so the part sits in the page's flow as if it
/// were there directly.
#[derive(Clone)]
pub struct Part {
    pub el: Element,
    shown: std::rc::Rc<std::cell::RefCell<Html>>,
}

impl Part {
    /// The part in the box `el` (an element of the panel's markup with class `pw-c`).
    pub fn at(el: Element) -> Part {
        Part { el, shown: Default::default() }
    }

    /// Shows `html` (nothing when empty); the page is touched only when it changed. What the
    /// visitor typed in the part's text box stays (a rating's comment while its stars change), and
    /// so does the focus when the focused control is there again: the same `data-pw` (and
    /// `data-n`), or the text box. Otherwise the focus is not moved to some other control.
    pub fn show(&self, html: Html) {
        if *self.shown.borrow() == html {
            return;
        }
        let active = document().active_element().filter(|a| self.el.contains(Some(a)));
        let typed = self.el.query_selector("textarea").ok().flatten().map(|t| value(&t));
        set_html(&self.el, &html);
        *self.shown.borrow_mut() = html;
        if let Some(typed) = typed.filter(|t| !t.is_empty())
            && let Ok(Some(t)) = self.el.query_selector("textarea")
        {
            set_value(&t, &typed);
        }
        if let Some(active) = active {
            let selector = match (active.get_attribute("data-pw"), active.get_attribute("data-n")) {
                (Some(pw), Some(n)) => Some(format!("[data-pw=\"{pw}\"][data-n=\"{n}\"]")),
                (Some(pw), None) => Some(format!("[data-pw=\"{pw}\"]")),
                _ if active.tag_name().eq_ignore_ascii_case("textarea") => Some("textarea".to_owned()),
                _ => None,
            };
            if let Some(selector) = selector
                && let Ok(Some(again)) = self.el.query_selector(&selector)
            {
                focus(&again);
            }
        }
    }
}

/// Runs `f` before the next paint.
pub fn next_frame(f: impl FnOnce() + 'static) {
    if let Some(w) = web_sys::window() {
        let _ = w.request_animation_frame(Closure::once_into_js(f).unchecked_ref());
    }
}
