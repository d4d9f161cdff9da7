//! How the demo model reads a visitor's words: which of the offered tools to call, with which
//! arguments. Simple keyword rules in English and Chinese — deterministic on purpose.

use serde_json::{Value, json};

/// One rule: a tool, when it applies, and its arguments.
pub struct Intent {
    pub tool: &'static str,
    pub applies: fn(&str) -> bool,
    pub arguments: fn(&str) -> Value,
}

fn any(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| text.contains(w))
}

/// The visitor asks something (a question mark, or a question word in English or Chinese).
pub fn is_question(lower: &str) -> bool {
    const WORDS: &[&str] = &[
        "how ",
        "what",
        "when ",
        "where",
        "why ",
        "which",
        "who ",
        "can i",
        "can you",
        "do you",
        "does ",
        "is there",
        "are there",
        "吗",
        "什么",
        "怎么",
        "如何",
        "多少",
        "哪",
        "几",
        "是否",
        "能否",
        "可以",
    ];
    lower.contains('?')
        || lower.contains('？')
        || lower.split_whitespace().count() > 1 && any(lower, WORDS)
        || any(lower, &WORDS[WORDS.len() - 9..])
}

pub fn clip(text: &str, max: usize) -> String {
    text.trim().chars().take(max).collect()
}

const CATEGORY_WORDS: &[(&str, &[&str])] = &[
    ("TTPS", &["ttps", "高才通", "高端人才"]),
    ("QMAS", &["qmas", "优才", "優才", "优秀人才"]),
    ("GEP", &["gep", "专才", "專才", "一般就业"]),
    ("IANG", &["iang", "留学", "非本地毕业生", "毕业生留港"]),
    ("CIES", &["cies", "投资移民", "资本投资", "投資移民"]),
    ("TECHTAS", &["techtas", "科技人才"]),
];

/// The scheme a text mentions, if any.
pub fn category(lower: &str) -> Option<&'static str> {
    CATEGORY_WORDS.iter().find(|(_, words)| any(lower, words)).map(|(c, _)| *c)
}

const HUMAN: &[&str] = &[
    "human",
    "person",
    "operator",
    "representative",
    "real agent",
    "live agent",
    "talk to someone",
    "speak to someone",
    "support team",
    "人工",
    "真人",
    "客服",
    "转接",
    "联系人",
];
const PAY: &[&str] = &[
    "付费",
    "支付",
    "付款",
    "购买",
    "缴费",
    "支付宝",
    "微信支付",
    "信用卡",
    "pay ",
    "payment",
    "alipay",
    "wechat pay",
];
const RATE: &[&str] = &["汇率", "兑换", "换算", "exchange rate", "convert"];
const NEWS: &[&str] = &["新闻", "资讯", "动态", "news", "最新政策"];
const TIME: &[&str] = &["几点", "时间", "日期", "今天", "星期几", "what time", "the date", "today"];
const SEARCH_WEB: &[&str] = &["搜索", "上网查", "网上查", "google", "search the web", "search online"];
const REMEMBER: &[&str] = &["记住", "remember that", "please remember"];
const RECALL: &[&str] = &["还记得", "记得我", "我之前说", "关于我", "what do you know about me", "remember me"];
const KNOWLEDGE: &[&str] = &[
    "条件",
    "要求",
    "资格",
    "申请",
    "流程",
    "材料",
    "多久",
    "签证",
    "续签",
    "永居",
    "永久居民",
    "受养人",
    "配额",
    "计分",
    "eligib",
    "requirement",
    "apply",
    "process",
    "document",
    "visa",
    "quota",
    "points",
];

const PERSONAL: &[&str] = &["岁", "硕士", "博士", "本科", "学历", "工作经验", "years old", "degree", "master", "phd"];

/// A coordinator's expert calls for the visitor's words, if any apply.
pub fn expert_calls(lower: &str, text: &str) -> Option<Vec<super::ModelToolCall>> {
    let mut calls = Vec::new();
    if any(lower, KNOWLEDGE) || category(lower).is_some() {
        let mut args = json!({"query": clip(text, 500)});
        if let Some(c) = category(lower) {
            args["category"] = json!(c);
        }
        calls.push(super::ModelToolCall {
            id: "demo_call_invoke_policy_expert_0".into(),
            name: "invoke_policy_expert".into(),
            arguments: args.to_string(),
        });
    }
    if any(lower, PERSONAL) {
        calls.push(super::ModelToolCall {
            id: "demo_call_invoke_assessment_expert_1".into(),
            name: "invoke_assessment_expert".into(),
            arguments: json!({"userInfo": {"description": clip(text, 500)}}).to_string(),
        });
    }
    (!calls.is_empty()).then_some(calls)
}

