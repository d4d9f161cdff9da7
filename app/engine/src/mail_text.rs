//! What a mail says: an operator's notification, a visitor's transcript and the daily summary,
//! each as a subject, plain text and HTML in the agent's language. A leaf below the store: the
//! store queues notifications in the same transaction as the change that causes them, and the
//! engine's mailer ([`crate::engine::mail`]) sends what is queued.

use parley_protocol::html::escape_html;
use parley_protocol::{LanguageSetting, Role};
use serde_json::Value;

use crate::lang::Lang;

/// Stands for the console's address in stored bodies; replaced when sent (the store does not know it).
pub const CONSOLE: &str = "{{console}}";

/// The language of an agent's mail: its setting (`language` as stored), with `auto` the
/// script of its greeting.
pub fn lang_of(language: &str, greeting: &str) -> Lang {
    Lang::of_agent(LanguageSetting::parse(language).unwrap_or_default(), greeting)
}

/// Lines of `(label, value)` as text and as an HTML table.
fn fields(rows: &[(&str, String)]) -> (String, String) {
    let rows: Vec<&(&str, String)> = rows.iter().filter(|(_, v)| !v.is_empty()).collect();
    let text = rows.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("\n");
    let html = rows
        .iter()
        .map(|(k, v)| {
            format!(
                "<tr><th align=\"left\">{}</th><td>{}</td></tr>",
                escape_html(k),
                escape_html(v).replace('\n', "<br>")
            )
        })
        .collect::<String>();
    (text, format!("<table cellpadding=\"4\">{html}</table>"))
}

fn html_page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\"><h2>{}</h2>{body}</body></html>",
        escape_html(title)
    )
}

/// The notification an operator gets about webhook event `event` of agent `agent`, if any:
/// `(notification, subject, text, html)`.
pub fn notification(
    event: &str,
    lang: Lang,
    agent: &str,
    data: &Value,
) -> Option<(&'static str, String, String, String)> {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let conv = s(&data["conversation_id"]);
    let link = format!("{CONSOLE}/admin/conversations/{conv}");
    let (kind, subject, intro, rows) = match event {
        "conversation.waiting_human" => (
            "waiting_human",
            lang.pick(
                format!("[{agent}] A visitor is waiting for a person"),
                format!("【{agent}】有访客在等待人工服务"),
            ),
            lang.pick(
                "A visitor asked for a person. Take the conversation over in the console.",
                "有访客请求人工服务，请在控制台接手对话。",
            ),
            vec![],
        ),
        "lead.created" => {
            let l = &data["lead"];
            (
                "lead",
                lang.pick(
                    format!("[{agent}] New lead: {}", s(&l["name"])),
                    format!("【{agent}】新线索：{}", s(&l["name"])),
                ),
                lang.pick("A visitor left their contact details.", "有访客留下了联系方式。"),
                vec![
                    (lang.pick("Name", "姓名"), s(&l["name"])),
                    (lang.pick("Email", "邮箱"), s(&l["email"])),
                    (lang.pick("Phone", "电话"), s(&l["phone"])),
                    (lang.pick("Message", "留言"), s(&l["message"])),
                ],
            )
        }
        "order.paid" => {
            let o = &data["order"];
            let amount = format!("{:.2} {}", o["amount_minor"].as_i64().unwrap_or(0) as f64 / 100.0, s(&o["currency"]));
            (
                "order_paid",
                lang.pick(format!("[{agent}] Order paid: {amount}"), format!("【{agent}】订单已支付：{amount}")),
                lang.pick("An order was paid.", "有一笔订单已完成支付。"),
                vec![
                    (lang.pick("Service", "服务"), s(&o["service_type"])),
                    (lang.pick("Amount", "金额"), amount.clone()),
                    (lang.pick("Order", "订单"), s(&o["id"])),
                ],
            )
        }
        "agent.cap_reached" | "provider.quota_exhausted" => {
            let capped = event == "agent.cap_reached";
            (
                "alert",
                if capped {
                    lang.pick(
                        format!("[{agent}] Today's spending cap is reached"),
                        format!("【{agent}】今日花费已达上限"),
                    )
                } else {
                    lang.pick(
                        format!("[{agent}] The model provider's quota is exhausted"),
                        format!("【{agent}】模型服务商的额度已用完"),
                    )
                },
                if capped {
                    lang.pick(
                        "The agent's daily spending cap is reached: it answers no visitor until tomorrow (UTC) \
                         unless you raise the cap in the console.",
                        "该助手今日花费已达上限：在明天（UTC）之前不再回答访客，除非在控制台提高上限。",
                    )
                } else {
                    lang.pick(
                        "The model provider refused a call because the account's quota or balance is \
                         exhausted: visitors get no answers until it is topped up.",
                        "模型服务商因账户额度或余额用完而拒绝了请求：充值之前访客得不到回答。",
                    )
                },
                vec![(lang.pick("Detail", "详情"), s(&data["detail"]))],
            )
        }
        _ => return None,
    };
    let (table_text, table_html) = fields(&rows);
    if conv.is_empty() {
        let open = lang.pick("Open the console", "打开控制台");
        let link = format!("{CONSOLE}/admin");
        let text = format!("{intro}\n\n{table_text}\n\n{open}: {link}\n");
        let html = html_page(
            &subject,
            &format!("<p>{}</p>{table_html}<p><a href=\"{link}\">{}</a></p>", escape_html(intro), escape_html(open)),
        );
        return Some((kind, subject, text, html));
    }
    let open = lang.pick("Open the conversation", "打开对话");
    let text = format!("{intro}\n\n{table_text}\n\n{open}: {link}\n").replace("\n\n\n\n", "\n\n");
    let html = html_page(
        &subject,
        &format!("<p>{}</p>{table_html}<p><a href=\"{link}\">{}</a></p>", escape_html(intro), escape_html(open)),
    );
    Some((kind, subject, text, html))
}

