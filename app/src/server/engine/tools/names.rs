//! Tool names must follow the MCP tool-name rule (SEP-986): 1 to 64 characters, case-sensitive,
//! only ASCII letters, digits, `_`, `-` and `.`. (The first draft also allowed `/`; the final
//! text and most model APIs do not, so Parley does not either.)

/// Checks a tool name; the error says what is wrong.
pub fn check(name: &str) -> Result<(), String> {
    let len = name.chars().count();
    if len == 0 || len > 64 {
        return Err(format!("tool name `{name}` must be 1 to 64 characters long, not {len}"));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        return Err(format!("tool name `{name}` contains `{bad}`; only A-Z, a-z, 0-9, `_`, `-` and `.` are allowed"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn accepts_sep_986_names() {
        for ok in [
            "escalate_to_human",
            "GetNewsForDate",
            "SearchKnowledgeBase-1a2b3c4d",
            "admin.tools.list",
            "a",
            &"x".repeat(64),
        ] {
            assert!(check(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_everything_else() {
        for bad in ["", "has space", "comma,name", "搜索", "slash/name", "emoji😀", &"x".repeat(65)] {
            assert!(check(bad).is_err(), "{bad}");
        }
    }
}
