//! The panel's own words: one catalogue per language, the same keys in each (a [`Labels`] value
//! cannot be built without every one of them), and how amounts and dates are written there.
//!
//! Which language: the agent's setting, or with `auto` the visitor's browser languages
//! ([`choose`]). Adding a language is adding a [`Lang`] variant and its catalogue; a right-to-left
//! one also says so in [`Lang::dir`] — the panel's CSS uses logical properties only.
//!
//! Amounts and dates are written by small per-locale rules here rather than by `Intl` or an ICU
//! crate: they are testable off the browser and cost the panel's bundle next to nothing.

use crate::protocol::{LanguageSetting, LeadProblem, StreamCode};

/// A language the panel speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    /// Simplified Chinese.
    ZhHans,
    /// Traditional Chinese.
    ZhHant,
}

impl Lang {
    pub const ALL: [Lang; 3] = [Lang::En, Lang::ZhHans, Lang::ZhHant];

    /// Its catalogue.
    pub fn labels(self) -> &'static Labels {
        match self {
            Lang::En => &EN,
            Lang::ZhHans => &ZH_HANS,
            Lang::ZhHant => &ZH_HANT,
        }
    }

    /// BCP 47 tag, for `lang` attributes.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhHans => "zh-Hans",
            Lang::ZhHant => "zh-Hant",
        }
    }

    /// Simplified Chinese when the text has a CJK ideograph, otherwise English (the console's
    /// guess for a transcript's blocks).
    pub fn of_text(text: &str) -> Lang {
        if text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)) { Lang::ZhHans } else { Lang::En }
    }

    /// Writing direction, for `dir` attributes.
    pub fn dir(self) -> &'static str {
        "ltr"
    }

    /// The language of a browser language tag (`zh-TW`, `en-GB`, …), if the panel speaks it.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let tag = tag.trim().to_ascii_lowercase();
        let mut parts = tag.split(['-', '_']);
        match parts.next()? {
            "en" => Some(Lang::En),
            "zh" => {
                let rest: Vec<&str> = parts.collect();
                let traditional = if rest.contains(&"hans") {
                    false
                } else {
                    rest.iter().any(|p| matches!(*p, "hant" | "tw" | "hk" | "mo"))
                };
                Some(if traditional { Lang::ZhHant } else { Lang::ZhHans })
            }
            _ => None,
        }
    }

    /// A date as the tools give it (`2025-03-01`, maybe with a time after it) written for the
    /// language: `Mar 1, 2025`, `2025年3月1日`. Anything else is shown as it is.
    pub fn date(self, text: &str) -> String {
        let Some((y, m, d)) = parse_date(text) else { return text.to_owned() };
        const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        match self {
            Lang::En => format!("{} {d}, {y}", MONTHS[(m - 1) as usize]),
            Lang::ZhHans | Lang::ZhHant => format!("{y}年{m}月{d}日"),
        }
    }

    /// An amount in minor units (cents, fen) with its currency: `HK$1,234.50`, `1,234.50 THB`.
    /// English and both Chinese locales group thousands with commas and put the symbol first.
    pub fn amount(self, amount_minor: i64, currency: &str) -> String {
        let symbol = match currency {
            "CNY" => "¥",
            "HKD" => "HK$",
            "USD" => "US$",
            "EUR" => "€",
            "GBP" => "£",
            "TWD" => "NT$",
            _ => "",
        };
        let sign = if amount_minor < 0 { "-" } else { "" };
        let abs = amount_minor.unsigned_abs();
        let digits = (abs / 100).to_string();
        let mut major = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                major.push(',');
            }
            major.push(c);
        }
        let minor = abs % 100;
        if symbol.is_empty() {
            format!("{sign}{major}.{minor:02} {currency}")
        } else {
            format!("{sign}{symbol}{major}.{minor:02}")
        }
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

/// The panel's language: the agent's setting, or with `auto` the first of the visitor's browser
/// languages (`navigator.languages`, most wanted first) the panel speaks — zh-TW, zh-HK, zh-MO
/// and zh-Hant get Traditional Chinese, other Chinese Simplified — else English.
pub fn choose(setting: LanguageSetting, browser: &[String]) -> Lang {
    match setting {
        LanguageSetting::En => Lang::En,
        LanguageSetting::ZhHans => Lang::ZhHans,
        LanguageSetting::ZhHant => Lang::ZhHant,
        LanguageSetting::Auto => browser.iter().find_map(|t| Lang::from_tag(t)).unwrap_or(Lang::En),
    }
}

