//! How each language writes a date and an amount: small rules after CLDR's (what `Intl` would
//! write), testable off the browser and next to nothing in the panel's bundle.
//!
//! Every language writes Latin digits (0–9), Arabic and Thai too: the amounts, order numbers
//! and times around them on the host page are Latin, and CLDR's Arabic-Indic default is not
//! what most Arabic-language sites show. Dates are Gregorian everywhere (Thai too, not the
//! Buddhist era).

use super::Lang;

/// No-break space: between an amount and a symbol written after it (`1.234,50 €`), and after a
/// symbol ending in a letter written before it (`R$ 1.234,50`, `Rp 1.234,50`).
const NBSP: &str = "\u{a0}";
/// Narrow no-break space: French groups thousands with it (`1 234,50 €`).
const NNBSP: &str = "\u{202f}";

const EN_MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const ES_MONTHS: [&str; 12] = ["ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic"];
const FR_MONTHS: [&str; 12] =
    ["janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."];
const DE_MONTHS: [&str; 12] =
    ["Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."];
const PT_MONTHS: [&str; 12] =
    ["jan.", "fev.", "mar.", "abr.", "mai.", "jun.", "jul.", "ago.", "set.", "out.", "nov.", "dez."];
const AR_MONTHS: [&str; 12] =
    ["يناير", "فبراير", "مارس", "أبريل", "مايو", "يونيو", "يوليو", "أغسطس", "سبتمبر", "أكتوبر", "نوفمبر", "ديسمبر"];
const TH_MONTHS: [&str; 12] =
    ["ม.ค.", "ก.พ.", "มี.ค.", "เม.ย.", "พ.ค.", "มิ.ย.", "ก.ค.", "ส.ค.", "ก.ย.", "ต.ค.", "พ.ย.", "ธ.ค."];
const ID_MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "Mei", "Jun", "Jul", "Agu", "Sep", "Okt", "Nov", "Des"];

/// Where a language puts the currency.
enum Place {
    /// Before, touching: `HK$1,234.50`. A currency with no symbol here is written as its code
    /// after the amount, `1,234.50 THB`, which reads better than `THB1,234.50`.
    Before,
    /// Before, symbol or code alike, with a no-break space when `always` or when it ends in a
    /// letter (CLDR's currency spacing): `R$ 1.234,50`, `Rp 1.234,50`, `US$1.234,50` (id).
    Lead { always: bool },
    /// After a no-break space, symbol or code alike: `1.234,50 €`, `1,234.50 SAR`.
    After,
}

impl Lang {
    /// A date as the tools give it (`2025-03-01`, maybe with a time after it) written for the
    /// language, CLDR's medium date with abbreviated months: `Mar 1, 2025`, `2025年3月1日`,
    /// `2025년 3월 1일`, `1 mar 2025`, `1 mars 2025`, `1. März 2025`, `1 de mar. de 2025`,
    /// `1 مارس 2025`, `1 thg 3, 2025`, `1 มี.ค. 2025`, `1 Mar 2025`. Latin digits and the
    /// Gregorian year everywhere. Anything else is shown as it is.
    pub fn date(self, text: &str) -> String {
        let Some((y, m, d)) = parse_date(text) else { return text.to_owned() };
        let i = (m - 1) as usize;
        match self {
            Lang::En => format!("{} {d}, {y}", EN_MONTHS[i]),
            Lang::ZhHans | Lang::ZhHant | Lang::Ja => format!("{y}年{m}月{d}日"),
            Lang::Ko => format!("{y}년 {m}월 {d}일"),
            Lang::Es => format!("{d} {} {y}", ES_MONTHS[i]),
            Lang::Fr => format!("{d} {} {y}", FR_MONTHS[i]),
            Lang::De => format!("{d}. {} {y}", DE_MONTHS[i]),
            Lang::PtBr => format!("{d} de {} de {y}", PT_MONTHS[i]),
            Lang::Ar => format!("{d} {} {y}", AR_MONTHS[i]),
            Lang::Vi => format!("{d} thg {m}, {y}"),
            Lang::Th => format!("{d} {} {y}", TH_MONTHS[i]),
            Lang::Id => format!("{d} {} {y}", ID_MONTHS[i]),
        }
    }

