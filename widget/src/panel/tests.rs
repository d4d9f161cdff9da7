//! The panel's templates that need no page: whatever a visitor, the host page, a tool or the
//! server wrote comes out escaped (the templates in `ui.rs` and `message.rs` that write straight
//! into the page take their arguments through the same `html!`, tested in `crate::html`).

use serde_json::json;

use super::attach::{ImageSrc, MsgImage, Pending};
use super::model::{Msg, Panel};
use crate::protocol::{IdentifiedUser, MessageStatus, PublicAgentConfig, Role};

const EVIL: &str = "<img src=x onerror=alert(1)>&\"'";

fn panel() -> Panel {
    let config: PublicAgentConfig = serde_json::from_value(json!({
        "key": "help", "name": EVIL, "greeting": "Hello!",
        "theme": { "color": "#2563eb", "position": "right" },
        "capabilities": [], "demo_model": false, "max_message_chars": 2000, "mail_transcripts": true
    }))
    .unwrap();
    Panel::new(&config, None, super::model::Words::default())
}

/// No tag, attribute or character reference of `EVIL`'s own survives: each of `<>&"'` is escaped.
fn assert_escaped(html: &str) {
    assert!(!html.is_empty());
    assert!(!html.contains("<img src=x"), "{html}");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&#39;"), "{html}");
}

#[test]
fn what_the_host_page_said_about_its_user_is_escaped_in_the_lead_form() {
    let p = panel();
    p.user.set(Some(IdentifiedUser { id: EVIL.into(), name: Some(EVIL.into()), email: Some(EVIL.into()) }));
    assert_escaped(super::lead_form::html(&p).as_str());
}

#[test]
fn what_the_server_answered_is_escaped_in_the_email_and_rating_parts() {
    let p = panel();
    p.conversation.set(Some("c1".into()));
    p.lead_submitted.set(true);
    assert_escaped(super::rating::email_html(&p, Some(EVIL), false).as_str());
    assert_escaped(super::rating::email_html(&p, Some(EVIL), true).as_str());
    p.closed.set(true);
    assert_escaped(super::rating::conversation_html(&p, Some(3), Some(EVIL)).as_str());
}

#[test]
fn image_addresses_are_escaped() {
    let p = panel();
    p.pending.set(vec![Pending { url: EVIL.into(), mime: "image/png".into() }]);
    assert_escaped(super::attach::pending_html(&p).as_str());
    let msg = Msg::new(1, "m1".into(), Role::Visitor, String::new(), MessageStatus::Complete);
    msg.images.set(vec![MsgImage { id: "i1".into(), src: ImageSrc::Ready(EVIL.into()) }]);
    assert_escaped(super::attach::images_html(&msg, p.labels).as_str());
}
