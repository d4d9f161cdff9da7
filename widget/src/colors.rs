//! The owner's colour, made readable: whatever colour an agent is given, text on it and text in
//! it keep at least 4.5:1 contrast (WCAG AA). Text on the colour is black or white, whichever
//! contrasts more (one of them always reaches 4.58:1); the colour used for text and borders on
//! the panel's light surfaces is the owner's colour darkened until it reaches 4.5:1 there, and on
//! the dark palette's surfaces the colour lightened until it does. An owner may choose the text
//! colour on their colour themselves; the console warns when it falls short ([`text_warning`]).

/// The least contrast for text (WCAG 2 AA, normal text).
pub const MIN_CONTRAST: f64 = 4.5;
/// The panel's lightest surface text in the accent colour sits on (`--pw-soft`).
const SURFACE: (u8, u8, u8) = (0xf3, 0xf4, 0xf6);
/// The dark palette's lightest surface text in the accent colour sits on (`--pw-soft`, dark).
const DARK_SURFACE: (u8, u8, u8) = (0x37, 0x41, 0x51);
const FALLBACK: &str = "#4f46e5";

/// `#rgb` or `#rrggbb`, else `None`.
pub fn parse(color: &str) -> Option<(u8, u8, u8)> {
    let hex = color.strip_prefix('#')?;
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let digit = |i: usize| u8::from_str_radix(&hex[i..i + 1], 16).ok();
    match hex.len() {
        3 => Some((digit(0)? * 17, digit(1)? * 17, digit(2)? * 17)),
        6 => {
            let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
            Some((byte(0)?, byte(2)?, byte(4)?))
        }
        _ => None,
    }
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Relative luminance (WCAG 2).
pub fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let channel = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.039_28 { c / 12.92 } else { pow_2_4((c + 0.055) / 1.055) }
    };
    0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}

/// `x` to the power 2.4, for `x` in (0, 1]: x² times the fifth root of x², the root by Newton's
/// method from 1 (from above the root the steps come down until they stop). Not `f64::powf`,
/// whose maths-library `pow` was 2 KB of the panel's bundle. It may differ from `powf` in the
/// last bit; checked against `powf` over all 16,777,216 colours (2026-12-05), [`on`],
/// [`readable_on_surface`] and [`readable_on_dark`] choose the same colours.
fn pow_2_4(x: f64) -> f64 {
    let square = x * x;
    let mut root = 1.0_f64;
    loop {
        let r2 = root * root;
        let next = (4.0 * root + square / (r2 * r2)) / 5.0;
        if next >= root {
            return square * root;
        }
        root = next;
    }
}

/// Contrast ratio of two colours, 1 to 21.
pub fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

/// Text on the colour: white or near-black, whichever contrasts more — pure black when the
/// near-black falls short (white or black always reaches 4.58:1).
pub fn on(color: (u8, u8, u8)) -> (u8, u8, u8) {
    const DARK: (u8, u8, u8) = (0x11, 0x18, 0x27);
    const LIGHT: (u8, u8, u8) = (0xff, 0xff, 0xff);
    const BLACK: (u8, u8, u8) = (0, 0, 0);
    let (light, dark) = (contrast(color, LIGHT), contrast(color, DARK));
    if light >= dark && light >= MIN_CONTRAST {
        LIGHT
    } else if dark > light && dark >= MIN_CONTRAST {
        DARK
    } else if contrast(color, BLACK) >= light {
        BLACK
    } else {
        LIGHT
    }
}

/// The colour darkened (in steps of 5 %) until text in it reaches [`MIN_CONTRAST`] on the
/// panel's surfaces.
pub fn readable_on_surface(color: (u8, u8, u8)) -> (u8, u8, u8) {
    let mut c = color;
    let mut step = 0;
    while contrast(c, SURFACE) < MIN_CONTRAST && step < 20 {
        step += 1;
        let keep = 1.0 - f64::from(step) * 0.05;
        let scale = |v: u8| (f64::from(v) * keep).round() as u8;
        c = (scale(color.0), scale(color.1), scale(color.2));
    }
    c
}

/// The colour lightened (mixed with white in steps of 5 %) until text in it reaches
/// [`MIN_CONTRAST`] on the dark palette's surfaces.
pub fn readable_on_dark(color: (u8, u8, u8)) -> (u8, u8, u8) {
    let mut c = color;
    let mut step = 0;
    while contrast(c, DARK_SURFACE) < MIN_CONTRAST && step < 20 {
        step += 1;
        let mix = f64::from(step) * 0.05;
        let lift = |v: u8| (f64::from(v) + (255.0 - f64::from(v)) * mix).round() as u8;
        c = (lift(color.0), lift(color.1), lift(color.2));
    }
    c
}

