//! Lists a page at a time (server only): which rows a page is, and the [`Page`] sent back.

use crate::console::types::Page;

/// Rows per page of every console list.
const PER_PAGE: i64 = 25;

/// One page of a list: page 1 or later, [`PER_PAGE`] rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paging {
    /// The page asked for (at least 1).
    pub page: i64,
}

impl Paging {
    /// Page `page` (1 when lower).
    pub fn new(page: i64) -> Self {
        Paging { page: page.max(1) }
    }

    /// Rows before this page.
    pub fn offset(self) -> i64 {
        (self.page - 1) * PER_PAGE
    }

    /// Rows on a page.
    pub fn limit(self) -> i64 {
        PER_PAGE
    }

    /// The page of `items`, out of `total` rows.
    pub fn of<T>(self, items: Vec<T>, total: i64) -> Page<T> {
        Page { items, total, page: self.page, per_page: PER_PAGE }
    }
}

/// A filter as the page sends it: empty means none.
pub fn filter(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_start_at_one() {
        assert_eq!(Paging::new(0).offset(), 0);
        assert_eq!(Paging::new(3).offset(), 50);
        assert_eq!(Paging::new(2).of(vec![1], 26).pages(), 2);
        assert_eq!(filter(Some(String::new())), None);
    }
}