fn payment_method(lower: &str) -> &'static str {
    if any(lower, &["微信", "wechat"]) {
        "WECHAT"
    } else if any(lower, &["信用卡", "credit card", "card"]) {
        "CREDIT_CARD"
    } else {
        "ALIPAY"
    }
}

const CURRENCIES: &[(&str, &[&str])] = &[
    ("HKD", &["港币", "港元", "港幣", "hkd", "hong kong dollar"]),
    ("CNY", &["人民币", "人民幣", "rmb", "cny", "yuan"]),
    ("USD", &["美元", "美金", "usd", "us dollar"]),
    ("EUR", &["欧元", "eur"]),
    ("GBP", &["英镑", "gbp"]),
];

/// Currencies in the order the text names them.
pub fn currencies(lower: &str) -> Vec<&'static str> {
    let mut found: Vec<(usize, &'static str)> = CURRENCIES
        .iter()
        .filter_map(|(code, words)| words.iter().filter_map(|w| lower.find(w)).min().map(|at| (at, *code)))
        .collect();
    found.sort();
    found.into_iter().map(|(_, c)| c).collect()
}

/// The first number in the text (`300万` → 3,000,000).
pub fn amount(text: &str) -> Option<f64> {
    let chars: Vec<char> = text.chars().collect();
    let start = chars.iter().position(|c| c.is_ascii_digit())?;
    let mut end = start;
    while end < chars.len() && (chars[end].is_ascii_digit() || chars[end] == '.' || chars[end] == ',') {
        end += 1;
    }
    let digits: String = chars[start..end].iter().filter(|c| **c != ',').collect();
    let mut value: f64 = digits.parse().ok()?;
    if chars.get(end) == Some(&'万') {
        value *= 10_000.0;
    } else if chars.get(end) == Some(&'亿') {
        value *= 100_000_000.0;
    }
    Some(value)
}

/// Details for an assessment: age, education, years of experience.
pub fn assessment_facts(text: &str) -> serde_json::Map<String, Value> {
    let lower = text.to_lowercase();
    let mut out = serde_json::Map::new();
    let number_before = |marker: &str| -> Option<f64> {
        let at = text.find(marker)?;
        let head: String = text[..at].chars().rev().take_while(|c| c.is_ascii_digit()).collect();
        head.chars().rev().collect::<String>().parse().ok()
    };
    if let Some(age) = number_before("岁").or_else(|| number_before(" years old")) {
        out.insert("age".into(), json!(age as i64));
    }
    for (word, label) in [
        ("博士", "博士"),
        ("phd", "博士"),
        ("硕士", "硕士"),
        ("master", "硕士"),
        ("本科", "本科"),
        ("bachelor", "本科"),
    ] {
        if lower.contains(word) {
            out.insert("education".into(), json!(label));
            break;
        }
    }
    let years = text.find("工作").and_then(|at| {
        let tail: String =
            text[at..].chars().skip(2).skip_while(|c| !c.is_ascii_digit()).take_while(|c| c.is_ascii_digit()).collect();
        tail.parse::<f64>().ok()
    });
    if let Some(y) = years.filter(|y| *y <= 60.0) {
        out.insert("yearsOfExperience".into(), json!(y));
    }
    out
}

/// Time zone named in the text (Hong Kong by default).
fn timezone(lower: &str) -> &'static str {
    for (words, zone) in [
        (&["北京", "上海", "中国", "beijing", "shanghai"][..], "Asia/Shanghai"),
        (&["伦敦", "london", "英国"][..], "Europe/London"),
        (&["纽约", "new york"][..], "America/New_York"),
        (&["新加坡", "singapore"][..], "Asia/Singapore"),
    ] {
        if any(lower, words) {
            return zone;
        }
    }
    "Asia/Hong_Kong"
}

/// The visitor asks what the assistant can do: the demo offers topics as quick replies.
const MENU: &[&str] = &["what can you help", "what can you do", "show me the options", "你能帮我什么", "你可以做什么"];

/// The visitor wants a call or a visit arranged: the demo asks for the details with a form.
const BOOK: &[&str] =
    &["book a call", "call me back", "call back", "book a visit", "book an appointment", "预约", "回电"];

/// The booking form the demo shows (in the visitor's language).
fn booking_form(text: &str) -> Value {
    if crate::lang::Lang::of(text).is_zh() {
        json!({"title": "预约回电", "fields": [
            {"name": "name", "label": "姓名", "type": "text", "required": true},
            {"name": "email", "label": "邮箱", "type": "email", "required": true},
            {"name": "topic", "label": "事项", "type": "select", "options": ["咨询", "售后", "账单"], "required": true},
            {"name": "day", "label": "希望的日期", "type": "date"}
        ], "submit_label": "提交"})
    } else {
        json!({"title": "Book a call", "fields": [
            {"name": "name", "label": "Your name", "type": "text", "required": true},
            {"name": "email", "label": "Email", "type": "email", "required": true},
            {"name": "topic", "label": "Topic", "type": "select", "options": ["Sales", "Support", "Billing"], "required": true},
            {"name": "day", "label": "Preferred day", "type": "date"}
        ], "submit_label": "Book the call"})
    }
}

