//! Tool names must follow the MCP tool-name rule (SEP-986): 1 to 64 characters, case-sensitive,
//! only ASCII letters, digits, `_`, `-` and `.`. (The first draft also allowed `/`; the final
//! text and most model APIs do not, so Parley does not either.)

/// What is wrong with a tool name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("tool name `{0}` must be 1 to 64 characters long, not {1}")]
    Length(String, usize),
    #[error("tool name `{0}` contains `{1}`; only A-Z, a-z, 0-9, `_`, `-` and `.` are allowed")]
    Character(String, char),
}

/// Checks a tool name.
pub fn check(name: &str) -> Result<(), NameError> {
    let len = name.chars().count();
    if len == 0 || len > 64 {
        return Err(NameError::Length(name.to_owned(), len));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        return Err(NameError::Character(name.to_owned(), bad));
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