/// A visitor's transcript: `(subject, text, html)`.
pub fn transcript(lang: Lang, agent: &str, lines: &[(Role, String, String)]) -> (String, String, String) {
    let subject = lang.pick(format!("Your conversation with {agent}"), format!("您与{agent}的对话记录"));
    let who = |role: Role, author: &str| match role {
        Role::Visitor => lang.pick("You", "您").to_owned(),
        Role::Assistant => agent.to_owned(),
        Role::Operator if !author.is_empty() => author.to_owned(),
        _ => lang.pick("Team", "顾问").to_owned(),
    };
    let text = lines.iter().map(|(r, a, t)| format!("{}:\n{t}\n", who(*r, a))).collect::<Vec<_>>().join("\n");
    let html = lines
        .iter()
        .map(|(r, a, t)| {
            format!("<p><b>{}</b><br>{}</p>", escape_html(&who(*r, a)), escape_html(t).replace('\n', "<br>"))
        })
        .collect::<String>();
    (subject.clone(), text, html_page(&subject, &html))
}

/// The code that confirms a visitor's address before a transcript goes to it: `(subject, text,
/// html)`. Nothing a visitor typed is in it (the address may be a stranger's: the mail must not
/// carry a message of the visitor's choosing).
pub fn confirmation(lang: Lang, agent: &str, code: &str) -> (String, String, String) {
    let subject = lang.pick(format!("Your code for {agent}: {code}"), format!("{agent}的验证码：{code}"));
    let body = lang.pick(
        format!(
            "Someone asked for a chat transcript from {agent} to be sent to this address.\n\
             If it was you, enter this code in the chat: {code}\n\
             It works for 15 minutes. If it was not you, ignore this mail: nothing more will be sent."
        ),
        format!(
            "有人请求将与{agent}的对话记录发送到此邮箱。\n如果是您本人，请在对话窗口输入验证码：{code}\n\
             验证码15分钟内有效。如果不是您，请忽略此邮件，我们不会再发送。"
        ),
    );
    let html = body.lines().map(|l| format!("<p>{}</p>", escape_html(l))).collect::<String>();
    (subject.clone(), body, html_page(&subject, &html))
}

