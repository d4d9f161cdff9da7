use std::collections::BTreeMap;

use super::*;

fn tags(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn every_catalogue_has_every_key_and_no_empty_string() {
    // The type makes every catalogue carry every key; this checks the values.
    assert_eq!(Labels::KEYS.len(), EN.entries().len());
    for lang in Lang::ALL {
        let all = lang.labels().entries();
        assert_eq!(all.len(), Labels::KEYS.len());
        for (key, value) in all {
            assert!(!value.trim().is_empty(), "{lang:?}.{key} is empty");
        }
    }
}

#[test]
fn every_language_is_translated_not_english() {
    // Brand names and words the language has borrowed may stay as they are; a few more may
    // happen to be spelled alike (French "Sources"), no more.
    const ALLOWED: [&str; 3] = ["Alipay", "WeChat Pay", "Email"];
    for lang in Lang::ALL.into_iter().filter(|l| *l != Lang::En) {
        let same: Vec<&str> = lang
            .labels()
            .entries()
            .into_iter()
            .zip(EN.entries())
            .filter(|((_, text), (_, english))| text == english && !ALLOWED.contains(text))
            .map(|((key, _), _)| key)
            .collect();
        assert!(same.len() <= 2, "{lang:?} has English left in {same:?}");
    }
}

#[test]
fn every_catalogue_keeps_the_punctuation_the_panel_writes_around_it() {
    for lang in Lang::ALL {
        let l = lang.labels();
        // A time follows `away_back`: it introduces it.
        assert!(l.away_back.ends_with([':', '：']), "{lang:?}.away_back: {}", l.away_back);
        // An address follows these and a countdown `expires_in`: no full stop before them.
        for (key, text) in
            [("email_sent", l.email_sent), ("email_code_sent", l.email_code_sent), ("expires_in", l.expires_in)]
        {
            assert!(!text.ends_with(['.', '。']), "{lang:?}.{key}: {text}");
        }
        // What is still going on trails off.
        for (key, text) in [
            ("placeholder", l.placeholder),
            ("writing", l.writing),
            ("offline", l.offline),
            ("operator_typing", l.operator_typing),
        ] {
            assert!(text.ends_with('…'), "{lang:?}.{key}: {text}");
        }
    }
    // French: the marks that take a space take a narrow no-break one, never a breaking one.
    for (key, text) in FR.entries() {
        for mark in [" ?", " !", " :", " ;"] {
            assert!(!text.contains(mark), "fr.{key}: {text}");
        }
    }
}

#[test]
fn traditional_is_not_simplified() {
    // Characters with different Simplified and Traditional forms: no Traditional string
    // carries a Simplified one, and every Simplified string with one is written differently.
    const SIMPLIFIED_ONLY: &str =
        "输发关话闭对内离线演时应实处断图协续议择请连网这为们语给问题单试额钮务闻阅读顾户邮须页过钟";
    let hans = ZH_HANS.entries();
    for ((key, hant), (_, simplified)) in ZH_HANT.entries().into_iter().zip(hans) {
        assert!(!hant.chars().any(|c| SIMPLIFIED_ONLY.contains(c)), "zh-Hant {key}: {hant}");
        if simplified.chars().any(|c| SIMPLIFIED_ONLY.contains(c)) {
            assert_ne!(hant, simplified, "zh-Hant {key} is the Simplified text");
        }
    }
    assert_ne!(ZH_HANT.send, ZH_HANS.send);
    assert_eq!(ZH_HANT.placeholder, "輸入訊息…");
}

#[test]
fn browser_tags_are_read_by_their_language() {
    let cases = [
        ("ja", Lang::Ja),
        ("ja-JP", Lang::Ja),
        ("ko", Lang::Ko),
        ("ko-KR", Lang::Ko),
        ("es", Lang::Es),
        ("es-ES", Lang::Es),
        ("es-419", Lang::Es),
        ("es-MX", Lang::Es),
        ("fr", Lang::Fr),
        ("fr-CA", Lang::Fr),
        ("de", Lang::De),
        ("de-AT", Lang::De),
        ("de-CH", Lang::De),
        ("pt", Lang::PtBr),
        ("pt-BR", Lang::PtBr),
        ("pt-PT", Lang::PtBr),
        ("pt_br", Lang::PtBr),
        ("ar", Lang::Ar),
        ("ar-EG", Lang::Ar),
        ("ar-SA", Lang::Ar),
        ("vi", Lang::Vi),
        ("vi-VN", Lang::Vi),
        ("th", Lang::Th),
        ("th-TH", Lang::Th),
        ("id", Lang::Id),
        ("id-ID", Lang::Id),
        ("in", Lang::Id),
        ("in-ID", Lang::Id),
        (" EN-gb ", Lang::En),
        ("zh-Hant-TW", Lang::ZhHant),
    ];
    for (tag, lang) in cases {
        assert_eq!(Lang::from_tag(tag), Some(lang), "{tag}");
    }
    for tag in ["", "ru", "pl-PL", "it", "nl", "ms", "tl", "jv", "deu", "idn"] {
        assert_eq!(Lang::from_tag(tag), None, "{tag}");
    }
    // Every language's own tag reads back as itself (the page's `lang` attribute).
    for lang in Lang::ALL {
        assert_eq!(Lang::from_tag(lang.tag()), Some(lang));
    }
}

#[test]
fn the_language_comes_from_the_setting_or_the_browser() {
    use LanguageSetting as S;
    assert_eq!(choose(S::Auto, &tags(&["zh-TW", "en"])), Lang::ZhHant);
    assert_eq!(choose(S::Auto, &tags(&["zh-HK"])), Lang::ZhHant);
    assert_eq!(choose(S::Auto, &tags(&["zh-MO"])), Lang::ZhHant);
    assert_eq!(choose(S::Auto, &tags(&["zh-Hant"])), Lang::ZhHant);
    assert_eq!(choose(S::Auto, &tags(&["zh-Hant-TW"])), Lang::ZhHant);
    assert_eq!(choose(S::Auto, &tags(&["zh-Hans-HK"])), Lang::ZhHans);
    assert_eq!(choose(S::Auto, &tags(&["zh-CN", "zh-TW"])), Lang::ZhHans);
    assert_eq!(choose(S::Auto, &tags(&["zh"])), Lang::ZhHans);
    assert_eq!(choose(S::Auto, &tags(&["zh_SG"])), Lang::ZhHans);
    assert_eq!(choose(S::Auto, &tags(&["en-GB", "zh-TW"])), Lang::En);
    // The first language the panel speaks wins; none: English.
    assert_eq!(choose(S::Auto, &tags(&["fr-FR", "zh-TW"])), Lang::Fr);
    assert_eq!(choose(S::Auto, &tags(&["fr", "de"])), Lang::Fr);
    assert_eq!(choose(S::Auto, &tags(&["ru-RU", "uk", "de-AT", "en"])), Lang::De);
    assert_eq!(choose(S::Auto, &tags(&["pt-PT", "es"])), Lang::PtBr);
    assert_eq!(choose(S::Auto, &tags(&["nl", "ar-EG", "en"])), Lang::Ar);
    assert_eq!(choose(S::Auto, &tags(&["in-ID", "en-US"])), Lang::Id);
    assert_eq!(choose(S::Auto, &tags(&["ja-JP", "ko-KR"])), Lang::Ja);
    assert_eq!(choose(S::Auto, &tags(&["ko-KR", "ja-JP"])), Lang::Ko);
    assert_eq!(choose(S::Auto, &tags(&["th-TH", "vi"])), Lang::Th);
    assert_eq!(choose(S::Auto, &tags(&["es-419"])), Lang::Es);
    assert_eq!(choose(S::Auto, &tags(&["ru", "pl"])), Lang::En);
    assert_eq!(choose(S::Auto, &[]), Lang::En);
    // The agent's own choice beats the browser.
    assert_eq!(choose(S::ZhHans, &tags(&["zh-TW"])), Lang::ZhHans);
    assert_eq!(choose(S::En, &tags(&["zh-TW"])), Lang::En);
    assert_eq!(choose(S::ZhHant, &tags(&["en-US"])), Lang::ZhHant);
    assert_eq!(choose(S::Vi, &tags(&["fr-FR"])), Lang::Vi);
    // Every setting but `auto` names one language, written with the same tag.
    for setting in LanguageSetting::ALL.into_iter().filter(|s| *s != S::Auto) {
        assert_eq!(choose(setting, &tags(&["ja", "en"])).tag(), setting.as_str());
    }
    assert_eq!(Lang::ALL.len(), LanguageSetting::ALL.len() - 1);
}

#[test]
fn arabic_is_written_right_to_left() {
    assert_eq!(Lang::Ar.dir(), "rtl");
    for lang in Lang::ALL.into_iter().filter(|l| *l != Lang::Ar) {
        assert_eq!(lang.dir(), "ltr", "{lang:?}");
    }
}

#[test]
fn dates_are_written_for_the_language() {
    let cases = [
        (Lang::En, "Mar 1, 2025"),
        (Lang::ZhHans, "2025年3月1日"),
        (Lang::ZhHant, "2025年3月1日"),
        (Lang::Ja, "2025年3月1日"),
        (Lang::Ko, "2025년 3월 1일"),
        (Lang::Es, "1 mar 2025"),
        (Lang::Fr, "1 mars 2025"),
        (Lang::De, "1. März 2025"),
        (Lang::PtBr, "1 de mar. de 2025"),
        (Lang::Ar, "1 مارس 2025"),
        (Lang::Vi, "1 thg 3, 2025"),
        (Lang::Th, "1 มี.ค. 2025"),
        (Lang::Id, "1 Mar 2025"),
    ];
    for (lang, want) in cases {
        assert_eq!(lang.date("2025-03-01"), want, "{lang:?}");
        assert_eq!(lang.date("2025-03-01T08:00:00Z"), want, "{lang:?} with a time");
        assert_eq!(lang.date("yesterday"), "yesterday");
        assert_eq!(lang.date("2025-13-01"), "2025-13-01");
    }
    assert_eq!(Lang::ZhHant.date("2025-12-31"), "2025年12月31日");
    assert_eq!(Lang::Es.date("2025-09-15"), "15 sept 2025");
    assert_eq!(Lang::Fr.date("2025-08-15"), "15 août 2025");
    assert_eq!(Lang::De.date("2025-05-09"), "9. Mai 2025");
    assert_eq!(Lang::PtBr.date("2025-10-31"), "31 de out. de 2025");
    assert_eq!(Lang::Ar.date("2025-12-25"), "25 ديسمبر 2025");
    assert_eq!(Lang::Vi.date("2025-12-25"), "25 thg 12, 2025");
    assert_eq!(Lang::Th.date("2025-12-25"), "25 ธ.ค. 2025");
    assert_eq!(Lang::Id.date("2025-08-17"), "17 Agu 2025");
    assert_eq!(Lang::Ko.date("2025-12-25"), "2025년 12월 25일");
}

#[test]
fn amounts_are_written_for_the_language() {
    // The amounts the panel wrote before these languages came.
    assert_eq!(Lang::En.amount(12_345_678, "HKD"), "HK$123,456.78");
    assert_eq!(Lang::ZhHans.amount(5_000, "CNY"), "¥50.00");
    assert_eq!(Lang::ZhHant.amount(-100_000, "TWD"), "-NT$1,000.00");
    assert_eq!(Lang::En.amount(99, "THB"), "0.99 THB");
    assert_eq!(Lang::En.amount(5_000, "CNY"), "¥50.00");

    // 1,234.50 euros in every language, then a currency without a symbol there.
    let cases = [
        (Lang::En, "€1,234.50", "1,234.50 SAR"),
        (Lang::ZhHans, "€1,234.50", "1,234.50 SAR"),
        (Lang::ZhHant, "€1,234.50", "1,234.50 SAR"),
        (Lang::Ja, "€1,234.50", "1,234.50 SAR"),
        (Lang::Ko, "€1,234.50", "1,234.50 SAR"),
        (Lang::Th, "€1,234.50", "1,234.50 SAR"),
        (Lang::De, "1.234,50\u{a0}€", "1.234,50\u{a0}SAR"),
        (Lang::Es, "1.234,50\u{a0}€", "1.234,50\u{a0}SAR"),
        (Lang::Vi, "1.234,50\u{a0}€", "1.234,50\u{a0}SAR"),
        (Lang::Fr, "1\u{202f}234,50\u{a0}€", "1\u{202f}234,50\u{a0}SAR"),
        (Lang::PtBr, "€\u{a0}1.234,50", "SAR\u{a0}1.234,50"),
        (Lang::Id, "€1.234,50", "SAR\u{a0}1.234,50"),
        (Lang::Ar, "1,234.50\u{a0}€", "1,234.50\u{a0}SAR"),
    ];
    for (lang, euros, riyals) in cases {
        assert_eq!(lang.amount(123_450, "EUR"), euros, "{lang:?}");
        assert_eq!(lang.amount(123_450, "SAR"), riyals, "{lang:?}");
        // Latin digits everywhere; no thousands separator under a thousand.
        assert!(lang.amount(123_450, "EUR").chars().filter(char::is_ascii_digit).eq("123450".chars()));
        let small = lang.amount(99_999, "SAR");
        assert_eq!(small.matches([',', '.', '\u{202f}']).count(), 1, "{lang:?}: {small}");
    }

    // Each language's own currency, and millions.
    assert_eq!(Lang::Ja.amount(123_456_789, "JPY"), "¥1,234,567.89");
    assert_eq!(Lang::Ja.amount(5_000, "CNY"), "CN¥50.00", "¥ is the yen in Japanese");
    assert_eq!(Lang::Ko.amount(1_000_000, "KRW"), "₩10,000.00");
    assert_eq!(Lang::Th.amount(99, "THB"), "฿0.99");
    assert_eq!(Lang::Vi.amount(123_456_789, "VND"), "1.234.567,89\u{a0}₫");
    assert_eq!(Lang::PtBr.amount(123_450, "BRL"), "R$\u{a0}1.234,50");
    assert_eq!(Lang::PtBr.amount(-123_450, "USD"), "-US$\u{a0}1.234,50");
    assert_eq!(Lang::Id.amount(123_450, "IDR"), "Rp\u{a0}1.234,50");
    assert_eq!(Lang::Id.amount(123_450, "USD"), "US$1.234,50");
    assert_eq!(Lang::Ar.amount(123_450, "USD"), "1,234.50\u{a0}US$");
    assert_eq!(Lang::De.amount(-123_456_789, "EUR"), "-1.234.567,89\u{a0}€");
    assert_eq!(Lang::Fr.amount(123_456_789, "GBP"), "1\u{202f}234\u{202f}567,89\u{a0}£");
    assert_eq!(Lang::Es.amount(5_000, "CNY"), "50,00\u{a0}CN¥");
    // A local symbol is only local: the won and the baht keep their codes in English.
    assert_eq!(Lang::En.amount(100, "KRW"), "1.00 KRW");
    assert_eq!(Lang::En.amount(100, "JPY"), "1.00 JPY");
    assert_eq!(Lang::En.amount(100, "IDR"), "1.00 IDR");
    assert_eq!(Lang::Vi.amount(100, "THB"), "1,00\u{a0}THB");
    assert_eq!(Lang::En.amount(100, "BRL"), "R$1.00");
}

#[test]
fn a_catalogue_read_from_json_is_the_catalogue() {
    for lang in Lang::ALL {
        let map: BTreeMap<String, String> =
            lang.labels().entries().into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        assert_eq!(Labels::from_map(&map).as_ref(), Ok(lang.labels()), "{lang:?}");
    }
    // Keys it does not know are ignored; a missing one is named (the first, in the catalogue's
    // order).
    let mut map: BTreeMap<String, String> =
        JA.entries().into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
    map.insert("from_a_newer_server".into(), "…".into());
    assert_eq!(Labels::from_map(&map), Ok(JA));
    map.remove("email_confirm");
    map.remove("rate_up");
    let err = Labels::from_map(&map).unwrap_err();
    assert!(err.contains("rate_up") && !err.contains("email_confirm"), "{err}");
    assert!(Labels::from_map(&BTreeMap::new()).unwrap_err().contains("placeholder"));
}

#[test]
fn errors_and_lead_problems_follow_the_language() {
    assert_eq!(ZH_HANT.stream_error(&StreamCode::BudgetExceeded), ZH_HANT.error_budget);
    assert_eq!(EN.lead_problem(LeadProblem::BadEmail), LeadProblem::BadEmail.english());
    assert_eq!(ZH_HANT.payment_method("ALIPAY"), "支付寶");
    assert_eq!(EN.payment_method("PAYPAL"), "PAYPAL");
    assert_eq!(KO.payment_method("WECHAT"), "위챗페이");
    assert_eq!(DE.payment_method("CREDIT_CARD"), "Kreditkarte");
    assert_eq!(AR.stream_error(&StreamCode::UserAborted), AR.stopped);
}
