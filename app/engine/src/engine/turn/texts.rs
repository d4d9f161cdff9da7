//! What the visitor is told when a turn ends early, in their language: never provider details.

use parley_protocol::{ErrorEvent, StreamCode};

use super::super::lang::Lang;
use super::super::provider::ProviderError;

/// The visitor stopped the answer.
pub(super) fn stopped(lang: Lang) -> ErrorEvent {
    ErrorEvent { code: StreamCode::UserAborted, message: lang.pick("Stopped.", "已停止。").to_owned() }
}

/// The model failed.
pub(super) fn provider_failed(error: &ProviderError, lang: Lang) -> ErrorEvent {
    let code = match error {
        ProviderError::RateLimited { .. } => StreamCode::RateLimited,
        ProviderError::Client { .. } => StreamCode::UpstreamRejected,
        _ => StreamCode::UpstreamUnavailable,
    };
    let message = lang.pick(
        "Sorry, I can't answer right now. Please try again in a moment, or ask to talk to a person.",
        "抱歉，系统暂时出了点问题。请稍后再试，或联系我们的人工客服。",
    );
    ErrorEvent { code, message: message.to_owned() }
}

/// A guard ended the turn.
pub(super) fn limit(code: &StreamCode, lang: Lang) -> ErrorEvent {
    let message = match (code, lang) {
        (StreamCode::MaxTurnsReached, Lang::Zh) => {
            "这个问题需要更多步骤，我无法独立完成。我们的顾问可以继续帮您——请点击下方按钮。"
        }
        (StreamCode::MaxTurnsReached, Lang::En) => {
            "This needs more steps than I can take on my own. A person from our team can take it from here: press the button below."
        }
        (StreamCode::BudgetExceeded, Lang::Zh) => {
            "本次对话的自动回复额度已用完。我们的人工顾问可以继续为您服务——请点击下方按钮。"
        }
        (StreamCode::BudgetExceeded, Lang::En) => {
            "This conversation has reached its limit for automatic answers. A person from our team can take it from here: press the button below."
        }
        (StreamCode::TimeLimitReached, Lang::Zh) => {
            "这个回答用时过长，已被中止。您可以换个方式再问一次，或点击下方按钮联系人工顾问。"
        }
        (StreamCode::TimeLimitReached, Lang::En) => {
            "This answer was taking too long and was cut short. You can ask again, perhaps more simply, or press the button below to reach a person."
        }
        (_, Lang::Zh) => "抱歉，系统暂时出了点问题。请稍后再试，或联系我们的人工顾问。",
        (_, Lang::En) => {
            "Sorry, something went wrong on our side. Please try again in a moment, or ask to talk to a person."
        }
    };
    ErrorEvent { code: code.clone(), message: message.to_owned() }
}

/// A complete answer with neither text nor blocks.
pub(super) fn no_answer(lang: Lang) -> &'static str {
    lang.pick("Sorry, I don't have an answer to that.", "抱歉，我暂时无法回答这个问题。")
}