/// The line a return mail starts with when it can be answered: an answer's text is what comes
/// before it (see `engine::mail::inbound`), in either language.
pub const REPLY_ABOVE: [&str; 2] = ["-- Write your answer above this line --", "-- 请在此行上方回复 --"];

/// A return mail (issue 44, part 2): the replies a visitor who left has not seen, `(author,
/// text)` oldest first, the link back to the conversation and whether answering the mail reaches
/// it. `(subject, text, html)`.
pub fn return_mail(
    lang: Lang,
    agent: &str,
    replies: &[(String, String)],
    link: Option<&str>,
    can_reply: bool,
) -> (String, String, String) {
    let subject = lang.pick(format!("{agent} replied to you"), format!("{agent}回复了您"));
    let above = lang.pick(REPLY_ABOVE[0], REPLY_ABOVE[1]);
    let intro = lang
        .pick(format!("You have a reply in your conversation with {agent}:"), format!("您与{agent}的对话有新回复："));
    let mut text = String::new();
    let mut html = String::new();
    if can_reply {
        text.push_str(above);
        text.push_str("\n\n");
        html.push_str(&format!("<p style=\"color:#666\">{}</p>", escape_html(above)));
    }
    text.push_str(&intro);
    text.push_str("\n\n");
    html.push_str(&format!("<p>{}</p>", escape_html(&intro)));
    for (who, said) in replies {
        text.push_str(&format!("{who}:\n{said}\n\n"));
        html.push_str(&format!("<p><b>{}</b><br>{}</p>", escape_html(who), escape_html(said).replace('\n', "<br>")));
    }
    if let Some(link) = link {
        let go = lang.pick("Continue the conversation", "继续对话");
        text.push_str(&format!("{go}: {link}\n"));
        html.push_str(&format!("<p><a href=\"{}\">{}</a></p>", escape_html(link), escape_html(go)));
    }
    if can_reply {
        let note = lang.pick(
            "Or answer this mail: your answer goes into the conversation.",
            "也可以直接回复此邮件，您的回复会进入对话。",
        );
        text.push_str(note);
        text.push('\n');
        html.push_str(&format!("<p>{}</p>", escape_html(note)));
    }
    (subject.clone(), text, html_page(&subject, &html))
}

/// Figures of one agent's last day, for the summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DayFigures {
    pub agent: String,
    pub conversations: i64,
    pub leads: i64,
    pub waiting: i64,
    pub orders_paid: i64,
    pub thumbs_up: i64,
    pub thumbs_down: i64,
}

/// The daily summary: `(subject, text, html)`.
pub fn daily_summary(figures: &[DayFigures]) -> (String, String, String) {
    let subject = "Parley: the last 24 hours".to_owned();
    let mut text = String::from("The last 24 hours:\n\n");
    let mut html = String::from(
        "<table cellpadding=\"4\"><tr><th align=\"left\">Agent</th><th>Conversations</th><th>Leads</th><th>Waiting for a person</th><th>Orders paid</th><th>Rated 👍 / 👎</th></tr>",
    );
    for f in figures {
        text.push_str(&format!(
            "{}: {} conversations, {} leads, {} waiting for a person, {} orders paid, answers rated {} up / {} down\n",
            f.agent, f.conversations, f.leads, f.waiting, f.orders_paid, f.thumbs_up, f.thumbs_down
        ));
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td></tr>",
            escape_html(&f.agent),
            f.conversations,
            f.leads,
            f.waiting,
            f.orders_paid,
            f.thumbs_up,
            f.thumbs_down
        ));
    }
    html.push_str("</table>");
    text.push_str(&format!("\nOpen the console: {CONSOLE}/admin\n"));
    html.push_str(&format!("<p><a href=\"{CONSOLE}/admin\">Open the console</a></p>"));
    (subject.clone(), text, html_page(&subject, &html))
}
