//! The language of a text when the document does not say it.
//!
//! Chinese, Japanese and Korean are told by their scripts (a share of Han, kana or Hangul
//! characters), which is certain on a few words where statistics are not; the rest goes to
//! `whatlang` (trigram statistics, no dependencies of note, 70 languages) and is kept only when
//! it is fairly confident (0.5 or more). Codes are the two-letter ones of `<html lang>` (BCP 47).

/// The language of `text` as a BCP 47 primary tag ("zh", "en", ...), or `None` if unsure.
pub(crate) fn detect(text: &str) -> Option<String> {
    let sample: String = text.chars().take(4000).collect();
    if let Some(cjk) = cjk_by_script(&sample) {
        return Some(cjk.to_owned());
    }
    let info = whatlang::detect(&sample)?;
    // `is_reliable` wants long texts; a short English paragraph scores 0.68 and is right.
    if !info.is_reliable() && info.confidence() < 0.5 {
        return None;
    }
    iso_639_1(info.lang()).map(str::to_owned)
}

/// "zh", "ja" or "ko" when CJK characters are a fifth or more of the letters.
fn cjk_by_script(text: &str) -> Option<&'static str> {
    let (mut han, mut kana, mut hangul, mut letters) = (0usize, 0usize, 0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        letters += 1;
        match c as u32 {
            0x3040..=0x30FF | 0x31F0..=0x31FF => kana += 1,
            0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F => hangul += 1,
            0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F => han += 1,
            _ => {}
        }
    }
    if letters == 0 || (han + kana + hangul) * 5 < letters {
        return None;
    }
    Some(if hangul > han + kana {
        "ko"
    } else if kana * 10 >= han + kana {
        "ja"
    } else {
        "zh"
    })
}

/// The two-letter code of a `whatlang` language, where ISO 639-1 has one.
fn iso_639_1(lang: whatlang::Lang) -> Option<&'static str> {
    use whatlang::Lang::*;
    Some(match lang {
        Epo => "eo",
        Eng => "en",
        Rus => "ru",
        Cmn => "zh",
        Spa => "es",
        Por => "pt",
        Ita => "it",
        Ben => "bn",
        Fra => "fr",
        Deu => "de",
        Ukr => "uk",
        Kat => "ka",
        Ara => "ar",
        Hin => "hi",
        Jpn => "ja",
        Heb => "he",
        Yid => "yi",
        Pol => "pl",
        Amh => "am",
        Jav => "jv",
        Kor => "ko",
        Nob => "nb",
        Dan => "da",
        Swe => "sv",
        Fin => "fi",
        Tur => "tr",
        Nld => "nl",
        Hun => "hu",
        Ces => "cs",
        Ell => "el",
        Bul => "bg",
        Bel => "be",
        Mar => "mr",
        Kan => "kn",
        Ron => "ro",
        Slv => "sl",
        Hrv => "hr",
        Srp => "sr",
        Mkd => "mk",
        Lit => "lt",
        Lav => "lv",
        Est => "et",
        Tam => "ta",
        Vie => "vi",
        Urd => "ur",
        Tha => "th",
        Guj => "gu",
        Uzb => "uz",
        Pan => "pa",
        Aze => "az",
        Ind => "id",
        Tel => "te",
        Pes => "fa",
        Mal => "ml",
        Ori => "or",
        Mya => "my",
        Nep => "ne",
        Sin => "si",
        Khm => "km",
        Tuk => "tk",
        Aka => "ak",
        Zul => "zu",
        Sna => "sn",
        Afr => "af",
        Lat => "la",
        Slk => "sk",
        Cat => "ca",
        Tgl => "tl",
        Hye => "hy",
        Cym => "cy",
    })
}

#[cfg(test)]
mod tests {
    use super::detect;

    #[test]
    fn tells_scripts_and_languages() {
        assert_eq!(detect("退款政策：购买后十四天内可以全额退款。").as_deref(), Some("zh"));
        assert_eq!(detect("ひらがなとカタカナの文章です。日本語").as_deref(), Some("ja"));
        assert_eq!(detect("안녕하세요 반갑습니다").as_deref(), Some("ko"));
        let english = "The basic plan costs ten dollars a month and includes three agents for your website.";
        assert_eq!(detect(english).as_deref(), Some("en"));
        assert_eq!(detect("12345 !!!"), None);
    }
}
