//! The panel's and the blocks' icons as inline SVG: the same on every system (an emoji or a font
//! glyph renders as an empty box where no font has it, and differently everywhere else), drawn
//! in `currentColor` so they follow the theme, and hidden from screen readers (the button that
//! holds one carries the words).

use crate::html::Html;

/// One 24-unit icon made of strokes (`body` is its paths).
macro_rules! icon {
    ($name:ident, $body:literal) => {
        pub const $name: &str = concat!(
            "<svg class=\"pw-svg\" viewBox=\"0 0 24 24\" width=\"1em\" height=\"1em\" aria-hidden=\"true\" \
             focusable=\"false\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"2\" \
             stroke-linecap=\"round\" stroke-linejoin=\"round\">",
            $body,
            "</svg>"
        );
    };
}

icon!(THUMB_UP, "<path d=\"M7 10v11H3V10zM7 10l4-8a3 3 0 0 1 3 3v4h6a2 2 0 0 1 2 2.3l-1.4 8A2 2 0 0 1 18.6 21H7\"/>");
icon!(
    THUMB_DOWN,
    "<path d=\"M17 14V3h4v11zM17 14l-4 8a3 3 0 0 1-3-3v-4H4a2 2 0 0 1-2-2.3l1.4-8A2 2 0 0 1 5.4 3H17\"/>"
);
icon!(RESTART, "<path d=\"M3 12a9 9 0 1 0 3-6.7L3 8\"/><path d=\"M3 3v5h5\"/>");
icon!(CROSS, "<path d=\"M18 6 6 18M6 6l12 12\"/>");
icon!(CHECK, "<path d=\"M20 6 9 17l-5-5\"/>");
icon!(
    STAR,
    "<path fill=\"currentColor\" d=\"m12 2 3.1 6.3 6.9 1-5 4.9 1.2 6.8-6.2-3.2-6.2 3.2L7 14.2 2 9.3l6.9-1z\"/>"
);

/// An icon for [`crate::html::html!`]'s arguments.
pub fn html(icon: &'static str) -> Html {
    Html::from_static(icon)
}

#[cfg(test)]
mod tests {
    #[test]
    fn icons_are_svg_hidden_from_screen_readers_and_carry_no_text() {
        for icon in [super::THUMB_UP, super::THUMB_DOWN, super::RESTART, super::CROSS, super::CHECK, super::STAR] {
            assert!(icon.starts_with("<svg ") && icon.ends_with("</svg>"));
            assert!(icon.contains("aria-hidden=\"true\""));
            assert!(!icon.chars().any(|c| (c as u32) > 0x7f), "only ASCII: {icon}");
        }
    }
}