/// The visitor's browser languages, most wanted first (empty off the browser).
pub fn browser_languages() -> Vec<String> {
    #[cfg(target_arch = "wasm32")]
    {
        let Some(navigator) = web_sys::window().map(|w| w.navigator()) else { return Vec::new() };
        let mut list: Vec<String> = navigator.languages().iter().filter_map(|v| v.as_string()).collect();
        if list.is_empty()
            && let Some(one) = navigator.language()
        {
            list.push(one);
        }
        list
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        Vec::new()
    }
}

/// The catalogue's type: a struct with one `&'static str` per key (so no catalogue can miss
/// one), and the list of its entries.
macro_rules! catalogue {
    ($($(#[$doc:meta])* $key:ident,)*) => {
        /// Every word of the panel's chrome, in one language.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Labels {
            $($(#[$doc])* pub $key: &'static str,)*
        }

        impl Labels {
            /// `(key, text)` of every entry.
            pub fn entries(&self) -> Vec<(&'static str, &'static str)> {
                vec![$((stringify!($key), self.$key),)*]
            }
        }
    };
}

catalogue! {
    placeholder,
    send,
    stop,
    close,
    /// The message list's name for screen readers.
    conversation,
    new_conversation,
    demo_badge,
    demo_hint,
    using_tool,
    tool_failed,
    /// The assistant's typing dots, for screen readers.
    writing,
    stopped,
    interrupted,
    /// Sends the question of an interrupted answer again.
    retry,
    /// The starter questions' group.
    starters,
    lead_title,
    lead_name,
    lead_email,
    lead_phone,
    lead_message,
    lead_submit,
    lead_cancel,
    lead_done,
    lead_name_missing,
    lead_name_too_long,
    lead_no_contact,
    lead_bad_email,
    lead_bad_phone,
    lead_message_too_long,
    send_first,
    waiting_human,
    busy,
    rate_limited,
    offline,
    /// A call to the server failed (no connection, an unexpected answer).
    error_network,
    error_too_long,
    /// The model could not answer.
    error_unavailable,
    error_max_turns,
    error_budget,
    error_time_limit,
    error_generic,
    /// The escalation block's button.
    escalate,
    expires_in,
    paid,
    expired,
    pay_alipay,
    pay_wechat,
    pay_card,
    read_more,
    /// The citations block's name for screen readers.
    sources,
    person_joined,
    back_to_bot,
    closed,
    /// The agent only talks to visitors the website signed in.
    sign_in_required,
    operator_typing,
    attach_image,
    remove_image,
    image_alt,
    image_type,
    image_too_large,
    image_limit,
    image_unavailable,
    /// The thumbs under an answer, as a group.
    rate_answer,
    rate_up,
    rate_down,
    /// The comment box after a thumbs down.
    rate_comment,
    rate_send,
    rate_thanks,
    /// The 1-to-5 rating of a conversation a person closed.
    rate_conversation,
    /// The escalation button outside business hours.
    leave_message,
    /// The line under the header outside business hours (a time follows).
    away_back,
    /// The same when the time is not known.
    away_now,
    /// Asks for the transcript by email.
    email_transcript,
    /// Followed by the (masked) address.
    email_sent,
}

impl Labels {
    /// A lead form problem in this language.
    pub fn lead_problem(&self, problem: LeadProblem) -> &'static str {
        match problem {
            LeadProblem::NameMissing => self.lead_name_missing,
            LeadProblem::NameTooLong => self.lead_name_too_long,
            LeadProblem::NoContact => self.lead_no_contact,
            LeadProblem::BadEmail => self.lead_bad_email,
            LeadProblem::BadPhone => self.lead_bad_phone,
            LeadProblem::MessageTooLong => self.lead_message_too_long,
        }
    }

    /// What a turn that ended early says, by its code (the server's own words are English or
    /// Chinese; these follow the panel's language).
    pub fn stream_error(&self, code: &StreamCode) -> &'static str {
        match code {
            StreamCode::UserAborted => self.stopped,
            StreamCode::MaxTurnsReached => self.error_max_turns,
            StreamCode::BudgetExceeded => self.error_budget,
            StreamCode::TimeLimitReached => self.error_time_limit,
            StreamCode::RateLimited | StreamCode::UpstreamRejected | StreamCode::UpstreamUnavailable => {
                self.error_unavailable
            }
            StreamCode::InternalError | StreamCode::Other(_) => self.error_generic,
        }
    }

    /// A payment method's name.
    pub fn payment_method(&self, method: &str) -> String {
        match method {
            "ALIPAY" => self.pay_alipay.to_owned(),
            "WECHAT" => self.pay_wechat.to_owned(),
            "CREDIT_CARD" => self.pay_card.to_owned(),
            other => other.to_owned(),
        }
    }
}

pub const EN: Labels = Labels {
    placeholder: "Type a message…",
    send: "Send",
    stop: "Stop",
    close: "Close chat",
    conversation: "Conversation",
    new_conversation: "New conversation",
    demo_badge: "Offline demo model",
    demo_hint: "Answers come from Parley's built-in demo model, not a real AI.",
    using_tool: "Working",
    tool_failed: "failed",
    writing: "The assistant is writing…",
    stopped: "Stopped",
    interrupted: "This answer was interrupted.",
    retry: "Ask again",
    starters: "Suggested questions",
    lead_title: "Talk to a person",
    lead_name: "Name",
    lead_email: "Email",
    lead_phone: "Phone",
    lead_message: "How can we help?",
    lead_submit: "Send request",
    lead_cancel: "Cancel",
    lead_done: "Thanks! A person will get back to you soon.",
    lead_name_missing: "Please enter your name.",
    lead_name_too_long: "The name is too long (100 characters at most).",
    lead_no_contact: "Please give an email address or a phone number.",
    lead_bad_email: "That email address does not look right.",
    lead_bad_phone: "That phone number does not look right.",
    lead_message_too_long: "The message is too long (2000 characters at most).",
    send_first: "Send a message first.",
    waiting_human: "A person has been asked to join.",
    busy: "Please wait for the answer to finish.",
    rate_limited: "You are sending messages too quickly. Please wait a moment and try again.",
    offline: "Connection lost — trying again…",
    error_network: "The chat could not be reached. Please check your connection and try again.",
    error_too_long: "That message is too long.",
    error_unavailable: "Sorry, I can't answer right now. Please try again in a moment, or ask to talk to a person.",
    error_max_turns: "This needs more steps than I can take on my own. A person from our team can take it from here: press the button below.",
    error_budget: "This conversation has reached its limit for automatic answers. A person from our team can take it from here: press the button below.",
    error_time_limit: "This answer was taking too long and was cut short. You can ask again, perhaps more simply, or press the button below to reach a person.",
    error_generic: "Sorry, something went wrong on our side. Please try again in a moment, or ask to talk to a person.",
    escalate: "Talk to a person",
    expires_in: "Expires in",
    paid: "Paid",
    expired: "Expired",
    pay_alipay: "Alipay",
    pay_wechat: "WeChat Pay",
    pay_card: "Card",
    read_more: "Read more",
    sources: "Sources",
    person_joined: "A person has joined the conversation.",
    back_to_bot: "You're chatting with the assistant again.",
    closed: "This conversation was closed. Write again to start a new one.",
    sign_in_required: "Please sign in on this website to chat.",
    operator_typing: "typing…",
    attach_image: "Attach an image",
    remove_image: "Remove image",
    image_alt: "Attached image",
    image_type: "Only PNG, JPEG and WebP images can be attached.",
    image_too_large: "That image is too large (5 MB at most).",
    image_limit: "A message can carry 4 images at most.",
    image_unavailable: "Image not available",
    rate_answer: "Was this answer helpful?",
    rate_up: "Helpful",
    rate_down: "Not helpful",
    rate_comment: "What was missing? (optional)",
    rate_send: "Send feedback",
    rate_thanks: "Thanks for your feedback.",
    rate_conversation: "How did we do?",
    leave_message: "Leave a message",
    away_back: "Our team is away. Leave a message and we'll answer when we're back:",
    away_now: "Our team is away right now. Leave a message and we'll answer as soon as we can.",
    email_transcript: "Email me this conversation",
    email_sent: "The conversation is on its way to",
};

pub const ZH_HANS: Labels = Labels {
    placeholder: "输入消息…",
    send: "发送",
    stop: "停止",
    close: "关闭对话",
    conversation: "对话内容",
    new_conversation: "新对话",
    demo_badge: "离线演示模型",
    demo_hint: "回答来自 Parley 内置的演示模型，并非真实 AI。",
    using_tool: "处理中",
    tool_failed: "失败",
    writing: "助手正在输入…",
    stopped: "已停止",
    interrupted: "此回答被中断。",
    retry: "重新提问",
    starters: "推荐问题",
    lead_title: "联系人工",
    lead_name: "姓名",
    lead_email: "邮箱",
    lead_phone: "电话",
    lead_message: "请简单描述您的需求",
    lead_submit: "提交",
    lead_cancel: "取消",
    lead_done: "已收到！我们的工作人员会尽快与您联系。",
    lead_name_missing: "请填写您的姓名。",
    lead_name_too_long: "姓名太长（最多 100 个字符）。",
    lead_no_contact: "请留下邮箱或电话号码。",
    lead_bad_email: "邮箱地址格式不正确。",
    lead_bad_phone: "电话号码格式不正确。",
    lead_message_too_long: "留言太长（最多 2000 个字符）。",
    send_first: "请先发送一条消息。",
    waiting_human: "已通知人工客服。",
    busy: "请等待当前回答完成。",
    rate_limited: "发送太频繁了，请稍等片刻再试。",
    offline: "连接中断，正在重试…",
    error_network: "无法连接到对话服务，请检查网络后重试。",
    error_too_long: "消息太长了。",
    error_unavailable: "抱歉，系统暂时出了点问题。请稍后再试，或联系我们的人工客服。",
    error_max_turns: "这个问题需要更多步骤，我无法独立完成。我们的顾问可以继续帮您——请点击下方按钮。",
    error_budget: "本次对话的自动回复额度已用完。我们的人工顾问可以继续为您服务——请点击下方按钮。",
    error_time_limit: "这个回答用时过长，已被中止。您可以换个方式再问一次，或点击下方按钮联系人工顾问。",
    error_generic: "抱歉，系统暂时出了点问题。请稍后再试，或联系我们的人工顾问。",
    escalate: "联系人工",
    expires_in: "剩余",
    paid: "已支付",
    expired: "已过期",
    pay_alipay: "支付宝",
    pay_wechat: "微信支付",
    pay_card: "信用卡",
    read_more: "阅读全文",
    sources: "资料来源",
    person_joined: "工作人员已加入对话。",
    back_to_bot: "已切换回智能助手。",
    closed: "对话已结束。再次发送消息即可开始新对话。",
    sign_in_required: "请先在本网站登录，再开始对话。",
    operator_typing: "正在输入…",
    attach_image: "添加图片",
    remove_image: "移除图片",
    image_alt: "附带的图片",
    image_type: "只能附加 PNG、JPEG 或 WebP 图片。",
    image_too_large: "图片太大（最大 5 MB）。",
    image_limit: "每条消息最多附带 4 张图片。",
    image_unavailable: "图片无法显示",
    rate_answer: "这个回答有帮助吗？",
    rate_up: "有帮助",
    rate_down: "没有帮助",
    rate_comment: "哪里不够好？（可选）",
    rate_send: "提交反馈",
    rate_thanks: "感谢您的反馈。",
    rate_conversation: "您对这次服务满意吗？",
    leave_message: "给我们留言",
    away_back: "顾问暂时不在线。请留言，我们回来后会答复您。回来时间：",
    away_now: "顾问暂时不在线。请留言，我们会尽快答复您。",
    email_transcript: "把对话记录发到我的邮箱",
    email_sent: "对话记录正在发送至",
};

pub const ZH_HANT: Labels = Labels {
    placeholder: "輸入訊息…",
    send: "傳送",
    stop: "停止",
    close: "關閉對話",
    conversation: "對話內容",
    new_conversation: "新對話",
    demo_badge: "離線示範模型",
    demo_hint: "回答來自 Parley 內建的示範模型，並非真實 AI。",
    using_tool: "處理中",
    tool_failed: "失敗",
    writing: "助理正在輸入…",
    stopped: "已停止",
    interrupted: "此回答被中斷。",
    retry: "重新提問",
    starters: "推薦問題",
    lead_title: "聯絡真人客服",
    lead_name: "姓名",
    lead_email: "電郵",
    lead_phone: "電話",
    lead_message: "請簡單描述您的需求",
    lead_submit: "提交",
    lead_cancel: "取消",
    lead_done: "已收到！我們的同事會盡快與您聯絡。",
    lead_name_missing: "請填寫您的姓名。",
    lead_name_too_long: "姓名太長（最多 100 個字元）。",
    lead_no_contact: "請留下電郵或電話號碼。",
    lead_bad_email: "電郵地址格式不正確。",
    lead_bad_phone: "電話號碼格式不正確。",
    lead_message_too_long: "留言太長（最多 2000 個字元）。",
    send_first: "請先傳送一則訊息。",
    waiting_human: "已通知真人客服。",
    busy: "請等待目前的回答完成。",
    rate_limited: "傳送太頻繁了，請稍候片刻再試。",
    offline: "連線中斷，正在重試…",
    error_network: "無法連線到對話服務，請檢查網路後重試。",
    error_too_long: "訊息太長了。",
    error_unavailable: "抱歉，系統暫時出了點問題。請稍後再試，或聯絡我們的真人客服。",
    error_max_turns: "這個問題需要更多步驟，我無法獨立完成。我們的顧問可以繼續協助您——請按下方按鈕。",
    error_budget: "本次對話的自動回覆額度已用完。我們的真人顧問可以繼續為您服務——請按下方按鈕。",
    error_time_limit: "這個回答用時過長，已被中止。您可以換個方式再問一次，或按下方按鈕聯絡真人顧問。",
    error_generic: "抱歉，系統暫時出了點問題。請稍後再試，或聯絡我們的真人顧問。",
    escalate: "聯絡真人客服",
    expires_in: "剩餘",
    paid: "已付款",
    expired: "已過期",
    pay_alipay: "支付寶",
    pay_wechat: "微信支付",
    pay_card: "信用卡",
    read_more: "閱讀全文",
    sources: "資料來源",
    person_joined: "客服人員已加入對話。",
    back_to_bot: "已切換回智能助理。",
    closed: "對話已結束。再次傳送訊息即可開始新對話。",
    sign_in_required: "請先在本網站登入，再開始對話。",
    operator_typing: "正在輸入…",
    attach_image: "附加圖片",
    remove_image: "移除圖片",
    image_alt: "附加的圖片",
    image_type: "只能附加 PNG、JPEG 或 WebP 圖片。",
    image_too_large: "圖片太大（最大 5 MB）。",
    image_limit: "每則訊息最多附加 4 張圖片。",
    image_unavailable: "圖片無法顯示",
    rate_answer: "這個回答有幫助嗎？",
    rate_up: "有幫助",
    rate_down: "沒有幫助",
    rate_comment: "哪裡不夠好？（可選）",
    rate_send: "提交意見",
    rate_thanks: "感謝您的意見。",
    rate_conversation: "您對這次服務滿意嗎？",
    leave_message: "給我們留言",
    away_back: "顧問暫時不在線。請留言，我們回來後會答覆您。回來時間：",
    away_now: "顧問暫時不在線。請留言，我們會盡快答覆您。",
    email_transcript: "把對話記錄發到我的郵箱",
    email_sent: "對話記錄正在發送至",
};

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_catalogue_has_every_key_and_no_empty_string() {
        // The type makes every catalogue carry every key; this checks the values.
        for lang in Lang::ALL {
            let all = lang.labels().entries();
            assert_eq!(all.len(), EN.entries().len());
            for (key, value) in all {
                assert!(!value.trim().is_empty(), "{lang:?}.{key} is empty");
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
        assert_eq!(choose(S::Auto, &tags(&["fr-FR", "zh-TW"])), Lang::ZhHant);
        assert_eq!(choose(S::Auto, &tags(&["fr", "de"])), Lang::En);
        assert_eq!(choose(S::Auto, &[]), Lang::En);
        // The agent's own choice beats the browser.
        assert_eq!(choose(S::ZhHans, &tags(&["zh-TW"])), Lang::ZhHans);
        assert_eq!(choose(S::En, &tags(&["zh-TW"])), Lang::En);
        assert_eq!(choose(S::ZhHant, &tags(&["en-US"])), Lang::ZhHant);
    }

    #[test]
    fn amounts_and_dates_are_written_for_the_language() {
        assert_eq!(Lang::En.amount(12_345_678, "HKD"), "HK$123,456.78");
        assert_eq!(Lang::ZhHans.amount(5_000, "CNY"), "¥50.00");
        assert_eq!(Lang::ZhHant.amount(-100_000, "TWD"), "-NT$1,000.00");
        assert_eq!(Lang::En.amount(99, "THB"), "0.99 THB");
        assert_eq!(Lang::En.date("2025-03-01"), "Mar 1, 2025");
        assert_eq!(Lang::ZhHans.date("2025-03-01T08:00:00Z"), "2025年3月1日");
        assert_eq!(Lang::ZhHant.date("2025-12-31"), "2025年12月31日");
        assert_eq!(Lang::En.date("yesterday"), "yesterday");
        assert_eq!(Lang::En.date("2025-13-01"), "2025-13-01");
    }

    #[test]
    fn errors_and_lead_problems_follow_the_language() {
        assert_eq!(ZH_HANT.stream_error(&StreamCode::BudgetExceeded), ZH_HANT.error_budget);
        assert_eq!(EN.lead_problem(LeadProblem::BadEmail), LeadProblem::BadEmail.english());
        assert_eq!(ZH_HANT.payment_method("ALIPAY"), "支付寶");
        assert_eq!(EN.payment_method("PAYPAL"), "PAYPAL");
    }
}