/// The rules, most specific first.
pub const INTENTS: &[Intent] = &[
    Intent {
        tool: "escalate_to_human",
        applies: |t| any(t, HUMAN),
        arguments: |text| json!({"reason": clip(text, 200)}),
    },
    Intent {
        tool: "offer_quick_replies",
        applies: |t| any(t, MENU),
        arguments: |text| match crate::lang::Lang::of(text) {
            crate::lang::Lang::Zh => json!({"replies": ["营业时间", "配送", "联系人工"]}),
            crate::lang::Lang::En => json!({"replies": ["Opening hours", "Shipping", "Talk to a person"]}),
        },
    },
    Intent { tool: "ask_form", applies: |t| any(t, BOOK), arguments: booking_form },
    Intent {
        tool: "collect_assessment_info",
        applies: |t| {
            !assessment_facts(t).is_empty() && (t.contains("评估") || t.contains("assess") || category(t).is_some())
        },
        arguments: |text| {
            let mut args = assessment_facts(text);
            args.insert("category".into(), json!(category(&text.to_lowercase()).unwrap_or("QMAS")));
            Value::Object(args)
        },
    },
    Intent {
        tool: "generate_payment",
        applies: |t| any(t, PAY),
        arguments: |text| {
            let lower = text.to_lowercase();
            json!({"serviceType": "ASSESSMENT", "category": category(&lower).unwrap_or("QMAS"), "paymentMethod": payment_method(&lower)})
        },
    },
    Intent {
        tool: "get_exchange_rate",
        applies: |t| any(t, RATE) || (currencies(t).len() >= 2 && (t.contains('兑') || t.contains(" to "))),
        arguments: |text| {
            let lower = text.to_lowercase();
            let found = currencies(&lower);
            let (from, to) = match found.as_slice() {
                [a, b, ..] => (*a, *b),
                [a] if *a == "CNY" => ("CNY", "HKD"),
                [a] => (*a, "CNY"),
                [] => ("HKD", "CNY"),
            };
            let mut args = json!({"from": from, "to": to});
            if let Some(a) = amount(text) {
                args["amount"] = json!(a);
            }
            args
        },
    },
    Intent {
        tool: "fetch_immigration_news",
        applies: |t| any(t, NEWS),
        arguments: |text| json!({"category": category(&text.to_lowercase()).unwrap_or("ALL"), "limit": 3}),
    },
    Intent {
        tool: "get_current_datetime",
        applies: |t| any(t, TIME),
        arguments: |text| json!({"timezone": timezone(&text.to_lowercase()), "format": "full"}),
    },
    Intent { tool: "web_search", applies: |t| any(t, SEARCH_WEB), arguments: |text| json!({"query": clip(text, 200)}) },
    Intent {
        tool: "save_user_memory",
        applies: |t| any(t, REMEMBER),
        arguments: |text| json!({"memoryType": "FACT", "content": clip(text, 500)}),
    },
    Intent {
        tool: "get_user_context",
        applies: |t| any(t, RECALL),
        arguments: |text| json!({"query": clip(text, 200)}),
    },
    Intent {
        tool: "search_knowledge",
        applies: |t| category(t).is_some() || any(t, KNOWLEDGE),
        arguments: |text| {
            let mut args = json!({"query": clip(text, 300)});
            if let Some(c) = category(&text.to_lowercase()) {
                args["category"] = json!(c);
            }
            args
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_currencies_amounts_and_facts() {
        assert_eq!(currencies("港币兑人民币汇率"), vec!["HKD", "CNY"]);
        assert_eq!(currencies("how much is 100 usd in hkd"), vec!["USD", "HKD"]);
        assert!(is_question("how much does the harbor plan cost"));
        assert!(is_question("opening hours?"));
        assert!(is_question("公司在哪里"));
        assert!(!is_question("hello there"));
        assert!(!is_question("thanks"));
        assert_eq!(amount("300万人民币是多少港币"), Some(3_000_000.0));
        assert_eq!(amount("没有数字"), None);
        let facts = assessment_facts("我今年35岁，硕士，工作10年，想评估优才");
        assert_eq!(facts["age"], 35);
        assert_eq!(facts["education"], "硕士");
        assert_eq!(facts["yearsOfExperience"], 10.0);
        assert_eq!(category("优才计划的条件是什么"), Some("QMAS"));
        assert_eq!(category("ttps category c"), Some("TTPS"));
    }
}
