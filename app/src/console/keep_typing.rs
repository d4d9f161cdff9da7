//! A conversation's page is drawn anew on each of its events (a visitor's message, a colleague's
//! note, an assignment, the copilot's summary). The operator typing in the reply or note box
//! keeps the focus, the caret and the selection across that: the boxes' focus is followed on the
//! document (a box that loses it while it stays in the page was left on purpose; one that loses
//! it by being removed was redrawn), and the new box gets it back on the next frames — before
//! the next key, which would otherwise land on the page and be taken as a shortcut. Their text
//! is kept by the page itself (its drafts).

/// The boxes followed.
#[cfg(feature = "hydrate")]
const BOXES: [&str; 2] = ["reply", "note"];

/// Follows the boxes' focus (once per page load; browser only).
pub fn follow() {
    #[cfg(feature = "hydrate")]
    browser::install();
}

/// Gives the focus back to the box that had it before the redraw (browser only).
pub fn restore() {
    #[cfg(feature = "hydrate")]
    browser::restore(20);
}

/// Forgets the box (another conversation is shown).
pub fn forget() {
    #[cfg(feature = "hydrate")]
    browser::CARET.with(|c| c.borrow_mut().take());
}

#[cfg(feature = "hydrate")]
mod browser {
    use std::cell::{Cell, RefCell};

    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    use web_sys::HtmlTextAreaElement;

    use super::BOXES;

    /// The box that has (or had, until a redraw) the focus: its id and selection.
    #[derive(Clone)]
    pub(super) struct Caret {
        id: String,
        start: u32,
        end: u32,
    }

    thread_local! {
        pub(super) static CARET: RefCell<Option<Caret>> = const { RefCell::new(None) };
        static INSTALLED: Cell<bool> = const { Cell::new(false) };
    }

    fn followed(target: Option<web_sys::EventTarget>) -> Option<HtmlTextAreaElement> {
        target.and_then(|t| t.dyn_into::<HtmlTextAreaElement>().ok()).filter(|el| BOXES.contains(&el.id().as_str()))
    }

    fn remember(el: &HtmlTextAreaElement) {
        let start = el.selection_start().ok().flatten().unwrap_or(0);
        let end = el.selection_end().ok().flatten().unwrap_or(start);
        CARET.with(|c| *c.borrow_mut() = Some(Caret { id: el.id(), start, end }));
    }

    pub(super) fn install() {
        if INSTALLED.with(|i| i.replace(true)) {
            return;
        }
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
        // Focus, typing, clicks and selections inside a box move what is remembered.
        let note = Closure::<dyn Fn(web_sys::Event)>::new(|e: web_sys::Event| {
            if let Some(el) = followed(e.target()) {
                remember(&el);
            }
        });
        for kind in ["focusin", "input", "keyup", "mouseup", "select"] {
            let _ = doc.add_event_listener_with_callback_and_bool(kind, note.as_ref().unchecked_ref(), true);
        }
        note.forget();
        // Leaving a box that stays in the page forgets it; a box removed by a redraw is kept.
        let left = Closure::<dyn Fn(web_sys::Event)>::new(|e: web_sys::Event| {
            let Some(el) = followed(e.target()) else { return };
            leptos::prelude::set_timeout(
                move || {
                    if el.is_connected() {
                        CARET.with(|c| c.borrow_mut().take_if(|c| c.id == el.id()));
                    }
                },
                std::time::Duration::ZERO,
            );
        });
        let _ = doc.add_event_listener_with_callback_and_bool("focusout", left.as_ref().unchecked_ref(), true);
        left.forget();
    }

    /// Focuses the remembered box once a new one is in the page and nothing else has the focus;
    /// looks again on each of the next `frames` animation frames.
    pub(super) fn restore(frames: u32) {
        let Some(caret) = CARET.with(|c| c.borrow().clone()) else { return };
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
        let found = doc.get_element_by_id(&caret.id).and_then(|e| e.dyn_into::<HtmlTextAreaElement>().ok());
        let focused = doc.active_element();
        match found {
            // The box is there and something other than a box has the focus (the page itself,
            // after the redraw): back to the box.
            Some(el)
                if el.is_connected() && focused.as_ref().is_none_or(|f| followed(Some(f.clone().into())).is_none()) =>
            {
                let body = doc.body().map(|b| b.unchecked_into::<web_sys::Element>());
                if focused.is_none() || focused == body {
                    let _ = el.focus();
                    let _ = el.set_selection_range(caret.start, caret.end);
                    return;
                }
            }
            _ => {}
        }
        if frames > 0 {
            leptos::prelude::request_animation_frame(move || restore(frames - 1));
        }
    }
}