    /// An amount in minor units (cents, fen; taken as hundredths for every currency, yen and won
    /// too, as the tools send them) with its currency, in Latin digits:
    ///
    /// - en, zh, ja, ko, th: `1,234.50`, the symbol first and touching (`HK$1,234.50`,
    ///   `฿1,234.50`); a currency without a symbol as its code after: `1,234.50 THB`.
    /// - de, es, vi: `1.234,50`, the symbol after a no-break space: `1.234,50 €`.
    /// - fr: thousands by a narrow no-break space, comma decimal, symbol after a no-break space:
    ///   `1 234,50 €`.
    /// - pt-BR: `R$ 1.234,50`; id: `Rp 1.234,50` (a space after a symbol ending in a letter,
    ///   `US$1.234,50` otherwise); a currency without a symbol as its code in the symbol's place.
    /// - ar: `1,234.50 US$`, CLDR's Arabic with Latin digits, without its bidi marks: the panel
    ///   is laid out right to left for Arabic, which reads the number first, then the currency.
    ///
    /// Symbols: `HK$ US$ € £ NT$ R$` everywhere; `¥` is the yuan in English and Chinese and the
    /// yen in Japanese (the yuan is `CN¥` there and elsewhere); `₩ ₫ ฿ Rp` only in Korean,
    /// Vietnamese, Thai and Indonesian, whose currencies they are. Otherwise the ISO code. The
    /// minus sign goes first: `-NT$1,000.00`, `-1.234,50 €`.
    pub fn amount(self, amount_minor: i64, currency: &str) -> String {
        let (group, decimal, place) = match self {
            Lang::En | Lang::ZhHans | Lang::ZhHant | Lang::Ja | Lang::Ko | Lang::Th => (",", '.', Place::Before),
            Lang::De | Lang::Es | Lang::Vi => (".", ',', Place::After),
            Lang::Fr => (NNBSP, ',', Place::After),
            Lang::PtBr => (".", ',', Place::Lead { always: true }),
            Lang::Id => (".", ',', Place::Lead { always: false }),
            Lang::Ar => (",", '.', Place::After),
        };
        let sign = if amount_minor < 0 { "-" } else { "" };
        let abs = amount_minor.unsigned_abs();
        let digits = (abs / 100).to_string();
        let mut number = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                number.push_str(group);
            }
            number.push(c);
        }
        number.push(decimal);
        number.push_str(&format!("{:02}", abs % 100));
        let symbol = self.currency_symbol(currency);
        match place {
            Place::Before => match symbol {
                Some(symbol) => format!("{sign}{symbol}{number}"),
                None => format!("{sign}{number} {currency}"),
            },
            Place::Lead { always } => {
                let mark = symbol.unwrap_or(currency);
                let gap = if always || mark.chars().last().is_some_and(char::is_alphabetic) { NBSP } else { "" };
                format!("{sign}{mark}{gap}{number}")
            }
            Place::After => format!("{sign}{number}{NBSP}{}", symbol.unwrap_or(currency)),
        }
    }

    /// The currency's symbol in this language, if it has one the visitor will read right.
    fn currency_symbol(self, currency: &str) -> Option<&'static str> {
        Some(match (self, currency) {
            (Lang::En | Lang::ZhHans | Lang::ZhHant, "CNY") => "¥",
            (_, "CNY") => "CN¥",
            (Lang::Ja, "JPY") => "¥",
            (Lang::Ko, "KRW") => "₩",
            (Lang::Vi, "VND") => "₫",
            (Lang::Th, "THB") => "฿",
            (Lang::Id, "IDR") => "Rp",
            (_, "HKD") => "HK$",
            (_, "USD") => "US$",
            (_, "EUR") => "€",
            (_, "GBP") => "£",
            (_, "TWD") => "NT$",
            (_, "BRL") => "R$",
            _ => return None,
        })
    }
}

fn parse_date(text: &str) -> Option<(u32, u32, u32)> {
    let head = text.trim().get(..10)?;
    let mut parts = head.split('-');
    let y: u32 = parts.next().filter(|p| p.len() == 4)?.parse().ok()?;
    let m: u32 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    let d: u32 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}
