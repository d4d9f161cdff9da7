//! How the demo model writes its answer from the results of the tools it called.

use serde_json::Value;

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A short excerpt of each quoted source (the text inside `<source>` fences), its Markdown
/// structure kept (headings left out: the answer has its own).
fn excerpts(content: &str, max_each: usize) -> Vec<String> {
    content
        .split("<source ")
        .skip(1)
        .map(|part| {
            let body = part.split_once(">\n").map(|(_, b)| b).unwrap_or(part);
            let body = body.split("</source>").next().unwrap_or(body);
            let without_headings: Vec<&str> = body.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
            crate::store::knowledge::excerpt(&without_headings.join("\n"), max_each)
        })
        .collect()
}

fn list(items: &[String]) -> String {
    items.iter().enumerate().map(|(i, t)| format!("{}. {t}", i + 1)).collect::<Vec<_>>().join("\n")
}

/// The answer for one tool's result.
pub fn from_result(name: &str, result: &Value, zh: bool) -> String {
    if let Some(error) = result.get("error").and_then(Value::as_str) {
        return if zh {
            format!("抱歉，`{name}` 这一步没有成功（{error}）。")
        } else {
            format!("Sorry, the `{name}` step did not work ({error}).")
        };
    }
    if let Some(expert) = name.strip_prefix("invoke_") {
        let label = expert.replace('_', " ");
        return format!("**{label}**: {}", s(result, "answer").trim());
    }
    match name {
        "escalate_to_human" => if zh {
            "我已经通知了我们的团队。请点击下方的 **联系人工** 按钮留下您的联系方式，工作人员会尽快与您联系。"
        } else {
            "I've let our team know. Press **Talk to a person** below and leave your contact details — someone will get back to you shortly."
        }
        .to_owned(),
        "offer_quick_replies" => if zh {
            "我可以帮您处理以下事项：点一下下方的选项，或直接输入您的问题。"
        } else {
            "Here is what I can help with: tap a topic below, or type your own question."
        }
        .to_owned(),
        "ask_form" => if zh {
            "好的，请填写下方的表格，我会为您安排。"
        } else {
            "Happy to arrange that: please fill in the form below."
        }
        .to_owned(),
        "form_answers" => {
            let values: Vec<String> = result
                .get("values")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or_default())).collect())
                .unwrap_or_default();
            if zh {
                format!("谢谢！我收到了您的信息（{}），我们会按此与您联系。", values.join("；"))
            } else {
                format!("Thank you! I have your details ({}) and we will be in touch as arranged.", values.join("; "))
            }
        }
        "search_knowledge" => {
            if result.get("success") == Some(&Value::Bool(false)) {
                return "知识库暂时无法检索。一般来说，各入境计划的具体要求以香港入境事务处最新公布为准，建议您稍后再问我，或直接查阅入境处网站。".into();
            }
            let parts = excerpts(s(result, "content"), 180);
            if parts.is_empty() {
                return "抱歉，我在知识库中没有找到相关内容。您可以换个说法，或告诉我您关心的是哪个入境计划（优才、专才、高才通、IANG、投资移民或科技人才）。".into();
            }
            let cited: Vec<String> = parts.iter().take(2).enumerate().map(|(i, p)| format!("{p} [{}]", i + 1)).collect();
            format!(
                "根据知识库资料：\n\n{}\n\n具体要求以香港入境事务处最新公布为准。请问您目前的学历和工作年限大概是怎样的？",
                cited.join("\n\n")
            )
        }
        "check_off_topic" => {
            if result.get("isOffTopic") == Some(&Value::Bool(true)) {
                s(result, "suggestion").to_owned()
            } else {
                "这个问题和香港移民相关。请问您具体想了解哪个计划，或者哪方面的要求？".into()
            }
        }
        "collect_assessment_info" => format!("{} 如果需要，我可以为您生成付费评估的支付二维码。", s(result, "message")),
        "generate_payment" => format!("{}。二维码 30 分钟内有效，支付完成后这里会显示“已支付”。", s(result, "message")),
        "get_exchange_rate" => s(result, "message").to_owned(),
        "get_current_datetime" => s(result, "message").to_owned(),
        "fetch_immigration_news" => {
            let items: Vec<String> = result
                .get("news")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|n| format!("{}（{}）", s(n, "title"), s(n, "date"))).collect())
                .unwrap_or_default();
            format!("{}\n\n{}", s(result, "message"), list(&items))
        }
        "web_search" => {
            if result.get("success") == Some(&Value::Bool(true)) {
                let items: Vec<String> = result
                    .get("results")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(|r| format!("[{}]({})", s(r, "title"), s(r, "url"))).collect())
                    .unwrap_or_default();
                format!("{}：\n\n{}", s(result, "message"), list(&items))
            } else {
                let sites: Vec<String> = result
                    .get("suggestedSites")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(|r| format!("[{}]({})", s(r, "name"), s(r, "url"))).collect())
                    .unwrap_or_default();
                format!("{}\n\n{}", s(result, "message"), list(&sites))
            }
        }
        "save_user_memory" => s(result, "message").to_owned(),
        "get_user_context" => {
            let items: Vec<String> = result
                .get("memories")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|m| s(m, "content").to_owned()).collect())
                .unwrap_or_default();
            if items.is_empty() {
                "我这里还没有您的背景信息。您可以告诉我您的年龄、学历和工作经验，我会记下来。".into()
            } else {
                format!("{}：\n\n{}", s(result, "message"), list(&items))
            }
        }
        _ => match result.get("message").and_then(Value::as_str) {
            Some(message) => message.to_owned(),
            None if zh => format!("`{name}` 已完成。"),
            None => format!("`{name}` is done."),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn knowledge_answers_cite_their_sources() {
        let result = json!({"success": true, "content": "<source n=\"1\" title=\"A\">\n## 标题\n优才计划要求年满18岁。\n</source>\n<source n=\"2\" title=\"B\">\n第二段。\n</source>"});
        let text = from_result("search_knowledge", &result, true);
        assert!(text.contains("优才计划要求年满18岁。 [1]"), "{text}");
        assert!(text.contains("第二段。 [2]"));
        assert!(!text.contains("## 标题"));
    }

    #[test]
    fn errors_and_unknown_tools() {
        assert!(from_result("x", &json!({"ok": false, "error": "boom"}), false).contains("did not work (boom)"));
        assert_eq!(from_result("x", &json!({"message": "fine"}), true), "fine");
    }
}