/// The console's warning when the owner's text colour on their colour falls short of
/// [`MIN_CONTRAST`]; `None` when it is readable (or either colour is not one).
pub fn text_warning(color: &str, text_color: &str) -> Option<String> {
    let ratio = contrast(parse(color)?, parse(text_color)?);
    (ratio < MIN_CONTRAST).then(|| {
        format!(
            "Text in {text_color} on {color} has a contrast of {ratio:.1}:1, below the 4.5:1 that keeps it readable. Leave it empty to have it chosen for you."
        )
    })
}

/// The panel's colour variables for an agent's colour (an invalid one gets Parley's own) and the
/// owner's text colour on it (`None` or an invalid one: chosen for contrast).
pub fn style(color: &str, text_color: Option<&str>) -> String {
    let accent = parse(color).unwrap_or_else(|| parse(FALLBACK).expect("the fallback colour"));
    let on_accent = text_color.and_then(parse).unwrap_or_else(|| on(accent));
    format!(
        "--pw-accent: {}; --pw-on-accent: {}; --pw-accent-text-l: {}; --pw-accent-text-d: {};",
        hex(accent),
        hex(on_accent),
        hex(readable_on_surface(accent)),
        hex(readable_on_dark(accent))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_is_powf_to_the_last_bits() {
        for v in 10..=255u8 {
            let x = (f64::from(v) / 255.0 + 0.055) / 1.055;
            let (ours, std) = (pow_2_4(x), x.powf(2.4));
            assert!((ours - std).abs() <= std * 1e-15, "{v}: {ours} {std}");
        }
        assert_eq!(pow_2_4(1.0), 1.0);
    }

    #[test]
    fn text_keeps_its_contrast_whatever_colour_the_owner_picks() {
        // Every 17th step of each channel: 4,096 colours, the awkward mid-greys included.
        for r in (0..=255).step_by(17) {
            for g in (0..=255).step_by(17) {
                for b in (0..=255).step_by(17) {
                    let c = (r as u8, g as u8, b as u8);
                    assert!(contrast(c, on(c)) >= MIN_CONTRAST, "text on {c:?}");
                    assert!(contrast(readable_on_surface(c), SURFACE) >= MIN_CONTRAST, "text in {c:?}");
                    assert!(contrast(readable_on_surface(c), (255, 255, 255)) >= MIN_CONTRAST);
                    assert!(contrast(readable_on_dark(c), DARK_SURFACE) >= MIN_CONTRAST, "dark {c:?}");
                    assert!(contrast(readable_on_dark(c), (0x1f, 0x29, 0x37)) >= MIN_CONTRAST);
                }
            }
        }
    }

    #[test]
    fn known_contrasts_and_choices() {
        assert!((contrast((0, 0, 0), (255, 255, 255)) - 21.0).abs() < 1e-9);
        assert_eq!(on((0xfa, 0xcc, 0x15)), (0x11, 0x18, 0x27), "dark text on yellow");
        assert_eq!(on((0x4f, 0x46, 0xe5)), (255, 255, 255), "white text on indigo");
        assert_eq!(readable_on_surface((0x1d, 0x4e, 0xd8)), (0x1d, 0x4e, 0xd8), "a dark colour stays as it is");
        assert_eq!(parse("#abc"), Some((0xaa, 0xbb, 0xcc)));
        assert_eq!(parse("red"), None);
        assert!(style("javascript:alert(1)", None).starts_with("--pw-accent: #4f46e5;"));
        assert!(style("#FACC15", None).contains("--pw-on-accent: #111827;"));
        // The owner's own text colour is used as given; an invalid one is chosen for them.
        assert!(style("#FACC15", Some("#ffffff")).contains("--pw-on-accent: #ffffff;"));
        assert!(style("#FACC15", Some("url(x)")).contains("--pw-on-accent: #111827;"));
    }

    #[test]
    fn a_text_colour_below_the_contrast_rule_is_warned_about() {
        // White on yellow: 1.5:1.
        let warning = text_warning("#facc15", "#ffffff").expect("a warning");
        assert!(warning.contains("1.5:1"), "{warning}");
        assert_eq!(text_warning("#4f46e5", "#ffffff"), None, "6.3:1");
        assert!(text_warning("#777777", "#ffffff").is_some(), "4.48:1");
        assert_eq!(text_warning("#767676", "#ffffff"), None, "4.54:1");
        assert_eq!(text_warning("#4f46e5", ""), None);
    }
}
